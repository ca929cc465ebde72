/* bloomguard--1.0.sql */

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
SELECT pg_catalog.pg_extension_config_dump('@extschema@.bloomguard_guards', '');
REVOKE ALL ON @extschema@.bloomguard_guards FROM PUBLIC;

-- The feed trigger function; bloomguard_attach() installs the trigger.
CREATE FUNCTION @extschema@.bloomguard_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'bloomguard_trigger'
LANGUAGE C;

-- Guard a table by its primary key. Requires ownership of the table.
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

-- Rebuild (and optionally resize) a guard's filter online. Requires ownership.
CREATE FUNCTION @extschema@.bloomguard_rebuild(
    rel pg_catalog.regclass,
    capacity pg_catalog.int8 DEFAULT NULL,
    error_rate pg_catalog.float8 DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'bloomguard_rebuild'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

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

-- Raw per-guard numbers from shared memory (this database, tables the
-- caller may read). The bloomguard_health view is the interface.
CREATE FUNCTION @extschema@.bloomguard_guard_stats(
    OUT relid pg_catalog.oid,
    OUT state pg_catalog.text,
    OUT generation pg_catalog.int8,
    OUT capacity pg_catalog.int8,
    OUT error_rate pg_catalog.float8,
    OUT bits pg_catalog.int8,
    OUT hashes pg_catalog.int4,
    OUT memory_bytes pg_catalog.int8,
    OUT n_added pg_catalog.int8,
    OUT bits_set pg_catalog.int8,
    OUT probes pg_catalog.int8,
    OUT probe_hits pg_catalog.int8,
    OUT checks pg_catalog.int8,
    OUT shortcuts pg_catalog.int8,
    OUT source_lookups pg_catalog.int8,
    OUT source_hits pg_catalog.int8,
    OUT fallbacks pg_catalog.int8,
    OUT built_at pg_catalog.timestamptz,
    OUT build_seconds pg_catalog.float8,
    OUT builder_pid pg_catalog.int4,
    OUT last_error pg_catalog.text,
    OUT stats_reset pg_catalog.timestamptz,
    OUT memory_in_use pg_catalog.int8,
    OUT max_memory pg_catalog.int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bloomguard_guard_stats'
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

-- One row per guard of this database. Superusers and members of
-- pg_read_all_stats see every guard; other roles see the guards of the
-- tables they may SELECT from.
CREATE VIEW @extschema@.bloomguard_health AS
WITH raw AS (
    SELECT g.relation,
           CASE WHEN NOT pg_catalog.current_setting('bloomguard.enabled')::pg_catalog.bool
                THEN 'disabled'
                ELSE COALESCE(s.state, 'not_loaded') END AS state,
           COALESCE(s.generation, 0) AS generation,
           COALESCE(s.capacity, g.capacity) AS capacity,
           COALESCE(s.error_rate, g.error_rate) AS error_rate,
           s.bits, s.hashes,
           COALESCE(s.memory_bytes, 0) AS memory_bytes,
           s.n_added, s.bits_set,
           COALESCE(s.probes, 0) AS probes,
           COALESCE(s.probe_hits, 0) AS probe_hits,
           COALESCE(s.checks, 0) AS checks,
           COALESCE(s.shortcuts, 0) AS shortcuts,
           COALESCE(s.source_lookups, 0) AS source_lookups,
           COALESCE(s.source_hits, 0) AS source_hits,
           COALESCE(s.fallbacks, 0) AS fallbacks,
           s.built_at, s.build_seconds, s.builder_pid, s.last_error, s.stats_reset
      FROM @extschema@.bloomguard_guards g
      LEFT JOIN @extschema@.bloomguard_guard_stats() s ON s.relid OPERATOR(pg_catalog.=) g.relation::pg_catalog.oid
     WHERE pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER')
        OR pg_catalog.has_any_column_privilege(g.relation::pg_catalog.oid, 'SELECT')
), gauges AS (
    SELECT r.*,
           r.n_added::pg_catalog.float8 / r.capacity AS load,
           r.bits_set::pg_catalog.float8 / r.bits AS fill,
           CASE WHEN r.bits_set < r.bits
                THEN -(r.bits::pg_catalog.float8 / r.hashes)
                     * pg_catalog.ln(1 - r.bits_set::pg_catalog.float8 / r.bits) + 0
           END AS estimated_keys,
           pg_catalog.power(1 - pg_catalog.exp(-r.hashes * r.n_added::pg_catalog.float8 / r.bits),
                            r.hashes) AS theoretical_fp,
           CASE WHEN r.probes > 0 THEN r.probe_hits::pg_catalog.float8 / r.probes ELSE 0 END AS actual_fp,
           CASE WHEN r.source_lookups - r.source_hits + r.shortcuts > 0
                THEN (r.source_lookups - r.source_hits)::pg_catalog.float8
                     / (r.source_lookups - r.source_hits + r.shortcuts)
                ELSE 0 END AS observed_fp
      FROM raw r
), judged AS (
    SELECT q.*,
           ARRAY(SELECT x FROM pg_catalog.unnest(ARRAY[
                    CASE WHEN q.load > 1.0 THEN 'OVER_CAPACITY' END,
                    CASE WHEN q.probes >= 10 AND q.actual_fp > 2 * q.error_rate THEN 'FP_TOO_HIGH' END,
                    CASE WHEN q.state <> 'ready' THEN 'NOT_READY' END]) AS x
                  WHERE x IS NOT NULL) AS reasons
      FROM gauges q
)
SELECT j.relation,
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
            CASE j.state
                WHEN 'disabled' THEN 'bloomguard.enabled is off: turn it on to use the filter'
                WHEN 'building' THEN 'wait for the first build to finish'
                WHEN 'not_loaded' THEN pg_catalog.format('rebuild with bloomguard_rebuild(%L) (filter not loaded%s)',
                                                         j.relation::pg_catalog.text,
                                                         ': ' || j.last_error)
                WHEN 'untrusted' THEN pg_catalog.format('rebuild with bloomguard_rebuild(%L) (rows may have bypassed the trigger)',
                                                        j.relation::pg_catalog.text)
            END,
            CASE WHEN j.load > 1.0 THEN
                pg_catalog.format('rebuild with capacity %s (load %s)%s',
                                  2 * j.n_added,
                                  pg_catalog.round(j.load::pg_catalog.numeric, 1),
                                  CASE WHEN j.state = 'ready' THEN ': ' || j.last_error ELSE '' END)
            END,
            CASE WHEN j.probes >= 10 AND j.actual_fp > 2 * j.error_rate AND NOT COALESCE(j.load > 1.0, false) THEN
                pg_catalog.format('measured false-positive rate %s is above twice the target %s: rebuild to draw a new hash seed, or with a lower error_rate',
                                  pg_catalog.round(j.actual_fp::pg_catalog.numeric, 4), j.error_rate)
            END)
       END AS advice,
       j.last_error,
       j.stats_reset
  FROM judged j;

GRANT SELECT ON @extschema@.bloomguard_health TO PUBLIC;

-- Unregister guarded tables when they are dropped.
CREATE FUNCTION @extschema@.bloomguard_sql_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'bloomguard_sql_drop'
LANGUAGE C;

CREATE EVENT TRIGGER bloomguard_sql_drop ON sql_drop
    EXECUTE FUNCTION @extschema@.bloomguard_sql_drop();
