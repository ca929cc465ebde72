# Online rebuilds racing with writers and readers.
#
# pgbench clients insert keys, change keys (UPDATE of the primary key),
# delete rows, update non-key columns, roll back inserts, and read stable
# keys, while two other pgbench clients rebuild the filter over and over,
# at alternating capacities and error rates (so generations of different
# sizes are allocated, swapped in and freed), some of them too big for
# maintenance_work_mem (the scan then sets the shared bits directly).  Every writer transaction
# reads back, after its commit, the keys it just created, and every reader
# checks a key that always exists; a key the filter calls 'absent' or
# guarded_exists denies fails the transaction (a failing cast), which
# fails pgbench.
#
# Afterwards: no committed key is 'absent', the guard is ready, its
# generation counts every rebuild, and the filter memory is exactly one
# filter (nothing leaked by the swaps).
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

my $duration = 12;    # seconds of writing; the rebuilders stop a bit earlier

my $node = bg_node('rebuild_stress', qq{
max_connections = 30
# no rebuilds but the test's own
bloomguard.background_worker = off
});
$node->start;

# keys 1..10000 are deleted or re-keyed at random; 10001..20000 always
# exist (only their non-key column changes); new keys come from s.
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE SEQUENCE s START 1000001;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT nextval('s'), v int);
	INSERT INTO t SELECT g, 0 FROM generate_series(1, 20000) g;
	VACUUM ANALYZE t;
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('t', 50000, 0.01)});
is($node->safe_psql('postgres',
	q{SELECT state || ':' || generation FROM bloomguard_health WHERE relation = 't'::regclass}),
	'ready:1', 'guard ready after attach');

my $dir = $node->basedir;
my %scripts = (
	# insert 5 keys; read back every key of the id range after commit
	'ins.sql' => q{
WITH ins AS (INSERT INTO t (v) SELECT :client_id FROM generate_series(1, 5) RETURNING id)
SELECT min(id) AS lo, max(id) AS hi FROM ins \gset
SELECT (CASE WHEN count(*) = 0 THEN '1' ELSE 'bad keys: ' || count(*) END)::int AS ok FROM t
 WHERE id BETWEEN :lo AND :hi
   AND (bloomguard_check('t', id) = 'absent' OR NOT guarded_exists('t', id));
SELECT (CASE WHEN guarded_exists('t', :lo::bigint) AND guarded_exists('t', :hi::bigint)
             THEN '1' ELSE 'own key not found' END)::int AS ok;
},
	# change a key to a new one; the new key must be found after commit
	'rekey.sql' => q{
\set k random(1, 10000)
WITH u AS (UPDATE t SET id = nextval('s') WHERE id = :k RETURNING id)
SELECT coalesce((SELECT id FROM u), 0) AS nid \gset
SELECT (CASE WHEN :nid::bigint = 0
               OR (guarded_exists('t', :nid::bigint) AND bloomguard_check('t', :nid::bigint) <> 'absent')
             THEN '1' ELSE 'rekeyed key not found' END)::int AS ok;
},
	'del.sql' => q{
\set k random(1, 10000)
DELETE FROM t WHERE id = :k;
},
	# non-key update of a stable key (the trigger skips it), then read it
	'upd.sql' => q{
\set k random(10001, 20000)
UPDATE t SET v = v + 1 WHERE id = :k;
SELECT (CASE WHEN guarded_exists('t', :k::bigint) THEN '1' ELSE 'stable key not found' END)::int AS ok;
},
	# an insert that rolls back: its key only costs a false positive
	'rollback.sql' => q{
BEGIN;
INSERT INTO t (v) VALUES (-1);
ROLLBACK;
},
	'read.sql' => q{
\set k random(10001, 20000)
SELECT (CASE WHEN guarded_exists('t', :k::bigint) AND bloomguard_check('t', :k::bigint) <> 'absent'
             THEN '1' ELSE 'stable key not found' END)::int AS ok;
},
	# rebuild at one of four sizings (NULL: keep the current one); the
	# scan sets bits in a private copy and merges it at the end
	'rebuild.sql' => q{
\set c random(1, 4)
SELECT bloomguard_rebuild('t',
         (ARRAY[NULL, 200000, 40000, 100000]::bigint[])[:c],
         (ARRAY[NULL, 0.01, 0.05, 0.001]::float8[])[:c]);
},
	# a filter bigger than maintenance_work_mem: the scan sets the shared
	# bits directly, racing with the triggers' atomic ORs
	'rebuild_direct.sql' => q{
SET maintenance_work_mem = '1MB';
SELECT bloomguard_rebuild('t', 1000000, 0.01);
RESET maintenance_work_mem;
},
);
for my $f (keys %scripts)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$f", $scripts{$f});
}

