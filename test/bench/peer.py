#!/usr/bin/python3
"""Seed 003's architecture as a client: ask a Redis Bloom filter first, and
PostgreSQL only on "maybe"; against guarded_exists() alone and the plain
EXISTS alone, from the same Python client.

Debian's redis-server has no Bloom module, so the filter is a Redis string
used as a bit array: k GETBITs in one pipelined round trip.  It has the
same m bits and k hashes as the guard on table h (read from
bloomguard_health); the k positions come from the key's own SHA-256 bytes
by the same enhanced double hashing the extension uses.

    peer.py build  PGPORT REDISPORT N            load the Redis filter
    peer.py run    PGPORT REDISPORT N VARIANT CLIENTS SECONDS TXNS SEED
                   VARIANT: redis | guarded | plain | path
                   TXNS > 0: that many lookups per client instead of SECONDS

Prints one line of JSON.  Keys: h holds sha256(int8send(2g)) for g in
1..N; lookups draw 80% absent keys sha256(int8send(2g+1)) and 20% present
ones, and every answer is checked against what it must be.  The plain
EXISTS runs with bloomguard.transparent off (redis, plain), or on, through
the planner path, as an unchanged application's query would (path).
"""
import hashlib
import json
import multiprocessing as mp
import random
import sys
import time

import psycopg2
import redis

MASK = (1 << 64) - 1
DB = "bench"
BF = "bf:h"


def key_of(i):
    return hashlib.sha256(i.to_bytes(8, "big", signed=True)).digest()


def positions(d, m, k):
    x = int.from_bytes(d[0:8], "little")
    y = int.from_bytes(d[8:16], "little")
    out = []
    for i in range(k):
        out.append((x * m) >> 64)
        x = (x + y) & MASK
        y = (y + i + 1) & MASK
    return out


def pg_connect(port, path=True):
    options = "" if path else "-c bloomguard.transparent=off"
    conn = psycopg2.connect(host="127.0.0.1", port=port, dbname=DB, options=options)
    conn.autocommit = True
    return conn


def filter_shape(port):
    with pg_connect(port) as conn, conn.cursor() as cur:
        cur.execute("SELECT bits, hashes FROM bloomguard_health WHERE relation = 'h'::regclass")
        m, k = cur.fetchone()
    return int(m), int(k)


def build(pgport, rport, n):
    m, k = filter_shape(pgport)
    t0 = time.perf_counter()
    bits = bytearray((m + 7) // 8)
    for g in range(1, n + 1):
        for p in positions(key_of(2 * g), m, k):
            bits[p >> 3] |= 0x80 >> (p & 7)  # Redis: offset 0 is the high bit
    r = redis.Redis(host="127.0.0.1", port=rport)
    r.set(BF, bytes(bits))
    r.set(BF + ":shape", "%d %d" % (m, k))
    # sanity: every present key must read as "maybe" through GETBIT
    rnd = random.Random(1)
    bad = 0
    for _ in range(min(n, 200)):
        p = r.pipeline(transaction=False)
        for pos in positions(key_of(2 * rnd.randint(1, n)), m, k):
            p.getbit(BF, pos)
        if not all(p.execute()):
            bad += 1
    print(json.dumps({"bits": m, "hashes": k, "bytes": len(bits),
                      "redis_used_memory": r.info("memory")["used_memory"],
                      "build_seconds": time.perf_counter() - t0,
                      "false_negatives": bad}))
    return 1 if bad else 0


def worker(variant, pgport, rport, n, seconds, txns, seed, m, k, barrier, q):
    try:
        rnd = random.Random(seed)
        conn = pg_connect(pgport, path=variant not in ("redis", "plain"))
        cur = conn.cursor()
        cur.execute("PREPARE pe(bytea) AS SELECT EXISTS (SELECT 1 FROM h WHERE k = $1)")
        cur.execute("PREPARE ge(bytea) AS SELECT guarded_exists('h', $1)")
        r = redis.Redis(host="127.0.0.1", port=rport) if variant == "redis" else None
        if r is not None:
            r.ping()
        lookups = mismatches = asked = 0
        barrier.wait()
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            if txns > 0:
                if lookups >= txns:
                    break
            elif (lookups & 31) == 0 and time.perf_counter() >= deadline:
                break
            present = rnd.random() < 0.2
            g = rnd.randint(1, n)
            key = key_of(2 * g if present else 2 * g + 1)
            if variant == "redis":
                p = r.pipeline(transaction=False)
                for pos in positions(key, m, k):
                    p.getbit(BF, pos)
                if all(p.execute()):
                    asked += 1
                    cur.execute("EXECUTE pe(%s)", (psycopg2.Binary(key),))
                    found = cur.fetchone()[0]
                else:
                    found = False
            elif variant == "guarded":
                cur.execute("EXECUTE ge(%s)", (psycopg2.Binary(key),))
                found = cur.fetchone()[0]
            else:
                cur.execute("EXECUTE pe(%s)", (psycopg2.Binary(key),))
                found = cur.fetchone()[0]
            if found != present:
                mismatches += 1
            lookups += 1
        elapsed = time.perf_counter() - start
        conn.close()
        q.put({"lookups": lookups, "elapsed": elapsed, "mismatches": mismatches,
               "asked": asked, "error": None})
    except Exception as e:  # report, never hang the parent
        try:
            barrier.abort()
        except Exception:
            pass
        q.put({"error": repr(e)})


def run(pgport, rport, n, variant, clients, seconds, txns, seed):
    m, k = filter_shape(pgport)
    if variant == "redis":
        shape = redis.Redis(host="127.0.0.1", port=rport).get(BF + ":shape")
        if shape is None or shape.decode() != "%d %d" % (m, k):
            print(json.dumps({"error": "Redis filter missing or of another shape"}))
            return 1
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    barrier = ctx.Barrier(clients)
    procs = [ctx.Process(target=worker,
                         args=(variant, pgport, rport, n, seconds, txns,
                               seed * 1000 + c, m, k, barrier, q))
             for c in range(clients)]
    for p in procs:
        p.start()
    results = [q.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join()
    errors = [x["error"] for x in results if x.get("error")]
    if errors:
        print(json.dumps({"error": "; ".join(errors)}))
        return 1
    out = {
        "variant": variant,
        "lookups": sum(x["lookups"] for x in results),
        "lps": sum(x["lookups"] / x["elapsed"] for x in results if x["elapsed"] > 0),
        "mismatches": sum(x["mismatches"] for x in results),
        "asked": sum(x["asked"] for x in results),
    }
    print(json.dumps(out))
    return 1 if out["mismatches"] else 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "build":
        return build(int(argv[2]), int(argv[3]), int(argv[4]))
    if len(argv) >= 10 and argv[1] == "run":
        return run(int(argv[2]), int(argv[3]), int(argv[4]), argv[5],
                   int(argv[6]), float(argv[7]), int(argv[8]), int(argv[9]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
