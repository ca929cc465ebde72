-- privileges, row-level security and search_path safety
CREATE EXTENSION bloomguard;

CREATE ROLE regress_bg_owner;    -- owns some guarded tables
CREATE ROLE regress_bg_nobody;   -- no privileges at all
CREATE ROLE regress_bg_keyonly;  -- SELECT on key columns only
CREATE ROLE regress_bg_alice;    -- a tenant under row-level security
CREATE ROLE regress_bg_monitor;  -- member of pg_monitor
CREATE ROLE regress_bg_stats;    -- member of pg_read_all_stats

-- attach and rebuild reserve shared memory, a cluster-wide resource: PUBLIC
-- may not execute them, and the DBA grants them to the roles that may
-- (every other function is executable by PUBLIC and checks for itself)
SELECT p.proname, has_function_privilege('regress_bg_nobody', p.oid, 'EXECUTE') AS public_may
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomguard')
 ORDER BY 1;
CREATE TABLE t_mine (id int PRIMARY KEY);
ALTER TABLE t_mine OWNER TO regress_bg_owner;
SET ROLE regress_bg_owner;
SELECT bloomguard_attach('t_mine');
SELECT bloomguard_rebuild('t_mine');
RESET ROLE;
SELECT count(*) FROM bloomguard_guards WHERE relation = 't_mine'::regclass;
GRANT EXECUTE ON FUNCTION bloomguard_attach, bloomguard_rebuild TO regress_bg_owner, regress_bg_alice;
SET ROLE regress_bg_owner;
SELECT bloomguard_attach('t_mine');
SELECT bloomguard_rebuild('t_mine');
SELECT bloomguard_detach('t_mine');
RESET ROLE;
DROP TABLE t_mine;

-- a per-guard cap keeps any one owner from taking all of max_memory
-- (postmaster settings cannot change here; bloomguard.max_guard_memory can)
CREATE TABLE t_big (id int PRIMARY KEY);
ALTER TABLE t_big OWNER TO regress_bg_owner;
ALTER SYSTEM SET bloomguard.max_guard_memory = '1MB';
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW bloomguard.max_guard_memory;
SET ROLE regress_bg_owner;
\set VERBOSITY terse
SELECT bloomguard_attach('t_big', 69000000, 0.01);
\set VERBOSITY default
SELECT bloomguard_attach('t_big', 100000, 0.01);
SELECT bloomguard_rebuild('t_big', 10000000);
SELECT capacity FROM bloomguard_health WHERE relation = 't_big'::regclass;
RESET ROLE;
ALTER SYSTEM RESET bloomguard.max_guard_memory;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW bloomguard.max_guard_memory;
SELECT bloomguard_detach('t_big');
DROP TABLE t_big;

-- lookups need SELECT on the table: denied for present and absent keys alike
CREATE TABLE t_priv (id int PRIMARY KEY, secret text);
INSERT INTO t_priv SELECT g, 'secret ' || g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('t_priv', 1000, 0.01);
SET ROLE regress_bg_nobody;
SELECT guarded_exists('t_priv', 5);
SELECT guarded_exists('t_priv', 5000);
SELECT guarded_exists('t_priv', NULL::int);
SELECT guarded_exists('t_priv', VARIADIC ARRAY[5]);
SELECT bloomguard_check('t_priv', 5);
SELECT bloomguard_check('t_priv', 5000);
SELECT bloomguard_check('t_priv', NULL::int);
-- as for the plain query
SELECT EXISTS (SELECT 1 FROM t_priv WHERE id = 5);
RESET ROLE;
-- denied calls were not counted as lookups
SELECT checks, source_lookups, shortcuts, fallbacks FROM bloomguard_health
 WHERE relation = 't_priv'::regclass;

-- SELECT on the key column alone is enough, as for the plain query
GRANT SELECT (id) ON t_priv TO regress_bg_keyonly;
SET ROLE regress_bg_keyonly;
SELECT k, guarded_exists('t_priv', k) AS guarded,
       EXISTS (SELECT 1 FROM t_priv WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 50, 100, 101, 5000]) k ORDER BY k;
SELECT count(*) FILTER (WHERE bloomguard_check('t_priv', g) <> 'maybe') AS present_not_maybe
  FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE guarded_exists('t_priv', g) <> EXISTS (SELECT 1 FROM t_priv WHERE id = g))
       AS disagreements
  FROM generate_series(-50, 250) g;
