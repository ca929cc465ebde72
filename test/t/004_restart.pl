# Guards across restarts and crashes.
#
# Filters live in shared memory; the bloomguard_guards table remembers
# which tables are guarded.  A clean restart saves and loads them (the
# guards come back ready, and are fed by later writes; 011_saved_filters.pl
# tests the file).  After a backend crash (the postmaster reinitializes
# shared memory) and an immediate stop, no filter survives, so until a
# rebuild every guard must answer by plain lookups:
# guarded_exists true for every present key and false for absent ones, and
# bloomguard_check never 'absent' for a present key.  (An automatic rebuild
# in the background is allowed: answers_right() only asks that the answers
# are right, not which state the guard is in.)  Rows written before the
# rebuild, while nothing feeds a filter, must be in the rebuilt filter.
#
# The first part runs with the background worker off, so the guards stay
# 'not_loaded' until bloomguard_rebuild() and every check is exact; it ends
# with crashes in the middle of a parallel build (a worker, then the
# leader, killed with SIGKILL).  The second part turns the worker on and
# lets it bring the guards back.  Table a asks for two parallel workers:
# rebuilds by hand use them, the background worker's builds do not.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use IPC::Run;

my $node = bg_node('restart', qq{
restart_after_crash = on
bloomguard.background_worker = off
max_parallel_maintenance_workers = 2
});
$node->start;

sub sq { return $node->safe_psql('postgres', $_[0]); }

sq(q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE a (id int PRIMARY KEY, v text);
	INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 20000) g;
	CREATE TABLE b (k1 int, k2 text, PRIMARY KEY (k1, k2));
	INSERT INTO b SELECT g % 50, 'b' || g FROM generate_series(1, 5000) g;
	ALTER TABLE a SET (parallel_workers = 2);
	ANALYZE a, b;
});
sq(q{SELECT bloomguard_attach('a', 100000, 0.01)});
sq(q{SELECT bloomguard_attach('b', 50000, 0.01)});

# Every present key is found and never 'absent'; absent keys are not found.
sub answers_right
{
	my ($label) = @_;
	is(sq(q{SELECT count(*) FROM a WHERE NOT guarded_exists('a', id)}), '0',
		"$label: guarded_exists true for every key of a");
	is(sq(q{SELECT count(*) FROM b WHERE NOT guarded_exists('b', k1, k2)}), '0',
		"$label: guarded_exists true for every key of b");
	is(sq(q{SELECT count(*) FROM a WHERE bloomguard_check('a', id) = 'absent'}), '0',
		"$label: no key of a is 'absent'");
	is(sq(q{SELECT count(*) FROM b WHERE bloomguard_check('b', k1, k2) = 'absent'}), '0',
		"$label: no key of b is 'absent'");
	is(sq(q{SELECT count(*) FROM a WHERE bloomguard_check('a', id) NOT IN ('maybe', 'unknown')}), '0',
		"$label: a's keys are 'maybe' or 'unknown'");
	is(sq(q{SELECT count(*) FROM generate_series(1000001, 1005000) g
	         WHERE guarded_exists('a', g) OR guarded_exists('b', g % 50, 'b' || g)}), '0',
		"$label: absent keys give false");
	is(sq(q{SELECT string_agg(relation::text, ',' ORDER BY relation::text) FROM bloomguard_health
	         WHERE relation::text IN ('a', 'b')}),
		'a,b', "$label: both guards still registered");
	return;
}

# After a rebuild: ready, and the filter answers for absent keys.
sub ready_and_useful
{
	my ($label) = @_;
	is(sq(q{SELECT string_agg(relation || ':' || state, ',' ORDER BY relation::text) FROM bloomguard_health}),
		'a:ready,b:ready', "$label: both guards ready");
	answers_right($label);
	is(sq(q{SELECT count(*) FROM a WHERE bloomguard_check('a', id) <> 'maybe'}), '0',
		"$label: every key of a is 'maybe'");
	is(sq(q{SELECT count(*) FROM b WHERE bloomguard_check('b', k1, k2) <> 'maybe'}), '0',
		"$label: every key of b is 'maybe'");
	my ($absent_a, $absent_b) = split /\|/, sq(q{
		SELECT count(*) FILTER (WHERE bloomguard_check('a', g) = 'absent'),
		       count(*) FILTER (WHERE bloomguard_check('b', g % 50, 'b' || g) = 'absent')
		  FROM generate_series(1000001, 1010000) g});
	ok($absent_a > 9000, "$label: a: more than 9000 of 10000 absent keys 'absent' ($absent_a)");
	ok($absent_b > 9000, "$label: b: more than 9000 of 10000 absent keys 'absent' ($absent_b)");
	my ($sum, $in_use) = split /\|/, sq(q{
		SELECT sum(memory_bytes), max(memory_in_use) FROM bloomguard_guard_stats()});
	is($in_use, $sum, "$label: memory_in_use is exactly the two filters");
	return;
}

