-- partitioned tables: one guard per leaf partition, routing, partitions
-- that come and go, and the planner path with partition pruning
CREATE EXTENSION bloomguard;
\i sql/include/path_vs_plain.sql

-- keys of a partitioned table (id, region) that the guard calls absent or
-- guarded_exists does not find; must always be 0
CREATE FUNCTION pt_lost(rel regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s WHERE bloomguard_check(%L, id, region) = ''absent''
                    OR NOT guarded_exists(%L, id, region)', rel, rel, rel) INTO n;
  RETURN n;
END $$;

-- a three-level tree: list by region, region 3 hashed by id
CREATE TABLE pt (id bigint, region int, v text, PRIMARY KEY (id, region))
  PARTITION BY LIST (region);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES IN (1);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES IN (2);
CREATE TABLE pt3 PARTITION OF pt FOR VALUES IN (3) PARTITION BY HASH (id);
CREATE TABLE pt3a PARTITION OF pt3 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE pt3b PARTITION OF pt3 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO pt SELECT g, 1 + g % 3, 'v' || g FROM generate_series(1, 6000) g;
ANALYZE pt;

-- refused: no primary key; a primary key index that is not valid yet (ADD
-- PRIMARY KEY on ONLY the partitioned table: PostgreSQL 18's relcache
-- reports it as the primary key, 15-17's do not); a partition with a guard
-- of its own
CREATE TABLE nopk (id int, r int) PARTITION BY LIST (r);
SELECT bloomguard_attach('nopk');
CREATE TABLE invp (id int NOT NULL, r int NOT NULL) PARTITION BY LIST (r);
CREATE TABLE invp1 PARTITION OF invp FOR VALUES IN (1);
ALTER TABLE ONLY invp ADD PRIMARY KEY (id, r);
SELECT indisvalid FROM pg_index WHERE indrelid = 'invp'::regclass;
SELECT bloomguard_attach('invp');
SELECT guarded_exists('invp', 1, 1);
DROP TABLE invp;
CREATE TABLE own (id bigint, region int, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE own1 PARTITION OF own FOR VALUES IN (1);
SELECT bloomguard_attach('own1');
SELECT bloomguard_attach('own');
SELECT bloomguard_detach('own1');
-- the memory caps are checked for all leaves together, before anything
SELECT bloomguard_attach('own', 4000000000);
SELECT count(*) FROM bloomguard_guards;

-- attach: the capacity given for the table is split by rows
SELECT bloomguard_attach('pt', 60000);
SELECT relation, parent, state, capacity, n_added FROM bloomguard_health ORDER BY 1;
SELECT relation, capacity, error_rate FROM bloomguard_guards ORDER BY 1;
-- the trigger is cloned onto every partition, enabled ALWAYS
SELECT tgrelid::regclass, tgenabled, tgparentid <> 0 AS clone
  FROM pg_trigger WHERE tgname = 'bloomguard' ORDER BY 1;
SELECT pt_lost('pt'), pt_lost('pt1'), pt_lost('pt3b');

-- guarded_exists() on the parent routes the key to its one leaf
SELECT guarded_exists('pt', 3::bigint, 1) AS in_pt1,
       guarded_exists('pt', 5::bigint, 3) AS in_pt3,
       guarded_exists('pt', 3::bigint, 2) AS wrong_region,
       guarded_exists('pt', 3::bigint, 9) AS no_partition,
       guarded_exists('pt', 7::int, 2::smallint) AS cross_type;
SELECT bloomguard_check('pt', 3::bigint, 1) AS present,
       bloomguard_check('pt', 9::bigint, 9) AS no_partition,
       bloomguard_check('pt', NULL::bigint, 1) AS null_key;
-- an absent key is asked of its own leaf only
SELECT bloomguard_reset_stats('pt1'), bloomguard_reset_stats('pt2');
SELECT count(*) FILTER (WHERE guarded_exists('pt', g::bigint, 1)) AS found
  FROM generate_series(100001, 100200) g;
SELECT relation, checks, shortcuts > 150 AS mostly_shortcuts
  FROM bloomguard_health WHERE relation IN ('pt1'::regclass, 'pt2'::regclass) ORDER BY 1;
-- ask_all (the developer setting) gives the same answers
SET bloomguard.partition_lookup = ask_all;
SELECT count(*) FROM generate_series(1, 400) g, generate_series(1, 4) r
 WHERE guarded_exists('pt', g::bigint, r) IS DISTINCT FROM
       EXISTS (SELECT 1 FROM pt WHERE id = g AND region = r);
RESET bloomguard.partition_lookup;
SELECT count(*) FROM generate_series(1, 400) g, generate_series(1, 4) r
 WHERE guarded_exists('pt', g::bigint, r) IS DISTINCT FROM
       EXISTS (SELECT 1 FROM pt WHERE id = g AND region = r);

-- row-level security on the parent governs lookups through it: no routing
CREATE ROLE pt_reader;
GRANT SELECT ON pt TO pt_reader;
ALTER TABLE pt ENABLE ROW LEVEL SECURITY;
CREATE POLICY odd ON pt TO pt_reader USING (id % 2 = 1);
SET ROLE pt_reader;
SELECT guarded_exists('pt', 3::bigint, 1) AS odd_visible,
       guarded_exists('pt', 6::bigint, 1) AS even_hidden,
       bloomguard_check('pt', 3::bigint, 1) AS check;
-- nor does the planner path ask a leaf's filter: the parent's policy makes
-- the leaf's scan one the node does not wrap (no Key Checks for key 6)
SELECT explain_guard('SELECT * FROM pt WHERE id = 6 AND region = 1', true);
RESET ROLE;
ALTER TABLE pt DISABLE ROW LEVEL SECURITY;
DROP POLICY odd ON pt;

-- the planner path: pruning picks the leaf, whose scan is wrapped
SELECT explain_guard('SELECT * FROM pt WHERE id = 5 AND region = 3');
SELECT explain_guard('SELECT * FROM pt WHERE id = 100005 AND region = 3', true);
PREPARE ptq(bigint, int) AS SELECT v FROM pt WHERE id = $1 AND region = $2;
SET plan_cache_mode = force_generic_plan;
SELECT explain_guard('EXECUTE ptq(5, 3)');
EXECUTE ptq(5, 3);
EXECUTE ptq(6, 3);
SELECT count(*) FROM generate_series(1, 300) g, generate_series(1, 3) r,
       LATERAL (SELECT count(*) AS n FROM pt WHERE id = g AND region = r) x
 WHERE x.n <> (1 + g % 3 = r)::int;
RESET plan_cache_mode;

-- a row moved to another partition by UPDATE reaches the new leaf's filter
UPDATE pt SET region = 2 WHERE id = 3 AND region = 1;
SELECT bloomguard_check('pt', 3::bigint, 2) AS moved, guarded_exists('pt', 3::bigint, 2) AS found,
       guarded_exists('pt', 3::bigint, 1) AS gone;

-- a new partition is registered when its creator commits (not in a
-- transaction that rolls back); it answers by lookup until it is built
BEGIN;
CREATE TABLE pt4 PARTITION OF pt FOR VALUES IN (4);
ROLLBACK;
SELECT count(*) FROM bloomguard_guards WHERE relation::text = 'pt4';
CREATE TABLE pt4 PARTITION OF pt FOR VALUES IN (4);
INSERT INTO pt VALUES (10, 4, 'x');
SELECT relation, parent, state, capacity FROM bloomguard_health WHERE relation = 'pt4'::regclass;
SELECT tgenabled FROM pg_trigger WHERE tgname = 'bloomguard' AND tgrelid = 'pt4'::regclass;
SELECT guarded_exists('pt', 10::bigint, 4) AS found, bloomguard_check('pt', 11::bigint, 4) AS check;
-- ATTACH PARTITION brings rows no trigger saw: not trusted until built
CREATE TABLE pt5 (LIKE pt INCLUDING ALL);
INSERT INTO pt5 SELECT g, 5, 'w' FROM generate_series(1, 50) g;
ALTER TABLE pt ATTACH PARTITION pt5 FOR VALUES IN (5);
SELECT relation, parent, state FROM bloomguard_health WHERE relation = 'pt5'::regclass;
SELECT pt_lost('pt5'), bloomguard_check('pt', 7::bigint, 5) AS check,
       guarded_exists('pt', 7::bigint, 5) AS found;
-- a sub-partitioned table attached below: its leaves join too
CREATE TABLE pt6 (LIKE pt INCLUDING ALL) PARTITION BY HASH (id);
CREATE TABLE pt6a PARTITION OF pt6 FOR VALUES WITH (MODULUS 1, REMAINDER 0);
ALTER TABLE pt ATTACH PARTITION pt6 FOR VALUES IN (6);
SELECT relation, parent, state FROM bloomguard_health WHERE relation = 'pt6a'::regclass;
-- rebuilding the parent builds every leaf
SELECT bloomguard_rebuild('pt');
SELECT relation, state FROM bloomguard_health ORDER BY 1;
SELECT pt_lost('pt'), bloomguard_check('pt', 7::bigint, 5) AS check_pt5;
-- not in the transaction that truncated the tree: a rollback brings the
-- rows back, and every leaf keeps the filter that holds them
BEGIN;
TRUNCATE pt;
SELECT bloomguard_rebuild('pt');
ROLLBACK;
SELECT pt_lost('pt');
-- nor an attach of a tree there, whose leaves are built as rebuilds are
CREATE TABLE ptr (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE ptr_1 PARTITION OF ptr FOR VALUES FROM (0) TO (100);
INSERT INTO ptr SELECT generate_series(0, 99);
BEGIN;
TRUNCATE ptr;
SELECT bloomguard_attach('ptr');
ROLLBACK;
SELECT count(*) FROM bloomguard_guards WHERE relation::text LIKE 'ptr%';
SELECT count(*) FROM bloomguard_guard_stats() WHERE relid::regclass::text LIKE 'ptr%';
DROP TABLE ptr;

-- bloomguard_reset_stats() of a partitioned table resets its leaves'
SELECT count(*) FILTER (WHERE guarded_exists('pt', g::bigint, 1)) FROM generate_series(1, 20) g;
SELECT count(*) FILTER (WHERE checks > 0) > 0 AS counted FROM bloomguard_health WHERE parent = 'pt'::regclass;
SELECT bloomguard_reset_stats('pt');
SELECT count(*) FILTER (WHERE checks > 0) AS leaves_counting FROM bloomguard_health WHERE parent = 'pt'::regclass;

-- a leaf's guard is the tree's: not detached on its own, but rebuilt
SELECT bloomguard_detach('pt1');
SELECT bloomguard_rebuild('pt1');
-- DETACH PARTITION frees the leaf's guard; the table keeps its rows
SELECT memory_in_use AS before FROM bloomguard_guard_stats() LIMIT 1 \gset
ALTER TABLE pt DETACH PARTITION pt2;
SELECT count(*) FROM bloomguard_guards WHERE relation = 'pt2'::regclass;
SELECT count(*) FROM bloomguard_health WHERE relation = 'pt2'::regclass;
SELECT memory_in_use < :before AS freed FROM bloomguard_guard_stats() LIMIT 1;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'pt2'::regclass;
SELECT guarded_exists('pt2', 4::bigint, 2) AS detached_lookup,
       bloomguard_check('pt2', 4::bigint, 2) AS check;
-- DROP of a leaf frees its guard
DROP TABLE pt4;
SELECT relation, parent FROM bloomguard_health ORDER BY 1;

-- detaching the parent's guard detaches every leaf
SELECT bloomguard_detach('pt');
SELECT count(*) FROM bloomguard_guards;
SELECT count(*) FROM bloomguard_health;
SELECT count(*) FROM pg_trigger WHERE tgname = 'bloomguard';
SELECT guarded_exists('pt', 5::bigint, 3) AS found_after_detach;

-- a partitioned table with no partitions yet
CREATE TABLE later (id int PRIMARY KEY) PARTITION BY RANGE (id);
SELECT bloomguard_attach('later');
CREATE TABLE later1 PARTITION OF later FOR VALUES FROM (0) TO (1000);
SELECT relation, parent, state FROM bloomguard_health;
SELECT bloomguard_rebuild('later');
SELECT guarded_exists('later', 5) AS found, bloomguard_check('later', 5) AS check,
       bloomguard_check('later', 5000) AS out_of_range;
DROP TABLE later;
SELECT count(*) FROM bloomguard_guards;

-- attach without a capacity: each leaf is sized from its own rows (twice
-- ANALYZE's count); the partitioned table has no storage, and its size is
-- not asked (an assert-enabled server failed in RelationGetNumberOfBlocks)
CREATE TABLE hp (id int PRIMARY KEY) PARTITION BY HASH (id);
CREATE TABLE hp0 PARTITION OF hp FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE hp1 PARTITION OF hp FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE hp2 PARTITION OF hp FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE hp3 PARTITION OF hp FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO hp SELECT generate_series(1, 4000);
ANALYZE hp;
SELECT bloomguard_attach('hp');
SELECT relation, parent, state, capacity, n_added FROM bloomguard_health ORDER BY 1;
SELECT relation, capacity FROM bloomguard_guards ORDER BY 1;
SELECT count(*) FROM generate_series(1, 4000) g
 WHERE bloomguard_check('hp', g) = 'absent' OR NOT guarded_exists('hp', g);
SELECT bloomguard_detach('hp');
DROP TABLE hp;
-- a table with a trigger named bloomguard of its own (a guard, or a
-- user's trigger) cannot join a guarded tree, whose trigger every
-- partition gets under that name: bloomguard says so, and how to proceed
CREATE TABLE pm (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE pm_1 PARTITION OF pm FOR VALUES FROM (0) TO (100);
SELECT bloomguard_attach('pm');
CREATE TABLE pm_5 (id int PRIMARY KEY);
INSERT INTO pm_5 SELECT generate_series(500, 520);
SELECT bloomguard_attach('pm_5');
ALTER TABLE pm ATTACH PARTITION pm_5 FOR VALUES FROM (500) TO (600);
-- nothing changed: pm_5 keeps its own guard, and answers
SELECT relation, parent, state FROM bloomguard_health WHERE relation::text LIKE 'pm%' ORDER BY 1;
SELECT guarded_exists('pm_5', 510) AS found, bloomguard_check('pm_5', 530) AS absent;
-- as the hint says: detach its guard, then it joins and is guarded as a leaf
SELECT bloomguard_detach('pm_5');
ALTER TABLE pm ATTACH PARTITION pm_5 FOR VALUES FROM (500) TO (600);
SELECT bloomguard_rebuild('pm');
SELECT relation, parent, state FROM bloomguard_health WHERE relation::text LIKE 'pm%' ORDER BY 1;
SELECT guarded_exists('pm', 510) AS found, bloomguard_check('pm', 530) AS absent;
-- a partitioned table with a leaf guarded on its own: the error names the leaf
CREATE TABLE pm_sub (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE pm_sub_1 (id int PRIMARY KEY);
SELECT bloomguard_attach('pm_sub_1');
ALTER TABLE pm_sub ATTACH PARTITION pm_sub_1 FOR VALUES FROM (600) TO (700);
ALTER TABLE pm ATTACH PARTITION pm_sub FOR VALUES FROM (600) TO (800);
-- a user's trigger of that name
CREATE FUNCTION pm_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TABLE pm_9 (id int PRIMARY KEY);
CREATE TRIGGER bloomguard AFTER INSERT ON pm_9 FOR EACH ROW EXECUTE FUNCTION pm_noop();
ALTER TABLE pm ATTACH PARTITION pm_9 FOR VALUES FROM (900) TO (1000);
-- detaching a leaf of the tree (whose trigger is the clone) still works
ALTER TABLE pm DETACH PARTITION pm_5;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'pm_5'::regclass;
DROP TABLE pm, pm_5, pm_sub, pm_9;
DROP FUNCTION pm_noop();

DROP TABLE pt, pt2, own, nopk;
DROP ROLE pt_reader;
DROP FUNCTION explain_guard(text, boolean), path_vs_plain(text);
DROP EXTENSION bloomguard;
