-- cases an adversarial run found: each must answer exactly as EXISTS does,
-- never 'absent' for a present key, and leave nothing behind
CREATE EXTENSION bloomguard;

\i sql/include/present_but_absent.sql

-- replacing the feed function (CREATE OR REPLACE reaches the object access
-- hook as a creation of the existing function) breaks every guard
CREATE TABLE fr (id int PRIMARY KEY);
INSERT INTO fr SELECT generate_series(1, 100);
SELECT bloomguard_attach('fr');
CREATE TABLE fr2 (id int PRIMARY KEY);
SELECT bloomguard_attach('fr2');
BEGIN;
CREATE OR REPLACE FUNCTION bloomguard_trigger() RETURNS trigger
LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
INSERT INTO fr VALUES (5000);
-- not our function any more: this transaction's lookups do not trust it
SELECT guarded_exists('fr', 5000), bloomguard_check('fr', 5000);
COMMIT;
SELECT relation, state, feed, last_error FROM bloomguard_health ORDER BY relation::text;
INSERT INTO fr VALUES (5001);
SELECT guarded_exists('fr', 5000) AS g5000, guarded_exists('fr', 5001) AS g5001,
       bloomguard_check('fr', 5000) AS c5000, present_but_absent('fr');
-- putting the real one back does not bring back the keys it missed
CREATE OR REPLACE FUNCTION bloomguard_trigger() RETURNS trigger
AS '$libdir/bloomguard', 'bloomguard_trigger' LANGUAGE C;
SELECT relation, state, feed FROM bloomguard_health ORDER BY relation::text;
SELECT bloomguard_check('fr', 5000), guarded_exists('fr', 5000), present_but_absent('fr');
SELECT bloomguard_rebuild('fr');
SELECT bloomguard_rebuild('fr2');
SELECT relation, state, feed FROM bloomguard_health ORDER BY relation::text;
SELECT bloomguard_check('fr', 5000), bloomguard_check('fr', 5001), present_but_absent('fr');
-- a rolled-back replacement changes nothing
BEGIN;
CREATE OR REPLACE FUNCTION bloomguard_trigger() RETURNS trigger
LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
ROLLBACK;
SELECT relation, state FROM bloomguard_health ORDER BY relation::text;
-- ALTER FUNCTION on it counts too
ALTER FUNCTION bloomguard_trigger() SET search_path = pg_catalog;
SELECT relation, state, last_error FROM bloomguard_health ORDER BY relation::text;
ALTER FUNCTION bloomguard_trigger() RESET search_path;
SELECT bloomguard_rebuild('fr');
SELECT bloomguard_rebuild('fr2');
-- a superuser who rewrites the function's catalog row by hand (no DDL, so
-- no hook sees it): while the row is not ours, the filter is not used;
-- and after the row is put back, the keys it missed stay missed, so the
-- filter is not used until a rebuild (the row's version changed)
UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql'),
       prosrc = 'BEGIN RETURN NULL; END', probin = NULL
 WHERE oid = 'bloomguard_trigger()'::regprocedure;
INSERT INTO fr VALUES (5002);
SELECT guarded_exists('fr', 5002), bloomguard_check('fr', 5002);
UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'c'),
       prosrc = 'bloomguard_trigger', probin = '$libdir/bloomguard'
 WHERE oid = 'bloomguard_trigger()'::regprocedure;
SELECT guarded_exists('fr', 5002), bloomguard_check('fr', 5002);
SELECT count(*) FROM fr WHERE id = 5002;
SELECT relation, state, last_error FROM bloomguard_health ORDER BY relation::text;
SELECT bloomguard_rebuild('fr');
SELECT bloomguard_rebuild('fr2');
SELECT guarded_exists('fr', 5002), bloomguard_check('fr', 5002);
-- a feed function of the same name in another schema is not ours
CREATE SCHEMA other;
CREATE FUNCTION other.bloomguard_trigger() RETURNS trigger
AS '$libdir/bloomguard', 'bloomguard_trigger' LANGUAGE C;
CREATE OR REPLACE FUNCTION other.bloomguard_trigger() RETURNS trigger
AS '$libdir/bloomguard', 'bloomguard_trigger' LANGUAGE C;
SELECT relation, state FROM bloomguard_health ORDER BY relation::text;
DROP SCHEMA other CASCADE;
SELECT bloomguard_detach('fr2');
DROP TABLE fr2;

