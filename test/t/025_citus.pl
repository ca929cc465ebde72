# Citus: a coordinator and two workers (test/lib/BloomGuard/Citus.pm),
# Citus built by test/citus-build.sh.  The tables Citus manages are empty
# shells whose rows are in shards (src/tablekind.c): bloomguard never
# guards, probes or trusts a shell, guarded_exists() answers for it as
# EXISTS does, on the coordinator and on a worker, attach refuses a
# citus-local shell before it creates anything, with
# citus.enable_unsafe_triggers on and off, and the health view never
# advises adopting a shell's trigger; the shard of a guarded table made
# citus-local keeps its guard under the trigger Citus renamed.  The shards themselves are ordinary tables and stay guardable;
# and Citus's local copies into them (CopyFrom() called directly, for the
# shards on the coordinator) keep the trust rule (src/statement.c).
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

# shards on the coordinator too, for the local copies below
my $citus = BloomGuard::Citus->new(workers => 2, coordinator_shards => 1);
my $c = $citus->coordinator;
my @nodes = $citus->nodes;
my @names = ('coordinator', map { "worker $_" } 1 .. scalar($citus->workers));

# a distributed table, a reference table and a citus-local table
$c->safe_psql('postgres', q{
	CREATE TABLE acc (id bigint PRIMARY KEY, v text);
	SELECT create_distributed_table('acc', 'id', shard_count := 6, colocate_with := 'none');
	INSERT INTO acc SELECT g, 'a' FROM generate_series(1, 2000) g;
	CREATE TABLE ref (id int PRIMARY KEY, v text);
	SELECT create_reference_table('ref');
	INSERT INTO ref SELECT g, 'r' FROM generate_series(1, 500) g;
	CREATE TABLE loc (id int PRIMARY KEY, v text);
	INSERT INTO loc SELECT g, 'l' FROM generate_series(1, 500) g;
	SELECT citus_add_local_table_to_metadata('loc');
});
is($c->safe_psql('postgres', q{
	SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'acc'::regclass}),
	'3', 'the distributed table has shards on the coordinator and both workers');

# guarded_exists() on a shell answers as EXISTS, on every node: present
# keys (on the coordinator's shards and the workers'), absent ones
my @keys = (1, 42, 777, 1999, 2000, 2001, 123456);
foreach my $i (0 .. $#nodes)
{
	my $node = $nodes[$i];
	foreach my $t ([ 'acc', 'bigint' ], [ 'ref', 'int' ], [ 'loc', 'int' ])
	{
		my ($table, $type) = @$t;
		next if $table eq 'loc' && $i > 0;	# a citus-local table is the coordinator's
		# one call per statement: a call beside a query on the shell would
		# be sent to a shard with it
		my $got = $node->safe_psql('postgres',
			join '', map { "SELECT guarded_exists('$table', ${_}::$type);\n" } @keys);
		my $want = $node->safe_psql('postgres',
			join '', map { "SELECT EXISTS (SELECT 1 FROM $table WHERE id = $_);\n" } @keys);
		is($got, $want, "$names[$i]: guarded_exists('$table', k) is EXISTS");
	}
	is($node->safe_psql('postgres', q{SELECT bloomguard_check('acc', 42::bigint)}),
		'unknown', "$names[$i]: bloomguard_check() on a shell says unknown");
}

# attach refuses a citus-local shell, with unsafe triggers on and off,
# before it creates anything on any node (distributed and reference
# tables are guarded through their shards: 027_citus_shards.pl)
foreach my $unsafe ('off', 'on')
{
	foreach my $t ([ 'loc', 'local' ])
	{
		my ($table, $kind) = @$t;
		my ($ret, $out, $err) = $c->psql('postgres', qq{
			SET citus.enable_unsafe_triggers = $unsafe;
			SELECT bloomguard_attach('$table')});
		like($err, qr/cannot guard table "$table" because its rows are not in it.*DETAIL:  Table "$table" is a Citus $kind table: .*HINT:  Guard its shards instead/s,
			"attach of the $kind table refused (citus.enable_unsafe_triggers = $unsafe)");
	}
}
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM pg_trigger WHERE tgname ~ '^bloomguard'}), $citus->safe_psql_all(q{
	SELECT count(*) FROM bloomguard_guards})),
	'0 0 0 0 0 0', 'no trigger and no guard on any node, shell or shard');