# With the worker off, nothing rebuilds: both guards are not_loaded and
# the filter has no answer for any key.
sub not_loaded_exactly
{
	my ($label) = @_;
	is(sq(q{SELECT string_agg(relation || ':' || state || ':' || generation, ',' ORDER BY relation::text) FROM bloomguard_health}),
		'a:not_loaded:0,b:not_loaded:0', "$label: both guards not_loaded");
	is(sq(q{SELECT count(*) FROM a WHERE bloomguard_check('a', id) IS DISTINCT FROM 'unknown'}), '0',
		"$label: every key of a is 'unknown'");
	is(sq(q{SELECT count(*) FROM b WHERE bloomguard_check('b', k1, k2) IS DISTINCT FROM 'unknown'}), '0',
		"$label: every key of b is 'unknown'");
	is(sq(q{SELECT string_agg(DISTINCT bloomguard_check('a', g), ',') FROM generate_series(1000001, 1001000) g}),
		'unknown', "$label: absent keys are 'unknown' too");
	is(sq(q{SELECT count(*) FROM bloomguard_guard_stats() WHERE memory_bytes > 0}), '0',
		"$label: no filter memory");
	return;
}

# Writes while no filter is loaded (nothing to feed): new keys, a changed
# key, a deletion.  $n makes each round's keys distinct.
sub write_unloaded
{
	my ($n) = @_;
	my $base = 100000 * $n;
	sq(qq{
		INSERT INTO a SELECT g, 'new' FROM generate_series($base + 1, $base + 100) g;
		INSERT INTO b SELECT g % 50, 'b' || g FROM generate_series($base + 1, $base + 100) g;
		UPDATE a SET id = $base + 500 WHERE id = $n;
		DELETE FROM a WHERE id = 10000 + $n;
		DELETE FROM b WHERE (k1, k2) = (7, 'b7');
	});
	return;
}

sub after_rebuild_checks
{
	my ($label, $n) = @_;
	my $base = 100000 * $n;
	is(sq(qq{SELECT count(*) FROM generate_series($base + 1, $base + 100) g
	         WHERE bloomguard_check('a', g) = 'maybe' AND guarded_exists('a', g)
	           AND bloomguard_check('b', g % 50, 'b' || g) = 'maybe' AND guarded_exists('b', g % 50, 'b' || g)}),
		'100', "$label: the 100 keys written before the rebuild are in both filters");
	is(sq(qq{SELECT bloomguard_check('a', $base + 500) || ':' || guarded_exists('a', $base + 500)
	           || ':' || guarded_exists('a', $n) || ':' || guarded_exists('a', 10000 + $n)}),
		'maybe:true:false:false', "$label: changed key found, old and deleted keys not");
	return;
}

ready_and_useful('after attach');

# One round: the guards came back from $how without a filter; check, write,
# rebuild by hand, check again.
sub manual_round
{
	my ($how, $n) = @_;
	answers_right("after $how, before rebuild");
	not_loaded_exactly("after $how");
	write_unloaded($n);
	answers_right("after $how, after writes");
	not_loaded_exactly("after $how, after writes");
	sq(q{SELECT bloomguard_rebuild('a'); SELECT bloomguard_rebuild('b')});
	ready_and_useful("after $how and rebuild");
	after_rebuild_checks("after $how and rebuild", $n);
	is(sq(q{SELECT string_agg(relation || ':' || generation, ',' ORDER BY relation::text) FROM bloomguard_health}),
		'a:1,b:1', "after $how and rebuild: generation 1 of the new shared memory");
	is(sq(q{SELECT build_workers FROM bloomguard_health WHERE relation = 'a'::regclass}), '2',
		"after $how and rebuild: a was rebuilt by two parallel workers");
	return;
}