-- attach waits for its feed worker in a way the deadlock detector sees:
-- called from a DO block whose transaction holds what the worker needs, it
-- fails with "deadlock detected" instead of hanging
SET statement_timeout = '30s';
SET deadlock_timeout = '100ms';
\set VERBOSITY terse
CREATE TABLE dl (id int PRIMARY KEY);
-- the worker registers the guard, which this lock keeps it from doing
DO $$ BEGIN LOCK TABLE bloomguard_guards IN SHARE MODE; PERFORM bloomguard_attach('dl'); END $$;
\set VERBOSITY default
RESET deadlock_timeout;
RESET statement_timeout;
SELECT count(*) FROM bloomguard_guards WHERE relation = 'dl'::regclass;
-- a caller whose transaction has written (the GRANT updated dl's pg_class
-- row, which CREATE TRIGGER must update too), or holds a lock on the table
-- that writers conflict with, would be waited for by the worker: attach
-- runs in its transaction instead, as CREATE INDEX does (attach_block.sql)
DO $$ BEGIN GRANT SELECT ON dl TO PUBLIC; PERFORM bloomguard_attach('dl'); END $$;
SELECT state FROM bloomguard_health WHERE relation = 'dl'::regclass;
SELECT bloomguard_detach('dl');
DO $$ BEGIN LOCK TABLE dl IN ACCESS EXCLUSIVE MODE; PERFORM bloomguard_attach('dl'); END $$;
SELECT state FROM bloomguard_health WHERE relation = 'dl'::regclass;
SELECT bloomguard_detach('dl');
-- nothing was left behind: a top-level attach works
SELECT bloomguard_attach('dl');
SELECT state FROM bloomguard_health WHERE relation = 'dl'::regclass;
SELECT bloomguard_detach('dl');
DROP TABLE dl;

-- DROP TABLE under session_replication_role = replica, where event
-- triggers do not fire: the registry row goes with the table
SELECT count(*) AS registered, (SELECT memory_in_use FROM bloomguard_guard_stats() LIMIT 1) AS mem
  FROM bloomguard_guards \gset before_
CREATE TABLE rep (id int PRIMARY KEY);
SELECT bloomguard_attach('rep', 50000, 0.01);
SET session_replication_role = replica;
DROP TABLE rep;
RESET session_replication_role;
SELECT count(*) = :before_registered AS unregistered FROM bloomguard_guards;
SELECT memory_in_use = :before_mem AS freed FROM bloomguard_guard_stats() LIMIT 1;
-- a rolled-back drop keeps the row and the filter
CREATE TABLE rep (id int PRIMARY KEY);
SELECT bloomguard_attach('rep', 50000, 0.01);
BEGIN;
DROP TABLE rep;
ROLLBACK;
SELECT state FROM bloomguard_health WHERE relation = 'rep'::regclass;
-- so does a drop in a rolled-back subtransaction
BEGIN;
SAVEPOINT s;
DROP TABLE rep;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 'rep'::regclass;
-- DROP SCHEMA ... CASCADE takes the guard with it
CREATE SCHEMA gone;
CREATE TABLE gone.t (id int PRIMARY KEY);
SELECT bloomguard_attach('gone.t', 50000, 0.01);
DROP SCHEMA gone CASCADE;
SELECT count(*) AS registered FROM bloomguard_guards;
DROP TABLE rep;
SELECT count(*) = :before_registered AS unregistered FROM bloomguard_guards;
SELECT memory_in_use = :before_mem AS freed FROM bloomguard_guard_stats() LIMIT 1;
-- a row left behind by an older version (a table that is gone) is not
-- shown, and bloomguard_detach() removes it
INSERT INTO bloomguard_guards (relation, capacity, error_rate) VALUES (4000000000, 1000, 0.01);
SELECT count(*) FROM bloomguard_health WHERE relation::oid = 4000000000;
SELECT bloomguard_detach(4000000000);
SELECT count(*) FROM bloomguard_guards WHERE relation::oid = 4000000000;
SELECT bloomguard_detach(4000000000);

-- a DEFERRABLE primary key is a key: it can hold duplicates inside a
-- transaction, which a filter does not mind
CREATE TABLE dpk (id int PRIMARY KEY DEFERRABLE INITIALLY DEFERRED, v text);
INSERT INTO dpk SELECT g, 'v' FROM generate_series(1, 100) g;
SELECT guarded_exists('dpk', 5), guarded_exists('dpk', 500);
SELECT bloomguard_attach('dpk');
SELECT state FROM bloomguard_health WHERE relation = 'dpk'::regclass;
SELECT guarded_exists('dpk', 5), guarded_exists('dpk', 500), bloomguard_check('dpk', 500),
       present_but_absent('dpk');
