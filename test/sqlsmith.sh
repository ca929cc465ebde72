#!/usr/bin/env bash
# SQLsmith (Debian's sqlsmith) against a database of guarded tables, as an
# unprivileged role, with the planner path on: random queries that no one
# here wrote.  A server crash, an assertion failure or a PANIC in the
# server log fails the run; the errors the random queries raise do not.
#
#   test/sqlsmith.sh            # as root: installs what is missing, builds
#                               # and installs bloomguard into $PG_CONFIG's
#                               # installation, runs as the postgres user
#   SQLSMITH_QUERIES=5000 SQLSMITH_SEED=42 test/sqlsmith.sh
#
# The tables: integer, bigint, text, uuid, bytea and numeric keys, a
# two-column key, a hash-partitioned table, and a table with BEFORE and
# AFTER triggers of its own; every one guarded.  The role has
# enable_seqscan and enable_bitmapscan off, so that the planner picks
# index scans the planner path can wrap, and each table has views that look
# keys up one by one (random queries seldom compare a key with a value).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"

. "$top/test/lib/cluster.sh"
if [ "${1:-}" != --as-postgres ]; then
	bg_rerun_as_postgres test/sqlsmith.sh sqlsmith "SQLSMITH_QUERIES SQLSMITH_SEED"
fi
QUERIES=${SQLSMITH_QUERIES:-1500}
SEED=${SQLSMITH_SEED:-$(( (RANDOM << 15) | RANDOM ))}
dir=$(mktemp -d /tmp/bloomguard-sqlsmith.XXXXXX)
trap 'bg_cluster_stop "$dir"' EXIT

bg_cluster_start "$dir" "log_min_messages = warning
log_min_error_statement = panic" || exit 1
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -d postgres -c "CREATE DATABASE smith" || exit 1
psql -d smith >/dev/null <<'SQL' || exit 1
CREATE EXTENSION bloomguard;
CREATE ROLE smith LOGIN;
CREATE SCHEMA s AUTHORIZATION smith;
ALTER ROLE smith SET search_path = s, public;
ALTER ROLE smith SET statement_timeout = '1s';
ALTER ROLE smith SET bloomguard.transparent = on;
ALTER ROLE smith SET enable_seqscan = off;
ALTER ROLE smith SET enable_bitmapscan = off;
GRANT EXECUTE ON FUNCTION bloomguard_attach(regclass, bigint, float8) TO smith;
SET ROLE smith;
SET search_path = s, public;
CREATE TABLE k_int (id int PRIMARY KEY, v text, n int);
INSERT INTO k_int SELECT g, 'v' || g, g % 100 FROM generate_series(1, 5000, 2) g;
CREATE TABLE k_bigint (id bigint PRIMARY KEY, ref int REFERENCES k_int, t timestamptz);
INSERT INTO k_bigint SELECT g::bigint * 1000003, 1 + 2 * (g % 2000), '2026-01-01'::timestamptz + g * interval '1 minute'
  FROM generate_series(1, 3000) g;
CREATE TABLE k_text (k text PRIMARY KEY, n int);
INSERT INTO k_text SELECT md5(g::text), g FROM generate_series(1, 3000) g;
CREATE TABLE k_uuid (u uuid PRIMARY KEY, k text);
INSERT INTO k_uuid SELECT md5('u' || g)::uuid, md5(g::text) FROM generate_series(1, 3000) g;
CREATE TABLE k_bytea (h bytea PRIMARY KEY, n int);
INSERT INTO k_bytea SELECT sha256(int4send(g)), g FROM generate_series(1, 3000) g;
CREATE TABLE k_numeric (x numeric PRIMARY KEY, f float8);
INSERT INTO k_numeric SELECT g / 7.0, g FROM generate_series(1, 3000) g;
CREATE TABLE k_multi (tenant int, no bigint, note text, PRIMARY KEY (tenant, no));
INSERT INTO k_multi SELECT g % 10, g, 'n' || g FROM generate_series(1, 3000) g;
CREATE TABLE k_part (id int PRIMARY KEY, v text) PARTITION BY HASH (id);
CREATE TABLE k_part_0 PARTITION OF k_part FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE k_part_1 PARTITION OF k_part FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE k_part_2 PARTITION OF k_part FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE k_part_3 PARTITION OF k_part FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO k_part SELECT g, 'p' || g FROM generate_series(1, 4000, 3) g;
CREATE TABLE k_trig (id int PRIMARY KEY, v int, changed int DEFAULT 0);
CREATE TABLE k_trig_log (id int, op text);
CREATE FUNCTION k_trig_before() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN NEW.changed := coalesce(NEW.changed, 0) + 1; RETURN NEW; END$$;
CREATE FUNCTION k_trig_after() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO k_trig_log VALUES (NEW.id, TG_OP); RETURN NULL; END$$;
CREATE TRIGGER a_before BEFORE INSERT OR UPDATE ON k_trig FOR EACH ROW EXECUTE FUNCTION k_trig_before();
CREATE TRIGGER z_after AFTER INSERT OR UPDATE ON k_trig FOR EACH ROW EXECUTE FUNCTION k_trig_after();
INSERT INTO k_trig (id, v) SELECT g, g FROM generate_series(1, 3000, 2) g;
-- random queries seldom compare a key with a value; these views look keys
-- up once per row (present and absent ones), so that the planner path is
-- in the plans of the queries that read them
CREATE VIEW v_int_lookup AS
  SELECT b.id, b.ref, (SELECT i.v FROM k_int i WHERE i.id = b.ref + (b.id % 2)::int) AS v
    FROM k_bigint b;
