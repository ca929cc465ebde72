-- coverage breaks: whenever rows can reach a guarded table without the
-- trigger, or the key changes meaning, the guard must stop answering
-- 'absent' until a rebuild, even after the trigger is enabled again.
CREATE EXTENSION bloomguard;

\i sql/include/present_but_absent.sql

-- DISABLE TRIGGER by name, then ENABLE ALWAYS again
CREATE TABLE cov (id int PRIMARY KEY);
INSERT INTO cov SELECT generate_series(1, 100);
SELECT bloomguard_attach('cov');
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
ALTER TABLE cov DISABLE TRIGGER bloomguard;
SELECT state, last_error FROM bloomguard_health WHERE relation = 'cov'::regclass;
INSERT INTO cov SELECT generate_series(1001, 1100);
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
SELECT state, status, reasons FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT present_but_absent('cov');
SELECT bloomguard_check('cov', 1050) AS check_1050, guarded_exists('cov', 1050) AS found_1050;
SELECT bloomguard_rebuild('cov');
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT present_but_absent('cov');
SELECT bloomguard_check('cov', 1050);

-- DISABLE TRIGGER USER and ALL (what pg_restore --disable-triggers does)
ALTER TABLE cov DISABLE TRIGGER USER;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
ALTER TABLE cov ENABLE TRIGGER USER;
SELECT bloomguard_rebuild('cov');  -- refused: the trigger is enabled, but not ALWAYS
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
SELECT bloomguard_rebuild('cov');
ALTER TABLE cov DISABLE TRIGGER ALL;
INSERT INTO cov VALUES (2001);
ALTER TABLE cov ENABLE TRIGGER ALL;
-- ENABLE (not ALWAYS) leaves rows from replicas unfed
SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'cov'::regclass;
SET session_replication_role = replica;
INSERT INTO cov VALUES (2002);
RESET session_replication_role;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT present_but_absent('cov');
SELECT bloomguard_check('cov', 2001) AS c2001, bloomguard_check('cov', 2002) AS c2002;
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
SELECT bloomguard_rebuild('cov');
SELECT state, present_but_absent('cov') FROM bloomguard_health WHERE relation = 'cov'::regclass;

-- a rolled-back DISABLE changes nothing: its lock kept other writers out
BEGIN;
ALTER TABLE cov DISABLE TRIGGER bloomguard;
INSERT INTO cov VALUES (2501);
-- this transaction wrote the table: its lookups do not use the filter
SELECT bloomguard_check('cov', 2501), guarded_exists('cov', 2501);
ROLLBACK;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
-- the same in a subtransaction that is rolled back
BEGIN;
SAVEPOINT a;
ALTER TABLE cov DISABLE TRIGGER bloomguard;
ROLLBACK TO SAVEPOINT a;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
-- but a committed one, inside a transaction, breaks trust when it commits
BEGIN;
ALTER TABLE cov DISABLE TRIGGER bloomguard;
INSERT INTO cov VALUES (2502);
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT bloomguard_check('cov', 2502), guarded_exists('cov', 2502);
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT bloomguard_check('cov', 2502), guarded_exists('cov', 2502);
SELECT bloomguard_rebuild('cov');
-- a prepared one breaks trust at PREPARE
BEGIN;
ALTER TABLE cov DISABLE TRIGGER bloomguard;
PREPARE TRANSACTION 'cov_disable';
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
ROLLBACK PREPARED 'cov_disable';
SELECT bloomguard_rebuild('cov');

-- renaming the trigger
ALTER TRIGGER bloomguard ON cov RENAME TO something_else;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
INSERT INTO cov VALUES (3001);
SELECT bloomguard_check('cov', 3001) <> 'absent' AS not_absent, guarded_exists('cov', 3001);
-- the feed is known by its function and shape, not its name (Citus
-- renames the triggers it copies): a rebuild trusts it under the new name
SELECT feed FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT bloomguard_rebuild('cov');
SELECT state, feed FROM bloomguard_health WHERE relation = 'cov'::regclass;
INSERT INTO cov VALUES (3002);
SELECT bloomguard_check('cov', 3002) <> 'absent' AS not_absent, guarded_exists('cov', 3002),
       bloomguard_check('cov', -3002) AS never_written;
