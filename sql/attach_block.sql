-- bloomguard_attach() inside a transaction block, a savepoint, an exception
-- block, or after its transaction has written: it runs in the caller's
-- transaction, as CREATE INDEX does (attach.c's header)
CREATE EXTENSION bloomguard;

\i sql/include/footprint.sql
-- the shared memory all filters use (there is always a guard: tb)
CREATE FUNCTION mem() RETURNS bigint LANGUAGE sql AS
$$ SELECT memory_in_use FROM bloomguard_guard_stats() LIMIT 1 $$;

-- in a transaction block: the filter is built before the call returns,
-- and writers are kept out until the transaction ends
CREATE TABLE tb (id int PRIMARY KEY, v text);
INSERT INTO tb SELECT g, 'x' FROM generate_series(1, 2000) g;
BEGIN;
SELECT bloomguard_attach('tb');
SELECT state, feed, generation FROM bloomguard_health WHERE relation = 'tb'::regclass;
SELECT mode FROM pg_locks
 WHERE locktype = 'relation' AND relation = 'tb'::regclass AND pid = pg_backend_pid()
 ORDER BY mode;
-- the transaction's own writes after the attach feed the filter
INSERT INTO tb VALUES (5001, 'in the block');
SELECT guarded_exists('tb', 5001) AS found, bloomguard_check('tb', 5001) AS filter;
COMMIT;
SELECT * FROM footprint('tb');
SELECT count(*) FILTER (WHERE bloomguard_check('tb', id) = 'absent') AS wrongly_absent,
       count(*) FILTER (WHERE NOT guarded_exists('tb', id)) AS missing
  FROM tb;
SELECT count(*) FILTER (WHERE bloomguard_check('tb', g) = 'absent') > 900 AS mostly_absent
  FROM generate_series(10001, 11000) g;

-- a table created in the same transaction (a migration tool's DDL), with
-- rows written before the attach (found by the scan) and after it (fed)
BEGIN;
CREATE TABLE tc (id bigint PRIMARY KEY, note text);
INSERT INTO tc SELECT g, 'before' FROM generate_series(1, 1000) g;
SELECT bloomguard_attach('tc');
INSERT INTO tc SELECT g, 'after' FROM generate_series(1001, 1500) g;
UPDATE tc SET id = id + 100000 WHERE id <= 10;
SELECT count(*) AS n,
       count(*) FILTER (WHERE bloomguard_check('tc', id) = 'absent') AS wrongly_absent,
       count(*) FILTER (WHERE NOT guarded_exists('tc', id)) AS missing
  FROM tc;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 'tc'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('tc', id) = 'absent') AS wrongly_absent
  FROM tc;

-- ROLLBACK undoes it all, and frees the filter's memory at once
SELECT mem() AS mem_before \gset
BEGIN;
CREATE TABLE td (id int PRIMARY KEY);
SELECT bloomguard_attach('td', 1000000);
SELECT mem() > :mem_before AS reserved;
ROLLBACK;
SELECT mem() = :mem_before AS freed;
-- of a table that stays
CREATE TABLE te (id int PRIMARY KEY);
INSERT INTO te SELECT generate_series(1, 100);
BEGIN;
SELECT bloomguard_attach('te', 1000000);
ROLLBACK;
SELECT * FROM footprint('te');
SELECT mem() = :mem_before AS freed;
-- and the next writer is not fed into a filter no one serves
INSERT INTO te VALUES (101);
SELECT guarded_exists('te', 101), bloomguard_check('te', 101);

-- a savepoint rolled back frees what an attach in it claimed; the
-- transaction goes on, and can attach again
BEGIN;
SAVEPOINT s1;
SELECT bloomguard_attach('te', 1000000);
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM footprint('te');
SELECT mem() = :mem_before AS freed;
SELECT bloomguard_attach('te');
RELEASE SAVEPOINT s1;
COMMIT;
SELECT state FROM bloomguard_health WHERE relation = 'te'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('te', id) = 'absent') AS wrongly_absent
  FROM te;
-- an attach in a released savepoint is undone with its transaction
CREATE TABLE tf (id int PRIMARY KEY);
INSERT INTO tf SELECT generate_series(1, 100);
SELECT mem() AS mem_before \gset
BEGIN;
SAVEPOINT s1;
SELECT bloomguard_attach('tf', 1000000);
RELEASE SAVEPOINT s1;
ROLLBACK;
SELECT * FROM footprint('tf');
SELECT mem() = :mem_before AS freed;

-- a PL/pgSQL exception block is a subtransaction: it catches attach's
-- errors (an event trigger that guards new tables must not make their DDL
-- fail), and an attach whose block fails later is undone and freed
CREATE TABLE t_nopk (v int);
DO $$ BEGIN PERFORM bloomguard_attach('t_nopk');
EXCEPTION WHEN others THEN RAISE NOTICE 'caught: %', SQLERRM; END $$;
DO $$ BEGIN PERFORM bloomguard_attach('tf', 1000000); RAISE EXCEPTION 'a later error';
EXCEPTION WHEN others THEN RAISE NOTICE 'caught: %', SQLERRM; END $$;
SELECT * FROM footprint('tf');
SELECT mem() = :mem_before AS freed;

-- PREPARE TRANSACTION is refused after an attach, as after touching a
-- temporary table: nothing of ours would run at ROLLBACK PREPARED to free
-- the filter (a detach can be prepared: attach.sql)
BEGIN;
SELECT bloomguard_attach('tf');
PREPARE TRANSACTION 'bg_attach_block';
SELECT * FROM footprint('tf');
SELECT mem() = :mem_before AS freed;
SELECT count(*) FROM pg_prepared_xacts;
-- and after one in a subtransaction that committed
BEGIN;
SAVEPOINT s1;
SELECT bloomguard_attach('tf');
RELEASE SAVEPOINT s1;
PREPARE TRANSACTION 'bg_attach_block';
SELECT * FROM footprint('tf');
-- but not after one that was rolled back
BEGIN;
SAVEPOINT s1;
SELECT bloomguard_attach('tf');
ROLLBACK TO SAVEPOINT s1;
PREPARE TRANSACTION 'bg_attach_block';
ROLLBACK PREPARED 'bg_attach_block';

