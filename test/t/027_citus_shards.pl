# Citus: a distributed table and a reference table guarded from the
# coordinator, through their shards (src/citus.c).  A coordinator and two
# workers (test/lib/BloomGuard/Citus.pm), with writes between every step:
# attach puts the feed trigger on the shell, Citus copies it to every
# placement, and each node's maintenance pass registers and builds its
# placements; a shard move (logical and block_writes), a split, a copy to
# a new worker and a rebalance onto a third worker each end with every
# placement guarded and ready without a manual step, and no key written
# answered absent on any node; old placements' guards go with them;
# create_distributed_table() of a guarded table moves the guard to the
# shards; detach undoes it all.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use BloomGuard::Citus;

if (my $why = bg_citus_skip_reason())
{
	plan skip_all => $why;
}

# a maintenance pass every second, so that new placements are guarded soon
# Every node starts at bloomguard 1.2, updated on the coordinator once
# the shards are guarded.
my $citus = BloomGuard::Citus->new(workers => 2, extversion => '1.2',
	extra => "bloomguard.maintenance_interval = 1\ncitus.defer_shard_delete_interval = 1000\n");
my $c = $citus->coordinator;
my ($w1, $w2) = $citus->workers;

$c->safe_psql('postgres', q{
	CREATE TABLE dist (id bigint PRIMARY KEY, v text);
	SELECT create_distributed_table('dist', 'id', shard_count := 4, colocate_with := 'none');
	INSERT INTO dist SELECT g, 'a' FROM generate_series(1, 20000) g;
	CREATE TABLE ref (id int PRIMARY KEY, v text);
	SELECT create_reference_table('ref');
	INSERT INTO ref SELECT g, 'r' FROM generate_series(1, 500) g;
});

# every key written so far, and the next one to write
my $next = 20001;

# A writer running throughout an operation: pgbench on the coordinator,
# single-row INSERTs of keys from 1,000,000 up (a sequence on the
# coordinator); every row it committed is checked afterwards like the rest.
$c->safe_psql('postgres', q{CREATE SEQUENCE wseq START 1000000});
my $wscript = PostgreSQL::Test::Utils::tempdir() . '/write.sql';
PostgreSQL::Test::Utils::append_to_file($wscript,
	"INSERT INTO dist VALUES (nextval('wseq'), 'w');\n");
sub start_writer
{
	my ($out, $err);
	return IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-T', '300', '-f', $wscript,
		  '-h', $c->host, '-p', $c->port, 'postgres' ],
		'>', \$out, '2>', \$err);
}
sub stop_writer
{
	my ($h) = @_;
	# TERM, not INT: a background job of a non-interactive shell (a
	# suite started with &) inherits SIGINT ignored, and pgbench with it
	$h->kill_kill(grace => 5);
	return;
}

# Write 200 more rows of dist through the coordinator (single-row INSERTs,
# a COPY and an ON CONFLICT), and remember them.
sub write_more
{
	my $from = $next;
	my $to = $next + 199;
	$c->safe_psql('postgres', join '',
		(map { "INSERT INTO dist VALUES ($_, 'i');\n" } $from .. $from + 49),
		"INSERT INTO dist SELECT g, 'm' FROM generate_series(" . ($from + 50) . ", " . ($from + 149) . ") g;\n",
		"INSERT INTO dist SELECT g, 'u' FROM generate_series(" . ($from + 150) . ", $to) g ON CONFLICT (id) DO NOTHING;\n");
	$next = $to + 1;
	return;
}

# Wait until every placement of $table on every node is guarded and ready,
# and the nodes hold no other guard of it; returns whether they did.
sub wait_guarded
{
	my ($table) = @_;
	my @p = $citus->placements($table);
	my %want;
	$want{ $_->{node}->name }++ for @p;
	foreach my $node ($citus->nodes)
	{
		my $n = $want{ $node->name } // 0;
		$node->poll_query_until('postgres', qq{
			SELECT count(*) FILTER (WHERE state = 'ready') = $n AND count(*) = $n
			  FROM bloomguard_health WHERE relation::text ~ '^${table}_[0-9]+\$'})
		  or return 0;
	}
	return 1;
}

