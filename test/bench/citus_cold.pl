# Citus, cold shards: lookups on a distributed table whose shard indexes
# are several times larger than what each worker may cache, the case a
# Citus user shards for.  Run by test/bench/citus-cold.sh (as root: it
# makes a memory cgroup for each worker and runs this as the postgres
# user, under prove); skipped without those cgroups or without Citus.
#
# A coordinator and two workers (BloomGuard::Citus), each worker started
# inside its own memory cgroup, so that every page it caches and the
# shared memory it touches are charged there.  A table of
# $BENCH_CITUS_KEYS present keys (even numbers; odd ones are absent, and
# land on the same index pages), 32 shards, loaded through the
# coordinator and guarded with one bloomguard_attach() there.  Then each
# worker's limit is lowered to its shared memory in use + its processes'
# private memory + a page-cache budget ($BENCH_CITUS_CACHE_MB), and the
# kernel evicts its cache down to that.
#
# Measured, in interleaved rounds, with pgbench ($BENCH_CITUS_CLIENTS
# clients): absent keys, and 80% absent / 20% present, each
#   - through the coordinator: SELECT * FROM acc WHERE id = $1, a Citus
#     router query (-M prepared);
#   - directly on worker 1, on its own shards: a tiny key table there
#     (bench_keys, 65,536 sampled keys, in every run alike) names a shard
#     and a key, then SELECT * FROM <that shard> WHERE id = <key> (-M
#     simple, since the table name varies);
# with the guard on and off (bloomguard.transparent on both workers, set
# with ALTER SYSTEM and a reload between runs; the filters stay in
# memory in both arms).  Per run: lookups/s, and per lookup the workers'
# index blocks read (pg_statio_user_indexes: shared-buffer misses) and
# bytes read from the disk by the workers' processes (/proc/PID/io).
# Writes $BENCH_OUT/results-citus-cold.md and citus-cold.csv.
#
# Fails on a wrong answer, a failed run, a guarded absent key that reads
# the index, or a cold case that is not cold (plain absent keys that read
# nothing from the disk).  It does not fail on a ratio: the machine is
# shared and noisy, and the ratios are reported.
#
# Parameters (environment; BENCH_SMOKE=1 for the CI's short run):
#   BENCH_CITUS_KEYS      present keys            (10000000; smoke 3000000)
#   BENCH_CITUS_SECONDS   seconds per run         (10; smoke 2)
#   BENCH_CITUS_ROUNDS    interleaved rounds      (3; smoke 1)
#   BENCH_CITUS_CLIENTS   pgbench clients         (2)
#   BENCH_CITUS_CACHE_MB  page-cache budget per worker, MB (24; smoke 4)
#   BENCH_CITUS_SHARED_BUFFERS  each node's shared_buffers (16MB; smoke 2MB)
#   BG_CG_W1, BG_CG_W2, BG_CG_CLIENT, BG_CG_VERSION: the cgroups (the
#   wrapper sets them)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use BloomGuard::Citus;

if (my $why = bg_citus_skip_reason())
{
	plan skip_all => $why;
}
foreach my $v ('BG_CG_W1', 'BG_CG_W2', 'BG_CG_CLIENT')
{
	plan skip_all => "no memory cgroups ($v is not set: run test/bench/citus-cold.sh as root)"
	  unless $ENV{$v} && -w "$ENV{$v}/cgroup.procs";
}

