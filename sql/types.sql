-- types: guarded_exists and bloomguard_check for every supported primary
-- key type, against the EXISTS query they stand for.
--
-- Each case prints guarded_exists (guarded), the plain EXISTS query with the
-- same argument expression (plain) and bloomguard_check (filter).  guarded
-- must equal plain, always.  filter must be 'maybe' for a present key, is
-- 'unknown' for an argument type answered through SQL, and is 'absent' for
-- the absent keys printed here: the tables are small next to the default
-- capacity (1000), so a false positive is about 1 in 10^8.
CREATE EXTENSION bloomguard;

-- smallint
CREATE TABLE t_int2 (id smallint PRIMARY KEY);
INSERT INTO t_int2 SELECT g FROM generate_series(-50, 50) g;
INSERT INTO t_int2 VALUES (-32768), (32767);
SELECT bloomguard_attach('t_int2');
SELECT * FROM (
          SELECT 1 AS n, '7::int2' AS arg, guarded_exists('t_int2', 7::int2) AS guarded, EXISTS (SELECT 1 FROM t_int2 WHERE id = 7::int2) AS plain, bloomguard_check('t_int2', 7::int2) AS filter
UNION ALL SELECT 2, '7 (int4)', guarded_exists('t_int2', 7), EXISTS (SELECT 1 FROM t_int2 WHERE id = 7), bloomguard_check('t_int2', 7)
UNION ALL SELECT 3, '7::int8', guarded_exists('t_int2', 7::int8), EXISTS (SELECT 1 FROM t_int2 WHERE id = 7::int8), bloomguard_check('t_int2', 7::int8)
UNION ALL SELECT 4, '''7'' (unknown)', guarded_exists('t_int2', '7'), EXISTS (SELECT 1 FROM t_int2 WHERE id = '7'), bloomguard_check('t_int2', '7')
UNION ALL SELECT 5, '-32768 (int4)', guarded_exists('t_int2', -32768), EXISTS (SELECT 1 FROM t_int2 WHERE id = -32768), bloomguard_check('t_int2', -32768)
UNION ALL SELECT 6, '32767::int8', guarded_exists('t_int2', 32767::int8), EXISTS (SELECT 1 FROM t_int2 WHERE id = 32767::int8), bloomguard_check('t_int2', 32767::int8)
UNION ALL SELECT 7, '-7::int2', guarded_exists('t_int2', -7::int2), EXISTS (SELECT 1 FROM t_int2 WHERE id = -7::int2), bloomguard_check('t_int2', -7::int2)
UNION ALL SELECT 8, '99::int2', guarded_exists('t_int2', 99::int2), EXISTS (SELECT 1 FROM t_int2 WHERE id = 99::int2), bloomguard_check('t_int2', 99::int2)
UNION ALL SELECT 9, '40000 (int4)', guarded_exists('t_int2', 40000), EXISTS (SELECT 1 FROM t_int2 WHERE id = 40000), bloomguard_check('t_int2', 40000)
UNION ALL SELECT 10, '-40000 (int4)', guarded_exists('t_int2', -40000), EXISTS (SELECT 1 FROM t_int2 WHERE id = -40000), bloomguard_check('t_int2', -40000)
UNION ALL SELECT 11, '32768::int8', guarded_exists('t_int2', 32768::int8), EXISTS (SELECT 1 FROM t_int2 WHERE id = 32768::int8), bloomguard_check('t_int2', 32768::int8)
UNION ALL SELECT 12, '3000000000 (int8)', guarded_exists('t_int2', 3000000000), EXISTS (SELECT 1 FROM t_int2 WHERE id = 3000000000), bloomguard_check('t_int2', 3000000000)
UNION ALL SELECT 13, '7.0 (numeric)', guarded_exists('t_int2', 7.0), EXISTS (SELECT 1 FROM t_int2 WHERE id = 7.0), bloomguard_check('t_int2', 7.0)
UNION ALL SELECT 14, '7.5 (numeric)', guarded_exists('t_int2', 7.5), EXISTS (SELECT 1 FROM t_int2 WHERE id = 7.5), bloomguard_check('t_int2', 7.5)
UNION ALL SELECT 15, '40000.0 (numeric)', guarded_exists('t_int2', 40000.0), EXISTS (SELECT 1 FROM t_int2 WHERE id = 40000.0), bloomguard_check('t_int2', 40000.0)
UNION ALL SELECT 16, '7::float8', guarded_exists('t_int2', 7::float8), EXISTS (SELECT 1 FROM t_int2 WHERE id = 7::float8), bloomguard_check('t_int2', 7::float8)
UNION ALL SELECT 17, '40000::float8', guarded_exists('t_int2', 40000::float8), EXISTS (SELECT 1 FROM t_int2 WHERE id = 40000::float8), bloomguard_check('t_int2', 40000::float8)
) s ORDER BY n;
-- an out-of-range literal is an input error, as in SQL
SELECT guarded_exists('t_int2', '40000');
SELECT EXISTS (SELECT 1 FROM t_int2 WHERE id = '40000');
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_int2', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_int2', id::int8)) AS missing_int8,
       count(*) FILTER (WHERE bloomguard_check('t_int2', id) <> 'maybe') AS not_maybe
  FROM t_int2;
SELECT count(*) FILTER (WHERE guarded_exists('t_int2', g) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_int2 WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_int2', g)) AS found
  FROM generate_series(-40000, 40000, 7) g;
SELECT bloomguard_detach('t_int2');
DROP TABLE t_int2;

-- integer
CREATE TABLE t_int4 (id integer PRIMARY KEY, v text);
INSERT INTO t_int4 SELECT g, 'v' || g FROM generate_series(1, 100) g;
INSERT INTO t_int4 VALUES (-2147483648, 'min'), (2147483647, 'max');
SELECT bloomguard_attach('t_int4');
SELECT * FROM (
          SELECT 1 AS n, '42 (int4)' AS arg, guarded_exists('t_int4', 42) AS guarded, EXISTS (SELECT 1 FROM t_int4 WHERE id = 42) AS plain, bloomguard_check('t_int4', 42) AS filter
UNION ALL SELECT 2, '42::int2', guarded_exists('t_int4', 42::int2), EXISTS (SELECT 1 FROM t_int4 WHERE id = 42::int2), bloomguard_check('t_int4', 42::int2)
UNION ALL SELECT 3, '42::int8', guarded_exists('t_int4', 42::int8), EXISTS (SELECT 1 FROM t_int4 WHERE id = 42::int8), bloomguard_check('t_int4', 42::int8)
UNION ALL SELECT 4, '''42'' (unknown)', guarded_exists('t_int4', '42'), EXISTS (SELECT 1 FROM t_int4 WHERE id = '42'), bloomguard_check('t_int4', '42')
UNION ALL SELECT 5, '''  42 '' (unknown)', guarded_exists('t_int4', '  42 '), EXISTS (SELECT 1 FROM t_int4 WHERE id = '  42 '), bloomguard_check('t_int4', '  42 ')
UNION ALL SELECT 6, '2147483647::int8', guarded_exists('t_int4', 2147483647::int8), EXISTS (SELECT 1 FROM t_int4 WHERE id = 2147483647::int8), bloomguard_check('t_int4', 2147483647::int8)
UNION ALL SELECT 7, '-2147483648 (int4)', guarded_exists('t_int4', -2147483648), EXISTS (SELECT 1 FROM t_int4 WHERE id = -2147483648), bloomguard_check('t_int4', -2147483648)
UNION ALL SELECT 8, '101 (int4)', guarded_exists('t_int4', 101), EXISTS (SELECT 1 FROM t_int4 WHERE id = 101), bloomguard_check('t_int4', 101)
UNION ALL SELECT 9, '0::int2', guarded_exists('t_int4', 0::int2), EXISTS (SELECT 1 FROM t_int4 WHERE id = 0::int2), bloomguard_check('t_int4', 0::int2)
UNION ALL SELECT 10, '3000000000 (int8)', guarded_exists('t_int4', 3000000000), EXISTS (SELECT 1 FROM t_int4 WHERE id = 3000000000), bloomguard_check('t_int4', 3000000000)
UNION ALL SELECT 11, '-3000000000 (int8)', guarded_exists('t_int4', -3000000000), EXISTS (SELECT 1 FROM t_int4 WHERE id = -3000000000), bloomguard_check('t_int4', -3000000000)
UNION ALL SELECT 12, '2147483648 (int8)', guarded_exists('t_int4', 2147483648), EXISTS (SELECT 1 FROM t_int4 WHERE id = 2147483648), bloomguard_check('t_int4', 2147483648)
UNION ALL SELECT 13, '4294967338 (int8, 42 + 2^32)', guarded_exists('t_int4', 4294967338), EXISTS (SELECT 1 FROM t_int4 WHERE id = 4294967338), bloomguard_check('t_int4', 4294967338)
UNION ALL SELECT 14, '5.0 (numeric)', guarded_exists('t_int4', 5.0), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5.0), bloomguard_check('t_int4', 5.0)
UNION ALL SELECT 15, '5.000 (numeric)', guarded_exists('t_int4', 5.000), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5.000), bloomguard_check('t_int4', 5.000)
UNION ALL SELECT 16, '5.5 (numeric)', guarded_exists('t_int4', 5.5), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5.5), bloomguard_check('t_int4', 5.5)
UNION ALL SELECT 17, '-0.0 (numeric)', guarded_exists('t_int4', -0.0), EXISTS (SELECT 1 FROM t_int4 WHERE id = -0.0), bloomguard_check('t_int4', -0.0)
UNION ALL SELECT 18, '1e10 (numeric)', guarded_exists('t_int4', 1e10), EXISTS (SELECT 1 FROM t_int4 WHERE id = 1e10), bloomguard_check('t_int4', 1e10)
UNION ALL SELECT 19, '1e30 (numeric)', guarded_exists('t_int4', 1e30), EXISTS (SELECT 1 FROM t_int4 WHERE id = 1e30), bloomguard_check('t_int4', 1e30)
UNION ALL SELECT 20, '''NaN''::numeric', guarded_exists('t_int4', 'NaN'::numeric), EXISTS (SELECT 1 FROM t_int4 WHERE id = 'NaN'::numeric), bloomguard_check('t_int4', 'NaN'::numeric)
UNION ALL SELECT 21, '''Infinity''::numeric', guarded_exists('t_int4', 'Infinity'::numeric), EXISTS (SELECT 1 FROM t_int4 WHERE id = 'Infinity'::numeric), bloomguard_check('t_int4', 'Infinity'::numeric)
UNION ALL SELECT 22, '5::float8', guarded_exists('t_int4', 5::float8), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5::float8), bloomguard_check('t_int4', 5::float8)
UNION ALL SELECT 23, '5.5::float8', guarded_exists('t_int4', 5.5::float8), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5.5::float8), bloomguard_check('t_int4', 5.5::float8)
UNION ALL SELECT 24, '5::real', guarded_exists('t_int4', 5::real), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5::real), bloomguard_check('t_int4', 5::real)
UNION ALL SELECT 25, 'NULL', guarded_exists('t_int4', NULL), EXISTS (SELECT 1 FROM t_int4 WHERE id = NULL), bloomguard_check('t_int4', NULL)
UNION ALL SELECT 26, 'NULL::int', guarded_exists('t_int4', NULL::int), EXISTS (SELECT 1 FROM t_int4 WHERE id = NULL::int), bloomguard_check('t_int4', NULL::int)
UNION ALL SELECT 27, 'VARIADIC ARRAY[42]', guarded_exists('t_int4', VARIADIC ARRAY[42]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 42), bloomguard_check('t_int4', VARIADIC ARRAY[42])
UNION ALL SELECT 28, 'VARIADIC ARRAY[42]::int8[]', guarded_exists('t_int4', VARIADIC ARRAY[42]::int8[]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 42::int8), bloomguard_check('t_int4', VARIADIC ARRAY[42]::int8[])
UNION ALL SELECT 29, 'VARIADIC ARRAY[42]::int2[]', guarded_exists('t_int4', VARIADIC ARRAY[42]::int2[]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 42::int2), bloomguard_check('t_int4', VARIADIC ARRAY[42]::int2[])
UNION ALL SELECT 30, 'VARIADIC ARRAY[101]', guarded_exists('t_int4', VARIADIC ARRAY[101]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 101), bloomguard_check('t_int4', VARIADIC ARRAY[101])
UNION ALL SELECT 31, 'VARIADIC ARRAY[3000000000]', guarded_exists('t_int4', VARIADIC ARRAY[3000000000]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 3000000000), bloomguard_check('t_int4', VARIADIC ARRAY[3000000000])
UNION ALL SELECT 32, 'VARIADIC ARRAY[5.0]', guarded_exists('t_int4', VARIADIC ARRAY[5.0]), EXISTS (SELECT 1 FROM t_int4 WHERE id = 5.0), bloomguard_check('t_int4', VARIADIC ARRAY[5.0])
UNION ALL SELECT 33, 'VARIADIC ARRAY[NULL]::int[]', guarded_exists('t_int4', VARIADIC ARRAY[NULL]::int[]), EXISTS (SELECT 1 FROM t_int4 WHERE id = NULL::int), bloomguard_check('t_int4', VARIADIC ARRAY[NULL]::int[])
UNION ALL SELECT 34, 'VARIADIC NULL::int[]', guarded_exists('t_int4', VARIADIC NULL::int[]), false, bloomguard_check('t_int4', VARIADIC NULL::int[])
) s ORDER BY n;
-- errors, as SQL raises them
SELECT guarded_exists('t_int4', '5.0');
SELECT EXISTS (SELECT 1 FROM t_int4 WHERE id = '5.0');
SELECT guarded_exists('t_int4', '3000000000');
SELECT EXISTS (SELECT 1 FROM t_int4 WHERE id = '3000000000');
SELECT guarded_exists('t_int4', '42'::text);
SELECT EXISTS (SELECT 1 FROM t_int4 WHERE id = '42'::text);
-- wrong number of key values
SELECT guarded_exists('t_int4', 1, 2);
SELECT bloomguard_check('t_int4', 1, 2);
SELECT guarded_exists('t_int4', VARIADIC ARRAY[1, 2]);
SELECT guarded_exists('t_int4', VARIADIC ARRAY[]::int[]);
SELECT bloomguard_check('t_int4', VARIADIC ARRAY[]::int[]);
SELECT guarded_exists('t_int4');
-- a row added after attach is fed by the trigger
INSERT INTO t_int4 VALUES (1000, 'late');
SELECT guarded_exists('t_int4', 1000) AS guarded, bloomguard_check('t_int4', 1000) AS filter,
       guarded_exists('t_int4', 1000.0) AS as_numeric, guarded_exists('t_int4', '1000') AS as_unknown;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_int4', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_int4', id::int8)) AS missing_int8,
       count(*) FILTER (WHERE NOT guarded_exists('t_int4', id::numeric)) AS missing_numeric,
       count(*) FILTER (WHERE bloomguard_check('t_int4', id) <> 'maybe') AS not_maybe
  FROM t_int4;
SELECT count(*) FILTER (WHERE guarded_exists('t_int4', g) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_int4 WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_int4', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('t_int4', g) = 'absent') > 1800 AS mostly_absent
  FROM generate_series(-1000, 1000) g;
SELECT bloomguard_detach('t_int4');
DROP TABLE t_int4;

-- bigint
CREATE TABLE t_int8 (id bigint PRIMARY KEY);
INSERT INTO t_int8 SELECT g::int8 * 1000000007 FROM generate_series(-50, 50) g;
INSERT INTO t_int8 VALUES (9223372036854775807), (-9223372036854775808), (3000000000), (42);
SELECT bloomguard_attach('t_int8');
SELECT * FROM (
          SELECT 1 AS n, '42 (int4)' AS arg, guarded_exists('t_int8', 42) AS guarded, EXISTS (SELECT 1 FROM t_int8 WHERE id = 42) AS plain, bloomguard_check('t_int8', 42) AS filter
UNION ALL SELECT 2, '42::int2', guarded_exists('t_int8', 42::int2), EXISTS (SELECT 1 FROM t_int8 WHERE id = 42::int2), bloomguard_check('t_int8', 42::int2)
UNION ALL SELECT 3, '''42'' (unknown)', guarded_exists('t_int8', '42'), EXISTS (SELECT 1 FROM t_int8 WHERE id = '42'), bloomguard_check('t_int8', '42')
UNION ALL SELECT 4, '3000000000 (int8)', guarded_exists('t_int8', 3000000000), EXISTS (SELECT 1 FROM t_int8 WHERE id = 3000000000), bloomguard_check('t_int8', 3000000000)
UNION ALL SELECT 5, '3000000000.0 (numeric)', guarded_exists('t_int8', 3000000000.0), EXISTS (SELECT 1 FROM t_int8 WHERE id = 3000000000.0), bloomguard_check('t_int8', 3000000000.0)
UNION ALL SELECT 6, '9223372036854775807', guarded_exists('t_int8', 9223372036854775807), EXISTS (SELECT 1 FROM t_int8 WHERE id = 9223372036854775807), bloomguard_check('t_int8', 9223372036854775807)
UNION ALL SELECT 7, '-9223372036854775808', guarded_exists('t_int8', -9223372036854775808), EXISTS (SELECT 1 FROM t_int8 WHERE id = -9223372036854775808), bloomguard_check('t_int8', -9223372036854775808)
UNION ALL SELECT 8, '9223372036854775808 (numeric)', guarded_exists('t_int8', 9223372036854775808), EXISTS (SELECT 1 FROM t_int8 WHERE id = 9223372036854775808), bloomguard_check('t_int8', 9223372036854775808)
UNION ALL SELECT 9, '-50000000350 (int8)', guarded_exists('t_int8', -50000000350), EXISTS (SELECT 1 FROM t_int8 WHERE id = -50000000350), bloomguard_check('t_int8', -50000000350)
UNION ALL SELECT 10, '1000000008 (int4)', guarded_exists('t_int8', 1000000008), EXISTS (SELECT 1 FROM t_int8 WHERE id = 1000000008), bloomguard_check('t_int8', 1000000008)
UNION ALL SELECT 11, '42.5 (numeric)', guarded_exists('t_int8', 42.5), EXISTS (SELECT 1 FROM t_int8 WHERE id = 42.5), bloomguard_check('t_int8', 42.5)
UNION ALL SELECT 12, '42::float8', guarded_exists('t_int8', 42::float8), EXISTS (SELECT 1 FROM t_int8 WHERE id = 42::float8), bloomguard_check('t_int8', 42::float8)
) s ORDER BY n;
SELECT guarded_exists('t_int8', '9223372036854775808');
SELECT EXISTS (SELECT 1 FROM t_int8 WHERE id = '9223372036854775808');
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_int8', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_int8', id::numeric)) AS missing_numeric,
       count(*) FILTER (WHERE bloomguard_check('t_int8', id) <> 'maybe') AS not_maybe
  FROM t_int8;
