-- upgrading in place: install version 1.0, fill it, update to 1.1, and the
-- guards still answer; what 1.1 changed is in place
CREATE EXTENSION bloomguard VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'bloomguard';
CREATE TABLE up (id int PRIMARY KEY);
INSERT INTO up SELECT generate_series(1, 1000);
SELECT bloomguard_attach('up');
CREATE TABLE up2 (a text, b int, PRIMARY KEY (a, b));
INSERT INTO up2 SELECT 'k' || g, g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('up2', 5000, 0.001);
-- the 1.0 view works with this library
SELECT relation, status, state, capacity, error_rate FROM bloomguard_health ORDER BY relation::text;
SELECT guarded_exists('up', 5), guarded_exists('up', 5000), bloomguard_check('up', 5000);
-- a role that could attach under 1.0
CREATE ROLE regress_bg_upowner;
CREATE TABLE up_owned (id int PRIMARY KEY);
ALTER TABLE up_owned OWNER TO regress_bg_upowner;
SET ROLE regress_bg_upowner;
SELECT has_function_privilege('bloomguard_attach(regclass, bigint, float8)', 'EXECUTE');
RESET ROLE;
-- a row 1.0 left behind for a table dropped where its event trigger did not fire
INSERT INTO bloomguard_guards (relation, capacity, error_rate) VALUES (4000000001, 1000, 0.01);

ALTER EXTENSION bloomguard UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'bloomguard';
-- the guards still answer, from the same filters
SELECT relation, status, state, feed, capacity, error_rate, generation FROM bloomguard_health
 ORDER BY relation::text;