# Kill a backend with SIGKILL; the postmaster reinitializes shared memory.
# Before that: a committed row, a prepared transaction and an uncommitted
# row (lost).
sub crash_backend
{
	my ($key) = @_;
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	sq(qq{INSERT INTO a VALUES ($key, 'committed before the crash')});
	sq(qq{BEGIN; INSERT INTO a VALUES ($key + 2, 'prepared'); PREPARE TRANSACTION 'p$key'});
	$s->query_safe(qq{BEGIN; INSERT INTO a VALUES ($key + 1, 'lost in the crash')});
	my $logpos = -s $node->logfile;
	ok(kill('KILL', $pid), "killed backend $pid with SIGKILL");
	eval { $s->quit; };
	bg_wait_back($node, $logpos)
	  or die 'server did not come back after the crash';
	ok($node->log_contains('all server processes terminated; reinitializing', $logpos),
		'the postmaster reinitialized shared memory');
	is(sq(qq{SELECT guarded_exists('a', $key) || ':' || guarded_exists('a', $key + 1) || ':' || guarded_exists('a', $key + 2)}),
		'true:false:false', 'after the crash: committed row found, lost and prepared rows not visible');
	return;
}

# the prepared row was in the heap for the scan; it is visible after commit
sub commit_prepared
{
	my ($key, $label) = @_;
	sq(qq{COMMIT PREPARED 'p$key'});
	is(sq(qq{SELECT bloomguard_check('a', $key + 2) || ':' || guarded_exists('a', $key + 2)}),
		'maybe:true', "$label: row prepared before the crash, committed after the rebuild, is in the filter");
	return;
}

#
# Part 1: no background worker.
#

# 1. clean restart: the filters come back from the file saved at the
# shutdown, ready without a scan, and writes feed them
$node->restart;
ready_and_useful('after restart');
is(sq(q{SELECT string_agg(relation || ':' || generation || ':' || source, ',' ORDER BY relation::text) FROM bloomguard_health}),
	'a:1:loaded,b:1:loaded', 'after restart: the saved generations, loaded');
write_unloaded(1);
ready_and_useful('after restart and writes');
after_rebuild_checks('after restart, writes fed the loaded filters', 1);

# 2. backend crash
crash_backend(900001);
manual_round('crash', 2);
commit_prepared(900001, 'after crash and rebuild');

# 3. immediate stop and start (crash recovery from the WAL)
sq(q{INSERT INTO a VALUES (900011, 'before the immediate stop')});
$node->stop('immediate');
$node->start;
is(sq(q{SELECT guarded_exists('a', 900011)}), 't', 'after immediate stop: last committed row found');
manual_round('immediate stop', 3);
is(sq(q{SELECT bloomguard_check('a', 900011)}), 'maybe', 'row from before the stop is in the rebuilt filter');

