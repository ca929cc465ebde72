# Citus: a coordinator and two workers (test/lib/BloomGuard/Citus.pm),
# Citus built by test/citus-build.sh.  The tables Citus manages are empty
# shells whose rows are in shards (src/tablekind.c): bloomguard never
# guards, probes or trusts a shell, guarded_exists() answers for it as
# EXISTS does, on the coordinator and on a worker, attach refuses every
# kind of shell before it creates anything, with citus.enable_unsafe_triggers
# on and off, and the health view never advises adopting a shell's
# trigger.  The shards themselves are ordinary tables and stay guardable;
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

# attach refuses every kind of shell, with unsafe triggers on and off,
# before it creates anything on any node
foreach my $unsafe ('off', 'on')
{
	foreach my $t ([ 'acc', 'distributed' ], [ 'ref', 'reference' ], [ 'loc', 'local' ])
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

# a guarded table distributed afterwards (Citus lets a table with
# triggers be distributed only with citus.enable_unsafe_triggers on): its
# rows are copied to the shards (the shell's own copy stays on disk, no
# longer visible to queries), and the guard left on the shell is
# unsupported, never trusted; lookups answer as EXISTS, for a row deleted
# and one inserted since
$c->safe_psql('postgres', q{
	CREATE TABLE d (id bigint PRIMARY KEY, v text);
	INSERT INTO d SELECT x, 'd' FROM generate_series(1, 1000) x;
	SELECT bloomguard_attach('d');
	SET citus.enable_unsafe_triggers = on;
	SELECT create_distributed_table('d', 'id', shard_count := 4, colocate_with := 'none');
	DELETE FROM d WHERE id = 5;
	INSERT INTO d VALUES (2000, 'd');
});
is($c->safe_psql('postgres', q{
	SELECT state FROM bloomguard_health WHERE relation = 'd'::regclass}),
	'unsupported', 'the guard left on a shell by create_distributed_table is unsupported');
is($c->safe_psql('postgres', join '', map { "SELECT guarded_exists('d', ${_}::bigint);\n" } (5, 6, 1001, 2000)),
	"f\nt\nf\nt", 'guarded_exists() on the distributed table answers as EXISTS');
is($c->safe_psql('postgres', q{SELECT bloomguard_check('d', 6::bigint)}),
	'unknown', 'bloomguard_check() on it says unknown');

# what the health view advises works: detach, with unsafe triggers off,
# removes the shell's guard and trigger and the copies Citus made on the
# shards
$c->safe_psql('postgres', q{SELECT bloomguard_detach('d')});
is(join(' ', $citus->safe_psql_all(q{
	SELECT count(*) FROM pg_trigger
	 WHERE tgname ~ '^bloomguard' AND tgrelid::regclass::text ~ '^d(_[0-9]+)?$'})),
	'0 0 0', 'detach removed the trigger from the shell and its shards, on every node');
is($c->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_health WHERE relation = 'd'::regclass}),
	'0', 'and the guard');

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

$citus->check_logs;
$citus->stop;
done_testing();
