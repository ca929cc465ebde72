/* bloomguard--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomguard UPDATE TO '1.3'" to load this file. \quit

-- Citus: the health of every placement of every guarded distributed or
-- reference table, read on its node through Citus's
-- master_run_on_worker().  Each row's health is that node's
-- bloomguard_health row as JSON text, without its relation and parent
-- columns (names of that node's objects), 'null' when the node has no
-- row for the placement, or Citus's error when success is false.  No rows
-- where Citus is not installed.  It filters its shells as
-- bloomguard_health filters its guards, and each node filters again.
-- The bloomguard_distributed_health view is the interface.
CREATE FUNCTION @extschema@.bloomguard_placements(
    OUT relation pg_catalog.regclass,
    OUT shardid pg_catalog.int8,
    OUT nodename pg_catalog.text,
    OUT nodeport pg_catalog.int4,
    OUT success pg_catalog.bool,
    OUT health pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bloomguard_placements'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- One row per placement (shardid and node set), with the columns of
-- bloomguard_health as its node has them, and one row per table
-- (shardid and node null) that adds the placements up: counters and
-- sizes summed, rates recomputed from the sums, load and fill their
-- maximum, and a column the placements do not share null.  A placement
-- whose node did not answer is 'unreachable', one its node has no guard
-- for 'unguarded'; both are DEGRADED.
CREATE VIEW @extschema@.bloomguard_distributed_health AS
WITH raw AS (
    SELECT p.relation, p.shardid, p.nodename, p.nodeport, p.success,
           CASE WHEN p.success AND p.health OPERATOR(pg_catalog.<>) 'null'
                THEN p.health::pg_catalog.jsonb END AS health,
           CASE WHEN NOT p.success THEN p.health END AS error
      FROM @extschema@.bloomguard_placements() p
),
placement AS (
    SELECT r.relation, r.shardid, r.nodename, r.nodeport,
           CASE WHEN r.health IS NOT NULL THEN h.status ELSE 'DEGRADED' END AS status,
           CASE WHEN r.health IS NOT NULL THEN h.reasons
                WHEN NOT r.success THEN ARRAY['UNREACHABLE']
                ELSE ARRAY['NOT_GUARDED'] END AS reasons,
           CASE WHEN r.health IS NOT NULL THEN h.state
                WHEN NOT r.success THEN 'unreachable'
                ELSE 'unguarded' END AS state,
           h.generation, h.capacity, h.error_rate, h.bits, h.hashes, h.block_bits,
           h.memory_bytes, h.n_added, h.load, h.fill, h.estimated_keys, h.theoretical_fp,
           h.probes, h.probe_hits, h.actual_fp, h.checks, h.shortcuts, h.source_lookups,
           h.source_hits, h.fallbacks, h.observed_fp, h.built_at, h.build_seconds,
           h.build_workers,
           CASE WHEN r.health IS NOT NULL THEN h.advice
                WHEN NOT r.success THEN
                    pg_catalog.format('could not read its health on %s:%s (last_error has the error): check that the node is up and that bloomguard is installed there',
                                      r.nodename, r.nodeport)
                ELSE pg_catalog.format('its node %s:%s has no guard for it yet: its next maintenance pass registers and builds it, and until then its lookups use the index',
                                       r.nodename, r.nodeport) END AS advice,
           CASE WHEN r.health IS NOT NULL THEN h.last_error ELSE r.error END AS last_error,
           h.stats_reset, h.feed, h.source, h.source_at
      FROM raw r
      LEFT JOIN LATERAL pg_catalog.jsonb_populate_record(NULL::@extschema@.bloomguard_health, r.health) h ON true
),
whole AS (
    SELECT p.relation,
           pg_catalog.count(*) AS placements,
           pg_catalog.count(*) FILTER (WHERE p.state OPERATOR(pg_catalog.=) 'ready') AS ready_placements,
           CASE WHEN pg_catalog.bool_and(COALESCE(p.status OPERATOR(pg_catalog.=) 'HEALTHY', false)) THEN 'HEALTHY' ELSE 'DEGRADED' END AS status,
           CASE WHEN pg_catalog.count(DISTINCT p.state) OPERATOR(pg_catalog.=) 1 THEN pg_catalog.min(p.state) ELSE 'mixed' END AS state,
           pg_catalog.sum(p.capacity)::pg_catalog.int8 AS capacity,
           pg_catalog.max(p.error_rate) AS error_rate,
           pg_catalog.sum(p.bits)::pg_catalog.int8 AS bits,
           CASE WHEN pg_catalog.count(DISTINCT p.hashes) OPERATOR(pg_catalog.=) 1
                 AND pg_catalog.count(p.hashes) OPERATOR(pg_catalog.=) pg_catalog.count(*) THEN pg_catalog.min(p.hashes) END AS hashes,
           CASE WHEN pg_catalog.count(DISTINCT p.block_bits) OPERATOR(pg_catalog.=) 1
                 AND pg_catalog.count(p.block_bits) OPERATOR(pg_catalog.=) pg_catalog.count(*) THEN pg_catalog.min(p.block_bits) END AS block_bits,
           pg_catalog.sum(p.memory_bytes)::pg_catalog.int8 AS memory_bytes,
           pg_catalog.sum(p.n_added)::pg_catalog.int8 AS n_added,
           pg_catalog.max(p.load) AS load,
           pg_catalog.max(p.fill) AS fill,
           pg_catalog.sum(p.estimated_keys) AS estimated_keys,
           pg_catalog.max(p.theoretical_fp) AS theoretical_fp,
           pg_catalog.sum(p.probes)::pg_catalog.int8 AS probes,
           pg_catalog.sum(p.probe_hits)::pg_catalog.int8 AS probe_hits,
           pg_catalog.sum(p.checks)::pg_catalog.int8 AS checks,
           pg_catalog.sum(p.shortcuts)::pg_catalog.int8 AS shortcuts,
           pg_catalog.sum(p.source_lookups)::pg_catalog.int8 AS source_lookups,
           pg_catalog.sum(p.source_hits)::pg_catalog.int8 AS source_hits,
           pg_catalog.sum(p.fallbacks)::pg_catalog.int8 AS fallbacks,
           pg_catalog.min(p.built_at) AS built_at,
           pg_catalog.max(p.build_seconds) AS build_seconds,
           pg_catalog.count(*) FILTER (WHERE p.status IS DISTINCT FROM 'HEALTHY') AS degraded,
           pg_catalog.min(p.stats_reset) AS stats_reset,
           CASE WHEN pg_catalog.count(DISTINCT p.feed) OPERATOR(pg_catalog.=) 1
                 AND pg_catalog.count(p.feed) OPERATOR(pg_catalog.=) pg_catalog.count(*) THEN pg_catalog.min(p.feed) END AS feed,
           CASE WHEN pg_catalog.count(DISTINCT p.source) OPERATOR(pg_catalog.=) 1
                 AND pg_catalog.count(p.source) OPERATOR(pg_catalog.=) pg_catalog.count(*) THEN pg_catalog.min(p.source) END AS source,
           pg_catalog.min(p.source_at) AS source_at
      FROM placement p
     GROUP BY p.relation
)
SELECT w.relation, NULL::pg_catalog.int8 AS shardid, NULL::pg_catalog.text AS nodename,
       NULL::pg_catalog.int4 AS nodeport, w.placements, w.ready_placements,
       w.status,
       ARRAY(SELECT DISTINCT x FROM placement p, pg_catalog.unnest(p.reasons) x
              WHERE p.relation::pg_catalog.oid OPERATOR(pg_catalog.=) w.relation::pg_catalog.oid
              ORDER BY x) AS reasons,
       w.state, NULL::pg_catalog.int8 AS generation, w.capacity, w.error_rate, w.bits,
       w.hashes, w.block_bits, w.memory_bytes, w.n_added, w.load, w.fill,
       w.estimated_keys, w.theoretical_fp, w.probes, w.probe_hits,
       CASE WHEN w.probes OPERATOR(pg_catalog.>) 0
            THEN w.probe_hits::pg_catalog.float8 OPERATOR(pg_catalog./) w.probes
            ELSE 0 END AS actual_fp,
       w.checks, w.shortcuts, w.source_lookups, w.source_hits, w.fallbacks,
       CASE WHEN w.source_lookups OPERATOR(pg_catalog.-) w.source_hits OPERATOR(pg_catalog.+) w.shortcuts OPERATOR(pg_catalog.>) 0
            THEN (w.source_lookups OPERATOR(pg_catalog.-) w.source_hits)::pg_catalog.float8 OPERATOR(pg_catalog./)
                 (w.source_lookups OPERATOR(pg_catalog.-) w.source_hits OPERATOR(pg_catalog.+) w.shortcuts)
            ELSE 0 END AS observed_fp,
       w.built_at, w.build_seconds, NULL::pg_catalog.int4 AS build_workers,
       CASE WHEN w.degraded OPERATOR(pg_catalog.>) 0 THEN
            pg_catalog.format('%s of its %s placements are DEGRADED: their rows say why', w.degraded, w.placements)
       END AS advice,
       NULL::pg_catalog.text AS last_error, w.stats_reset, w.feed, w.source, w.source_at
  FROM whole w
UNION ALL
SELECT p.relation, p.shardid, p.nodename, p.nodeport, 1::pg_catalog.int8,
       (p.state OPERATOR(pg_catalog.=) 'ready')::pg_catalog.int4::pg_catalog.int8,
       p.status, p.reasons, p.state, p.generation, p.capacity, p.error_rate, p.bits,
       p.hashes, p.block_bits, p.memory_bytes, p.n_added, p.load, p.fill,
       p.estimated_keys, p.theoretical_fp, p.probes, p.probe_hits, p.actual_fp,
       p.checks, p.shortcuts, p.source_lookups, p.source_hits, p.fallbacks,
       p.observed_fp, p.built_at, p.build_seconds, p.build_workers, p.advice,
       p.last_error, p.stats_reset, p.feed, p.source, p.source_at
  FROM placement p;

GRANT SELECT ON @extschema@.bloomguard_distributed_health TO PUBLIC;
