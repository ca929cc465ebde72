#!/usr/bin/python3
# Guard every table with a primary key in a database no one here designed
# (what PostgreSQL's regression suite leaves in "regression"), and check
# every guard three ways (test/core-regress.sh runs this):
#
#   1. guarded_exists(t, key...) against EXISTS (SELECT 1 FROM t WHERE
#      pk = key), for every present key and as many absent ones;
#   2. bloomguard_check(t, key...) is never 'absent' for a present key;
#   3. SELECT ... WHERE pk = ... gives the same rows with
#      bloomguard.transparent on and off (index scans forced, so that the
#      planner path has an index scan to wrap).
#
# Absent keys are derived from present ones, per type of one key column
# (integers: max + i, text: a prefix, bytea: a suffix, ...); whether each is
# really absent is then asked of the table with the planner path off.
# A table that is refused must be refused cleanly: an ERROR whose SQLSTATE
# is not an internal error (XX...), and the server still up.
#
#   attach-all.py "dbname=regression host=... port=..."
# Exit status 1 on any difference, unclean refusal or lost connection.
import os
import sys
import time

import psycopg2

DSN = sys.argv[1]
MAX_KEYS = int(os.environ.get("ATTACH_ALL_MAX_KEYS", "20000"))
MAX_POINT = int(os.environ.get("ATTACH_ALL_MAX_POINT", "1000"))

# how to derive a key that is likely absent, by the key column's base type;
# %(c)s is the column's value in a present row, %(m)s the column's name,
# %(i)s the row's number, %(t)s the table
DERIVE = {
    "int2": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s", "(SELECT min(x.%(m)s) FROM %(t)s x) - %(i)s"],
    "int4": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s", "(SELECT min(x.%(m)s) FROM %(t)s x) - %(i)s"],
    "int8": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s", "(SELECT min(x.%(m)s) FROM %(t)s x) - %(i)s"],
    "oid": ["((SELECT max(x.%(m)s) FROM %(t)s x)::int8 + %(i)s)"],
    "numeric": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s + 0.5"],
    "float4": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s"],
    "float8": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s"],
    "money": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s::numeric::money"],
    "text": ["'~' || %(i)s || '~' || %(c)s"],
    "varchar": ["'~' || %(i)s || '~' || %(c)s"],
    "bpchar": ["'~' || %(i)s || '~' || %(c)s"],
    "name": ["('~' || %(i)s || '~' || %(c)s)::name"],
    "citext": ["'~' || %(i)s || '~' || %(c)s"],
    "bytea": ["%(c)s || '\\xff'::bytea || int4send(%(i)s::int4)"],
    "uuid": ["md5(%(c)s::text || %(i)s)::uuid"],
    "date": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s::int"],
    "timestamp": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s * interval '1 day'"],
    "timestamptz": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s * interval '1 day'"],
    "interval": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s * interval '1 second'"],
    "time": ["%(c)s + %(i)s * interval '1 microsecond'"],
    "inet": ["(SELECT max(x.%(m)s) FROM %(t)s x) + %(i)s"],
    "jsonb": ["jsonb_build_array(%(c)s, %(i)s)"],
}

failures = 0
lost = 0


# Connect with the settings every check uses (waiting up to two minutes
# for a server that restarts after a crash).
def connect(transparent=True):
    for i in range(120):
        try:
            conn = psycopg2.connect(DSN)
            break
        except psycopg2.OperationalError:
            if i == 119:
                raise
            time.sleep(1)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET statement_timeout = '120s'")
    cur.execute("SET bloomguard.transparent = %s" % ("on" if transparent else "off"))
    cur.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET search_path = bg_attach_all, public")
    return conn


# Quote an SQL identifier.
def ident(s):
    return '"' + s.replace('"', '""') + '"'


main = connect()
cur = main.cursor()
cur.execute("CREATE EXTENSION IF NOT EXISTS bloomguard")
# the keys to ask, in a table every session sees (a schema the suite does
# not use, so the list of tables to guard does not include it)
cur.execute("DROP SCHEMA IF EXISTS bg_attach_all CASCADE; CREATE SCHEMA bg_attach_all")
cur.execute("""
SELECT c.oid, c.oid::regclass::text, c.relkind, c.relispartition
  FROM pg_class c
  JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND c.relpersistence <> 't'
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\\_%%' AND n.nspname <> 'bg_attach_all'
   AND NOT EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                      AND d.deptype = 'e')
 ORDER BY c.relispartition, c.oid""")
tables = cur.fetchall()
print("tables with a primary key: %d" % len(tables))

