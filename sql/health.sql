-- the health view, probes and counters: OVER_CAPACITY when load > 1,
-- FP_TOO_HIGH when at least 10 probes measured over twice the target,
-- NOT_READY when the state is not 'ready'
CREATE EXTENSION bloomguard;

-- the view's columns, in order
SELECT attname FROM pg_attribute
 WHERE attrelid = 'bloomguard_health'::regclass AND attnum > 0 ORDER BY attnum;

-- the worked example: a filter for 50 keys at 0.02 has m = 408, k = 6: one
-- block of 408 bits, the classic filter
CREATE TABLE t_seed (id int PRIMARY KEY);
SELECT bloomguard_attach('t_seed', 50, 0.02);
SELECT status, reasons, state, capacity, error_rate, bits, hashes, block_bits, n_added, load, fill,
       estimated_keys, theoretical_fp, probes, probe_hits, actual_fp, advice
  FROM bloomguard_health WHERE relation = 't_seed'::regclass;
-- where the filter came from: a scan on this node, when it became ready
SELECT source, source_at = built_at AS at_build
  FROM bloomguard_health WHERE relation = 't_seed'::regclass;
-- exactly 50 adds: load is 1.0, which is still healthy (the rule says >);
-- the fill is about 0.5 and the estimate about 50
INSERT INTO t_seed SELECT generate_series(1, 50);
SELECT status, reasons, n_added, load, round(theoretical_fp::numeric, 4) AS theoretical_fp,
       fill BETWEEN 0.4 AND 0.65 AS fill_about_half,
       estimated_keys BETWEEN 35 AND 65 AS estimate_about_50, advice
  FROM bloomguard_health WHERE relation = 't_seed'::regclass;
-- the 51st add makes it over capacity
INSERT INTO t_seed VALUES (51);
SELECT status, reasons, n_added, round(load::numeric, 4) AS load, advice
  FROM bloomguard_health WHERE relation = 't_seed'::regclass;
-- 150 adds: the theoretical rate is 0.4965, many times the target
INSERT INTO t_seed SELECT generate_series(52, 150);
SELECT status, reasons, n_added, load, round(theoretical_fp::numeric, 4) AS theoretical_fp,
       probes, actual_fp, advice
  FROM bloomguard_health WHERE relation = 't_seed'::regclass;
-- the gauges are the seed's formulas over the raw numbers
SELECT h.load = s.n_added::float8 / s.capacity AS load_ok,
       h.fill = s.bits_set::float8 / s.bits AS fill_ok,
       abs(h.estimated_keys - (-(s.bits::float8 / s.hashes) * ln(1 - s.bits_set::float8 / s.bits))) < 1e-9
           AS estimate_ok,
       abs(h.theoretical_fp - power(1 - exp(-s.hashes * s.n_added::float8 / s.bits), s.hashes)) < 1e-12
           AS theoretical_ok
  FROM bloomguard_health h JOIN bloomguard_guard_stats() s ON s.relid = h.relation
 WHERE h.relation = 't_seed'::regclass;
SELECT bloomguard_detach('t_seed');
DROP TABLE t_seed;

-- fewer than 10 probes never judge the rate; 10 do.  10 keys at 0.01
-- (m = 96, k = 7) with 1000 keys added: every bit is set, every probe hits
CREATE TABLE t_over (id int PRIMARY KEY);
SELECT bloomguard_attach('t_over', 10, 0.01);
INSERT INTO t_over SELECT generate_series(1, 1000);
SELECT pg_stat_force_next_flush();  -- the advice's capacity counts the table's rows
SELECT bits, hashes, n_added, fill, estimated_keys, probes, actual_fp
  FROM bloomguard_health WHERE relation = 't_over'::regclass;
SELECT bloomguard_probe('t_over', 9) AS batch_fp;
SELECT status, reasons, probes, probe_hits, actual_fp, advice
  FROM bloomguard_health WHERE relation = 't_over'::regclass;
SELECT bloomguard_probe('t_over', 1) AS batch_fp;
SELECT status, reasons, probes, probe_hits, actual_fp, advice
  FROM bloomguard_health WHERE relation = 't_over'::regclass;
SELECT actual_fp = probe_hits::float8 / probes AS actual_fp_ok
  FROM bloomguard_health WHERE relation = 't_over'::regclass;
-- resetting the counters forgets the probes (and the verdict on them)
SELECT bloomguard_reset_stats('t_over');
SELECT status, reasons, probes, probe_hits, actual_fp, n_added
  FROM bloomguard_health WHERE relation = 't_over'::regclass;
SELECT bloomguard_detach('t_over');
DROP TABLE t_over;

-- on a filter at its design point, the measured rate is near the target:
-- 100000 probes of 1000 keys at 0.01
CREATE TABLE t_probe (id int PRIMARY KEY);
INSERT INTO t_probe SELECT generate_series(1, 1000);
SELECT bloomguard_attach('t_probe', 1000, 0.01);
SELECT probes, probe_hits, actual_fp FROM bloomguard_health WHERE relation = 't_probe'::regclass;
-- (the call sits in FROM: BETWEEN would evaluate it twice)
SELECT batch_fp BETWEEN 0.005 AND 0.02 AS near_target FROM bloomguard_probe('t_probe', 100000) batch_fp;
SELECT status, reasons, probes, probe_hits BETWEEN 500 AND 2000 AS hits_near_target,
       actual_fp = probe_hits::float8 / probes AS actual_fp_ok
  FROM bloomguard_health WHERE relation = 't_probe'::regclass;
