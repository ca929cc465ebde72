/* bloomguard--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomguard UPDATE TO '1.1'" to load this file. \quit

-- Attach and rebuild reserve shared memory, a cluster-wide resource: the
-- DBA decides who may (GRANT EXECUTE).  Table ownership is still checked.
REVOKE EXECUTE ON FUNCTION @extschema@.bloomguard_attach(pg_catalog.regclass, pg_catalog.int8, pg_catalog.float8) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.bloomguard_rebuild(pg_catalog.regclass, pg_catalog.int8, pg_catalog.float8) FROM PUBLIC;

-- Dropped tables are unregistered by the library's object access hook now,
-- which no setting can switch off; the sql_drop event trigger (kept for a
-- server without the library preloaded) did not fire under
-- session_replication_role = replica and left rows behind.  Remove those
-- rows, and never dump one.  Whether the table exists is asked of the
-- syscache (pg_table_is_visible() is NULL for no such table), not of a
-- query of pg_class, from which Citus hides its shards on a worker.
DELETE FROM @extschema@.bloomguard_guards g
 WHERE pg_catalog.pg_table_is_visible(g.relation::pg_catalog.oid) IS NULL;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.bloomguard_guards',
    'WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM pg_catalog.pg_class)');

-- The health gauges are computed in C now, where the function also
-- filters its rows; the view adds the health rule and the advice.
DROP VIEW @extschema@.bloomguard_health;
DROP FUNCTION @extschema@.bloomguard_guard_stats();

-- Per-guard numbers and health gauges from shared memory, for the guards
-- of this database the caller may see (it filters its rows itself).  A
-- guarded partitioned table has one row per leaf partition, whose parent
-- column names it.
-- The bloomguard_health view is the interface.
CREATE FUNCTION @extschema@.bloomguard_guard_stats(
    OUT relid pg_catalog.oid,
    OUT state pg_catalog.text,
    OUT feed pg_catalog.text,
    OUT generation pg_catalog.int8,
    OUT capacity pg_catalog.int8,
    OUT error_rate pg_catalog.float8,
    OUT bits pg_catalog.int8,
    OUT hashes pg_catalog.int4,
    OUT block_bits pg_catalog.int4,
    OUT memory_bytes pg_catalog.int8,
    OUT n_added pg_catalog.int8,
    OUT bits_set pg_catalog.int8,
    OUT load pg_catalog.float8,
    OUT fill pg_catalog.float8,
    OUT estimated_keys pg_catalog.float8,
    OUT theoretical_fp pg_catalog.float8,
    OUT probes pg_catalog.int8,
    OUT probe_hits pg_catalog.int8,
    OUT actual_fp pg_catalog.float8,
    OUT checks pg_catalog.int8,
    OUT shortcuts pg_catalog.int8,
    OUT source_lookups pg_catalog.int8,
    OUT source_hits pg_catalog.int8,
    OUT fallbacks pg_catalog.int8,
    OUT observed_fp pg_catalog.float8,
    OUT suggested_capacity pg_catalog.int8,
    OUT built_at pg_catalog.timestamptz,
    OUT build_seconds pg_catalog.float8,
    OUT build_workers pg_catalog.int4,
    OUT builder_pid pg_catalog.int4,
    OUT last_error pg_catalog.text,
    OUT stats_reset pg_catalog.timestamptz,
    OUT memory_in_use pg_catalog.int8,
    OUT max_memory pg_catalog.int8,
    OUT source pg_catalog.text,
    OUT source_at pg_catalog.timestamptz,
    OUT parent pg_catalog.oid)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bloomguard_guard_stats_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW @extschema@.bloomguard_health AS
WITH judged AS (
    SELECT s.*,
           ARRAY(SELECT x FROM pg_catalog.unnest(ARRAY[
                    CASE WHEN s.load > 1.0 THEN 'OVER_CAPACITY' END,
                    CASE WHEN s.probes >= 10 AND s.actual_fp > 2 * s.error_rate THEN 'FP_TOO_HIGH' END,
                    CASE WHEN s.state <> 'ready' THEN 'NOT_READY' END]) AS x
                  WHERE x IS NOT NULL) AS reasons
      FROM @extschema@.bloomguard_guard_stats() s
)
SELECT j.relid::pg_catalog.regclass AS relation,
       CASE WHEN pg_catalog.cardinality(j.reasons) = 0 THEN 'HEALTHY' ELSE 'DEGRADED' END AS status,
       j.reasons,
       j.state,
       j.generation,
       j.capacity,
       j.error_rate,
       j.bits,
       j.hashes,
       j.block_bits,
       j.memory_bytes,
       j.n_added,
       j.load,
       j.fill,
       j.estimated_keys,
       j.theoretical_fp,
       j.probes,
       j.probe_hits,
       j.actual_fp,
       j.checks,
       j.shortcuts,
       j.source_lookups,
       j.source_hits,
       j.fallbacks,
       j.observed_fp,
       j.built_at,
       j.build_seconds,
       j.build_workers,
       CASE WHEN pg_catalog.cardinality(j.reasons) = 0 THEN NULL
       ELSE pg_catalog.concat_ws('; ',
            CASE WHEN j.state = 'disabled' THEN
                'bloomguard.enabled is off: turn it on to use the filter'
            WHEN j.state = 'building' THEN
                'wait for the first build to finish'
            WHEN j.state IN ('not_loaded', 'untrusted') AND j.feed = 'not_always' THEN
                pg_catalog.format('enable its trigger for every write with ALTER TABLE %s ENABLE ALWAYS TRIGGER bloomguard, then run bloomguard_rebuild(%L)',
                                  j.relid::pg_catalog.regclass, j.relid::pg_catalog.regclass::pg_catalog.text)
            WHEN j.state IN ('not_loaded', 'untrusted') AND j.feed IN ('missing', 'altered') THEN
                pg_catalog.format('its trigger is %s: recreate it with bloomguard_detach(%L), then bloomguard_attach(%L)',
                                  CASE j.feed WHEN 'missing' THEN 'missing' ELSE 'not the one bloomguard_attach() creates' END,
                                  j.relid::pg_catalog.regclass::pg_catalog.text, j.relid::pg_catalog.regclass::pg_catalog.text)
            WHEN j.state = 'not_loaded' THEN
                pg_catalog.format('rebuild with bloomguard_rebuild(%L) (filter not loaded%s)',
                                  j.relid::pg_catalog.regclass::pg_catalog.text, ': ' || j.last_error)
            WHEN j.state = 'untrusted' THEN
                pg_catalog.format('rebuild with bloomguard_rebuild(%L) (rows may have bypassed the trigger%s)',
                                  j.relid::pg_catalog.regclass::pg_catalog.text, ': ' || j.last_error)
            END,
            CASE WHEN j.load > 1.0 THEN
                pg_catalog.format('rebuild with bloomguard_rebuild(%L), which resizes it to capacity %s (load %s)%s',
                                  j.relid::pg_catalog.regclass::pg_catalog.text,
                                  j.suggested_capacity,
                                  pg_catalog.round(j.load::pg_catalog.numeric, 1),
                                  CASE WHEN j.state = 'ready' THEN ': ' || j.last_error ELSE '' END)
            END,
            CASE WHEN j.probes >= 10 AND j.actual_fp > 2 * j.error_rate AND NOT COALESCE(j.load > 1.0, false) THEN
                pg_catalog.format('measured false-positive rate %s is above twice the target %s: rebuild to draw a new hash seed, or with a lower error_rate',
                                  pg_catalog.round(j.actual_fp::pg_catalog.numeric, 4), j.error_rate)
            END)
       END AS advice,
       j.last_error,
       j.stats_reset,
       j.feed,
       j.source,
       j.source_at,
       j.parent::pg_catalog.regclass AS parent
  FROM judged j;

GRANT SELECT ON @extschema@.bloomguard_health TO PUBLIC;
