# Builds that do not finish.
#
# A rebuild that is interrupted (statement_timeout, pg_cancel_backend,
# pg_terminate_backend) or refused (bloomguard.max_memory) must leave the
# guard as it was: the old generation keeps serving (state 'ready', same
# generation, present keys never 'absent'), the new generation's memory is
# given back, the guard is not stuck in a build, and the next rebuild
# works.  An attach interrupted during its scan leaves the guard
# registered but 'not_loaded' (plain lookups) until a rebuild builds it;
# an attach interrupted before its trigger committed leaves nothing.
# Finally, memory freed by old generations must be reusable: a guard grown
# step by step within bloomguard.max_memory must never run out.
#
# Every build here is parallel: two workers and the leader scan (the
# table is large enough for two).  With maintenance_work_mem at 1MB the
# scanners set bits straight into the shared generation; sections (b) and
# (f) repeat with private arrays (maintenance_work_mem 256MB), which are
# ORed in at the end.  Section (f) terminates one parallel worker in the
# middle of a build; section (d) terminates the leader while its workers
# run, so that its exit frees the generation before they are stopped.
#
# Sections (d), (e) and (g) were written against bugs of earlier code: a
# FATAL exit skipped the build's cleanup, and freed filter memory was
# stranded in DSA segments under a size limit barely above max_memory.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $nrows = 2_000_000;
my $cap = 2_500_000;              # big's capacity: 3,089,472 bytes at 1%
my $max_memory = 8 * 1024 * 1024; # room for two generations of big, not three

my $node = bg_node('cancel', qq{
bloomguard.max_memory = 8MB
maintenance_work_mem = 1MB
max_parallel_maintenance_workers = 2
# no rebuilds but the test's own
bloomguard.background_worker = off
});
$node->start;

my $t0 = time;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION bloomguard;
	CREATE TABLE big (id int, pad int);
	INSERT INTO big SELECT g, g FROM generate_series(1, $nrows) g;
	ALTER TABLE big ADD PRIMARY KEY (id);
	VACUUM ANALYZE big;
	CREATE TABLE small (id int PRIMARY KEY);
	INSERT INTO small SELECT generate_series(1, 1000);

	-- wait until rel has a build running (and, if asked, its guard is
	-- registered: an attach's scan has begun); returns the builder's pid
	CREATE FUNCTION wait_for_builder(rel regclass, registered bool DEFAULT false) RETURNS int
	LANGUAGE plpgsql AS \$\$
	DECLARE p int;
	BEGIN
		WHILE clock_timestamp() < statement_timestamp() + interval '10 s' LOOP
			SELECT builder_pid INTO p FROM bloomguard_guard_stats() WHERE relid = rel;
			IF p IS NOT NULL AND (NOT registered OR
			    EXISTS (SELECT 1 FROM bloomguard_guards WHERE relation = rel)) THEN
				RETURN p;
			END IF;
			PERFORM pg_sleep(0.001);
		END LOOP;
		RETURN NULL;
	END \$\$;
});
bg_create_wait_for_worker($node);
note sprintf("loading %d rows took %.1f s", $nrows, time - $t0);

sub sq { return $node->safe_psql('postgres', $_[0]); }

# bytes of one filter with this many bits

# The guard of rel as bloomguard_guard_stats() shows it.
sub guard
{
	my ($rel) = @_;
	my $row = sq(qq{
		SELECT state, generation, coalesce(bits, 0), memory_bytes, memory_in_use,
		       coalesce(builder_pid::text, ''), coalesce(last_error, ''), coalesce(capacity, 0),
		       coalesce(build_workers, 0)
		  FROM bloomguard_guard_stats() WHERE relid = '$rel'::regclass});
	return undef if $row eq '';
	my %g;
	@g{qw(state generation bits memory_bytes memory_in_use builder_pid last_error capacity build_workers)} =
	  split /\|/, $row, -1;
	return \%g;
}

