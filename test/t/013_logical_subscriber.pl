# A logical replication subscriber keeps its own guard complete without
# the WAL: the feed trigger is enabled ALWAYS, so it fires for every row the
# apply worker writes, and the apply worker's commits flush the keys like
# any other.  While the publisher writes (inserts, key updates), a loop on
# the subscriber checks that no key it can see is ever 'absent'.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

# the publisher guards its table too and logs the keys: logical decoding
# passes the KEYS records by (the resource manager has no decode callback)
my $pub = bg_node('publisher', "bloomguard.wal_log = on\n", allows_streaming => 'logical');
my $sub = bg_node('subscriber', "bloomguard.maintenance_interval = 1\n");
$pub->start;
$sub->start;
for my $node ($pub, $sub)
{
	$node->safe_psql('postgres', q{CREATE TABLE t (id bigint PRIMARY KEY, v text)});
}
$pub->safe_psql('postgres', q{
	INSERT INTO t SELECT g, 'p' FROM generate_series(1, 10000) g;
	CREATE PUBLICATION p FOR TABLE t;
	CREATE EXTENSION bloomguard;
});
$pub->safe_psql('postgres', q{SELECT bloomguard_attach('t', 100000)});
$sub->safe_psql('postgres', q{CREATE EXTENSION bloomguard});
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', qq{CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p});
$sub->wait_for_subscription_sync($pub, 's');
$sub->safe_psql('postgres', q{SELECT bloomguard_attach('t', 100000)});
is($sub->safe_psql('postgres', q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe'}),
	'0', 'subscriber: the initial rows are in its filter');

# the publisher writes; the subscriber checks what it sees, all along
my ($out, $rounds, $bad) = bg_under_load($pub, q{
\set k random(100000, 900000000)
BEGIN;
INSERT INTO t VALUES (:k, 'p') ON CONFLICT DO NOTHING;
UPDATE t SET id = -id WHERE id = :k;
INSERT INTO t VALUES (:k + 1, 'p') ON CONFLICT DO NOTHING;
END;
}, 5, sub {
	return $sub->safe_psql('postgres', q{
		SELECT count(*) FROM t WHERE bloomguard_check('t', id) = 'absent' OR NOT guarded_exists('t', id)});
});
like($out, qr/number of failed transactions: 0/, 'the publisher load ran');
cmp_ok($rounds, '>=', 3, "the subscriber was checked during the load ($rounds checks)");
is($bad, 0, 'subscriber: no replicated key was ever absent');

$pub->wait_for_catchup('s');
ok($pub->log_contains('bloomguard.wal_log is on from WAL position'),
	'the publisher wrote its keys to the WAL that logical decoding read');
is($sub->safe_psql('postgres', q{SELECT count(*) FROM t}),
	$pub->safe_psql('postgres', q{SELECT count(*) FROM t}), 'subscriber: every row arrived');
is($sub->safe_psql('postgres', q{
	SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe' OR NOT guarded_exists('t', id)}),
	'0', 'subscriber: every key is in its filter');
cmp_ok($sub->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(-99999, -90000) g WHERE bloomguard_check('t', g) = 'absent'}),
	'>', 9800, "subscriber: absent keys are 'absent'");
is($sub->safe_psql('postgres', q{SELECT state || ':' || feed FROM bloomguard_health}),
	'ready:in_place', 'subscriber: the guard is ready and its trigger in place');

$sub->stop;
$pub->stop;
bg_check_log($pub);
bg_check_log($sub);
done_testing();
