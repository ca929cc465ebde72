-- planner: ordinary queries on a guarded table's primary key take the
-- guard's shortcut through the BloomGuard custom scan (src/planner.c,
-- src/guardscan.c), and give exactly the rows they give without it.
--
-- path_vs_plain(query) runs a query through the planner path and again with
-- bloomguard.transparent off: "same" must be true everywhere; "node" is what
-- the BloomGuard nodes did (keys answered by the filter / keys checked), or
-- '-' for a plan without one.  The key-type matrix of types.sql is compared
-- the same way there (compare_keys: its path and node columns).  Guards are
-- attached with a large capacity and a tiny error rate, so that an absent
-- key printed here is a false positive with a probability below 1e-30.
CREATE EXTENSION bloomguard;
\i sql/include/path_vs_plain.sql
\i sql/include/present_but_absent.sql

-- pl: the even numbers 2..20000 are present, the odd ones absent
CREATE TABLE pl (id bigint PRIMARY KEY, v int NOT NULL, note text);
INSERT INTO pl SELECT 2 * g, g, 'n' || g FROM generate_series(1, 10000) g;
CREATE INDEX pl_v ON pl (v);
VACUUM ANALYZE pl;
SELECT bloomguard_attach('pl', 100000, 1e-9);
CREATE VIEW pl_counts AS
  SELECT checks, shortcuts, source_lookups, source_hits, fallbacks
    FROM bloomguard_health WHERE relation = 'pl'::regclass;
-- bitmap scans are never wrapped, and memoize would hide rescans
SET enable_bitmapscan = off;
SET enable_memoize = off;

-- 1. Plan shapes
-- a Const; an index-only scan; a projection above the wrapped scan
SELECT explain_guard('SELECT * FROM pl WHERE id = 42');
SELECT explain_guard('SELECT id FROM pl WHERE id = 42');
SELECT explain_guard('SELECT id * 10, note FROM pl WHERE id = 42');
SELECT * FROM path_vs_plain('SELECT id * 10 || note FROM pl WHERE id = 42');
-- no node where nothing fixes the whole key: a range, another index
SELECT explain_guard('SELECT * FROM pl WHERE id > 19990');
SELECT explain_guard('SELECT * FROM pl WHERE v = 21');
-- a Param of a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE pl_get(bigint) AS SELECT * FROM pl WHERE id = $1;
SELECT explain_guard('EXECUTE pl_get(42)');
-- EXPLAIN ANALYZE: an absent key answered by the filter (the index scan
-- never runs), a present one not
SELECT explain_guard('EXECUTE pl_get(43)', true);
SELECT explain_guard('EXECUTE pl_get(42)', true);
-- = ANY is not wrapped (planner.c says why): a plain index scan
SELECT explain_guard('SELECT * FROM pl WHERE id = ANY (ARRAY[1, 2, 3, 4, 5])', true);
PREPARE pl_any(bigint[]) AS SELECT count(*) FROM pl WHERE id = ANY ($1);
SELECT explain_guard('EXECUTE pl_any(''{1,2,3,4,5,7}'')', true);
-- the anti-join that drops keys already seen: a nested loop, forced, whose
-- inner scan is rescanned with each outer key.  batch: 20 keys spread over
-- pl's range, 1000g for even g (present) and 1000g - 1 for odd g (absent),
-- so that a merge join would read all of pl's index: 15 and 18 alike pick
-- the nested loop by themselves below.
CREATE TABLE batch (id bigint);
INSERT INTO batch SELECT 1000 * g - g % 2 FROM generate_series(1, 20) g;
ANALYZE batch;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT explain_guard('SELECT * FROM batch b WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = b.id)', true);
SELECT * FROM path_vs_plain('SELECT string_agg(id::text, '','' ORDER BY id) FROM batch b
                        WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = b.id)');
RESET enable_hashjoin;
RESET enable_mergejoin;
-- the plan the planner picks by itself for it
SELECT explain_guard('SELECT * FROM batch b WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = b.id)');

