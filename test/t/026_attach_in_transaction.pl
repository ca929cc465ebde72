# An attach in a transaction block and the background worker's passes
# meanwhile.  A pass frees the slots of this database whose table is gone
# (maintain.c's bg_release_orphans()); a table created in a transaction
# still in progress is one the worker cannot see, so it must leave the
# slot that the transaction's attach claimed alone until that transaction
# ends, and after its commit see the table.  A backend that exits in the
# middle of such a transaction frees the slot too (its abort does).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('attach_txn', qq{
bloomguard.maintenance_interval = 1
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE marker (id int PRIMARY KEY);
	INSERT INTO marker SELECT generate_series(1, 100);
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('marker')});
my $mem = $node->safe_psql('postgres', q{SELECT memory_in_use FROM bloomguard_guard_stats()});

# Wait for a whole pass of the worker over the database, which starts by
# freeing orphan slots: make marker's guard untrusted (a trigger disabled
# and enabled again), and wait for the pass that rebuilds it.
my $passes = 0;
sub worker_pass
{
	my $logpos = -s $node->logfile;
	$node->safe_psql('postgres', q{ALTER TABLE marker DISABLE TRIGGER bloomguard});
	$node->safe_psql('postgres', q{ALTER TABLE marker ENABLE ALWAYS TRIGGER bloomguard});
	$node->wait_for_log(qr/rebuilt the filter of "marker" in database "postgres"/, $logpos);
	$passes++;
	return;
}

my $s = $node->background_psql('postgres');
$s->query_safe(q{
	BEGIN;
	CREATE TABLE fresh (id int PRIMARY KEY);
	INSERT INTO fresh SELECT generate_series(1, 1000);
	SELECT bloomguard_attach('fresh');
});
worker_pass();
worker_pass();
is($s->query_safe(q{SELECT state FROM bloomguard_health WHERE relation = 'fresh'::regclass}),
	'ready', 'the worker left alone the slot of a table created in a transaction in progress');
is($s->query_safe(q{SELECT count(*) FROM fresh WHERE bloomguard_check('fresh', id) = 'absent'}),
	'0', 'in the transaction: no present key absent');
$s->query_safe('COMMIT');
worker_pass();
is($node->safe_psql('postgres', q{SELECT state FROM bloomguard_health WHERE relation = 'fresh'::regclass}),
	'ready', 'after the commit, the worker sees the table and keeps its slot');
is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE bloomguard_check('fresh', g) = 'absent') > 900
	  FROM generate_series(2001, 3000) g}),
	't', 'after the commit, other sessions trust the filter');
is($node->safe_psql('postgres', q{SELECT count(*) FROM fresh WHERE bloomguard_check('fresh', id) = 'absent'}),
	'0', 'after the commit: no present key absent');

# a backend that exits inside the transaction frees the slot
$node->safe_psql('postgres', q{SELECT bloomguard_detach('fresh'); DROP TABLE fresh});
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe(q{
	BEGIN;
	CREATE TABLE doomed (id int PRIMARY KEY);
	SELECT bloomguard_attach('doomed', 1000000);
});
isnt($node->safe_psql('postgres', q{SELECT memory_in_use FROM bloomguard_guard_stats()}),
	$mem, 'the transaction holds a filter');
$node->safe_psql('postgres', qq{SELECT pg_terminate_backend($pid)});
$node->poll_query_until('postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
  or die 'the backend did not exit';
eval { $s->quit; };
is($node->safe_psql('postgres', q{SELECT memory_in_use FROM bloomguard_guard_stats()}),
	$mem, 'a backend that exited inside the transaction freed the slot');
worker_pass();
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_guard_stats()}),
	'1', 'only the marker has a slot');

$node->stop;
bg_check_log($node,
	qr/terminating connection due to administrator command/);
done_testing();
