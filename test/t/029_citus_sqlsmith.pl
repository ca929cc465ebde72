# Citus: SQLsmith's random queries (Debian's sqlsmith, queries that no one
# here wrote) through a coordinator whose distributed and reference tables
# are guarded on their shards, then from a worker (metadata is synced, so
# a worker runs distributed queries too).  Citus plans each of them and
# sends the shards' queries to the workers, where bloomguard's planner path
# and lookups meet shapes that Citus wrote.  It fails on a crash of any
# node; on an oracle's "bloomguard oracle:" error (guarded_exists() and a
# router query on the coordinator against a scan that no guard takes,
# through views that SQLsmith picks up); on any key of a table that the
# coordinator or a shard's own guard answers absent after the run
# (SQLsmith writes too, in transactions it rolls back); on a warning in a
# server log; and on a run that never reached a trusted filter on a
# worker, or never ran an oracle (the reach is counted: trusted asks and
# 'absent' answers summed over the workers' guards, the oracles' calls
# from pg_stat_user_functions on every node).
#
#   SQLSMITH_QUERIES=5000 SQLSMITH_SEED=42 prove test/t/029_citus_sqlsmith.pl
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
if (system('sqlsmith --version >/dev/null 2>&1') != 0)
{
	plan skip_all => 'sqlsmith is not installed (test/run-all.sh installs Debian\'s sqlsmith)';
}
my $queries = $ENV{SQLSMITH_QUERIES} // 1000;
my $seed = $ENV{SQLSMITH_SEED} // int(rand(1 << 30));
note("sqlsmith: $queries queries a node, seed $seed (rerun: SQLSMITH_SEED=$seed)");

my $citus = BloomGuard::Citus->new(workers => 2, name => 'csmith', extra => "track_functions = pl\n");
my $c = $citus->coordinator;
my ($w1, $w2) = $citus->workers;

# the tables: bigint, text and two-column keys distributed, an integer key
# in a reference table; 3000 rows each; the role SQLsmith runs as
$c->safe_psql('postgres', q{
	CREATE TABLE acc (id bigint PRIMARY KEY, v int NOT NULL DEFAULT 0, note text);
	SELECT create_distributed_table('acc', 'id', shard_count := 8);
	INSERT INTO acc SELECT g, g % 100, 'n' || g FROM generate_series(1, 3000) g;
	CREATE TABLE tk (k text PRIMARY KEY, v int);
	SELECT create_distributed_table('tk', 'k', shard_count := 4);
	INSERT INTO tk SELECT 'k' || g, g FROM generate_series(1, 3000) g;
	CREATE TABLE mt (tenant int, no int, v text, PRIMARY KEY (tenant, no));
	SELECT create_distributed_table('mt', 'tenant', shard_count := 4);
	INSERT INTO mt SELECT g % 10, g, 'm' FROM generate_series(1, 3000) g;
	CREATE TABLE rf (id int PRIMARY KEY, name text);
	SELECT create_reference_table('rf');
	INSERT INTO rf SELECT g, 'r' || g FROM generate_series(1, 3000) g;
	SELECT bloomguard_attach(t) FROM unnest(ARRAY['acc', 'tk', 'mt', 'rf']::regclass[]) t;
	CREATE ROLE smith LOGIN;
	GRANT SELECT, INSERT, UPDATE, DELETE ON acc, tk, mt, rf TO smith;
	ALTER ROLE smith SET statement_timeout = '2s';
});

