# A standby without bloomguard in shared_preload_libraries.
#
# While bloomguard.wal_log is off on the primary (the default), the primary
# writes no bloomguard WAL record, so such a standby replays everything and
# runs.  Once it is turned on, the standby cannot replay the records of
# resource manager 188 and stops with the documented error (README,
# Replicas and restarts), as PostgreSQL does for any custom resource
# manager it does not know.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $primary = bg_node('primary', "bloomguard.maintenance_interval = 1\n", allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres',
	q{CREATE EXTENSION bloomguard; CREATE TABLE t AS SELECT generate_series(1, 1000) AS id; ALTER TABLE t ADD PRIMARY KEY (id)});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('t')});
$primary->backup('bk');

my $standby = bg_standby('nolib', $primary, 'bk', "shared_preload_libraries = ''\n");
$standby->start;

# keys logged nowhere: the standby without the library replays everything
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT generate_series(1001, 2000);
	ALTER TABLE t DISABLE TRIGGER bloomguard;
	ALTER TABLE t ENABLE ALWAYS TRIGGER bloomguard;
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{SELECT count(*) FROM t}), '2000',
	'wal_log off: the standby without the library replays every change');
is($standby->safe_psql('postgres', q{SHOW shared_preload_libraries}), '',
	'the standby does not preload bloomguard');

# turned on: the first bloomguard record stops the standby
my $pos = -s $standby->logfile;
$primary->safe_psql('postgres', q{ALTER SYSTEM SET bloomguard.wal_log = on});
$primary->reload;
$primary->safe_psql('postgres', q{INSERT INTO t SELECT generate_series(2001, 3000)});
ok($primary->log_contains('bloomguard.wal_log is on from WAL position'), 'the primary logs keys');
$standby->wait_for_log(qr/resource manager with ID 188 not registered/, $pos);
ok($standby->log_contains(
		qr/HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?\./, $pos),
	'the standby says which library it needs');
# the startup process exits; the postmaster shuts the standby down
my $down = 0;
foreach (1 .. 100)
{
	my $ret = PostgreSQL::Test::Utils::system_log('pg_ctl', 'status', '-D', $standby->data_dir);
	if ($ret != 0) { $down = 1; last; }
	sleep 0.1;
}
ok($down, 'the standby without the library stopped');
$standby->_update_pid(0);

# with the library preloaded it replays the records and trusts its filter
$standby->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomguard'\nbloomguard.maintenance_interval = 1\n");
$standby->start;
$primary->wait_for_catchup($standby);
$standby->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health})
  or die 'the standby did not build its guard';
is($standby->safe_psql('postgres', q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe'}),
	'0', 'with the library the standby has every key');
cmp_ok($standby->safe_psql('postgres', q{SELECT count(*) FROM generate_series(-1000, -1) g WHERE bloomguard_check('t', g) = 'absent'}),
	'>', 900, 'with the library the standby trusts its filter');

$standby->stop;
$primary->stop;
bg_check_log($primary);
bg_check_log($standby);
done_testing();