SELECT count(*) FILTER (WHERE guarded_exists('t_int8', g) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_int8 WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_int8', g)) AS found
  FROM (SELECT g::int8 * 1000000007 + d AS g FROM generate_series(-60, 60) g, generate_series(-1, 1) d) c;
SELECT bloomguard_detach('t_int8');
DROP TABLE t_int8;

-- numeric: equal values with different scales (different bytes)
CREATE TABLE t_num (id numeric PRIMARY KEY);
INSERT INTO t_num VALUES (1.0), (1.10), (2), ('NaN'), ('Infinity'), (0), (12345678901234567890.123);
INSERT INTO t_num SELECT g / 8.0 FROM generate_series(100, 180) g;
INSERT INTO t_num VALUES (1.00);   -- equal to 1.0: a duplicate key
SELECT bloomguard_attach('t_num');
-- numeric's hash function gives NaN, Infinity and -Infinity one hash value,
-- so the filter says 'maybe' for the absent -Infinity: a false positive
-- that does not depend on the seed
SELECT * FROM (
          SELECT 1 AS n, '1 (int4)' AS arg, guarded_exists('t_num', 1) AS guarded, EXISTS (SELECT 1 FROM t_num WHERE id = 1) AS plain, bloomguard_check('t_num', 1) AS filter
UNION ALL SELECT 2, '1::int8', guarded_exists('t_num', 1::int8), EXISTS (SELECT 1 FROM t_num WHERE id = 1::int8), bloomguard_check('t_num', 1::int8)
UNION ALL SELECT 3, '1::int2', guarded_exists('t_num', 1::int2), EXISTS (SELECT 1 FROM t_num WHERE id = 1::int2), bloomguard_check('t_num', 1::int2)
UNION ALL SELECT 4, '1.0', guarded_exists('t_num', 1.0), EXISTS (SELECT 1 FROM t_num WHERE id = 1.0), bloomguard_check('t_num', 1.0)
UNION ALL SELECT 5, '1.00', guarded_exists('t_num', 1.00), EXISTS (SELECT 1 FROM t_num WHERE id = 1.00), bloomguard_check('t_num', 1.00)
UNION ALL SELECT 6, '''1'' (unknown)', guarded_exists('t_num', '1'), EXISTS (SELECT 1 FROM t_num WHERE id = '1'), bloomguard_check('t_num', '1')
UNION ALL SELECT 7, '''1.000000'' (unknown)', guarded_exists('t_num', '1.000000'), EXISTS (SELECT 1 FROM t_num WHERE id = '1.000000'), bloomguard_check('t_num', '1.000000')
UNION ALL SELECT 8, '1.1', guarded_exists('t_num', 1.1), EXISTS (SELECT 1 FROM t_num WHERE id = 1.1), bloomguard_check('t_num', 1.1)
UNION ALL SELECT 9, '1.100', guarded_exists('t_num', 1.100), EXISTS (SELECT 1 FROM t_num WHERE id = 1.100), bloomguard_check('t_num', 1.100)
UNION ALL SELECT 10, '''1.10'' (unknown)', guarded_exists('t_num', '1.10'), EXISTS (SELECT 1 FROM t_num WHERE id = '1.10'), bloomguard_check('t_num', '1.10')
UNION ALL SELECT 11, '1.01', guarded_exists('t_num', 1.01), EXISTS (SELECT 1 FROM t_num WHERE id = 1.01), bloomguard_check('t_num', 1.01)
UNION ALL SELECT 12, '2.0', guarded_exists('t_num', 2.0), EXISTS (SELECT 1 FROM t_num WHERE id = 2.0), bloomguard_check('t_num', 2.0)
UNION ALL SELECT 13, '2::int2', guarded_exists('t_num', 2::int2), EXISTS (SELECT 1 FROM t_num WHERE id = 2::int2), bloomguard_check('t_num', 2::int2)
UNION ALL SELECT 14, '3 (int4)', guarded_exists('t_num', 3), EXISTS (SELECT 1 FROM t_num WHERE id = 3), bloomguard_check('t_num', 3)
UNION ALL SELECT 15, '-0.000', guarded_exists('t_num', -0.000), EXISTS (SELECT 1 FROM t_num WHERE id = -0.000), bloomguard_check('t_num', -0.000)
UNION ALL SELECT 16, '''NaN'' (unknown)', guarded_exists('t_num', 'NaN'), EXISTS (SELECT 1 FROM t_num WHERE id = 'NaN'), bloomguard_check('t_num', 'NaN')
UNION ALL SELECT 17, '''nan''::numeric', guarded_exists('t_num', 'nan'::numeric), EXISTS (SELECT 1 FROM t_num WHERE id = 'nan'::numeric), bloomguard_check('t_num', 'nan'::numeric)
UNION ALL SELECT 18, '''Infinity'' (unknown)', guarded_exists('t_num', 'Infinity'), EXISTS (SELECT 1 FROM t_num WHERE id = 'Infinity'), bloomguard_check('t_num', 'Infinity')
UNION ALL SELECT 19, '''-Infinity''::numeric', guarded_exists('t_num', '-Infinity'::numeric), EXISTS (SELECT 1 FROM t_num WHERE id = '-Infinity'::numeric), bloomguard_check('t_num', '-Infinity'::numeric)
UNION ALL SELECT 20, '12345678901234567890.12300', guarded_exists('t_num', 12345678901234567890.12300), EXISTS (SELECT 1 FROM t_num WHERE id = 12345678901234567890.12300), bloomguard_check('t_num', 12345678901234567890.12300)
UNION ALL SELECT 21, '12345678901234567890.1231', guarded_exists('t_num', 12345678901234567890.1231), EXISTS (SELECT 1 FROM t_num WHERE id = 12345678901234567890.1231), bloomguard_check('t_num', 12345678901234567890.1231)
UNION ALL SELECT 22, '12.5000 (from g/8.0)', guarded_exists('t_num', 12.5000), EXISTS (SELECT 1 FROM t_num WHERE id = 12.5000), bloomguard_check('t_num', 12.5000)
UNION ALL SELECT 23, '1::float8', guarded_exists('t_num', 1::float8), EXISTS (SELECT 1 FROM t_num WHERE id = 1::float8), bloomguard_check('t_num', 1::float8)
UNION ALL SELECT 24, '1.1::float8', guarded_exists('t_num', 1.1::float8), EXISTS (SELECT 1 FROM t_num WHERE id = 1.1::float8), bloomguard_check('t_num', 1.1::float8)
UNION ALL SELECT 25, '1.1::real', guarded_exists('t_num', 1.1::real), EXISTS (SELECT 1 FROM t_num WHERE id = 1.1::real), bloomguard_check('t_num', 1.1::real)
UNION ALL SELECT 26, '1.0::numeric(10,4)', guarded_exists('t_num', 1.0::numeric(10,4)), EXISTS (SELECT 1 FROM t_num WHERE id = 1.0::numeric(10,4)), bloomguard_check('t_num', 1.0::numeric(10,4))
) s ORDER BY n;
-- rows added after attach, in yet another scale
INSERT INTO t_num VALUES (7.000), (8.5000);
SELECT guarded_exists('t_num', 7) AS g7, bloomguard_check('t_num', 7) AS f7,
       guarded_exists('t_num', 8.5) AS g85, bloomguard_check('t_num', '8.50') AS f85;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_num', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_num', round(id, 10))) AS missing_rescaled,
       count(*) FILTER (WHERE bloomguard_check('t_num', round(id, 10)) <> 'maybe') AS not_maybe
  FROM t_num;
SELECT count(*) FILTER (WHERE guarded_exists('t_num', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_num WHERE id = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_num', x)) AS found
  FROM (SELECT round(g / 16.0, s) AS x FROM generate_series(0, 400) g, generate_series(2, 6) s) c;
SELECT bloomguard_detach('t_num');
DROP TABLE t_num;

-- double precision: -0 = 0, NaN = NaN
CREATE TABLE t_float8 (id double precision PRIMARY KEY);
INSERT INTO t_float8 VALUES (0), (1.5), (-2.25), (0.1), ('NaN'), ('Infinity'), ('-Infinity');
INSERT INTO t_float8 SELECT g / 4.0 FROM generate_series(20, 100) g;
INSERT INTO t_float8 VALUES ('-0');   -- equal to 0: a duplicate key
SELECT bloomguard_attach('t_float8');
SELECT * FROM (
          SELECT 1 AS n, '0::float8' AS arg, guarded_exists('t_float8', 0::float8) AS guarded, EXISTS (SELECT 1 FROM t_float8 WHERE id = 0::float8) AS plain, bloomguard_check('t_float8', 0::float8) AS filter
UNION ALL SELECT 2, '''-0''::float8', guarded_exists('t_float8', '-0'::float8), EXISTS (SELECT 1 FROM t_float8 WHERE id = '-0'::float8), bloomguard_check('t_float8', '-0'::float8)
UNION ALL SELECT 3, '''-0'' (unknown)', guarded_exists('t_float8', '-0'), EXISTS (SELECT 1 FROM t_float8 WHERE id = '-0'), bloomguard_check('t_float8', '-0')
UNION ALL SELECT 4, '''NaN'' (unknown)', guarded_exists('t_float8', 'NaN'), EXISTS (SELECT 1 FROM t_float8 WHERE id = 'NaN'), bloomguard_check('t_float8', 'NaN')
UNION ALL SELECT 5, '''nan''::float8', guarded_exists('t_float8', 'nan'::float8), EXISTS (SELECT 1 FROM t_float8 WHERE id = 'nan'::float8), bloomguard_check('t_float8', 'nan'::float8)
UNION ALL SELECT 6, '''-NaN''::float8 (sign bit set)', guarded_exists('t_float8', -('NaN'::float8)), EXISTS (SELECT 1 FROM t_float8 WHERE id = -('NaN'::float8)), bloomguard_check('t_float8', -('NaN'::float8))
UNION ALL SELECT 7, '''Infinity''::float8', guarded_exists('t_float8', 'Infinity'::float8), EXISTS (SELECT 1 FROM t_float8 WHERE id = 'Infinity'::float8), bloomguard_check('t_float8', 'Infinity'::float8)
UNION ALL SELECT 8, '''-inf'' (unknown)', guarded_exists('t_float8', '-inf'), EXISTS (SELECT 1 FROM t_float8 WHERE id = '-inf'), bloomguard_check('t_float8', '-inf')
UNION ALL SELECT 9, '1.5::float8', guarded_exists('t_float8', 1.5::float8), EXISTS (SELECT 1 FROM t_float8 WHERE id = 1.5::float8), bloomguard_check('t_float8', 1.5::float8)
UNION ALL SELECT 10, '''1.50'' (unknown)', guarded_exists('t_float8', '1.50'), EXISTS (SELECT 1 FROM t_float8 WHERE id = '1.50'), bloomguard_check('t_float8', '1.50')
UNION ALL SELECT 11, '1.6::float8', guarded_exists('t_float8', 1.6::float8), EXISTS (SELECT 1 FROM t_float8 WHERE id = 1.6::float8), bloomguard_check('t_float8', 1.6::float8)
UNION ALL SELECT 12, '0 (int4)', guarded_exists('t_float8', 0), EXISTS (SELECT 1 FROM t_float8 WHERE id = 0), bloomguard_check('t_float8', 0)
UNION ALL SELECT 13, '1.5 (numeric)', guarded_exists('t_float8', 1.5), EXISTS (SELECT 1 FROM t_float8 WHERE id = 1.5), bloomguard_check('t_float8', 1.5)
UNION ALL SELECT 14, '0.1 (numeric)', guarded_exists('t_float8', 0.1), EXISTS (SELECT 1 FROM t_float8 WHERE id = 0.1), bloomguard_check('t_float8', 0.1)
UNION ALL SELECT 15, '1.5::real', guarded_exists('t_float8', 1.5::real), EXISTS (SELECT 1 FROM t_float8 WHERE id = 1.5::real), bloomguard_check('t_float8', 1.5::real)
UNION ALL SELECT 16, '0.1::real', guarded_exists('t_float8', 0.1::real), EXISTS (SELECT 1 FROM t_float8 WHERE id = 0.1::real), bloomguard_check('t_float8', 0.1::real)
UNION ALL SELECT 17, '''-0''::real', guarded_exists('t_float8', '-0'::real), EXISTS (SELECT 1 FROM t_float8 WHERE id = '-0'::real), bloomguard_check('t_float8', '-0'::real)
) s ORDER BY n;
INSERT INTO t_float8 VALUES ('-1e300');
SELECT guarded_exists('t_float8', '-1e300'::float8) AS guarded, bloomguard_check('t_float8', -1e300::float8) AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_float8', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_float8', id * -1 * -1)) AS missing_recomputed,
       count(*) FILTER (WHERE bloomguard_check('t_float8', id) <> 'maybe') AS not_maybe
  FROM t_float8;