guarded = []       # (oid, name, how)
refused = []       # (name, sqlstate, message)
unclean = []
for oid, name, kind, ispart in tables:
    cur.execute("SELECT 1 FROM bloomguard_guards WHERE relation = %s::oid OR "
                "relation = pg_partition_root(%s::oid)", (oid, oid))
    if cur.fetchone():
        guarded.append((oid, name, "through its parent"))
        continue
    try:
        cur.execute("SELECT bloomguard_attach(%s::oid::regclass)", (oid,))
        guarded.append((oid, name, "attached" + (" (partitioned)" if kind == "p" else "")))
    except psycopg2.Error as e:
        msg = e.diag.message_primary or str(e).strip()
        if main.closed:
            unclean.append((name, "connection lost", msg.splitlines()[0]))
            lost += 1
            main = connect()
            cur = main.cursor()
        elif e.pgcode is None or e.pgcode.startswith("XX") or e.pgcode == "57014":
            unclean.append((name, e.pgcode, msg))
        else:
            refused.append((name, e.pgcode, msg))

print("guarded: %d (%d attached, %d through their parent)"
      % (len(guarded), sum(1 for g in guarded if g[2] != "through its parent"),
         sum(1 for g in guarded if g[2] == "through its parent")))
print("refused cleanly: %d" % len(refused))
for name, code, msg in refused:
    print("  %-40s %s %s" % (name, code, msg))
if unclean:
    print("REFUSED UNCLEANLY: %d" % len(unclean))
    for name, code, msg in unclean:
        print("  %-40s %s %s" % (name, code, msg))
    failures += len(unclean)

