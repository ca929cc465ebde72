#!/usr/bin/python3
# A differential query generator for bloomguard (test/diffgen.sh runs it).
#
# Every table comes twice: g_<x>, guarded, and u_<x>, its unguarded twin,
# with the same rows.  x is one of ki (integer key), kt (text key), km
# (two-column key) and kp (integer key, hash-partitioned in 4).  Every
# generated statement runs in one REPEATABLE READ transaction:
#
#   - a read runs on g_x with bloomguard.transparent on, on g_x with it
#     off, and on u_x; the three results must be equal;
#   - a write (UPDATE, DELETE, MERGE, INSERT ... WHERE NOT EXISTS,
#     writable CTE, a PL/pgSQL function that inserts and then looks up)
#     runs on g_x (planner path on or off, at random) and on u_x; the
#     results (RETURNING rows, row counts, errors) must be equal, and the
#     twins stay equal;
#   - guarded_exists() and bloomguard_check() on g_x are compared with
#     EXISTS on u_x for random keys (bloomguard_check must never say
#     'absent' for a key that is there).
#
# Besides lookups by key, the reads include conditions that name no
# column of the table (now() > ..., current_user = ..., (SELECT false), a
# boolean parameter of a generic plan, a second equality on the key: a
# gating Result above the scan, or a constant-false plan), also inside
# LATERAL and EXISTS and under plain EXPLAIN; and conditions besides the
# key that can raise an error (another run-time key of the index that
# divides by zero, its divisor from an InitPlan, a parameter or the outer
# side of a nested loop; a filter that does), with the key present,
# absent or NULL.  The writes include statements whose BEFORE trigger,
# target list or RETURNING list looks up, in a parallel worker
# (force_parallel_mode, debug_parallel_query from 16), a key that the same
# statement wrote just before, through the table and through
# guarded_exists() in a function labelled PARALLEL SAFE.  Reads run now and
# then with force_parallel_mode on too.
#
# Meanwhile a second session inserts new keys into both twins (odd keys,
# one transaction for all eight tables, now and then rolled back), and the
# reader looks those up as soon as its snapshot can see them.  The reader
# writes only even keys of the initial rows and negative keys it makes,
# so neither session can make the other's statements fail.  Every 500
# statements the twins are compared whole, and every key of g_x is asked
# of the filter.
#
#   diffgen.py DSN [--seed N] [--statements N] [--long] [--only KINDS]
# --only r_errors,w_parallel runs only those kinds of statement (and
# guarded_exists, the calls compared with EXISTS), to reproduce one.
# It prints, besides the differences: the statements by kind; the
# guards' counters (trusted asks: the lookups a trusted filter answered,
# and how many it answered absent); the BloomGuard nodes of one read in
# ten, run once more under EXPLAIN ANALYZE (their executions, keys checked
# and found absent); and which kinds had the node in their plan.
# Exit status 1 on any difference, or when the server closes the
# connection (a crash: the statement is printed).
import argparse
import math
import os
import random
import signal
import sys
import threading
import time

import psycopg2
import psycopg2.errors

ap = argparse.ArgumentParser()
ap.add_argument("dsn")
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--statements", type=int,
                default=int(os.environ.get("DIFFGEN_STATEMENTS", "3000")))
ap.add_argument("--long", action="store_true", help="ten times the statements")
ap.add_argument("--rows", type=int, default=4000)
ap.add_argument("--only", default=None,
                help="comma-separated kinds of statement to run (r_point, w_parallel, ...)")
args = ap.parse_args()
seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
budget = args.statements * (10 if args.long else 1)
rng = random.Random(seed)
print("seed %d, budget %d statements (rerun: --seed %d --statements %d)"
      % (seed, budget, seed, budget))
sys.stdout.flush()

FAMILIES = ["ki", "kt", "km", "kp"]


def keycols(f):
    return ["a", "b"] if f == "km" else ["id"]


def keytypes(f):
    return {"ki": ["int"], "kt": ["text"], "km": ["int", "bigint"], "kp": ["int"]}[f]


def lits(f, n):
    """The key of number n, as SQL literals (one per key column)."""
    if f == "kt":
        return ["'k%d'::text" % n]
    if f == "km":
        # SQL's %, which keeps the dividend's sign
        return ["%d::int" % int(math.fmod(n, 7)), "%d::bigint" % n]
    return ["%d::int" % n]


def keyexprs(f, e):
    """The key of number e (an SQL expression), as SQL expressions."""
    if f == "kt":
        return ["('k' || (%s)::text)" % e]
    if f == "km":
        return ["((%s) %% 7)::int" % e, "(%s)::bigint" % e]
    return ["(%s)::int" % e]


def eq(f, alias, vals):
    return " AND ".join("%s.%s = %s" % (alias, c, v) for c, v in zip(keycols(f), vals))


def values(f, ns):
    return "(VALUES %s) AS s(%s)" % (
        ", ".join("(%s)" % ", ".join(lits(f, n)) for n in ns),
        ", ".join("k%d" % i for i in range(len(keycols(f)))))