SELECT count(*) FILTER (WHERE guarded_exists('t_float8', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_float8 WHERE id = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_float8', x)) AS found
  FROM (SELECT g / 8.0::float8 AS x FROM generate_series(-1000, 1000) g) c;
SELECT bloomguard_detach('t_float8');
DROP TABLE t_float8;

-- real: the row is -0, looked up as 0
CREATE TABLE t_float4 (id real PRIMARY KEY);
INSERT INTO t_float4 VALUES ('-0'), (0.1), (2.5), ('NaN');
INSERT INTO t_float4 SELECT g / 3.0 FROM generate_series(10, 60) g;
SELECT bloomguard_attach('t_float4');
SELECT * FROM (
          SELECT 1 AS n, '0::real' AS arg, guarded_exists('t_float4', 0::real) AS guarded, EXISTS (SELECT 1 FROM t_float4 WHERE id = 0::real) AS plain, bloomguard_check('t_float4', 0::real) AS filter
UNION ALL SELECT 2, '''0'' (unknown)', guarded_exists('t_float4', '0'), EXISTS (SELECT 1 FROM t_float4 WHERE id = '0'), bloomguard_check('t_float4', '0')
UNION ALL SELECT 3, '''-0''::real', guarded_exists('t_float4', '-0'::real), EXISTS (SELECT 1 FROM t_float4 WHERE id = '-0'::real), bloomguard_check('t_float4', '-0'::real)
UNION ALL SELECT 4, '''NaN''::real', guarded_exists('t_float4', 'NaN'::real), EXISTS (SELECT 1 FROM t_float4 WHERE id = 'NaN'::real), bloomguard_check('t_float4', 'NaN'::real)
UNION ALL SELECT 5, '0.1::real', guarded_exists('t_float4', 0.1::real), EXISTS (SELECT 1 FROM t_float4 WHERE id = 0.1::real), bloomguard_check('t_float4', 0.1::real)
UNION ALL SELECT 6, '0.2::real', guarded_exists('t_float4', 0.2::real), EXISTS (SELECT 1 FROM t_float4 WHERE id = 0.2::real), bloomguard_check('t_float4', 0.2::real)
UNION ALL SELECT 7, '0.1 (numeric)', guarded_exists('t_float4', 0.1), EXISTS (SELECT 1 FROM t_float4 WHERE id = 0.1), bloomguard_check('t_float4', 0.1)
UNION ALL SELECT 8, '0.1::float8', guarded_exists('t_float4', 0.1::float8), EXISTS (SELECT 1 FROM t_float4 WHERE id = 0.1::float8), bloomguard_check('t_float4', 0.1::float8)
UNION ALL SELECT 9, '2.5::float8', guarded_exists('t_float4', 2.5::float8), EXISTS (SELECT 1 FROM t_float4 WHERE id = 2.5::float8), bloomguard_check('t_float4', 2.5::float8)
UNION ALL SELECT 10, '0 (int4)', guarded_exists('t_float4', 0), EXISTS (SELECT 1 FROM t_float4 WHERE id = 0), bloomguard_check('t_float4', 0)
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_float4', id)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_float4', id) <> 'maybe') AS not_maybe
  FROM t_float4;
SELECT count(*) FILTER (WHERE guarded_exists('t_float4', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_float4 WHERE id = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_float4', x)) AS found
  FROM (SELECT (g / 3.0)::real AS x FROM generate_series(-100, 100) g) c;
SELECT bloomguard_detach('t_float4');
DROP TABLE t_float4;

-- text (deterministic): short values, and long values stored compressed or out of line
CREATE TABLE t_text (k text PRIMARY KEY, n int);
INSERT INTO t_text VALUES ('abc', 1), ('', 2), ('abc ', 3), ('ÄÖÜ', 4);
-- about 5kB that compresses well: stored compressed inline
INSERT INTO t_text VALUES (repeat('compressible-', 400), 5);
-- 2400 bytes of md5 hex that does not compress: stored out of line, uncompressed
INSERT INTO t_text SELECT string_agg(md5(g::text), '' ORDER BY g), 6 FROM generate_series(1, 75) g;
-- 22kB whose compressed form is still too big for the heap page: out of line, compressed
INSERT INTO t_text SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 10), 7 FROM generate_series(1, 69) g;
INSERT INTO t_text SELECT 'key' || g, 100 + g FROM generate_series(1, 60) g;
-- stored size: octet_length + 4 would be inline and plain; exactly octet_length
-- is out of line and uncompressed; over 2000 compressed bytes is out of line
SELECT n, octet_length(k) AS bytes, pg_column_compression(k) AS compression,
       pg_column_size(k) AS stored_bytes
  FROM t_text WHERE n BETWEEN 5 AND 7 ORDER BY n;
SELECT pg_relation_size(reltoastrelid) > 0 AS has_toast FROM pg_class WHERE oid = 't_text'::regclass;
SELECT bloomguard_attach('t_text');
SELECT * FROM (
          SELECT 1 AS n, '''abc'' (unknown)' AS arg, guarded_exists('t_text', 'abc') AS guarded, EXISTS (SELECT 1 FROM t_text WHERE k = 'abc') AS plain, bloomguard_check('t_text', 'abc') AS filter
UNION ALL SELECT 2, '''abc''::text', guarded_exists('t_text', 'abc'::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc'::text), bloomguard_check('t_text', 'abc'::text)
UNION ALL SELECT 3, '''abc''::varchar', guarded_exists('t_text', 'abc'::varchar), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc'::varchar), bloomguard_check('t_text', 'abc'::varchar)
UNION ALL SELECT 4, '''abc ''::text', guarded_exists('t_text', 'abc '::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc '::text), bloomguard_check('t_text', 'abc '::text)
UNION ALL SELECT 5, '''abc  ''::text', guarded_exists('t_text', 'abc  '::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc  '::text), bloomguard_check('t_text', 'abc  '::text)
UNION ALL SELECT 6, '''ABC''::text', guarded_exists('t_text', 'ABC'::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'ABC'::text), bloomguard_check('t_text', 'ABC'::text)
UNION ALL SELECT 7, ''''' (empty)', guarded_exists('t_text', ''), EXISTS (SELECT 1 FROM t_text WHERE k = ''), bloomguard_check('t_text', '')
UNION ALL SELECT 8, '''ÄÖÜ''::text', guarded_exists('t_text', 'ÄÖÜ'::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'ÄÖÜ'::text), bloomguard_check('t_text', 'ÄÖÜ'::text)
UNION ALL SELECT 9, '''äöü''::text', guarded_exists('t_text', 'äöü'::text), EXISTS (SELECT 1 FROM t_text WHERE k = 'äöü'::text), bloomguard_check('t_text', 'äöü'::text)
UNION ALL SELECT 10, '''abc''::char(3)', guarded_exists('t_text', 'abc'::char(3)), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc'::char(3)), bloomguard_check('t_text', 'abc'::char(3))
UNION ALL SELECT 11, '''abc''::name', guarded_exists('t_text', 'abc'::name), EXISTS (SELECT 1 FROM t_text WHERE k = 'abc'::name), bloomguard_check('t_text', 'abc'::name)
UNION ALL SELECT 12, 'compressible, plain argument', guarded_exists('t_text', repeat('compressible-', 400)), EXISTS (SELECT 1 FROM t_text WHERE k = repeat('compressible-', 400)), bloomguard_check('t_text', repeat('compressible-', 400))
UNION ALL SELECT 13, 'compressible, one byte short', guarded_exists('t_text', left(repeat('compressible-', 400), -1)), EXISTS (SELECT 1 FROM t_text WHERE k = left(repeat('compressible-', 400), -1)), bloomguard_check('t_text', left(repeat('compressible-', 400), -1))
UNION ALL SELECT 14, 'compressible, as varchar', guarded_exists('t_text', repeat('compressible-', 400)::varchar), EXISTS (SELECT 1 FROM t_text WHERE k = repeat('compressible-', 400)::varchar), bloomguard_check('t_text', repeat('compressible-', 400)::varchar)
UNION ALL SELECT 15, 'compressible, VARIADIC', guarded_exists('t_text', VARIADIC ARRAY[repeat('compressible-', 400)]), EXISTS (SELECT 1 FROM t_text WHERE k = repeat('compressible-', 400)), bloomguard_check('t_text', VARIADIC ARRAY[repeat('compressible-', 400)])
UNION ALL SELECT 16, 'external, plain argument', guarded_exists('t_text', (SELECT string_agg(md5(g::text), '' ORDER BY g) FROM generate_series(1, 75) g)), EXISTS (SELECT 1 FROM t_text WHERE k = (SELECT string_agg(md5(g::text), '' ORDER BY g) FROM generate_series(1, 75) g)), bloomguard_check('t_text', (SELECT string_agg(md5(g::text), '' ORDER BY g) FROM generate_series(1, 75) g))
UNION ALL SELECT 17, 'external, last byte changed', guarded_exists('t_text', (SELECT string_agg(md5(g::text), '' ORDER BY g) || 'x' FROM generate_series(1, 75) g)), EXISTS (SELECT 1 FROM t_text WHERE k = (SELECT string_agg(md5(g::text), '' ORDER BY g) || 'x' FROM generate_series(1, 75) g)), bloomguard_check('t_text', (SELECT string_agg(md5(g::text), '' ORDER BY g) || 'x' FROM generate_series(1, 75) g))
UNION ALL SELECT 18, 'external compressed, plain argument', guarded_exists('t_text', (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 10) FROM generate_series(1, 69) g)), EXISTS (SELECT 1 FROM t_text WHERE k = (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 10) FROM generate_series(1, 69) g)), bloomguard_check('t_text', (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 10) FROM generate_series(1, 69) g))
UNION ALL SELECT 19, 'external compressed, 9 repeats', guarded_exists('t_text', (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 9) FROM generate_series(1, 69) g)), EXISTS (SELECT 1 FROM t_text WHERE k = (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 9) FROM generate_series(1, 69) g)), bloomguard_check('t_text', (SELECT repeat(string_agg(md5(g::text), '' ORDER BY g), 9) FROM generate_series(1, 69) g))
UNION ALL SELECT 20, '''key7'' (unknown)', guarded_exists('t_text', 'key7'), EXISTS (SELECT 1 FROM t_text WHERE k = 'key7'), bloomguard_check('t_text', 'key7')
UNION ALL SELECT 21, '''key61'' (unknown)', guarded_exists('t_text', 'key61'), EXISTS (SELECT 1 FROM t_text WHERE k = 'key61'), bloomguard_check('t_text', 'key61')
) s ORDER BY n;
-- rows added after attach: long values through the trigger
INSERT INTO t_text VALUES (repeat('late-', 2000), 8);
INSERT INTO t_text SELECT string_agg(md5((g + 1000)::text), '' ORDER BY g), 9 FROM generate_series(1, 75) g;
SELECT guarded_exists('t_text', repeat('late-', 2000)) AS compressed,
       bloomguard_check('t_text', repeat('late-', 2000)) AS compressed_filter,
       guarded_exists('t_text', (SELECT string_agg(md5((g + 1000)::text), '' ORDER BY g) FROM generate_series(1, 75) g)) AS external,
       bloomguard_check('t_text', (SELECT string_agg(md5((g + 1000)::text), '' ORDER BY g) FROM generate_series(1, 75) g)) AS external_filter;
-- the stored (compressed, out-of-line) values as arguments, and fresh copies of them
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_text', k)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_text', k || '')) AS missing_copy,
       count(*) FILTER (WHERE NOT guarded_exists('t_text', k::varchar)) AS missing_varchar,
       count(*) FILTER (WHERE bloomguard_check('t_text', k) <> 'maybe') AS not_maybe,
       count(*) FILTER (WHERE bloomguard_check('t_text', k || '') <> 'maybe') AS not_maybe_copy
  FROM t_text;
SELECT count(*) FILTER (WHERE guarded_exists('t_text', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_text WHERE k = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_text', x)) AS found
  FROM (SELECT k || s AS x FROM t_text, unnest(ARRAY['', ' ', 'x']) s) c;
SELECT bloomguard_detach('t_text');
DROP TABLE t_text;

-- varchar(n): trailing blanks are significant
CREATE TABLE t_varchar (k varchar(10) PRIMARY KEY);
INSERT INTO t_varchar VALUES ('ab'), ('ab '), ('xyz');
INSERT INTO t_varchar SELECT 'v' || g FROM generate_series(1, 50) g;
SELECT bloomguard_attach('t_varchar');
SELECT * FROM (
          SELECT 1 AS n, '''ab'' (unknown)' AS arg, guarded_exists('t_varchar', 'ab') AS guarded, EXISTS (SELECT 1 FROM t_varchar WHERE k = 'ab') AS plain, bloomguard_check('t_varchar', 'ab') AS filter
UNION ALL SELECT 2, '''ab ''::varchar', guarded_exists('t_varchar', 'ab '::varchar), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'ab '::varchar), bloomguard_check('t_varchar', 'ab '::varchar)
UNION ALL SELECT 3, '''ab  ''::varchar', guarded_exists('t_varchar', 'ab  '::varchar), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'ab  '::varchar), bloomguard_check('t_varchar', 'ab  '::varchar)
UNION ALL SELECT 4, '''xyz''::text', guarded_exists('t_varchar', 'xyz'::text), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'xyz'::text), bloomguard_check('t_varchar', 'xyz'::text)
UNION ALL SELECT 5, '''xyz''::varchar(2)', guarded_exists('t_varchar', 'xyz'::varchar(2)), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'xyz'::varchar(2)), bloomguard_check('t_varchar', 'xyz'::varchar(2))
UNION ALL SELECT 6, '''xyz''::char(5)', guarded_exists('t_varchar', 'xyz'::char(5)), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'xyz'::char(5)), bloomguard_check('t_varchar', 'xyz'::char(5))
UNION ALL SELECT 7, '''v7'' (unknown)', guarded_exists('t_varchar', 'v7'), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'v7'), bloomguard_check('t_varchar', 'v7')
UNION ALL SELECT 8, '''a-very-long-string'' (unknown)', guarded_exists('t_varchar', 'a-very-long-string'), EXISTS (SELECT 1 FROM t_varchar WHERE k = 'a-very-long-string'), bloomguard_check('t_varchar', 'a-very-long-string')
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_varchar', k)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_varchar', k::text)) AS missing_text,
       count(*) FILTER (WHERE bloomguard_check('t_varchar', k) <> 'maybe') AS not_maybe
  FROM t_varchar;
SELECT bloomguard_detach('t_varchar');
DROP TABLE t_varchar;

-- char(n): trailing blanks are insignificant
CREATE TABLE t_char (k char(5) PRIMARY KEY);
INSERT INTO t_char VALUES ('ab'), ('cd   '), ('e');
INSERT INTO t_char SELECT 'c' || g FROM generate_series(1, 50) g;
INSERT INTO t_char VALUES ('ab   ');   -- equal to 'ab': a duplicate key
SELECT bloomguard_attach('t_char');
SELECT * FROM (
          SELECT 1 AS n, '''ab'' (unknown)' AS arg, guarded_exists('t_char', 'ab') AS guarded, EXISTS (SELECT 1 FROM t_char WHERE k = 'ab') AS plain, bloomguard_check('t_char', 'ab') AS filter
UNION ALL SELECT 2, '''ab   '' (unknown)', guarded_exists('t_char', 'ab   '), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab   '), bloomguard_check('t_char', 'ab   ')
UNION ALL SELECT 3, '''ab''::char(5)', guarded_exists('t_char', 'ab'::char(5)), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab'::char(5)), bloomguard_check('t_char', 'ab'::char(5))
UNION ALL SELECT 4, '''ab''::char(2)', guarded_exists('t_char', 'ab'::char(2)), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab'::char(2)), bloomguard_check('t_char', 'ab'::char(2))
UNION ALL SELECT 5, '''ab        ''::bpchar', guarded_exists('t_char', 'ab        '::bpchar), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab        '::bpchar), bloomguard_check('t_char', 'ab        '::bpchar)
UNION ALL SELECT 6, '''cd'' (unknown)', guarded_exists('t_char', 'cd'), EXISTS (SELECT 1 FROM t_char WHERE k = 'cd'), bloomguard_check('t_char', 'cd')
UNION ALL SELECT 7, '''e ''::char(2)', guarded_exists('t_char', 'e '::char(2)), EXISTS (SELECT 1 FROM t_char WHERE k = 'e '::char(2)), bloomguard_check('t_char', 'e '::char(2))
UNION ALL SELECT 8, ''' ab'' (unknown)', guarded_exists('t_char', ' ab'), EXISTS (SELECT 1 FROM t_char WHERE k = ' ab'), bloomguard_check('t_char', ' ab')
UNION ALL SELECT 9, '''abc'' (unknown)', guarded_exists('t_char', 'abc'), EXISTS (SELECT 1 FROM t_char WHERE k = 'abc'), bloomguard_check('t_char', 'abc')
UNION ALL SELECT 10, '''ab''::text', guarded_exists('t_char', 'ab'::text), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab'::text), bloomguard_check('t_char', 'ab'::text)
UNION ALL SELECT 11, '''ab   ''::text', guarded_exists('t_char', 'ab   '::text), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab   '::text), bloomguard_check('t_char', 'ab   '::text)
UNION ALL SELECT 12, '''ab''::varchar', guarded_exists('t_char', 'ab'::varchar), EXISTS (SELECT 1 FROM t_char WHERE k = 'ab'::varchar), bloomguard_check('t_char', 'ab'::varchar)
) s ORDER BY n;
INSERT INTO t_char VALUES ('late ');
SELECT guarded_exists('t_char', 'late') AS guarded, bloomguard_check('t_char', 'late'::bpchar) AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_char', k)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_char', rtrim(k)::bpchar)) AS missing_trimmed,
       count(*) FILTER (WHERE NOT guarded_exists('t_char', (k || '     ')::bpchar)) AS missing_padded,
       count(*) FILTER (WHERE bloomguard_check('t_char', rtrim(k)::bpchar) <> 'maybe') AS not_maybe
  FROM t_char;