-- and renaming it again untrusts it again
ALTER TRIGGER something_else ON cov RENAME TO bloomguard;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT bloomguard_rebuild('cov');
-- a copy of the feed under another name, as Citus puts on a shard, is
-- adopted by attach; a second copy is judged with it, and detach drops
-- both
CREATE TABLE cov_copy (id int PRIMARY KEY);
INSERT INTO cov_copy SELECT generate_series(1, 100);
CREATE TRIGGER bloomguard_102008 AFTER INSERT OR UPDATE ON cov_copy
  FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger();
ALTER TABLE cov_copy ENABLE ALWAYS TRIGGER bloomguard_102008;
CREATE TRIGGER a_disabled_copy AFTER INSERT OR UPDATE ON cov_copy
  FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger();
ALTER TABLE cov_copy DISABLE TRIGGER a_disabled_copy;
SELECT bloomguard_attach('cov_copy');
SELECT state, feed FROM bloomguard_health WHERE relation = 'cov_copy'::regclass;
SELECT guarded_exists('cov_copy', 100), bloomguard_check('cov_copy', 100) <> 'absent' AS not_absent,
       bloomguard_check('cov_copy', -1) AS never_written;
-- the enabled copy disabled: the disabled one is no feed either
ALTER TABLE cov_copy DISABLE TRIGGER bloomguard_102008;
SELECT state, feed FROM bloomguard_health WHERE relation = 'cov_copy'::regclass;
INSERT INTO cov_copy VALUES (101);
SELECT bloomguard_check('cov_copy', 101), guarded_exists('cov_copy', 101);
SELECT bloomguard_detach('cov_copy');
SELECT tgname FROM pg_trigger WHERE tgrelid = 'cov_copy'::regclass;
DROP TABLE cov_copy;

-- CREATE OR REPLACE TRIGGER with a WHEN clause (or another function, or
-- UPDATE OF) is not the feed: untrusted, and a rebuild refuses it
CREATE OR REPLACE TRIGGER bloomguard AFTER INSERT OR UPDATE OF id ON cov
  FOR EACH ROW WHEN (new.id < 0) EXECUTE FUNCTION bloomguard_trigger();
SELECT state, last_error FROM bloomguard_health WHERE relation = 'cov'::regclass;
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
INSERT INTO cov VALUES (3501);
SELECT bloomguard_check('cov', 3501), guarded_exists('cov', 3501);
SELECT bloomguard_rebuild('cov');  -- refused: not the trigger attach made
CREATE OR REPLACE TRIGGER bloomguard AFTER INSERT OR UPDATE ON cov
  FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger();
ALTER TABLE cov ENABLE ALWAYS TRIGGER bloomguard;
SELECT bloomguard_rebuild('cov');
SELECT state, bloomguard_check('cov', 3501) FROM bloomguard_health WHERE relation = 'cov'::regclass;

-- DROP TRIGGER
DROP TRIGGER bloomguard ON cov;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
INSERT INTO cov VALUES (4001);
SELECT bloomguard_check('cov', 4001), guarded_exists('cov', 4001);
SELECT bloomguard_rebuild('cov');  -- refused: no trigger
SELECT bloomguard_detach('cov');
SELECT count(*) FROM bloomguard_guards WHERE relation = 'cov'::regclass;

-- changing the key's type: the filter's hashes no longer mean anything
SELECT bloomguard_attach('cov');
ALTER TABLE cov ALTER COLUMN id TYPE bigint;
SELECT bloomguard_check('cov', 1::bigint) AS after_type_change, guarded_exists('cov', 1::bigint);
SELECT state, last_error FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT present_but_absent('cov');
SELECT bloomguard_rebuild('cov');
SELECT state, present_but_absent('cov') FROM bloomguard_health WHERE relation = 'cov'::regclass;