def join(f, t="t", s="s"):
    return " AND ".join("%s.%s = %s.k%d" % (t, c, s, i) for i, c in enumerate(keycols(f)))


def skey(f, s="s"):
    return ", ".join("%s.k%d" % (s, i) for i in range(len(keycols(f))))


def tkey(f, t="t"):
    return ", ".join("%s.%s" % (t, c) for c in keycols(f))


def keynum(f, r):
    """The key number of row r (NEW, t, ...), as an SQL integer."""
    if f == "kt":
        return "substr(%s.id, 2)::int" % r
    if f == "km":
        return "%s.b::int" % r
    return "%s.id" % r


def divcond(f, alias, d):
    """A condition on the key's (last) column that divides by d: an index
    condition, so a run-time key of the scan when d is not a constant."""
    if f == "kt":
        return "%s.id > (1000000 / %s)::text" % (alias, d)
    if f == "km":
        return "%s.b < 1000000 / %s" % (alias, d)
    return "%s.id < 1000000 / %s" % (alias, d)


# ---------------------------------------------------------------- setup

def connect():
    conn = psycopg2.connect(args.dsn)
    conn.autocommit = True
    return conn


setup = connect()
cur = setup.cursor()
cur.execute("SET client_min_messages = warning")
cur.execute("CREATE EXTENSION IF NOT EXISTS bloomguard")
N = args.rows
for p in ("g", "u"):
    cur.execute("""
DROP TABLE IF EXISTS {p}_ki, {p}_kt, {p}_km, {p}_kp CASCADE;
CREATE TABLE {p}_ki (id int PRIMARY KEY, v text);
CREATE TABLE {p}_kt (id text PRIMARY KEY, v text);
CREATE TABLE {p}_km (a int, b bigint, v text, PRIMARY KEY (a, b));
CREATE TABLE {p}_kp (id int PRIMARY KEY, v text) PARTITION BY HASH (id);
""".format(p=p))
    for r in range(4):
        cur.execute("CREATE TABLE {p}_kp_{r} PARTITION OF {p}_kp FOR VALUES WITH "
                    "(MODULUS 4, REMAINDER {r})".format(p=p, r=r))
    for f in FAMILIES:
        cur.execute("INSERT INTO %s_%s SELECT %s, 'v' || g FROM generate_series(0, %d, 2) g"
                    % (p, f, ", ".join(keyexprs(f, "g")), 2 * N))
    # insert and then look up, in PL/pgSQL (static SQL: cached plans)
    for f in FAMILIES:
        t = "%s_%s" % (p, f)
        k = keyexprs(f, "n")
        k1 = keyexprs(f, "n - 1")
        look = ("guarded_exists('%s', %s)" % (t, ", ".join(k)) if p == "g"
                else "EXISTS (SELECT 1 FROM %s x WHERE %s)" % (t, eq(f, "x", k)))
        cur.execute("""
CREATE OR REPLACE FUNCTION ins_look_{t}(n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	INSERT INTO {t} VALUES ({k}, 'f' || n);
	SELECT concat_ws(',', {look},
	       EXISTS (SELECT 1 FROM {t} x WHERE {eqk}),
	       EXISTS (SELECT 1 FROM {t} x WHERE {eqk1}),
	       (SELECT x.v FROM {t} x WHERE {eqk})) INTO r;
	UPDATE {t} x SET v = v || '+' WHERE {eqk};
	RETURN r || ',' || (SELECT x.v FROM {t} x WHERE {eqk});
END $$""".format(t=t, k=", ".join(k), look=look, eqk=eq(f, "x", k), eqk1=eq(f, "x", k1)))
    # lookups in parallel workers (issue 25's false negative): par_scan_t
    # and par_ge_t are PARALLEL SAFE and raise if key n is absent, looked
    # up through the table (on g_x: the planner path) and through
    # guarded_exists() on g_x (a function mislabelled PARALLEL SAFE can
    # call it in a worker; on u_x the table again).  par_wrap_t (VOLATILE:
    # it sees the rows its statement wrote before) runs each with PERFORM,
    # a query of its own that force_parallel_mode sends to a worker (a
    # query that returns its rows to PL/pgSQL, SELECT INTO or an
    # assignment, never runs in parallel), and says what they found.  A
    # BEFORE INSERT trigger calls it for the key above the new row's (the
    # row a multi-row INSERT of descending keys wrote just before) when
    # diffgen.par is on, and keeps the answer in the row.
    for f in FAMILIES:
        t = "%s_%s" % (p, f)
        k = keyexprs(f, "n")
        second = ("guarded_exists('%s', %s)" % (t, ", ".join(k)) if p == "g"
                  else "EXISTS (SELECT 1 FROM %s x WHERE %s)" % (t, eq(f, "x", k)))
        cur.execute("""
CREATE OR REPLACE FUNCTION par_scan_{t}(n int) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM {t} x WHERE {eqk}) THEN
		RAISE EXCEPTION 'absent';
	END IF;
	RETURN true;
END $$;
CREATE OR REPLACE FUNCTION par_ge_{t}(n int) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
	IF NOT {second} THEN
		RAISE EXCEPTION 'absent';
	END IF;
	RETURN true;
END $$;
CREATE OR REPLACE FUNCTION par_wrap_{t}(n int) RETURNS text LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED AS $$
DECLARE
	a text := 't';
	b text := 't';
BEGIN
	BEGIN
		PERFORM par_scan_{t}(n);
	EXCEPTION WHEN raise_exception THEN
		a := 'f';
	END;
	BEGIN
		PERFORM par_ge_{t}(n);
	EXCEPTION WHEN raise_exception THEN
		b := 'f';
	END;
	RETURN a || ',' || b;
END $$;
CREATE OR REPLACE FUNCTION par_prev_{t}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('diffgen.par', true) = 'on' THEN
		NEW.v := NEW.v || '|' || par_wrap_{t}({num} + 1);
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER a_par_prev BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION par_prev_{t}();
""".format(t=t, eqk=eq(f, "x", k), second=second, num=keynum(f, "NEW")))
cur.execute("ANALYZE")
for f in FAMILIES:
    cur.execute("SELECT bloomguard_attach('g_%s')" % f)