-- 2. Cross-type conditions: a key of one type, a value of another, hashed
-- as guarded_exists() hashes it.  Parameters of generic plans; an outer
-- Var of a join comes in section 7 (LATERAL).
CREATE TABLE k2 (id smallint PRIMARY KEY);
INSERT INTO k2 SELECT g FROM generate_series(-100, 100, 2) g;
CREATE TABLE k4 (id int PRIMARY KEY);
INSERT INTO k4 SELECT g FROM generate_series(-100, 100, 2) g;
CREATE TABLE kn (id numeric PRIMARY KEY);
INSERT INTO kn SELECT g / 2.0 FROM generate_series(-100, 100, 2) g;
INSERT INTO kn VALUES (1000.000);
CREATE TABLE kt (id text PRIMARY KEY);
INSERT INTO kt SELECT 'k' || g FROM generate_series(1, 100) g;
CREATE TABLE kv (id varchar(10) PRIMARY KEY);
INSERT INTO kv SELECT 'k' || g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('k2', 100000, 1e-9);
SELECT bloomguard_attach('k4', 100000, 1e-9);
SELECT bloomguard_attach('kn', 100000, 1e-9);
SELECT bloomguard_attach('kt', 100000, 1e-9);
SELECT bloomguard_attach('kv', 100000, 1e-9);
SET enable_seqscan = off;
PREPARE k8_by_int4(int4) AS SELECT count(*) FROM pl WHERE id = $1;
PREPARE k8_by_int2(int2) AS SELECT count(*) FROM pl WHERE id = $1;
PREPARE k2_by_int8(int8) AS SELECT count(*) FROM k2 WHERE id = $1;
PREPARE k4_by_int8(int8) AS SELECT count(*) FROM k4 WHERE id = $1;
PREPARE k4_by_numeric(numeric) AS SELECT count(*) FROM k4 WHERE id = $1;
PREPARE kn_by_int4(int4) AS SELECT count(*) FROM kn WHERE id = $1;
PREPARE kn_by_int8(int8) AS SELECT count(*) FROM kn WHERE id = $1;
PREPARE kt_by_varchar(varchar) AS SELECT count(*) FROM kt WHERE id = $1;
PREPARE kv_by_text(text) AS SELECT count(*) FROM kv WHERE id = $1;
PREPARE kv_by_bpchar(char(5)) AS SELECT count(*) FROM kv WHERE id = $1;
PREPARE k8_by_float8(float8) AS SELECT count(*) FROM pl WHERE id = $1;
SELECT explain_guard('EXECUTE k8_by_int4(42)');
SELECT explain_guard('EXECUTE kn_by_int4(42)');
SELECT explain_guard('EXECUTE kv_by_text(''k1'')');
-- float8 compares as float8: the index cannot be used, nothing is wrapped
SELECT explain_guard('EXECUTE k8_by_float8(42)');
SELECT s, v, p.*
  FROM (VALUES ('k8_by_int4', '42'), ('k8_by_int4', '43'), ('k8_by_int4', '-2147483648'),
               ('k8_by_int2', '20000'), ('k8_by_int2', '19999'),
               ('k2_by_int8', '-100'), ('k2_by_int8', '-99'), ('k2_by_int8', '40000'),
               ('k2_by_int8', '-9223372036854775808'),
               ('k4_by_int8', '100'), ('k4_by_int8', '3000000000'), ('k4_by_int8', '4294967296'),
               ('k4_by_numeric', '4.0'), ('k4_by_numeric', '4.5'),
               ('kn_by_int4', '3'), ('kn_by_int4', '4'), ('kn_by_int4', '1000'), ('kn_by_int4', '1001'),
               ('kn_by_int8', '-50'), ('kn_by_int8', '51'),
               ('kt_by_varchar', '''k7'''), ('kt_by_varchar', '''k7 '''), ('kt_by_varchar', '''k700'''),
               ('kv_by_text', '''k7'''), ('kv_by_text', '''K7'''), ('kv_by_text', '''k0'''),
               ('kv_by_bpchar', '''k7'''), ('kv_by_bpchar', '''k7   '''), ('kv_by_bpchar', '''k0'''),
               ('k8_by_float8', '42'), ('k8_by_float8', '42.5')) c(s, v),
       path_vs_plain(format('EXECUTE %s(%s)', s, v)) p;
-- = ANY of another element type
PREPARE k8_any_int4(int4[]) AS SELECT count(*) FROM pl WHERE id = ANY ($1);
PREPARE k2_any_int8(int8[]) AS SELECT count(*) FROM k2 WHERE id = ANY ($1);
SELECT s, v, p.*
  FROM (VALUES ('k8_any_int4', '{2,3,4,5}'), ('k2_any_int8', '{-100,-99,40000,100,9223372036854775807}'),
               ('k2_any_int8', '{40000}')) c(s, v),
       path_vs_plain(format('EXECUTE %s(%L)', s, v)) p;
RESET enable_seqscan;

-- 3. Multi-column keys: wrapped only when every key column is fixed
CREATE TABLE mc (a int, b text, c bigint, note text, PRIMARY KEY (a, b, c));
INSERT INTO mc SELECT g % 50, 'b' || (g % 7), g, 'n' || g FROM generate_series(1, 5000) g;
VACUUM ANALYZE mc;
SELECT bloomguard_attach('mc', 100000, 1e-9);
SELECT explain_guard('SELECT * FROM mc WHERE a = 3 AND b = ''b3'' AND c = 353');
SELECT explain_guard('SELECT * FROM mc WHERE a = 3 AND b = ''b3''');
SELECT explain_guard('SELECT * FROM mc WHERE a = 3 AND b = ''b3'' AND c > 4000');
-- = ANY on a column of a multi-column key is not wrapped
SELECT explain_guard('SELECT * FROM mc WHERE a = 3 AND b = ''b3'' AND c = ANY (ARRAY[353, 354])');
SELECT q, p.*
  FROM (VALUES ('SELECT count(*) FROM mc WHERE a = 3 AND b = ''b3'' AND c = 353'),
               ('SELECT count(*) FROM mc WHERE a = 3 AND b = ''b3'' AND c = 354'),
               ('SELECT count(*) FROM mc WHERE a = 3::int8 AND b = ''b3''::varchar AND c = 353::int2'),
               ('SELECT count(*) FROM mc WHERE a = 3 AND b = ''b3'''),
               ('SELECT count(*) FROM mc WHERE (a, b, c) = (3, ''b4'', 353)')) c(q), path_vs_plain(q) p;

-- 4. The trust rule, checked at execution: every case where the shortcut is
-- not taken falls back to the wrapped scan.  Key 43 is absent: "Answered by
-- Filter: 0" with it means the filter was not asked (and the guard's
-- counters call it a fallback).
SELECT bloomguard_reset_stats('pl');
-- bloomguard.transparent off when planning: no node
SET bloomguard.transparent = off;
SELECT explain_guard('SELECT * FROM pl WHERE id = 43');
PREPARE pl_get_off(bigint) AS SELECT * FROM pl WHERE id = $1;
SELECT explain_guard('EXECUTE pl_get_off(43)');
RESET bloomguard.transparent;
-- ... and set after the plan was cached: the node stays, and falls back
SET bloomguard.transparent = off;
SELECT explain_guard('EXECUTE pl_get(43)', true);
SELECT * FROM pl_counts;
RESET bloomguard.transparent;
SELECT explain_guard('EXECUTE pl_get(43)', true);
-- bloomguard.enabled off
SET bloomguard.enabled = off;
SELECT explain_guard('EXECUTE pl_get(43)', true);
RESET bloomguard.enabled;
-- SERIALIZABLE: the index scan must take its predicate lock
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT explain_guard('EXECUTE pl_get(43)', true);
SELECT explain_guard('SELECT * FROM pl WHERE id = ANY (ARRAY[41, 42, 43])', true);
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT explain_guard('EXECUTE pl_get(43)', true);
COMMIT;
SELECT * FROM pl_counts;
-- an untrusted guard: rows written while the trigger was disabled are not
-- in the filter, and are found
SELECT bloomguard_reset_stats('pl');
ALTER TABLE pl DISABLE TRIGGER bloomguard;
INSERT INTO pl VALUES (43, 43, 'written unguarded');
ALTER TABLE pl ENABLE ALWAYS TRIGGER bloomguard;
SELECT state FROM bloomguard_health WHERE relation = 'pl'::regclass;
SELECT explain_guard('EXECUTE pl_get(43)', true);
SELECT explain_guard('EXECUTE pl_get(45)', true);
SELECT * FROM path_vs_plain('SELECT count(*) FROM batch b WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = b.id)');
SELECT * FROM pl_counts;
SELECT present_but_absent('pl');
SELECT bloomguard_rebuild('pl');
SELECT explain_guard('EXECUTE pl_get(43)', true);
SELECT explain_guard('EXECUTE pl_get(45)', true);
DELETE FROM pl WHERE id = 43;