SELECT bloomguard_detach('t_char');
DROP TABLE t_char;

-- bytea: a sha256 hash as the key (a file-hash lookup service's key)
CREATE TABLE t_bytea (h bytea PRIMARY KEY, n int);
INSERT INTO t_bytea SELECT sha256(g::text::bytea), g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('t_bytea');
SELECT * FROM (
          SELECT 1 AS n, 'sha256(''1'')' AS arg, guarded_exists('t_bytea', sha256('1'::bytea)) AS guarded, EXISTS (SELECT 1 FROM t_bytea WHERE h = sha256('1'::bytea)) AS plain, bloomguard_check('t_bytea', sha256('1'::bytea)) AS filter
UNION ALL SELECT 2, 'decode(hex)', guarded_exists('t_bytea', decode('6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b', 'hex')), EXISTS (SELECT 1 FROM t_bytea WHERE h = decode('6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b', 'hex')), bloomguard_check('t_bytea', decode('6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b', 'hex'))
UNION ALL SELECT 3, '''\x6b86...'' (unknown)', guarded_exists('t_bytea', '\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'), EXISTS (SELECT 1 FROM t_bytea WHERE h = '\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'), bloomguard_check('t_bytea', '\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b')
UNION ALL SELECT 4, '''\x6B86...'' (unknown, upper case)', guarded_exists('t_bytea', '\x6B86B273FF34FCE19D6B804EFF5A3F5747ADA4EAA22F1D49C01E52DDB7875B4B'), EXISTS (SELECT 1 FROM t_bytea WHERE h = '\x6B86B273FF34FCE19D6B804EFF5A3F5747ADA4EAA22F1D49C01E52DDB7875B4B'), bloomguard_check('t_bytea', '\x6B86B273FF34FCE19D6B804EFF5A3F5747ADA4EAA22F1D49C01E52DDB7875B4B')
UNION ALL SELECT 5, 'sha256(''101'')', guarded_exists('t_bytea', sha256('101'::bytea)), EXISTS (SELECT 1 FROM t_bytea WHERE h = sha256('101'::bytea)), bloomguard_check('t_bytea', sha256('101'::bytea))
UNION ALL SELECT 6, 'first 31 bytes', guarded_exists('t_bytea', substring(sha256('1'::bytea) FROM 1 FOR 31)), EXISTS (SELECT 1 FROM t_bytea WHERE h = substring(sha256('1'::bytea) FROM 1 FOR 31)), bloomguard_check('t_bytea', substring(sha256('1'::bytea) FROM 1 FOR 31))
UNION ALL SELECT 7, '33 bytes', guarded_exists('t_bytea', sha256('1'::bytea) || '\x00'::bytea), EXISTS (SELECT 1 FROM t_bytea WHERE h = sha256('1'::bytea) || '\x00'::bytea), bloomguard_check('t_bytea', sha256('1'::bytea) || '\x00'::bytea)
UNION ALL SELECT 8, 'VARIADIC ARRAY[sha256(''2'')]', guarded_exists('t_bytea', VARIADIC ARRAY[sha256('2'::bytea)]), EXISTS (SELECT 1 FROM t_bytea WHERE h = sha256('2'::bytea)), bloomguard_check('t_bytea', VARIADIC ARRAY[sha256('2'::bytea)])
) s ORDER BY n;
-- a text argument for a bytea key: SQL's own error
SELECT guarded_exists('t_bytea', '\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'::text);
SELECT EXISTS (SELECT 1 FROM t_bytea WHERE h = '\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'::text);
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_bytea', h)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_bytea', sha256(n::text::bytea))) AS missing_recomputed,
       count(*) FILTER (WHERE bloomguard_check('t_bytea', h) <> 'maybe') AS not_maybe
  FROM t_bytea;
SELECT count(*) FILTER (WHERE guarded_exists('t_bytea', sha256(g::text::bytea)) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_bytea WHERE h = sha256(g::text::bytea))) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_bytea', sha256(g::text::bytea))) AS found,
       count(*) FILTER (WHERE bloomguard_check('t_bytea', sha256(g::text::bytea)) = 'absent') > 850 AS mostly_absent
  FROM generate_series(1, 1000) g;
SELECT bloomguard_detach('t_bytea');
DROP TABLE t_bytea;

-- text: the 64-character hex form of the same hash
CREATE TABLE t_hex (h text PRIMARY KEY);
INSERT INTO t_hex SELECT encode(sha256(g::text::bytea), 'hex') FROM generate_series(1, 100) g;
SELECT bloomguard_attach('t_hex');
SELECT * FROM (
          SELECT 1 AS n, 'hex (unknown)' AS arg, guarded_exists('t_hex', '6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b') AS guarded, EXISTS (SELECT 1 FROM t_hex WHERE h = '6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b') AS plain, bloomguard_check('t_hex', '6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b') AS filter
UNION ALL SELECT 2, 'encode(sha256(''1''))', guarded_exists('t_hex', encode(sha256('1'::bytea), 'hex')), EXISTS (SELECT 1 FROM t_hex WHERE h = encode(sha256('1'::bytea), 'hex')), bloomguard_check('t_hex', encode(sha256('1'::bytea), 'hex'))
UNION ALL SELECT 3, 'HEX (upper case)', guarded_exists('t_hex', upper(encode(sha256('1'::bytea), 'hex'))), EXISTS (SELECT 1 FROM t_hex WHERE h = upper(encode(sha256('1'::bytea), 'hex'))), bloomguard_check('t_hex', upper(encode(sha256('1'::bytea), 'hex')))
UNION ALL SELECT 4, 'hex::varchar(64)', guarded_exists('t_hex', encode(sha256('1'::bytea), 'hex')::varchar(64)), EXISTS (SELECT 1 FROM t_hex WHERE h = encode(sha256('1'::bytea), 'hex')::varchar(64)), bloomguard_check('t_hex', encode(sha256('1'::bytea), 'hex')::varchar(64))
UNION ALL SELECT 5, 'hex::char(64)', guarded_exists('t_hex', encode(sha256('1'::bytea), 'hex')::char(64)), EXISTS (SELECT 1 FROM t_hex WHERE h = encode(sha256('1'::bytea), 'hex')::char(64)), bloomguard_check('t_hex', encode(sha256('1'::bytea), 'hex')::char(64))
UNION ALL SELECT 6, 'hex of sha256(''101'')', guarded_exists('t_hex', encode(sha256('101'::bytea), 'hex')), EXISTS (SELECT 1 FROM t_hex WHERE h = encode(sha256('101'::bytea), 'hex')), bloomguard_check('t_hex', encode(sha256('101'::bytea), 'hex'))
UNION ALL SELECT 7, '''\x'' || hex', guarded_exists('t_hex', '\x' || encode(sha256('1'::bytea), 'hex')), EXISTS (SELECT 1 FROM t_hex WHERE h = '\x' || encode(sha256('1'::bytea), 'hex')), bloomguard_check('t_hex', '\x' || encode(sha256('1'::bytea), 'hex'))
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_hex', h)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_hex', h) <> 'maybe') AS not_maybe
  FROM t_hex;
SELECT count(*) FILTER (WHERE guarded_exists('t_hex', encode(sha256(g::text::bytea), 'hex')) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_hex WHERE h = encode(sha256(g::text::bytea), 'hex'))) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_hex', encode(sha256(g::text::bytea), 'hex'))) AS found
  FROM generate_series(1, 1000) g;
SELECT bloomguard_detach('t_hex');
DROP TABLE t_hex;

-- uuid
CREATE TABLE t_uuid (id uuid PRIMARY KEY);
INSERT INTO t_uuid SELECT md5(g::text)::uuid FROM generate_series(1, 100) g;
SELECT bloomguard_attach('t_uuid');
SELECT * FROM (
          SELECT 1 AS n, 'md5(''1'')::uuid' AS arg, guarded_exists('t_uuid', md5('1')::uuid) AS guarded, EXISTS (SELECT 1 FROM t_uuid WHERE id = md5('1')::uuid) AS plain, bloomguard_check('t_uuid', md5('1')::uuid) AS filter
UNION ALL SELECT 2, 'canonical string (unknown)', guarded_exists('t_uuid', 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'), EXISTS (SELECT 1 FROM t_uuid WHERE id = 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'), bloomguard_check('t_uuid', 'c4ca4238-a0b9-2382-0dcc-509a6f75849b')
UNION ALL SELECT 3, 'upper case (unknown)', guarded_exists('t_uuid', 'C4CA4238-A0B9-2382-0DCC-509A6F75849B'), EXISTS (SELECT 1 FROM t_uuid WHERE id = 'C4CA4238-A0B9-2382-0DCC-509A6F75849B'), bloomguard_check('t_uuid', 'C4CA4238-A0B9-2382-0DCC-509A6F75849B')
UNION ALL SELECT 4, 'braces, no hyphens (unknown)', guarded_exists('t_uuid', '{c4ca4238a0b923820dcc509a6f75849b}'), EXISTS (SELECT 1 FROM t_uuid WHERE id = '{c4ca4238a0b923820dcc509a6f75849b}'), bloomguard_check('t_uuid', '{c4ca4238a0b923820dcc509a6f75849b}')
UNION ALL SELECT 5, 'md5(''101'')::uuid', guarded_exists('t_uuid', md5('101')::uuid), EXISTS (SELECT 1 FROM t_uuid WHERE id = md5('101')::uuid), bloomguard_check('t_uuid', md5('101')::uuid)
UNION ALL SELECT 6, 'nil uuid (unknown)', guarded_exists('t_uuid', '00000000-0000-0000-0000-000000000000'), EXISTS (SELECT 1 FROM t_uuid WHERE id = '00000000-0000-0000-0000-000000000000'), bloomguard_check('t_uuid', '00000000-0000-0000-0000-000000000000')
UNION ALL SELECT 7, 'VARIADIC ARRAY[uuid]', guarded_exists('t_uuid', VARIADIC ARRAY[md5('2')::uuid]), EXISTS (SELECT 1 FROM t_uuid WHERE id = md5('2')::uuid), bloomguard_check('t_uuid', VARIADIC ARRAY[md5('2')::uuid])
) s ORDER BY n;
-- a text argument for a uuid key: SQL's own error
SELECT guarded_exists('t_uuid', 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'::text);
SELECT EXISTS (SELECT 1 FROM t_uuid WHERE id = 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'::text);
SELECT guarded_exists('t_uuid', 'not-a-uuid');
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_uuid', id)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_uuid', upper(id::text)::uuid)) AS missing_reparsed,
       count(*) FILTER (WHERE bloomguard_check('t_uuid', id) <> 'maybe') AS not_maybe
  FROM t_uuid;
SELECT count(*) FILTER (WHERE guarded_exists('t_uuid', md5(g::text)::uuid) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_uuid WHERE id = md5(g::text)::uuid)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_uuid', md5(g::text)::uuid)) AS found
  FROM generate_series(1, 1000) g;
SELECT bloomguard_detach('t_uuid');
DROP TABLE t_uuid;

-- date
CREATE TABLE t_date (d date PRIMARY KEY);
INSERT INTO t_date SELECT '2024-01-01'::date + g FROM generate_series(0, 99) g;
INSERT INTO t_date VALUES ('infinity');
SELECT bloomguard_attach('t_date');
SELECT * FROM (
          SELECT 1 AS n, '''2024-01-01'' (unknown)' AS arg, guarded_exists('t_date', '2024-01-01') AS guarded, EXISTS (SELECT 1 FROM t_date WHERE d = '2024-01-01') AS plain, bloomguard_check('t_date', '2024-01-01') AS filter
UNION ALL SELECT 2, '''2024-01-01''::date', guarded_exists('t_date', '2024-01-01'::date), EXISTS (SELECT 1 FROM t_date WHERE d = '2024-01-01'::date), bloomguard_check('t_date', '2024-01-01'::date)
UNION ALL SELECT 3, '''Jan 1, 2024'' (unknown)', guarded_exists('t_date', 'Jan 1, 2024'), EXISTS (SELECT 1 FROM t_date WHERE d = 'Jan 1, 2024'), bloomguard_check('t_date', 'Jan 1, 2024')
UNION ALL SELECT 4, '''2023-12-31''::date', guarded_exists('t_date', '2023-12-31'::date), EXISTS (SELECT 1 FROM t_date WHERE d = '2023-12-31'::date), bloomguard_check('t_date', '2023-12-31'::date)
UNION ALL SELECT 5, '''2024-04-09''::date (last)', guarded_exists('t_date', '2024-04-09'::date), EXISTS (SELECT 1 FROM t_date WHERE d = '2024-04-09'::date), bloomguard_check('t_date', '2024-04-09'::date)
UNION ALL SELECT 6, '''infinity'' (unknown)', guarded_exists('t_date', 'infinity'), EXISTS (SELECT 1 FROM t_date WHERE d = 'infinity'), bloomguard_check('t_date', 'infinity')
UNION ALL SELECT 7, '''-infinity''::date', guarded_exists('t_date', '-infinity'::date), EXISTS (SELECT 1 FROM t_date WHERE d = '-infinity'::date), bloomguard_check('t_date', '-infinity'::date)
UNION ALL SELECT 8, '''2024-01-01 00:00''::timestamp', guarded_exists('t_date', '2024-01-01 00:00'::timestamp), EXISTS (SELECT 1 FROM t_date WHERE d = '2024-01-01 00:00'::timestamp), bloomguard_check('t_date', '2024-01-01 00:00'::timestamp)
UNION ALL SELECT 9, '''2024-01-01 12:00''::timestamp', guarded_exists('t_date', '2024-01-01 12:00'::timestamp), EXISTS (SELECT 1 FROM t_date WHERE d = '2024-01-01 12:00'::timestamp), bloomguard_check('t_date', '2024-01-01 12:00'::timestamp)
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_date', d)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_date', d) <> 'maybe') AS not_maybe
  FROM t_date;