cur.execute("SELECT count(*) FROM bloomguard_health WHERE state = 'ready'")
print("tables: %d rows in each of g_ki, g_kt, g_km, g_kp and their twins; %d guards ready"
      % (N + 1, cur.fetchone()[0]))

# ---------------------------------------------------------------- writer

writer_state = dict(last=1, commits=0, rollbacks=0, stop=False, error=None)


def writer():
    wr = random.Random(seed + 1)
    conn = psycopg2.connect(args.dsn)
    c = conn.cursor()
    n = 2 * N + 1
    try:
        while not writer_state["stop"]:
            for f in FAMILIES:
                for p in ("g", "u"):
                    c.execute("INSERT INTO %s_%s VALUES (%s, 'w%d')"
                              % (p, f, ", ".join(lits(f, n)), n))
            if wr.random() < 0.1:
                conn.rollback()
                writer_state["rollbacks"] += 1
            else:
                conn.commit()
                writer_state["commits"] += 1
                writer_state["last"] = n
            n += 2
            time.sleep(0.005)
    except Exception as e:  # reported by the reader
        writer_state["error"] = repr(e)
    conn.close()


# ---------------------------------------------------------------- statements

neg = [-1]


def newneg():
    neg[0] -= 1
    return neg[0]


def somekey():
    """A key number: initial (even), the writer's recent ones, the reader's
    own (negative), or likely absent."""
    r = rng.random()
    last = writer_state["last"]
    if r < 0.35:
        return 2 * rng.randint(0, N)
    if r < 0.6:
        return max(1, last - 2 * rng.randint(0, 40))
    if r < 0.7:
        return rng.randint(neg[0], -1)
    if r < 0.85:
        return last + rng.randint(1, 200)
    return 2 * rng.randint(0, N) + 1


def somekeys():
    return [somekey() for _ in range(rng.randint(1, 12))]


def evenkey():
    return 2 * rng.randint(0, N)


# each read is a function (family) -> list of SQL texts with {t} for the table
def r_point(f):
    return ["SELECT * FROM {t} t WHERE %s" % eq(f, "t", lits(f, somekey()))]


def r_in(f):
    ks = somekeys()
    if len(keycols(f)) == 1:
        return ["SELECT * FROM {t} t WHERE t.id IN (%s) ORDER BY 1"
                % ", ".join(lits(f, n)[0] for n in ks)]
    return ["SELECT * FROM {t} t WHERE (t.a, t.b) IN (%s) ORDER BY 1, 2"
            % ", ".join("(%s)" % ", ".join(lits(f, n)) for n in ks)]


def r_any(f):
    ks = somekeys()
    if len(keycols(f)) == 1:
        return ["SELECT * FROM {t} t WHERE t.id = ANY (ARRAY[%s]) ORDER BY 1"
                % ", ".join(lits(f, n)[0] for n in ks)]
    return ["SELECT * FROM {t} t WHERE t.a = %s AND t.b = ANY (ARRAY[%s]) ORDER BY 1, 2"
            % (lits(f, ks[0])[0], ", ".join(lits(f, n)[1] for n in ks))]


def r_nljoin(f):
    return ["SELECT %s, t.v FROM %s JOIN {t} t ON %s ORDER BY 1, 2"
            % (skey(f), values(f, somekeys()), join(f))]


def r_anti(f):
    return ["SELECT %s FROM %s WHERE NOT EXISTS (SELECT 1 FROM {t} t WHERE %s) ORDER BY 1"
            % (skey(f), values(f, somekeys()), join(f))]


def r_semi(f):
    return ["SELECT %s FROM %s WHERE EXISTS (SELECT 1 FROM {t} t WHERE %s) ORDER BY 1"
            % (skey(f), values(f, somekeys()), join(f))]


