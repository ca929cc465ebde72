# A hot standby fires no triggers.  With bloomguard.wal_log off on the
# primary (the default) it receives no keys, so it must not trust a
# filter: it answers every lookup correctly by plain lookups,
# bloomguard_check says 'unknown', and the health view says why.  (With
# the setting on, 010_wal_standby.pl.)  After promotion the guard is
# untrusted until the worker has built it; it never says 'absent' for a
# present key in between.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $primary = bg_node('primary', "bloomguard.maintenance_interval = 1\n",
	allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id bigint PRIMARY KEY, v text);
	INSERT INTO t SELECT g, 'v' FROM generate_series(1, 20000) g;
});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('t')});

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# rows that reach the standby only through WAL replay
$primary->safe_psql('postgres',
	q{INSERT INTO t SELECT g, 'w' FROM generate_series(20001, 30000) g});
$primary->wait_for_catchup($standby);

my $checks = q{
	SELECT count(*) FILTER (WHERE NOT guarded_exists('t', id)) || ',' ||
	       count(*) FILTER (WHERE bloomguard_check('t', id) = 'absent') || ',' ||
	       count(*) FILTER (WHERE bloomguard_check('t', id) <> 'unknown')
	  FROM t};
is($standby->safe_psql('postgres', $checks), '0,0,0',
	'standby: every key found by plain lookups, and the filter says unknown');
is($standby->safe_psql('postgres',
	q{SELECT count(*) FROM generate_series(30001, 31000) g WHERE guarded_exists('t', g)}),
	'0', 'standby: absent keys are absent');
$standby->poll_query_until('postgres', q{SELECT last_error IS NOT NULL FROM bloomguard_health})
  or die 'the standby did not say why its guard is not built';
is($standby->safe_psql('postgres', q{SELECT state || ': ' || last_error FROM bloomguard_health}),
	'not_loaded: no bloomguard WAL record replayed yet (bloomguard.wal_log must be on at the primary)',
	'standby: the guard is not built, and the health view says why');
ok(!$standby->log_contains('rebuilt the filter'), 'standby: no filter was built during recovery');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM pg_ls_dir('.') f WHERE f LIKE 'bloomguard%'}),
	'0', 'the primary never logged keys: it keeps no bloomguard.wal_state file');

# promotion: correct at once, trusted only after the worker's rebuild
$standby->promote;
my $after = q{
	SELECT count(*) FILTER (WHERE NOT guarded_exists('t', id)) || ',' ||
	       count(*) FILTER (WHERE bloomguard_check('t', id) = 'absent')
	  FROM t};
is($standby->safe_psql('postgres', $after), '0,0',
	'just promoted: no present key is absent');
$standby->poll_query_until('postgres',
	q{SELECT state = 'ready' FROM bloomguard_health})
  or die 'the worker did not rebuild the guard after promotion';
ok($standby->log_contains('bloomguard: rebuilt the filter of "t"'),
	'the worker logged the rebuild');
is($standby->safe_psql('postgres', $after), '0,0',
	'promoted and rebuilt: no present key is absent');
$standby->safe_psql('postgres',
	q{INSERT INTO t SELECT g, 'p' FROM generate_series(40001, 41000) g});
is($standby->safe_psql('postgres',
	q{SELECT count(*) FROM t WHERE id > 40000 AND bloomguard_check('t', id) <> 'maybe'}),
	'0', 'the promoted node feeds its filter');
cmp_ok($standby->safe_psql('postgres',
	q{SELECT count(*) FROM generate_series(50001, 60000) g WHERE bloomguard_check('t', g) = 'absent'}),
	'>', 9000, 'the rebuilt filter answers absent for absent keys');

$standby->stop;
$primary->stop;
bg_check_log($primary);
bg_check_log($standby);
done_testing();