my @conn = ('-h', $node->host, '-p', $node->port, '-n', '-M', 'prepared');
my ($w_out, $w_err, $r_out, $r_err) = ('', '', '', '');
my $t0 = time;
my $writers = IPC::Run::start(
	[
		'pgbench', @conn, '-c', '4', '-j', '2', '-T', $duration,
		'-f', "$dir/ins.sql\@4", '-f', "$dir/rekey.sql\@2", '-f', "$dir/del.sql\@1",
		'-f', "$dir/upd.sql\@1", '-f', "$dir/rollback.sql\@1", '-f', "$dir/read.sql\@2",
		'postgres'
	],
	'>', \$w_out, '2>', \$w_err);
my $rebuilders = IPC::Run::start(
	[
		'pgbench', @conn, '-c', '2', '-j', '1', '-T', $duration - 2,
		'-f', "$dir/rebuild.sql\@3", '-f', "$dir/rebuild_direct.sql\@1", 'postgres'
	],
	'>', \$r_out, '2>', \$r_err);

# While both run, sample the guard: it must never leave "ready" (a rebuild
# of a ready guard keeps serving the old generation), and its memory must
# be exactly the serving filter when no build runs, plus the building one
# when a build runs.  One row is read under one slot lock, so these are
# consistent with each other.
my ($samples, $bad_state, $bad_mem, $building) = (0, 0, 0, 0);
while (time - $t0 < $duration - 3)
{
	my ($state, $mem, $bits, $pid) = split /\|/, $node->safe_psql('postgres',
		q{SELECT state, memory_bytes, bits, coalesce(builder_pid, 0)
		    FROM bloomguard_guard_stats() WHERE relid = 't'::regclass});
	my $one = bg_filter_bytes($bits);
	$samples++;
	$bad_state++ if $state ne 'ready';
	if ($pid == 0)
	{
		$bad_mem++ if $mem != $one;
	}
	else
	{
		$building++;
		$bad_mem++ if $mem <= $one;
	}
	usleep(100_000);
}
note "$samples samples, $building during a build";
is($bad_state, 0, "state stayed 'ready' during the rebuilds ($samples samples)");
is($bad_mem, 0, 'memory_bytes was one filter, or more while a build ran');

my $w_ok = $writers->finish;
my $r_ok = $rebuilders->finish;
note sprintf("pgbench runs took %.1f s", time - $t0);
note "writers:\n$w_out$w_err";
note "rebuilders:\n$r_out$r_err";

ok($w_ok, 'writers: pgbench succeeded');
like($w_out, qr/number of failed transactions: 0 /, 'writers: no failed transaction');
is($w_err, '', 'writers: no error output');
ok($r_ok, 'rebuilders: pgbench succeeded');
like($r_out, qr/number of failed transactions: 0 /, 'rebuilders: no failed rebuild');
is($r_err, '', 'rebuilders: no error output');
my ($rebuilds) = $r_out =~ /number of transactions actually processed: (\d+)/;
$rebuilds //= -1;
note "rebuilds: $rebuilds";
ok($rebuilds >= 20, "at least 20 rebuilds ran ($rebuilds)");
my ($writes) = $w_out =~ /number of transactions actually processed: (\d+)/;
$writes //= -1;
ok($writes >= 200, "at least 200 writer transactions ran ($writes)");