def r_leftjoin(f):
    return ["SELECT %s, t.v FROM %s LEFT JOIN {t} t ON %s ORDER BY 1, 2"
            % (skey(f), values(f, somekeys()), join(f))]


def r_lateral(f):
    return ["SELECT %s, x.v, x.n FROM %s LEFT JOIN LATERAL (SELECT t.v, count(*) OVER () AS n "
            "FROM {t} t WHERE %s) x ON true ORDER BY 1, 2" % (skey(f), values(f, somekeys()),
                                                             join(f))]


def r_correlated(f):
    return ["SELECT %s, (SELECT t.v FROM {t} t WHERE %s), "
            "(SELECT count(*) FROM {t} t WHERE %s) FROM %s ORDER BY 1"
            % (skey(f), join(f), join(f), values(f, somekeys()))]


def r_selfjoin(f):
    # the key of one row, looked up again: an inner side fed by the outer
    ks = ", ".join(lits(f, n)[-1] for n in somekeys())
    return ["SELECT %s, t2.v FROM {t} t JOIN {t} t2 ON %s WHERE t.%s IN (%s) ORDER BY 1, 2"
            % (tkey(f), " AND ".join("t2.%s = t.%s" % (c, c) for c in keycols(f)),
               keycols(f)[-1], ks)]


def r_cursor(f):
    return ["DECLARE c CURSOR FOR SELECT %s, t.v FROM %s LEFT JOIN {t} t ON %s ORDER BY 1, 2"
            % (skey(f), values(f, somekeys()), join(f)),
            "FETCH 2 FROM c", "FETCH ALL FROM c", "CLOSE c"]


def r_prepared(f):
    # a generic plan (plan_cache_mode is forced now and then), with the
    # planner path decided when it was made, not when it runs
    ks = lits(f, somekey())
    return ["EXECUTE look_{t}(%s)" % ", ".join(ks)]


def r_for_update(f):
    return ["SELECT * FROM {t} t WHERE %s FOR UPDATE" % eq(f, "t", lits(f, evenkey()))]


# writes: keys the writer never touches (even initial ones, the reader's
# own negative ones, or new negative ones)
def mykey():
    return evenkey() if rng.random() < 0.6 or neg[0] == -1 else rng.randint(neg[0], -2)


def w_update(f):
    return ["UPDATE {t} t SET v = t.v || '.' WHERE %s RETURNING *" % eq(f, "t", lits(f, mykey()))]


def w_update_pk(f):
    n = newneg()
    return ["UPDATE {t} t SET %s WHERE %s RETURNING *"
            % (", ".join("%s = %s" % (c, v) for c, v in zip(keycols(f), lits(f, n))),
               eq(f, "t", lits(f, mykey())))]


def w_delete(f):
    return ["DELETE FROM {t} t WHERE %s RETURNING *" % eq(f, "t", lits(f, mykey()))]


def w_merge(f):
    n = mykey() if rng.random() < 0.5 else newneg()
    return ["MERGE INTO {t} t USING (SELECT %s, 'm' AS v) s ON %s "
            "WHEN MATCHED THEN UPDATE SET v = t.v || s.v "
            "WHEN NOT MATCHED THEN INSERT VALUES (%s, s.v)"
            % (", ".join("%s AS k%d" % (v, i) for i, v in enumerate(lits(f, n))), join(f),
               skey(f)),
            "SELECT * FROM {t} t WHERE %s" % eq(f, "t", lits(f, n))]


def w_dedup(f):
    # the README's batch dedup: a nested-loop anti-join feeding an insert
    ks = [newneg() for _ in range(rng.randint(1, 5))] + [mykey() for _ in range(rng.randint(0, 3))]
    return ["INSERT INTO {t} SELECT %s, 'd' FROM %s WHERE NOT EXISTS "
            "(SELECT 1 FROM {t} t WHERE %s) RETURNING *"
            % (skey(f), values(f, ks), join(f))]


def w_cte(f):
    r = rng.random()
    if r < 0.33:
        return ["WITH d AS (DELETE FROM {t} t WHERE %s RETURNING *) "
                "SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM {t} t WHERE %s)"
                % (eq(f, "t", lits(f, mykey())), eq(f, "t", lits(f, evenkey())))]
    if r < 0.66:
        n = newneg()
        return ["WITH i AS (INSERT INTO {t} VALUES (%s, 'c') RETURNING *) "
                "SELECT %s, t.v, (SELECT count(*) FROM i) FROM i LEFT JOIN {t} t ON %s"
                % (", ".join(lits(f, n)), tkey(f, "i"),
                   " AND ".join("t.%s = i.%s" % (c, c) for c in keycols(f)))]
    ks = [mykey() for _ in range(rng.randint(1, 4))]
    return ["WITH u AS (UPDATE {t} t SET v = t.v || 'u' FROM %s WHERE %s RETURNING %s) "
            "SELECT u.*, (SELECT x.v FROM {t} x WHERE %s) FROM u ORDER BY 1, 2"
            % (values(f, ks), join(f), tkey(f),
               " AND ".join("x.%s = u.%s" % (c, c) for c in keycols(f)))]


