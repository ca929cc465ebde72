-- bad input: every error is clear, and a failed call changes nothing
CREATE EXTENSION bloomguard;

-- every failed call must leave a table's footprint as it was
\i sql/include/footprint.sql
-- runs a command and shows its error as text, for errors whose DETAIL
-- depends on other guards of the cluster (shared memory in use)
CREATE FUNCTION show_error(cmd text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    m text;
    d text;
    h text;
BEGIN
    EXECUTE cmd;
    RETURN NEXT 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    RETURN NEXT 'ERROR:  ' || m;
    RETURN NEXT 'DETAIL:  ' || regexp_replace(d, '; \d+ of', '; N of');
    RETURN NEXT 'HINT:  ' || h;
END
$$;

-- a table without a primary key
CREATE TABLE t_nopk (id int UNIQUE NOT NULL);
SELECT bloomguard_attach('t_nopk');
SELECT * FROM footprint('t_nopk');

-- a view
CREATE TABLE t_base (id int PRIMARY KEY);
INSERT INTO t_base SELECT generate_series(1, 100);
CREATE VIEW v_base AS SELECT * FROM t_base;
SELECT bloomguard_attach('v_base');
SELECT * FROM footprint('v_base');

-- a materialized view
CREATE MATERIALIZED VIEW mv_base AS SELECT * FROM t_base;
SELECT bloomguard_attach('mv_base');
SELECT * FROM footprint('mv_base');

-- a sequence
CREATE SEQUENCE s_base;
SELECT bloomguard_attach('s_base');
SELECT * FROM footprint('s_base');

-- an index
SELECT bloomguard_attach('t_base_pkey');
SELECT * FROM footprint('t_base_pkey');

-- a foreign table
CREATE FOREIGN DATA WRAPPER dummy;
CREATE SERVER s_dummy FOREIGN DATA WRAPPER dummy;
CREATE FOREIGN TABLE ft (id int NOT NULL) SERVER s_dummy;
SELECT bloomguard_attach('ft');
SELECT * FROM footprint('ft');

-- a temporary table
CREATE TEMP TABLE t_temp (id int PRIMARY KEY);
SELECT bloomguard_attach('t_temp');
SELECT * FROM footprint('t_temp');

-- a partitioned table one of whose partitions has a trigger of our name:
-- nothing is changed, and the partition's own trigger stays untouched
CREATE TABLE t_part (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE t_part_1 PARTITION OF t_part FOR VALUES FROM (0) TO (1000);
CREATE FUNCTION t_part_noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
CREATE TRIGGER bloomguard AFTER INSERT ON t_part_1 FOR EACH ROW EXECUTE FUNCTION t_part_noop();
SELECT bloomguard_attach('t_part');
SELECT * FROM footprint('t_part');
SELECT * FROM footprint('t_part_1');

-- a table already guarded: the second attach fails, the first guard serves on
SELECT bloomguard_attach('t_base', 1000, 0.01);
SELECT bloomguard_attach('t_base');
SELECT bloomguard_attach('t_base', 5000, 0.001);
SELECT * FROM footprint('t_base');
SELECT capacity, error_rate FROM bloomguard_guards WHERE relation = 't_base'::regclass;
SELECT state, generation, capacity, error_rate FROM bloomguard_health
 WHERE relation = 't_base'::regclass;

-- a table that already has a trigger of its own named "bloomguard"
CREATE TABLE t_trig (id int PRIMARY KEY);
CREATE FUNCTION noop_trigger() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER bloomguard BEFORE INSERT ON t_trig FOR EACH ROW EXECUTE FUNCTION noop_trigger();
SELECT bloomguard_attach('t_trig');
SELECT * FROM footprint('t_trig');
SELECT tgname, tgfoid::regproc, tgenabled FROM pg_trigger WHERE tgrelid = 't_trig'::regclass;

-- bad capacity and error rate
CREATE TABLE t_size (id int PRIMARY KEY);
SELECT bloomguard_attach('t_size', 0);
SELECT bloomguard_attach('t_size', -1);
SELECT bloomguard_attach('t_size', 100, 0);
SELECT bloomguard_attach('t_size', 100, 1);
SELECT bloomguard_attach('t_size', 100, 1.5);
SELECT bloomguard_attach('t_size', 100, -0.1);
SELECT bloomguard_attach('t_size', 100, 'NaN');
SELECT * FROM footprint('t_size');

-- a NULL relation
SELECT bloomguard_attach(NULL);
SELECT bloomguard_rebuild(NULL);
-- (the functions declared STRICT just return NULL)
SELECT bloomguard_detach(NULL) IS NULL AS detach_null,
       bloomguard_probe(NULL) IS NULL AS probe_null,
       guarded_exists(NULL, 1) IS NULL AS exists_null,
       bloomguard_check(NULL, 1) IS NULL AS check_null;
SELECT count(*) FROM bloomguard_guards;

-- attach inside a transaction block runs in the transaction, as CREATE
-- INDEX does (attach_block.sql): a rollback leaves nothing behind
BEGIN;
SELECT bloomguard_attach('t_size');
ROLLBACK;
SELECT * FROM footprint('t_size');
-- an implicit transaction block (several statements in one query) too,
-- and it commits with the block
SELECT 1 AS one \; SELECT bloomguard_attach('t_size');
SELECT * FROM footprint('t_size');
SELECT bloomguard_detach('t_size');
-- refused in a statement that writes the table: its rows would not all
-- fire the new trigger
CREATE FUNCTION attach_it(r regclass) RETURNS int LANGUAGE plpgsql AS
$$ BEGIN PERFORM bloomguard_attach(r); RETURN 1; END $$;
INSERT INTO t_size SELECT attach_it('t_size');
SELECT * FROM footprint('t_size');
SELECT count(*) FROM t_size;

-- detach and rebuild of a table that is not guarded
SELECT bloomguard_detach('t_size');
SELECT bloomguard_rebuild('t_size');
SELECT bloomguard_rebuild('t_nopk');
SELECT * FROM footprint('t_size');

-- wrong number of key values
CREATE TABLE t_two (a int, b text, PRIMARY KEY (a, b));
INSERT INTO t_two VALUES (1, 'x');
SELECT guarded_exists('t_base', 1, 2);
SELECT bloomguard_check('t_base', 1, 2);
SELECT guarded_exists('t_two', 1);
SELECT bloomguard_check('t_two', 1);
SELECT guarded_exists('t_two', 1, 'x', 3);
SELECT guarded_exists('t_two', VARIADIC ARRAY[1]);
-- no key at all: no such function
SELECT guarded_exists('t_base');
-- and the right number works
SELECT guarded_exists('t_two', 1, 'x') AS guarded,
       EXISTS (SELECT 1 FROM t_two WHERE (a, b) = (1, 'x')) AS plain;

-- a key argument that cannot be compared with the key: an error, as for
-- the plain query, but bloomguard's, naming the call and not its internal
-- query; the filter alone cannot say anything about it
SELECT guarded_exists('t_base', point(1, 2));
SELECT EXISTS (SELECT 1 FROM t_base WHERE id = point(1, 2));
SELECT bloomguard_check('t_base', point(1, 2));

-- lookups in things that are not tables
SELECT guarded_exists('v_base', 1);
SELECT guarded_exists('t_nopk', 1);

-- rebuild with bad sizing: error, and the old filter keeps serving
SELECT bloomguard_rebuild('t_base', 0);
SELECT bloomguard_rebuild('t_base', -5);
SELECT bloomguard_rebuild('t_base', 1000, 0);
SELECT bloomguard_rebuild('t_base', 1000, 1);
SELECT bloomguard_rebuild('t_base', 1000, 'NaN');
SELECT state, generation, capacity, error_rate FROM bloomguard_health
 WHERE relation = 't_base'::regclass;
SELECT capacity, error_rate FROM bloomguard_guards WHERE relation = 't_base'::regclass;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_base', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_base', g) <> 'maybe') AS not_maybe
  FROM generate_series(1, 100) g;

