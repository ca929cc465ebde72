# Citus: a partitioned distributed table guarded from the coordinator.
# Each partition of a distributed partitioned table is a distributed table
# of its own, colocated with the parent; on a worker, the parent's shard is
# a partitioned table whose partitions are the partitions' shards, and the
# feed trigger Citus puts on the parent's shard is cloned by PostgreSQL
# onto them.  Attach of the parent must end with every leaf shard guarded
# and ready, and the keys found through every path; the distributed health
# view lists the partitions, not the partitioned table, which has no
# filter anywhere; a partition added later, a shard move of the colocation
# group and a rebuild of the parent are followed; detach undoes it all.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use BloomGuard::Citus;

if (my $why = bg_citus_skip_reason())
{
	plan skip_all => $why;
}

my $citus = BloomGuard::Citus->new(workers => 2, name => 'cpart',
	extra => "bloomguard.maintenance_interval = 1\ncitus.defer_shard_delete_interval = 1000\n");
my $c = $citus->coordinator;

$c->safe_psql('postgres', q{
	CREATE TABLE pd (id bigint, part int, v text, PRIMARY KEY (id, part)) PARTITION BY LIST (part);
	CREATE TABLE pd_1 PARTITION OF pd FOR VALUES IN (1);
	CREATE TABLE pd_2 PARTITION OF pd FOR VALUES IN (2);
	SELECT create_distributed_table('pd', 'id', shard_count := 2, colocate_with := 'none');
	INSERT INTO pd SELECT g, 1 + g % 2, 'a' FROM generate_series(1, 4000) g;
});
my $next = 4001;    # the next key to write; every key below it is in pd

# Write 100 rows more, through the coordinator, into partition $part.
sub write_more
{
	my ($part) = @_;
	$c->safe_psql('postgres', qq{
		INSERT INTO pd SELECT g, $part, 'w' FROM generate_series($next, $next + 99) g});
	$next += 100;
	return;
}

# The leaf placements of the partitions of pd, as $citus->placements gives.
sub leaf_placements
{
	my @parts = split /\n/, $c->safe_psql('postgres', q{
		SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'pd'::regclass ORDER BY 1});
	return map { $citus->placements($_) } @parts;
}

# Wait until every leaf placement on every node is guarded and ready, as
# a leaf of its partitioned shard, and the nodes hold no other guard of pd.
sub wait_guarded
{
	my %want;
	$want{ $_->{node}->name }++ for leaf_placements();
	foreach my $node ($citus->nodes)
	{
		my $n = $want{ $node->name } // 0;
		$node->poll_query_until('postgres', qq{
			SELECT count(*) FILTER (WHERE state = 'ready' AND parent::text ~ '^pd_[0-9]+\$') = $n
			       AND count(*) = $n
			  FROM bloomguard_health WHERE relation::text ~ '^pd_[0-9]+_[0-9]+\$'})
		  or return 0;
	}
	return 1;
}

# The keys written that are answered absent: on the coordinator, every row
# through guarded_exists() (the CTE's rows come back to the coordinator,
# and Citus routes each call's query to the key's shard) and a sample
# through bloomguard_check(), which asks the partitioned shard on its node;
# on each node, every row of each leaf shard through its own guard.
sub missed
{
	my $missed = $c->safe_psql('postgres', q{
		WITH w AS MATERIALIZED (SELECT id, part FROM pd)
		SELECT count(*) FROM w WHERE NOT guarded_exists('pd', w.id, w.part)});
	$missed += ($next - 1) - $c->safe_psql('postgres', q{SELECT count(*) FROM pd});
	my @sample = split /\n/, $c->safe_psql('postgres',
		q{SELECT id || ',' || part FROM pd ORDER BY random() LIMIT 40});
	$missed += grep { $_ eq 'absent' } split /\n/, $c->safe_psql('postgres',
		join '', map { my ($i, $p) = split /,/; "SELECT bloomguard_check('pd', ${i}::bigint, $p);\n" } @sample);
	foreach my $p (leaf_placements())
	{
		$missed += $p->{node}->safe_psql('postgres', qq{
			SELECT count(*) FROM $p->{shard}
			 WHERE bloomguard_check('$p->{shard}', id, part) = 'absent' OR NOT guarded_exists('$p->{shard}', id, part)});
	}
	return $missed;
}