def w_plpgsql(f):
    n = newneg()
    return ["SELECT ins_look_{t}(%d)" % n,
            "SELECT * FROM {t} t WHERE %s" % eq(f, "t", lits(f, n))]


# conditions that name no column of the table (pseudoconstants: a gating
# Result above the scan, or a constant-false plan), and a second equality
# on the key
PSEUDO = ["now() > '2000-01-01'", "now() < '2000-01-01'", "current_user = current_user",
          "current_user = 'nobody'", "current_user <> 'nobody'", "(SELECT true)",
          "(SELECT false)", "NULL::boolean", "pg_backend_pid() > 0"]


def pseudo(f, alias):
    if rng.random() < 0.25:
        return eq(f, alias, lits(f, somekey() if rng.random() < 0.5 else somekey()))
    return rng.choice(PSEUDO)


def r_pseudo(f):
    r = rng.random()
    if r < 0.4:
        return ["SELECT * FROM {t} t WHERE %s AND %s" % (eq(f, "t", lits(f, somekey())), pseudo(f, "t"))]
    if r < 0.6:
        return ["SELECT %s, x.v FROM %s LEFT JOIN LATERAL (SELECT t.v FROM {t} t WHERE %s AND %s) x "
                "ON true ORDER BY 1, 2" % (skey(f), values(f, somekeys()), join(f), pseudo(f, "t"))]
    if r < 0.8:
        return ["SELECT %s FROM %s WHERE EXISTS (SELECT 1 FROM {t} t WHERE %s AND %s) ORDER BY 1"
                % (skey(f), values(f, somekeys()), join(f), pseudo(f, "t"))]
    # plain EXPLAIN starts the executor too (its output differs by design)
    return ["EXPLAIN (COSTS OFF) SELECT * FROM {t} t WHERE %s AND %s"
            % (eq(f, "t", lits(f, somekey())), pseudo(f, "t"))]


def somediv():
    return rng.choice(["0", "0", "1", "-1"])


def keyornull(f):
    """A key's literals, now and then a NULL of the key's type."""
    if rng.random() < 0.2:
        return ["NULL::%s" % ty for ty in keytypes(f)]
    return lits(f, somekey())


def r_prepared_more(f):
    # generic plans (plan_cache_mode is forced now and then): a boolean
    # parameter as a condition, another run-time key that divides by a
    # parameter, a second equality on the key
    r = rng.random()
    ks = keyornull(f)
    if r < 0.35:
        return ["EXECUTE lookpc_{t}(%s, %s)" % (", ".join(ks), rng.choice(["true", "false", "NULL"]))]
    if r < 0.7:
        return ["EXECUTE lookdiv_{t}(%s, %s)" % (", ".join(ks), somediv())]
    k2 = ks if rng.random() < 0.5 else lits(f, somekey())
    return ["EXECUTE lookeq2_{t}(%s, %s)" % (", ".join(ks), ", ".join(k2))]


def r_errors(f):
    # a condition besides the key that can raise: another run-time key of
    # the index (its divisor from an InitPlan or the outer side), or a
    # filter; the key present, absent or NULL
    r = rng.random()
    ks = keyornull(f)
    d = somediv()
    if r < 0.35:
        return ["SELECT * FROM {t} t WHERE %s AND %s"
                % (eq(f, "t", ["(SELECT %s)" % k for k in ks]), divcond(f, "t", "(SELECT %s)" % d))]
    if r < 0.55:
        return ["SELECT * FROM {t} t WHERE %s AND length(t.v) < 1000000 / (SELECT %s)"
                % (eq(f, "t", ks), d)]
    ns = somekeys()
    vals = "(VALUES %s) AS s(%s, d)" % (
        ", ".join("(%s, %s)" % (", ".join(lits(f, n)), somediv()) for n in ns),
        ", ".join("k%d" % i for i in range(len(keycols(f)))))
    if r < 0.8:
        return ["SELECT %s, s.d, t.v FROM %s JOIN {t} t ON %s AND %s ORDER BY 1, 2, 3"
                % (skey(f), vals, join(f), divcond(f, "t", "s.d"))]
    return ["SELECT %s, s.d FROM %s WHERE NOT EXISTS (SELECT 1 FROM {t} t WHERE %s AND %s) ORDER BY 1, 2"
            % (skey(f), vals, join(f), divcond(f, "t", "s.d"))]