-- but not the other columns
SELECT secret FROM t_priv WHERE id = 1;
RESET ROLE;
-- SELECT on a column that is not the key is not enough
GRANT SELECT (secret) ON t_priv TO regress_bg_nobody;
SET ROLE regress_bg_nobody;
SELECT guarded_exists('t_priv', 5);
SELECT bloomguard_check('t_priv', 5000);
RESET ROLE;
REVOKE SELECT (secret) ON t_priv FROM regress_bg_nobody;

-- a two-column key needs SELECT on both key columns
CREATE TABLE t_pair (a int, b int, note text, PRIMARY KEY (a, b));
INSERT INTO t_pair SELECT g, g * 10, 'n' FROM generate_series(1, 20) g;
SELECT bloomguard_attach('t_pair', 1000, 0.01);
GRANT SELECT (a) ON t_pair TO regress_bg_keyonly;
SET ROLE regress_bg_keyonly;
SELECT guarded_exists('t_pair', 1, 10);
SELECT bloomguard_check('t_pair', 1, 10);
RESET ROLE;
GRANT SELECT (b) ON t_pair TO regress_bg_keyonly;
SET ROLE regress_bg_keyonly;
SELECT guarded_exists('t_pair', 1, 10) AS present, guarded_exists('t_pair', 1, 11) AS absent,
       bloomguard_check('t_pair', 1, 10) AS filter;
RESET ROLE;

-- row-level security: rows hidden from a role are not found, exactly as
-- EXISTS run by that role
CREATE TABLE t_rls (id int PRIMARY KEY, tenant text NOT NULL);
INSERT INTO t_rls SELECT g, CASE WHEN g % 2 = 0 THEN 'regress_bg_alice' ELSE 'regress_bg_bob' END
  FROM generate_series(1, 20) g;
INSERT INTO t_rls VALUES (21, 'regress_bg_owner');
ALTER TABLE t_rls OWNER TO regress_bg_owner;
GRANT SELECT ON t_rls TO regress_bg_alice;
-- the owner may attach (no superuser needed)
SET ROLE regress_bg_owner;
SELECT bloomguard_attach('t_rls', 1000, 0.01);
CREATE POLICY p_tenant ON t_rls USING (tenant = current_user);
ALTER TABLE t_rls ENABLE ROW LEVEL SECURITY;
RESET ROLE;
SELECT state FROM bloomguard_health WHERE relation = 't_rls'::regclass;
SET ROLE regress_bg_alice;
SELECT k, guarded_exists('t_rls', k) AS guarded,
       EXISTS (SELECT 1 FROM t_rls WHERE id = k) AS plain
  FROM generate_series(1, 6) k ORDER BY k;
SELECT guarded_exists('t_rls', 5000) AS guarded,
       EXISTS (SELECT 1 FROM t_rls WHERE id = 5000) AS plain;
SELECT count(*) FILTER (WHERE guarded_exists('t_rls', g)) AS found,
       count(*) FILTER (WHERE guarded_exists('t_rls', g) <> EXISTS (SELECT 1 FROM t_rls WHERE id = g))
       AS disagreements
  FROM generate_series(-10, 100) g;
-- the filter knows hidden keys as well as visible ones, so for a role
-- that row-level security applies to it says nothing: 'unknown' for every
-- key, hidden, visible or absent (an oracle would leak hidden keys)
SELECT k, bloomguard_check('t_rls', k) AS filter
  FROM generate_series(1, 4) k ORDER BY k;
SELECT count(*) FILTER (WHERE bloomguard_check('t_rls', g) <> 'unknown') AS not_unknown
  FROM generate_series(1, 500) g;