-- refused in a statement that is still using the table: its rows would
-- not all fire the new trigger
CREATE FUNCTION attach_it(r regclass) RETURNS int LANGUAGE plpgsql AS
$$ BEGIN PERFORM bloomguard_attach(r); RETURN 1; END $$;
BEGIN;
INSERT INTO tf SELECT attach_it('tf');
ROLLBACK;
BEGIN;
SELECT attach_it('tf') FROM tf WHERE id = 1;
ROLLBACK;
SELECT * FROM footprint('tf');
SELECT mem() = :mem_before AS freed;

-- a detach in the same transaction: nothing is left at the commit
BEGIN;
SELECT bloomguard_attach('tf');
SELECT bloomguard_detach('tf');
COMMIT;
SELECT * FROM footprint('tf');
SELECT mem() = :mem_before AS freed;

-- an event trigger that guards every new table with a primary key, as
-- test/core-regress.sh installs one: the CREATE TABLE holds the new table
-- (and has written), so attach runs in its transaction.  attach's own
-- ALTER TABLE fires the event trigger again, which finds the table
-- registered already.
CREATE FUNCTION guard_new_tables() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT DISTINCT c.oid::regclass AS rel
	           FROM pg_event_trigger_ddl_commands() d
	           JOIN pg_class c ON c.oid = d.objid
	          WHERE d.classid = 'pg_class'::regclass AND c.relkind = 'r'
	            AND NOT c.relispartition
	            AND EXISTS (SELECT FROM pg_constraint k
	                         WHERE k.conrelid = c.oid AND k.contype = 'p')
	            AND NOT EXISTS (SELECT FROM bloomguard_guards g WHERE g.relation = c.oid)
	LOOP
		BEGIN
			PERFORM bloomguard_attach(r.rel);
			RAISE NOTICE 'guarded %', r.rel;
		EXCEPTION WHEN others THEN
			RAISE NOTICE 'not guarding %: %', r.rel, SQLERRM;
		END;
	END LOOP;
END $$;
CREATE EVENT TRIGGER guard_new ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE')
  EXECUTE FUNCTION guard_new_tables();
CREATE TABLE tg (id int PRIMARY KEY, v text);
INSERT INTO tg SELECT g, 'x' FROM generate_series(1, 100) g;
SELECT state, feed FROM bloomguard_health WHERE relation = 'tg'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('tg', id) = 'absent') AS wrongly_absent
  FROM tg;
CREATE TABLE th (id int, v text);
INSERT INTO th SELECT g, 'x' FROM generate_series(1, 100) g;
ALTER TABLE th ADD PRIMARY KEY (id);
SELECT state, feed FROM bloomguard_health WHERE relation = 'th'::regclass;
SELECT count(*) FILTER (WHERE bloomguard_check('th', id) = 'absent') AS wrongly_absent
  FROM th;
-- a table that cannot be guarded is created all the same
CREATE TEMP TABLE ttemp (id int PRIMARY KEY);
-- a CREATE TABLE rolled back takes its guard with it
SELECT mem() AS mem_before \gset
BEGIN;
CREATE TABLE ti (id int PRIMARY KEY);
ROLLBACK;
SELECT mem() = :mem_before AS freed;
DROP EVENT TRIGGER guard_new;

-- a partitioned table: the whole tree is locked, every leaf built
BEGIN;
CREATE TABLE pt (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (1000) TO (2000);
INSERT INTO pt SELECT generate_series(0, 1999);
SELECT bloomguard_attach('pt');
SELECT relation, state FROM bloomguard_health WHERE parent = 'pt'::regclass ORDER BY relation::text;
SELECT relation::regclass, mode FROM pg_locks
 WHERE locktype = 'relation' AND relation IN ('pt'::regclass, 'pt1'::regclass, 'pt2'::regclass)
   AND pid = pg_backend_pid() AND mode = 'ShareRowExclusiveLock'
 ORDER BY relation::regclass::text;
COMMIT;
SELECT relation, state FROM bloomguard_health WHERE parent = 'pt'::regclass ORDER BY relation::text;
SELECT count(*) FILTER (WHERE bloomguard_check('pt', id) = 'absent') AS wrongly_absent
  FROM pt;
-- rolled back: nothing is left
SELECT mem() AS mem_before \gset
BEGIN;
CREATE TABLE pq (id int PRIMARY KEY) PARTITION BY HASH (id);
CREATE TABLE pq0 PARTITION OF pq FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE pq1 PARTITION OF pq FOR VALUES WITH (MODULUS 2, REMAINDER 1);
SELECT bloomguard_attach('pq', 100000);
SELECT count(*) AS leaves FROM bloomguard_health WHERE parent = 'pq'::regclass;
ROLLBACK;
SELECT mem() = :mem_before AS freed;

SELECT bloomguard_detach('pt');
SELECT bloomguard_detach('tb');
SELECT bloomguard_detach('tc');
SELECT bloomguard_detach('te');
SELECT bloomguard_detach('tg');
SELECT bloomguard_detach('th');
DROP TABLE pt, tb, tc, te, tf, tg, th, t_nopk;
SELECT count(*) FROM bloomguard_guards;
DROP FUNCTION footprint(regclass), mem(), attach_it(regclass), guard_new_tables();
DROP EXTENSION bloomguard;