def w_parallel(f):
    # writes whose triggers, target lists or RETURNING lists look keys up
    # in parallel workers (force_parallel_mode is set for these): each
    # looks up a key its own statement wrote just before
    ns = [newneg() for _ in range(rng.randint(2, 3))]
    r = rng.random()
    if r < 0.4:
        return ["SET LOCAL diffgen.par = on",
                "INSERT INTO {t} VALUES %s RETURNING *"
                % ", ".join("(%s, 'p')" % ", ".join(lits(f, n)) for n in ns),
                "RESET diffgen.par"]
    if r < 0.6:
        return ["INSERT INTO {t} SELECT %s, 'q' || par_wrap_{t}(s.n + 1) FROM (VALUES %s) s(n) RETURNING *"
                % (", ".join(keyexprs(f, "s.n")), ", ".join("(%d)" % n for n in ns))]
    if r < 0.8:
        return ["INSERT INTO {t} VALUES %s RETURNING *, par_wrap_{t}(%s + 1)"
                % (", ".join("(%s, 'r')" % ", ".join(lits(f, n)) for n in ns), keynum(f, "{t}"))]
    n = ns[0]
    return ["UPDATE {t} t SET %s WHERE %s RETURNING *, par_wrap_{t}(%d)"
            % (", ".join("%s = %s" % (c, v) for c, v in zip(keycols(f), lits(f, n))),
               eq(f, "t", lits(f, mykey())), n)]


READS = [r_point, r_in, r_any, r_nljoin, r_anti, r_semi, r_leftjoin, r_lateral,
         r_correlated, r_selfjoin, r_cursor, r_prepared, r_for_update,
         r_pseudo, r_prepared_more, r_errors]
WRITES = [w_update, w_update_pk, w_delete, w_merge, w_dedup, w_cte, w_plpgsql, w_parallel]
if args.only:
    only = set(args.only.split(","))
    unknown = only - set(g.__name__ for g in READS + WRITES) - {"guarded_exists"}
    if unknown:
        sys.exit("--only: no such kind: %s" % ", ".join(sorted(unknown)))
    READS = [g for g in READS if g.__name__ in only]
    WRITES = [g for g in WRITES if g.__name__ in only]
    ASK_GUARDED_EXISTS = "guarded_exists" in only
else:
    ASK_GUARDED_EXISTS = True

# ---------------------------------------------------------------- running

conn = connect()   # transactions are begun and ended explicitly
cur = conn.cursor()
cur.execute("SET client_min_messages = warning")
cur.execute("SELECT current_setting('server_version_num')::int >= 160000")
PARALLEL = "debug_parallel_query" if cur.fetchone()[0] else "force_parallel_mode"
for p in ("g", "u"):
    for f in FAMILIES:
        n = len(keycols(f))
        ps = ["$%d" % (i + 1) for i in range(n)]
        types = ", ".join(keytypes(f))
        cur.execute("PREPARE look_%s_%s(%s) AS SELECT * FROM %s_%s t WHERE %s"
                    % (p, f, types, p, f, eq(f, "t", ps)))
        # a boolean parameter as a condition (a pseudoconstant)
        cur.execute("PREPARE lookpc_%s_%s(%s, boolean) AS SELECT * FROM %s_%s t WHERE %s AND $%d"
                    % (p, f, types, p, f, eq(f, "t", ps), n + 1))
        # another run-time key of the index, which divides by a parameter
        cur.execute("PREPARE lookdiv_%s_%s(%s, int) AS SELECT * FROM %s_%s t WHERE %s AND %s"
                    % (p, f, types, p, f, eq(f, "t", ps), divcond(f, "t", "$%d" % (n + 1))))
        # a second equality on the key
        cur.execute("PREPARE lookeq2_%s_%s(%s, %s) AS SELECT * FROM %s_%s t WHERE %s AND %s"
                    % (p, f, types, types, p, f, eq(f, "t", ps),
                       eq(f, "t", ["$%d" % (n + i + 1) for i in range(n)])))

diffs = 0
stats = {}
errors_same = {}
shown = [0]


def run(stmts, table):
    """Run the statements on table; their results, or the error's SQLSTATE."""
    out = []
    cur.execute("SAVEPOINT s")
    try:
        for s in stmts:
            cur.execute(s.replace("{t}", table))
            if s.startswith("EXPLAIN"):
                # the plans differ by design: that it ran is compared
                cur.fetchall()
                out.append("explained")
            elif cur.description is not None:
                out.append(cur.fetchall())
            else:
                out.append(cur.rowcount)
        cur.execute("RELEASE SAVEPOINT s")
        return out
    except psycopg2.Error as e:
        if conn.closed:
            raise
        cur.execute("ROLLBACK TO SAVEPOINT s")
        # the message names the table or its constraints: say {t} for it
        return ("error", e.pgcode, (e.diag.message_primary or "").replace(table, "{t}")[:80])


wrapped = {}


def note_plan(kind, stmt, table):
    """Once per kind of statement and table: is the planner path in its plan?"""
    key = (kind, table)
    if key in wrapped or stmt.split()[0] in ("DECLARE", "FETCH", "CLOSE", "EXPLAIN", "SET"):
        return
    cur.execute("SAVEPOINT p")
    try:
        cur.execute("EXPLAIN (COSTS OFF) " + stmt.replace("{t}", table))
        wrapped[key] = any("BloomGuard" in r[0] for r in cur.fetchall())
        cur.execute("RELEASE SAVEPOINT p")
    except psycopg2.Error:
        cur.execute("ROLLBACK TO SAVEPOINT p")