# The guard of big serves generation $gen from a complete filter of
# capacity $capacity, holds exactly one filter, and the cluster holds
# nothing else.
sub serving_ok
{
	my ($label, $gen, $capacity) = @_;
	my $g = guard('big');
	is($g->{state}, 'ready', "$label: state ready");
	is($g->{generation}, $gen, "$label: generation $gen");
	is($g->{capacity}, $capacity, "$label: capacity $capacity");
	is($g->{builder_pid}, '', "$label: no build running");
	is($g->{build_workers}, 2, "$label: built by two parallel workers");
	is(workers(), 0, "$label: no parallel worker left");
	is($g->{memory_bytes}, bg_filter_bytes($g->{bits}), "$label: memory_bytes is one filter");
	is($g->{memory_in_use}, sq(q{SELECT sum(memory_bytes) FROM bloomguard_guard_stats()}),
		"$label: memory_in_use is the guards' filters, nothing more");
	is(sq(qq{SELECT count(*) FROM generate_series(1, $nrows, 97) g
	         WHERE bloomguard_check('big', g) = 'absent' OR NOT guarded_exists('big', g)}),
		'0', "$label: sampled present keys are found and never 'absent'");
	my ($exists, $absent) = split /\|/, sq(qq{
		SELECT count(*) FILTER (WHERE guarded_exists('big', g)),
		       count(*) FILTER (WHERE bloomguard_check('big', g) = 'absent')
		  FROM generate_series(-10000, -1) g});
	is($exists, '0', "$label: absent keys are not found");
	ok($absent > 9000, "$label: the filter answers: more than 9000 of 10000 absent keys 'absent' ($absent)");
	return;
}

# The parallel workers running now, once those that were stopped are gone.
sub workers
{
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'});
	return sq(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker'});
}

# Start "SELECT bloomguard_rebuild(...)" (or attach) in the background,
# in a session named $app.
sub start_bg
{
	my ($app, $sql) = @_;
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres') . " application_name=$app", '-c', $sql ],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

#
# Attach interrupted before its trigger is committed: a writer holds the
# table, attach waits for it, and statement_timeout fires in that wait.
# Nothing may remain: no registry row, no trigger, no slot, no memory.
#
{
	my $writer = $node->background_psql('postgres');
	$writer->query_safe(q{BEGIN; INSERT INTO big VALUES (-5, -5);});
	my ($ret, $out, $err) = $node->psql('postgres',
		qq{SET statement_timeout = '500ms'; SELECT bloomguard_attach('big', $cap)});
	like($err, qr/ERROR:  canceling statement due to statement timeout/,
		'attach waiting for a writer: statement timeout');
	$writer->query_safe('ROLLBACK');
	$writer->quit;
	is(sq(q{SELECT count(*) FROM bloomguard_guards}), '0', 'early-cancelled attach: not registered');
	is(sq(q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'big'::regclass}), '0',
		'early-cancelled attach: no trigger');
	is(sq(q{SELECT count(*) FROM bloomguard_guard_stats()}), '0', 'early-cancelled attach: no slot');
	is(sq(q{SELECT memory_in_use FROM bloomguard_guard_stats() UNION ALL SELECT 0 LIMIT 1}), '0',
		'early-cancelled attach: no memory');
}

#
# Attach interrupted by statement_timeout during its scan.  The timeout
# must fire after the feed worker committed and before the scan ended;
# raise it step by step until it does.
#
my $attach_ok = 0;
{
	my $found = 0;
	my ($ret, $out, $err);
	for (my $ms = 60; $ms <= 3000; $ms += 60)
	{
		($ret, $out, $err) = $node->psql('postgres',
			qq{SET statement_timeout = '${ms}ms'; SELECT bloomguard_attach('big', $cap)});
		if ($ret == 0)
		{
			diag "attach finished within ${ms}ms: the table is too small to interrupt its scan";
			last;
		}
		if (sq(q{SELECT count(*) FROM bloomguard_guards}) eq '1')
		{
			note "attach interrupted after the trigger committed with statement_timeout = ${ms}ms";
			$found = 1;
			last;
		}
		# cancelled before the worker committed: that must leave nothing
		is(sq(q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'big'::regclass}) . ':'
			  . sq(q{SELECT count(*) FROM bloomguard_guard_stats()}),
			'0:0', "attach cancelled at ${ms}ms before its commit left no trigger and no slot");
	}
	ok($found, 'an attach was interrupted after its trigger committed');
	like($err, qr/ERROR:  canceling statement due to statement timeout/,
		'interrupted attach: statement timeout error');

	my $g = guard('big');
	is($g->{state}, 'not_loaded', "interrupted attach: state not_loaded");
	is($g->{generation}, '0', 'interrupted attach: no generation');
	is($g->{builder_pid}, '', 'interrupted attach: no build running');
	is($g->{memory_bytes}, '0', 'interrupted attach: the building filter was freed');
	is($g->{memory_in_use}, '0', 'interrupted attach: memory_in_use back to 0');
	# (the scan's own error handler records its message first, so the
	# attach's "registered but not built" message is not the one shown)
	like($g->{last_error}, qr/interrupted/, 'interrupted attach: last_error says why');
	is(sq(q{SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'big'::regclass AND tgname = 'bloomguard'}),
		'A', 'interrupted attach: the trigger is installed, ENABLE ALWAYS');
	is(sq(q{SELECT state || ':' || status FROM bloomguard_health WHERE relation = 'big'::regclass}),
		'not_loaded:DEGRADED', 'interrupted attach: the view shows not_loaded');

	# plain lookups meanwhile
	sq(q{INSERT INTO big VALUES (2000001, 0), (2000002, 0)});
	is(sq(qq{SELECT count(*) FROM generate_series(1, $nrows + 2, 997) g WHERE NOT guarded_exists('big', g)}),
		'0', 'not_loaded: guarded_exists finds present keys');
	is(sq(q{SELECT guarded_exists('big', 2000002) || ':' || guarded_exists('big', -7) || ':' || guarded_exists('big', 3000000)}),
		'true:false:false', 'not_loaded: new key found, absent keys not');
	is(sq(q{SELECT string_agg(DISTINCT bloomguard_check('big', g), ',') FROM generate_series(-100, 100) g}),
		'unknown', "not_loaded: bloomguard_check says 'unknown' for every key");

	# a rebuild makes it ready
	sq(q{SELECT bloomguard_rebuild('big')});
	$g = guard('big');
	is($g->{state} . ':' . $g->{generation}, 'ready:1', 'rebuild after the interrupted attach: ready, generation 1');
	is($g->{last_error}, '', 'rebuild after the interrupted attach: last_error cleared');
	is(sq(q{SELECT guarded_exists('big', 2000001) || ':' || bloomguard_check('big', 2000002)}),
		'true:maybe', 'keys inserted while not_loaded are in the new filter');
	$attach_ok = $found;
}
# from here on: big guarded at capacity $cap
sq(q{DELETE FROM big WHERE id > 2000000});
sq(qq{SELECT bloomguard_rebuild('big', $cap, 0.01)});
serving_ok('baseline', 2, $cap);