ok(!$node->log_contains('ERROR:  invalid input syntax for type integer'),
	'no read-back check failed during the run');

# The state after the storm.
sub check_keys
{
	my ($when) = @_;
	is($node->safe_psql('postgres',
		q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) = 'absent'}),
		'0', "$when: no committed key is 'absent'");
	is($node->safe_psql('postgres',
		q{SELECT count(*) FROM t WHERE guarded_exists('t', id) IS NOT TRUE}),
		'0', "$when: guarded_exists is true for every committed key");
	is($node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(10001, 20000) g WHERE NOT guarded_exists('t', g::bigint)}),
		'0', "$when: all stable keys found");
	return;
}
check_keys('after the run');

my ($state, $gen, $bits, $mem, $in_use, $pid, $err, $cap, $rate) = split /\|/,
  $node->safe_psql('postgres', q{
	SELECT state, generation, bits, memory_bytes, memory_in_use,
	       coalesce(builder_pid::text, 'none'), coalesce(last_error, 'none'),
	       capacity, error_rate
	  FROM bloomguard_guard_stats() WHERE relid = 't'::regclass});
is($state, 'ready', 'state is ready');
is($gen, 1 + $rebuilds, 'generation = 1 (attach) + number of rebuilds');
is($mem, bg_filter_bytes($bits), 'memory_bytes is exactly one filter of the serving size');
is($in_use, $mem, 'memory_in_use equals the one guard\'s filter (no leaked generation)');
is($pid, 'none', 'no builder left behind');
is($err, 'none', 'no last_error');
is($node->safe_psql('postgres',
	q{SELECT capacity || ':' || error_rate FROM bloomguard_guards WHERE relation = 't'::regclass}),
	"$cap:$rate", 'registry sizing matches the serving filter (last committed rebuild)');
is($node->safe_psql('postgres',
	q{SELECT state || ':' || generation || ':' || memory_bytes FROM bloomguard_health WHERE relation = 't'::regclass}),
	"ready:$gen:$mem", 'the view agrees');

# One more rebuild, sized generously: the guard must be as good as new.
$node->safe_psql('postgres', q{SELECT bloomguard_rebuild('t', 300000, 0.01)});
check_keys('after a final rebuild');
($gen, $mem, $in_use) = split /\|/, $node->safe_psql('postgres',
	q{SELECT generation, memory_bytes, memory_in_use FROM bloomguard_guard_stats() WHERE relid = 't'::regclass});
is($gen, 2 + $rebuilds, 'final rebuild counted');
is($in_use, $mem, 'memory_in_use equals one filter after the final rebuild');
my ($exists, $absent) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE guarded_exists('t', g::bigint)),
	       count(*) FILTER (WHERE bloomguard_check('t', g::bigint) = 'absent')
	  FROM generate_series(50000001, 50010000) g});
is($exists, '0', 'absent keys are not found');
ok($absent > 9500, "more than 9500 of 10000 absent keys are 'absent' ($absent)");

# detach frees it all
$node->safe_psql('postgres', q{SELECT bloomguard_detach('t')});
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_guard_stats()}),
	'0', 'no guard after detach');
$node->safe_psql('postgres', q{
	CREATE TABLE probe_mem (id int PRIMARY KEY);
	SELECT bloomguard_attach('probe_mem', 1000, 0.5);
});
my ($pm_mem, $pm_in_use) = split /\|/, $node->safe_psql('postgres',
	q{SELECT memory_bytes, memory_in_use FROM bloomguard_guard_stats()});
is($pm_in_use, $pm_mem, 'after detach, memory_in_use counts only the new guard');

ok(!$node->log_contains('\(PID \d+\) was terminated by signal'), 'no backend crashed');
$node->stop;
bg_check_log($node);
done_testing();