# The number of keys written that are answered absent: on each
# placement's node, every row of the shard through the planner path (an
# index lookup of each key, in a plan that must hold the BloomGuard node
# while $guarded, 1 by default), through bloomguard_check() and through
# guarded_exists() on the shard; on the coordinator, the rows 1 .. $next-1
# counted and a sample of the writers' rows through guarded_exists() and
# bloomguard_check() on the shell.
sub missed
{
	my ($guarded) = @_;
	$guarded //= 1;
	my $missed = 0;
	foreach my $p ($citus->placements('dist'))
	{
		# the planner path: each row looked up by its key through the
		# shard's primary key index, in a plan with the BloomGuard node
		my $q = qq{SELECT count(*) FROM $p->{shard} s
			WHERE NOT EXISTS (SELECT 1 FROM $p->{shard} t WHERE t.id = s.id)};
		my $plan = $p->{node}->safe_psql('postgres', qq{
			SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET max_parallel_workers_per_gather = 0;
			EXPLAIN (COSTS OFF) $q});
		if ($guarded && $plan !~ /BloomGuard/)
		{
			diag("no BloomGuard node in the plan on $p->{shard}:\n$plan");
			$missed += 1000000;
		}
		$missed += $p->{node}->safe_psql('postgres', qq{
			SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET max_parallel_workers_per_gather = 0;
			$q});
		$missed += $p->{node}->safe_psql('postgres', qq{
			SELECT count(*) FROM $p->{shard} WHERE bloomguard_check('$p->{shard}', id) = 'absent'});
		$missed += $p->{node}->safe_psql('postgres', qq{
			SELECT count(*) FROM $p->{shard} WHERE NOT guarded_exists('$p->{shard}', id)});
	}
	# through the coordinator, where Citus sends each call to the shard's
	# node: every row, and 50 keys written (one call per statement)
	$missed += ($next - 1) - $c->safe_psql('postgres', qq{
		SELECT count(*) FROM dist WHERE id BETWEEN 1 AND @{[$next - 1]}});
	my @written = split /\n/, $c->safe_psql('postgres',
		q{SELECT id FROM dist WHERE id >= 1000000 ORDER BY random() LIMIT 50});
	$missed += grep { $_ ne 't' } split /\n/, $c->safe_psql('postgres',
		join '', map { "SELECT guarded_exists('dist', ${_}::bigint);\n" } @written);
	# and bloomguard_check() there, which asks the key's shard on its node
	$missed += grep { $_ eq 'absent' } split /\n/, $c->safe_psql('postgres',
		join '', map { "SELECT bloomguard_check('dist', ${_}::bigint);\n" } @written);
	my @sample = map { 1 + int(rand($next - 1)) } 1 .. 50;
	$missed += grep { $_ ne 't' } split /\n/, $c->safe_psql('postgres',
		join '', map { "SELECT guarded_exists('dist', ${_}::bigint);\n" } @sample);
	# every row the writers committed, through guarded_exists() on the
	# coordinator: the CTE is Citus's subplan, whose rows come back to the
	# coordinator, so each call runs there and Citus routes its query
	$missed += $c->safe_psql('postgres', q{
		WITH w AS MATERIALIZED (SELECT id FROM dist WHERE id >= 1000000)
		SELECT count(*) FROM w WHERE NOT guarded_exists('dist', w.id)});
	return $missed;
}

# The shards answer "absent" for keys never written: the guards are used.
sub absent_answers
{
	my $n = 0;
	foreach my $p ($citus->placements('dist'))
	{
		$n += $p->{node}->safe_psql('postgres', qq{
			SELECT count(*) FROM generate_series(-100, -1) g
			 WHERE bloomguard_check('$p->{shard}', g::bigint) = 'absent'});
	}
	return $n;
}

# attach of the shells, on the coordinator
my ($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('dist')});
is($ret, 0, 'attach of a distributed table succeeds');
like($err, qr/NOTICE:  the shards of Citus table "dist" will be guarded by the node that holds each of them/,
	'and says how its shards are guarded');