# how long a full rebuild takes here: the scan is most of it
$t0 = time;
sq(q{SELECT bloomguard_rebuild('big')});
my $rebuild_time = time - $t0;
note sprintf("a full rebuild of big takes %.3f s", $rebuild_time);
ok($rebuild_time > 0.08, 'a rebuild takes long enough to be interrupted');
my $gen = 3;

#
# (a) statement_timeout during the rebuild's scan
#
{
	my $ms = int($rebuild_time * 1000 / 4);
	$ms = 20 if $ms < 20;
	my ($ret, $out, $err) = $node->psql('postgres',
		qq{SET statement_timeout = '${ms}ms'; SELECT bloomguard_rebuild('big', $cap, 0.01)});
	isnt($ret, 0, 'rebuild under statement_timeout fails');
	like($err, qr/ERROR:  canceling statement due to statement timeout/,
		'rebuild: statement timeout error');
	is(guard('big')->{last_error}, 'the last build was interrupted: canceling statement due to statement timeout',
		'the timeout hit the scan (the build was abandoned)');
	serving_ok('after statement_timeout', $gen, $cap);
	is(sq(q{SELECT capacity FROM bloomguard_guards WHERE relation = 'big'::regclass}), $cap,
		'registry keeps the old capacity');

	# new keys still reach the serving filter
	sq(q{INSERT INTO big VALUES (2000011, 0)});
	is(sq(q{SELECT bloomguard_check('big', 2000011) || ':' || guarded_exists('big', 2000011)}),
		'maybe:true', 'a key inserted after the failed rebuild is in the serving filter');
	sq(q{DELETE FROM big WHERE id = 2000011});

	# the same inside a transaction: roll back to a savepoint, rebuild again
	($ret, $out, $err) = $node->psql('postgres', qq{
		BEGIN;
		SAVEPOINT a;
		SET LOCAL statement_timeout = '${ms}ms';
		SELECT bloomguard_rebuild('big');
		ROLLBACK TO a;
		SET LOCAL statement_timeout = 0;
		SELECT bloomguard_rebuild('big');
		COMMIT;}, on_error_stop => 0);
	like($err, qr/canceling statement due to statement timeout/, 'timeout inside a savepoint');
	unlike($err, qr/already running|ERROR:(?!  canceling)/, 'the second rebuild in the same transaction works');
	$gen++;
	serving_ok('after savepoint retry', $gen, $cap);
}