# a shard stays guardable: guard acc's shard on worker 1, from there
my ($shard) = grep { $_->{node} == ($citus->workers)[0] } $citus->placements('acc');
my $w1 = ($citus->workers)[0];
$w1->safe_psql('postgres', "SELECT bloomguard_attach('$shard->{shard}')");
is($w1->safe_psql('postgres', qq{
	SELECT state FROM bloomguard_health WHERE relation = '$shard->{shard}'::regclass}),
	'ready', 'a shard is guarded like any table');
is($w1->safe_psql('postgres', qq{
	SELECT count(*) FROM $shard->{shard} WHERE NOT guarded_exists('$shard->{shard}', id)}),
	'0', 'the guarded shard finds every key it holds');

# Citus's columnar access method: not the heap, never guarded; lookups
# read the table
$c->safe_psql('postgres', q{
	CREATE EXTENSION IF NOT EXISTS citus_columnar;
	CREATE TABLE col (id bigint PRIMARY KEY, v text) USING columnar;
	INSERT INTO col SELECT g, 'c' FROM generate_series(1, 300) g;
});
my ($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('col')});
like($err, qr/only the heap table access method is supported/, 'a columnar table is not guarded');
is($c->safe_psql('postgres', q{
	SELECT guarded_exists('col', 42::bigint)::text || guarded_exists('col', 420::bigint)::text}),
	'truefalse', 'guarded_exists() on a columnar table reads it');

# a guarded table made citus-local: Citus renames it to a shard, with its
# trigger, and puts a trigger named bloomguard on the new, empty shell.
# The shell is reported as unsupported, never as a trigger to adopt, and
# its lookups answer as EXISTS
$c->safe_psql('postgres', q{
	CREATE TABLE g (id bigint PRIMARY KEY, v text);
	INSERT INTO g SELECT x, 'g' FROM generate_series(1, 1000) x;
	SELECT bloomguard_attach('g');
	SELECT citus_add_local_table_to_metadata('g');
});
is($c->safe_psql('postgres', q{
	SELECT state || ' ' || feed FROM bloomguard_health WHERE relation = 'g'::regclass}),
	'unsupported in_place', 'the shell of a guarded table made citus-local is unsupported');
like($c->safe_psql('postgres', q{
	SELECT last_error FROM bloomguard_health WHERE relation = 'g'::regclass}),
	qr/^Table "g" is a Citus local table: its rows are in its shard on the coordinator/,
	'the health view says where its rows are');
is($c->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_health WHERE advice ~ 'adopt'}),
	'0', 'no row of the health view advises adopting a trigger');
is($c->safe_psql('postgres', join '', map { "SELECT guarded_exists('g', ${_}::bigint);\n" } (5, 1000, 1001)),
	"t\nt\nf", 'guarded_exists() on the citus-local shell answers as EXISTS');
($ret, $out, $err) = $c->psql('postgres', q{SELECT bloomguard_attach('g')});
like($err, qr/because its rows are not in it/, 'following the old advice is refused');
# the original table, now the shard, keeps its guard: Citus renamed its
# trigger, which is still known as the feed (by its function), and the
# rename untrusted the filter until the maintenance pass rebuilt it
my ($gshard) = map { $_->{shard} } $citus->placements('g');
is($c->safe_psql('postgres', qq{
	SELECT tgname ~ '^bloomguard_[0-9]+\$' FROM pg_trigger WHERE tgrelid = '$gshard'::regclass}),
	't', "Citus renamed the shard's trigger");
$c->safe_psql('postgres', qq{SELECT bloomguard_rebuild('$gshard')});
is($c->safe_psql('postgres', qq{
	SELECT state || ' ' || feed FROM bloomguard_health WHERE relation = '$gshard'::regclass}),
	'ready in_place', 'the shard of the citus-local table is guarded under the renamed trigger');
