-- attach, detach and rebuild: the basic life of a guard
CREATE EXTENSION bloomguard;

-- attach
CREATE TABLE t_attach (id bigint PRIMARY KEY, payload text);
INSERT INTO t_attach SELECT g, 'row ' || g FROM generate_series(1, 10000) g;
SELECT bloomguard_attach('t_attach');
SELECT relation, capacity >= 1000 AS has_capacity, error_rate FROM bloomguard_guards;
SELECT state, generation, status FROM bloomguard_health WHERE relation = 't_attach'::regclass;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 't_attach'::regclass;

-- every present key is found, and never 'absent'
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_attach', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_attach', g) = 'absent') AS wrongly_absent
  FROM generate_series(1, 10000) g;
-- most absent keys are answered by the filter alone
SELECT count(*) FILTER (WHERE guarded_exists('t_attach', g)) AS found_absent,
       count(*) FILTER (WHERE bloomguard_check('t_attach', g) = 'absent') > 9500 AS mostly_absent
  FROM generate_series(20001, 30000) g;

-- new rows are fed by the trigger
INSERT INTO t_attach VALUES (50000, 'new');
SELECT guarded_exists('t_attach', 50000), bloomguard_check('t_attach', 50000);

-- a vacuumed table: hits come from the index and the visibility map (like
-- an index-only scan); deleted rows clear the page's all-visible bit
VACUUM t_attach;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_attach', g)) AS missing
  FROM generate_series(1, 10000) g;
DELETE FROM t_attach WHERE id <= 100;
SELECT count(*) FILTER (WHERE guarded_exists('t_attach', g)) AS deleted_found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM t_attach WHERE id = g)) AS plain_found
  FROM generate_series(1, 200) g;
VACUUM t_attach;
SELECT count(*) FILTER (WHERE guarded_exists('t_attach', g)) AS found_after_vacuum
  FROM generate_series(1, 200) g;

-- a filter of at most 512 bits is one block, sized by the classic formulas:
-- n = 50, p = 0.02 gives m = 408, k = 6 (layout.sql has the larger ones)
CREATE TABLE t_small (id int PRIMARY KEY);
SELECT bloomguard_attach('t_small', 50, 0.02);
SELECT capacity, error_rate, bits, hashes, memory_bytes FROM bloomguard_health WHERE relation = 't_small'::regclass;

-- rebuild: resizing changes bits and hashes, to whole 512-bit blocks
SELECT bloomguard_rebuild('t_small', 1000, 0.001);
SELECT capacity, error_rate, bits, hashes, block_bits, generation FROM bloomguard_health WHERE relation = 't_small'::regclass;
SELECT capacity, error_rate FROM bloomguard_guards WHERE relation = 't_small'::regclass;
-- NULL keeps the current sizing
SELECT bloomguard_rebuild('t_small');
SELECT capacity, bits, hashes, generation FROM bloomguard_health WHERE relation = 't_small'::regclass;

-- the default error rate comes from the setting
SET bloomguard.default_error_rate = 0.05;
CREATE TABLE t_rate (id int PRIMARY KEY);
SELECT bloomguard_attach('t_rate', 100);
SELECT capacity, error_rate, bits, hashes FROM bloomguard_health WHERE relation = 't_rate'::regclass;
RESET bloomguard.default_error_rate;

-- detach drops the trigger, the registry row and the filter
SELECT bloomguard_detach('t_rate');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 't_rate'::regclass;
SELECT count(*) FROM bloomguard_guards WHERE relation = 't_rate'::regclass;
SELECT count(*) FROM bloomguard_guard_stats() WHERE relid = 't_rate'::regclass;
-- and a detached table still answers correctly
INSERT INTO t_rate VALUES (7);
SELECT guarded_exists('t_rate', 7), guarded_exists('t_rate', 8), bloomguard_check('t_rate', 7);

-- a rolled-back detach leaves the guard in place and serving
BEGIN;
SELECT bloomguard_detach('t_small');
ROLLBACK;
SELECT state FROM bloomguard_health WHERE relation = 't_small'::regclass;
SELECT bloomguard_check('t_small', 123456);

-- a detach in a rolled-back subtransaction is forgotten too
BEGIN;
SAVEPOINT s1;
SELECT bloomguard_detach('t_small');
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 't_small'::regclass;

-- a detach can be prepared.  Nothing of ours runs at COMMIT PREPARED: the
-- slot remembers the prepared transaction, and whoever next looks at the
-- slots (here the health view) frees the filter once it has committed
BEGIN;
SELECT bloomguard_detach('t_small');
PREPARE TRANSACTION 'bg_detach';
SELECT state FROM bloomguard_health WHERE relation = 't_small'::regclass;
ROLLBACK PREPARED 'bg_detach';
SELECT state, feed FROM bloomguard_health WHERE relation = 't_small'::regclass;
SELECT guarded_exists('t_small', 5), bloomguard_check('t_small', 5);
CREATE TABLE t_prep (id int PRIMARY KEY);
INSERT INTO t_prep SELECT generate_series(1, 100);
SELECT memory_in_use AS mem_before FROM bloomguard_guard_stats() LIMIT 1 \gset
SELECT bloomguard_attach('t_prep', 100000, 0.01);
SELECT memory_in_use > :mem_before AS reserved FROM bloomguard_guard_stats() LIMIT 1;
BEGIN;
SELECT bloomguard_detach('t_prep');
PREPARE TRANSACTION 'bg_detach';
SELECT memory_in_use > :mem_before AS still_reserved FROM bloomguard_guard_stats() LIMIT 1;
COMMIT PREPARED 'bg_detach';
SELECT memory_in_use = :mem_before AS freed FROM bloomguard_guard_stats() LIMIT 1;
SELECT count(*) FROM bloomguard_health WHERE relation = 't_prep'::regclass;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 't_prep'::regclass;
-- and so can DROP TABLE of a guarded table
SELECT bloomguard_attach('t_prep', 100000, 0.01);
BEGIN;
DROP TABLE t_prep;
PREPARE TRANSACTION 'bg_drop';
SELECT memory_in_use > :mem_before AS still_reserved FROM bloomguard_guard_stats() LIMIT 1;
COMMIT PREPARED 'bg_drop';
SELECT memory_in_use = :mem_before AS freed FROM bloomguard_guard_stats() LIMIT 1;
SELECT count(*) AS registered FROM bloomguard_guards;

-- lookups answered by SQL (here a float8 argument for an integer key) keep
-- no plan per execution: 2000 separate executions do not grow the cache
-- (measured after a first one; in bytes used, since a new block of the
-- cache's context, which another backend's invalidation can make us
-- allocate, counts up to 8 MB in total_bytes)
SELECT guarded_exists('t_small', 5::float8);
SELECT sum(used_bytes) AS cache_before FROM pg_backend_memory_contexts
 WHERE name = 'CacheMemoryContext' \gset
DO $$
DECLARE r boolean;
BEGIN
  FOR i IN 1..2000 LOOP
    EXECUTE 'SELECT guarded_exists(''t_small'', 5::float8)' INTO r;
  END LOOP;
END $$;
SELECT sum(used_bytes) - :cache_before < 1000000 AS no_plan_leak
  FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext';

DROP TABLE t_rate;
SELECT bloomguard_detach('t_small');
SELECT bloomguard_detach('t_attach');
DROP TABLE t_small, t_attach;
SELECT count(*) FROM bloomguard_guards;
DROP EXTENSION bloomguard;