CREATE VIEW v_text_anti AS
  SELECT u.u, u.k FROM k_uuid u
   WHERE NOT EXISTS (SELECT 1 FROM k_text t WHERE t.k = u.k || (u.u::text < '8')::int::text);
CREATE VIEW v_multi_lateral AS
  SELECT i.id, m.note FROM k_int i
    LEFT JOIN LATERAL (SELECT note FROM k_multi m WHERE m.tenant = i.n % 12 AND m.no = i.id) m ON true;
CREATE VIEW v_part_exists AS
  SELECT t.id, t.v, EXISTS (SELECT 1 FROM k_part p WHERE p.id = t.id) AS in_part,
         EXISTS (SELECT 1 FROM k_bytea h WHERE h.h = sha256(int4send(t.v))) AS in_bytea,
         EXISTS (SELECT 1 FROM k_numeric x WHERE x.x = t.id / 7.0) AS in_numeric
    FROM k_trig t;
-- for each table, two views that look 81 keys up, about half of them
-- present: a semi-join and a LATERAL join, each a nested loop over the
-- key's index (the planner path's ground)
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT * FROM (VALUES
		('k_int', 'id', '(g * 2 + 1)'),
		('k_bigint', 'id', '(g::bigint * 1000003)'),
		('k_text', 'k', 'md5(g::text)'),
		('k_uuid', 'u', 'md5(''u'' || g)::uuid'),
		('k_bytea', 'h', 'sha256(int4send(g))'),
		('k_numeric', 'x', '(g / 7.0)'),
		('k_part', 'id', '(g * 3 + 1)'),
		('k_trig', 'id', '(g * 2 + 1)')) v(t, k, e)
	LOOP
		EXECUTE format('CREATE VIEW %I AS SELECT g, EXISTS (SELECT 1 FROM %I t WHERE t.%I = %s) AS present FROM generate_series(-40, 40) g',
			'v_' || r.t || '_exists', r.t, r.k, r.e);
		EXECUTE format('CREATE VIEW %I AS SELECT g, t.* FROM generate_series(-40, 40) g CROSS JOIN LATERAL (SELECT * FROM %I t WHERE t.%I = %s) t',
			'v_' || r.t || '_join', r.t, r.k, r.e);
	END LOOP;
END $$;
CREATE VIEW v_k_multi_exists AS
  SELECT g, EXISTS (SELECT 1 FROM k_multi m WHERE m.tenant = g % 10 AND m.no = g) AS present
    FROM generate_series(-40, 40) g;
CREATE VIEW v_k_multi_join AS
  SELECT g, m.* FROM generate_series(-40, 40) g
   CROSS JOIN LATERAL (SELECT * FROM k_multi m WHERE m.tenant = g % 10 AND m.no = g) m;
RESET ROLE;
ANALYZE;
SQL
for t in k_int k_bigint k_text k_uuid k_bytea k_numeric k_multi k_part k_trig; do
	psql -d smith -U smith -c "SELECT bloomguard_attach('s.$t')" >/dev/null || exit 1
done
guards=$(psql -d smith -Atc "SELECT count(*) FROM bloomguard_health WHERE state = 'ready'")
psql -d smith -c "SELECT bloomguard_reset_stats()" >/dev/null

echo "sqlsmith: $(sqlsmith --version 2>&1 | head -1)"
echo "server:   $("$PG_BIN/psql" -XAtc 'SELECT version()' postgres)"
echo "guards:   $guards ready (8 tables and k_part's 4 leaves)"
echo "budget:   $QUERIES queries, seed $SEED (rerun: SQLSMITH_SEED=$SEED SQLSMITH_QUERIES=$QUERIES test/sqlsmith.sh)"
start=$(date +%s)
sqlsmith --target="host=$PGHOST port=$PGPORT dbname=smith user=smith" --exclude-catalog \
	--seed="$SEED" --max-queries="$QUERIES" --verbose >"$dir/sqlsmith.out" 2>&1
src=$?
secs=$(($(date +%s) - start))
# the last report sqlsmith printed: queries, errors by kind
tr '\r' '\n' <"$dir/sqlsmith.out" | grep -E '^queries: ' | tail -1
echo "sqlsmith exited with status $src after $secs s"

passed=0 failed=0
if [ "$src" != 0 ]; then
	echo "FAILED: sqlsmith did not finish its budget"
	tail -20 "$dir/sqlsmith.out"
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi
psql -d smith -c "SELECT relation, state, checks, shortcuts, source_lookups, source_hits, fallbacks
	FROM bloomguard_health ORDER BY relation::text"
echo "planner path and guarded_exists key checks: $(psql -d smith -Atc "SELECT sum(checks) FROM bloomguard_health")"
if "$PG_BIN/pg_isready" -q && bg_log_crashes "$dir/server.log" >"$dir/crashes" &&
	! grep -q 'all server processes terminated' "$dir/server.log"; then
	echo "crashes: 0"
	passed=$((passed + 1))
else
	echo "CRASH: the server log says"
	cat "$dir/crashes"
	grep -E -A2 'Failed process was running|all server processes terminated' "$dir/server.log" | head -40
	echo "(rerun the failing query on a server without the library before blaming bloomguard)"
	failed=$((failed + 1))
fi
# warnings are not failures here (random queries can earn core ones), but
# they are shown: one from bloomguard is a bug
nwarn=$(grep -c 'WARNING: ' "$dir/server.log")
echo "server log warnings: $nwarn"
grep 'WARNING: ' "$dir/server.log" | sed 's/^.*WARNING: */  /' | sort | uniq -c | sort -rn | head -10
bg_cluster_finish "$dir" "$passed" "$failed"