def report(kind, stmts, results):
    global diffs
    diffs += 1
    if shown[0] < 20:
        shown[0] += 1
        print("DIFFERENCE (%s, statement %d):" % (kind, done))
        for s in stmts:
            print("   ", s)
        for label, r in results:
            print("    %-22s %r" % (label, r if len(repr(r)) < 600 else repr(r)[:600] + "..."))
        sys.stdout.flush()


def settings():
    # plan shapes: nested loops and index scans most of the time
    if rng.random() < 0.7:
        cur.execute("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                    "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
    if rng.random() < 0.3:
        cur.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    # whatever can run in a parallel worker does (the node never does)
    if rng.random() < 0.15:
        cur.execute("SET LOCAL %s = on" % PARALLEL)


def check_guarded_exists(f):
    ks = somekeys()
    g, u = "g_" + f, "u_" + f
    cur.execute("SELECT %s, guarded_exists('%s', %s), bloomguard_check('%s', %s), "
                "EXISTS (SELECT 1 FROM %s t WHERE %s) FROM %s ORDER BY 1"
                % (skey(f), g, skey(f), g, skey(f), u, join(f), values(f, ks)))
    rows = cur.fetchall()
    bad = [r for r in rows if r[-3] != r[-1] or (r[-1] and r[-2] == "absent")]
    return bad, rows


def whole_check():
    """The twins equal, and no key of g_x 'absent' in its filter."""
    bad = []
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    for f in FAMILIES:
        cur.execute("SELECT (SELECT count(*) FROM (TABLE g_{f} EXCEPT ALL TABLE u_{f}) a), "
                    "(SELECT count(*) FROM (TABLE u_{f} EXCEPT ALL TABLE g_{f}) b), "
                    "(SELECT count(*) FROM g_{f} t WHERE bloomguard_check('g_{f}', {k}) = 'absent'), "
                    "(SELECT count(*) FROM g_{f} t WHERE NOT guarded_exists('g_{f}', {k}))"
                    .format(f=f, k=tkey(f)))
        r = cur.fetchone()
        if any(r):
            bad.append((f, r))
    cur.execute("COMMIT")
    return bad


nodes = dict(sampled=0, plans=0, loops=0, keys=0, absent=0)


def sample_nodes(stmt, table):
    """EXPLAIN ANALYZE of a read, now and then: how often its BloomGuard
    nodes ran, and how many keys they checked and found absent."""
    if stmt.split()[0] in ("DECLARE", "FETCH", "CLOSE", "EXPLAIN", "SET"):
        return
    cur.execute("SAVEPOINT n")
    try:
        cur.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + stmt.replace("{t}", table))
        lines = [r[0] for r in cur.fetchall()]
        cur.execute("RELEASE SAVEPOINT n")
    except psycopg2.Error:
        cur.execute("ROLLBACK TO SAVEPOINT n")
        return
    nodes["sampled"] += 1
    if any("BloomGuard" in l for l in lines):
        nodes["plans"] += 1
    for l in lines:
        if "Custom Scan (BloomGuard)" in l and "loops=" in l:
            nodes["loops"] += int(l.split("loops=")[1].split(")")[0])
        elif "Key Checks:" in l:
            nodes["keys"] += int(l.split(":")[1])
        elif "Answered by Filter:" in l:
            nodes["absent"] += int(l.split(":")[1])


def choose():
    """guarded_exists, a read or a write (only those --only names)."""
    if not args.only:
        r = rng.random()
        return "guarded_exists" if r < 0.1 else ("read" if r < 0.65 else "write")
    pool = ((["guarded_exists"] if ASK_GUARDED_EXISTS else []) + ["read"] * len(READS)
            + ["write"] * len(WRITES))
    return rng.choice(pool)