# the oracle: guarded_exists() on the coordinator (Citus's shard of the
# key, asked through its guard) and a router query by the key (the shard's
# planner path) against a scan of every shard that no guard can take (a
# condition on an expression of the key), one a table; then views that
# call them for present, absent and NULL keys, and views of single keys
# for SQLsmith's own conditions to land on
foreach my $o (['acc', 'bigint', 'id', 'id + 0'], ['tk', 'text', 'k', q{k || ''}], ['rf', 'int', 'id', 'id + 0'])
{
	my ($t, $type, $col, $expr) = @$o;
	$c->safe_psql('postgres', qq{
	CREATE FUNCTION bg_oracle_$t(x $type) RETURNS boolean LANGUAGE plpgsql AS \$\$
	DECLARE g boolean; n bigint; truth bigint;
	BEGIN
		g := guarded_exists('$t', x);
		SELECT count(*) INTO n FROM $t WHERE $col = x;
		SELECT count(*) INTO truth FROM $t WHERE $expr = x;
		IF g IS DISTINCT FROM (truth > 0) OR n <> truth THEN
			RAISE EXCEPTION 'bloomguard oracle: $t key %: guarded_exists %, % rows by the key, % by a scan', x, g, n, truth;
		END IF;
		RETURN g;
	END \$\$});
}
$c->safe_psql('postgres', q{
	CREATE VIEW v_acc_oracle AS
	  SELECT g, bg_oracle_acc(CASE WHEN g % 7 <> 0 THEN g * 250 END) AS answer FROM generate_series(-12, 12) g;
	CREATE VIEW v_tk_oracle AS
	  SELECT g, bg_oracle_tk(CASE WHEN g % 7 <> 0 THEN 'k' || (g * 250) END) AS answer FROM generate_series(-12, 12) g;
	CREATE VIEW v_rf_oracle AS
	  SELECT g, bg_oracle_rf(CASE WHEN g % 7 <> 0 THEN g * 250 END) AS answer FROM generate_series(-12, 12) g;
	CREATE VIEW v_acc_hit AS SELECT * FROM acc WHERE id = 1234;
	CREATE VIEW v_acc_miss AS SELECT * FROM acc WHERE id = -1234;
	CREATE VIEW v_tk_miss AS SELECT * FROM tk WHERE k = 'absent';
	CREATE VIEW v_mt_miss AS SELECT * FROM mt WHERE tenant = 3 AND no = -3;
	CREATE VIEW v_rf_miss AS SELECT * FROM rf WHERE id = -99;
	GRANT SELECT ON v_acc_oracle, v_tk_oracle, v_rf_oracle, v_acc_hit, v_acc_miss, v_tk_miss, v_mt_miss, v_rf_miss TO smith;
	GRANT EXECUTE ON FUNCTION bg_oracle_acc(bigint), bg_oracle_tk(text), bg_oracle_rf(int) TO smith;
});

# every placement guarded and ready
sub wait_ready
{
	return $c->poll_query_until('postgres', q{
		SELECT count(*) FILTER (WHERE shardid IS NOT NULL AND status = 'HEALTHY') > 0
		       AND count(*) FILTER (WHERE status <> 'HEALTHY') = 0
		  FROM bloomguard_distributed_health});
}
ok(wait_ready(), 'every placement of the four tables is guarded and ready');

# trusted asks (shortcuts + source_lookups) and 'absent' answers, summed
# over a node's guards
sub reach
{
	my ($node) = @_;
	return split /\|/, $node->safe_psql('postgres', q{
		SELECT coalesce(sum(shortcuts + source_lookups), 0), coalesce(sum(shortcuts), 0) FROM bloomguard_health});
}

# The oracle's errors, as the server logs them (on any node: Citus runs
# the views' functions where the query is)
sub oracle_errors
{
	return scalar grep { /ERROR:  bloomguard oracle:/ }
	  map { split /\n/, slurp_file($_->logfile) } $citus->nodes;
}