# How many of 100 absent keys of partition $part the coordinator's
# bloomguard_check() answers 'absent' (the shards' guards are used).
sub absent_answers
{
	my ($part) = @_;
	return scalar grep { $_ eq 'absent' } split /\n/, $c->safe_psql('postgres',
		join '', map { "SELECT bloomguard_check('pd', -${_}::bigint, $part);\n" } 1 .. 100);
}

my ($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('pd')});
is($ret, 0, 'attach of a partitioned distributed table succeeds');
like($err, qr/the shards of Citus table "pd" will be guarded by the node that holds each of them/,
	'and says how its shards are guarded');
is(join(' ', map { $_->safe_psql('postgres', q{
	SELECT count(*) FROM pg_trigger WHERE tgrelid::regclass::text ~ '^pd_[0-9]+_[0-9]+$' AND tgfoid = 'bloomguard_trigger'::regproc})
	} $citus->workers), '2 2', 'each leaf shard has the feed trigger (a clone of its partitioned shard\'s)');
ok(wait_guarded(), 'every leaf placement is guarded and ready, as a leaf of its partitioned shard');
write_more(1);
write_more(2);
is(missed(), 0, 'no key written is answered absent');
ok(absent_answers(1) > 90, "the coordinator's bloomguard_check() answers 'absent' for absent keys");
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM bloomguard_health WHERE relation::text ~ '^pd(_[0-9]+)?$' AND state <> 'unsupported'})),
	'0 0 0', 'no node has a filter of a partitioned shard or of a shell');

# the distributed view: the partitions' placements, nothing of pd itself
is($c->safe_psql('postgres', q{
	SELECT string_agg(relation || ':' || coalesce(shardid::text, 'table') || ':' || status, ' ' ORDER BY relation, shardid NULLS FIRST)
	  FROM bloomguard_distributed_health WHERE relation::text ~ '^pd'}),
	join(' ', map { my $r = $_; ("$r:table:HEALTHY",
		map { "$r:$_->{shardid}:HEALTHY" } $citus->placements($r)) } 'pd_1', 'pd_2'),
	'the distributed view lists each partition and its placements, all HEALTHY, and not the partitioned table');

# a partition made after the attach: Citus distributes it, PostgreSQL
# clones the trigger onto its shards, and the nodes guard them
$c->safe_psql('postgres', q{CREATE TABLE pd_3 PARTITION OF pd FOR VALUES IN (3)});
write_more(3);
ok(wait_guarded(), 'the shards of a partition made later are guarded and ready');
write_more(3);
is(missed(), 0, 'no key written is answered absent (with the new partition)');
ok(absent_answers(3) > 90, "the new partition's guards answer 'absent' for absent keys");

# a move of one shard group: the partitioned shard and its partitions'
# shards go together, the new placements are guarded and the old ones'
# guards go with them
my ($w1, $w2) = $citus->workers;
my ($moved) = grep { $_->{node} == $w1 } $citus->placements('pd');
# the shards of its group on w1 (Citus hides shards from queries of
# pg_class, not from to_regclass())
my @group = map { $_->{shard} } grep { $_->{node} == $w1 } map { $citus->placements($_) } 'pd', 'pd_1', 'pd_2', 'pd_3';
is(scalar(@group), 4, 'the first worker holds a partitioned shard and its three partitions\' shards');
is($w1->safe_psql('postgres', join ' UNION ALL ', map { "SELECT count(to_regclass('$_'))" } @group),
	join("\n", (1) x 4), 'to_regclass() finds them there');
$c->safe_psql('postgres', qq{
	SELECT citus_move_shard_placement($moved->{shardid}, '@{[$w1->host]}', @{[$w1->port]},
	       '@{[$w2->host]}', @{[$w2->port]}, shard_transfer_mode := 'block_writes')});
