# An unlogged table's guard on a hot standby: an expected state, said once.
#
# A standby has none of an unlogged table's rows, so it cannot build the
# guard's filter, and never trusts one (010_wal_standby.pl has the feed
# through the WAL).  With bloomguard.wal_log on, the standby's worker
# would try to build it on every pass: it must say why once, at LOG and in
# the health view, and not log a WARNING (bg_check_log).  The guard of a
# logged table next to it is built and trusted as usual.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $primary = bg_node('primary', qq{
bloomguard.wal_log = on
bloomguard.maintenance_interval = 1
}, allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id int PRIMARY KEY);
	INSERT INTO t SELECT generate_series(1, 1000);
	CREATE UNLOGGED TABLE u (id int PRIMARY KEY);
	INSERT INTO u SELECT generate_series(1, 1000);
});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('t')});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('u')});
$primary->backup('bk');
my $standby = bg_standby('standby', $primary, 'bk');
$standby->start;
$primary->wait_for_catchup($standby);

$standby->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM bloomguard_health
	 WHERE (relation = 't'::regclass AND state = 'ready')
	    OR (relation = 'u'::regclass AND last_error IS NOT NULL)})
  or die 'the standby did not build t, or did not say why it does not build u';
is($standby->safe_psql('postgres', q{
	SELECT string_agg(relation || ': ' || state || ': ' || coalesce(last_error, ''), ', ' ORDER BY relation::text)
	  FROM bloomguard_health}),
	't: ready: , u: not_loaded: a standby has no rows of an unlogged table to build its filter from',
	'the logged table is built; the unlogged one is not, and the health view says why');
is($standby->safe_psql('postgres', q{SELECT bloomguard_check('t', 5) || ',' || bloomguard_check('t', 5000)}),
	'maybe,absent', 'the logged table\'s guard is trusted');

# several passes of the worker (bloomguard.maintenance_interval = 1)
$standby->safe_psql('postgres', q{SELECT pg_sleep(4)});
my $relid = $primary->safe_psql('postgres', q{SELECT 'u'::regclass::oid});
my $log = slurp_file($standby->logfile);
# (before the first bloomguard WAL record, the reason was another one)
my $notes = () = $log =~ /bloomguard: not rebuilding the filter of relation $relid in database "postgres": (?!no bloomguard WAL record replayed yet)/g;
is($notes, 1, 'the standby said why once, over several passes of its worker');
like($log,
	qr/LOG:  bloomguard: not rebuilding the filter of relation $relid in database "postgres": a standby has no rows of an unlogged table to build its filter from/,
	'at LOG');

# after promotion the unlogged table is empty, and its guard is built
$standby->promote;
$standby->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'u'::regclass})
  or die 'the promoted node did not build the unlogged table\'s guard';
is($standby->safe_psql('postgres', q{SELECT count(*) || ',' || bloomguard_check('u', 5) FROM u}),
	'0,absent', 'promoted: the unlogged table is empty, and its guard is built');

$standby->stop;
$primary->stop;
bg_check_log($primary);
bg_check_log($standby);
done_testing();
