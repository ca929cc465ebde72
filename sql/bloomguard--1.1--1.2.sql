/* bloomguard--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomguard UPDATE TO '1.2'" to load this file. \quit

-- Lookups with untyped parameters, what drivers send by default: the
-- parser cannot pass an unknown-typed parameter to an "any" argument.  A
-- key argument of this type is a string kept as given; no type casts
-- into it, so only unknown arguments (untyped parameters and literals)
-- choose the variants below, and it is of the string category, which the
-- parser prefers for them over "any".  The lookup reads each with the key
-- column's input function, as WHERE pk = $1 reads an untyped $1.  It is
-- collatable, so that a COLLATE clause on a literal still governs the
-- comparison.
CREATE TYPE @extschema@.bloomguard_untyped_key;

CREATE FUNCTION @extschema@.bloomguard_untyped_key_in(pg_catalog.cstring)
RETURNS @extschema@.bloomguard_untyped_key
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.bloomguard_untyped_key_out(@extschema@.bloomguard_untyped_key)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.bloomguard_untyped_key_recv(pg_catalog.internal)
RETURNS @extschema@.bloomguard_untyped_key
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.bloomguard_untyped_key_send(@extschema@.bloomguard_untyped_key)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.bloomguard_untyped_key (
    INPUT = @extschema@.bloomguard_untyped_key_in,
    OUTPUT = @extschema@.bloomguard_untyped_key_out,
    RECEIVE = @extschema@.bloomguard_untyped_key_recv,
    SEND = @extschema@.bloomguard_untyped_key_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = extended,
    CATEGORY = 'S',
    COLLATABLE = true
);

CREATE FUNCTION @extschema@.guarded_exists(rel pg_catalog.regclass, VARIADIC key @extschema@.bloomguard_untyped_key[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'guarded_exists'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.bloomguard_check(rel pg_catalog.regclass, VARIADIC key @extschema@.bloomguard_untyped_key[])
RETURNS text
AS 'MODULE_PATHNAME', 'bloomguard_check'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- A table whose bloomguard trigger came without its registry row (a
-- schema-only copy) has a row of its own, in state 'unregistered', and
-- the advice says how to adopt or drop the trigger.  Same columns.
CREATE OR REPLACE VIEW @extschema@.bloomguard_health AS
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
            CASE WHEN j.state = 'unregistered' THEN
                pg_catalog.format('its trigger bloomguard has no registry row (copied without it, as by pg_dump --schema-only): adopt it with bloomguard_attach(%L), or drop it with bloomguard_detach(%L)',
                                  j.relid::pg_catalog.regclass::pg_catalog.text, j.relid::pg_catalog.regclass::pg_catalog.text)
            WHEN j.state = 'disabled' THEN
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