-- nor does guarded_exists consult the filter for such a role: a visible
-- key, a hidden one and an absent one leave the same trace in everything
-- the role can read, the guard's counters and the table's scan counts
-- (each is one lookup by the query, counted as a fallback)
CREATE FUNCTION pg_temp.observe(k int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE b record; a record; found boolean;
BEGIN
  SELECT coalesce(x.idx_scan, 0) + coalesce(x.seq_scan, 0) AS scans,
         h.shortcuts, h.source_lookups, h.source_hits, h.fallbacks INTO b
    FROM bloomguard_health h LEFT JOIN pg_stat_xact_user_tables x ON x.relid = h.relation
   WHERE h.relation = 't_rls'::regclass;
  found := guarded_exists('t_rls', k);
  SELECT coalesce(x.idx_scan, 0) + coalesce(x.seq_scan, 0) AS scans,
         h.shortcuts, h.source_lookups, h.source_hits, h.fallbacks INTO a
    FROM bloomguard_health h LEFT JOIN pg_stat_xact_user_tables x ON x.relid = h.relation
   WHERE h.relation = 't_rls'::regclass;
  RETURN format('scans +%s, shortcuts +%s, source_lookups +%s, source_hits +%s, fallbacks +%s',
                a.scans - b.scans, a.shortcuts - b.shortcuts, a.source_lookups - b.source_lookups,
                a.source_hits - b.source_hits, a.fallbacks - b.fallbacks);
END $$;
SELECT k, CASE WHEN k % 2 = 0 AND k <= 20 THEN 'visible' WHEN k <= 21 THEN 'hidden' ELSE 'absent' END AS key,
       pg_temp.observe(k) AS trace
  FROM unnest(ARRAY[2, 4, 7, 9, 11, 5000, 5001, 5002]) k;
DROP FUNCTION pg_temp.observe(int);
-- with row_security off the lookup fails as the query does
SET row_security = off;
SELECT guarded_exists('t_rls', 2);
SELECT EXISTS (SELECT 1 FROM t_rls WHERE id = 2);
RESET row_security;
RESET ROLE;
-- and for a role without SELECT the query's first error is that one too:
-- the rewriter applies policies before the executor checks privileges
SET ROLE regress_bg_nobody;
SET row_security = off;
SELECT guarded_exists('t_rls', 2);
SELECT EXISTS (SELECT 1 FROM t_rls WHERE id = 2);
RESET row_security;
RESET ROLE;
-- the owner is not subject to the policy...
SET ROLE regress_bg_owner;
SELECT count(*) FILTER (WHERE guarded_exists('t_rls', g)) AS found,
       count(*) FILTER (WHERE guarded_exists('t_rls', g) <> EXISTS (SELECT 1 FROM t_rls WHERE id = g))
       AS disagreements
  FROM generate_series(1, 30) g;
-- ...unless it is forced
ALTER TABLE t_rls FORCE ROW LEVEL SECURITY;
SELECT k, guarded_exists('t_rls', k) AS guarded,
       EXISTS (SELECT 1 FROM t_rls WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 20, 21, 22]) k ORDER BY k;
SELECT count(*) FILTER (WHERE guarded_exists('t_rls', g)) AS found,
       count(*) FILTER (WHERE guarded_exists('t_rls', g) <> EXISTS (SELECT 1 FROM t_rls WHERE id = g))
       AS disagreements
  FROM generate_series(1, 30) g;
RESET ROLE;
-- a superuser bypasses row-level security, for both
SELECT count(*) FILTER (WHERE guarded_exists('t_rls', g)) AS found,
       count(*) FILTER (WHERE guarded_exists('t_rls', g) <> EXISTS (SELECT 1 FROM t_rls WHERE id = g))
       AS disagreements
  FROM generate_series(1, 30) g;

-- managing a guard takes ownership of the table
CREATE TABLE t_unguarded (id int PRIMARY KEY);
GRANT SELECT ON t_priv, t_unguarded TO regress_bg_alice;
SELECT bloomguard_probe('t_priv', 10) >= 0 AS probed;
SELECT generation, probes AS probes_before FROM bloomguard_health WHERE relation = 't_priv'::regclass;
SET ROLE regress_bg_alice;
SELECT bloomguard_attach('t_unguarded');
SELECT bloomguard_detach('t_priv');
SELECT bloomguard_rebuild('t_priv');
SELECT bloomguard_rebuild('t_priv', 5000, 0.001);
SELECT bloomguard_reset_stats('t_priv');
SELECT bloomguard_probe('t_priv', 10);
-- resetting "all guards" resets only those of tables the caller owns
SELECT bloomguard_reset_stats();
RESET ROLE;
SELECT (SELECT count(*) FROM bloomguard_guards WHERE relation = 't_unguarded'::regclass) AS unguarded_registered,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 't_unguarded'::regclass) AS unguarded_triggers;
SELECT state, generation, capacity, error_rate, probes FROM bloomguard_health
 WHERE relation = 't_priv'::regclass;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 't_priv'::regclass;