-- replacing the primary key with one on other columns
ALTER TABLE cov ADD COLUMN other int;
UPDATE cov SET other = id * 2;
ALTER TABLE cov DROP CONSTRAINT cov_pkey;
SELECT bloomguard_check('cov', 1) AS no_key;  -- no primary key any more
INSERT INTO cov VALUES (5001, 5002);  -- the trigger does not fail the write
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
ALTER TABLE cov ADD PRIMARY KEY (other);
SELECT bloomguard_check('cov', 5002), guarded_exists('cov', 5002), guarded_exists('cov', 2);
SELECT bloomguard_rebuild('cov');
SELECT count(*) FILTER (WHERE bloomguard_check('cov', other) = 'absent' OR NOT guarded_exists('cov', other)) FROM cov;

-- REINDEX CONCURRENTLY gives the key a new index: untrusted until rebuilt
REINDEX INDEX CONCURRENTLY cov_pkey;
SELECT bloomguard_check('cov', 2) AS after_reindex;
SELECT state FROM bloomguard_health WHERE relation = 'cov'::regclass;
SELECT bloomguard_rebuild('cov');
-- a plain REINDEX keeps the index and the filter
REINDEX INDEX cov_pkey;
SELECT state, bloomguard_check('cov', 2) FROM bloomguard_health WHERE relation = 'cov'::regclass;

-- TRUNCATE needs nothing; a rolled-back TRUNCATE leaves every key found
BEGIN;
TRUNCATE cov;
ROLLBACK;
SELECT state, count(*) FILTER (WHERE bloomguard_check('cov', other) = 'absent') AS absent
  FROM bloomguard_health, cov WHERE relation = 'cov'::regclass GROUP BY state;

-- DROP TABLE frees the filter and the registry row
SELECT count(*) AS slots_before FROM bloomguard_guard_stats();
DROP TABLE cov;
SELECT count(*) AS slots_after FROM bloomguard_guard_stats();
SELECT count(*) AS registered FROM bloomguard_guards;

-- a DROP TABLE that rolls back keeps everything
CREATE TABLE cov2 (id int PRIMARY KEY);
INSERT INTO cov2 SELECT generate_series(1, 10);
SELECT bloomguard_attach('cov2');
BEGIN;
DROP TABLE cov2;
ROLLBACK;
SELECT state FROM bloomguard_health WHERE relation = 'cov2'::regclass;
SELECT present_but_absent('cov2');

-- DROP SCHEMA ... CASCADE takes guarded tables with it
CREATE SCHEMA s;
CREATE TABLE s.t (id int PRIMARY KEY);
SELECT bloomguard_attach('s.t');
DROP SCHEMA s CASCADE;
SELECT count(*) FROM bloomguard_guards;

-- DROP DATABASE frees the filters of its guards (memory_in_use is cluster-wide)
SELECT memory_in_use AS mem_before, current_database() AS origdb
  FROM bloomguard_guard_stats() LIMIT 1 \gset
CREATE DATABASE bg_dropme;
\c bg_dropme
CREATE EXTENSION bloomguard;
CREATE TABLE big_elsewhere (id int PRIMARY KEY);
SELECT bloomguard_attach('big_elsewhere', 1000000);
\c :origdb
SELECT memory_in_use > :mem_before AS grew FROM bloomguard_guard_stats() LIMIT 1;
DROP DATABASE bg_dropme;
SELECT memory_in_use = :mem_before AS freed FROM bloomguard_guard_stats() LIMIT 1;

-- DROP EXTENSION needs CASCADE (the triggers depend on it) and frees every filter
DROP EXTENSION bloomguard;
DROP EXTENSION bloomguard CASCADE;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'cov2'::regclass;
CREATE EXTENSION bloomguard;
SELECT count(*) FROM bloomguard_guard_stats();
SELECT guarded_exists('cov2', 5), bloomguard_check('cov2', 5);
DROP TABLE cov2;
DROP FUNCTION present_but_absent(regclass);
DROP EXTENSION bloomguard;