wt = threading.Thread(target=writer, daemon=True)
wt.start()
time.sleep(0.2)
start = time.time()
done = 0
checks = 0
crashed = None
interrupted = False
# a run stopped by SIGTERM or ^C still says what it did until then
signal.signal(signal.SIGTERM, signal.default_int_handler)
while done < budget:
    done += 1
    f = rng.choice(FAMILIES)
    g, u = "g_" + f, "u_" + f
    what = choose()
    kind = what
    stmts = []
    try:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        settings()
        if what == "guarded_exists":
            kind = "guarded_exists"
            bad, rows = check_guarded_exists(f)
            if bad:
                report(kind, ["guarded_exists / bloomguard_check / EXISTS on %s" % f],
                       [("key, ge, check, exists", b) for b in bad])
        elif what == "read":
            gen = rng.choice(READS)
            kind = gen.__name__
            stmts = gen(f)
            if kind in ("r_prepared", "r_prepared_more"):
                # the same kind of plan for both twins: left to itself the
                # plan cache chooses by costs, which their statistics (each
                # analyzed on its own) can tip one way for one of them, and
                # an error that the custom plan raises at planning the
                # generic one skips with the partitions it prunes
                cur.execute("SET LOCAL plan_cache_mode = %s"
                            % rng.choice(["force_generic_plan", "force_custom_plan"]))
            cur.execute("SET LOCAL bloomguard.transparent = on")
            note_plan(kind, stmts[0], g)
            if rng.random() < 0.1:
                sample_nodes(stmts[0], g)
            a = run(stmts, g)
            cur.execute("SET LOCAL bloomguard.transparent = off")
            b = run(stmts, g)
            c = run(stmts, u)
            if not (a == b == c):
                report(kind, [s.replace("{t}", g) for s in stmts],
                       [("guarded, path on", a), ("guarded, path off", b), ("unguarded twin", c)])
            elif isinstance(a, tuple):
                errors_same[a[1:]] = errors_same.get(a[1:], 0) + 1
        else:
            gen = rng.choice(WRITES)
            kind = gen.__name__
            stmts = gen(f)
            on = rng.random() < 0.7
            cur.execute("SET LOCAL bloomguard.transparent = %s" % ("on" if on else "off"))
            if kind == "w_parallel":
                cur.execute("SET LOCAL %s = on" % PARALLEL)
            if on:
                note_plan(kind, stmts[0], g)
            a = run([s.replace("ins_look_{t}", "ins_look_" + g) for s in stmts], g)
            b = run([s.replace("ins_look_{t}", "ins_look_" + u) for s in stmts], u)
            if a != b:
                report(kind, [s.replace("{t}", g) for s in stmts],
                       [("guarded, path %s" % ("on" if on else "off"), a), ("unguarded twin", b)])
            elif isinstance(a, tuple):
                errors_same[a[1:]] = errors_same.get(a[1:], 0) + 1
        cur.execute("COMMIT")
    except KeyboardInterrupt:
        interrupted = True
        break
    except psycopg2.Error as e:
        if conn.closed:
            crashed = (kind, [s.replace("{t}", g) for s in stmts], repr(e))
            break
        cur.execute("ROLLBACK")
        kind = "aborted"
        k = (e.pgcode, "transaction: " + (e.diag.message_primary or "")[:60])
        errors_same[k] = errors_same.get(k, 0) + 1
    stats[kind] = stats.get(kind, 0) + 1
    if done % 500 == 0 or done == budget:
        checks += 1
        for fam, r in whole_check():
            report("whole-table", ["twins of %s: g-u rows, u-g rows, keys 'absent', "
                                   "keys not guarded_exists" % fam], [("counts", r)])
    if writer_state["error"]:
        break
writer_state["stop"] = True
wt.join()
secs = time.time() - start

if crashed:
    # the server closed the connection: a crash (the log says which)
    print("CRASH: the connection was lost at statement %d (%s), the server closed it:" % (done, crashed[0]))
    for s in crashed[1]:
        print("   ", s)
    print("   ", crashed[2][:300])
    print("seed %d: rerun with --seed %d --statements %d" % (seed, seed, done))
    sys.exit(1)
if interrupted:
    print("INTERRUPTED at statement %d" % done)
    done -= 1
    if conn.get_transaction_status() != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
        conn.rollback()
print("statements: %d in %.1f s (%s)" % (done, secs, ", ".join(
    "%s %d" % (k, v) for k, v in sorted(stats.items()))))
print("whole-table checks: %d" % checks)
print("writer: %d commits, %d rollbacks, last key %d%s"
      % (writer_state["commits"], writer_state["rollbacks"], writer_state["last"],
         ", FAILED: " + writer_state["error"] if writer_state["error"] else ""))
if errors_same:
    print("errors, the same on every side: %s" % "; ".join(
        "%s %s x%d" % (k[0], k[1], v) for k, v in sorted(errors_same.items())))
cur.execute("SELECT sum(checks), sum(shortcuts + source_lookups), sum(shortcuts), sum(source_lookups), "
            "sum(fallbacks) FROM bloomguard_health")
print("guards' counters: checks %s, trusted asks %s (answered absent by the filter %s, read the "
      "table %s), fallbacks %s" % cur.fetchone())
print("BloomGuard nodes in %d reads sampled with EXPLAIN ANALYZE: %d plans with one, %d node "
      "executions, %d keys checked, %d answered absent"
      % (nodes["sampled"], nodes["plans"], nodes["loops"], nodes["keys"], nodes["absent"]))
kinds = sorted(set(k for k, t in wrapped))
print("planner path in the plan (first of each kind, per table ki/kt/km/kp): %s" % ", ".join(
    "%s %s" % (k, "".join("+" if wrapped.get((k, "g_" + f)) else
                          ("-" if (k, "g_" + f) in wrapped else ".") for f in FAMILIES))
    for k in kinds))
print("differences: %d" % diffs)
sys.exit(1 if diffs or writer_state["error"] or interrupted else 0)