-- the owner may do all of it
SET ROLE regress_bg_owner;
SELECT bloomguard_rebuild('t_rls');
SELECT bloomguard_probe('t_rls', 100) <= 1 AS probed;
SELECT bloomguard_reset_stats('t_rls');
RESET ROLE;
SELECT state, generation, probes FROM bloomguard_health WHERE relation = 't_rls'::regclass;

-- probing is allowed to members of pg_monitor, and nothing else is
GRANT pg_monitor TO regress_bg_monitor;
SET ROLE regress_bg_monitor;
SELECT bloomguard_probe('t_priv', 100) <= 1 AS probed;
SELECT bloomguard_probe('t_priv') <= 1 AS probed;
SELECT bloomguard_rebuild('t_priv');
SELECT bloomguard_reset_stats('t_priv');
SELECT bloomguard_detach('t_priv');
RESET ROLE;
-- 10 + 100 + 1000 probes
SELECT probes FROM bloomguard_health WHERE relation = 't_priv'::regclass;

-- the health view shows a role only the guards of tables it may read
SET ROLE regress_bg_nobody;
SELECT relation FROM bloomguard_health
 WHERE relation IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass);
SELECT count(*) FROM bloomguard_guard_stats()
 WHERE relid IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass);
-- a qual of the caller's cannot peek at the hidden rows
CREATE FUNCTION pg_temp.peek(regclass, bigint, float8) RETURNS boolean
LANGUAGE plpgsql COST 0.0000001 AS
$$ BEGIN RAISE NOTICE 'peeked at % (capacity %, error rate %)', $1, $2, $3; RETURN true; END $$;
SELECT count(*) FROM bloomguard_health WHERE pg_temp.peek(relation, capacity, error_rate);
DROP FUNCTION pg_temp.peek(regclass, bigint, float8);
RESET ROLE;
GRANT SELECT ON t_priv TO regress_bg_nobody;
SET ROLE regress_bg_nobody;
SELECT relation FROM bloomguard_health
 WHERE relation IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass);
RESET ROLE;
REVOKE SELECT ON t_priv FROM regress_bg_nobody;
-- SELECT on any column of the table is enough to see its row
SET ROLE regress_bg_keyonly;
SELECT relation FROM bloomguard_health
 WHERE relation IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass)
 ORDER BY relation::text;
SELECT relid::regclass FROM bloomguard_guard_stats()
 WHERE relid IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass)
 ORDER BY relid::regclass::text;
RESET ROLE;
-- pg_read_all_stats sees every guard
GRANT pg_read_all_stats TO regress_bg_stats;
SET ROLE regress_bg_stats;
SELECT relation, state FROM bloomguard_health
 WHERE relation IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass)
 ORDER BY relation::text;
SELECT count(*) FROM bloomguard_guard_stats()
 WHERE relid IN ('t_priv'::regclass, 't_pair'::regclass, 't_rls'::regclass);
RESET ROLE;

-- a table given by OID needs USAGE on its schema, as the query naming it
-- does, with the query's error; the health view and function hide it too
CREATE SCHEMA hidden;
CREATE TABLE hidden.sec (id int PRIMARY KEY);
INSERT INTO hidden.sec SELECT generate_series(1, 100);
SELECT bloomguard_attach('hidden.sec', 1000, 0.01);
GRANT SELECT ON hidden.sec TO regress_bg_nobody;
SELECT 'hidden.sec'::regclass::oid AS sec_oid \gset
SET ROLE regress_bg_nobody;
SELECT guarded_exists(:sec_oid, 5);
SELECT guarded_exists(:sec_oid, 500);
SELECT bloomguard_check(:sec_oid, 500);
SELECT EXISTS (SELECT 1 FROM hidden.sec WHERE id = 5);
SELECT count(*) FROM bloomguard_health WHERE relation = :sec_oid::regclass;
SELECT count(*) FROM bloomguard_guard_stats() WHERE relid = :sec_oid;
RESET ROLE;
GRANT USAGE ON SCHEMA hidden TO regress_bg_nobody;
SET ROLE regress_bg_nobody;
SELECT guarded_exists(:sec_oid, 5), guarded_exists(:sec_oid, 500), bloomguard_check(:sec_oid, 500);
SELECT count(*) FROM bloomguard_health WHERE relation = :sec_oid::regclass;
SELECT count(*) FROM bloomguard_guard_stats() WHERE relid = :sec_oid;
RESET ROLE;
-- an owner without USAGE on the schema cannot manage the guard by OID either
ALTER TABLE hidden.sec OWNER TO regress_bg_owner;
SET ROLE regress_bg_owner;
SELECT bloomguard_rebuild(:sec_oid);
SELECT bloomguard_detach(:sec_oid);
RESET ROLE;
SELECT bloomguard_detach('hidden.sec');
DROP SCHEMA hidden CASCADE;