#
# (b) pg_cancel_backend from another session while the rebuild's workers
# scan, with the bits going straight into shared memory and into private
# arrays.  The cancel is sent in the same query that sees the workers,
# after that query's lookups; a scan into private arrays can end first
# (it did once in CI, on 17).  Then the rebuild has swapped its generation
# in and the cancel hits what follows, or nothing: the guard must serve
# the new generation, and the attempt is made again, at most five times.
#
foreach my $mwm ('1MB', '256MB')
{
	my $hit = 0;
	for (my $try = 1; $try <= 5 && !$hit; $try++)
	{
		my $bg = start_bg('rebuilder',
			qq{SET maintenance_work_mem = '$mwm'; SELECT bloomguard_rebuild('big')});
		# the stats are read once the worker is seen (LATERAL on w), and the
		# cancel is sent only while the build runs: a backend that already
		# finished would get none (pg_cancel_backend() of a pid gone is a
		# WARNING), and the answer is then NULL
		my ($pid, $worker, $app, $state, $mgen, $mem, $bits, $absent, $cancelled) = split /\|/, sq(qq{
			SELECT w.builder, w.worker,
			       (SELECT application_name FROM pg_stat_activity WHERE pid = w.builder),
			       s.state, s.generation, s.memory_bytes, s.bits,
			       (SELECT count(*) FROM generate_series(1, $nrows, 997) g
			         WHERE bloomguard_check('big', g) = 'absent' OR NOT guarded_exists('big', g)),
			       CASE WHEN (SELECT builder_pid FROM bloomguard_guard_stats() WHERE relid = 'big'::regclass) = w.builder
			            THEN pg_cancel_backend(w.builder) END
			  FROM wait_for_worker('big') w,
			       LATERAL (SELECT * FROM bloomguard_guard_stats()
			                 WHERE relid = 'big'::regclass AND w.builder IS NOT NULL) s}), -1;
		$bg->{run}->finish;
		isnt($pid, '', "$mwm, try $try: a build was seen running");
		isnt($worker, '', "$mwm, try $try: with a parallel worker");
		is($app, 'rebuilder', "$mwm, try $try: builder_pid is the rebuilding session");
		is("$state:$mgen", "ready:$gen", "$mwm, try $try: during the rebuild: still ready, same generation");
		ok($mem > bg_filter_bytes($bits), "$mwm, try $try: during the rebuild: memory_bytes counts both generations");
		is($absent, '0', "$mwm, try $try: during the rebuild: present keys are found");
		my $g = guard('big');
		if ($g->{last_error} eq '')
		{
			# the scan ended before the cancel came: the new generation
			# serves, and the rebuild either succeeded (no cancel sent, or
			# one that came after the statement) or was cancelled after
			# its swap
			$gen++;
			note "$mwm, try $try: the build ended before the cancel reached it ($cancelled): $bg->{err}";
			like($bg->{err}, qr/\A(?:|ERROR:  canceling statement due to user request\n?)\z/,
				"$mwm, try $try: a rebuild the cancel came too late for succeeded or was cancelled, nothing else");
			serving_ok("$mwm, try $try: a build the cancel came too late for", $gen, $cap);
			next;
		}
		$hit = 1;
		is($cancelled, 't', "$mwm: pg_cancel_backend sent while the build ran");
		like($bg->{err}, qr/ERROR:  canceling statement due to user request/,
			"$mwm: the rebuild was cancelled");
		is($g->{last_error}, 'the last build was interrupted: canceling statement due to user request',
			"$mwm: the cancel hit the scan");
		serving_ok("$mwm: after pg_cancel_backend", $gen, $cap);
	}
	ok($hit, "$mwm: a cancel hit the scan within five tries");
	sq(qq{SET maintenance_work_mem = '$mwm'; SELECT bloomguard_rebuild('big')});
	$gen++;
	serving_ok("$mwm: rebuild after the cancel", $gen, $cap);
}

