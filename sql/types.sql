-- types: guarded_exists and bloomguard_check for every supported primary
-- key type, against the EXISTS query they stand for.
--
-- Each case (compare_keys(), below) prints guarded_exists (guarded), the
-- plain EXISTS query with the same argument expression (plain) and
-- bloomguard_check (filter).  guarded
-- must equal plain, always.  filter must be 'maybe' for a present key, is
-- 'unknown' for an argument type answered through SQL, and is 'absent' for
-- the absent keys printed here: the tables are small next to the default
-- capacity (1000), so a false positive is about 1 in 10^8.
CREATE EXTENSION bloomguard;

\i sql/include/compare_keys.sql

-- smallint
CREATE TABLE t_int2 (id smallint PRIMARY KEY);
INSERT INTO t_int2 SELECT g FROM generate_series(-50, 50) g;
INSERT INTO t_int2 VALUES (-32768), (32767);
SELECT bloomguard_attach('t_int2');
SELECT * FROM compare_keys('t_int2', 'id',
  '7::int2',
  '7',
  '7::int8',
  '''7''',
  '-32768',
  '32767::int8',
  '-7::int2',
  '99::int2',
  '40000',
  '-40000',
  '32768::int8',
  '3000000000',
  '7.0',
  '7.5',
  '40000.0',
  '7::float8',
  '40000::float8');
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
SELECT * FROM compare_keys('t_int4', 'id',
  '42',
  '42::int2',
  '42::int8',
  '''42''',
  '''  42 ''',
  '2147483647::int8',
  '-2147483648',
  '101',
  '0::int2',
  '3000000000',
  '-3000000000',
  '2147483648',
  '4294967338',
  '5.0',
  '5.000',
  '5.5',
  '-0.0',
  '1e10',
  '1e30',
  '''NaN''::numeric',
  '''Infinity''::numeric',
  '5::float8',
  '5.5::float8',
  '5::real',
  'NULL',
  'NULL::int',
  'VARIADIC ARRAY[42]',
  'VARIADIC ARRAY[42]::int8[]',
  'VARIADIC ARRAY[42]::int2[]',
  'VARIADIC ARRAY[101]',
  'VARIADIC ARRAY[3000000000]',
  'VARIADIC ARRAY[5.0]',
  'VARIADIC ARRAY[NULL]::int[]',
  'VARIADIC NULL::int[]');
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
SELECT * FROM compare_keys('t_int8', 'id',
  '42',
  '42::int2',
  '''42''',
  '3000000000',
  '3000000000.0',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '-50000000350',
  '1000000008',
  '42.5',
  '42::float8');
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
SELECT * FROM compare_keys('t_num', 'id',
  '1',
  '1::int8',
  '1::int2',
  '1.0',
  '1.00',
  '''1''',
  '''1.000000''',
  '1.1',
  '1.100',
  '''1.10''',
  '1.01',
  '2.0',
  '2::int2',
  '3',
  '-0.000',
  '''NaN''',
  '''nan''::numeric',
  '''Infinity''',
  '''-Infinity''::numeric',
  '12345678901234567890.12300',
  '12345678901234567890.1231',
  '12.5000',
  '1::float8',
  '1.1::float8',
  '1.1::real',
  '1.0::numeric(10,4)');
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
SELECT * FROM compare_keys('t_float8', 'id',
  '0::float8',
  '''-0''::float8',
  '''-0''',
  '''NaN''',
  '''nan''::float8',
  '-(''NaN''::float8)',
  '''Infinity''::float8',
  '''-inf''',
  '1.5::float8',
  '''1.50''',
  '1.6::float8',
  '0',
  '1.5',
  '0.1',
  '1.5::real',
  '0.1::real',
  '''-0''::real');
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
SELECT * FROM compare_keys('t_float4', 'id',
  '0::real',
  '''0''',
  '''-0''::real',
  '''NaN''::real',
  '0.1::real',
  '0.2::real',
  '0.1',
  '0.1::float8',
  '2.5::float8',
  '0');
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
SELECT * FROM compare_keys('t_text', 'k',
  '''abc''',
  '''abc''::text',
  '''abc''::varchar',
  '''abc ''::text',
  '''abc  ''::text',
  '''ABC''::text',
  '''''',
  '''ÄÖÜ''::text',
  '''äöü''::text',
  '''abc''::char(3)',
  '''abc''::name',
  'repeat(''compressible-'', 400)',
  'left(repeat(''compressible-'', 400), -1)',
  'repeat(''compressible-'', 400)::varchar',
  'VARIADIC ARRAY[repeat(''compressible-'', 400)]',
  '(SELECT string_agg(md5(g::text), '''' ORDER BY g) FROM generate_series(1, 75) g)',
  '(SELECT string_agg(md5(g::text), '''' ORDER BY g) || ''x'' FROM generate_series(1, 75) g)',
  '(SELECT repeat(string_agg(md5(g::text), '''' ORDER BY g), 10) FROM generate_series(1, 69) g)',
  '(SELECT repeat(string_agg(md5(g::text), '''' ORDER BY g), 9) FROM generate_series(1, 69) g)',
  '''key7''',
  '''key61''');
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
SELECT * FROM compare_keys('t_varchar', 'k',
  '''ab''',
  '''ab ''::varchar',
  '''ab  ''::varchar',
  '''xyz''::text',
  '''xyz''::varchar(2)',
  '''xyz''::char(5)',
  '''v7''',
  '''a-very-long-string''');
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
SELECT * FROM compare_keys('t_char', 'k',
  '''ab''',
  '''ab   ''',
  '''ab''::char(5)',
  '''ab''::char(2)',
  '''ab        ''::bpchar',
  '''cd''',
  '''e ''::char(2)',
  ''' ab''',
  '''abc''',
  '''ab''::text',
  '''ab   ''::text',
  '''ab''::varchar');
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
SELECT * FROM compare_keys('t_bytea', 'h',
  'sha256(''1''::bytea)',
  'decode(''6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'', ''hex'')',
  '''\x6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b''',
  '''\x6B86B273FF34FCE19D6B804EFF5A3F5747ADA4EAA22F1D49C01E52DDB7875B4B''',
  'sha256(''101''::bytea)',
  'substring(sha256(''1''::bytea) FROM 1 FOR 31)',
  'sha256(''1''::bytea) || ''\x00''::bytea',
  'VARIADIC ARRAY[sha256(''2''::bytea)]');
-- a text argument for a bytea key: an error, as SQL's (naming the call)
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
SELECT * FROM compare_keys('t_hex', 'h',
  '''6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b''',
  'encode(sha256(''1''::bytea), ''hex'')',
  'upper(encode(sha256(''1''::bytea), ''hex''))',
  'encode(sha256(''1''::bytea), ''hex'')::varchar(64)',
  'encode(sha256(''1''::bytea), ''hex'')::char(64)',
  'encode(sha256(''101''::bytea), ''hex'')',
  '''\x'' || encode(sha256(''1''::bytea), ''hex'')');
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
SELECT * FROM compare_keys('t_uuid', 'id',
  'md5(''1'')::uuid',
  '''c4ca4238-a0b9-2382-0dcc-509a6f75849b''',
  '''C4CA4238-A0B9-2382-0DCC-509A6F75849B''',
  '''{c4ca4238a0b923820dcc509a6f75849b}''',
  'md5(''101'')::uuid',
  '''00000000-0000-0000-0000-000000000000''',
  'VARIADIC ARRAY[md5(''2'')::uuid]');
-- a text argument for a uuid key: an error, as SQL's (naming the call)
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
SELECT * FROM compare_keys('t_date', 'd',
  '''2024-01-01''',
  '''2024-01-01''::date',
  '''Jan 1, 2024''',
  '''2023-12-31''::date',
  '''2024-04-09''::date',
  '''infinity''',
  '''-infinity''::date',
  '''2024-01-01 00:00''::timestamp',
  '''2024-01-01 12:00''::timestamp');
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
SELECT * FROM compare_keys('t_ts', 'ts',
  '''2024-01-01 05:00''',
  '''2024-01-01 05:00''::timestamp',
  '''2024-01-01T05:00:00.000''',
  '''2024-01-01 05:00:00.000001''::timestamp',
  '''2024-06-01 10:00:00.123456''::timestamp',
  '''2024-06-01 10:00:00.123456''::timestamp(3)',
  '''2024-01-01''::date',
  '''2024-01-02''::date',
  '''2024-02-01 00:00''::timestamp');
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
SELECT * FROM compare_keys('t_tstz', 'ts',
  '''2024-01-01 12:00:00+00''',
  '''2024-01-01 13:00:00+01''',
  '''2024-01-01 07:00:00-05''::timestamptz',
  '''2024-01-01 21:00 Asia/Tokyo''',
  '''2024-01-01 12:00:00''',
  '''2024-01-01 11:59:59+00''::timestamptz',
  '''2024-01-01 12:00:00''::timestamp');
-- the session's time zone changes between insert and lookup
SET timezone = 'Asia/Tokyo';
SELECT * FROM compare_keys('t_tstz', 'ts',
  '''2024-01-01 21:00:00''',
  '''2024-01-01 12:00:00''',
  '''2024-01-01 12:00:00+00''',
  '''2024-01-01 21:00:00''::timestamp',
  '''2024-01-01 12:00:00''::timestamp');
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
SELECT * FROM compare_keys('t_interval', 'iv',
  '''1 day''',
  '''24 hours''',
  '''24 hours''::interval',
  '''1440 minutes''::interval',
  '''30 days''::interval',
  '''720 hours''',
  '''120 minutes''::interval',
  '''1 day 00:00:01''::interval',
  '''1 year 2 mons 3 days 04:05:06''::interval',
  '''14 mons 76 hours 306 seconds''::interval',
  '''-1 day''::interval');
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
SELECT * FROM compare_keys('t_bool', 'b',
  'true',
  '''yes''',
  '''t''',
  'false',
  '''off''',
  '1 > 0');
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
SELECT * FROM compare_keys('t_qchar', 'c',
  '''a''',
  '''a''::"char"',
  '''ab''',
  '''z''',
  '''\001''',
  '''\377''::"char"',
  '''a''::text',
  '''\200''',
  '''\200''::"char"',
  '(-128)::"char"',
  '''\200''::text::"char"');
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
SELECT * FROM compare_keys('t_oid', 'o',
  '100::oid',
  '''100''',
  '100',
  '100::int8',
  '''4294967295''',
  '''-1''',
  '-1',
  '150::oid',
  '''0''',
  '2147483647::oid',
  '2147483648::oid',
  '''3000000000''',
  '3000000001::oid');
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
SELECT * FROM compare_keys('t_inet', 'a',
  '''10.0.0.1''',
  '''10.0.0.1/32''::inet',
  '''10.0.0.1/24''::inet',
  '''10.0.0.1/25''::inet',
  '''10.0.0.2/24''::inet',
  '''::1''',
  '''0:0:0:0:0:0:0:1/128''',
  '''2001:db8::1/64''::inet',
  '''192.168.1.0/24''::cidr',
  '''172.16.0.7''');
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
SELECT * FROM compare_keys('t_jsonb', 'j',
  '''{"b": [1, 2], "a": 1}''',
  '''{"a": 1.00, "b": [1.0, 2]}''::jsonb',
  '''{"a": 1, "b": [2, 1]}''::jsonb',
  '''1''',
  '''1.5''::jsonb',
  '''"1"''::jsonb',
  '''null''',
  '''"str"''::jsonb',
  '''{}''::jsonb',
  '''[]''::jsonb',
  'jsonb_build_object(''tag'', ''t7'', ''id'', 7.0)');
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
SELECT * FROM compare_keys('t_arr', 'a',
  'ARRAY[1,2,3]',
  '''{1,2,3}''',
  '''[0:2]={1,2,3}''',
  'ARRAY[1,NULL]::int[]',
  '''{}''',
  'ARRAY[[1,2],[3,4]]',
  'ARRAY[1,2,3,4]',
  'ARRAY[2,1,3]',
  'ARRAY[7,49]');
-- int8[] is another type: an error, as SQL's (naming the call)
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
SELECT * FROM compare_keys('t_dint', 'id',
  '5::posint',
  '5',
  '''5''',
  '5::int8',
  '5.0',
  '101::posint',
  '-5',
  '''-5''',
  '3000000000',
  '5::float8');
SELECT guarded_exists('t_dint', '-5'::posint);
SELECT * FROM compare_keys('t_dtext', 'code',
  '''ABC''',
  '''ABC''::upcode',
  '''ABC''::text',
  '''ABC''::varchar',
  '''abc''',
  '''ABD''::upcode',
  '''Q''::char(3)');
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
SELECT * FROM compare_keys('t_enum', 'm',
  '''happy''',
  '''happy''::mood',
  '''ok''::mood',
  '''sad''',
  'VARIADIC ARRAY[''sad'']::mood[]');
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
SELECT * FROM compare_keys('t_c2', '(a, b)',
  '1, ''x''',
  '1, ''y''',
  '1, ''z''',
  '2, ''y''',
  '1::int8, ''x''::varchar',
  '''1'', ''y''',
  '1.0, ''x''',
  '1.5, ''x''',
  '3000000000, ''x''',
  '1::float8, ''x''::text',
  'NULL, ''x''',
  '1, NULL::text',
  '50, ''k50''',
  '50, ''k51''');
-- an unknown literal next to an argument that is answered through SQL
SELECT guarded_exists('t_c2', 1::float8, 'y') AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (1::float8, 'y')) AS plain, bloomguard_check('t_c2', 1::float8, 'y') AS filter;
SELECT guarded_exists('t_c2', 2::float8, 'y') AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = (2::float8, 'y')) AS plain, bloomguard_check('t_c2', 2::float8, 'y') AS filter;
SELECT guarded_exists('t_c2', '1', 'x'::char(3)) AS guarded, EXISTS (SELECT 1 FROM t_c2 WHERE (a, b) = ('1', 'x'::char(3))) AS plain, bloomguard_check('t_c2', '1', 'x'::char(3)) AS filter;
-- the key values in the wrong order: an error, as SQL's (naming the call)
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
SELECT * FROM compare_keys('t_c3', '(id, day, amount)',
  '1, ''2024-01-01'', 1',
  '1, ''2024-01-01''::date, 1.00',
  '1::int2, ''Jan 1 2024'', ''1.000''',
  '1, ''2024-01-01'', 1.01',
  '1, ''2024-01-02'', 1',
  '1, ''2024-01-02'', 1.5',
  '2, ''2024-01-03'', 2.500',
  '2, ''2024-01-03'', 2',
  '3000000000, ''2024-01-03'', 2.5',
  '2.0, ''2024-01-03'', 2.5',
  '2, ''2024-01-03 00:00''::timestamp, 2.5',
  '2, ''2024-01-03'', NULL');
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
\i sql/include/compare_keys.sql
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT 'Hello' = 'hello' COLLATE ci AS hello_eq, 'résumé' = 'RÉSUMÉ' COLLATE ci AS resume_eq,
       'résumé' = 'resume' COLLATE ci AS accents_eq;
CREATE TABLE t_ci (k text COLLATE ci PRIMARY KEY);
INSERT INTO t_ci VALUES ('Hello'), ('Straße'), ('résumé'), (repeat('Ab', 3000));
INSERT INTO t_ci SELECT 'Key' || g FROM generate_series(1, 60) g;
INSERT INTO t_ci VALUES ('HELLO');   -- equal to 'Hello': a duplicate key
SELECT pg_column_compression(k) AS compression FROM t_ci WHERE length(k) = 6000;
SELECT bloomguard_attach('t_ci');
SELECT * FROM compare_keys('t_ci', 'k',
  '''Hello''',
  '''hello''',
  '''HELLO''::text',
  '''hElLo''::varchar',
  '''héllo''::text',
  '''hello ''::text',
  '''RÉSUMÉ''::text',
  '''resume''::text',
  '''STRASSE''::text',
  '''strasse''::text',
  '''STRAẞE''::text',
  'repeat(''aB'', 3000)',
  'repeat(''AB'', 3000)',
  'repeat(''ab'', 2999)',
  '''KEY7''',
  '''key61''',
  'VARIADIC ARRAY[''hello'']',
  '''hello''::char(5)');
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
SELECT * FROM compare_keys('t_ci_dom', 'k',
  '''ALPHA''',
  '''alpha''::text',
  '''beta''::ci_text',
  '''gamma''::text');
SELECT bloomguard_detach('t_ci_dom');
DROP TABLE t_ci_dom;

-- composite key (int, text COLLATE ci)
CREATE TABLE t_ci_c2 (a int, b text COLLATE ci, PRIMARY KEY (a, b));
INSERT INTO t_ci_c2 VALUES (1, 'x'), (1, 'Y'), (2, 'x');
SELECT bloomguard_attach('t_ci_c2');
SELECT * FROM compare_keys('t_ci_c2', '(a, b)',
  '1, ''X''',
  '1, ''y''::text',
  '2, ''Y''',
  '2::int8, ''X''::varchar',
  '1::float8, ''Y''::text');
SELECT bloomguard_detach('t_ci_c2');
DROP TABLE t_ci_c2;

-- arguments that carry a collation of their own (a COLLATE clause, a
-- domain, a column): in the query "k = arg" it wins over the key column's
-- default one, so the key 'abc' matches 'ABC' COLLATE ci.  The filter and
-- the index compare with the column's collation: guarded_exists asks the
-- query (filter 'unknown'), and never says absent for such a match.
CREATE TABLE t_def (k text PRIMARY KEY);
INSERT INTO t_def VALUES ('abc'), ('Straße');
SELECT bloomguard_attach('t_def');
SELECT * FROM compare_keys('t_def', 'k',
  '''ABC'' COLLATE ci',
  '''ABC''::ci_text',
  '''STRASSE''::text COLLATE ci',
  '''abc'' COLLATE "C"',
  '''ABC'' COLLATE "C"',
  '''abc''');
CREATE TABLE t_args (x text COLLATE ci);
INSERT INTO t_args VALUES ('ABC'), ('abc'), ('STRASSE'), ('nope');
SELECT x, guarded_exists('t_def', x) AS guarded, EXISTS (SELECT 1 FROM t_def WHERE k = x) AS query,
       bloomguard_check('t_def', x) AS filter
  FROM t_args ORDER BY x COLLATE "C";
-- and the reverse: a key under ci, an argument compared bytewise
CREATE TABLE t_ci2 (k text COLLATE ci PRIMARY KEY);
INSERT INTO t_ci2 VALUES ('Alpha');
SELECT bloomguard_attach('t_ci2');
SELECT * FROM compare_keys('t_ci2', 'k',
  '''ALPHA'' COLLATE "C"',
  '''Alpha'' COLLATE "C"',
  '''ALPHA''');
SELECT bloomguard_detach('t_def'), bloomguard_detach('t_ci2');
DROP TABLE t_def, t_args, t_ci2;
SELECT count(*) AS registered FROM bloomguard_guards;
DROP FUNCTION compare_keys(regclass, text, text[]);
DROP EXTENSION bloomguard;
DROP DOMAIN ci_text;
DROP COLLATION ci;
\c :regression_db
DROP DATABASE bloomguard_types_icu WITH (FORCE);

SELECT count(*) AS registered FROM bloomguard_guards;
DROP FUNCTION compare_keys(regclass, text, text[]);
DROP EXTENSION bloomguard CASCADE;