is($c->safe_psql('postgres', qq{
	SELECT count(*) FROM $gshard WHERE bloomguard_check('$gshard', id) = 'absent'}),
	'0', 'and its filter has every key');
is($c->safe_psql('postgres', qq{SELECT bloomguard_check('$gshard', -1::bigint)}),
	'absent', 'and answers absent for a key never written');

# Citus's local copies: in a transaction block, a COPY into a distributed
# table (and an INSERT ... SELECT Citus pulls to the coordinator) writes
# the rows of the coordinator's shards with CopyFrom() called directly,
# which passes none of bloomguard's hooks.  A trigger on that shard that
# looks up a row the same COPY wrote before must find it: no filter may be
# trusted while its key waits for the end of the copy.
my ($local) = grep { $_->{node} == $c } $citus->placements('acc');
$c->safe_psql('postgres', qq{
	SELECT bloomguard_attach('$local->{shard}');
	CREATE FUNCTION must_exist(t regclass, x bigint) RETURNS bool LANGUAGE plpgsql AS \$\$
	BEGIN
		IF NOT guarded_exists(t, x) THEN
			RAISE EXCEPTION 'row % of % is missing', x, t;
		END IF;
		RETURN true;
	END \$\$;
	CREATE FUNCTION check_prev() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN
		IF NEW.id = current_setting('test.second')::bigint THEN
			PERFORM must_exist(TG_RELID::regclass, current_setting('test.first')::bigint);
		END IF;
		RETURN NEW;
	END \$\$;
	SET citus.enable_manual_changes_to_shards = on;
	CREATE TRIGGER check_prev BEFORE INSERT ON $local->{shard}
		FOR EACH ROW EXECUTE FUNCTION check_prev();
});
is($c->safe_psql('postgres', qq{
	SELECT state FROM bloomguard_health WHERE relation = '$local->{shard}'::regclass}),
	'ready', "the coordinator's shard $local->{shard} is guarded");
# pairs of new keys in that shard
my @pairs = map { [ split /,/ ] } split /\n/, $c->safe_psql('postgres', qq{
	WITH k AS (SELECT g, row_number() OVER (ORDER BY g) AS n FROM generate_series(100000, 101000) g
	            WHERE get_shard_id_for_distribution_column('acc', g::bigint) = $local->{shardid})
	SELECT a.g || ',' || b.g FROM k a JOIN k b ON b.n = a.n + 1 WHERE a.n IN (1, 3) ORDER BY a.n});
my ($first, $second) = @{ $pairs[0] };
($ret, $out, $err) = $c->psql('postgres', qq{
	SET test.first = $first;
	SET test.second = $second;
	SET citus.log_local_commands = on;
	BEGIN;
	COPY acc FROM STDIN;
$first	c
$second	c
\\.
	COMMIT;
});
like($err, qr/executing the copy locally for shard $local->{shardid}/, 'the COPY was a local copy');
unlike($err, qr/is missing/, 'a row of a COPY into the shell is found during the COPY');
($first, $second) = @{ $pairs[1] };
($ret, $out, $err) = $c->psql('postgres', qq{
	SET test.first = $first;
	SET test.second = $second;
	SET citus.log_local_commands = on;
	BEGIN;
	INSERT INTO acc SELECT g, 'i' FROM unnest(ARRAY[$first, $second]::bigint[]) g;
	COMMIT;
});
like($err, qr/executing the copy locally for shard $local->{shardid}/,
	'the INSERT ... SELECT was a local copy');
unlike($err, qr/is missing/, 'a row of an INSERT ... SELECT pulled to the coordinator is found');
is($c->safe_psql('postgres', qq{
	SELECT count(*) FROM acc WHERE id >= 100000}), '4', 'every row was written');
# the shard's guard answers again afterwards, and missed no key
is($c->safe_psql('postgres', qq{
	SELECT count(*) FROM $local->{shard} WHERE NOT guarded_exists('$local->{shard}', id)}),
	'0', "no key of the coordinator's shard is missing from its filter");