SELECT bloomguard_detach('t_probe');
DROP TABLE t_probe;

-- duplicates raise n_added but not the estimate of distinct keys
CREATE TABLE t_dup (id int PRIMARY KEY, v int);
SELECT bloomguard_attach('t_dup', 1000, 0.01);
INSERT INTO t_dup SELECT g, 0 FROM generate_series(1, 100) g;
SELECT n_added, load, estimated_keys BETWEEN 90 AND 110 AS estimate_about_100
  FROM bloomguard_health WHERE relation = 't_dup'::regclass;
SELECT round(estimated_keys::numeric, 4) AS estimate_before, fill AS fill_before
  FROM bloomguard_health WHERE relation = 't_dup'::regclass \gset
-- an UPDATE that keeps the key adds nothing
UPDATE t_dup SET id = id;
UPDATE t_dup SET v = v + 1;
SELECT n_added FROM bloomguard_health WHERE relation = 't_dup'::regclass;
-- keys deleted and inserted again are added again: n_added grows, the
-- estimate (from the bits) does not move
DELETE FROM t_dup WHERE id <= 50;
INSERT INTO t_dup SELECT g, 0 FROM generate_series(1, 50) g;
SELECT n_added, load, round(estimated_keys::numeric, 4) = :estimate_before AS same_estimate,
       fill = :fill_before AS same_fill
  FROM bloomguard_health WHERE relation = 't_dup'::regclass;
-- an UPDATE that changes the key adds the new key
UPDATE t_dup SET id = id + 1000;
SELECT n_added, round(estimated_keys::numeric, 4) > :estimate_before AS estimate_grew
  FROM bloomguard_health WHERE relation = 't_dup'::regclass;
SELECT bloomguard_detach('t_dup');
DROP TABLE t_dup;

-- a FULL filter: 1 key at 0.5 is m = 2 bits, k = 1; 200 keys set both
CREATE TABLE t_full (id int PRIMARY KEY);
SELECT bloomguard_attach('t_full', 1, 0.5);
INSERT INTO t_full SELECT generate_series(1, 200);
SELECT status, reasons, bits, hashes, n_added, load, fill, estimated_keys IS NULL AS full,
       round(theoretical_fp::numeric, 4) AS theoretical_fp, advice
  FROM bloomguard_health WHERE relation = 't_full'::regclass;

-- memory: at least bits / 8, and close to it for a large filter
CREATE TABLE t_mem (id int PRIMARY KEY);
SELECT bloomguard_attach('t_mem', 1000000, 0.01);
SELECT bits, hashes, memory_bytes >= bits / 8.0 AS at_least_bits,
       memory_bytes / (bits / 8.0) BETWEEN 1 AND 1.01 AS close_to_bits
  FROM bloomguard_health WHERE relation = 't_mem'::regclass;
SELECT bits, memory_bytes >= bits / 8.0 AS at_least_bits
  FROM bloomguard_health WHERE relation = 't_full'::regclass;

-- counters on a known workload
CREATE TABLE t_cnt (id int PRIMARY KEY);
INSERT INTO t_cnt SELECT generate_series(1, 100);
SELECT bloomguard_attach('t_cnt', 1000, 0.01);
SELECT guarded_exists('t_cnt', 1);
SELECT bloomguard_reset_stats('t_cnt');
SELECT n_added, checks, shortcuts, source_lookups, source_hits, fallbacks, observed_fp
  FROM bloomguard_health WHERE relation = 't_cnt'::regclass;
-- 100 present keys (the filter says maybe, the table says yes), 1000
-- absent ones (almost all answered by the filter alone), 10 with the
-- filter switched off (fallbacks), and calls that are not counted: NULL
-- keys and bloomguard_check()
SELECT count(*) FILTER (WHERE guarded_exists('t_cnt', g)) AS found FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE guarded_exists('t_cnt', g)) AS found FROM generate_series(1001, 2000) g;
SET bloomguard.enabled = off;
SELECT count(*) FILTER (WHERE guarded_exists('t_cnt', g)) AS found FROM generate_series(95, 104) g;
RESET bloomguard.enabled;
SELECT guarded_exists('t_cnt', NULL::int), bloomguard_check('t_cnt', 1);
SELECT checks, source_hits, fallbacks, shortcuts + source_lookups AS filter_answers,
       source_lookups >= 100 AS lookups_include_present, shortcuts >= 990 AS mostly_shortcuts,
       observed_fp = CASE WHEN source_lookups - source_hits + shortcuts > 0
                          THEN (source_lookups - source_hits)::float8
                               / (source_lookups - source_hits + shortcuts)
                          ELSE 0 END AS observed_fp_ok,
       observed_fp < 0.01 AS observed_fp_low
  FROM bloomguard_health WHERE relation = 't_cnt'::regclass;