SELECT count(*) FILTER (WHERE guarded_exists('t_date', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_date WHERE d = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_date', x)) AS found
  FROM (SELECT '2023-06-01'::date + g AS x FROM generate_series(0, 500) g) c;
SELECT bloomguard_detach('t_date');
DROP TABLE t_date;

-- timestamp
CREATE TABLE t_ts (ts timestamp PRIMARY KEY);
INSERT INTO t_ts SELECT '2024-01-01 00:00'::timestamp + g * interval '1 hour' FROM generate_series(0, 99) g;
INSERT INTO t_ts VALUES ('2024-06-01 10:00:00.123456');
SELECT bloomguard_attach('t_ts');
SELECT * FROM (
          SELECT 1 AS n, '''2024-01-01 05:00'' (unknown)' AS arg, guarded_exists('t_ts', '2024-01-01 05:00') AS guarded, EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-01 05:00') AS plain, bloomguard_check('t_ts', '2024-01-01 05:00') AS filter
UNION ALL SELECT 2, '''2024-01-01 05:00''::timestamp', guarded_exists('t_ts', '2024-01-01 05:00'::timestamp), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-01 05:00'::timestamp), bloomguard_check('t_ts', '2024-01-01 05:00'::timestamp)
UNION ALL SELECT 3, '''2024-01-01T05:00:00.000'' (unknown)', guarded_exists('t_ts', '2024-01-01T05:00:00.000'), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-01T05:00:00.000'), bloomguard_check('t_ts', '2024-01-01T05:00:00.000')
UNION ALL SELECT 4, '''2024-01-01 05:00:00.000001''', guarded_exists('t_ts', '2024-01-01 05:00:00.000001'::timestamp), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-01 05:00:00.000001'::timestamp), bloomguard_check('t_ts', '2024-01-01 05:00:00.000001'::timestamp)
UNION ALL SELECT 5, '''2024-06-01 10:00:00.123456''', guarded_exists('t_ts', '2024-06-01 10:00:00.123456'::timestamp), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-06-01 10:00:00.123456'::timestamp), bloomguard_check('t_ts', '2024-06-01 10:00:00.123456'::timestamp)
UNION ALL SELECT 6, '''2024-06-01 10:00:00.123456''::timestamp(3)', guarded_exists('t_ts', '2024-06-01 10:00:00.123456'::timestamp(3)), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-06-01 10:00:00.123456'::timestamp(3)), bloomguard_check('t_ts', '2024-06-01 10:00:00.123456'::timestamp(3))
UNION ALL SELECT 7, '''2024-01-01''::date', guarded_exists('t_ts', '2024-01-01'::date), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-01'::date), bloomguard_check('t_ts', '2024-01-01'::date)
UNION ALL SELECT 8, '''2024-01-02''::date', guarded_exists('t_ts', '2024-01-02'::date), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-01-02'::date), bloomguard_check('t_ts', '2024-01-02'::date)
UNION ALL SELECT 9, '''2024-02-01 00:00''::timestamp', guarded_exists('t_ts', '2024-02-01 00:00'::timestamp), EXISTS (SELECT 1 FROM t_ts WHERE ts = '2024-02-01 00:00'::timestamp), bloomguard_check('t_ts', '2024-02-01 00:00'::timestamp)
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_ts', ts)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_ts', ts) <> 'maybe') AS not_maybe
  FROM t_ts;
SELECT count(*) FILTER (WHERE guarded_exists('t_ts', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_ts WHERE ts = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_ts', x)) AS found
  FROM (SELECT '2023-12-31 00:00'::timestamp + g * interval '30 minutes' AS x FROM generate_series(0, 500) g) c;
SELECT bloomguard_detach('t_ts');
DROP TABLE t_ts;

-- timestamptz: one instant written in several time zones
SET timezone = 'UTC';
CREATE TABLE t_tstz (ts timestamptz PRIMARY KEY);
INSERT INTO t_tstz SELECT '2024-01-01 12:00:00+00'::timestamptz + g * interval '1 hour' FROM generate_series(0, 99) g;
INSERT INTO t_tstz VALUES ('2024-01-01 13:00:00+01');   -- 12:00 UTC again: a duplicate key
SELECT bloomguard_attach('t_tstz');
SELECT * FROM (
          SELECT 1 AS n, '''2024-01-01 12:00:00+00'' (unknown)' AS arg, guarded_exists('t_tstz', '2024-01-01 12:00:00+00') AS guarded, EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00+00') AS plain, bloomguard_check('t_tstz', '2024-01-01 12:00:00+00') AS filter
UNION ALL SELECT 2, '''2024-01-01 13:00:00+01'' (unknown)', guarded_exists('t_tstz', '2024-01-01 13:00:00+01'), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 13:00:00+01'), bloomguard_check('t_tstz', '2024-01-01 13:00:00+01')
UNION ALL SELECT 3, '''2024-01-01 07:00:00-05''::timestamptz', guarded_exists('t_tstz', '2024-01-01 07:00:00-05'::timestamptz), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 07:00:00-05'::timestamptz), bloomguard_check('t_tstz', '2024-01-01 07:00:00-05'::timestamptz)
UNION ALL SELECT 4, '''2024-01-01 21:00 Asia/Tokyo'' (unknown)', guarded_exists('t_tstz', '2024-01-01 21:00 Asia/Tokyo'), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 21:00 Asia/Tokyo'), bloomguard_check('t_tstz', '2024-01-01 21:00 Asia/Tokyo')
UNION ALL SELECT 5, '''2024-01-01 12:00:00'' (unknown, UTC)', guarded_exists('t_tstz', '2024-01-01 12:00:00'), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00'), bloomguard_check('t_tstz', '2024-01-01 12:00:00')
UNION ALL SELECT 6, '''2024-01-01 11:59:59+00''::timestamptz', guarded_exists('t_tstz', '2024-01-01 11:59:59+00'::timestamptz), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 11:59:59+00'::timestamptz), bloomguard_check('t_tstz', '2024-01-01 11:59:59+00'::timestamptz)
UNION ALL SELECT 7, '''2024-01-01 12:00:00''::timestamp', guarded_exists('t_tstz', '2024-01-01 12:00:00'::timestamp), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00'::timestamp), bloomguard_check('t_tstz', '2024-01-01 12:00:00'::timestamp)
) s ORDER BY n;
-- the session's time zone changes between insert and lookup
SET timezone = 'Asia/Tokyo';
SELECT * FROM (
          SELECT 1 AS n, '''2024-01-01 21:00:00'' (unknown, Tokyo)' AS arg, guarded_exists('t_tstz', '2024-01-01 21:00:00') AS guarded, EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 21:00:00') AS plain, bloomguard_check('t_tstz', '2024-01-01 21:00:00') AS filter
UNION ALL SELECT 2, '''2024-01-01 12:00:00'' (unknown, Tokyo)', guarded_exists('t_tstz', '2024-01-01 12:00:00'), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00'), bloomguard_check('t_tstz', '2024-01-01 12:00:00')
UNION ALL SELECT 3, '''2024-01-01 12:00:00+00'' (unknown)', guarded_exists('t_tstz', '2024-01-01 12:00:00+00'), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00+00'), bloomguard_check('t_tstz', '2024-01-01 12:00:00+00')
UNION ALL SELECT 4, '''2024-01-01 21:00:00''::timestamp', guarded_exists('t_tstz', '2024-01-01 21:00:00'::timestamp), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 21:00:00'::timestamp), bloomguard_check('t_tstz', '2024-01-01 21:00:00'::timestamp)
UNION ALL SELECT 5, '''2024-01-01 12:00:00''::timestamp', guarded_exists('t_tstz', '2024-01-01 12:00:00'::timestamp), EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-01-01 12:00:00'::timestamp), bloomguard_check('t_tstz', '2024-01-01 12:00:00'::timestamp)
) s ORDER BY n;
-- a row inserted under this time zone
INSERT INTO t_tstz VALUES ('2024-03-01 09:00:00');
SET timezone = 'America/New_York';
SELECT guarded_exists('t_tstz', '2024-02-29 19:00:00') AS guarded,
       EXISTS (SELECT 1 FROM t_tstz WHERE ts = '2024-02-29 19:00:00') AS plain,
       bloomguard_check('t_tstz', '2024-03-01 00:00:00+00'::timestamptz) AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_tstz', ts)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_tstz', ts) <> 'maybe') AS not_maybe
  FROM t_tstz;
SELECT count(*) FILTER (WHERE guarded_exists('t_tstz', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_tstz WHERE ts = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_tstz', x)) AS found
  FROM (SELECT '2024-01-01 00:00:00+00'::timestamptz + g * interval '20 minutes' AS x FROM generate_series(0, 500) g) c;
RESET timezone;
SELECT bloomguard_detach('t_tstz');
DROP TABLE t_tstz;

-- interval: btree equality compares the span ('1 day' = '24 hours', '1 mon' = '30 days')
SELECT '1 day'::interval = '24 hours'::interval AS day_eq_24h,
       '1 mon'::interval = '30 days'::interval AS mon_eq_30d,
       '1 mon'::interval = '720 hours'::interval AS mon_eq_720h;
CREATE TABLE t_interval (iv interval PRIMARY KEY);
INSERT INTO t_interval VALUES ('1 day'), ('1 mon'), ('2 hours'), ('1 year 2 mons 3 days 04:05:06');
INSERT INTO t_interval SELECT g * interval '1 minute' FROM generate_series(1000, 1050) g;
INSERT INTO t_interval VALUES ('24 hours');   -- equal to '1 day': a duplicate key
SELECT bloomguard_attach('t_interval');
SELECT * FROM (
          SELECT 1 AS n, '''1 day'' (unknown)' AS arg, guarded_exists('t_interval', '1 day') AS guarded, EXISTS (SELECT 1 FROM t_interval WHERE iv = '1 day') AS plain, bloomguard_check('t_interval', '1 day') AS filter
UNION ALL SELECT 2, '''24 hours'' (unknown)', guarded_exists('t_interval', '24 hours'), EXISTS (SELECT 1 FROM t_interval WHERE iv = '24 hours'), bloomguard_check('t_interval', '24 hours')
UNION ALL SELECT 3, '''24 hours''::interval', guarded_exists('t_interval', '24 hours'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '24 hours'::interval), bloomguard_check('t_interval', '24 hours'::interval)
UNION ALL SELECT 4, '''1440 minutes''::interval', guarded_exists('t_interval', '1440 minutes'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '1440 minutes'::interval), bloomguard_check('t_interval', '1440 minutes'::interval)
UNION ALL SELECT 5, '''30 days''::interval', guarded_exists('t_interval', '30 days'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '30 days'::interval), bloomguard_check('t_interval', '30 days'::interval)
UNION ALL SELECT 6, '''720 hours'' (unknown)', guarded_exists('t_interval', '720 hours'), EXISTS (SELECT 1 FROM t_interval WHERE iv = '720 hours'), bloomguard_check('t_interval', '720 hours')
UNION ALL SELECT 7, '''120 minutes''::interval', guarded_exists('t_interval', '120 minutes'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '120 minutes'::interval), bloomguard_check('t_interval', '120 minutes'::interval)
UNION ALL SELECT 8, '''1 day 00:00:01''::interval', guarded_exists('t_interval', '1 day 00:00:01'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '1 day 00:00:01'::interval), bloomguard_check('t_interval', '1 day 00:00:01'::interval)
UNION ALL SELECT 9, '''1 year 2 mons 3 days 04:05:06''', guarded_exists('t_interval', '1 year 2 mons 3 days 04:05:06'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '1 year 2 mons 3 days 04:05:06'::interval), bloomguard_check('t_interval', '1 year 2 mons 3 days 04:05:06'::interval)
UNION ALL SELECT 10, '''14 mons 76 hours 306 seconds''', guarded_exists('t_interval', '14 mons 76 hours 306 seconds'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '14 mons 76 hours 306 seconds'::interval), bloomguard_check('t_interval', '14 mons 76 hours 306 seconds'::interval)
UNION ALL SELECT 11, '''-1 day''::interval', guarded_exists('t_interval', '-1 day'::interval), EXISTS (SELECT 1 FROM t_interval WHERE iv = '-1 day'::interval), bloomguard_check('t_interval', '-1 day'::interval)
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_interval', iv)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_interval', justify_interval(iv))) AS missing_justified,
       count(*) FILTER (WHERE NOT guarded_exists('t_interval', iv * 60 / 60)) AS missing_recomputed,
       count(*) FILTER (WHERE bloomguard_check('t_interval', justify_hours(iv)) <> 'maybe') AS not_maybe
  FROM t_interval;
SELECT count(*) FILTER (WHERE guarded_exists('t_interval', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_interval WHERE iv = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_interval', x)) AS found
  FROM (SELECT g * interval '1 minute' AS x FROM generate_series(0, 3000, 10) g
        UNION ALL SELECT g * interval '1 hour' FROM generate_series(0, 1000) g) c;
SELECT bloomguard_detach('t_interval');
DROP TABLE t_interval;

-- boolean
CREATE TABLE t_bool (b boolean PRIMARY KEY);
INSERT INTO t_bool VALUES (true);
SELECT bloomguard_attach('t_bool');
SELECT * FROM (
          SELECT 1 AS n, 'true' AS arg, guarded_exists('t_bool', true) AS guarded, EXISTS (SELECT 1 FROM t_bool WHERE b = true) AS plain, bloomguard_check('t_bool', true) AS filter
UNION ALL SELECT 2, '''yes'' (unknown)', guarded_exists('t_bool', 'yes'), EXISTS (SELECT 1 FROM t_bool WHERE b = 'yes'), bloomguard_check('t_bool', 'yes')
UNION ALL SELECT 3, '''t'' (unknown)', guarded_exists('t_bool', 't'), EXISTS (SELECT 1 FROM t_bool WHERE b = 't'), bloomguard_check('t_bool', 't')
UNION ALL SELECT 4, 'false', guarded_exists('t_bool', false), EXISTS (SELECT 1 FROM t_bool WHERE b = false), bloomguard_check('t_bool', false)
UNION ALL SELECT 5, '''off'' (unknown)', guarded_exists('t_bool', 'off'), EXISTS (SELECT 1 FROM t_bool WHERE b = 'off'), bloomguard_check('t_bool', 'off')
UNION ALL SELECT 6, '1 > 0', guarded_exists('t_bool', 1 > 0), EXISTS (SELECT 1 FROM t_bool WHERE b = (1 > 0)), bloomguard_check('t_bool', 1 > 0)
) s ORDER BY n;
SELECT guarded_exists('t_bool', 1);
SELECT EXISTS (SELECT 1 FROM t_bool WHERE b = 1);
INSERT INTO t_bool VALUES (false);
SELECT guarded_exists('t_bool', false) AS guarded, bloomguard_check('t_bool', 'no') AS filter;
SELECT bloomguard_detach('t_bool');
DROP TABLE t_bool;

-- "char"
CREATE TABLE t_qchar (c "char" PRIMARY KEY);
INSERT INTO t_qchar VALUES ('a'), ('b'), ('Z'), ('\001'), ('\200');
SELECT bloomguard_attach('t_qchar');
SELECT * FROM (
          SELECT 1 AS n, '''a'' (unknown)' AS arg, guarded_exists('t_qchar', 'a') AS guarded, EXISTS (SELECT 1 FROM t_qchar WHERE c = 'a') AS plain, bloomguard_check('t_qchar', 'a') AS filter
UNION ALL SELECT 2, '''a''::"char"', guarded_exists('t_qchar', 'a'::"char"), EXISTS (SELECT 1 FROM t_qchar WHERE c = 'a'::"char"), bloomguard_check('t_qchar', 'a'::"char")
UNION ALL SELECT 3, '''ab'' (unknown: first byte)', guarded_exists('t_qchar', 'ab'), EXISTS (SELECT 1 FROM t_qchar WHERE c = 'ab'), bloomguard_check('t_qchar', 'ab')
UNION ALL SELECT 4, '''z'' (unknown)', guarded_exists('t_qchar', 'z'), EXISTS (SELECT 1 FROM t_qchar WHERE c = 'z'), bloomguard_check('t_qchar', 'z')
UNION ALL SELECT 5, '''\001'' (unknown)', guarded_exists('t_qchar', '\001'), EXISTS (SELECT 1 FROM t_qchar WHERE c = '\001'), bloomguard_check('t_qchar', '\001')
UNION ALL SELECT 6, '''\377''::"char"', guarded_exists('t_qchar', '\377'::"char"), EXISTS (SELECT 1 FROM t_qchar WHERE c = '\377'::"char"), bloomguard_check('t_qchar', '\377'::"char")
UNION ALL SELECT 7, '''a''::text', guarded_exists('t_qchar', 'a'::text), EXISTS (SELECT 1 FROM t_qchar WHERE c = 'a'::text), bloomguard_check('t_qchar', 'a'::text)
UNION ALL SELECT 8, '''\200'' (unknown)', guarded_exists('t_qchar', '\200'), EXISTS (SELECT 1 FROM t_qchar WHERE c = '\200'), bloomguard_check('t_qchar', '\200')
UNION ALL SELECT 9, '''\200''::"char"', guarded_exists('t_qchar', '\200'::"char"), EXISTS (SELECT 1 FROM t_qchar WHERE c = '\200'::"char"), bloomguard_check('t_qchar', '\200'::"char")
UNION ALL SELECT 10, '(-128)::"char"', guarded_exists('t_qchar', (-128)::"char"), EXISTS (SELECT 1 FROM t_qchar WHERE c = (-128)::"char"), bloomguard_check('t_qchar', (-128)::"char")
UNION ALL SELECT 11, '''\200''::text::"char"', guarded_exists('t_qchar', '\200'::text::"char"), EXISTS (SELECT 1 FROM t_qchar WHERE c = '\200'::text::"char"), bloomguard_check('t_qchar', '\200'::text::"char")
) s ORDER BY n;
-- a byte with the high bit set, added through the trigger
INSERT INTO t_qchar VALUES ('\377');
SELECT guarded_exists('t_qchar', '\377'::"char") AS guarded, EXISTS (SELECT 1 FROM t_qchar WHERE c = '\377'::"char") AS plain,
       bloomguard_check('t_qchar', '\377') AS filter, guarded_exists('t_qchar', (-1)::"char") AS from_int;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_qchar', c)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_qchar', c) <> 'maybe') AS not_maybe
  FROM t_qchar;
SELECT bloomguard_detach('t_qchar');
DROP TABLE t_qchar;

-- oid
CREATE TABLE t_oid (o oid PRIMARY KEY);
INSERT INTO t_oid SELECT (g * 100)::oid FROM generate_series(1, 50) g;
INSERT INTO t_oid VALUES (4294967295), (0), (2147483647), (2147483648), (3000000000);
SELECT bloomguard_attach('t_oid');
SELECT * FROM (
          SELECT 1 AS n, '100::oid' AS arg, guarded_exists('t_oid', 100::oid) AS guarded, EXISTS (SELECT 1 FROM t_oid WHERE o = 100::oid) AS plain, bloomguard_check('t_oid', 100::oid) AS filter
UNION ALL SELECT 2, '''100'' (unknown)', guarded_exists('t_oid', '100'), EXISTS (SELECT 1 FROM t_oid WHERE o = '100'), bloomguard_check('t_oid', '100')
UNION ALL SELECT 3, '100 (int4)', guarded_exists('t_oid', 100), EXISTS (SELECT 1 FROM t_oid WHERE o = 100), bloomguard_check('t_oid', 100)
UNION ALL SELECT 4, '100::int8', guarded_exists('t_oid', 100::int8), EXISTS (SELECT 1 FROM t_oid WHERE o = 100::int8), bloomguard_check('t_oid', 100::int8)
UNION ALL SELECT 5, '''4294967295'' (unknown)', guarded_exists('t_oid', '4294967295'), EXISTS (SELECT 1 FROM t_oid WHERE o = '4294967295'), bloomguard_check('t_oid', '4294967295')
UNION ALL SELECT 6, '''-1'' (unknown: 4294967295)', guarded_exists('t_oid', '-1'), EXISTS (SELECT 1 FROM t_oid WHERE o = '-1'), bloomguard_check('t_oid', '-1')
UNION ALL SELECT 7, '-1 (int4)', guarded_exists('t_oid', -1), EXISTS (SELECT 1 FROM t_oid WHERE o = -1), bloomguard_check('t_oid', -1)
UNION ALL SELECT 8, '150::oid', guarded_exists('t_oid', 150::oid), EXISTS (SELECT 1 FROM t_oid WHERE o = 150::oid), bloomguard_check('t_oid', 150::oid)
UNION ALL SELECT 9, '''0'' (unknown)', guarded_exists('t_oid', '0'), EXISTS (SELECT 1 FROM t_oid WHERE o = '0'), bloomguard_check('t_oid', '0')
UNION ALL SELECT 10, '2147483647::oid', guarded_exists('t_oid', 2147483647::oid), EXISTS (SELECT 1 FROM t_oid WHERE o = 2147483647::oid), bloomguard_check('t_oid', 2147483647::oid)
UNION ALL SELECT 11, '2147483648::oid', guarded_exists('t_oid', 2147483648::oid), EXISTS (SELECT 1 FROM t_oid WHERE o = 2147483648::oid), bloomguard_check('t_oid', 2147483648::oid)
UNION ALL SELECT 12, '''3000000000'' (unknown)', guarded_exists('t_oid', '3000000000'), EXISTS (SELECT 1 FROM t_oid WHERE o = '3000000000'), bloomguard_check('t_oid', '3000000000')
UNION ALL SELECT 13, '3000000001::oid', guarded_exists('t_oid', 3000000001::oid), EXISTS (SELECT 1 FROM t_oid WHERE o = 3000000001::oid), bloomguard_check('t_oid', 3000000001::oid)
) s ORDER BY n;
-- an oid above 2^31 added through the trigger
INSERT INTO t_oid VALUES (4000000000);
SELECT guarded_exists('t_oid', 4000000000::oid) AS guarded, EXISTS (SELECT 1 FROM t_oid WHERE o = 4000000000::oid) AS plain,
       bloomguard_check('t_oid', '4000000000') AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_oid', o)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_oid', o::text::oid)) AS missing_reparsed,
       count(*) FILTER (WHERE NOT guarded_exists('t_oid', o::int8::oid)) AS missing_from_int8,
       count(*) FILTER (WHERE bloomguard_check('t_oid', o) <> 'maybe') AS not_maybe,
       count(*) FILTER (WHERE bloomguard_check('t_oid', o::text::oid) <> 'maybe') AS not_maybe_reparsed
  FROM t_oid;