# SQLsmith as smith against $node; returns its last report line
sub smith
{
	my ($node) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my $target = sprintf('host=%s port=%d dbname=postgres user=smith', $node->host, $node->port);
	my $errors_before = oracle_errors();
	my $rc = system(qq{sqlsmith --target="$target" --exclude-catalog --seed=$seed --max-queries=$queries --verbose --dump-all-queries >$dir/queries.sql 2>$dir/sqlsmith.out});
	my $out = slurp_file("$dir/sqlsmith.out");
	$out =~ s/\r/\n/g;
	my ($last) = reverse grep { /^queries: / } split /\n/, $out;
	my $oracle = oracle_errors() - $errors_before;
	note($node->name . ': sqlsmith exited with ' . ($rc >> 8) . '; ' . ($last // 'no report'));
	return ($last // '', $oracle, $out);
}

my @before = map { [ reach($_) ] } $w1, $w2;
foreach my $node ($c, $w1)
{
	my ($last, $oracle, $out) = smith($node);
	like($last, qr/^queries: \Q$queries\E\b/, $node->name . ": sqlsmith ran its $queries queries");
	is($oracle, 0, $node->name . ': no oracle error in any server log');
	foreach my $n ($citus->nodes)
	{
		is($n->safe_psql('postgres', 'SELECT 1'), '1', $n->name . ' is up after SQLsmith on ' . $node->name);
	}
}
my @after = map { [ reach($_) ] } $w1, $w2;
my $asks = $after[0][0] - $before[0][0] + $after[1][0] - $before[1][0];
my $absent = $after[0][1] - $before[0][1] + $after[1][1] - $before[1][1];
note("reach on the workers: $asks trusted asks, $absent answered absent");
my $oracle_calls = 0;
$oracle_calls += $_ for $citus->safe_psql_all(q{
	SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname LIKE 'bg\_oracle\_%'});
note("oracle calls: $oracle_calls");
ok($oracle_calls > 0, "SQLsmith's queries ran the oracles ($oracle_calls calls)");
ok($asks > 0, "SQLsmith's queries reached the workers' trusted filters ($asks asks, $absent absent)");

# no node restarted or crashed meanwhile
foreach my $n ($citus->nodes)
{
	my @crash = grep { /terminated by signal|was terminated by exception|server process .* exited with exit code [^01]/ }
	  split /\n/, slurp_file($n->logfile);
	is(scalar(@crash), 0, $n->name . ': no backend crashed') or diag(join "\n", @crash[0 .. ($#crash < 9 ? $#crash : 9)]);
}

# every key still in a table is found, by the coordinator and by the
# guard of its shard on its node
ok(wait_ready(), 'after the run, every placement is still guarded and ready');
my %key = (acc => 'id', tk => 'k', mt => 'tenant, no', rf => 'id');
my $missed = 0;
foreach my $t (sort keys %key)
{
	my $args = join ', ', map { "w.$_" } split /, /, $key{$t};
	$missed += $c->safe_psql('postgres', qq{
		WITH w AS MATERIALIZED (SELECT $key{$t} FROM $t)
		SELECT count(*) FROM w WHERE NOT guarded_exists('$t', $args)});
}
is($missed, 0, 'on the coordinator, no key of the four tables is answered absent');
my $shard_missed = 0;
foreach my $t (sort keys %key)
{
	foreach my $p ($citus->placements($t))
	{
		$shard_missed += $p->{node}->safe_psql('postgres', qq{
			SELECT count(*) FROM $p->{shard} WHERE bloomguard_check('$p->{shard}', $key{$t}) = 'absent'});
	}
}
is($shard_missed, 0, "on each node, no row of a shard is answered absent by the shard's guard");

# The warnings of SQLsmith's own sessions are the answers of the
# functions it called at random (Citus's own among them: "no ongoing
# rebalance that can be waited on"), and its ROLLBACK outside a
# transaction block at each start: allowed, unless they are bloomguard's.
# Every other process's warning fails the test.
foreach my $n ($citus->nodes)
{
	my $log = slurp_file($n->logfile);
	my %pids = map { $_ => 1 } $log =~ /\[(\d+)\] client backend: LOG:  statement: set application_name\s*(?:to\s*|=\s*)'sqlsmith::/gi;
	my $smith = join '|', sort keys %pids;
	my $allowed = $smith ne '' ? qr/\[(?:$smith)\] client backend: WARNING:  (?!.*bloomguard)/ : qr/^\z/;
	my $n_allowed = grep { /$allowed/ } split /\n/, $log;
	note($n->name . ": $n_allowed warnings of SQLsmith's " . scalar(keys %pids) . ' sessions allowed');
	bg_check_log($n, $allowed);
}
$citus->stop;
done_testing();