-- on the full filter every key is a maybe: 50 present and 50 absent keys
-- give exact counts, and observed_fp = 50 / (50 + 0) = 1
SELECT bloomguard_reset_stats('t_full');
SELECT count(*) FILTER (WHERE guarded_exists('t_full', g)) AS found FROM generate_series(151, 250) g;
SELECT checks, shortcuts, source_lookups, source_hits, fallbacks, round(observed_fp::numeric, 4) AS observed_fp
  FROM bloomguard_health WHERE relation = 't_full'::regclass;
-- reset_stats keeps n_added; with NULL it resets every guard of the database
SELECT stats_reset AS cnt_reset_before FROM bloomguard_health WHERE relation = 't_cnt'::regclass \gset
SELECT bloomguard_reset_stats();
SELECT relation, n_added, checks, shortcuts, source_lookups, source_hits, fallbacks, probes,
       observed_fp, stats_reset > :'cnt_reset_before' AS reset_later
  FROM bloomguard_health WHERE relation IN ('t_cnt'::regclass, 't_full'::regclass, 't_mem'::regclass)
 ORDER BY relation::text;
-- the default argument is NULL too
SELECT bloomguard_probe('t_cnt', 10) >= 0 AS probed;
SELECT bloomguard_reset_stats(NULL);
SELECT probes FROM bloomguard_health WHERE relation = 't_cnt'::regclass;

-- probes never touch the table: its scan counters do not move, the
-- view's probe counter moves by n.  (A lookup of a present key does scan
-- the index, which shows the counters work.)
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS seq_before, idx_scan AS idx_before
  FROM pg_stat_user_tables WHERE relid = 't_cnt'::regclass \gset
SELECT bloomguard_probe('t_cnt', 5000) >= 0 AS probed;
SELECT pg_stat_force_next_flush();
SELECT seq_scan = :seq_before AS same_seq_scan, idx_scan = :idx_before AS same_idx_scan
  FROM pg_stat_user_tables WHERE relid = 't_cnt'::regclass;
SELECT probes FROM bloomguard_health WHERE relation = 't_cnt'::regclass;
SELECT guarded_exists('t_cnt', 7);
SELECT pg_stat_force_next_flush();
SELECT seq_scan = :seq_before AS same_seq_scan, idx_scan - :idx_before AS idx_scans
  FROM pg_stat_user_tables WHERE relid = 't_cnt'::regclass;

-- bloomguard.enabled off: state 'disabled', not ready, lookups still right
SET bloomguard.enabled = off;
SELECT status, reasons, state, advice FROM bloomguard_health WHERE relation = 't_cnt'::regclass;
SELECT guarded_exists('t_cnt', 7) AS present, guarded_exists('t_cnt', 7000) AS absent,
       bloomguard_check('t_cnt', 7) AS filter;
RESET bloomguard.enabled;
SELECT status, reasons, state, advice FROM bloomguard_health WHERE relation = 't_cnt'::regclass;

-- the advice names what actually helps, for each reason a guard can be
-- untrusted, and following it makes the guard ready again
CREATE TABLE t_adv (id int PRIMARY KEY);
SELECT bloomguard_attach('t_adv');
-- rows bypassed the trigger, which is in place again: rebuild
ALTER TABLE t_adv DISABLE TRIGGER bloomguard;
ALTER TABLE t_adv ENABLE ALWAYS TRIGGER bloomguard;
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
SELECT bloomguard_rebuild('t_adv');
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
-- DISABLE and then ENABLE TRIGGER ALL leave it enabled, but not ALWAYS: a
-- rebuild alone is refused, so the advice says to enable it ALWAYS first
ALTER TABLE t_adv DISABLE TRIGGER ALL;
ALTER TABLE t_adv ENABLE TRIGGER ALL;
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
SELECT bloomguard_rebuild('t_adv');
ALTER TABLE t_adv ENABLE ALWAYS TRIGGER bloomguard;
SELECT bloomguard_rebuild('t_adv');
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
-- a trigger that is not the one attach creates: recreate it
CREATE OR REPLACE TRIGGER bloomguard AFTER INSERT OR UPDATE ON t_adv
  FOR EACH ROW WHEN (NEW.id > 0) EXECUTE FUNCTION bloomguard_trigger();
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
SELECT bloomguard_detach('t_adv');
SELECT bloomguard_attach('t_adv');
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
-- no trigger at all: recreate it
DROP TRIGGER bloomguard ON t_adv;
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
SELECT bloomguard_detach('t_adv');
SELECT bloomguard_attach('t_adv');
SELECT state, feed, advice FROM bloomguard_health WHERE relation = 't_adv'::regclass;
SELECT bloomguard_detach('t_adv');
DROP TABLE t_adv;

-- clean up
SELECT bloomguard_detach('t_cnt');
SELECT bloomguard_detach('t_full');
SELECT bloomguard_detach('t_mem');
SELECT count(*) FROM bloomguard_guards;
DROP TABLE t_cnt, t_full, t_mem;
DROP EXTENSION bloomguard;
