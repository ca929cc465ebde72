-- builds with parallel workers: attach and rebuild scan the table with up
-- to max_parallel_maintenance_workers workers (as CREATE INDEX does), each
-- page once; build_workers says how many ran
CREATE EXTENSION bloomguard;
CREATE TABLE t_par (id int PRIMARY KEY, pad text);
INSERT INTO t_par SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
-- too small for workers by its size (min_parallel_table_scan_size)
SELECT bloomguard_attach('t_par', 40000);
SELECT build_workers, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;

-- the table's parallel_workers setting asks for workers, as for CREATE INDEX
ALTER TABLE t_par SET (parallel_workers = 2);
SELECT bloomguard_rebuild('t_par');
-- every key added exactly once: no page scanned twice, none skipped
SELECT build_workers, n_added, generation FROM bloomguard_health WHERE relation = 't_par'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('t_par', id) <> 'maybe') AS wrongly_absent
  FROM t_par;
-- the leader out of the scan: the workers scan every page
SET parallel_leader_participation = off;
SELECT bloomguard_rebuild('t_par');
SELECT build_workers, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('t_par', id) <> 'maybe') AS wrongly_absent
  FROM t_par;
RESET parallel_leader_participation;
-- dead rows are not added, by any scanner (no scan in between prunes them)
DELETE FROM t_par WHERE id > 15000;
SELECT bloomguard_rebuild('t_par');
SELECT build_workers, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;

-- within max_parallel_maintenance_workers
SET max_parallel_maintenance_workers = 1;
SELECT bloomguard_rebuild('t_par');
SELECT build_workers FROM bloomguard_health WHERE relation = 't_par'::regclass;
SET max_parallel_maintenance_workers = 0;
SELECT bloomguard_rebuild('t_par');
SELECT build_workers FROM bloomguard_health WHERE relation = 't_par'::regclass;
RESET max_parallel_maintenance_workers;
ALTER TABLE t_par SET (parallel_workers = 0);
SELECT bloomguard_rebuild('t_par');
SELECT build_workers FROM bloomguard_health WHERE relation = 't_par'::regclass;
ALTER TABLE t_par SET (parallel_workers = 2);

-- maintenance_work_mem holds a private bit array per scanner, or the
-- workers are fewer: a 494 kB filter fits twice in 1 MB, not three times
SET maintenance_work_mem = '1MB';
SELECT bloomguard_rebuild('t_par', 400000, 0.01);
SELECT build_workers, memory_bytes, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;
-- a filter larger than maintenance_work_mem is built straight into shared
-- memory, by every worker planned
SELECT bloomguard_rebuild('t_par', 1000000, 0.01);
SELECT build_workers, memory_bytes, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('t_par', id) <> 'maybe') AS wrongly_absent,
       count(*) FILTER (WHERE guarded_exists('t_par', id)) AS found
  FROM t_par;
RESET maintenance_work_mem;

-- a parallel build inside a transaction block that wrote the table: the
-- workers see the leader's uncommitted rows
BEGIN;
SET LOCAL parallel_leader_participation = off;
INSERT INTO t_par SELECT g, 'new' FROM generate_series(20001, 20100) g;
SELECT bloomguard_rebuild('t_par');
SELECT build_workers, n_added FROM bloomguard_health WHERE relation = 't_par'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('t_par', id) <> 'maybe') AS wrongly_absent
  FROM t_par WHERE id > 20000;
COMMIT;

-- an error in the middle leaves the old generation serving
SELECT generation AS gen_before FROM bloomguard_health WHERE relation = 't_par'::regclass \gset
-- (terse: where the timeout lands, in the scan or in a query the rebuild
-- runs through SPI, is the machine's business, not the test's)
\set VERBOSITY terse
SET statement_timeout = '1ms';
SELECT bloomguard_rebuild('t_par', 20000000, 0.001);
RESET statement_timeout;
\set VERBOSITY default
SELECT state, generation = :gen_before AS same_generation, builder_pid IS NULL AS no_builder,
       memory_bytes = memory_in_use AS one_generation
  FROM bloomguard_guard_stats() WHERE relid = 't_par'::regclass;

-- the swap is not transactional: a rolled-back rebuild leaves its
-- generation serving, with every key; only the registry's new capacity
-- and error rate are rolled back
SELECT capacity AS reg_capacity, error_rate AS reg_error_rate
  FROM bloomguard_guards WHERE relation = 't_par'::regclass \gset
BEGIN;
SELECT bloomguard_rebuild('t_par', 300000, 0.02);
ROLLBACK;
SELECT s.state, s.generation = :gen_before + 1 AS next_generation, s.capacity AS serving_capacity,
       g.capacity = :reg_capacity AND g.error_rate = :reg_error_rate AS registry_unchanged
  FROM bloomguard_guard_stats() s JOIN bloomguard_guards g ON g.relation = s.relid
 WHERE s.relid = 't_par'::regclass;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_par', id) OR bloomguard_check('t_par', id) <> 'maybe')
       AS wrongly_absent
  FROM t_par;
-- and a rebuild without arguments keeps the serving generation's sizing
SELECT bloomguard_rebuild('t_par');
SELECT capacity FROM bloomguard_guard_stats() WHERE relid = 't_par'::regclass;

-- no rebuild in the transaction that truncated (or rewrote) the table: a
-- rollback would bring back rows that the new filter, built from the new
-- file, would not hold.  Here, as before, every key is found.
SELECT generation AS gen_before FROM bloomguard_health WHERE relation = 't_par'::regclass \gset
BEGIN;
TRUNCATE t_par;
SELECT bloomguard_rebuild('t_par');
ROLLBACK;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_par', id) OR bloomguard_check('t_par', id) <> 'maybe')
       AS wrongly_absent, count(*) AS rows
  FROM t_par;
BEGIN;
SAVEPOINT s;
TRUNCATE t_par;
SAVEPOINT r;
SELECT bloomguard_rebuild('t_par');
ROLLBACK TO r;
ROLLBACK TO s;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_par', id) OR bloomguard_check('t_par', id) <> 'maybe')
       AS wrongly_absent
  FROM t_par;
SELECT generation = :gen_before AS same_generation FROM bloomguard_health WHERE relation = 't_par'::regclass;
-- once the TRUNCATE is rolled back, the rebuild works in the same transaction
SELECT bloomguard_rebuild('t_par');
COMMIT;
-- a rewrite in the transaction is refused too
BEGIN;
ALTER TABLE t_par SET UNLOGGED;
SELECT bloomguard_rebuild('t_par');
ROLLBACK;

SELECT bloomguard_detach('t_par');
DROP TABLE t_par;
DROP EXTENSION bloomguard;
