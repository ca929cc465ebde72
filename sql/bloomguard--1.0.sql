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
GRANT SELECT ON @extschema@.bloomguard_guards TO PUBLIC;

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
