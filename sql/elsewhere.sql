-- tables whose rows are not in them are never guarded, probed from C or
-- trusted (src/tablekind.c).  Citus's shells are in test/t/025_citus.pl;
-- here what every server has: a foreign table (of a wrapper without a
-- handler, so no contrib module is needed), and a table access method
-- that is the heap under another name, which stays guardable
CREATE EXTENSION bloomguard;

-- a foreign table
CREATE FOREIGN DATA WRAPPER dummy;
CREATE SERVER s_dummy FOREIGN DATA WRAPPER dummy;
CREATE FOREIGN TABLE ft (id int NOT NULL) SERVER s_dummy;

-- attach is refused, saying where the rows are, and creates nothing
SELECT bloomguard_attach('ft');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ft'::regclass;
-- lookups: a clear error
SELECT guarded_exists('ft', 1);
SELECT bloomguard_check('ft', 1);

-- a feed trigger put on it by hand (foreign tables have row triggers):
-- the health view reports it, unsupported, and never advises adopting it
CREATE TRIGGER bloomguard AFTER INSERT OR UPDATE ON ft
    FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger();
SELECT relation, status, reasons, state, feed, advice ~ 'adopt' AS adopt, last_error
  FROM bloomguard_health;
-- attach does not adopt it; detach removes it
SELECT bloomguard_attach('ft');
SELECT bloomguard_detach('ft');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ft'::regclass;

-- a registry row that names it (written by hand): reported as
-- unsupported, never as a guard to rebuild, and a rebuild is refused
INSERT INTO bloomguard_guards (relation, capacity, error_rate) VALUES ('ft', 1000, 0.01);
SELECT relation, status, state, advice ~ 'rebuild' AS rebuild, last_error
  FROM bloomguard_health;
SELECT bloomguard_rebuild('ft');
SELECT bloomguard_detach('ft');
SELECT count(*) FROM bloomguard_guards;

-- the heap under another name is the heap: guarded, and trusted
CREATE ACCESS METHOD heap_alias TYPE TABLE HANDLER heap_tableam_handler;
CREATE TABLE t_alias (id int PRIMARY KEY) USING heap_alias;
INSERT INTO t_alias SELECT generate_series(1, 100);
SELECT bloomguard_attach('t_alias');
SELECT relation, status, state FROM bloomguard_health;
SELECT guarded_exists('t_alias', 50), guarded_exists('t_alias', 500),
       bloomguard_check('t_alias', 500);

-- clean up
SELECT bloomguard_detach('t_alias');
DROP TABLE t_alias;
DROP ACCESS METHOD heap_alias;
DROP FOREIGN TABLE ft;
DROP SERVER s_dummy;
DROP FOREIGN DATA WRAPPER dummy;
DROP EXTENSION bloomguard;