$c->safe_psql('postgres', q{SELECT bloomguard_attach('ref')});
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('dist', 1000)});
like($err, qr/cannot choose the capacity or error rate of the guards of Citus table "dist"/,
	'a capacity for a distributed table is refused');
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('dist')});
like($err, qr/Citus table "dist" already has a trigger named "bloomguard"/, 'a second attach is refused');
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM pg_trigger WHERE tgrelid::regclass::text ~ '^dist(_[0-9]+)?$' AND tgfoid = 'bloomguard_trigger'::regproc})),
	'1 3 3', 'the trigger is on the shell of every node and on each of the two shards of each worker');
ok(wait_guarded('dist'), 'every placement of the distributed table is guarded and ready');
ok(wait_guarded('ref'), 'every placement of the reference table is guarded and ready');
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM bloomguard_guards WHERE relation::text IN ('dist', 'ref')})),
	'0 0 0', 'no shell is guarded');
is(join(' ', $citus->safe_psql_all(q{
	SELECT string_agg(state, ',' ORDER BY relation) FROM bloomguard_health WHERE relation::text IN ('dist', 'ref')})),
	'unsupported,unsupported ' x 2 . 'unsupported,unsupported',
	'the health view shows each shell as unsupported');
# the README's query for every placement's state, from the coordinator
is($c->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT result, ',') || ' ' || count(*)
	  FROM run_command_on_placements('dist',
	       $$SELECT coalesce((SELECT state FROM bloomguard_health WHERE relation = '%s'::regclass), 'not guarded')$$)}),
	'ready 4', "the coordinator sees every placement's state");

# an update in place, on the coordinator: Citus updates every node, and
# the guards still answer
is(join(' ', $citus->safe_psql_all(q{SELECT extversion FROM pg_extension WHERE extname = 'bloomguard'})),
	'1.2 1.2 1.2', 'every node is at 1.2');
$c->safe_psql('postgres', q{ALTER EXTENSION bloomguard UPDATE});
is(join(' ', $citus->safe_psql_all(q{SELECT extversion FROM pg_extension WHERE extname = 'bloomguard'})),
	'1.3 1.3 1.3', 'ALTER EXTENSION bloomguard UPDATE on the coordinator updates every node');
ok(wait_guarded('dist') && wait_guarded('ref'), 'every placement is still guarded and ready');
is(missed(), 0, 'no key written is answered absent after the update');

# the distributed health view on the coordinator: a row per placement,
# with its node, and a row per table that adds them up
foreach my $t ('dist', 'ref')
{
	my @p = $citus->placements($t);
	my $n = scalar @p;
	is($c->safe_psql('postgres', qq{
		SELECT count(*) || ' ' || string_agg(DISTINCT state || '/' || status, ',')
		  FROM bloomguard_distributed_health WHERE relation = '$t'::regclass AND shardid IS NOT NULL}),
		"$n ready/HEALTHY", "the distributed health view has a ready row for each placement of $t");
	is($c->safe_psql('postgres', qq{
		SELECT string_agg(shardid || ':' || nodeport, ',' ORDER BY shardid, nodeport)
		  FROM bloomguard_distributed_health WHERE relation = '$t'::regclass AND shardid IS NOT NULL}),
		join(',', map { "$_->{shardid}:" . $_->{node}->port } @p),
		"each row of $t names its shard and node as citus_shards does");
	is($c->safe_psql('postgres', qq{
		SELECT w.placements || ' ' || w.ready_placements || ' ' || w.status || ' ' || w.state
		       || ' ' || (w.n_added = (SELECT sum(n_added) FROM bloomguard_distributed_health
		                                WHERE relation = '$t'::regclass AND shardid IS NOT NULL))
		       || ' ' || (w.memory_bytes = (SELECT sum(memory_bytes) FROM bloomguard_distributed_health
		                                     WHERE relation = '$t'::regclass AND shardid IS NOT NULL))
		  FROM bloomguard_distributed_health w WHERE relation = '$t'::regclass AND shardid IS NULL}),
		"$n $n HEALTHY ready true true", "the row of $t adds up its placements");
}
# the view opens no shell: a session holding one in ACCESS EXCLUSIVE
# mode (Citus takes the shards' locks on the workers too) does not hold
# it up
{
	my $locker = $c->background_psql('postgres');
	$locker->query_safe('BEGIN; LOCK TABLE dist IN ACCESS EXCLUSIVE MODE;');
	is($c->safe_psql('postgres', q{
		SET statement_timeout = '10s';
		SELECT count(*) FROM bloomguard_distributed_health WHERE relation = 'dist'::regclass}),
		'5', 'the distributed health view answers while the table is locked');
	$locker->query_safe('ROLLBACK');
	$locker->quit;
}
# each placement's row is its node's own bloomguard_health row
foreach my $p ($citus->placements('dist'))
{
	my $cols = 'state, generation, capacity, bits, hashes, n_added, built_at';
	is($c->safe_psql('postgres', qq{
		SELECT $cols FROM bloomguard_distributed_health WHERE shardid = $p->{shardid}}),
		$p->{node}->safe_psql('postgres', qq{
		SELECT $cols FROM bloomguard_health WHERE relation = '$p->{shard}'::regclass}),
		"the row of placement $p->{shard} is its node's");
}
is($w1->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_distributed_health WHERE relation = 'dist'::regclass}),
	'5', 'a worker with metadata has the same view');