#
# (c) rebuilds refused by bloomguard.max_memory
#
{
	my $serving = guard('big')->{memory_bytes};

	# the new generation alone is too big
	my ($ret, $out, $err) = $node->psql('postgres',
		q{SELECT bloomguard_rebuild('big', 10000000, 0.01)});
	like($err, qr/ERROR:  filter for table "big" would exceed bloomguard\.max_memory/,
		'too big a rebuild: error');
	like($err, qr/DETAIL:  The filter needs \d+ bytes; $serving of $max_memory bytes are in use\./,
		'too big a rebuild: detail shows exactly one filter in use');
	like($err, qr/HINT:  Increase bloomguard\.max_memory, or choose a smaller capacity or a larger error rate\./,
		'too big a rebuild: hint');
	serving_ok('after a too-big rebuild', $gen, $cap);

	# it would fit alone, but not next to the serving generation
	($ret, $out, $err) = $node->psql('postgres',
		q{SELECT bloomguard_rebuild('big', 4600000, 0.01)});
	like($err, qr/ERROR:  filter for table "big" would exceed bloomguard\.max_memory/,
		'rebuild that does not fit next to the old generation: error');
	my ($needs) = $err =~ /The filter needs (\d+) bytes/;
	ok(defined $needs && $needs < $max_memory && $needs + $serving > $max_memory,
		'that generation would fit alone, but not with the serving one');
	serving_ok('after a rebuild refused for coexistence', $gen, $cap);
	is(sq(q{SELECT capacity FROM bloomguard_guards WHERE relation = 'big'::regclass}), $cap,
		'registry keeps the old capacity');

	# another table cannot take what is left either, and leaves no trace
	($ret, $out, $err) = $node->psql('postgres',
		q{SELECT bloomguard_attach('small', 5000000, 0.01)});
	like($err, qr/would exceed bloomguard\.max_memory/, 'attach over the cap fails');
	is(sq(q{SELECT count(*) FROM bloomguard_guards WHERE relation = 'small'::regclass}) . ':'
		  . sq(q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'small'::regclass}),
		'0:0', 'refused attach: not registered, no trigger');
	serving_ok('after a refused attach', $gen, $cap);

	# a rebuild that fits works
	sq(q{SELECT bloomguard_rebuild('big')});
	$gen++;
	serving_ok('rebuild within the cap', $gen, $cap);
}