-- probe with n <= 0
SELECT bloomguard_probe('t_base', 0);
SELECT bloomguard_probe('t_base', -1);
SELECT probes FROM bloomguard_health WHERE relation = 't_base'::regclass;
-- probe of a table without a guard
SELECT bloomguard_probe('t_size');

-- a filter larger than bloomguard.max_memory (128MB): capacity 10^9 at
-- 0.01 needs about 1.2GB.  The DETAIL line says how much memory other
-- guards use, which depends on the whole cluster, so attach (which cannot
-- run in a function) shows its error tersely, and rebuild through
-- show_error() with that number masked.
SHOW bloomguard.max_memory;
\set VERBOSITY terse
SELECT bloomguard_attach('t_size', 1000000000, 0.01);
\set VERBOSITY default
SELECT * FROM footprint('t_size');
SELECT count(*) FROM bloomguard_health WHERE relation = 't_size'::regclass;
SELECT show_error($$SELECT bloomguard_rebuild('t_base', 1000000000, 0.01)$$);
SELECT state, generation, capacity, error_rate FROM bloomguard_health
 WHERE relation = 't_base'::regclass;
SELECT capacity, error_rate FROM bloomguard_guards WHERE relation = 't_base'::regclass;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_base', g)) AS missing
  FROM generate_series(1, 100) g;

-- a filter beyond the largest possible bit array (2^40 bits)
CREATE TABLE t_huge (id int PRIMARY KEY);
SELECT bloomguard_attach('t_huge', 1000000000000000, 0.01);
SELECT * FROM footprint('t_huge');
SELECT bloomguard_rebuild('t_base', 1000000000000000);
SELECT state, generation, capacity FROM bloomguard_health WHERE relation = 't_base'::regclass;

-- clean up (if an attach above wrongly left a guard, remove it quietly)
DO $$ BEGIN PERFORM bloomguard_detach(relation) FROM bloomguard_guards; END $$;
SELECT count(*) FROM bloomguard_guards;
DROP TABLE t_nopk, t_base, t_trig, t_size, t_huge, t_two, t_part, t_temp CASCADE;
DROP FUNCTION t_part_noop();
DROP FOREIGN TABLE ft;
DROP SERVER s_dummy;
DROP FOREIGN DATA WRAPPER dummy;
DROP SEQUENCE s_base;
DROP FUNCTION footprint(regclass), show_error(text), noop_trigger(), attach_it(regclass);
DROP EXTENSION bloomguard;