BEGIN;
INSERT INTO dpk VALUES (5, 'dup'), (600, 'new');
SELECT guarded_exists('dpk', 5), guarded_exists('dpk', 600),
       (SELECT count(*) FROM dpk WHERE id = 5) AS copies;
ROLLBACK;
INSERT INTO dpk VALUES (700, 'new');
SELECT guarded_exists('dpk', 700), bloomguard_check('dpk', 700), present_but_absent('dpk');
SELECT bloomguard_detach('dpk');
DROP TABLE dpk;

-- relhassubclass stays set after the last child goes (until VACUUM or
-- ANALYZE): the table has no children, so it can be guarded and trusted
CREATE TABLE par (id int PRIMARY KEY);
CREATE TABLE kid () INHERITS (par);
ALTER TABLE kid NO INHERIT par;
SELECT relhassubclass FROM pg_class WHERE oid = 'par'::regclass;
INSERT INTO par SELECT generate_series(1, 50);
SELECT bloomguard_attach('par');
SELECT state FROM bloomguard_health WHERE relation = 'par'::regclass;
SELECT bloomguard_check('par', 5000), guarded_exists('par', 5000), present_but_absent('par');
-- a real child again: the filter stops answering, and a rebuild says why
ALTER TABLE kid INHERIT par;
INSERT INTO kid VALUES (6000);
SELECT bloomguard_check('par', 6000), guarded_exists('par', 6000);
SELECT bloomguard_rebuild('par');
DROP TABLE kid;
SELECT bloomguard_detach('par');
DROP TABLE par;

-- the backend's key cache stays bounded: looking up and dropping many
-- tables leaves no description behind for each
CREATE FUNCTION key_cache_bytes() RETURNS bigint LANGUAGE sql AS $$
  SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
   WHERE name LIKE 'bloomguard key%' OR ident LIKE 'bloomguard key%' $$;
SELECT guarded_exists('fr', 1);
SELECT key_cache_bytes() AS cache_before \gset
-- (procedures that commit as they go: one transaction would hold a lock on
-- every table it created)
CREATE PROCEDURE churn_tables(n int) LANGUAGE plpgsql AS $$
DECLARE r boolean;
BEGIN
  FOR i IN 1 .. n LOOP
    EXECUTE 'CREATE TEMP TABLE kc (id int PRIMARY KEY)';
    EXECUTE 'SELECT guarded_exists(''kc'', 1)' INTO r;
    EXECUTE 'DROP TABLE kc';
    IF i % 100 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
CALL churn_tables(3000);
SELECT key_cache_bytes() - :cache_before < 100000 AS bounded_after_drops;
-- and when many tables stay, the cache stops growing at its limit (1000
-- tables): looking up 1500 more tables costs it no more than the first
-- 1500.  The tables are all made first, so that no invalidation of a
-- table being created evicts the descriptions looked up (which would keep
-- the cache small with no bound at all).
-- for_tables(a, b, stmt): runs stmt with %s replaced by each of a .. b,
-- committing every 100
CREATE PROCEDURE for_tables(a int, b int, stmt text) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN a .. b LOOP
    EXECUTE format(stmt, i);
    IF i % 100 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
CALL for_tables(1, 3000, 'CREATE TEMP TABLE kcn%s (id int PRIMARY KEY)');
CALL for_tables(1, 1500, 'SELECT guarded_exists(''kcn%s'', 1)');
SELECT key_cache_bytes() AS cache_1500 \gset
CALL for_tables(1501, 3000, 'SELECT guarded_exists(''kcn%s'', 1)');
SELECT key_cache_bytes() - :cache_1500 < :cache_1500 / 10 AS stopped_growing;
CALL for_tables(1, 3000, 'DROP TABLE kcn%s');
SELECT guarded_exists('fr', 1), guarded_exists('fr', 100000);
DISCARD TEMP;

SELECT bloomguard_detach('fr');
DROP TABLE fr;
DROP FUNCTION key_cache_bytes();
DROP PROCEDURE for_tables(int, int, text), churn_tables(int);
DROP FUNCTION present_but_absent(regclass);
DROP EXTENSION bloomguard;