SELECT count(*) FILTER (WHERE guarded_exists('t_oid', g::oid) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_oid WHERE o = g::oid)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_oid', g::oid)) AS found
  FROM (SELECT generate_series(0, 6000, 50) AS g UNION ALL SELECT generate_series(2147483600, 2147483700)
        UNION ALL SELECT 2999999999 + generate_series(0, 2) UNION ALL SELECT 4294967295) c;
SELECT bloomguard_detach('t_oid');
DROP TABLE t_oid;

-- inet
CREATE TABLE t_inet (a inet PRIMARY KEY);
INSERT INTO t_inet VALUES ('10.0.0.1'), ('10.0.0.1/24'), ('::1'), ('192.168.1.0/24'), ('2001:db8::1/64');
INSERT INTO t_inet SELECT ('172.16.0.' || g)::inet FROM generate_series(1, 50) g;
INSERT INTO t_inet VALUES ('10.0.0.1/32');   -- equal to '10.0.0.1': a duplicate key
SELECT bloomguard_attach('t_inet');
SELECT * FROM (
          SELECT 1 AS n, '''10.0.0.1'' (unknown)' AS arg, guarded_exists('t_inet', '10.0.0.1') AS guarded, EXISTS (SELECT 1 FROM t_inet WHERE a = '10.0.0.1') AS plain, bloomguard_check('t_inet', '10.0.0.1') AS filter
UNION ALL SELECT 2, '''10.0.0.1/32''::inet', guarded_exists('t_inet', '10.0.0.1/32'::inet), EXISTS (SELECT 1 FROM t_inet WHERE a = '10.0.0.1/32'::inet), bloomguard_check('t_inet', '10.0.0.1/32'::inet)
UNION ALL SELECT 3, '''10.0.0.1/24''::inet', guarded_exists('t_inet', '10.0.0.1/24'::inet), EXISTS (SELECT 1 FROM t_inet WHERE a = '10.0.0.1/24'::inet), bloomguard_check('t_inet', '10.0.0.1/24'::inet)
UNION ALL SELECT 4, '''10.0.0.1/25''::inet', guarded_exists('t_inet', '10.0.0.1/25'::inet), EXISTS (SELECT 1 FROM t_inet WHERE a = '10.0.0.1/25'::inet), bloomguard_check('t_inet', '10.0.0.1/25'::inet)
UNION ALL SELECT 5, '''10.0.0.2/24''::inet', guarded_exists('t_inet', '10.0.0.2/24'::inet), EXISTS (SELECT 1 FROM t_inet WHERE a = '10.0.0.2/24'::inet), bloomguard_check('t_inet', '10.0.0.2/24'::inet)
UNION ALL SELECT 6, '''::1'' (unknown)', guarded_exists('t_inet', '::1'), EXISTS (SELECT 1 FROM t_inet WHERE a = '::1'), bloomguard_check('t_inet', '::1')
UNION ALL SELECT 7, '''0:0:0:0:0:0:0:1/128'' (unknown)', guarded_exists('t_inet', '0:0:0:0:0:0:0:1/128'), EXISTS (SELECT 1 FROM t_inet WHERE a = '0:0:0:0:0:0:0:1/128'), bloomguard_check('t_inet', '0:0:0:0:0:0:0:1/128')
UNION ALL SELECT 8, '''2001:db8::1/64''::inet', guarded_exists('t_inet', '2001:db8::1/64'::inet), EXISTS (SELECT 1 FROM t_inet WHERE a = '2001:db8::1/64'::inet), bloomguard_check('t_inet', '2001:db8::1/64'::inet)
UNION ALL SELECT 9, '''192.168.1.0/24''::cidr', guarded_exists('t_inet', '192.168.1.0/24'::cidr), EXISTS (SELECT 1 FROM t_inet WHERE a = '192.168.1.0/24'::cidr), bloomguard_check('t_inet', '192.168.1.0/24'::cidr)
UNION ALL SELECT 10, '''172.16.0.7'' (unknown)', guarded_exists('t_inet', '172.16.0.7'), EXISTS (SELECT 1 FROM t_inet WHERE a = '172.16.0.7'), bloomguard_check('t_inet', '172.16.0.7')
) s ORDER BY n;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_inet', a)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_inet', a::text::inet)) AS missing_reparsed,
       count(*) FILTER (WHERE bloomguard_check('t_inet', a) <> 'maybe') AS not_maybe
  FROM t_inet;
SELECT count(*) FILTER (WHERE guarded_exists('t_inet', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_inet WHERE a = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_inet', x)) AS found
  FROM (SELECT set_masklen(('172.16.0.' || g)::inet, m) AS x FROM generate_series(0, 255) g, unnest(ARRAY[24, 32]) m) c;
SELECT bloomguard_detach('t_inet');
DROP TABLE t_inet;

-- jsonb: key order and numeric scale do not matter
CREATE TABLE t_jsonb (j jsonb PRIMARY KEY);
INSERT INTO t_jsonb VALUES ('{"a": 1, "b": [1, 2]}'), ('[1, 2, 3]'), ('"str"'), ('1.0'), ('null'), ('{}');
INSERT INTO t_jsonb SELECT jsonb_build_object('id', g, 'tag', 't' || g) FROM generate_series(1, 50) g;
INSERT INTO t_jsonb VALUES ('1.00');   -- equal to 1.0: a duplicate key
SELECT bloomguard_attach('t_jsonb');
-- jsonb's hash function gives the empty containers '[]' and '{}' one hash
-- value: the absent '[]' is a false positive that does not depend on the seed
SELECT * FROM (
          SELECT 1 AS n, '''{"b": [1, 2], "a": 1}'' (unknown)' AS arg, guarded_exists('t_jsonb', '{"b": [1, 2], "a": 1}') AS guarded, EXISTS (SELECT 1 FROM t_jsonb WHERE j = '{"b": [1, 2], "a": 1}') AS plain, bloomguard_check('t_jsonb', '{"b": [1, 2], "a": 1}') AS filter
UNION ALL SELECT 2, '''{"a": 1.00, "b": [1.0, 2]}''::jsonb', guarded_exists('t_jsonb', '{"a": 1.00, "b": [1.0, 2]}'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '{"a": 1.00, "b": [1.0, 2]}'::jsonb), bloomguard_check('t_jsonb', '{"a": 1.00, "b": [1.0, 2]}'::jsonb)
UNION ALL SELECT 3, '''{"a": 1, "b": [2, 1]}''::jsonb', guarded_exists('t_jsonb', '{"a": 1, "b": [2, 1]}'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '{"a": 1, "b": [2, 1]}'::jsonb), bloomguard_check('t_jsonb', '{"a": 1, "b": [2, 1]}'::jsonb)
UNION ALL SELECT 4, '''1'' (unknown)', guarded_exists('t_jsonb', '1'), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '1'), bloomguard_check('t_jsonb', '1')
UNION ALL SELECT 5, '''1.5''::jsonb', guarded_exists('t_jsonb', '1.5'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '1.5'::jsonb), bloomguard_check('t_jsonb', '1.5'::jsonb)
UNION ALL SELECT 6, '''"1"''::jsonb', guarded_exists('t_jsonb', '"1"'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '"1"'::jsonb), bloomguard_check('t_jsonb', '"1"'::jsonb)
UNION ALL SELECT 7, '''null'' (unknown)', guarded_exists('t_jsonb', 'null'), EXISTS (SELECT 1 FROM t_jsonb WHERE j = 'null'), bloomguard_check('t_jsonb', 'null')
UNION ALL SELECT 8, '''"str"''::jsonb', guarded_exists('t_jsonb', '"str"'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '"str"'::jsonb), bloomguard_check('t_jsonb', '"str"'::jsonb)
UNION ALL SELECT 9, '''{}''::jsonb', guarded_exists('t_jsonb', '{}'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '{}'::jsonb), bloomguard_check('t_jsonb', '{}'::jsonb)
UNION ALL SELECT 10, '''[]''::jsonb', guarded_exists('t_jsonb', '[]'::jsonb), EXISTS (SELECT 1 FROM t_jsonb WHERE j = '[]'::jsonb), bloomguard_check('t_jsonb', '[]'::jsonb)
UNION ALL SELECT 11, 'jsonb_build_object(''tag'', ''t7'', ''id'', 7.0)', guarded_exists('t_jsonb', jsonb_build_object('tag', 't7', 'id', 7.0)), EXISTS (SELECT 1 FROM t_jsonb WHERE j = jsonb_build_object('tag', 't7', 'id', 7.0)), bloomguard_check('t_jsonb', jsonb_build_object('tag', 't7', 'id', 7.0))
) s ORDER BY n;
SELECT guarded_exists('t_jsonb', '1'::json);
SELECT EXISTS (SELECT 1 FROM t_jsonb WHERE j = '1'::json);
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_jsonb', j)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_jsonb', j::text::jsonb)) AS missing_reparsed,
       count(*) FILTER (WHERE bloomguard_check('t_jsonb', j) <> 'maybe') AS not_maybe
  FROM t_jsonb;