my $smoke = ($ENV{BENCH_SMOKE} // '') eq '1';
my $nkeys = $ENV{BENCH_CITUS_KEYS} // ($smoke ? 3000000 : 10000000);
my $dur = $ENV{BENCH_CITUS_SECONDS} // ($smoke ? 2 : 10);
my $rounds = $ENV{BENCH_CITUS_ROUNDS} // ($smoke ? 1 : 3);
my $clients = $ENV{BENCH_CITUS_CLIENTS} // 2;
my $cache_mb = $ENV{BENCH_CITUS_CACHE_MB} // ($smoke ? 4 : 24);
my $sb = $ENV{BENCH_CITUS_SHARED_BUFFERS} // ($smoke ? '2MB' : '16MB');
my $out = $ENV{BENCH_OUT} // "$FindBin::RealBin/out";
my $v2 = ($ENV{BG_CG_VERSION} // '1') eq '2';
my %cg = (worker1 => $ENV{BG_CG_W1}, worker2 => $ENV{BG_CG_W2},
	coordinator => $ENV{BG_CG_CLIENT}, client => $ENV{BG_CG_CLIENT});
my $t0 = time;
sub say_ { diag(sprintf('[%4ds] %s', time - $t0, join('', @_))); return; }

# This process, and what it starts from now on, into cgroup $cg{$role}.
sub enter
{
	my ($role) = @_;
	PostgreSQL::Test::Utils::append_to_file("$cg{$role}/cgroup.procs", "$$\n");
	return;
}

my $citus = BloomGuard::Citus->new(workers => 2,
	before_start => \&enter,
	extra => "shared_buffers = $sb\nbloomguard.max_memory = 64MB\nbloomguard.auto_rebuild = off\n"
	  . "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nautovacuum = off\n"
	  . "max_wal_size = 8GB\ncheckpoint_timeout = 1h\njit = off\ntrack_io_timing = on\n"
	  # the shards in pg_class and the statistics views, for the sizes and reads
	  . "citus.override_table_visibility = off\n");
enter('client');
my $c = $citus->coordinator;
my ($w1, $w2) = $citus->workers;

# ------------------------------------------------------------- the table
my $t = time;
$c->safe_psql('postgres', qq{
	CREATE TABLE acc (id bigint PRIMARY KEY, v int);
	SELECT create_distributed_table('acc', 'id', shard_count := 32);
	INSERT INTO acc SELECT 2 * g, g FROM generate_series(1, $nkeys) g;
});
my $load_s = time - $t;
$t = time;
$c->safe_psql('postgres', q{SELECT bloomguard_attach('acc')});
ok($c->poll_query_until('postgres', q{
	SELECT ready_placements = 32 FROM bloomguard_distributed_health
	 WHERE relation = 'acc'::regclass AND shardid IS NULL}),
	'every placement is guarded and ready');
my $attach_s = time - $t;
my %size;
foreach my $w ($w1, $w2)
{
	my ($idx, $heap, $filter) = split /\|/, $w->safe_psql('postgres', q{
		SELECT sum(pg_relation_size(indexrelid)), sum(pg_relation_size(relid)),
		       (SELECT sum(memory_bytes) FROM bloomguard_health)
		  FROM pg_stat_user_indexes WHERE relname ~ '^acc_[0-9]+$'});
	$size{ $w->name } = { index => $idx, heap => $heap, filter => $filter };
}
say_(sprintf('loaded %d keys in %.0f s, attached in %.1f s', $nkeys, $load_s, $attach_s));

# worker 1's key table for the direct lookups: 65,536 keys sampled from
# its shards, each with an absent neighbour (id + 1, odd)
my @w1shards = split /\n/, $c->safe_psql('postgres', sprintf(q{
	SELECT shard_name FROM citus_shards WHERE table_name = 'acc'::regclass AND nodeport = %d ORDER BY shardid},
	$w1->port));
my $per = int(65536 / @w1shards);
$w1->safe_psql('postgres', 'CREATE TABLE bench_keys (n int PRIMARY KEY, shard text, present bigint, absent bigint);'
	. join('', map {
		sprintf(q{INSERT INTO bench_keys SELECT %d + row_number() OVER (), '%s', id, id + 1
		            FROM (SELECT id FROM %s ORDER BY random() LIMIT %d) s;}, $_ * $per, $w1shards[$_], $w1shards[$_], $per)
	} 0 .. $#w1shards));
my $nsample = $per * @w1shards;

# answers are right, through both paths
{
	my @present = map { 2 * (1 + int(rand($nkeys))) } 1 .. 200;
	is($c->safe_psql('postgres', join '', map { "SELECT count(*) FROM acc WHERE id = $_;\n" } @present),
		join("\n", ('1') x 200), 'present keys are found through the coordinator');
	is($c->safe_psql('postgres', join '', map { "SELECT count(*) FROM acc WHERE id = @{[$_ + 1]};\n" } @present),
		join("\n", ('0') x 200), 'absent keys are not');
}
is($w1->safe_psql('postgres', q{SELECT count(*) FROM bench_keys WHERE NOT guarded_exists(shard::regclass, present) OR guarded_exists(shard::regclass, absent)}),
	'0', "the key table's present keys are found on worker 1's shards, its absent ones are not");

# ------------------------------------------------------------- the limits
$_->safe_psql('postgres', 'CHECKPOINT') for ($c, $w1, $w2);

# memory.stat of a cgroup: cache, anon, shmem
sub cgstat
{
	my ($dir) = @_;
	my %s;
	foreach my $line (split /\n/, slurp_file("$dir/memory.stat"))
	{
		my ($k, $v) = split / /, $line;
		if ($v2)
		{
			$s{cache} = $v if $k eq 'file';
			$s{anon} = $v if $k eq 'anon';
			$s{shmem} = $v if $k eq 'shmem';
		}
		else
		{
			$s{cache} = $v if $k eq 'total_cache';
			$s{anon} = $v if $k eq 'total_rss';
			$s{shmem} = $v if $k eq 'total_shmem';
		}
	}
	return \%s;
}
my %limit;
foreach my $role ('worker1', 'worker2')
{
	my $st = cgstat($cg{$role});
	my $lim = $st->{shmem} + $st->{anon} + ($clients + 4) * 4 * 1048576 + $cache_mb * 1048576;
	my $file = $v2 ? "$cg{$role}/memory.max" : "$cg{$role}/memory.limit_in_bytes";
	my $okset = 0;
	foreach my $try (0 .. 5)
	{
		my $l = $lim + $try * 8 * 1048576;
		my $fh;
		$okset = open($fh, '>', $file) && print($fh "$l\n") && close($fh);
		if ($okset) { $limit{$role} = $l; last; }
	}
	ok($okset, "the limit of $role is set");
	my $node = $role eq 'worker1' ? $w1 : $w2;
	say_(sprintf('%s: shard indexes %.0f MB; limited to %.0f MB (shared memory %.0f MB, processes %.0f MB, page cache %d MB)',
		$role, $size{ $node->name }{index} / 1048576, $limit{$role} / 1048576,
		$st->{shmem} / 1048576, $st->{anon} / 1048576, $cache_mb));
}

# ------------------------------------------------------------- the runs
my $dir = PostgreSQL::Test::Utils::tempdir();
my %script = (
	'coord.miss' => "\\set k 2 * random(1, $nkeys) + 1\nSELECT * FROM acc WHERE id = :k;\n",
	'coord.hit' => "\\set k 2 * random(1, $nkeys)\nSELECT * FROM acc WHERE id = :k;\n",
	'direct.miss' => "\\set r random(1, $nsample)\nSELECT shard, absent AS k FROM bench_keys WHERE n = :r \\gset\nSELECT * FROM :shard WHERE id = :k;\n",
	'direct.hit' => "\\set r random(1, $nsample)\nSELECT shard, present AS k FROM bench_keys WHERE n = :r \\gset\nSELECT * FROM :shard WHERE id = :k;\n",
);
while (my ($name, $text) = each %script)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$name.sql", $text);
}

# the workers' index blocks read, and their processes' bytes read
sub idx_read
{
	my $n = 0;
	$n += $_->safe_psql('postgres', q{
		SELECT coalesce(sum(idx_blks_read), 0) FROM pg_statio_user_indexes WHERE relname ~ '^acc_[0-9]+$'})
	  for ($w1, $w2);
	return $n;
}
sub disk_read
{
	my $n = 0;
	foreach my $role ('worker1', 'worker2')
	{
		foreach my $pid (split /\s+/, slurp_file("$cg{$role}/cgroup.procs"))
		{
			next unless $pid && open(my $fh, '<', "/proc/$pid/io");
			while (<$fh>) { $n += $1 if /^read_bytes: (\d+)/; }
			close $fh;
		}
	}
	return $n;
}
sub set_guard
{
	my ($on) = @_;
	foreach my $w ($w1, $w2)
	{
		$w->safe_psql('postgres', "ALTER SYSTEM SET bloomguard.transparent = $on; SELECT pg_reload_conf()");
	}
	return;
}

# One run: $path (coord, direct) and $work (miss, mix); the lookups/s
# and the reads per lookup.
sub run
{
	my ($path, $work) = @_;
	my $node = $path eq 'coord' ? $c : $w1;
	my @f = $work eq 'miss' ? ('-f', "$dir/$path.miss.sql")
	  : ('-f', "$dir/$path.miss.sql\@80", '-f', "$dir/$path.hit.sql\@20");
	my ($i0, $d0) = (idx_read(), disk_read());
	my ($o, $e) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-M', ($path eq 'coord' ? 'prepared' : 'simple'),
		'-c', $clients, '-j', $clients, '-T', $dur, @f,
		'-h', $node->host, '-p', $node->port, 'postgres' ], '>', \$o, '2>', \$e);
	my ($tps) = $o =~ /tps = ([0-9.]+) \(without initial connection time\)/;
	my ($n) = $o =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $o =~ /number of failed transactions: (\d+)/;
	unless ($tps && $n && !$failed)
	{
		fail("pgbench $path $work ran");
		diag($o . $e);
		return (0, 0, 0);
	}
	return ($tps, (idx_read() - $i0) / $n, (disk_read() - $d0) / 8192 / $n);
}

my (%res, @csv);
my @combos = map { my $p = $_; map { [ $p, $_ ] } ('miss', 'mix') } ('coord', 'direct');
for my $r (1 .. $rounds)
{
	my @arms = $r % 2 ? ('on', 'off') : ('off', 'on');
	foreach my $arm (@arms)
	{
		set_guard($arm);
		foreach my $cb ($r % 2 ? @combos : reverse @combos)
		{
			my ($path, $work) = @$cb;
			my ($tps, $idx, $disk) = run($path, $work);
			push @{ $res{"$path.$work.$arm"} }, [ $tps, $idx, $disk ];
			push @csv, join(',', $path, $work, $arm, $r, $tps, sprintf('%.4f', $idx), sprintf('%.4f', $disk));
			say_("round $r, guard $arm, $path $work: $tps lookups/s, $idx index blocks and $disk disk blocks read per lookup");
		}
	}
}
set_guard('on');

sub median
{
	my @s = sort { $a <=> $b } @_;
	return 0 unless @s;
	return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}
sub col { my ($k, $i) = @_; return median(map { $_->[$i] } @{ $res{$k} }); }
# the ratio on/off per round (side by side in the same round): its median
# and range, as text
sub ratio
{
	my ($k) = @_;
	my @on = @{ $res{"$k.on"} };
	my @off = @{ $res{"$k.off"} };
	my @r = sort { $a <=> $b } map { $off[$_][0] ? $on[$_][0] / $off[$_][0] : 0 } 0 .. $#on;
	return sprintf('%.2fx (%.2f-%.2f)', median(@r), $r[0], $r[-1]);
}

# what must hold
foreach my $path ('coord', 'direct')
{
	ok(col("$path.miss.on", 1) < 0.05, "$path: guarded absent keys read no index block");
	# most plain misses read from the disk; the smoke run's shards are smaller
	ok(col("$path.miss.off", 2) > ($smoke ? 0.05 : 0.5), "$path: plain absent keys read from the disk (the shards are cold)")
	  or diag('plain absent keys read ' . col("$path.miss.off", 2) . ' disk blocks per lookup');
}

# ------------------------------------------------------------- results
mkdir $out unless -d $out;
my $name = { coord => 'through the coordinator (router query, -M prepared)',
	direct => "directly on worker 1's shards (-M simple)" };
my $wname = { miss => 'absent keys', mix => '80% absent / 20% present' };
open(my $md, '>', "$out/results-citus-cold.md") or die "cannot write $out/results-citus-cold.md: $!";
printf $md "# Citus, cold shards: guard on vs off\n\n";
printf $md "%d present keys in a distributed table of 32 shards, a coordinator and two workers on this machine, "
  . "each worker in a memory cgroup: page cache %d MB beyond its shared memory and processes; %s per run, %d rounds, %d clients; "
  . "load %.0f s, attach %.1f s.\n\n", $nkeys, $cache_mb, "${dur} s", $rounds, $clients, $load_s, $attach_s;
print $md "| worker | shard indexes | shard tables | filters | limit |\n|---|---|---|---|---|\n";
foreach my $w ($w1, $w2)
{
	my $role = $w == $w1 ? 'worker1' : 'worker2';
	printf $md "| %s | %.0f MB | %.0f MB | %.1f MB | %.0f MB |\n", $role, $size{ $w->name }{index} / 1048576,
	  $size{ $w->name }{heap} / 1048576, $size{ $w->name }{filter} / 1048576, $limit{$role} / 1048576;
}
print $md "\n| path | workload | guard off: lookups/s | guard on: lookups/s | on / off | index blocks read per lookup, off / on | disk blocks read per lookup, off / on |\n|---|---|---|---|---|---|---|\n";
foreach my $cb (@combos)
{
	my ($path, $work) = @$cb;
	my $k = "$path.$work";
	printf $md "| %s | %s | %.0f | %.0f | %s | %.2f / %.2f | %.2f / %.2f |\n", $name->{$path}, $wname->{$work},
	  col("$k.off", 0), col("$k.on", 0), ratio($k), col("$k.off", 1), col("$k.on", 1), col("$k.off", 2), col("$k.on", 2);
}
print $md "\nMedians over the rounds; on / off is the median of each round's ratio (its range in brackets), the two arms run side by side in the same round "
  . "(the order alternating). The direct path's scripts read a 65,536-row key table on worker 1 first, in both arms alike.\n";
close $md;
open(my $fh, '>', "$out/citus-cold.csv") or die;
print $fh "path,workload,guard,round,lookups_per_s,index_blocks_per_lookup,disk_blocks_per_lookup\n", map { "$_\n" } @csv;
close $fh;
diag(slurp_file("$out/results-citus-cold.md"));

$citus->check_logs;
$citus->stop;
done_testing();