# bloomguard_check() on the coordinator asks the shard that holds the key:
# the same answer as the shard's own, for keys present and absent
{
	my @keys = ((map { 1 + int(rand(20000)) } 1 .. 40), (map { -$_ } 1 .. 60));
	my %shard_of = map { $_->{shardid} => $_ } $citus->placements('dist');
	my $coord = $c->safe_psql('postgres',
		join '', map { "SELECT bloomguard_check('dist', ${_}::bigint);\n" } @keys);
	my @own;
	foreach my $k (@keys)
	{
		my $p = $shard_of{ $c->safe_psql('postgres',
			qq{SELECT get_shard_id_for_distribution_column('dist', $k)}) };
		push @own, $p->{node}->safe_psql('postgres', qq{SELECT bloomguard_check('$p->{shard}', ${k}::bigint)});
	}
	is($coord, join("\n", @own), "bloomguard_check('dist', k) on the coordinator is the shard's answer");
	my @answers = split /\n/, $coord;
	is(scalar(grep { $_ eq 'maybe' } @answers[0 .. 39]), 40, 'maybe for every key present');
	ok(scalar(grep { $_ eq 'absent' } @answers[40 .. 99]) >= 54, 'absent for nearly every key never written');
	is($c->safe_psql('postgres', q{SELECT bloomguard_check('dist', '7'), bloomguard_check('dist', 7::numeric)}),
		'maybe|maybe', 'so is it for untyped and numeric keys, converted to the key type first');
	is($c->safe_psql('postgres', q{SELECT bloomguard_check('ref', 7),
		(SELECT count(*) >= 15 FROM generate_series(-20, -1) g WHERE bloomguard_check('ref', g) = 'absent')}),
		'maybe|t', "bloomguard_check() of a reference table asks every node's placement");
	is($c->safe_psql('postgres', q{BEGIN; INSERT INTO dist VALUES (-5000, 'x');
		SELECT guarded_exists('dist', -5000::bigint); ROLLBACK}),
		't', "guarded_exists() on the coordinator sees its own transaction's row");
}

# bloomguard_check() on the coordinator asks the placements only from a
# statement that starts its transaction and writes nothing: the caller's
# own uncommitted keys wait in its worker backends, where no other
# session sees them
is($c->safe_psql('postgres', q{
	BEGIN; INSERT INTO dist VALUES (-777, 'x'); SELECT bloomguard_check('dist', -777::bigint); ROLLBACK}),
	'unknown', 'bloomguard_check() after a write in the same transaction says unknown');