SELECT count(*) FILTER (WHERE guarded_exists('t_jsonb', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_jsonb WHERE j = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_jsonb', x)) AS found
  FROM (SELECT jsonb_build_object('id', g / s, 'tag', 't' || g) AS x FROM generate_series(1, 100) g, unnest(ARRAY[1.0, 1.00]) s) c;
SELECT bloomguard_detach('t_jsonb');
DROP TABLE t_jsonb;

-- int[]: an array key
CREATE TABLE t_arr (a int[] PRIMARY KEY);
INSERT INTO t_arr VALUES ('{1,2,3}'), ('{}'), ('{3,2,1}'), ('{1,NULL}'), ('{{1,2},{3,4}}');
INSERT INTO t_arr SELECT ARRAY[g, g * g] FROM generate_series(1, 50) g;
SELECT bloomguard_attach('t_arr');
-- the array hash function sees neither lower bounds nor dimensions: the absent
-- '[0:2]={1,2,3}' and ARRAY[1,2,3,4] hash like present keys, false positives
-- that do not depend on the seed
SELECT * FROM (
          SELECT 1 AS n, 'ARRAY[1,2,3]' AS arg, guarded_exists('t_arr', ARRAY[1,2,3]) AS guarded, EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[1,2,3]) AS plain, bloomguard_check('t_arr', ARRAY[1,2,3]) AS filter
UNION ALL SELECT 2, '''{1,2,3}'' (unknown)', guarded_exists('t_arr', '{1,2,3}'), EXISTS (SELECT 1 FROM t_arr WHERE a = '{1,2,3}'), bloomguard_check('t_arr', '{1,2,3}')
UNION ALL SELECT 3, '''[0:2]={1,2,3}'' (unknown)', guarded_exists('t_arr', '[0:2]={1,2,3}'), EXISTS (SELECT 1 FROM t_arr WHERE a = '[0:2]={1,2,3}'), bloomguard_check('t_arr', '[0:2]={1,2,3}')
UNION ALL SELECT 4, 'ARRAY[1,NULL]::int[]', guarded_exists('t_arr', ARRAY[1,NULL]::int[]), EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[1,NULL]::int[]), bloomguard_check('t_arr', ARRAY[1,NULL]::int[])
UNION ALL SELECT 5, '''{}'' (unknown)', guarded_exists('t_arr', '{}'), EXISTS (SELECT 1 FROM t_arr WHERE a = '{}'), bloomguard_check('t_arr', '{}')
UNION ALL SELECT 6, 'ARRAY[[1,2],[3,4]]', guarded_exists('t_arr', ARRAY[[1,2],[3,4]]), EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[[1,2],[3,4]]), bloomguard_check('t_arr', ARRAY[[1,2],[3,4]])
UNION ALL SELECT 7, 'ARRAY[1,2,3,4]', guarded_exists('t_arr', ARRAY[1,2,3,4]), EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[1,2,3,4]), bloomguard_check('t_arr', ARRAY[1,2,3,4])
UNION ALL SELECT 8, 'ARRAY[2,1,3]', guarded_exists('t_arr', ARRAY[2,1,3]), EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[2,1,3]), bloomguard_check('t_arr', ARRAY[2,1,3])
UNION ALL SELECT 9, 'ARRAY[7,49]', guarded_exists('t_arr', ARRAY[7,49]), EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[7,49]), bloomguard_check('t_arr', ARRAY[7,49])
) s ORDER BY n;
-- int8[] is another type: SQL's own error
SELECT guarded_exists('t_arr', ARRAY[1,2,3]::int8[]);
SELECT EXISTS (SELECT 1 FROM t_arr WHERE a = ARRAY[1,2,3]::int8[]);
-- VARIADIC spreads the array into key values: three values for one key column
SELECT guarded_exists('t_arr', VARIADIC ARRAY[1,2,3]);
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_arr', a)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_arr', a) <> 'maybe') AS not_maybe
  FROM t_arr;
SELECT count(*) FILTER (WHERE guarded_exists('t_arr', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_arr WHERE a = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_arr', x)) AS found
  FROM (SELECT ARRAY[g, h] AS x FROM generate_series(1, 30) g, generate_series(1, 900, 7) h) c;
SELECT bloomguard_detach('t_arr');
DROP TABLE t_arr;

-- domains over int and over text
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE DOMAIN upcode AS text CHECK (VALUE ~ '^[A-Z]+$');
CREATE TABLE t_dint (id posint PRIMARY KEY);
INSERT INTO t_dint SELECT g FROM generate_series(1, 100) g;
CREATE TABLE t_dtext (code upcode PRIMARY KEY);
INSERT INTO t_dtext VALUES ('ABC'), ('XYZ'), ('Q');
SELECT bloomguard_attach('t_dint');
SELECT bloomguard_attach('t_dtext');
SELECT * FROM (
          SELECT 1 AS n, '5::posint' AS arg, guarded_exists('t_dint', 5::posint) AS guarded, EXISTS (SELECT 1 FROM t_dint WHERE id = 5::posint) AS plain, bloomguard_check('t_dint', 5::posint) AS filter
UNION ALL SELECT 2, '5 (int4)', guarded_exists('t_dint', 5), EXISTS (SELECT 1 FROM t_dint WHERE id = 5), bloomguard_check('t_dint', 5)
UNION ALL SELECT 3, '''5'' (unknown)', guarded_exists('t_dint', '5'), EXISTS (SELECT 1 FROM t_dint WHERE id = '5'), bloomguard_check('t_dint', '5')
UNION ALL SELECT 4, '5::int8', guarded_exists('t_dint', 5::int8), EXISTS (SELECT 1 FROM t_dint WHERE id = 5::int8), bloomguard_check('t_dint', 5::int8)
UNION ALL SELECT 5, '5.0 (numeric)', guarded_exists('t_dint', 5.0), EXISTS (SELECT 1 FROM t_dint WHERE id = 5.0), bloomguard_check('t_dint', 5.0)
UNION ALL SELECT 6, '101::posint', guarded_exists('t_dint', 101::posint), EXISTS (SELECT 1 FROM t_dint WHERE id = 101::posint), bloomguard_check('t_dint', 101::posint)
UNION ALL SELECT 7, '-5 (int4)', guarded_exists('t_dint', -5), EXISTS (SELECT 1 FROM t_dint WHERE id = -5), bloomguard_check('t_dint', -5)
UNION ALL SELECT 8, '''-5'' (unknown)', guarded_exists('t_dint', '-5'), EXISTS (SELECT 1 FROM t_dint WHERE id = '-5'), bloomguard_check('t_dint', '-5')
UNION ALL SELECT 9, '3000000000 (int8)', guarded_exists('t_dint', 3000000000), EXISTS (SELECT 1 FROM t_dint WHERE id = 3000000000), bloomguard_check('t_dint', 3000000000)
UNION ALL SELECT 10, '5::float8', guarded_exists('t_dint', 5::float8), EXISTS (SELECT 1 FROM t_dint WHERE id = 5::float8), bloomguard_check('t_dint', 5::float8)
) s ORDER BY n;
SELECT guarded_exists('t_dint', '-5'::posint);
SELECT * FROM (
          SELECT 1 AS n, '''ABC'' (unknown)' AS arg, guarded_exists('t_dtext', 'ABC') AS guarded, EXISTS (SELECT 1 FROM t_dtext WHERE code = 'ABC') AS plain, bloomguard_check('t_dtext', 'ABC') AS filter
UNION ALL SELECT 2, '''ABC''::upcode', guarded_exists('t_dtext', 'ABC'::upcode), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'ABC'::upcode), bloomguard_check('t_dtext', 'ABC'::upcode)
UNION ALL SELECT 3, '''ABC''::text', guarded_exists('t_dtext', 'ABC'::text), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'ABC'::text), bloomguard_check('t_dtext', 'ABC'::text)
UNION ALL SELECT 4, '''ABC''::varchar', guarded_exists('t_dtext', 'ABC'::varchar), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'ABC'::varchar), bloomguard_check('t_dtext', 'ABC'::varchar)
UNION ALL SELECT 5, '''abc'' (unknown)', guarded_exists('t_dtext', 'abc'), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'abc'), bloomguard_check('t_dtext', 'abc')
UNION ALL SELECT 6, '''ABD''::upcode', guarded_exists('t_dtext', 'ABD'::upcode), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'ABD'::upcode), bloomguard_check('t_dtext', 'ABD'::upcode)
UNION ALL SELECT 7, '''Q''::char(3)', guarded_exists('t_dtext', 'Q'::char(3)), EXISTS (SELECT 1 FROM t_dtext WHERE code = 'Q'::char(3)), bloomguard_check('t_dtext', 'Q'::char(3))
) s ORDER BY n;
SELECT guarded_exists('t_dtext', 'abc'::upcode);
INSERT INTO t_dtext VALUES ('LATE');
SELECT guarded_exists('t_dtext', 'LATE') AS guarded, bloomguard_check('t_dtext', 'LATE'::upcode) AS filter;
SELECT (SELECT count(*) FILTER (WHERE NOT guarded_exists('t_dint', id)) FROM t_dint) AS missing_int,
       (SELECT count(*) FILTER (WHERE bloomguard_check('t_dint', id::int) <> 'maybe') FROM t_dint) AS not_maybe_int,
       (SELECT count(*) FILTER (WHERE NOT guarded_exists('t_dtext', code)) FROM t_dtext) AS missing_text,
       (SELECT count(*) FILTER (WHERE bloomguard_check('t_dtext', code::text) <> 'maybe') FROM t_dtext) AS not_maybe_text;
SELECT bloomguard_detach('t_dint');
SELECT bloomguard_detach('t_dtext');
DROP TABLE t_dint, t_dtext;
DROP DOMAIN posint;
DROP DOMAIN upcode;

-- enum
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE t_enum (m mood PRIMARY KEY);
INSERT INTO t_enum VALUES ('sad'), ('happy');
SELECT bloomguard_attach('t_enum');
SELECT * FROM (
          SELECT 1 AS n, '''happy'' (unknown)' AS arg, guarded_exists('t_enum', 'happy') AS guarded, EXISTS (SELECT 1 FROM t_enum WHERE m = 'happy') AS plain, bloomguard_check('t_enum', 'happy') AS filter
UNION ALL SELECT 2, '''happy''::mood', guarded_exists('t_enum', 'happy'::mood), EXISTS (SELECT 1 FROM t_enum WHERE m = 'happy'::mood), bloomguard_check('t_enum', 'happy'::mood)
UNION ALL SELECT 3, '''ok''::mood', guarded_exists('t_enum', 'ok'::mood), EXISTS (SELECT 1 FROM t_enum WHERE m = 'ok'::mood), bloomguard_check('t_enum', 'ok'::mood)
UNION ALL SELECT 4, '''sad'' (unknown)', guarded_exists('t_enum', 'sad'), EXISTS (SELECT 1 FROM t_enum WHERE m = 'sad'), bloomguard_check('t_enum', 'sad')
UNION ALL SELECT 5, 'VARIADIC ARRAY[''sad'']::mood[]', guarded_exists('t_enum', VARIADIC ARRAY['sad']::mood[]), EXISTS (SELECT 1 FROM t_enum WHERE m = 'sad'::mood), bloomguard_check('t_enum', VARIADIC ARRAY['sad']::mood[])
) s ORDER BY n;
SELECT guarded_exists('t_enum', 'angry');
SELECT EXISTS (SELECT 1 FROM t_enum WHERE m = 'angry');
SELECT guarded_exists('t_enum', 'happy'::text);
SELECT EXISTS (SELECT 1 FROM t_enum WHERE m = 'happy'::text);
-- a label added after attach, used through the trigger
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
INSERT INTO t_enum VALUES ('ok'), ('meh');
SELECT guarded_exists('t_enum', 'ok') AS ok, bloomguard_check('t_enum', 'ok') AS ok_filter,
       guarded_exists('t_enum', 'meh'::mood) AS meh, bloomguard_check('t_enum', 'meh') AS meh_filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_enum', m)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('t_enum', m) <> 'maybe') AS not_maybe
  FROM t_enum;
SELECT bloomguard_detach('t_enum');
DROP TABLE t_enum;
DROP TYPE mood;

-- composite key (int, text): (1,'x') vs (1,'y')
CREATE TABLE t_c2 (a int, b text, PRIMARY KEY (a, b));
INSERT INTO t_c2 VALUES (1, 'x'), (1, 'y'), (2, 'x');
INSERT INTO t_c2 SELECT g, 'k' || g FROM generate_series(10, 100) g;
SELECT bloomguard_attach('t_c2');
SELECT * FROM (
          SELECT 1 AS n, '(1, ''x'')' AS arg, guarded_exists('t_c2', 1, 'x') AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1, 'x')) AS plain, bloomguard_check('t_c2', 1, 'x') AS filter
UNION ALL SELECT 2, '(1, ''y'')', guarded_exists('t_c2', 1, 'y'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1, 'y')), bloomguard_check('t_c2', 1, 'y')
UNION ALL SELECT 3, '(1, ''z'')', guarded_exists('t_c2', 1, 'z'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1, 'z')), bloomguard_check('t_c2', 1, 'z')
UNION ALL SELECT 4, '(2, ''y'')', guarded_exists('t_c2', 2, 'y'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (2, 'y')), bloomguard_check('t_c2', 2, 'y')
UNION ALL SELECT 6, '(1::int8, ''x''::varchar)', guarded_exists('t_c2', 1::int8, 'x'::varchar), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1::int8, 'x'::varchar)), bloomguard_check('t_c2', 1::int8, 'x'::varchar)
UNION ALL SELECT 7, '(''1'', ''y'') (unknown)', guarded_exists('t_c2', '1', 'y'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = ('1', 'y')), bloomguard_check('t_c2', '1', 'y')
UNION ALL SELECT 8, '(1.0, ''x'')', guarded_exists('t_c2', 1.0, 'x'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1.0, 'x')), bloomguard_check('t_c2', 1.0, 'x')
UNION ALL SELECT 9, '(1.5, ''x'')', guarded_exists('t_c2', 1.5, 'x'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1.5, 'x')), bloomguard_check('t_c2', 1.5, 'x')
UNION ALL SELECT 10, '(3000000000, ''x'')', guarded_exists('t_c2', 3000000000, 'x'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (3000000000, 'x')), bloomguard_check('t_c2', 3000000000, 'x')
UNION ALL SELECT 11, '(1::float8, ''x''::text)', guarded_exists('t_c2', 1::float8, 'x'::text), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1::float8, 'x'::text)), bloomguard_check('t_c2', 1::float8, 'x'::text)
UNION ALL SELECT 14, '(NULL, ''x'')', guarded_exists('t_c2', NULL, 'x'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (NULL, 'x')), bloomguard_check('t_c2', NULL, 'x')
UNION ALL SELECT 15, '(1, NULL::text)', guarded_exists('t_c2', 1, NULL::text), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1, NULL::text)), bloomguard_check('t_c2', 1, NULL::text)
UNION ALL SELECT 16, '(50, ''k50'')', guarded_exists('t_c2', 50, 'k50'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (50, 'k50')), bloomguard_check('t_c2', 50, 'k50')
UNION ALL SELECT 17, '(50, ''k51'')', guarded_exists('t_c2', 50, 'k51'), EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (50, 'k51')), bloomguard_check('t_c2', 50, 'k51')
) s ORDER BY n;
-- an unknown literal next to an argument that is answered through SQL
SELECT guarded_exists('t_c2', 1::float8, 'y') AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1::float8, 'y')) AS plain, bloomguard_check('t_c2', 1::float8, 'y') AS filter;
SELECT guarded_exists('t_c2', 2::float8, 'y') AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (2::float8, 'y')) AS plain, bloomguard_check('t_c2', 2::float8, 'y') AS filter;
SELECT guarded_exists('t_c2', '1', 'x'::char(3)) AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = ('1', 'x'::char(3))) AS plain, bloomguard_check('t_c2', '1', 'x'::char(3)) AS filter;
-- the key values in the wrong order: SQL's own error
SELECT guarded_exists('t_c2', 'x'::text, 1);
SELECT EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = ('x'::text, 1));
-- VARIADIC with one element type: text for the int column is SQL's error
SELECT guarded_exists('t_c2', VARIADIC ARRAY['1', 'x']);
SELECT EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = ('1'::text, 'x'::text));
-- wrong number of key values
SELECT guarded_exists('t_c2', 1);
SELECT bloomguard_check('t_c2', 1, 'x', 'y');
SELECT guarded_exists('t_c2', VARIADIC ARRAY[1]);
INSERT INTO t_c2 VALUES (1, 'z');
SELECT guarded_exists('t_c2', 1, 'z') AS guarded, bloomguard_check('t_c2', 1::int2, 'z'::varchar) AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_c2', a, b)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_c2', a::int8, b::varchar)) AS missing_cast,
       count(*) FILTER (WHERE bloomguard_check('t_c2', a, b) <> 'maybe') AS not_maybe
  FROM t_c2;
SELECT count(*) FILTER (WHERE guarded_exists('t_c2', x, y) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (x, y))) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_c2', x, y)) AS found
  FROM generate_series(0, 110) x, (SELECT 'k' || g AS y FROM generate_series(0, 110) g UNION ALL VALUES ('x'), ('y'), ('z')) v;
SELECT bloomguard_detach('t_c2');
DROP TABLE t_c2;

-- composite key of three columns (bigint, date, numeric)
CREATE TABLE t_c3 (id bigint, day date, amount numeric, note text, PRIMARY KEY (id, day, amount));
INSERT INTO t_c3 SELECT g, '2024-01-01'::date + g, g + 0.50, 'n' || g FROM generate_series(1, 100) g;
INSERT INTO t_c3 VALUES (1, '2024-01-01', 1.0, 'one');
SELECT bloomguard_attach('t_c3');
SELECT * FROM (
          SELECT 1 AS n, '(1, ''2024-01-01'', 1)' AS arg, guarded_exists('t_c3', 1, '2024-01-01', 1) AS guarded, EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1, '2024-01-01', 1)) AS plain, bloomguard_check('t_c3', 1, '2024-01-01', 1) AS filter