SELECT guarded_exists('up', 5), guarded_exists('up', 5000), bloomguard_check('up', 5000);
SELECT guarded_exists('up2', 'k7', 7), guarded_exists('up2', 'k7', 8), bloomguard_check('up2', 'k7', 8);
SELECT count(*) FROM up WHERE bloomguard_check('up', id) = 'absent' OR NOT guarded_exists('up', id);
INSERT INTO up VALUES (5000);
SELECT guarded_exists('up', 5000), bloomguard_check('up', 5000);
SELECT bloomguard_rebuild('up');
SELECT state, generation FROM bloomguard_health WHERE relation = 'up'::regclass;
-- the orphan row is gone
SELECT count(*) FROM bloomguard_guards WHERE relation::oid = 4000000001;
-- attach and rebuild need a grant now
SET ROLE regress_bg_upowner;
SELECT has_function_privilege('bloomguard_attach(regclass, bigint, float8)', 'EXECUTE');
SELECT bloomguard_attach('up_owned');
RESET ROLE;
-- the objects of 1.1 are exactly those a fresh install creates: the same
-- functions, privileges, view, event trigger and pg_dump condition
CREATE FUNCTION ext_fingerprint() RETURNS text LANGUAGE sql AS $$
  SELECT md5(concat_ws('|',
    (SELECT string_agg(format('%s(%s) %s %s %s', p.proname,
                              pg_get_function_arguments(p.oid), p.prosrc,
                              has_function_privilege('public', p.oid, 'EXECUTE'),
                              p.provolatile::text || p.proparallel::text),
                       ',' ORDER BY p.proname)
       FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
      WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomguard')),
    pg_get_viewdef('bloomguard_health'::regclass),
    pg_get_viewdef('bloomguard_distributed_health'::regclass),
    (SELECT string_agg(evtname || evtevent, ',') FROM pg_event_trigger),
    (SELECT array_to_string(extcondition, ',') FROM pg_extension WHERE extname = 'bloomguard'),
    (SELECT relacl::text FROM pg_class WHERE oid = 'bloomguard_health'::regclass),
    (SELECT relacl::text FROM pg_class WHERE oid = 'bloomguard_distributed_health'::regclass),
    (SELECT relacl::text FROM pg_class WHERE oid = 'bloomguard_guards'::regclass))) $$;
SELECT ext_fingerprint() AS upgraded \gset
SELECT p.proname, p.prosrc, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomguard')
 ORDER BY 1;
SELECT bloomguard_detach('up');
SELECT bloomguard_detach('up2');
DROP TABLE up, up2, up_owned;
DROP ROLE regress_bg_upowner;
DROP EXTENSION bloomguard;
CREATE EXTENSION bloomguard;
SELECT ext_fingerprint() = :'upgraded' AS same_as_fresh_install;
DROP EXTENSION bloomguard;

-- 1.1 to 1.2: install 1.1, fill it, update; the guards still answer, and
-- untyped parameters, which 1.1 cannot take, work
CREATE EXTENSION bloomguard VERSION '1.1';
CREATE TABLE up3 (id int PRIMARY KEY);
INSERT INTO up3 SELECT generate_series(1, 1000);
SELECT bloomguard_attach('up3');
CREATE TABLE up4 (a text, b int, PRIMARY KEY (a, b));
INSERT INTO up4 SELECT 'k' || g, g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('up4');
PREPARE untyped11 AS SELECT guarded_exists('up3', $1);
ALTER EXTENSION bloomguard UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'bloomguard';
SELECT relation, status, state, capacity FROM bloomguard_health ORDER BY relation::text;
SELECT guarded_exists('up3', 5), guarded_exists('up3', 5000), bloomguard_check('up3', 5000);
SELECT count(*) FROM up3 WHERE bloomguard_check('up3', id) = 'absent' OR NOT guarded_exists('up3', id);
PREPARE untyped12 AS SELECT guarded_exists('up3', $1), bloomguard_check('up3', $1);
EXECUTE untyped12('5');
EXECUTE untyped12('5000');
PREPARE untyped12b AS SELECT guarded_exists('up4', $1, $2), bloomguard_check('up4', $1, $2);
EXECUTE untyped12b('k7', '7');
EXECUTE untyped12b('k7', '8');
DEALLOCATE ALL;
ALTER EXTENSION bloomguard UPDATE;
SELECT ext_fingerprint() = :'upgraded' AS same_as_fresh_install;
SELECT bloomguard_detach('up3'), bloomguard_detach('up4');
DROP TABLE up3, up4;
DROP EXTENSION bloomguard;

-- 1.2 to 1.3: install 1.2, fill it, update; the guards still answer, and
-- the distributed health view, new in 1.3, has no rows without Citus
CREATE EXTENSION bloomguard VERSION '1.2';
CREATE TABLE up5 (id int PRIMARY KEY);
INSERT INTO up5 SELECT generate_series(1, 1000);
SELECT bloomguard_attach('up5');
CREATE TABLE up6 (a text, b int, PRIMARY KEY (a, b));
INSERT INTO up6 SELECT 'k' || g, g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('up6');
SELECT to_regclass('bloomguard_distributed_health');
ALTER EXTENSION bloomguard UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'bloomguard';
SELECT relation, status, state, capacity FROM bloomguard_health ORDER BY relation::text;
SELECT guarded_exists('up5', 5), guarded_exists('up5', 5000), bloomguard_check('up5', 5000);
SELECT guarded_exists('up6', 'k7', 7), guarded_exists('up6', 'k7', 8), bloomguard_check('up6', 'k7', 8);
SELECT count(*) FROM up5 WHERE bloomguard_check('up5', id) = 'absent' OR NOT guarded_exists('up5', id);
INSERT INTO up5 VALUES (5000);
SELECT guarded_exists('up5', 5000), bloomguard_check('up5', 5000);
SELECT count(*) FROM bloomguard_distributed_health;
SELECT ext_fingerprint() = :'upgraded' AS same_as_fresh_install;
SELECT bloomguard_detach('up5'), bloomguard_detach('up6');
DROP TABLE up5, up6;
DROP EXTENSION bloomguard;
DROP FUNCTION ext_fingerprint();