is($c->safe_psql('postgres', q{BEGIN; SELECT bloomguard_check('dist', 7::bigint); COMMIT}),
	'unknown', 'so does it anywhere in a transaction block');
{
	# psql -c sends both statements in one query string
	my ($stdout, $stderr) = run_command([ 'psql', '-XAtq', '-d', $c->connstr('postgres'), '-c',
		q{INSERT INTO dist VALUES (-778, 'x'); SELECT bloomguard_check('dist', -778::bigint)} ]);
	is($stdout, 'unknown', 'and after a write in the same implicit transaction (one query string)');
}
is($c->safe_psql('postgres', q{SELECT bloomguard_check('dist', -778::bigint)}),
	'maybe', 'once committed, the key is found');
$c->safe_psql('postgres', q{DELETE FROM dist WHERE id IN (-777, -778)});
# keys that travel as text: char(n) is sent without its length (a cast to
# character would cut 'abc' to 'a'), and a date is written in ISO whatever
# the caller's DateStyle (the other node reads it with its own)
$c->safe_psql('postgres', q{
	CREATE TABLE ck (k char(3) PRIMARY KEY);
	SELECT create_distributed_table('ck', 'k', shard_count := 2, colocate_with := 'none');
	INSERT INTO ck VALUES ('abc'), ('xyz');
	CREATE TABLE dk (d date PRIMARY KEY);
	SELECT create_distributed_table('dk', 'd', shard_count := 2, colocate_with := 'none');
	INSERT INTO dk VALUES ('2026-12-05');
	SELECT bloomguard_attach('ck');
	SELECT bloomguard_attach('dk');
});
ok(wait_guarded('ck') && wait_guarded('dk'), 'the char(3) and date keyed tables are guarded');
is($c->safe_psql('postgres', q{SELECT bloomguard_check('ck', 'abc'::char(3)), bloomguard_check('ck', 'xyz'::char(3))}),
	'maybe|maybe', 'a char(3) key is asked whole');
is($c->safe_psql('postgres', q{SET DateStyle = 'SQL, DMY'; SELECT bloomguard_check('dk', '05/12/2026'::date)}),
	'maybe', 'a date key is asked as the date it is, under any DateStyle');
$c->safe_psql('postgres', q{SELECT bloomguard_detach('ck'); SELECT bloomguard_detach('dk'); DROP TABLE ck, dk});

# guarded_exists() on the coordinator: Citus sends the query to the
# shard, whose guard answers for the absent keys there
{
	my $q = q{SELECT shortcuts FROM bloomguard_distributed_health WHERE relation = 'dist'::regclass AND shardid IS NULL};
	my $before = $c->safe_psql('postgres', $q);
	is($c->safe_psql('postgres',
		join '', 'SELECT 0;', map { "SELECT guarded_exists('dist', -${_}::bigint);\n" } 1 .. 200) =~ tr/t//,
		0, 'guarded_exists() on the coordinator finds no key never written');
	ok($c->safe_psql('postgres', $q) - $before >= 180,
		"the shards' guards answered those lookups (shortcuts counted on the workers)");
}

# a worker down: its placements are unreachable in the view, and
# bloomguard_check() of a key there says which node it could not ask
$w2->stop;
is($c->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT state, ',') || ' ' || count(*)
	  FROM bloomguard_distributed_health WHERE relation = 'dist'::regclass AND nodeport = } . $w2->port),
	'unreachable 2', "the placements of a stopped worker are unreachable");
like($c->safe_psql('postgres', q{
	SELECT status || ' ' || state || ' ' || ready_placements || ' ' || advice
	  FROM bloomguard_distributed_health WHERE relation = 'dist'::regclass AND shardid IS NULL}),
	qr/^DEGRADED mixed 2 2 of its 4 placements are DEGRADED/, 'the table row says how many are degraded');
{
	my ($p) = grep { $_->{node} == $w2 } $citus->placements('dist');
	my $k = $c->safe_psql('postgres', qq{
		SELECT g FROM generate_series(1, 1000) g
		 WHERE get_shard_id_for_distribution_column('dist', g) = $p->{shardid} LIMIT 1});
	($ret, $out, $err) = $c->psql('postgres', qq{SELECT bloomguard_check('dist', ${k}::bigint)});
	like($err, qr/could not ask the guard of a placement of Citus table "dist" on node/,
		'bloomguard_check() of a key on it fails, naming the node');
}
$w2->start;
ok(wait_guarded('dist'), 'the restarted worker guards its placements again');
is($c->safe_psql('postgres', q{
	SELECT status || ' ' || ready_placements FROM bloomguard_distributed_health
	 WHERE relation = 'dist'::regclass AND shardid IS NULL}),
	'HEALTHY 4', 'and the view says so');

