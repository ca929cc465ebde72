-- workers: a lookup that runs in a parallel worker never trusts a filter
-- (trust.c).  The writer list that tells a lookup which rows of its own
-- transaction are not in the filter yet (statement.c) and the feed buffer
-- belong to the backend that wrote them; a worker has neither, though it
-- sees the leader's rows.  A query planned inside a worker (the body of a
-- function labelled PARALLEL SAFE) gets the BloomGuard node, and such a
-- function can call guarded_exists() there too.  Here a BEFORE trigger
-- looks up the row the same INSERT wrote just before, through both, in a
-- parallel worker; on 4728bac each INSERT below failed with "row ... is
-- missing" (CONTEXT: parallel worker).
CREATE EXTENSION bloomguard;
CREATE TABLE pw (id int PRIMARY KEY, v text);
INSERT INTO pw SELECT g, 'x' FROM generate_series(1, 1000) g;
ANALYZE pw;
SELECT bloomguard_attach('pw', 100000, 1e-9);
CREATE FUNCTION pw_must_exist(x int) RETURNS bool LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pw WHERE id = x) THEN
    RAISE EXCEPTION 'row % is missing', x;
  END IF;
  RETURN true;
END $$;
-- guarded_exists() is PARALLEL RESTRICTED; this function says otherwise
CREATE FUNCTION pw_guarded(x int) RETURNS bool LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  IF NOT guarded_exists('pw', x) THEN
    RAISE EXCEPTION 'row % is missing for guarded_exists', x;
  END IF;
  RETURN true;
END $$;
-- pw_gather(query): the workers its plan launches at a Gather, 0 if none
CREATE FUNCTION pw_gather(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || query INTO plan;
  RETURN coalesce((jsonb_path_query_first(plan, 'strict $.** ? (@."Node Type" == "Gather")')->>'Workers Planned')::int, 0);
END $$;
-- the node answers in the leader as ever
SELECT pw_must_exist(42), pw_guarded(42);
SELECT pw_must_exist(1001);
SELECT pw_guarded(1001);

-- 1. debug_parallel_query (force_parallel_mode before 16): the trigger's
-- PERFORM runs its function in a worker
CREATE FUNCTION pw_check_prev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id % 1000 <> 1 THEN
    PERFORM pw_must_exist(NEW.id - 1);
    PERFORM pw_guarded(NEW.id - 1);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER pw_check_prev BEFORE INSERT ON pw FOR EACH ROW EXECUTE FUNCTION pw_check_prev();
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS forced;
SELECT pw_gather('SELECT pw_must_exist(41)');
INSERT INTO pw VALUES (6001, 'a'), (6002, 'b');
INSERT INTO pw SELECT g, 'c' FROM generate_series(7001, 7010) g;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS forced;
DROP TRIGGER pw_check_prev ON pw;

-- 2. An ordinary parallel plan: the trigger's query scans a table of 200k
-- rows in parallel (two workers, parallel_setup_cost = 0), and the one row
-- it keeps is checked in a worker (the leader takes no part)
CREATE TABLE pw_big (k int, pad bigint) WITH (parallel_workers = 2);
INSERT INTO pw_big SELECT g, g FROM generate_series(1, 200000) g;
ANALYZE pw_big;
CREATE FUNCTION pw_check_big() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id % 1000 <> 1 THEN
    PERFORM 1 FROM pw_big b WHERE b.k = NEW.id - 1 AND pw_must_exist(b.k) AND pw_guarded(b.k);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER pw_check_big BEFORE INSERT ON pw FOR EACH ROW EXECUTE FUNCTION pw_check_big();
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET parallel_leader_participation = off;
SET max_parallel_workers_per_gather = 2;
SELECT pw_gather('SELECT 1 FROM pw_big b WHERE b.k = 41 AND pw_must_exist(b.k) AND pw_guarded(b.k)');
INSERT INTO pw VALUES (8001, 'a'), (8002, 'b');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
SELECT count(*) FROM pw WHERE id > 1000;

-- 3. Lookups and writes of an event trigger run in the backend that runs
-- the DDL, through SPI and the executor's hooks: its INSERT of two rows is
-- tracked like a client's, and the BEFORE trigger's lookup of the first
-- row from the second (in the leader now) finds it
CREATE TABLE pw_ddl (id int PRIMARY KEY, tag text);
INSERT INTO pw_ddl SELECT g, 'x' FROM generate_series(1, 1000) g;
ANALYZE pw_ddl;
SELECT bloomguard_attach('pw_ddl', 100000, 1e-9);
CREATE FUNCTION pw_ddl_prev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id % 2 = 0 AND NOT EXISTS (SELECT 1 FROM pw_ddl WHERE id = NEW.id - 1) THEN
    RAISE EXCEPTION 'row % is missing', NEW.id - 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER pw_ddl_prev BEFORE INSERT ON pw_ddl FOR EACH ROW EXECUTE FUNCTION pw_ddl_prev();
CREATE FUNCTION pw_ddl_log() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
  n int := (SELECT max(id) FROM pw_ddl);
BEGIN
  INSERT INTO pw_ddl VALUES (n + 1, tg_tag), (n + 2, tg_tag);
  IF NOT guarded_exists('pw_ddl', n + 2) THEN
    RAISE EXCEPTION 'row % is missing for guarded_exists', n + 2;
  END IF;
END $$;
CREATE EVENT TRIGGER pw_ddl_log ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
  EXECUTE FUNCTION pw_ddl_log();
CREATE TABLE pw_ddl_a (x int);
BEGIN;
CREATE TABLE pw_ddl_b (x int);
SELECT id, tag FROM pw_ddl WHERE id > 1000 ORDER BY id;
COMMIT;
DROP EVENT TRIGGER pw_ddl_log;
DROP TABLE pw_ddl, pw_ddl_a, pw_ddl_b;
DROP FUNCTION pw_ddl_prev(), pw_ddl_log();

DROP TABLE pw, pw_big;
DROP FUNCTION pw_must_exist(int), pw_guarded(int), pw_check_prev(), pw_check_big(), pw_gather(text);
DROP EXTENSION bloomguard;