#
# (d) pg_terminate_backend while the rebuild's workers scan.  The backend
# exits without an error to catch; its exit frees the generation before
# the end of its transaction stops the workers, which must not write into
# it any more.  The build must not stay claimed by a dead process, and the
# memory must come back.
#
{
	my $bg = start_bg('rebuilder', q{SELECT bloomguard_rebuild('big')});
	my ($pid, $worker, $terminated) = split /\|/,
	  sq(q{SELECT builder, worker, pg_terminate_backend(builder) FROM wait_for_worker('big')});
	$bg->{run}->finish;
	isnt($pid, '', 'a build was seen running');
	isnt($worker, '', 'with a parallel worker');
	is($terminated, 't', 'pg_terminate_backend sent');
	like($bg->{err}, qr/FATAL:  terminating connection due to administrator command/,
		'the rebuilding backend was terminated');
	$node->poll_query_until('postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
	  if $pid ne '';

	my $g = guard('big');
	is("$g->{state}:$g->{generation}", "ready:$gen", 'after terminate: old generation still serving');
	is(workers(), 0, 'after terminate: the workers are gone');
	is($g->{memory_in_use}, $g->{memory_bytes}, 'after terminate: only the serving generation is in use');
	is(sq(qq{SELECT count(*) FROM generate_series(1, $nrows, 997) g
	         WHERE bloomguard_check('big', g) = 'absent' OR NOT guarded_exists('big', g)}),
		'0', 'after terminate: present keys found');

	my ($ret, $out, $err) = $node->psql('postgres', q{SELECT bloomguard_rebuild('big')});
	is($ret, 0, 'after terminate: the next rebuild succeeds');
	is($err, '', 'after terminate: the next rebuild gives no error');
	$gen++ if $ret == 0;
	serving_ok('after terminate and rebuild', $gen, $cap);
}

#
# (e) pg_terminate_backend during an attach's scan: the guard must not be
# stuck in 'building'; a rebuild must build it.
#
{
	sq(q{SELECT bloomguard_detach('big')});
	is(sq(q{SELECT count(*) FROM bloomguard_guard_stats()}), '0', 'detached');
	my $bg = start_bg('attacher', qq{SELECT bloomguard_attach('big', $cap)});
	my ($pid, $app, $state, $terminated) = split /\|/, sq(q{
		SELECT p, (SELECT application_name FROM pg_stat_activity WHERE pid = p),
		       (SELECT state FROM bloomguard_guard_stats() WHERE relid = 'big'::regclass),
		       pg_terminate_backend(p)
		  FROM wait_for_builder('big', true) p});
	$bg->{run}->finish;
	note "attach session's output: $bg->{err}";
	is($app, 'attacher', 'the attaching session was building');
	is($state, 'building', "during the attach's first build: state building");
	is($terminated, 't', 'pg_terminate_backend sent');
	$node->poll_query_until('postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
	  if $pid ne '';

	# if the scan had started, the trigger is committed and the guard registered
	is(sq(q{SELECT count(*) FROM bloomguard_guards}), '1', 'terminated attach: registered');
	is(sq(q{SELECT guarded_exists('big', 5) || ':' || guarded_exists('big', -5)}), 'true:false',
		'terminated attach: lookups correct');
	isnt(sq(q{SELECT bloomguard_check('big', 5)}), 'absent', "terminated attach: present key not 'absent'");
	my ($ret, $out, $err) = $node->psql('postgres', q{SELECT bloomguard_rebuild('big')});
	is($ret, 0, 'terminated attach: a rebuild succeeds');
	is($err, '', 'terminated attach: the rebuild gives no error');
	my $g = guard('big');
	is($g->{state}, 'ready', 'terminated attach: ready after the rebuild');
	is($g->{memory_in_use}, bg_filter_bytes($g->{bits}), 'terminated attach: one filter in use after the rebuild');
}

#
# (f) pg_terminate_backend of one parallel worker in the middle of a
# build: its error ends the build, the leader stops the other worker
# before it frees the generation, and the old generation keeps serving.
# With the bits going straight into shared memory and into private arrays.
#
{
	sq(q{SELECT bloomguard_rebuild('big')});
	$gen = guard('big')->{generation};
	serving_ok('before terminating workers', $gen, $cap);
	foreach my $mwm ('1MB', '256MB')
	{
		my $bg = start_bg('rebuilder',
			qq{SET maintenance_work_mem = '$mwm'; SELECT bloomguard_rebuild('big')});
		my ($pid, $worker, $terminated) = split /\|/,
		  sq(q{SELECT builder, worker, pg_terminate_backend(worker) FROM wait_for_worker('big')});
		$bg->{run}->finish;
		isnt($worker, '', "$mwm: a parallel worker was seen scanning");
		is($terminated, 't', "$mwm: pg_terminate_backend sent to the worker");
		like($bg->{err},
			qr/ERROR:  terminating background worker "parallel worker" due to administrator command/,
			"$mwm: the worker's error ended the rebuild");
		like($bg->{err}, qr/CONTEXT:  parallel worker/, "$mwm: and came from the worker");
		is(guard('big')->{last_error},
			'the last build was interrupted: terminating background worker "parallel worker" due to administrator command',
			"$mwm: the build was abandoned");
		serving_ok("$mwm: after a worker was terminated", $gen, $cap);
		sq(qq{SET maintenance_work_mem = '$mwm'; SELECT bloomguard_rebuild('big')});
		$gen++;
		serving_ok("$mwm: rebuild after a worker was terminated", $gen, $cap);
	}
}

#
# (g) Freed filter memory must be reusable.  Grow one guard's filter step
# by step; every step fits bloomguard.max_memory with both generations
# counted (at most 4,078,080 + 3,707,328 bytes of 8 MB), so every rebuild
# must succeed.  A fresh start, so that earlier sections leave nothing.
#
{
	sq(q{SELECT bloomguard_detach(relation) FROM bloomguard_guards});
	$node->restart;
	sq(q{CREATE TABLE grow (id int PRIMARY KEY); INSERT INTO grow SELECT generate_series(1, 1000)});
	sq(q{SELECT bloomguard_attach('grow', 1000, 0.01)});
	for my $c (1_000_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_300_000)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			qq{SELECT bloomguard_rebuild('grow', $c, 0.01)});
		is($err, '', "grow to capacity $c: no error");
		my $g = guard('grow');
		is($g->{capacity}, $c, "grow to capacity $c: serving");
		is($g->{memory_in_use}, bg_filter_bytes($g->{bits}), "grow to capacity $c: one filter in use");
	}
}

ok(!$node->log_contains('\(PID \d+\) was terminated by signal'), 'no backend crashed');
$node->stop;
bg_check_log($node);
done_testing();
