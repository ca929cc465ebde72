-- Key arguments without a type, as drivers send parameters by default
-- (node-postgres always, psycopg 3 for str, pgJDBC with
-- stringtype=unspecified).  PREPARE without parameter types parses the way
-- the extended protocol's Parse message with type 0 does; the TAP test
-- 018 runs the same through libpq.  The answers are those of
-- EXISTS (SELECT 1 FROM t WHERE pk = $1) with an untyped $1.
CREATE EXTENSION bloomguard;
CREATE TABLE u_int (id int PRIMARY KEY);
INSERT INTO u_int SELECT generate_series(1, 1000);
SELECT bloomguard_attach('u_int');
CREATE TABLE u_big (id bigint PRIMARY KEY);
INSERT INTO u_big SELECT g * 10000000000 FROM generate_series(1, 100) g;
SELECT bloomguard_attach('u_big');
CREATE TABLE u_char (c char(5) PRIMARY KEY);
INSERT INTO u_char VALUES ('ab'), ('cd   ');
SELECT bloomguard_attach('u_char');
CREATE TABLE u_uuid (id uuid PRIMARY KEY);
INSERT INTO u_uuid VALUES ('6b86b273-ff34-fce1-9d6b-804eff5a3f57');
SELECT bloomguard_attach('u_uuid');
CREATE TABLE u_two (a text, b int, PRIMARY KEY (a, b));
INSERT INTO u_two SELECT 'k' || g, g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('u_two');

-- untyped parameters: the lookup, the filter, and the plain query agree
PREPARE g_int AS SELECT guarded_exists('u_int', $1) AS guarded, bloomguard_check('u_int', $1) AS filter;
PREPARE p_int AS SELECT EXISTS (SELECT 1 FROM u_int WHERE id = $1) AS plain;
EXECUTE g_int('5'); EXECUTE p_int('5');
EXECUTE g_int('5000'); EXECUTE p_int('5000');
EXECUTE g_int(' 7 '); EXECUTE p_int(' 7 ');
EXECUTE g_int(NULL); EXECUTE p_int(NULL);
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'g_int';
PREPARE g_big AS SELECT guarded_exists('u_big', $1), bloomguard_check('u_big', $1);
EXECUTE g_big('10000000000'); EXECUTE g_big('10000000001');
-- char(n): trailing blanks do not count, as in c = $1
PREPARE g_char AS SELECT guarded_exists('u_char', $1), EXISTS (SELECT 1 FROM u_char WHERE c = $1::char(5));
PREPARE p_char AS SELECT EXISTS (SELECT 1 FROM u_char WHERE c = $1);
EXECUTE g_char('ab   '); EXECUTE p_char('ab   ');
EXECUTE g_char('cd'); EXECUTE p_char('cd');
EXECUTE g_char(' ab'); EXECUTE p_char(' ab');
PREPARE g_uuid AS SELECT guarded_exists('u_uuid', $1), bloomguard_check('u_uuid', $1);
EXECUTE g_uuid('6B86B273FF34FCE19D6B804EFF5A3F57'); EXECUTE g_uuid('00000000-0000-0000-0000-000000000000');
-- several key columns, all untyped
PREPARE g_two AS SELECT guarded_exists('u_two', $1, $2), bloomguard_check('u_two', $1, $2);
EXECUTE g_two('k7', '7'); EXECUTE g_two('k7', '8');
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'g_two';
-- an untyped parameter next to a typed one: the "any" variant, which
-- cannot read it (give the other a type, or none)
PREPARE g_mixed AS SELECT guarded_exists('u_two', $1, 7);
-- what the key type cannot read is its input error, naming the argument
EXECUTE g_int('abc');
EXECUTE g_int('3000000000');
EXECUTE g_two('k7', 'x');
-- unknown literals read the same way, as before
SELECT guarded_exists('u_int', '5'), guarded_exists('u_int', '5000'), bloomguard_check('u_int', '5000');

-- typed arguments keep the "any" variant and their own types
SELECT guarded_exists('u_int', 5), guarded_exists('u_int', 5::bigint), guarded_exists('u_int', 5000::smallint);
PREPARE g_typed(bigint) AS SELECT guarded_exists('u_int', $1), bloomguard_check('u_int', $1);
EXECUTE g_typed(5); EXECUTE g_typed(5000);
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'g_typed';
-- a typed text or varchar argument for an integer key is an error, as in
-- id = $1; bloomguard's own, naming the call, not its internal query
PREPARE g_varchar(varchar) AS SELECT guarded_exists('u_int', $1);
EXECUTE g_varchar('5');
SELECT guarded_exists('u_int', '5'::text);
-- bloomguard_check() never reads the table: a type it cannot hash is 'unknown'
SELECT bloomguard_check('u_int', '5'::text);
-- a text key takes text and varchar as before
PREPARE g_two_typed(text, int) AS SELECT guarded_exists('u_two', $1, $2);
EXECUTE g_two_typed('k7', 7);

-- the planner path is unaffected by the new variants: an untyped
-- parameter of a plain lookup takes the key's type, generic plan or not
SET plan_cache_mode = force_generic_plan;
PREPARE plain_untyped AS SELECT count(*) FROM u_int WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE plain_untyped('5');
EXECUTE plain_untyped('5'); EXECUTE plain_untyped('5000');
RESET plan_cache_mode;

DEALLOCATE ALL;
SELECT bloomguard_detach('u_int'), bloomguard_detach('u_big'), bloomguard_detach('u_char'),
       bloomguard_detach('u_uuid'), bloomguard_detach('u_two');
DROP TABLE u_int, u_big, u_char, u_uuid, u_two;
DROP EXTENSION bloomguard;