# rebuild on the coordinator: every placement, on its node
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_rebuild('dist')});
is($ret, 0, 'rebuild of the distributed table succeeds');
my @gens = map {
	$_->safe_psql('postgres', q{
		SELECT count(*) FROM bloomguard_health WHERE relation::text ~ '^dist_[0-9]+$' AND generation = 2})
} $citus->nodes;
is("@gens", '0 2 2', 'it rebuilt the guard of every placement');
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_rebuild('dist', 5000)});
like($err, qr/cannot choose the capacity or error rate of the guards of Citus table "dist"/,
	'a capacity for it is refused');
write_more();
is(missed(), 0, 'no key written is answered absent, on any node');
ok(absent_answers() >= 0.9 * 400, 'the shards answer absent for keys never written (a false positive now and then)');
is($w1->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 500) g
	 WHERE NOT guarded_exists(pg_catalog.to_regclass(pg_catalog.shard_name('ref', (SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'ref'::regclass)))::regclass, g)}),
	'0', "a worker's reference table placement finds every key");
# through the coordinator the planner path runs on the worker's shard
is($c->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 300) g WHERE guarded_exists('dist', g::bigint)}),
	'300', 'guarded_exists() on the shell finds present keys');

# a move: the new placement gets the trigger from Citus, after its load
# and catch-up, and the pass guards it; the old placement's guard goes
# with it
foreach my $mode ('force_logical', 'block_writes')
{
	my ($p) = grep { $_->{node} == $w1 } $citus->placements('dist');
	my $writer = start_writer();
	$c->safe_psql('postgres', sprintf(q{
		SELECT citus_move_shard_placement(%d, '%s', %d, '%s', %d, shard_transfer_mode := '%s')},
		$p->{shardid}, $w1->host, $w1->port, $w2->host, $w2->port, $mode));
	write_more();
	stop_writer($writer);
	ok($citus->wait_for_shard_operations, 'Citus dropped the old placements on its own');
	ok(wait_guarded('dist'), "after a move ($mode), every placement is guarded and ready");
	is($w1->safe_psql('postgres', qq{
		SELECT count(*) FROM bloomguard_health WHERE relation::text = '$p->{shard}'}),
		'0', "the old placement's guard is gone with it ($mode)");
	is(missed(), 0, "no key written is answered absent after the move ($mode)");
}

# a split of a shard on worker 2 into two, one on each worker
{
	my ($p) = grep { $_->{node} == $w2 } $citus->placements('dist');
	my ($min, $max) = split /\|/, $c->safe_psql('postgres', qq{
		SELECT shardminvalue, shardmaxvalue FROM pg_dist_shard WHERE shardid = $p->{shardid}});
	my $mid = int(($min + $max) / 2);
	my $writer = start_writer();
	$c->safe_psql('postgres', sprintf(q{
		SELECT citus_split_shard_by_split_points(%d, ARRAY['%d'],
			ARRAY[(SELECT nodeid FROM pg_dist_node WHERE nodeport = %d),
			      (SELECT nodeid FROM pg_dist_node WHERE nodeport = %d)])},
		$p->{shardid}, $mid, $w1->port, $w2->port));
	write_more();
	stop_writer($writer);
	ok($citus->wait_for_shard_operations, 'Citus dropped the old placements on its own');
	ok(wait_guarded('dist'), 'after a split, every placement is guarded and ready');
	is(scalar(grep { $_->{shardid} == $p->{shardid} } $citus->placements('dist')), 0,
		'the split shard is gone');
	is($w2->safe_psql('postgres', qq{
		SELECT count(*) FROM bloomguard_health WHERE relation::text = '$p->{shard}'}),
		'0', "the split shard's guard is gone with it");
	is(missed(), 0, 'no key written is answered absent after the split');
}