-- the registry table is not readable or writable by PUBLIC
SET ROLE regress_bg_nobody;
SELECT count(*) FROM bloomguard_guards;
INSERT INTO bloomguard_guards (relation, capacity, error_rate) VALUES ('t_unguarded', 10, 0.1);
DELETE FROM bloomguard_guards;
RESET ROLE;
SET ROLE regress_bg_stats;
SELECT count(*) FROM bloomguard_guards;
RESET ROLE;

-- the lookup functions are volatile: their answer depends on the snapshot
SELECT proname, provolatile FROM pg_proc
 WHERE proname IN ('guarded_exists', 'bloomguard_check') ORDER BY proname;

-- a hostile search_path changes nothing: the schema "evil" shadows now()
-- and "=" for integers.  pg_catalog is listed after it: left out, it is
-- searched first and would hide them (search_path = evil, public is harmless)
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE sql
    AS $$ SELECT '2000-01-01 00:00:00+00'::timestamptz $$;
CREATE FUNCTION evil.always_equal(int, int) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR evil.= (LEFTARG = int, RIGHTARG = int, FUNCTION = evil.always_equal);
CREATE TABLE t_path (id int PRIMARY KEY);
INSERT INTO t_path SELECT generate_series(1, 10);
SET search_path = evil, pg_catalog, public;
-- the trap is armed for plain queries
SELECT now() = '2000-01-01 00:00:00+00' AS evil_now,
       EXISTS (SELECT 1 FROM t_path WHERE id = 999) AS evil_equal;
SELECT bloomguard_attach('t_path', 1000, 0.01);
SELECT attached_at > '2020-01-01' AS real_now, capacity, error_rate
  FROM bloomguard_guards WHERE relation = 't_path'::regclass;
SELECT tgname, tgfoid::regprocedure, tgenabled FROM pg_trigger WHERE tgrelid = 't_path'::regclass;
SELECT state, status FROM bloomguard_health WHERE relation = 't_path'::regclass;
SELECT guarded_exists('t_path', 999) AS absent, guarded_exists('t_path', 5) AS present,
       guarded_exists('t_path', 999::bigint) AS absent_bigint;
INSERT INTO t_path VALUES (11);
SELECT guarded_exists('t_path', 11) AS new_row, bloomguard_check('t_path', 11) AS filter;
-- the SQL lookup used under row-level security qualifies its operator too
ALTER TABLE t_path ENABLE ROW LEVEL SECURITY;
CREATE POLICY p_all ON t_path USING (true);
GRANT SELECT ON t_path TO regress_bg_alice;
SET ROLE regress_bg_alice;
SHOW search_path;
SELECT guarded_exists('t_path', 999) AS absent, guarded_exists('t_path', 5) AS present;
RESET ROLE;
SELECT bloomguard_rebuild('t_path');
SELECT state, generation FROM bloomguard_health WHERE relation = 't_path'::regclass;
SELECT bloomguard_detach('t_path');
SELECT count(*) FROM bloomguard_guards WHERE relation = 't_path'::regclass;
RESET search_path;
DROP TABLE t_path;
DROP SCHEMA evil CASCADE;

-- clean up
SELECT bloomguard_detach('t_priv');
SELECT bloomguard_detach('t_pair');
SELECT bloomguard_detach('t_rls');
SELECT count(*) FROM bloomguard_guards;
DROP TABLE t_priv, t_pair, t_rls, t_unguarded;
DROP ROLE regress_bg_owner, regress_bg_nobody, regress_bg_keyonly, regress_bg_alice,
          regress_bg_monitor, regress_bg_stats;
DROP EXTENSION bloomguard;