$citus->wait_for_shard_operations;
is($w1->safe_psql('postgres', join ' UNION ALL ', map { "SELECT count(to_regclass('$_'))" } @group),
	join("\n", (0) x 4), 'the moved shards left the first worker');
ok(wait_guarded(), 'after the move, every leaf placement is guarded and ready');
write_more(1);
write_more(2);
is(missed(), 0, 'no key written is answered absent after the move');
is($w1->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_guards}), '0',
	'no guard is left on the worker the shards left');

# a rebuild of the partitioned shell rebuilds every partitioned shard,
# and so every leaf
my $gens = q{SELECT string_agg(relation || '=' || built_at, ';' ORDER BY relation::text)
	FROM bloomguard_health WHERE state = 'ready'};
my $before = $w2->safe_psql('postgres', $gens);
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_rebuild('pd')});
is($ret, 0, 'a rebuild of the partitioned distributed table succeeds');
is($err, '', 'and says nothing');
my %old = map { split /=/, $_, 2 } split /;/, $before;
my %new = map { split /=/, $_, 2 } split /;/, $w2->safe_psql('postgres', $gens);
is(scalar(keys %new), 6, 'the worker holding both shard groups guards their six leaves');
is(join(' ', grep { !defined $old{$_} || $old{$_} eq $new{$_} } sort keys %new), '',
	'and each of them was built again');
is(missed(), 0, 'no key written is answered absent after the rebuild');

# a partition's guard is a clone of pd's: detach of it alone is refused,
# on the coordinator and on a worker's leaf shard, naming pd
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_detach('pd_1')});
isnt($ret, 0, 'detach of one partition of the guarded partitioned table is refused');
like($err, qr/partition "pd_1" is guarded as part of Citus table "pd".*HINT:  Detach the guard of "pd", or detach the partition from it/s,
	'the error names the partitioned table, and says nothing else was done');
my ($leaf) = map { $_->{shard} } grep { $_->{node} == $w2 } $citus->placements('pd_1');
($ret, $out, $err) = $w2->psql('postgres', qq{SELECT bloomguard_detach('$leaf')});
like($err, qr/shard "\Q$leaf\E" is guarded as part of Citus table "pd".*HINT:  Detach the guard of "pd" on the coordinator/s,
	"on a worker, detach of a leaf shard is refused, naming the partitioned table");

# the clone's link is PostgreSQL's (tgparentid): with pd's trigger
# disabled, so that its feed is not in place, the refusal still names pd
($ret, $out, $err) = $c->psql('postgres', q{
	BEGIN;
	SET LOCAL citus.enable_unsafe_triggers = on;
	ALTER TABLE pd DISABLE TRIGGER bloomguard;
	SELECT bloomguard_detach('pd_1');
	ROLLBACK});
like($err, qr/partition "pd_1" is guarded as part of Citus table "pd"/,
	"detach of a partition is refused, naming pd, while pd's trigger is disabled");
unlike($err, qr/ERROR:(?!.*partition "pd_1" is guarded)/,
	'and nothing else failed first');

# detach: the trigger and its clones go everywhere, and so do the guards
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_detach('pd')});
is($ret, 0, 'detach of the partitioned distributed table succeeds');
is(join(' ', $citus->safe_psql_all(q{SELECT count(*) FROM pg_trigger WHERE tgfoid = 'bloomguard_trigger'::regproc})),
	'0 0 0', 'no feed trigger is left on any node');
foreach my $node ($citus->nodes)
{
	ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM bloomguard_guards}),
		$node->name . ': no guard is left');
}
is($c->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_distributed_health}), '0',
	'the distributed view is empty');
is($c->safe_psql('postgres', q{
	WITH w AS MATERIALIZED (SELECT id, part FROM pd)
	SELECT count(*) FILTER (WHERE NOT guarded_exists('pd', w.id, w.part)) FROM w}), '0',
	'unguarded, every key is still found');

$citus->check_logs;
$citus->stop;
done_testing();