# a third worker and a rebalance onto it
my $w3 = $citus->add_worker;
my $writer = start_writer();
$c->safe_psql('postgres', q{SELECT rebalance_table_shards('dist')});
write_more();
stop_writer($writer);
ok($citus->wait_for_shard_operations, 'Citus dropped the old placements on its own');
ok(scalar(grep { $_->{node} == $w3 } $citus->placements('dist')) > 0,
	'the rebalance moved shards to the new worker');
ok(wait_guarded('dist'), 'after a rebalance onto a new worker, every placement is guarded and ready');
ok(wait_guarded('ref'), 'the new worker got a guarded copy of the reference table');
is(missed(), 0, 'no key written is answered absent after the rebalance');
ok(absent_answers() >= 0.9 * 100 * scalar($citus->placements('dist')),
	'the placements answer absent for keys never written');

# a copy of a placement: a table with two placements of each shard
# (statement-based replication), one shard copied to the node without one
$c->safe_psql('postgres', q{
	SET citus.shard_replication_factor = 2;
	CREATE TABLE rep (id bigint PRIMARY KEY, v text);
	SELECT create_distributed_table('rep', 'id', shard_count := 2, colocate_with := 'none');
	INSERT INTO rep SELECT g, 'r' FROM generate_series(1, 3000) g;
	SELECT bloomguard_attach('rep');
});
ok(wait_guarded('rep'), 'every placement of a replicated table is guarded and ready');
{
	my @rp = $citus->placements('rep');
	my $sid = $rp[0]{shardid};
	my %has = map { $_->{node}->port => 1 } grep { $_->{shardid} == $sid } @rp;
	my ($from) = grep { $has{ $_->port } } $citus->workers;
	my ($to) = grep { !$has{ $_->port } } $citus->workers;
	$c->safe_psql('postgres', sprintf(q{
		SELECT citus_copy_shard_placement(%d, '%s', %d, '%s', %d, transfer_mode := 'block_writes')},
		$sid, $from->host, $from->port, $to->host, $to->port));
	$c->safe_psql('postgres', q{INSERT INTO rep SELECT g, 'r' FROM generate_series(3001, 3500) g});
	is(scalar(grep { $_->{shardid} == $sid } $citus->placements('rep')), 3, 'the shard has a third placement');
	ok(wait_guarded('rep'), 'after a copy, every placement is guarded and ready');
	is(join('', map { $_->{node}->safe_psql('postgres', qq{
		SELECT count(*) FROM $_->{shard} WHERE bloomguard_check('$_->{shard}', id) = 'absent'}) } $citus->placements('rep')),
		'0' x scalar($citus->placements('rep')), 'no placement of it misses a key');
}

# a tenant isolated to a shard of its own: a split into three
$writer = start_writer();
$c->safe_psql('postgres', q{
	SELECT isolate_tenant_to_new_shard('dist', 12345::bigint, shard_transfer_mode := 'force_logical')});
write_more();
stop_writer($writer);
ok($citus->wait_for_shard_operations, 'Citus dropped the old placements on its own');
ok(wait_guarded('dist'), 'after isolate_tenant_to_new_shard, every placement is guarded and ready');
is(missed(), 0, 'no key written is answered absent after the isolation');
is($c->safe_psql('postgres', q{SELECT count(*) FROM dist WHERE id >= 1000000}) > 0 ? 'yes' : 'no',
	'yes', 'the writers ran during the operations');

# undistributed: Citus makes a local table again, with the shell's
# trigger; the table is not guarded until attach adopts the trigger, and
# its shards' guards are gone with them.  Distributed again, with unsafe
# triggers on, its new shards are guarded by the pass
$c->safe_psql('postgres', q{SELECT undistribute_table('dist')});
is($c->safe_psql('postgres', q{
	SELECT state || ' ' || feed FROM bloomguard_health WHERE relation = 'dist'::regclass}),
	'unregistered in_place', 'an undistributed table keeps the trigger, unregistered');
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('dist')});
like($err, qr/adopting the existing trigger "bloomguard" of table "dist"/, 'attach adopts it');
is($c->safe_psql('postgres', q{
	SELECT count(*) FROM dist WHERE bloomguard_check('dist', id) = 'absent'}), '0',
	'the local table is guarded with every key');