-- 5. Row-level security: where a policy applies, the scan is not wrapped
-- and the filter is not consulted (the counters do not move)
CREATE ROLE regress_bg_planner;
CREATE TABLE rls (id int PRIMARY KEY, who text);
INSERT INTO rls SELECT g, CASE WHEN g % 2 = 0 THEN 'regress_bg_planner' ELSE 'other' END
  FROM generate_series(1, 100) g;
GRANT SELECT ON rls TO regress_bg_planner;
SELECT bloomguard_attach('rls', 100000, 1e-9);
SET ROLE regress_bg_planner;
PREPARE rls_get(int) AS SELECT count(*) FROM rls WHERE id = $1;
-- before row-level security: the shortcut
SELECT explain_guard('EXECUTE rls_get(500)', true);
RESET ROLE;
ALTER TABLE rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON rls USING (who = current_user);
SELECT bloomguard_reset_stats('rls');
SET ROLE regress_bg_planner;
-- the cached plan is made again, without the node
SELECT explain_guard('EXECUTE rls_get(500)', true);
SELECT explain_guard('SELECT * FROM rls WHERE id = 500');
SELECT v, p.*
  FROM (VALUES (3), (4), (500)) c(v), path_vs_plain(format('EXECUTE rls_get(%s)', v)) p;
SELECT * FROM path_vs_plain('SELECT count(*) FROM rls WHERE id = ANY (ARRAY[3, 4, 500])');
RESET ROLE;
SELECT checks, shortcuts, source_lookups, fallbacks FROM bloomguard_health WHERE relation = 'rls'::regclass;
-- the owner, whom the policy does not apply to, keeps the shortcut
SELECT explain_guard('EXECUTE rls_get(500)', true);
SELECT bloomguard_detach('rls');
DROP TABLE rls;
DEALLOCATE rls_get;
DROP ROLE regress_bg_planner;

-- 6. Writes of the same statement: a query nested in a statement that
-- writes the table sees rows whose keys reach the filter only when the
-- statement ends, so it falls back; the statement's own scans do not see
-- them and keep the shortcut.  Each must return what a plain scan returns.
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TABLE sw (id int PRIMARY KEY, found bool, note text);
SELECT bloomguard_attach('sw', 100000, 1e-9);
CREATE VIEW sw_counts AS
  SELECT checks, shortcuts, source_lookups, source_hits, fallbacks
    FROM bloomguard_health WHERE relation = 'sw'::regclass;
-- a BEFORE trigger looks up the row the statement inserted just before
CREATE FUNCTION sw_prev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.found := EXISTS (SELECT 1 FROM sw WHERE id = NEW.id - 1);
    RETURN NEW;
END $$;
CREATE TRIGGER sw_prev BEFORE INSERT ON sw FOR EACH ROW EXECUTE FUNCTION sw_prev();
INSERT INTO sw (id) SELECT g FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE found) AS found_previous, count(*) FILTER (WHERE NOT found) AS not_found FROM sw;
SELECT * FROM sw_counts;
DROP TRIGGER sw_prev ON sw;
-- a volatile function in the SELECT list of an INSERT ... SELECT
CREATE FUNCTION sw_has(k int) RETURNS bool LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM sw WHERE id = k);
END $$;
SELECT bloomguard_reset_stats('sw');
INSERT INTO sw (id, found) SELECT g, sw_has(g - 1) FROM generate_series(1001, 1100) g;
SELECT count(*) FILTER (WHERE found) AS found_previous, count(*) FILTER (WHERE NOT found) AS not_found
  FROM sw WHERE id > 1000;
SELECT * FROM sw_counts;
-- a writable CTE: the statement's own scan does not see the CTE's row (and
-- may trust the filter); a volatile function called by it does
SELECT bloomguard_reset_stats('sw');
WITH ins AS (INSERT INTO sw (id) VALUES (5000) RETURNING id)
SELECT (SELECT count(*) FROM ins) AS inserted,
       (SELECT count(*) FROM sw WHERE id = 5000) AS statement_sees,
       sw_has(5000) AS function_sees;
SELECT * FROM sw_counts;
SELECT count(*) FROM sw WHERE id = 5000;
-- an AFTER trigger that fires before the feed trigger ("a..." sorts before
-- "bloomguard") looks up the rows of its statement
CREATE TABLE sw_log (id int, found bool);
CREATE FUNCTION sw_after() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sw_log SELECT NEW.id, EXISTS (SELECT 1 FROM sw WHERE id = NEW.id + 1);
    RETURN NULL;