UNION ALL SELECT 2, '(1, date, 1.00)', guarded_exists('t_c3', 1, '2024-01-01'::date, 1.00), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1, '2024-01-01'::date, 1.00)), bloomguard_check('t_c3', 1, '2024-01-01'::date, 1.00)
UNION ALL SELECT 3, '(1::int2, ''Jan 1 2024'', ''1.000'')', guarded_exists('t_c3', 1::int2, 'Jan 1 2024', '1.000'), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1::int2, 'Jan 1 2024', '1.000')), bloomguard_check('t_c3', 1::int2, 'Jan 1 2024', '1.000')
UNION ALL SELECT 4, '(1, ''2024-01-01'', 1.01)', guarded_exists('t_c3', 1, '2024-01-01', 1.01), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1, '2024-01-01', 1.01)), bloomguard_check('t_c3', 1, '2024-01-01', 1.01)
UNION ALL SELECT 5, '(1, ''2024-01-02'', 1)', guarded_exists('t_c3', 1, '2024-01-02', 1), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1, '2024-01-02', 1)), bloomguard_check('t_c3', 1, '2024-01-02', 1)
UNION ALL SELECT 6, '(1, ''2024-01-02'', 1.5)', guarded_exists('t_c3', 1, '2024-01-02', 1.5), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (1, '2024-01-02', 1.5)), bloomguard_check('t_c3', 1, '2024-01-02', 1.5)
UNION ALL SELECT 7, '(2, ''2024-01-03'', 2.500)', guarded_exists('t_c3', 2, '2024-01-03', 2.500), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2, '2024-01-03', 2.500)), bloomguard_check('t_c3', 2, '2024-01-03', 2.500)
UNION ALL SELECT 8, '(2, ''2024-01-03'', 2)', guarded_exists('t_c3', 2, '2024-01-03', 2), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2, '2024-01-03', 2)), bloomguard_check('t_c3', 2, '2024-01-03', 2)
UNION ALL SELECT 9, '(3000000000, ''2024-01-03'', 2.5)', guarded_exists('t_c3', 3000000000, '2024-01-03', 2.5), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (3000000000, '2024-01-03', 2.5)), bloomguard_check('t_c3', 3000000000, '2024-01-03', 2.5)
UNION ALL SELECT 10, '(2.0, ''2024-01-03'', 2.5)', guarded_exists('t_c3', 2.0, '2024-01-03', 2.5), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2.0, '2024-01-03', 2.5)), bloomguard_check('t_c3', 2.0, '2024-01-03', 2.5)
UNION ALL SELECT 11, '(2, timestamp, 2.5)', guarded_exists('t_c3', 2, '2024-01-03 00:00'::timestamp, 2.5), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2, '2024-01-03 00:00'::timestamp, 2.5)), bloomguard_check('t_c3', 2, '2024-01-03 00:00'::timestamp, 2.5)
UNION ALL SELECT 12, '(2, ''2024-01-03'', NULL)', guarded_exists('t_c3', 2, '2024-01-03', NULL), EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2, '2024-01-03', NULL)), bloomguard_check('t_c3', 2, '2024-01-03', NULL)
) s ORDER BY n;
SELECT guarded_exists('t_c3', 2, '2024-01-03', 2.5::float8) AS guarded, EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (2, '2024-01-03', 2.5::float8)) AS plain, bloomguard_check('t_c3', 2, '2024-01-03', 2.5::float8) AS filter;
SELECT guarded_exists('t_c3', 1, '2024-01-01');
SELECT guarded_exists('t_c3', 1, '2024-01-01', 1, 1);
INSERT INTO t_c3 VALUES (7, '2025-07-07', 7.000, 'late');
SELECT guarded_exists('t_c3', 7, '2025-07-07', 7) AS guarded, bloomguard_check('t_c3', 7::int2, '2025-07-07'::date, 7.0) AS filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_c3', id, day, amount)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_c3', id, day, round(amount, 5))) AS missing_rescaled,
       count(*) FILTER (WHERE bloomguard_check('t_c3', id, day, round(amount, 5)) <> 'maybe') AS not_maybe
  FROM t_c3;
SELECT count(*) FILTER (WHERE guarded_exists('t_c3', i, d, m) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_c3 WHERE (id, day, amount) = (i, d, m))) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_c3', i, d, m)) AS found
  FROM generate_series(0, 105) i, (SELECT '2024-01-01'::date + g AS d FROM generate_series(0, 105, 3) g) dd,
       (VALUES (1.0), (1.50), (4.5), (49.500), (50)) mm(m);
SELECT bloomguard_detach('t_c3');
DROP TABLE t_c3;

-- a key type with a btree opclass but no hash support: attach refuses it
CREATE TABLE t_money (id money PRIMARY KEY);
INSERT INTO t_money VALUES ('1.00'), ('2.50');
SELECT bloomguard_attach('t_money');
-- nothing is left behind
SELECT (SELECT count(*) FROM bloomguard_guards WHERE relation = 't_money'::regclass) AS registered,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 't_money'::regclass) AS triggers,
       (SELECT count(*) FROM bloomguard_health WHERE relation = 't_money'::regclass) AS in_health;
-- the unguarded table still answers like EXISTS, and the filter cannot say
SELECT guarded_exists('t_money', '1.00'::money) AS guarded, EXISTS (SELECT 1 FROM t_money WHERE id = '1.00'::money) AS plain;
SELECT guarded_exists('t_money', '3.00'::money) AS guarded, EXISTS (SELECT 1 FROM t_money WHERE id = '3.00'::money) AS plain;
SELECT bloomguard_check('t_money', '1.00'::money) AS filter;
-- the same for bit strings, for such a column in a composite key, and for
-- containers whose element type has no hash support
CREATE TABLE t_bit (id bit(8) PRIMARY KEY);
SELECT bloomguard_attach('t_bit');
CREATE TABLE t_mixed (a int, m money, PRIMARY KEY (a, m));
SELECT bloomguard_attach('t_mixed');
CREATE TABLE t_money_arr (id money[] PRIMARY KEY);
SELECT bloomguard_attach('t_money_arr');
CREATE TYPE money_pair AS (a money, b money);
CREATE TABLE t_money_row (id money_pair PRIMARY KEY);
SELECT bloomguard_attach('t_money_row');
SELECT count(*) AS registered FROM bloomguard_guards;
DROP TABLE t_money, t_bit, t_mixed, t_money_arr, t_money_row;
DROP TYPE money_pair;

-- text under a nondeterministic ICU collation: 'Hello' = 'hello'.
-- ICU collations need a UTF8 database, so this runs in one of its own.
\set regression_db :DBNAME
CREATE DATABASE bloomguard_types_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C';
\c bloomguard_types_icu
CREATE EXTENSION bloomguard;
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT 'Hello' = 'hello' COLLATE ci AS hello_eq, 'résumé' = 'RÉSUMÉ' COLLATE ci AS resume_eq,
       'résumé' = 'resume' COLLATE ci AS accents_eq;
CREATE TABLE t_ci (k text COLLATE ci PRIMARY KEY);
INSERT INTO t_ci VALUES ('Hello'), ('Straße'), ('résumé'), (repeat('Ab', 3000));
INSERT INTO t_ci SELECT 'Key' || g FROM generate_series(1, 60) g;
INSERT INTO t_ci VALUES ('HELLO');   -- equal to 'Hello': a duplicate key
SELECT pg_column_compression(k) AS compression FROM t_ci WHERE length(k) = 6000;
SELECT bloomguard_attach('t_ci');
SELECT * FROM (
          SELECT 1 AS n, '''Hello'' (unknown)' AS arg, guarded_exists('t_ci', 'Hello') AS guarded, EXISTS (SELECT 1 FROM t_ci WHERE k = 'Hello') AS plain, bloomguard_check('t_ci', 'Hello') AS filter
UNION ALL SELECT 2, '''hello'' (unknown)', guarded_exists('t_ci', 'hello'), EXISTS (SELECT 1 FROM t_ci WHERE k = 'hello'), bloomguard_check('t_ci', 'hello')
UNION ALL SELECT 3, '''HELLO''::text', guarded_exists('t_ci', 'HELLO'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'HELLO'::text), bloomguard_check('t_ci', 'HELLO'::text)
UNION ALL SELECT 4, '''hElLo''::varchar', guarded_exists('t_ci', 'hElLo'::varchar), EXISTS (SELECT 1 FROM t_ci WHERE k = 'hElLo'::varchar), bloomguard_check('t_ci', 'hElLo'::varchar)
UNION ALL SELECT 5, '''héllo''::text', guarded_exists('t_ci', 'héllo'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'héllo'::text), bloomguard_check('t_ci', 'héllo'::text)
UNION ALL SELECT 6, '''hello ''::text', guarded_exists('t_ci', 'hello '::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'hello '::text), bloomguard_check('t_ci', 'hello '::text)
UNION ALL SELECT 7, '''RÉSUMÉ''::text', guarded_exists('t_ci', 'RÉSUMÉ'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'RÉSUMÉ'::text), bloomguard_check('t_ci', 'RÉSUMÉ'::text)
UNION ALL SELECT 8, '''resume''::text', guarded_exists('t_ci', 'resume'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'resume'::text), bloomguard_check('t_ci', 'resume'::text)
UNION ALL SELECT 9, '''STRASSE''::text', guarded_exists('t_ci', 'STRASSE'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'STRASSE'::text), bloomguard_check('t_ci', 'STRASSE'::text)
UNION ALL SELECT 10, '''strasse''::text', guarded_exists('t_ci', 'strasse'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'strasse'::text), bloomguard_check('t_ci', 'strasse'::text)
UNION ALL SELECT 11, '''STRAẞE''::text (capital sharp s)', guarded_exists('t_ci', 'STRAẞE'::text), EXISTS (SELECT 1 FROM t_ci WHERE k = 'STRAẞE'::text), bloomguard_check('t_ci', 'STRAẞE'::text)
UNION ALL SELECT 12, 'repeat(''aB'', 3000): compressed row', guarded_exists('t_ci', repeat('aB', 3000)), EXISTS (SELECT 1 FROM t_ci WHERE k = repeat('aB', 3000)), bloomguard_check('t_ci', repeat('aB', 3000))
UNION ALL SELECT 13, 'repeat(''AB'', 3000)', guarded_exists('t_ci', repeat('AB', 3000)), EXISTS (SELECT 1 FROM t_ci WHERE k = repeat('AB', 3000)), bloomguard_check('t_ci', repeat('AB', 3000))
UNION ALL SELECT 14, 'repeat(''ab'', 2999)', guarded_exists('t_ci', repeat('ab', 2999)), EXISTS (SELECT 1 FROM t_ci WHERE k = repeat('ab', 2999)), bloomguard_check('t_ci', repeat('ab', 2999))
UNION ALL SELECT 15, '''KEY7'' (unknown)', guarded_exists('t_ci', 'KEY7'), EXISTS (SELECT 1 FROM t_ci WHERE k = 'KEY7'), bloomguard_check('t_ci', 'KEY7')
UNION ALL SELECT 16, '''key61'' (unknown)', guarded_exists('t_ci', 'key61'), EXISTS (SELECT 1 FROM t_ci WHERE k = 'key61'), bloomguard_check('t_ci', 'key61')
UNION ALL SELECT 17, 'VARIADIC ARRAY[''hello'']', guarded_exists('t_ci', VARIADIC ARRAY['hello']), EXISTS (SELECT 1 FROM t_ci WHERE k = 'hello'), bloomguard_check('t_ci', VARIADIC ARRAY['hello'])
UNION ALL SELECT 18, '''hello''::char(5)', guarded_exists('t_ci', 'hello'::char(5)), EXISTS (SELECT 1 FROM t_ci WHERE k = 'hello'::char(5)), bloomguard_check('t_ci', 'hello'::char(5))
) s ORDER BY n;
-- rows added after attach, found in another case
INSERT INTO t_ci VALUES ('World'), (repeat('Late', 2000));
SELECT guarded_exists('t_ci', 'WORLD') AS world, bloomguard_check('t_ci', 'wOrLd') AS world_filter,
       guarded_exists('t_ci', repeat('lATE', 2000)) AS late, bloomguard_check('t_ci', repeat('LATE', 2000)) AS late_filter;
SELECT count(*) FILTER (WHERE NOT guarded_exists('t_ci', k)) AS missing,
       count(*) FILTER (WHERE NOT guarded_exists('t_ci', upper(k))) AS missing_upper,
       count(*) FILTER (WHERE NOT guarded_exists('t_ci', lower(k))) AS missing_lower,
       count(*) FILTER (WHERE bloomguard_check('t_ci', upper(k)) <> 'maybe') AS not_maybe_upper,
       count(*) FILTER (WHERE bloomguard_check('t_ci', lower(k)) <> 'maybe') AS not_maybe_lower
  FROM t_ci WHERE k COLLATE "C" ~ '^[A-Za-z0-9]*$';
SELECT count(*) FILTER (WHERE guarded_exists('t_ci', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM t_ci WHERE k = x)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('t_ci', x)) AS found
  FROM (SELECT f.x FROM t_ci, unnest(ARRAY['', 'x', ' ']) s,
        LATERAL (VALUES (upper(k || s)), (lower(k || s)), (initcap(k || s))) f(x)) c;
SELECT bloomguard_detach('t_ci');
DROP TABLE t_ci;

-- a domain over text with the nondeterministic collation
CREATE DOMAIN ci_text AS text COLLATE ci;
CREATE TABLE t_ci_dom (k ci_text PRIMARY KEY);
INSERT INTO t_ci_dom VALUES ('Alpha'), ('Beta');
SELECT bloomguard_attach('t_ci_dom');
SELECT * FROM (
          SELECT 1 AS n, '''ALPHA'' (unknown)' AS arg, guarded_exists('t_ci_dom', 'ALPHA') AS guarded, EXISTS (SELECT 1 FROM t_ci_dom WHERE k = 'ALPHA') AS plain, bloomguard_check('t_ci_dom', 'ALPHA') AS filter
UNION ALL SELECT 2, '''alpha''::text', guarded_exists('t_ci_dom', 'alpha'::text), EXISTS (SELECT 1 FROM t_ci_dom WHERE k = 'alpha'::text), bloomguard_check('t_ci_dom', 'alpha'::text)
UNION ALL SELECT 3, '''beta''::ci_text', guarded_exists('t_ci_dom', 'beta'::ci_text), EXISTS (SELECT 1 FROM t_ci_dom WHERE k = 'beta'::ci_text), bloomguard_check('t_ci_dom', 'beta'::ci_text)
UNION ALL SELECT 4, '''gamma''::text', guarded_exists('t_ci_dom', 'gamma'::text), EXISTS (SELECT 1 FROM t_ci_dom WHERE k = 'gamma'::text), bloomguard_check('t_ci_dom', 'gamma'::text)
) s ORDER BY n;
SELECT bloomguard_detach('t_ci_dom');
DROP TABLE t_ci_dom;

-- composite key (int, text COLLATE ci)
CREATE TABLE t_ci_c2 (a int, b text COLLATE ci, PRIMARY KEY (a, b));
INSERT INTO t_ci_c2 VALUES (1, 'x'), (1, 'Y'), (2, 'x');
SELECT bloomguard_attach('t_ci_c2');
SELECT * FROM (
          SELECT 1 AS n, '(1, ''X'')' AS arg, guarded_exists('t_ci_c2', 1, 'X') AS guarded, EXISTS (SELECT 1 FROM t_ci_c2 WHERE (a, b) = (1, 'X')) AS plain, bloomguard_check('t_ci_c2', 1, 'X') AS filter
UNION ALL SELECT 2, '(1, ''y''::text)', guarded_exists('t_ci_c2', 1, 'y'::text), EXISTS (SELECT 1 FROM t_ci_c2 WHERE (a, b) = (1, 'y'::text)), bloomguard_check('t_ci_c2', 1, 'y'::text)
UNION ALL SELECT 3, '(2, ''Y'')', guarded_exists('t_ci_c2', 2, 'Y'), EXISTS (SELECT 1 FROM t_ci_c2 WHERE (a, b) = (2, 'Y')), bloomguard_check('t_ci_c2', 2, 'Y')
UNION ALL SELECT 4, '(2::int8, ''X''::varchar)', guarded_exists('t_ci_c2', 2::int8, 'X'::varchar), EXISTS (SELECT 1 FROM t_ci_c2 WHERE (a, b) = (2::int8, 'X'::varchar)), bloomguard_check('t_ci_c2', 2::int8, 'X'::varchar)
UNION ALL SELECT 5, '(1::float8, ''Y''::text)', guarded_exists('t_ci_c2', 1::float8, 'Y'::text), EXISTS (SELECT 1 FROM t_ci_c2 WHERE (a, b) = (1::float8, 'Y'::text)), bloomguard_check('t_ci_c2', 1::float8, 'Y'::text)
) s ORDER BY n;
SELECT bloomguard_detach('t_ci_c2');
DROP TABLE t_ci_c2;
SELECT count(*) AS registered FROM bloomguard_guards;
DROP EXTENSION bloomguard;
DROP DOMAIN ci_text;
DROP COLLATION ci;
\c :regression_db
DROP DATABASE bloomguard_types_icu WITH (FORCE);

SELECT count(*) AS registered FROM bloomguard_guards;
DROP EXTENSION bloomguard CASCADE;
