-- writepaths: every way a key can be written feeds the filter.
-- After each write path, every key written must be found by guarded_exists
-- (exactly as EXISTS finds it) and bloomguard_check must say 'maybe' for it,
-- never 'absent'.  Keys that are gone (rolled back, deleted, moved away by
-- an UPDATE of the key) must be reported missing, as EXISTS reports them;
-- for those only guarded_exists and EXISTS are printed, since the filter
-- may still say 'maybe' for them.
CREATE EXTENSION bloomguard;

-- single INSERT
CREATE TABLE wp_single (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_single', 10000);
INSERT INTO wp_single VALUES (1, 'one');
SELECT k, guarded_exists('wp_single', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_single WHERE id = k) AS plain,
       bloomguard_check('wp_single', k) AS filter
  FROM (VALUES (1)) v(k);
SELECT guarded_exists('wp_single', 2) AS guarded,
       EXISTS (SELECT 1 FROM wp_single WHERE id = 2) AS plain;
SELECT bloomguard_detach('wp_single');
DROP TABLE wp_single;

-- multi-row INSERT ... VALUES
CREATE TABLE wp_multi (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_multi', 10000);
INSERT INTO wp_multi VALUES (10, 'a'), (20, 'b'), (30, 'c'), (-40, 'd'), (2147483647, 'max');
SELECT k, guarded_exists('wp_multi', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_multi WHERE id = k) AS plain,
       bloomguard_check('wp_multi', k) AS filter
  FROM unnest(ARRAY[10, 20, 30, -40, 2147483647]) k ORDER BY k;
SELECT bloomguard_detach('wp_multi');
DROP TABLE wp_multi;

-- INSERT ... SELECT of thousands of rows
CREATE TABLE wp_bulk (id bigint PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_bulk', 50000);
INSERT INTO wp_bulk SELECT g, 'row ' || g FROM generate_series(1, 20000) g;
SELECT count(*) AS keys,
       count(*) FILTER (WHERE guarded_exists('wp_bulk', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM wp_bulk WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bulk', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bulk', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1, 20000) g;
-- a second batch into a non-empty guard, with bigint keys far apart
INSERT INTO wp_bulk SELECT g * 1000000007::bigint, 'far' FROM generate_series(1, 3000) g;
SELECT count(*) AS keys,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bulk', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bulk', id) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_bulk;
SELECT bloomguard_detach('wp_bulk');
DROP TABLE wp_bulk;

-- COPY FROM STDIN
CREATE TABLE wp_copy (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_copy', 10000);
COPY wp_copy (id, payload) FROM stdin;
101	copied one
102	copied two
103	copied three
-104	copied four
9999	copied five
\.
SELECT k, guarded_exists('wp_copy', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_copy WHERE id = k) AS plain,
       bloomguard_check('wp_copy', k) AS filter
  FROM unnest(ARRAY[101, 102, 103, -104, 9999]) k ORDER BY k;
-- COPY in CSV form too
COPY wp_copy (id, payload) FROM stdin WITH (FORMAT csv);
201,"csv, one"
202,csv two
\.
SELECT k, guarded_exists('wp_copy', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_copy WHERE id = k) AS plain,
       bloomguard_check('wp_copy', k) AS filter
  FROM unnest(ARRAY[201, 202]) k ORDER BY k;
SELECT count(*) AS rows, count(*) FILTER (WHERE NOT guarded_exists('wp_copy', id)) AS missing
  FROM wp_copy;
SELECT bloomguard_detach('wp_copy');
DROP TABLE wp_copy;

-- INSERT ... ON CONFLICT DO NOTHING: new and conflicting rows
CREATE TABLE wp_nothing (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_nothing', 10000);
INSERT INTO wp_nothing VALUES (1, 'old'), (2, 'old');
INSERT INTO wp_nothing VALUES (2, 'conflict'), (3, 'new'), (4, 'new')
  ON CONFLICT DO NOTHING;
INSERT INTO wp_nothing VALUES (4, 'conflict'), (5, 'new')
  ON CONFLICT (id) DO NOTHING;
SELECT id, payload FROM wp_nothing ORDER BY id;
SELECT k, guarded_exists('wp_nothing', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_nothing WHERE id = k) AS plain,
       bloomguard_check('wp_nothing', k) AS filter
  FROM unnest(ARRAY[1, 2, 3, 4, 5]) k ORDER BY k;
SELECT bloomguard_detach('wp_nothing');
DROP TABLE wp_nothing;

-- INSERT ... ON CONFLICT DO UPDATE that changes the key
CREATE TABLE wp_upsert_key (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_upsert_key', 10000);
INSERT INTO wp_upsert_key SELECT g, 'old' FROM generate_series(1, 5) g;
-- 3 and 4 conflict and move to 1003 and 1004; 10 is inserted
INSERT INTO wp_upsert_key VALUES (3, 'new'), (4, 'new'), (10, 'new')
  ON CONFLICT (id) DO UPDATE SET id = excluded.id + 1000;
SELECT id, payload FROM wp_upsert_key ORDER BY id;
SELECT k, guarded_exists('wp_upsert_key', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_upsert_key WHERE id = k) AS plain,
       bloomguard_check('wp_upsert_key', k) AS filter
  FROM unnest(ARRAY[1, 2, 5, 10, 1003, 1004]) k ORDER BY k;
-- the old keys are gone
SELECT k, guarded_exists('wp_upsert_key', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_upsert_key WHERE id = k) AS plain
  FROM unnest(ARRAY[3, 4]) k ORDER BY k;
SELECT bloomguard_detach('wp_upsert_key');
DROP TABLE wp_upsert_key;

-- INSERT ... ON CONFLICT DO UPDATE of a non-key column
CREATE TABLE wp_upsert (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_upsert', 10000);
INSERT INTO wp_upsert VALUES (1, 'old'), (2, 'old');
INSERT INTO wp_upsert VALUES (2, 'second'), (3, 'third')
  ON CONFLICT (id) DO UPDATE SET payload = excluded.payload || ' (updated)';
SELECT id, payload FROM wp_upsert ORDER BY id;
SELECT k, guarded_exists('wp_upsert', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_upsert WHERE id = k) AS plain,
       bloomguard_check('wp_upsert', k) AS filter
  FROM unnest(ARRAY[1, 2, 3]) k ORDER BY k;
SELECT bloomguard_detach('wp_upsert');
DROP TABLE wp_upsert;

-- MERGE: WHEN NOT MATCHED THEN INSERT, WHEN MATCHED THEN UPDATE SET id = ...
CREATE TABLE wp_merge (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_merge', 10000);
INSERT INTO wp_merge SELECT g, 'old' FROM generate_series(1, 5) g;
CREATE TABLE wp_merge_src (id int, payload text);
INSERT INTO wp_merge_src VALUES (2, 'src'), (4, 'src'), (7, 'src'), (8, 'src');
-- 2 and 4 match and move to 502 and 504; 7 and 8 are inserted
MERGE INTO wp_merge t
USING wp_merge_src s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET id = t.id + 500, payload = 'moved'
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.payload);
SELECT id, payload FROM wp_merge ORDER BY id;
SELECT k, guarded_exists('wp_merge', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_merge WHERE id = k) AS plain,
       bloomguard_check('wp_merge', k) AS filter
  FROM unnest(ARRAY[1, 3, 5, 7, 8, 502, 504]) k ORDER BY k;
SELECT k, guarded_exists('wp_merge', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_merge WHERE id = k) AS plain
  FROM unnest(ARRAY[2, 4]) k ORDER BY k;
-- a MERGE with a non-key update and an insert of many rows
MERGE INTO wp_merge t
USING (SELECT g AS id FROM generate_series(1, 3000) g) s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET payload = 'touched'
WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'merged');
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_merge', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_merge', id) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_merge;
SELECT bloomguard_detach('wp_merge');
DROP TABLE wp_merge, wp_merge_src;

-- UPDATE of the key column
CREATE TABLE wp_upd_key (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_upd_key', 20000);
INSERT INTO wp_upd_key SELECT g, 'row' FROM generate_series(1, 1000) g;
UPDATE wp_upd_key SET id = id + 100000 WHERE id <= 500;
SELECT count(*) AS moved,
       count(*) FILTER (WHERE guarded_exists('wp_upd_key', g + 100000)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM wp_upd_key WHERE id = g + 100000)) AS disagree,
       count(*) FILTER (WHERE NOT guarded_exists('wp_upd_key', g + 100000)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_upd_key', g + 100000) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1, 500) g;
-- the old keys are gone, the untouched ones are still there
SELECT count(*) FILTER (WHERE guarded_exists('wp_upd_key', g)) AS old_found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM wp_upd_key WHERE id = g)) AS old_plain
  FROM generate_series(1, 500) g;
SELECT count(*) FILTER (WHERE NOT guarded_exists('wp_upd_key', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_upd_key', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(501, 1000) g;
-- a key moved twice, and a negated key
UPDATE wp_upd_key SET id = id + 1 WHERE id = 100500;
UPDATE wp_upd_key SET id = -id WHERE id = 1000;
SELECT k, guarded_exists('wp_upd_key', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_upd_key WHERE id = k) AS plain,
       bloomguard_check('wp_upd_key', k) AS filter
  FROM unnest(ARRAY[100501, -1000]) k ORDER BY k;
SELECT k, guarded_exists('wp_upd_key', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_upd_key WHERE id = k) AS plain
  FROM unnest(ARRAY[100500, 1000]) k ORDER BY k;
SELECT bloomguard_detach('wp_upd_key');
DROP TABLE wp_upd_key;

-- UPDATE whose BEFORE UPDATE trigger changes the key; the statement SETs only payload
CREATE TABLE wp_trig_upd (id int PRIMARY KEY, payload text);
CREATE FUNCTION wp_trig_upd_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.id := OLD.id + 7000;
    RETURN NEW;
END $$;
CREATE TRIGGER move_key BEFORE UPDATE ON wp_trig_upd
    FOR EACH ROW EXECUTE FUNCTION wp_trig_upd_move();
SELECT bloomguard_attach('wp_trig_upd', 10000);
INSERT INTO wp_trig_upd SELECT g, 'row' FROM generate_series(1, 5) g;
UPDATE wp_trig_upd SET payload = 'touched' WHERE id <= 3;
SELECT id, payload FROM wp_trig_upd ORDER BY id;
SELECT k, guarded_exists('wp_trig_upd', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_trig_upd WHERE id = k) AS plain,
       bloomguard_check('wp_trig_upd', k) AS filter
  FROM unnest(ARRAY[4, 5, 7001, 7002, 7003]) k ORDER BY k;
SELECT k, guarded_exists('wp_trig_upd', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_trig_upd WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 3]) k ORDER BY k;
SELECT bloomguard_detach('wp_trig_upd');
DROP TABLE wp_trig_upd;
DROP FUNCTION wp_trig_upd_move();

-- UPDATE of a non-key column: rows are still found
CREATE TABLE wp_upd_payload (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_upd_payload', 10000);
INSERT INTO wp_upd_payload SELECT g, 'row' FROM generate_series(1, 2000) g;
UPDATE wp_upd_payload SET payload = 'updated ' || id;
UPDATE wp_upd_payload SET payload = 'again' WHERE id % 7 = 0;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_upd_payload', g)) AS missing,
       count(*) FILTER (WHERE guarded_exists('wp_upd_payload', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM wp_upd_payload WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE bloomguard_check('wp_upd_payload', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1, 2000) g;
-- an UPDATE that sets the key to itself
UPDATE wp_upd_payload SET id = id WHERE id <= 10;
SELECT count(*) FILTER (WHERE NOT guarded_exists('wp_upd_payload', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_upd_payload', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1, 10) g;
SELECT bloomguard_detach('wp_upd_payload');
DROP TABLE wp_upd_payload;

-- composite key: UPDATE changes one column of the key
CREATE TABLE wp_comp (a int, b text, payload text, PRIMARY KEY (a, b));
SELECT bloomguard_attach('wp_comp', 10000);
INSERT INTO wp_comp SELECT g, 'x', 'row' FROM generate_series(1, 4) g;
UPDATE wp_comp SET b = 'y' WHERE a = 1;
UPDATE wp_comp SET a = a + 100 WHERE a = 2;
SELECT a, b FROM wp_comp ORDER BY a, b;
SELECT a, b, guarded_exists('wp_comp', a, b) AS guarded,
       EXISTS (SELECT 1 FROM wp_comp c WHERE (c.a, c.b) = (v.a, v.b)) AS plain,
       bloomguard_check('wp_comp', a, b) AS filter
  FROM (VALUES (1, 'y'), (3, 'x'), (4, 'x'), (102, 'x')) v(a, b) ORDER BY a, b;
SELECT a, b, guarded_exists('wp_comp', a, b) AS guarded,
       EXISTS (SELECT 1 FROM wp_comp c WHERE (c.a, c.b) = (v.a, v.b)) AS plain
  FROM (VALUES (1, 'x'), (2, 'x')) v(a, b) ORDER BY a, b;
-- many rows changing the second key column only
INSERT INTO wp_comp SELECT g, 'x', 'bulk' FROM generate_series(1000, 2999) g;
UPDATE wp_comp SET b = 'z' || a WHERE a >= 1000;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_comp', a, b)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_comp', a, b) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_comp;
SELECT count(*) FILTER (WHERE guarded_exists('wp_comp', g, 'x'::text)) AS old_found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM wp_comp WHERE a = g AND b = 'x')) AS old_plain
  FROM generate_series(1000, 2999) g;
SELECT bloomguard_detach('wp_comp');
DROP TABLE wp_comp;

-- session_replication_role = replica: the ALWAYS trigger still feeds
CREATE TABLE wp_replica (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_replica', 10000);
INSERT INTO wp_replica VALUES (1, 'origin'), (2, 'origin');
SET session_replication_role = replica;
INSERT INTO wp_replica VALUES (11, 'replica'), (12, 'replica');
INSERT INTO wp_replica SELECT g, 'replica' FROM generate_series(100, 1099) g;
UPDATE wp_replica SET id = 21 WHERE id = 2;
COPY wp_replica (id, payload) FROM stdin;
31	replica copy
\.
RESET session_replication_role;
SELECT k, guarded_exists('wp_replica', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_replica WHERE id = k) AS plain,
       bloomguard_check('wp_replica', k) AS filter
  FROM unnest(ARRAY[1, 11, 12, 21, 31]) k ORDER BY k;
SELECT guarded_exists('wp_replica', 2) AS guarded,
       EXISTS (SELECT 1 FROM wp_replica WHERE id = 2) AS plain;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_replica', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_replica', id) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_replica;
SELECT bloomguard_detach('wp_replica');
DROP TABLE wp_replica;

-- writable CTEs
CREATE TABLE wp_cte (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_cte', 10000);
WITH ins AS (INSERT INTO wp_cte SELECT g, 'cte' FROM generate_series(1, 100) g RETURNING id)
SELECT count(*), min(id), max(id) FROM ins;
WITH up AS (UPDATE wp_cte SET id = id + 5000 WHERE id <= 10 RETURNING id),
     ins AS (INSERT INTO wp_cte VALUES (777, 'second cte') RETURNING id)
SELECT (SELECT count(*) FROM up) AS moved, (SELECT count(*) FROM ins) AS inserted;
SELECT count(*) FILTER (WHERE NOT guarded_exists('wp_cte', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_cte', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM (SELECT generate_series(11, 100) UNION ALL SELECT generate_series(5001, 5010)
        UNION ALL SELECT 777) s(g);
SELECT count(*) FILTER (WHERE guarded_exists('wp_cte', g)) AS old_found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM wp_cte WHERE id = g)) AS old_plain
  FROM generate_series(1, 10) g;
SELECT bloomguard_detach('wp_cte');
DROP TABLE wp_cte;

-- INSERT in a rolled-back subtransaction
CREATE TABLE wp_subxact (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_subxact', 10000);
BEGIN;
INSERT INTO wp_subxact VALUES (1, 'kept');
SAVEPOINT s1;
INSERT INTO wp_subxact VALUES (2, 'rolled back');
UPDATE wp_subxact SET id = 3 WHERE id = 1;
ROLLBACK TO SAVEPOINT s1;
SAVEPOINT s2;
INSERT INTO wp_subxact VALUES (4, 'released');
RELEASE SAVEPOINT s2;
COMMIT;
-- 2 and 3 are gone (the filter may still say 'maybe' for them)
SELECT k, guarded_exists('wp_subxact', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_subxact WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 3, 4]) k ORDER BY k;
SELECT k, bloomguard_check('wp_subxact', k) AS filter
  FROM unnest(ARRAY[1, 4]) k ORDER BY k;
-- a rolled-back top-level transaction
BEGIN;
INSERT INTO wp_subxact VALUES (5, 'rolled back');
ROLLBACK;
SELECT guarded_exists('wp_subxact', 5) AS guarded,
       EXISTS (SELECT 1 FROM wp_subxact WHERE id = 5) AS plain;
SELECT bloomguard_detach('wp_subxact');
DROP TABLE wp_subxact;

-- the writer's own lookups: its keys wait in its feed buffer, and a
-- PL/pgSQL simple expression starts no statement that would flush them,
-- so the lookup flushes the table's keys itself before asking the filter
CREATE TABLE wp_own (id int PRIMARY KEY);
SELECT bloomguard_attach('wp_own', 10000);
DO $$
DECLARE
  lost int := 0;
  said_absent int := 0;
BEGIN
  FOR i IN 1..200 LOOP
    INSERT INTO wp_own VALUES (i);
    IF NOT guarded_exists('wp_own', i) THEN
      lost := lost + 1;
    END IF;
    IF bloomguard_check('wp_own', i) = 'absent' THEN
      said_absent := said_absent + 1;
    END IF;
  END LOOP;
  RAISE NOTICE 'own inserts not found: %, said absent: %', lost, said_absent;
END $$;
SELECT count(*) FILTER (WHERE bloomguard_check('wp_own', id) <> 'maybe') AS wrongly_absent
  FROM wp_own;
SELECT bloomguard_detach('wp_own');
DROP TABLE wp_own;

-- INSERT then DELETE
CREATE TABLE wp_delete (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_delete', 10000);
INSERT INTO wp_delete VALUES (1, 'stays'), (2, 'deleted'), (3, 'deleted later');
DELETE FROM wp_delete WHERE id = 2;
BEGIN;
DELETE FROM wp_delete WHERE id = 3;
-- inside the deleting transaction
SELECT k, guarded_exists('wp_delete', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_delete WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 3]) k ORDER BY k;
COMMIT;
SELECT k, guarded_exists('wp_delete', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_delete WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 3]) k ORDER BY k;
SELECT bloomguard_check('wp_delete', 1) AS filter;
-- a deleted key inserted again is found
INSERT INTO wp_delete VALUES (2, 'back');
SELECT guarded_exists('wp_delete', 2) AS guarded,
       EXISTS (SELECT 1 FROM wp_delete WHERE id = 2) AS plain,
       bloomguard_check('wp_delete', 2) AS filter;
SELECT bloomguard_detach('wp_delete');
DROP TABLE wp_delete;

-- TRUNCATE
CREATE TABLE wp_truncate (id int PRIMARY KEY, payload text);
SELECT bloomguard_attach('wp_truncate', 10000);
INSERT INTO wp_truncate SELECT g, 'row' FROM generate_series(1, 100) g;
BEGIN;
TRUNCATE wp_truncate;
-- inside the truncating transaction: gone; the filter still has the key,
-- and says maybe (stale bits cost a lookup)
SELECT guarded_exists('wp_truncate', 50) AS guarded,
       EXISTS (SELECT 1 FROM wp_truncate WHERE id = 50) AS plain,
       bloomguard_check('wp_truncate', 50) AS filter;
ROLLBACK;
-- a rolled-back TRUNCATE leaves every row found
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_truncate', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_truncate', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1, 100) g;
-- TRUNCATE and refill in one transaction
BEGIN;
TRUNCATE wp_truncate;
INSERT INTO wp_truncate SELECT g, 'refill' FROM generate_series(201, 300) g;
COMMIT;
SELECT count(*) FILTER (WHERE NOT guarded_exists('wp_truncate', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_truncate', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(201, 300) g;
SELECT count(*) FILTER (WHERE guarded_exists('wp_truncate', g)) AS old_found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM wp_truncate WHERE id = g)) AS old_plain
  FROM generate_series(1, 100) g;
-- a committed TRUNCATE, then new rows
TRUNCATE wp_truncate;
SELECT count(*) FILTER (WHERE guarded_exists('wp_truncate', g)) AS found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM wp_truncate WHERE id = g)) AS plain
  FROM generate_series(201, 300) g;
INSERT INTO wp_truncate VALUES (1, 'after truncate');
SELECT guarded_exists('wp_truncate', 1) AS guarded,
       EXISTS (SELECT 1 FROM wp_truncate WHERE id = 1) AS plain,
       bloomguard_check('wp_truncate', 1) AS filter;
SELECT bloomguard_detach('wp_truncate');
DROP TABLE wp_truncate;

-- BEFORE INSERT trigger that rewrites the key
CREATE TABLE wp_trig_ins (id int PRIMARY KEY, payload text);
CREATE FUNCTION wp_trig_ins_times10() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.id := NEW.id * 10;
    RETURN NEW;
END $$;
CREATE TRIGGER times10 BEFORE INSERT ON wp_trig_ins
    FOR EACH ROW EXECUTE FUNCTION wp_trig_ins_times10();
SELECT bloomguard_attach('wp_trig_ins', 10000);
INSERT INTO wp_trig_ins VALUES (1, 'one');
INSERT INTO wp_trig_ins SELECT g, 'many' FROM generate_series(2, 5) g;
COPY wp_trig_ins (id, payload) FROM stdin;
6	copied
\.
SELECT id FROM wp_trig_ins ORDER BY id;
SELECT k, guarded_exists('wp_trig_ins', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_trig_ins WHERE id = k) AS plain,
       bloomguard_check('wp_trig_ins', k) AS filter
  FROM unnest(ARRAY[10, 20, 30, 40, 50, 60]) k ORDER BY k;
-- the keys as written in the statements were never stored
SELECT k, guarded_exists('wp_trig_ins', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_trig_ins WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 2, 3, 4, 5, 6]) k ORDER BY k;
SELECT bloomguard_detach('wp_trig_ins');
DROP TABLE wp_trig_ins;
DROP FUNCTION wp_trig_ins_times10();

-- partitions guarded one by one: rows routed through the partitioned table,
-- and moved between partitions by UPDATE and MERGE
CREATE TABLE wp_part (id int PRIMARY KEY, payload text) PARTITION BY RANGE (id);
CREATE TABLE wp_part1 PARTITION OF wp_part FOR VALUES FROM (0) TO (1000);
CREATE TABLE wp_part2 PARTITION OF wp_part FOR VALUES FROM (1000) TO (100000);
SELECT bloomguard_attach('wp_part1', 10000);
SELECT bloomguard_attach('wp_part2', 10000);
INSERT INTO wp_part SELECT g, 'routed' FROM generate_series(1, 2000) g;
-- 1..100 move from wp_part1 to wp_part2
UPDATE wp_part SET id = id + 5000 WHERE id BETWEEN 1 AND 100;
MERGE INTO wp_part t USING (VALUES (150)) s(id) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET id = 90000;
SELECT 'wp_part1' AS part, count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_part1', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_part1', id) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_part1
UNION ALL
SELECT 'wp_part2', count(*),
       count(*) FILTER (WHERE NOT guarded_exists('wp_part2', id)),
       count(*) FILTER (WHERE bloomguard_check('wp_part2', id) IS DISTINCT FROM 'maybe')
  FROM wp_part2;
SELECT k, guarded_exists('wp_part2', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_part2 WHERE id = k) AS plain,
       bloomguard_check('wp_part2', k) AS filter
  FROM unnest(ARRAY[5001, 5100, 90000]) k ORDER BY k;
SELECT k, guarded_exists('wp_part1', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_part1 WHERE id = k) AS plain
  FROM unnest(ARRAY[1, 100, 150]) k ORDER BY k;
SELECT bloomguard_detach('wp_part1');
SELECT bloomguard_detach('wp_part2');
DROP TABLE wp_part;

-- a foreign key ON UPDATE CASCADE changes the key of the guarded table
CREATE TABLE wp_fk_parent (id int PRIMARY KEY);
CREATE TABLE wp_fk_child (pid int REFERENCES wp_fk_parent ON UPDATE CASCADE,
                          n int, PRIMARY KEY (pid, n));
INSERT INTO wp_fk_parent VALUES (1), (2);
INSERT INTO wp_fk_child VALUES (1, 1), (1, 2), (2, 1);
SELECT bloomguard_attach('wp_fk_child', 10000);
UPDATE wp_fk_parent SET id = 10 WHERE id = 1;
SELECT pid, n, guarded_exists('wp_fk_child', pid, n) AS guarded,
       EXISTS (SELECT 1 FROM wp_fk_child c WHERE (c.pid, c.n) = (v.pid, v.n)) AS plain,
       bloomguard_check('wp_fk_child', pid, n) AS filter
  FROM (VALUES (2, 1), (10, 1), (10, 2)) v(pid, n) ORDER BY pid, n;
SELECT pid, n, guarded_exists('wp_fk_child', pid, n) AS guarded,
       EXISTS (SELECT 1 FROM wp_fk_child c WHERE (c.pid, c.n) = (v.pid, v.n)) AS plain
  FROM (VALUES (1, 1), (1, 2)) v(pid, n) ORDER BY pid, n;
SELECT bloomguard_detach('wp_fk_child');
DROP TABLE wp_fk_child, wp_fk_parent;

-- an automatically updatable view, and a guarded inheritance child written through its parent
CREATE TABLE wp_base (id int PRIMARY KEY, payload text);
CREATE TABLE wp_inh_child (PRIMARY KEY (id)) INHERITS (wp_base);
CREATE VIEW wp_view AS SELECT id, payload FROM wp_inh_child;
SELECT bloomguard_attach('wp_inh_child', 10000);
INSERT INTO wp_view VALUES (1, 'view'), (2, 'view');
UPDATE wp_view SET id = 3 WHERE id = 2;
INSERT INTO wp_inh_child VALUES (4, 'child');
UPDATE wp_base SET id = id + 100 WHERE id = 4;
SELECT k, guarded_exists('wp_inh_child', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_inh_child WHERE id = k) AS plain,
       bloomguard_check('wp_inh_child', k) AS filter
  FROM unnest(ARRAY[1, 3, 104]) k ORDER BY k;
SELECT k, guarded_exists('wp_inh_child', k) AS guarded,
       EXISTS (SELECT 1 FROM wp_inh_child WHERE id = k) AS plain
  FROM unnest(ARRAY[2, 4]) k ORDER BY k;
SELECT bloomguard_detach('wp_inh_child');
DROP VIEW wp_view;
DROP TABLE wp_inh_child, wp_base;

-- writes that bypass the feed trigger must not leave a filter that says 'absent'
-- for their rows: ALTER TABLE ... DISABLE TRIGGER bloomguard
CREATE TABLE wp_bypass1 (id int PRIMARY KEY);
SELECT bloomguard_attach('wp_bypass1', 10000);
ALTER TABLE wp_bypass1 DISABLE TRIGGER bloomguard;
INSERT INTO wp_bypass1 SELECT g FROM generate_series(1, 1000) g;
ALTER TABLE wp_bypass1 ENABLE ALWAYS TRIGGER bloomguard;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bypass1', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bypass1', id) = 'absent') AS wrongly_absent
  FROM wp_bypass1;