END $$;
CREATE TRIGGER a_after AFTER INSERT ON sw FOR EACH ROW EXECUTE FUNCTION sw_after();
INSERT INTO sw (id) SELECT g FROM generate_series(6001, 6050) g;
SELECT count(*) FILTER (WHERE found) AS found_next, count(*) FILTER (WHERE NOT found) AS not_found FROM sw_log;
DROP TRIGGER a_after ON sw;
-- the statement's own scans: UPDATE and DELETE of absent keys, and the
-- anti-join of an INSERT ... SELECT, take the shortcut
SELECT bloomguard_reset_stats('sw');
UPDATE sw SET note = 'updated' WHERE id = 7001;
DELETE FROM sw WHERE id = 7001;
UPDATE sw SET note = 'updated' WHERE id = 6001;
INSERT INTO sw (id) SELECT g FROM generate_series(6041, 6060) g
 WHERE NOT EXISTS (SELECT 1 FROM sw WHERE sw.id = g);
SELECT * FROM sw_counts;
SELECT count(*) AS rows, count(*) FILTER (WHERE note = 'updated') AS updated FROM sw;
SELECT present_but_absent('sw');
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- 7. Odd plans, each giving the rows it gives without the path
-- scroll cursors: backward, absolute and relative fetches
CREATE FUNCTION scroll_trace(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c refcursor;
    r record;
    t text := '';
BEGIN
    OPEN c SCROLL FOR EXECUTE query;
    FETCH LAST FROM c INTO r;         t := t || ' last ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH PRIOR FROM c INTO r;        t := t || ' prior ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH ABSOLUTE 1 FROM c INTO r;   t := t || ' abs1 ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH ABSOLUTE -1 FROM c INTO r;  t := t || ' abs-1 ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH RELATIVE -1 FROM c INTO r;  t := t || ' rel-1 ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH FIRST FROM c INTO r;        t := t || ' first ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH PRIOR FROM c INTO r;        t := t || ' prior ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH NEXT FROM c INTO r;         t := t || ' next ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH NEXT FROM c INTO r;         t := t || ' next ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    MOVE LAST FROM c;
    FETCH NEXT FROM c INTO r;         t := t || ' past ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    FETCH BACKWARD FROM c INTO r;     t := t || ' back ' || CASE WHEN FOUND THEN r::text ELSE '-' END;
    CLOSE c;
    RETURN t;
END $$;
SELECT explain_guard('SELECT id, v FROM pl WHERE id = ANY (ARRAY[1, 2, 3, 4, 5, 6, 7])');
SELECT bloomguard_reset_stats('pl');
SELECT q, p.answer, p.same
  FROM (VALUES ('SELECT id, v FROM pl WHERE id = ANY (ARRAY[1, 2, 3, 4, 5, 6, 7])'),
               ('SELECT id, v FROM pl WHERE id = 42'),
               ('SELECT id, v FROM pl WHERE id = 43'),
               ('SELECT id, v FROM pl WHERE id = 45'),
               ('SELECT id FROM pl WHERE id = ANY (ARRAY[20000, 1, 19998])')) c(q),
       path_vs_plain(format('SELECT scroll_trace(%L)', q)) p;
-- the cursors went through the filter; every key found was counted once
SELECT shortcuts > 0 AS shortcuts, source_lookups > 0 AS lookups, source_hits <= source_lookups AS hits_counted_once
  FROM pl_counts;
-- SQL cursors
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id, v FROM pl WHERE id = 4;
FETCH ALL FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH ABSOLUTE 0 FROM cur;
FETCH FORWARD ALL FROM cur;
COMMIT;
-- joins with merge joins forced: a key fixed to a constant fixes the
-- other side too (an equivalence class), so the planner joins the two
-- filtered sides by a nested loop; the node is never marked and restored
-- (only = ANY, no longer wrapped, made that possible).  The answers must
-- still be the plain ones, and a row found counted once.
CREATE TABLE dup (id bigint, n int);
INSERT INTO dup SELECT (g % 7) * 2 + (g % 2), g FROM generate_series(1, 30) g;
ANALYZE dup;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SET enable_seqscan = off;
SELECT bloomguard_reset_stats('pl');
SELECT explain_guard('SELECT dup.n, pl.v FROM dup JOIN pl ON dup.id = pl.id AND dup.n <> pl.v
                       WHERE pl.id = 4', true);
-- one key looked up, and found once
SELECT checks, shortcuts, source_lookups, source_hits, observed_fp FROM bloomguard_health WHERE relation = 'pl'::regclass;
-- (the plans, and so what the nodes count, differ between versions here)
SELECT answer, same FROM path_vs_plain('SELECT string_agg(dup.n || '':'' || pl.v, '' '' ORDER BY dup.n) FROM dup JOIN pl
                         ON dup.id = pl.id AND dup.n <> pl.v WHERE pl.id = 4');
SELECT answer, same FROM path_vs_plain('SELECT string_agg(dup.n || '':'' || pl.v, '' '' ORDER BY dup.n) FROM dup LEFT JOIN pl
                         ON dup.id = pl.id AND dup.n <> pl.v AND pl.id = 5');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;
RESET enable_seqscan;
-- LATERAL: the inner scan is parameterized by the outer row, a key, a key
-- of another type, or an array for = ANY (a NULL, an empty array, NULL
-- elements)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TABLE lat (n int, id bigint, id4 int, ids bigint[]);
INSERT INTO lat VALUES (1, 2, 2, '{2,3,4}'), (2, 3, 3, '{3,5}'), (3, NULL, NULL, NULL), (4, 20000, 20000, '{}'),
                       (5, 20001, 20001, '{NULL,20000,NULL}'), (6, 4, 4, '{{4,6},{7,8}}'), (7, 4, 4, '{4,4,4}');
ANALYZE lat;
SELECT explain_guard('SELECT lat.n, s.v FROM lat, LATERAL (SELECT v FROM pl WHERE pl.id = lat.id) s');
SELECT explain_guard('SELECT lat.n, s.c FROM lat, LATERAL (SELECT count(*) AS c FROM pl WHERE pl.id = ANY (lat.ids)) s', true);
SELECT q, p.*
  FROM (VALUES ('SELECT string_agg(lat.n || '':'' || s.v, '' '' ORDER BY lat.n) FROM lat, LATERAL (SELECT v FROM pl WHERE pl.id = lat.id) s'),
               ('SELECT string_agg(lat.n || '':'' || s.v, '' '' ORDER BY lat.n) FROM lat, LATERAL (SELECT v FROM pl WHERE pl.id = lat.id4) s'),
               ('SELECT string_agg(lat.n || '':'' || coalesce(s.v, -1), '' '' ORDER BY lat.n) FROM lat LEFT JOIN LATERAL (SELECT v FROM pl WHERE pl.id = lat.id + 2 LIMIT 1) s ON true'),
               ('SELECT string_agg(lat.n || '':'' || s.c, '' '' ORDER BY lat.n) FROM lat, LATERAL (SELECT count(*) AS c FROM pl WHERE pl.id = ANY (lat.ids)) s'),
               ('SELECT string_agg(lat.n || '':'' || s.c, '' '' ORDER BY lat.n) FROM lat, LATERAL (SELECT string_agg(v::text, ''/'' ORDER BY v) AS c FROM pl WHERE pl.id = ANY (ARRAY[lat.id, lat.id4 + 2, NULL])) s'),
               ('SELECT count(*) FROM lat WHERE EXISTS (SELECT 1 FROM pl WHERE pl.id = lat.id4)')) c(q), path_vs_plain(q) p;
-- whole rows of the table: the wrapped scan does not project, and the node
-- hands on its heap tuples to a join, a hash table and a sort
SELECT explain_guard('SELECT lat.n, s.* FROM lat, LATERAL (SELECT * FROM pl WHERE pl.id = lat.id) s');
RESET enable_hashjoin;
SET enable_nestloop = off;
SELECT explain_guard('SELECT lat.n, pl.* FROM lat JOIN pl ON pl.id = lat.id WHERE pl.id = ANY (ARRAY[2, 3, 4, 20000])');
RESET enable_nestloop;
SELECT q, p.*
  FROM (VALUES ('SELECT string_agg(lat.n || '':'' || s::text, '' '' ORDER BY lat.n) FROM lat, LATERAL (SELECT * FROM pl WHERE pl.id = lat.id) s'),
               ('SELECT string_agg(lat.n || '':'' || pl::text, '' '' ORDER BY lat.n) FROM lat JOIN pl ON pl.id = lat.id WHERE pl.id = ANY (ARRAY[2, 3, 4, 20000])'),
               ('SELECT string_agg(s.id || s.note, '' '' ORDER BY s.note DESC) FROM (SELECT * FROM pl WHERE id = ANY (ARRAY[2, 3, 4, 20000]) ORDER BY note) s')) c(q),
       path_vs_plain(q) p;
RESET enable_mergejoin;
-- forced parallel plans: the node is not parallel safe, so it never runs in
-- a worker, even where the plan around it is parallel
CREATE TABLE par (id bigint);
INSERT INTO par SELECT g FROM generate_series(1, 2000) g;
ANALYZE par;
CREATE FUNCTION parallel_shape(query text, OUT gather boolean, OUT guards int, OUT guards_in_workers int)
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || query INTO plan;
    gather := jsonb_path_exists(plan, 'strict $.** ? (@."Node Type" starts with "Gather")');
    guards := jsonb_array_length(jsonb_path_query_array(plan, 'strict $.** ? (@."Custom Plan Provider" == "BloomGuard")'));
    guards_in_workers := jsonb_array_length(jsonb_path_query_array(plan,
        'strict $.** ? (@."Node Type" starts with "Gather").** ? (@."Custom Plan Provider" == "BloomGuard")'));
END $$;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS forced;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT q, s.*, p.*
  FROM (VALUES ('SELECT v FROM pl WHERE id = 42'),
               ('SELECT count(*) FROM pl WHERE id = ANY (ARRAY[41, 42, 43])'),
               ('SELECT count(*) FROM par WHERE EXISTS (SELECT 1 FROM pl WHERE pl.id = par.id)'),
               ('SELECT count(*) FROM par WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = par.id)'),
               ('EXECUTE pl_any(''{1,2,3,4}'')')) c(q), parallel_shape(q) s, path_vs_plain(q) p;
-- the same without the path: parallel plans where the guard was
SET bloomguard.transparent = off;
SELECT (parallel_shape('SELECT count(*) FROM par WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = par.id)')).*;
RESET bloomguard.transparent;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS forced;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- UPDATE, DELETE and SELECT ... FOR UPDATE of an absent key affect and lock
-- nothing; of a present key, as always (the absent key is 47 from here on:
-- 43, deleted after the rebuild above, is still in the filter)
SELECT explain_guard('UPDATE pl SET v = v WHERE id = 47', true);
SELECT explain_guard('DELETE FROM pl WHERE id = 47', true);
SELECT explain_guard('SELECT * FROM pl WHERE id = 47 FOR UPDATE', true);
PREPARE pl_upd(bigint) AS UPDATE pl SET note = 'upd' WHERE id = $1 RETURNING id, note;
EXECUTE pl_upd(47);
BEGIN;
EXECUTE pl_upd(44);
SELECT id, note FROM pl WHERE id = 44 FOR UPDATE;
DELETE FROM pl WHERE id = ANY (ARRAY[44, 47]) RETURNING id;
ROLLBACK;
SELECT id, note FROM pl WHERE id = 44;
-- NULL keys, = ANY with NULLs and empty arrays: no row, and no key checked
SELECT explain_guard('EXECUTE pl_get(NULL)', true);
SELECT v, p.*
  FROM (VALUES (NULL), ('{}'), ('{NULL}'), ('{NULL,42,NULL,43}'), ('{{42,44},{45,46}}'), ('{42,42,43,42}')) c(v),
       path_vs_plain(format('EXECUTE pl_any(%L)', v)) p;
SELECT * FROM path_vs_plain('SELECT count(*) FROM pl WHERE id = ANY (''{}''::bigint[])');
SELECT * FROM path_vs_plain('SELECT count(*) FROM pl WHERE id IN (SELECT unnest(''{42,NULL,43}''::bigint[]))');

-- 7b. A STABLE function as the key is evaluated once per scan, as without
-- the guard: the node reads the value the wrapped index scan computes.
-- Each query below prints as many NOTICEs as with bloomguard.transparent
-- off: one as the planner estimates the condition (not for an outer
-- column's value), and one per scan, present key or absent, index scan or
-- index-only scan, and per rescan of a nested loop's inner side.
CREATE FUNCTION pl_key(k bigint) RETURNS bigint STABLE LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'pl_key(%)', k;
  RETURN k;
END $$;
SELECT explain_guard('SELECT * FROM pl WHERE id = pl_key(42)');
SELECT id, v FROM pl WHERE id = pl_key(42);
SELECT id, v FROM pl WHERE id = pl_key(43);
SELECT explain_guard('SELECT id FROM pl WHERE id = pl_key(44)');
SELECT id FROM pl WHERE id = pl_key(44);
SELECT explain_guard('SELECT b.x, p.v FROM (VALUES (40::bigint), (41)) b(x) CROSS JOIN LATERAL (SELECT v FROM pl WHERE id = pl_key(b.x)) p');
SELECT b.x, p.v FROM (VALUES (40::bigint), (41)) b(x) CROSS JOIN LATERAL (SELECT v FROM pl WHERE id = pl_key(b.x)) p;
SELECT * FROM pl_counts \gset before_
SELECT id, v FROM pl WHERE id = pl_key(45);
SELECT checks - :before_checks AS checks, shortcuts - :before_shortcuts AS shortcuts FROM pl_counts;
-- the same number of calls without the guard
SET bloomguard.transparent = off;
SELECT id, v FROM pl WHERE id = pl_key(42);
RESET bloomguard.transparent;

-- 7c. A key computed at execution (an expression of a generic plan's
-- parameters, a STABLE function, an expression of an outer column) is
-- evaluated by the node, once, before the wrapped scan is initialised: a
-- key the filter rules out skips the scan's start-up ("Index Scan
-- Skipped"); for any other key the scan is started then and given the
-- value, which it does not evaluate again (one NOTICE per scan, as in 7b).
PREPARE pl_expr(bigint, bigint) AS SELECT id, v FROM pl WHERE id = $1 * 2 + $2;
PREPARE pl_fkey(bigint) AS SELECT id, v FROM pl WHERE id = pl_key($1);
SELECT explain_guard('EXECUTE pl_expr(500, 1)', true);
SELECT explain_guard('EXECUTE pl_expr(500, 0)', true);
SELECT explain_guard('EXECUTE pl_fkey(1003)', true);
SELECT explain_guard('EXECUTE pl_fkey(1002)', true);
SELECT * FROM path_vs_plain('SELECT v FROM pl WHERE id = pl_key(1005)');
SELECT * FROM path_vs_plain('SELECT v FROM pl WHERE id = pl_key(1006)');
-- a nested loop's inner side: started at the first outer key the filter
-- does not rule out, rescanned for the later ones
SELECT explain_guard('SELECT b.x, p.v FROM (VALUES (1001::bigint), (1003), (40), (1005), (42)) b(x)
                        CROSS JOIN LATERAL (SELECT v FROM pl WHERE id = pl_key(b.x + 0)) p', true);
SELECT * FROM path_vs_plain('SELECT string_agg(b.x || '':'' || p.v, '','' ORDER BY b.x)
                               FROM (VALUES (1001::bigint), (1003), (40), (1005), (42)) b(x)
                               CROSS JOIN LATERAL (SELECT v FROM pl WHERE id = b.x * 1) p');
-- cached plans between executions: after a REINDEX the scan, started
-- late, opens the index as it is now; with bloomguard.transparent off the
-- filter is not asked and the scan starts, given the value; a plan made
-- again after DDL on the table skips again
SELECT explain_guard('EXECUTE pl_expr(500, 1)', true);
REINDEX TABLE pl;
SELECT explain_guard('EXECUTE pl_expr(500, 1)', true);
SELECT explain_guard('EXECUTE pl_expr(501, 0)', true);
SELECT explain_guard('EXECUTE pl_fkey(1003)', true);
SET bloomguard.transparent = off;
SELECT explain_guard('EXECUTE pl_expr(500, 1)', true);
SELECT explain_guard('EXECUTE pl_fkey(1003)', true);
RESET bloomguard.transparent;
ALTER TABLE pl ALTER COLUMN note SET STATISTICS 200;
SELECT explain_guard('EXECUTE pl_fkey(1003)', true);
SELECT explain_guard('EXECUTE pl_fkey(1004)', true);
ALTER TABLE pl ALTER COLUMN note SET STATISTICS -1;
DEALLOCATE pl_expr;
DEALLOCATE pl_fkey;
-- an index condition besides the key's, calling a function the role may
-- not execute (a plan made by another role): the wrapped scan starts with
-- the node, and its start-up raises the error whatever the filter
-- answers, as without the node
CREATE FUNCTION pl_bound() RETURNS bigint STABLE LANGUAGE plpgsql AS 'BEGIN RETURN 100000; END';
REVOKE EXECUTE ON FUNCTION pl_bound() FROM PUBLIC;
CREATE ROLE regress_bg_noexec;
GRANT SELECT ON pl TO regress_bg_noexec;
PREPARE pl_bounded(bigint) AS SELECT id FROM pl WHERE id = $1 AND id < pl_bound();
SELECT explain_guard('EXECUTE pl_bounded(1001)', true);
SET ROLE regress_bg_noexec;
EXECUTE pl_bounded(1001);
EXECUTE pl_bounded(1002);
RESET ROLE;
DEALLOCATE pl_bounded;
REVOKE SELECT ON pl FROM regress_bg_noexec;
DROP ROLE regress_bg_noexec;
DROP FUNCTION pl_bound();
DROP FUNCTION pl_key(bigint);
-- every key value is evaluated before any is looked at, as the index
-- scan evaluates all its run-time keys: a later column's error is raised
-- although an earlier column is NULL (a generic plan; the scan not
-- started yet), through the node as by the plain plan
PREPARE mc_div(int, int) AS SELECT a FROM mc WHERE a = $1 AND b = 'b3' AND c = 1 / $2;
SELECT explain_guard('EXECUTE mc_div(3, 1)');
EXECUTE mc_div(NULL, 0);
EXECUTE mc_div(3, 0);
EXECUTE mc_div(NULL, 1);
SET bloomguard.transparent = off;
EXECUTE mc_div(NULL, 0);
PREPARE mc_div_plain(int, int) AS SELECT a FROM mc WHERE a = $1 AND b = 'b3' AND c = 1 / $2;
SELECT explain_guard('EXECUTE mc_div_plain(3, 1)');
EXECUTE mc_div_plain(NULL, 0);
RESET bloomguard.transparent;
DEALLOCATE mc_div;
DEALLOCATE mc_div_plain;

-- 8. Prepared statements across attach and detach (attach, rebuild and
-- detach invalidate the table's cached plans)
CREATE TABLE ad (id int PRIMARY KEY);
INSERT INTO ad SELECT g FROM generate_series(1, 100) g;
PREPARE ad_get(int) AS SELECT count(*) FROM ad WHERE id = $1;
SELECT explain_guard('EXECUTE ad_get(500)', true);
SELECT bloomguard_attach('ad', 100000, 1e-9);
SELECT explain_guard('EXECUTE ad_get(500)', true);
-- a plan still holding the node while the guard goes (detach in the
-- transaction): it falls back, and fails nothing
BEGIN;
DECLARE ad_cur SCROLL CURSOR FOR SELECT id FROM ad WHERE id = 5;
FETCH 1 FROM ad_cur;
SELECT bloomguard_detach('ad');
FETCH ALL FROM ad_cur;
FETCH BACKWARD ALL FROM ad_cur;
FETCH ABSOLUTE 0 FROM ad_cur;
FETCH ALL FROM ad_cur;
SELECT explain_guard('EXECUTE ad_get(500)', true);
EXECUTE ad_get(5);
COMMIT;
SELECT explain_guard('EXECUTE ad_get(500)', true);
EXECUTE ad_get(5);
-- and the other way: a guard attached after the plan was made
SELECT bloomguard_attach('ad', 100000, 1e-9);
SELECT explain_guard('EXECUTE ad_get(500)', true);
SELECT bloomguard_rebuild('ad');
SELECT explain_guard('EXECUTE ad_get(500)', true);

-- 8b. The wrapped scan's start-up is skipped while no scan needs it
-- (guardscan.c): EXPLAIN ANALYZE shows "Index Scan Skipped" and no index
-- scan node.  A generic plan (pl_get, force_generic_plan above): absent,
-- present, absent again, each execution starting the executor anew
SELECT explain_guard('EXECUTE pl_get(49)', true);
SELECT explain_guard('EXECUTE pl_get(48)', true);
SELECT explain_guard('EXECUTE pl_get(51)', true);
EXECUTE pl_get(48);
EXECUTE pl_get(49);
-- plain EXPLAIN still initialises and shows the index scan
SELECT explain_guard('EXECUTE pl_get(49)');
-- a filter condition of the wrapped scan's own: started at once, skipped or not
PREPARE pl_get_v(bigint, text) AS SELECT id FROM pl WHERE id = $1 AND note = $2;
SELECT explain_guard('EXECUTE pl_get_v(49, ''n24'')', true);
EXECUTE pl_get_v(48, 'n24');
-- a nested loop's inner side: started at the first rescan whose key the
-- filter does not rule out (the first 10 outer keys are absent), then kept
CREATE TABLE lazy_outer (ord int, id bigint);
INSERT INTO lazy_outer SELECT g, CASE WHEN g <= 10 THEN 2 * g + 1 ELSE 2 * g END
  FROM generate_series(1, 14) g;
ANALYZE lazy_outer;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT explain_guard('SELECT o.ord, pl.v FROM lazy_outer o JOIN pl ON pl.id = o.id ORDER BY o.ord', true);
SELECT o.ord, pl.v FROM lazy_outer o JOIN pl ON pl.id = o.id ORDER BY o.ord;
-- every outer key absent: the inner scan is never started
DELETE FROM lazy_outer WHERE ord > 10;
SELECT explain_guard('SELECT o.ord, pl.v FROM lazy_outer o JOIN pl ON pl.id = o.id', true);
-- a scroll cursor over a skipped scan, and over one started late by a rescan
BEGIN;
DECLARE lazy_cur SCROLL CURSOR FOR SELECT id FROM pl WHERE id = 49;
FETCH ALL FROM lazy_cur;
FETCH BACKWARD ALL FROM lazy_cur;
FETCH ABSOLUTE 1 FROM lazy_cur;
MOVE ABSOLUTE 0 IN lazy_cur;
FETCH ALL FROM lazy_cur;
DECLARE lazy_cur2 SCROLL CURSOR FOR
  SELECT o.ord, pl.id FROM (VALUES (1, 49::bigint), (2, 48), (3, 51), (4, 50)) o(ord, id)
    JOIN pl ON pl.id = o.id ORDER BY o.ord;
FETCH 1 FROM lazy_cur2;
FETCH ALL FROM lazy_cur2;
FETCH BACKWARD ALL FROM lazy_cur2;
FETCH RELATIVE 2 FROM lazy_cur2;
FETCH PRIOR FROM lazy_cur2;
COMMIT;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- plans made again between executions: the guard detached (no node), a
-- column added (the plan is made again with the node), a rebuild
PREPARE lazy_ad(int) AS SELECT count(*) FROM ad WHERE id = $1;
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
SELECT bloomguard_detach('ad');
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
SELECT bloomguard_attach('ad', 100000, 1e-9);
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
ALTER TABLE ad ADD COLUMN extra int;
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
EXECUTE lazy_ad(5);
SELECT bloomguard_rebuild('ad');
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
EXECUTE lazy_ad(5);
-- within one transaction: the key changed under a cached plan
BEGIN;
ALTER TABLE ad DROP CONSTRAINT ad_pkey;
EXECUTE lazy_ad(500);
EXECUTE lazy_ad(5);
ROLLBACK;
SELECT explain_guard('EXECUTE lazy_ad(500)', true);
DEALLOCATE lazy_ad;
DEALLOCATE pl_get_v;
DROP TABLE lazy_outer;

-- 8c. Costs: a nested loop whose inner side is the node costs exactly what
-- it costs with the plain index scan, so the planner picks the plans it
-- picks without bloomguard.  The node wraps a parameterized scan only
-- after the join is costed: costsize.c's cheap costing of the inner side
-- of semi, anti and unique joins accepts index scans, never a custom scan.
-- wide: 40000 distinct keys, of which pl holds a quarter, so the planner
-- expects most outer rows to find no match
CREATE TABLE wide (id bigint);
INSERT INTO wide SELECT g FROM generate_series(1, 40000) g;
ANALYZE wide;
CREATE FUNCTION pg_temp.plan_cost(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Total Cost')::numeric;
END $$;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE costs (q text, off_cost numeric, on_cost numeric);
INSERT INTO costs (q) VALUES
  ('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)'),
  ('SELECT count(*) FROM wide w WHERE EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)'),
  ('SELECT count(*) FROM wide w JOIN pl ON pl.id = w.id');
SET bloomguard.transparent = off;
UPDATE costs SET off_cost = pg_temp.plan_cost(q);
RESET bloomguard.transparent;
UPDATE costs SET on_cost = pg_temp.plan_cost(q);
SELECT q, on_cost = off_cost AS same_cost, p.node
  FROM costs, LATERAL path_vs_plain(q) p ORDER BY q;
SELECT explain_guard('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)');
RESET max_parallel_workers_per_gather;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE wide, costs;

-- 8d. bloomguard.shortcut_costing (off by default): the node costs a probe
-- plus the index scan's cost times the share of the guard's checks the
-- filter did not answer, once it has counted 1000.  Traffic pinned here:
-- 999 checks of absent keys (too few: costed as the index scan), then one
-- more (share 0.999: 43, deleted above, is still in the filter); shown:
-- whether the plan has the node, and a nested loop (16 and later may hash
-- either side of the anti-join)
CREATE TABLE wide (id bigint);
INSERT INTO wide SELECT 2 * g + 1 FROM generate_series(1, 5000) g;
ANALYZE wide;
SELECT bloomguard_reset_stats('pl');
SELECT count(*) FILTER (WHERE guarded_exists('pl', 2 * g + 1)) FROM generate_series(1, 999) g;
SET bloomguard.shortcut_costing = on;
SELECT count(*) FILTER (WHERE l ~ 'BloomGuard') AS guards, bool_or(l ~ 'Nested Loop') AS nested_loop
  FROM explain_guard('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)') l;
SELECT count(*) FILTER (WHERE guarded_exists('pl', 1::bigint)) FROM generate_series(1, 1);
SELECT count(*) FILTER (WHERE l ~ 'BloomGuard') AS guards, bool_or(l ~ 'Nested Loop') AS nested_loop
  FROM explain_guard('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)') l;
SELECT * FROM path_vs_plain('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)');
RESET bloomguard.shortcut_costing;
SELECT count(*) FILTER (WHERE l ~ 'BloomGuard') AS guards, bool_or(l ~ 'Nested Loop') AS nested_loop
  FROM explain_guard('SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM pl WHERE pl.id = w.id)') l;
DROP TABLE wide;

-- 9. DROP EXTENSION with cached plans: in the dropping transaction they are
-- made again and fall back; afterwards they have no node; no error, the
-- right rows
DROP VIEW pl_counts, sw_counts;
SELECT bloomguard_detach(relation) FROM bloomguard_health WHERE relation <> 'pl'::regclass ORDER BY relation::text;
SELECT explain_guard('EXECUTE pl_get(47)', true);
BEGIN;
DECLARE pl_cur SCROLL CURSOR FOR SELECT id FROM pl WHERE id = 4;
FETCH 1 FROM pl_cur;
DROP EXTENSION bloomguard CASCADE;
FETCH ALL FROM pl_cur;
FETCH BACKWARD ALL FROM pl_cur;
SELECT explain_guard('EXECUTE pl_get(47)', true);
EXECUTE pl_get(42);
EXECUTE pl_any('{1,2,3,4}');
COMMIT;
SELECT explain_guard('EXECUTE pl_get(47)', true);
EXECUTE pl_get(42);
EXECUTE pl_any('{1,2,3,4}');
EXECUTE k2_by_int8(40000);
EXECUTE pl_upd(46);
DEALLOCATE ALL;
RESET plan_cache_mode;

RESET enable_bitmapscan;
RESET enable_memoize;
DROP TABLE pl, batch, k2, k4, kn, kt, kv, mc, sw, sw_log, dup, lat, par, ad;
DROP FUNCTION explain_guard(text, boolean), path_vs_plain(text), present_but_absent(regclass),
  sw_has(int), sw_prev(), sw_after(), scroll_trace(text), parallel_shape(text);
