# DROP DATABASE while the launcher waits for a database worker.  The drop
# waits until every process has absorbed its ProcSignalBarrier, and the
# launcher, waiting for its worker, absorbed none: the drop then waited for
# as long as the worker took, and forever when the worker was starting in
# the very database being dropped (it waits for the drop's lock).  The
# core regression suite hung that way in DROP DATABASE regression_utf8.
# Here the worker is held in database postgres by a lock on pg_extension,
# which every worker reads first.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('dropdb', 'bloomguard.maintenance_interval = 1');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id int PRIMARY KEY);
	INSERT INTO t SELECT generate_series(1, 100);
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('t')});
$node->safe_psql('postgres', 'CREATE DATABASE victim');
$node->safe_psql('postgres', 'CREATE DATABASE other');

# both sessions connect before the lock; the drop runs in another database,
# because its own backend reads pg_extension too (the object access hook)
my $locker = $node->background_psql('postgres');
my $dropper = $node->background_psql('other');
$locker->query_safe('BEGIN; LOCK TABLE pg_catalog.pg_extension IN ACCESS EXCLUSIVE MODE');
my $waiting = 0;
for (my $i = 0; $i < 300 && !$waiting; $i++)
{
	# no other session connects meanwhile (pg_stat_activity would show
	# the locker's transaction a snapshot, pg_locks does not)
	$waiting = $locker->query_safe(q{
		SELECT count(*) FROM pg_locks
		 WHERE relation = 'pg_extension'::regclass AND NOT granted});
	$waiting =~ s/\s+//g;
	select(undef, undef, undef, 0.1) unless $waiting;
}
ok($waiting, 'a database worker waits for the lock on pg_extension');

# the launcher waits for that worker; the drop must not wait for it
$dropper->query_until(qr/dropping/, "\\echo dropping\nDROP DATABASE victim;\n");
my $gone = 0;
for (my $i = 0; $i < 300 && !$gone; $i++)
{
	$gone = $locker->query_safe(q{SELECT count(*) = 0 FROM pg_database WHERE datname = 'victim'});
	$gone = $gone =~ /t/;
	select(undef, undef, undef, 0.1) unless $gone;
}
ok($gone, 'DROP DATABASE ends while the launcher waits for a worker in another database');
$locker->query_safe('COMMIT');
$locker->quit;
if ($gone)
{
	$dropper->query_safe('SELECT 1');
	$dropper->quit;
}
else
{
	# without the fix the drop waits on even after the lock is gone: the
	# launcher's next worker, for victim, waits for the drop's lock
	$dropper->{run}->kill_kill;
}

bg_check_log($node);
done_testing();