-- a rebuild covers them again
SELECT bloomguard_rebuild('wp_bypass1');
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bypass1', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bypass1', id) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM wp_bypass1;
SELECT bloomguard_detach('wp_bypass1');
DROP TABLE wp_bypass1;
-- DISABLE TRIGGER ALL (as pg_restore --disable-triggers does), then ENABLE
-- TRIGGER ALL, which leaves the feed trigger enabled for origin writes only
CREATE TABLE wp_bypass2 (id int PRIMARY KEY);
SELECT bloomguard_attach('wp_bypass2', 10000);
ALTER TABLE wp_bypass2 DISABLE TRIGGER ALL;
INSERT INTO wp_bypass2 SELECT g FROM generate_series(1, 1000) g;
ALTER TABLE wp_bypass2 ENABLE TRIGGER ALL;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'wp_bypass2'::regclass;
SET session_replication_role = replica;
INSERT INTO wp_bypass2 SELECT g FROM generate_series(1001, 2000) g;
RESET session_replication_role;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bypass2', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bypass2', id) = 'absent') AS wrongly_absent
  FROM wp_bypass2;
SELECT bloomguard_detach('wp_bypass2');
DROP TABLE wp_bypass2;
-- DROP TRIGGER bloomguard
CREATE TABLE wp_bypass3 (id int PRIMARY KEY);
SELECT bloomguard_attach('wp_bypass3', 10000);
DROP TRIGGER bloomguard ON wp_bypass3;
INSERT INTO wp_bypass3 SELECT g FROM generate_series(1, 1000) g;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE NOT guarded_exists('wp_bypass3', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('wp_bypass3', id) = 'absent') AS wrongly_absent
  FROM wp_bypass3;
SELECT bloomguard_detach('wp_bypass3');
DROP TABLE wp_bypass3;

SELECT count(*) AS guards_left FROM bloomguard_guards;
DROP EXTENSION bloomguard CASCADE;
