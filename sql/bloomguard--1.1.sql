/* bloomguard--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomguard" to load this file. \quit

-- The guards that outlive a restart: one row per guarded table.
-- pg_dump dumps its rows, so a restored database comes back guarded.
CREATE TABLE @extschema@.bloomguard_guards (
    relation    pg_catalog.regclass PRIMARY KEY,
    capacity    pg_catalog.int8 NOT NULL CHECK (capacity > 0),
    error_rate  pg_catalog.float8 NOT NULL CHECK (error_rate > 0 AND error_rate < 1),
    attached_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now()
);
SELECT pg_catalog.pg_extension_config_dump('@extschema@.bloomguard_guards',
    'WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM pg_catalog.pg_class)');
REVOKE ALL ON @extschema@.bloomguard_guards FROM PUBLIC;

-- The feed trigger function; bloomguard_attach() installs the trigger.
CREATE FUNCTION @extschema@.bloomguard_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'bloomguard_trigger'
LANGUAGE C;

-- Guard a table by its primary key. Requires ownership of the table, and
-- EXECUTE, which is not granted to PUBLIC: filters use shared memory, a
-- cluster-wide resource, so the DBA decides who may reserve it.
CREATE FUNCTION @extschema@.bloomguard_attach(
    rel pg_catalog.regclass,
    capacity pg_catalog.int8 DEFAULT NULL,
    error_rate pg_catalog.float8 DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'bloomguard_attach'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Remove a guard. Requires ownership of the table.
CREATE FUNCTION @extschema@.bloomguard_detach(rel pg_catalog.regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'bloomguard_detach'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- Rebuild (and optionally resize) a guard's filter online. Requires
-- ownership, and EXECUTE (not granted to PUBLIC, as for attach).
CREATE FUNCTION @extschema@.bloomguard_rebuild(
    rel pg_catalog.regclass,
    capacity pg_catalog.int8 DEFAULT NULL,
    error_rate pg_catalog.float8 DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'bloomguard_rebuild'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE EXECUTE ON FUNCTION @extschema@.bloomguard_attach(pg_catalog.regclass, pg_catalog.int8, pg_catalog.float8) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.bloomguard_rebuild(pg_catalog.regclass, pg_catalog.int8, pg_catalog.float8) FROM PUBLIC;

-- EXISTS (SELECT 1 FROM rel WHERE (pk...) = (key...)), answered from the
-- filter when it can say "definitely absent". Requires SELECT on the table.
CREATE FUNCTION @extschema@.guarded_exists(rel pg_catalog.regclass, VARIADIC key "any")
RETURNS boolean
AS 'MODULE_PATHNAME', 'guarded_exists'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The filter's own answer: 'absent', 'maybe' or 'unknown'. Never reads the table.
CREATE FUNCTION @extschema@.bloomguard_check(rel pg_catalog.regclass, VARIADIC key "any")
RETURNS text
AS 'MODULE_PATHNAME', 'bloomguard_check'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Per-guard numbers and health gauges from shared memory, for the guards
-- of this database the caller may see (it filters its rows itself).
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
    OUT builder_pid pg_catalog.int4,
    OUT last_error pg_catalog.text,
    OUT stats_reset pg_catalog.timestamptz,
    OUT memory_in_use pg_catalog.int8,
    OUT max_memory pg_catalog.int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bloomguard_guard_stats_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Run n never-added probes; returns this batch's false-positive fraction.
-- Requires ownership of the table or membership in pg_monitor.
CREATE FUNCTION @extschema@.bloomguard_probe(rel pg_catalog.regclass, n pg_catalog.int4 DEFAULT 1000)
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'bloomguard_probe'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Zero the traffic counters of one guard, or of every guard of this
-- database the caller owns. Requires ownership.
CREATE FUNCTION @extschema@.bloomguard_reset_stats(rel pg_catalog.regclass DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'bloomguard_reset_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- One row per guard of this database that the caller may see: superusers
-- and members of pg_read_all_stats see every guard; other roles see the
-- guards of the tables they could query.  The health rule: OVER_CAPACITY
-- when load > 1.0, FP_TOO_HIGH when at least 10 probes measured more than
-- twice the target rate, NOT_READY when the state is not 'ready'.
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
       j.feed
  FROM judged j;

GRANT SELECT ON @extschema@.bloomguard_health TO PUBLIC;

-- Unregister guarded tables when they are dropped.  With the library
-- preloaded its object access hook does this in every mode; the event
-- trigger covers a server without it.
CREATE FUNCTION @extschema@.bloomguard_sql_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'bloomguard_sql_drop'
LANGUAGE C;

CREATE EVENT TRIGGER bloomguard_sql_drop ON sql_drop
    EXECUTE FUNCTION @extschema@.bloomguard_sql_drop();
