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