foreach my $node ($citus->workers)
{
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 0 FROM bloomguard_health WHERE relation::text ~ '^dist_[0-9]+$'}),
		'no guard of the old shards is left on ' . $node->name);
}
$c->safe_psql('postgres', q{
	SET citus.enable_unsafe_triggers = on;
	SELECT create_distributed_table('dist', 'id', shard_count := 4, colocate_with := 'none');
});
ok(wait_guarded('dist'), 'distributed again, its shards are guarded and ready');
ok($c->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM bloomguard_guards WHERE relation = 'dist'::regclass}),
	'and the guard of its shell is gone');
is(missed(), 0, 'no key written is answered absent');

# a table guarded before it is distributed: create_distributed_table()
# (with unsafe triggers on, as Citus asks for a table with triggers)
# leaves the trigger on the shell; the pass removes the shell's own guard
# and guards the shards
$c->safe_psql('postgres', q{
	CREATE TABLE d (id bigint PRIMARY KEY, v text);
	INSERT INTO d SELECT x, 'd' FROM generate_series(1, 1000) x;
	SELECT bloomguard_attach('d');
	SET citus.enable_unsafe_triggers = on;
	SELECT create_distributed_table('d', 'id', shard_count := 4, colocate_with := 'none');
	INSERT INTO d VALUES (2000, 'd');
});
ok(wait_guarded('d'), 'a guarded table distributed: its shards are guarded and ready');
ok($c->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM bloomguard_guards WHERE relation = 'd'::regclass}),
	'and the guard of its shell is gone');
is(join('', map { $_->{node}->safe_psql('postgres', qq{
	SELECT count(*) FROM $_->{shard} WHERE NOT guarded_exists('$_->{shard}', id)}) } $citus->placements('d')),
	'0' x scalar($citus->placements('d')), 'its shards find every key');

# a placement's guard is the shell's: detach on its node is refused
{
	my ($p) = $citus->placements('dist');
	($ret, $out, $err) = $p->{node}->psql('postgres', qq{SELECT bloomguard_detach('$p->{shard}')});
	like($err, qr/shard "$p->{shard}" is guarded as part of Citus table "dist"/,
		'detach of one placement is refused');
}
($ret, $out, $err) = $c->psql('postgres', q{BEGIN; SELECT bloomguard_rebuild('dist'); COMMIT;});
like($err, qr/bloomguard_rebuild\(\) of a Citus table cannot run inside a transaction block/,
	'a rebuild of the distributed table in a transaction block is refused');

# detach on the coordinator: the trigger goes from every shell and shard
# in the same distributed transaction, the guards at the next pass
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_detach('dist')});
like($err, qr/dropping the trigger "bloomguard" of Citus table "dist" and its copies on every shard/,
	'detach of the shell says what it drops');
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM pg_trigger WHERE tgrelid::regclass::text ~ '^dist(_[0-9]+)?$' AND tgfoid = 'bloomguard_trigger'::regproc})),
	'0 0 0 0', 'no trigger of dist is left on any node');
foreach my $node ($citus->nodes)
{
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 0 FROM bloomguard_health WHERE relation::text ~ '^dist_[0-9]+$'}),
		'and no guard of its shards on ' . $node->name);
}
is(missed(0), 0, 'lookups are still right');
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_rebuild('dist')});
like($err, qr/Citus table "dist" is not guarded/, 'a rebuild after detach is refused');

# the worker stopped above: Citus's maintenance daemons on the other
# nodes had connections to it, and say so when it ends them, and when
# they cannot connect to it meanwhile
my $w2port = $w2->port;
$citus->check_logs(
	qr/Citus Maintenance Daemon: .*WARNING:  (terminating connection due to administrator command|could not issue cancel request)/,
	qr/Citus Maintenance Daemon: .*WARNING:  connection to .*(:$w2port failed|\.s\.PGSQL\.$w2port" failed)/);
$citus->stop;
done_testing();
