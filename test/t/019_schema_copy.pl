# A schema-only copy (pg_dump --schema-only | psql) carries the bloomguard
# trigger but not the registry row.  The health view shows such a table
# as 'unregistered' with advice, lookups answer by plain lookups,
# bloomguard_attach() adopts the trigger (registers and builds), and
# bloomguard_detach() drops it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('schemacopy', qq{
bloomguard.maintenance_interval = 1
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE a (id int PRIMARY KEY);
	CREATE TABLE c (id int PRIMARY KEY);
	INSERT INTO a SELECT generate_series(1, 2000);
	INSERT INTO c SELECT generate_series(1, 100);
});
$node->safe_psql('src', q{SELECT bloomguard_attach('a', 10000)});
$node->safe_psql('src', q{SELECT bloomguard_attach('c')});

my $dump = $node->basedir . '/schema.sql';
$node->command_ok(['pg_dump', '--schema-only', '-f', $dump, '-d', $node->connstr('src')], 'pg_dump --schema-only');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d', $node->connstr('dst')],
	'restored into another database');
is($node->safe_psql('dst', q{SELECT count(*) FROM bloomguard_guards}), '0', 'no registry row came with the schema');
is($node->safe_psql('dst', q{SELECT string_agg(tgrelid::regclass || ':' || tgenabled::text, ',' ORDER BY 1) FROM pg_trigger WHERE tgname = 'bloomguard'}),
	'a:A,c:A', 'the triggers came, enabled ALWAYS');
$node->safe_psql('dst', q{INSERT INTO a SELECT generate_series(1, 3000); INSERT INTO c SELECT generate_series(1, 100)});

# the health view shows them, with advice
is($node->safe_psql('dst', q{SELECT string_agg(relation || ':' || status || ':' || state || ':' || feed, ',' ORDER BY relation::text) FROM bloomguard_health}),
	'a:DEGRADED:unregistered:in_place,c:DEGRADED:unregistered:in_place', 'the health view lists the orphan triggers');
like($node->safe_psql('dst', q{SELECT advice FROM bloomguard_health WHERE relation = 'a'::regclass}),
	qr/no registry row .*adopt it with bloomguard_attach\('a'\), or drop it with bloomguard_detach\('a'\)/,
	'the advice says how to adopt or drop it');
is($node->safe_psql('dst', q{SELECT count(*) FROM a WHERE NOT guarded_exists('a', id) OR bloomguard_check('a', id) <> 'unknown'}),
	'0', 'unregistered: every key found, by plain lookups');
sleep 2;    # the worker has nothing to build for them
is($node->safe_psql('dst', q{SELECT string_agg(state, ',') FROM bloomguard_health}), 'unregistered,unregistered',
	'the worker leaves them alone');

# attach adopts the trigger: registers and builds
my ($ret, $out, $err) = $node->psql('dst', q{SELECT bloomguard_attach('a', 20000)});
is($ret, 0, 'bloomguard_attach() on the orphan trigger') or diag($err);
like($err, qr/NOTICE:  adopting the existing trigger "bloomguard" of table "a"/, 'attach says it adopts the trigger');
is($node->safe_psql('dst', q{SELECT relation || ':' || capacity FROM bloomguard_guards}), 'a:20000', 'registered');
is($node->safe_psql('dst', q{SELECT status || ':' || state || ':' || capacity FROM bloomguard_health WHERE relation = 'a'::regclass}),
	'HEALTHY:ready:20000', 'built');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'a'::regclass}), '1', 'the same one trigger');
is($node->safe_psql('dst', q{SELECT count(*) FROM a WHERE NOT guarded_exists('a', id) OR bloomguard_check('a', id) = 'absent'}),
	'0', 'adopted: every key found, never absent');
$node->safe_psql('dst', q{INSERT INTO a SELECT generate_series(3001, 3500)});
is($node->safe_psql('dst', q{SELECT count(*) FROM a WHERE NOT guarded_exists('a', id) OR bloomguard_check('a', id) = 'absent'}),
	'0', 'rows written after the adoption are found');
cmp_ok($node->safe_psql('dst', q{SELECT count(*) FROM generate_series(5001, 6000) g WHERE bloomguard_check('a', g) = 'absent'}),
	'>', 900, 'the adopted filter rules out absent keys');

# detach drops an orphan trigger
($ret, $out, $err) = $node->psql('dst', q{SELECT bloomguard_detach('c')});
is($ret, 0, 'bloomguard_detach() on the orphan trigger') or diag($err);
like($err, qr/NOTICE:  table "c" is not guarded; dropping its trigger "bloomguard"/, 'detach says it drops the trigger');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'c'::regclass}), '0', 'the trigger is gone');
is($node->safe_psql('dst', q{SELECT string_agg(relation::text, ',') FROM bloomguard_health}), 'a', 'and so is its row in the health view');
# a table with no trigger at all is still not guarded
($ret, $out, $err) = $node->psql('dst', q{SELECT bloomguard_detach('c')});
like($err, qr/table "c" is not guarded/, 'detach of a table without the trigger: not guarded');

# the source is unaffected
is($node->safe_psql('src', q{SELECT string_agg(relation || ':' || state, ',' ORDER BY relation::text) FROM bloomguard_health}),
	'a:ready,c:ready', 'the source keeps its guards');

$node->stop;
bg_check_log($node);
done_testing();
