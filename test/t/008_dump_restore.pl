# A database dumped and restored comes back guarded: the registry is an
# extension configuration table, the triggers come with their tables, and
# the worker builds the filters. Answers are right the whole time.  Also:
# a data-only restore with --disable-triggers, and CREATE DATABASE TEMPLATE.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('main', qq{
bloomguard.maintenance_interval = 1
});
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE a (id int PRIMARY KEY);
	CREATE TABLE b (k1 text, k2 bigint, PRIMARY KEY (k1, k2));
	INSERT INTO a SELECT generate_series(1, 5000);
	INSERT INTO b SELECT 'k' || g, g FROM generate_series(1, 5000) g;
});
$node->safe_psql('src', q{SELECT bloomguard_attach('a', 20000)});
$node->safe_psql('src', q{SELECT bloomguard_attach('b', 30000, 0.001)});

my $wrong = q{
	SELECT (SELECT count(*) FROM a WHERE NOT guarded_exists('a', id) OR bloomguard_check('a', id) = 'absent') +
	       (SELECT count(*) FROM b WHERE NOT guarded_exists('b', k1, k2) OR bloomguard_check('b', k1, k2) = 'absent')};
my $ready = q{SELECT count(*) = 2 AND bool_and(state = 'ready') FROM bloomguard_health};

# full dump and restore
my $dump = $node->basedir . '/src.dump';
$node->command_ok(['pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src')], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(['pg_restore', '-d', $node->connstr('dst'), $dump], 'pg_restore');
is($node->safe_psql('dst', q{SELECT relation || ':' || capacity || ':' || error_rate FROM bloomguard_guards ORDER BY 1}),
	"a:20000:0.01\nb:30000:0.001", 'the registry came back with the dump');
is($node->safe_psql('dst', q{SELECT string_agg(tgrelid::regclass || ':' || tgenabled::text, ',' ORDER BY 1) FROM pg_trigger WHERE tgname = 'bloomguard'}),
	'a:A,b:A', 'the triggers came back, enabled ALWAYS');
is($node->safe_psql('dst', $wrong), '0', 'restored: every key found, never absent');
$node->poll_query_until('dst', $ready)
  or die 'the worker did not build the restored guards';
is($node->safe_psql('dst', $wrong), '0', 'restored and built: every key found, never absent');
cmp_ok($node->safe_psql('dst', q{SELECT count(*) FROM generate_series(10001, 20000) g WHERE bloomguard_check('a', g) = 'absent'}),
	'>', 9000, 'restored filter answers absent for absent keys');

# data-only restore with --disable-triggers: rows arrive without the trigger,
# and ENABLE TRIGGER ALL leaves it enabled but not ALWAYS.  (The registry's
# rows are table data too, so they come with the data-only restore.)
$node->safe_psql('postgres', 'CREATE DATABASE dst2');
$node->command_ok(['pg_restore', '--schema-only', '-d', $node->connstr('dst2'), $dump], 'schema-only restore');
$node->command_ok(['pg_restore', '--data-only', '--disable-triggers', '-d', $node->connstr('dst2'), $dump],
	'data-only restore with --disable-triggers');
is($node->safe_psql('dst2', q{SELECT string_agg(tgenabled::text, ',') FROM pg_trigger WHERE tgname = 'bloomguard'}),
	'O,O', 'pg_restore re-enabled the triggers, but not ALWAYS');
is($node->safe_psql('dst2', $wrong), '0', 'not trusted: every key found, never absent');
sleep 3;    # the worker must not build a filter while the trigger is not ALWAYS
is($node->safe_psql('dst2', q{SELECT count(*) FROM bloomguard_health WHERE state = 'ready'}),
	'0', 'no guard becomes ready while its trigger is not enabled ALWAYS');
like($node->safe_psql('dst2', q{SELECT advice FROM bloomguard_health WHERE relation = 'a'::regclass}),
	qr/rebuild/, 'the advice says to rebuild');
$node->safe_psql('dst2', q{ALTER TABLE a ENABLE ALWAYS TRIGGER bloomguard; ALTER TABLE b ENABLE ALWAYS TRIGGER bloomguard});
$node->poll_query_until('dst2', $ready)
  or die 'the worker did not rebuild the untrusted guards';
is($node->safe_psql('dst2', $wrong), '0', 'rebuilt after the data-only restore: every key found');

# CREATE DATABASE ... TEMPLATE copies tables and registry with the same OIDs;
# the copy must never use the source's filters
$node->safe_psql('postgres', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'src'});
$node->safe_psql('postgres', 'CREATE DATABASE cpy TEMPLATE src');
$node->safe_psql('cpy', q{INSERT INTO a SELECT generate_series(100001, 101000)});
is($node->safe_psql('cpy', q{SELECT count(*) FROM a WHERE id > 100000 AND (NOT guarded_exists('a', id) OR bloomguard_check('a', id) = 'absent')}),
	'0', 'rows added in the copy are found before its filter is built');
is($node->safe_psql('src', q{SELECT count(*) FROM generate_series(100001, 101000) g WHERE guarded_exists('a', g)}),
	'0', 'the source does not see the copy rows');
$node->poll_query_until('cpy', $ready)
  or die 'the worker did not build the copied guards';
is($node->safe_psql('cpy', $wrong), '0', 'the copy, built: every key found');
is($node->safe_psql('src', $wrong), '0', 'the source is unaffected');

$node->stop;
bg_check_log($node);
done_testing();