is($c->safe_psql('postgres', qq{
	SELECT bloomguard_check('$local->{shard}', -1::bigint)}),
	'absent', 'the shard\'s filter is trusted again after the copies');

# lookups over a distributed table's own rows: Citus sends the call to
# the shards with the query, where guarded_exists() would run a
# distributed query inside a task (Citus refuses it); with the keys in a
# MATERIALIZED CTE, Citus's subplan, the calls run on the coordinator
($ret, $out, $err) = $c->psql('postgres', q{SELECT count(*) FROM acc WHERE guarded_exists('acc', id)});
like($err, qr/cannot execute a distributed query from a query on a shard/,
	'guarded_exists() pushed down with a query of the shell is refused by Citus');
is($c->safe_psql('postgres', q{
	WITH k AS MATERIALIZED (SELECT id FROM acc WHERE id <= 100)
	SELECT count(*) FILTER (WHERE guarded_exists('acc', k.id)) || ' '
	       || count(*) FILTER (WHERE bloomguard_check('acc', k.id) IN ('maybe', 'unknown')) FROM k}),
	'100 100', 'with the keys in a MATERIALIZED CTE, both answer on the coordinator');

# Citus's deferred drop of a moved shard's old placement, at its default
# interval (citus.defer_shard_delete_interval, 15 s): the maintenance
# daemon drops it with lock_timeout 1s, so a session that holds a lock on
# the old placement (an open transaction that read it) postpones the
# drop, and with it the release of the placement's guard, until the lock
# is gone; then the next round drops both, with no manual cleanup.
{
	my $w2 = ($citus->workers)[1];
	$c->safe_psql('postgres', q{
		CREATE TABLE mv (id bigint PRIMARY KEY, v text);
		SELECT create_distributed_table('mv', 'id', shard_count := 3, colocate_with := 'none');
		INSERT INTO mv SELECT g, 'm' FROM generate_series(1, 3000) g;
		SELECT bloomguard_attach('mv');
	});
	my ($p) = grep { $_->{node} == $w1 } $citus->placements('mv');
	ok($w1->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM bloomguard_health WHERE relation::text = '$p->{shard}' AND state = 'ready'}),
		"the placement $p->{shard} on worker 1 is guarded");
	my $reader = $w1->background_psql('postgres');
	$reader->query_safe("BEGIN; SELECT count(*) FROM $p->{shard};");
	$c->safe_psql('postgres', sprintf(q{
		SELECT citus_move_shard_placement(%d, '%s', %d, '%s', %d, shard_transfer_mode := 'force_logical')},
		$p->{shardid}, $w1->host, $w1->port, $w2->host, $w2->port));
	sleep 20;	# more than one interval
	is($w1->safe_psql('postgres', qq{
		SELECT (to_regclass('$p->{shard}') IS NOT NULL)::text || ' '
		       || (SELECT count(*) FROM bloomguard_health WHERE relation::text = '$p->{shard}')}),
		'true 1', 'while a session holds a lock on the old placement, Citus does not drop it, and its guard stays');
	is($c->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_dist_cleanup}), 't',
		'the drop waits in pg_dist_cleanup');
	$reader->query_safe('COMMIT');
	$reader->quit;
	ok($c->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_dist_cleanup}),
		'once the lock is gone, the maintenance daemon drops it on its own');
	ok($w1->poll_query_until('postgres', qq{
		SELECT to_regclass('$p->{shard}') IS NULL
		   AND count(*) = 0 FROM bloomguard_health WHERE relation::text = '$p->{shard}'}),
		"and the old placement's guard is gone with it");
}

# the maintenance daemon's warnings about the drop it could not do while
# the lock was held (above)
$citus->check_logs(
	qr/Citus Maintenance Daemon: .*WARNING:  failed to clean up \d+ orphaned resources out of \d+/,
	qr/Citus Maintenance Daemon: .*WARNING:  canceling statement due to lock timeout/);
$citus->stop;
done_testing();
