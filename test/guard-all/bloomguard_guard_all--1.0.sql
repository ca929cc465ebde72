-- bloomguard_guard_all 1.0: test/core-regress.sh loads it into the
-- database the PostgreSQL regression suite runs in (pg_regress
-- --load-extension, after bloomguard), so that every table that gets a
-- primary key is guarded from its creation: CREATE TABLE ... PRIMARY KEY,
-- ALTER TABLE ... ADD PRIMARY KEY.  bloomguard_attach() runs in the
-- command's transaction (attach.c's header: the command holds the new
-- table); an exception block catches its errors, so that the command goes
-- on as without the guard, and each outcome goes to the server log, not
-- to the client (the suite compares what the client sees).  Not guarded:
-- partitions (a guarded table that becomes one would collide with its
-- parent's trigger clone; a guarded partition, with its parent's, if the
-- parent were guarded), partitioned tables (their partitions come after
-- them, and no worker builds their filters in these runs), temporary
-- tables.
\echo Use "CREATE EXTENSION bloomguard_guard_all" to load this file. \quit

CREATE FUNCTION bloomguard_guard_all() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
	ext name;
BEGIN
	SELECT n.nspname INTO ext
	  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	 WHERE e.extname = 'bloomguard';
	IF ext IS NULL THEN
		RETURN;
	END IF;
	FOR r IN SELECT DISTINCT c.oid, c.oid::regclass::text AS name,
	                CASE WHEN c.relkind = 'p' THEN 'a partitioned table'
	                     WHEN c.relispartition THEN 'a partition'
	                     WHEN c.relpersistence = 't' THEN 'a temporary table'
	                END AS skip
	           FROM pg_event_trigger_ddl_commands() d
	           JOIN pg_class c ON c.oid = d.objid
	          WHERE d.classid = 'pg_class'::regclass
	            AND c.relkind IN ('r', 'p')
	            AND EXISTS (SELECT FROM pg_constraint k
	                         WHERE k.conrelid = c.oid AND k.contype = 'p')
	            -- guarded already (attach's own ALTER TABLE fires us too)
	            AND NOT EXISTS (SELECT FROM pg_trigger t
	                             WHERE t.tgrelid = c.oid AND t.tgname = 'bloomguard')
	          ORDER BY c.oid
	LOOP
		IF r.skip IS NOT NULL THEN
			RAISE LOG 'bloomguard_guard_all: skipping %: %', r.name, r.skip;
			CONTINUE;
		END IF;
		BEGIN
			EXECUTE format('SELECT %I.bloomguard_attach($1)', ext) USING r.oid::regclass;
			RAISE LOG 'bloomguard_guard_all: guarded %', r.name;
		EXCEPTION WHEN others THEN
			RAISE LOG 'bloomguard_guard_all: not guarding %: % (%)', r.name, SQLERRM, SQLSTATE;
		END;
	END LOOP;
END $$;

CREATE EVENT TRIGGER bloomguard_guard_all ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE')
  EXECUTE FUNCTION bloomguard_guard_all();