#
# A crash in the middle of a parallel build.  p's rebuild (two workers and
# the leader, bits straight into shared memory: maintenance_work_mem is
# 1MB) loses a process to SIGKILL: first a worker, then the leader.  The
# postmaster reinitializes shared memory, the build is gone with every
# filter, and the guards answer by plain lookups until a rebuild, which
# takes the rows written meanwhile.
#
sq(q{
	CREATE TABLE p (id int PRIMARY KEY, pad int);
	INSERT INTO p SELECT g, g FROM generate_series(1, 2000000) g;
	ALTER TABLE p SET (parallel_workers = 2);
	VACUUM ANALYZE p;
});
bg_create_wait_for_worker($node);
my $pround = 0;
foreach my $victim ('worker', 'leader')
{
	$pround++;
	sq(q{SELECT bloomguard_rebuild(relation) FROM bloomguard_guards ORDER BY relation::text})
	  if $pround > 1;
	sq(q{SELECT bloomguard_attach('p', 2500000, 0.01)}) if $pround == 1;
	is(sq(q{SELECT state || ':' || build_workers FROM bloomguard_health WHERE relation = 'p'::regclass}),
		'ready:2', "$victim crash: p is ready, built by two parallel workers");

	# start the rebuild, find its worker, kill; again if the build ended first
	my ($killed, $logpos);
	for (my $attempt = 1; $attempt <= 10 && !$killed; $attempt++)
	{
		my $h = IPC::Run::start(
			[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
			  q{SET maintenance_work_mem = '1MB'; SELECT bloomguard_rebuild('p')} ],
			'>', \my $out, '2>', \my $err);
		my ($builder, $worker) = split /\|/, sq(q{SELECT builder, worker FROM wait_for_worker('p')});
		$logpos = -s $node->logfile;
		$killed = $worker ne '' && kill('KILL', $victim eq 'worker' ? $worker : $builder);
		note "attempt $attempt: the build of p ended before the kill" unless $killed;
		$h->finish;
	}
	ok($killed, "$victim crash: killed a process of a parallel build of p with SIGKILL");
	bg_wait_back($node, $logpos)
	  or die 'server did not come back after the crash';
	ok($node->log_contains('all server processes terminated; reinitializing', $logpos),
		"$victim crash: the postmaster reinitialized shared memory");

	ok($node->log_contains(($victim eq 'worker' ? 'background worker "parallel worker"' : '(?:server process|client backend)')
			. ' \\(PID \\d+\\) was terminated by signal 9', $logpos),
		"$victim crash: the $victim was the process killed");
	answers_right("$victim crash");
	is(sq(q{SELECT state FROM bloomguard_health WHERE relation = 'p'::regclass}), 'not_loaded',
		"$victim crash: p is not_loaded");
	is(sq(q{SELECT count(*) FROM generate_series(1, 2000000, 101) g
	         WHERE NOT guarded_exists('p', g) OR bloomguard_check('p', g) <> 'unknown'}), '0',
		"$victim crash: p's keys are found by plain lookups");
	sq(qq{INSERT INTO p SELECT g, 0 FROM generate_series(3000000 + 1000 * $pround, 3000000 + 1000 * $pround + 99) g});

	sq(q{SELECT bloomguard_rebuild('p')});
	is(sq(q{SELECT state || ':' || build_workers FROM bloomguard_health WHERE relation = 'p'::regclass}),
		'ready:2', "$victim crash: rebuilt in parallel");
	is(sq(q{SELECT count(*) FROM (SELECT id FROM p WHERE id % 101 = 1 OR id > 3000000 OFFSET 0) s
	         WHERE bloomguard_check('p', id) <> 'maybe' OR NOT guarded_exists('p', id)}), '0',
		"$victim crash: every sampled key and every key written meanwhile is in the rebuilt filter");
	my $absent = sq(q{SELECT count(*) FROM generate_series(-10000, -1) g WHERE bloomguard_check('p', g) = 'absent'});
	ok($absent > 9000, "$victim crash: the rebuilt filter answers ($absent of 10000 absent keys 'absent')");
}
sq(q{SELECT bloomguard_detach('p')});
sq(q{DROP TABLE p});
sq(q{SELECT bloomguard_rebuild('a'); SELECT bloomguard_rebuild('b')});

#
# Part 2: the background worker brings the guards back by itself.  Right
# after the start the answers must already be right, whatever state the
# guards are in; writes made while the worker builds must be in its filter.
#
$node->append_conf('postgresql.conf', qq{
bloomguard.background_worker = on
bloomguard.maintenance_interval = 1
});

sub worker_round
{
	my ($how, $n) = @_;
	answers_right("worker, right after $how");
	write_unloaded($n);
	answers_right("worker, after $how and writes");
	$node->poll_query_until('postgres',
		q{SELECT string_agg(relation || ':' || state, ',' ORDER BY relation::text) FROM bloomguard_health},
		'a:ready,b:ready')
	  or diag "the worker did not make the guards ready after $how";
	ready_and_useful("worker, after $how");
	after_rebuild_checks("worker, after $how", $n);
	# (after a clean restart the filter is loaded, as built before: only a
	# filter the worker built says how the worker builds)
	is(sq(q{SELECT CASE WHEN source = 'built' THEN build_workers::text ELSE 'not built here' END
	          FROM bloomguard_health WHERE relation = 'a'::regclass}),
		($how =~ /restart/ ? 'not built here' : '0'),
		"worker, after $how: the background worker built a without parallel workers");
	return;
}

$node->restart;
worker_round('restart', 4);

crash_backend(900021);
worker_round('crash', 5);
commit_prepared(900021, 'worker, after crash');

sq(q{INSERT INTO a VALUES (900031, 'before the immediate stop')});
$node->stop('immediate');
$node->start;
worker_round('immediate stop', 6);
is(sq(q{SELECT bloomguard_check('a', 900031) || ':' || guarded_exists('a', 900031)}),
	'maybe:true', 'worker: row from before the immediate stop is in the filter');

# Sizing survives in the registry: the rebuilds used the attach capacities.
is(sq(q{SELECT string_agg(relation || ':' || capacity, ',' ORDER BY relation::text) FROM bloomguard_health}),
	'a:100000,b:50000', 'rebuilt filters keep the registered capacities');

ok(!$node->log_contains('was terminated by signal (?!9)'), 'no backend crashed except the one killed');
$node->stop;
bg_check_log($node);
done_testing();