on = connect(True)
off = connect(False)
con, coff = on.cursor(), off.cursor()
no_absent = {}
totals = dict(withkeys=0, present=0, absent=0, derived=0, point=0, diffs=0, wrapped=0, answered=0, unknown=0)
print()
print("%-36s %6s %6s %6s %6s %7s %5s" % ("table", "keys", "absent", "filter", "unkn", "point", "wrap"))
for oid, name, how in guarded:
    cur.execute("""
SELECT a.attname, format_type(a.atttypid, a.atttypmod),
       coalesce(nullif(bt.typname, ''), t.typname)
  FROM pg_constraint k
  CROSS JOIN LATERAL unnest(k.conkey) WITH ORDINALITY AS u(attnum, n)
  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
  JOIN pg_type t ON t.oid = a.atttypid
  LEFT JOIN pg_type bt ON bt.oid = t.typbasetype AND t.typtype = 'd'
 WHERE k.conrelid = %s::oid AND k.contype = 'p'
 ORDER BY u.n""", (oid,))
    cols = cur.fetchall()
    t = "%s::regclass" % psycopg2.extensions.adapt(name).getquoted().decode()
    tq = name  # regclass text output is already quoted where needed
    clist = ", ".join(ident(c[0]) for c in cols)
    kargs = ", ".join("k." + ident(c[0]) for c in cols)
    match = " AND ".join("x.%s = k.%s" % (ident(c[0]), ident(c[0])) for c in cols)
    try:
        cur.execute("DROP TABLE IF EXISTS bg_keys")
        cur.execute("CREATE UNLOGGED TABLE bg_keys AS SELECT %s FROM %s LIMIT %d"
                    % (clist, tq, MAX_KEYS))
        cur.execute("SELECT count(*) FROM bg_keys")
        npresent = cur.fetchone()[0]
        # absent keys: one key column derived, the others as in a present row
        derived = 0
        for j, (cname, ctype, base) in enumerate(cols):
            for expr in DERIVE.get(base, []):
                sel = []
                for m, (c2, t2, b2) in enumerate(cols):
                    if m == j:
                        sel.append("(%s)::%s" % (expr % dict(c="s." + ident(c2), m=ident(c2),
                                                             i="s.bg_i", t=tq), t2))
                    else:
                        sel.append("s." + ident(c2))
                try:
                    cur.execute("INSERT INTO bg_keys SELECT %s FROM (SELECT *, row_number() "
                                "OVER () AS bg_i FROM (SELECT %s FROM %s LIMIT %d) z) s"
                                % (", ".join(sel), clist, tq, npresent))
                    derived = cur.rowcount
                    break
                except psycopg2.Error:
                    continue
            if derived:
                break
        if not derived and npresent:
            no_absent[name] = ", ".join("%s %s" % (c[0], c[1]) for c in cols)
        cur.execute("ALTER TABLE bg_keys ADD COLUMN bg_id serial, ADD COLUMN present bool")
        coff.execute("UPDATE bg_keys k SET present = EXISTS (SELECT 1 FROM %s x WHERE %s)"
                     % (tq, match))
        cur.execute("""
SELECT count(*) FILTER (WHERE present),
       count(*) FILTER (WHERE NOT present),
       count(*) FILTER (WHERE ge IS DISTINCT FROM present),
       count(*) FILTER (WHERE present AND chk = 'absent'),
       count(*) FILTER (WHERE NOT present AND chk = 'absent'),
       count(*) FILTER (WHERE chk = 'unknown'),
       (array_agg(bg_id) FILTER (WHERE ge IS DISTINCT FROM present
                                 OR (present AND chk = 'absent')))[1:5]
  FROM (SELECT bg_id, present, guarded_exists(%s, %s) AS ge,
               bloomguard_check(%s, %s) AS chk FROM bg_keys k) s"""
                    % (t, kargs, t, kargs))
        npres, nabs, gewrong, chkwrong, answered, unknown, bad = cur.fetchone()
        totals["present"] += npres
        totals["absent"] += nabs
        totals["derived"] += derived
        totals["answered"] += answered
        totals["unknown"] += unknown
        if gewrong or chkwrong:
            failures += 1
            print("DIFFERENCE in %s: guarded_exists wrong for %d keys, bloomguard_check "
                  "'absent' for %d present keys; bg_id %s" % (name, gewrong, chkwrong, bad))
            cur.execute("SELECT * FROM bg_keys WHERE bg_id = ANY(%s)", (bad,))
            for r in cur.fetchall():
                print("    key", r)
        # 3. the point query, planner path on and off
        pars = ", ".join(c[1] for c in cols)
        where = " AND ".join("%s = $%d" % (ident(c[0]), n + 1) for n, c in enumerate(cols))
        q = "PREPARE bgq(%s) AS SELECT x::text FROM %s x WHERE %s ORDER BY 1" % (pars, tq, where)
        for c in (con, coff):
            c.execute("DEALLOCATE ALL")
            c.execute(q)
        cur.execute("SELECT %s FROM (SELECT * FROM bg_keys WHERE present ORDER BY bg_id LIMIT %d) a "
                    "UNION ALL SELECT %s FROM (SELECT * FROM bg_keys WHERE NOT present "
                    "ORDER BY bg_id LIMIT %d) b"
                    % (", ".join(ident(c[0]) + "::text" for c in cols), MAX_POINT // 2,
                       ", ".join(ident(c[0]) + "::text" for c in cols), MAX_POINT // 2))
        keys = cur.fetchall()
        ph = "EXECUTE bgq(%s)" % ", ".join(["%s"] * len(cols))
        wrapped = False
        if keys:
            con.execute("EXPLAIN (COSTS OFF) " + ph, keys[0])
            wrapped = any("BloomGuard" in r[0] for r in con.fetchall())
        diffs = 0
        for key in keys:
            con.execute(ph, key)
            a = con.fetchall()
            coff.execute(ph, key)
            b = coff.fetchall()
            if a != b:
                diffs += 1
                if diffs <= 5:
                    print("DIFFERENCE in %s: WHERE pk = %r: transparent on %r, off %r"
                          % (name, key, a[:3], b[:3]))
        # after the executions (a generic plan by now), is it still wrapped?
        if keys and not wrapped:
            con.execute("EXPLAIN (COSTS OFF) " + ph, keys[-1])
            wrapped = any("BloomGuard" in r[0] for r in con.fetchall())
        totals["point"] += len(keys)
        totals["withkeys"] += bool(keys)
        totals["diffs"] += diffs
        totals["wrapped"] += wrapped
        if diffs:
            failures += 1
        print("%-36s %6d %6d %6d %6d %7d %5s" % (name[:36], npres, nabs, answered, unknown,
                                                 len(keys), "yes" if wrapped else "no"))
    except psycopg2.Error as e:
        if not (main.closed or on.closed or off.closed):
            print("ERROR checking %s: %s %s" % (name, e.pgcode, str(e).strip()))
            failures += 1
            continue
        print("CONNECTION LOST checking %s: %s" % (name, str(e).strip()))
        lost += 1
        failures += 1
        main, on, off = connect(), connect(True), connect(False)
        cur, con, coff = main.cursor(), on.cursor(), off.cursor()

print()
print("present keys checked: %d; absent keys: %d (derived %d); filter said 'absent' for %d; "
      "'unknown' for %d" % (totals["present"], totals["absent"], totals["derived"],
                            totals["answered"], totals["unknown"]))
print("point queries, transparent on and off: %d keys, %d differences; planner path used on "
      "%d of the %d tables with keys" % (totals["point"], totals["diffs"], totals["wrapped"],
                                  totals["withkeys"]))
if no_absent:
    print("no absent keys could be derived for %d tables (key types without a rule):"
          % len(no_absent))
    for name, desc in sorted(no_absent.items()):
        print("  %-40s %s" % (name, desc))
print("connections lost: %d" % lost)
print("attach-all: %s" % ("FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)
