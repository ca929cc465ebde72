# Concurrent adders must never lose a bit.
#
# Several pgbench clients insert distinct keys into a guarded table at the
# same time, so their triggers set bits in the same filter words
# concurrently.  A lost bit (a plain "|=" racing with another backend) is a
# false negative: a committed key the filter calls 'absent', which
# guarded_exists would then deny.  The filter is sized so that it is about
# half full at the end: small enough that adders collide on words, not so
# full that a lost bit would be masked by other keys' bits.
#
# Every transaction also re-checks, right after its own commit, the keys of
# its id range (its own and other clients' committed keys), and fails (a
# cast of 'bad keys: N' to int) if one is 'absent' or not found; a failed
# transaction fails pgbench.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use Time::HiRes qw(time);

my $clients = 8;
my $per_client = 400;      # transactions per client
my $rows_per_tx = 20;
my $nkeys = $clients * $per_client * $rows_per_tx;    # 64000

my $node = bg_node('bit_race', qq{
max_connections = 30
# no rebuilds but the test's own
bloomguard.background_worker = off
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE SEQUENCE s1;
	CREATE TABLE t1 (id bigint PRIMARY KEY DEFAULT nextval('s1'), v int);
	CREATE SEQUENCE s2;
	CREATE TABLE t2 (a int, b text, n bigint NOT NULL, PRIMARY KEY (a, b));
	CREATE INDEX ON t2 (n);
});

# capacity = the number of keys, error rate 0.3: about 2,500 64-bit words,
# two bits per key, about 50% of the bits set at the end.
$node->safe_psql('postgres', qq{SELECT bloomguard_attach('t1', $nkeys, 0.3)});
$node->safe_psql('postgres', qq{SELECT bloomguard_attach('t2', $nkeys, 0.3)});

is($node->safe_psql('postgres',
	q{SELECT string_agg(relation || ':' || state || ':' || generation, ',' ORDER BY relation::text) FROM bloomguard_health}),
	't1:ready:1,t2:ready:1', 'both guards ready before the race');

# Run one race: pgbench with the given script, then check every key.
sub race
{
	my ($table, $script, $keyexpr, $absentexpr) = @_;

	my $t0 = time;
	$node->pgbench(
		"-n -M prepared -c $clients -j 2 -t $per_client",
		0,
		[
			qr{number of transactions actually processed: @{[$clients * $per_client]}/@{[$clients * $per_client]}},
			qr{number of failed transactions: 0 }
		],
		[qr{^$}],
		"$table: concurrent inserts with read-back, no failed transaction",
		{ "001_bit_race_$table" => $script });
	note sprintf("%s: pgbench took %.1f s", $table, time - $t0);

	is($node->safe_psql('postgres', "SELECT count(*) FROM $table"),
		$nkeys, "$table: all $nkeys keys committed");

	is($node->safe_psql('postgres',
		"SELECT count(*) FROM $table WHERE bloomguard_check('$table', $keyexpr) = 'absent'"),
		'0', "$table: no committed key is 'absent'");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM $table WHERE bloomguard_check('$table', $keyexpr) IS DISTINCT FROM 'maybe'"),
		'0', "$table: every committed key is 'maybe'");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM $table WHERE guarded_exists('$table', $keyexpr) IS NOT TRUE"),
		'0', "$table: guarded_exists is true for every committed key");

	# every trigger call added exactly one key, to the one serving filter
	my ($state, $gen, $n_added, $fill) = split /\|/, $node->safe_psql('postgres',
		"SELECT state, generation, n_added, fill FROM bloomguard_health WHERE relation = '$table'::regclass");
	is($state, 'ready', "$table: still ready");
	is($gen, '1', "$table: no rebuild happened");
	is($n_added, $nkeys, "$table: n_added counts every insert exactly once");
	note "$table: fill after the race: $fill";
	ok($fill > 0.2 && $fill < 0.8,
		"$table: filter neither nearly empty nor saturated (a lost bit would show)");

	# keys never inserted: false from guarded_exists, mostly 'absent'
	my ($exists, $absent) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE guarded_exists('$table', $absentexpr)),
		       count(*) FILTER (WHERE bloomguard_check('$table', $absentexpr) = 'absent')
		  FROM generate_series(1000001, 1010000) g});
	is($exists, '0', "$table: guarded_exists is false for 10000 absent keys");
	ok($absent > 6000, "$table: more than 6000 of 10000 absent keys are 'absent' ($absent)");
	return;
}

# single-column bigint key from a sequence default
race('t1', qq{
WITH ins AS (INSERT INTO t1 (v) SELECT :client_id FROM generate_series(1, $rows_per_tx) RETURNING id)
SELECT min(id) AS lo, max(id) AS hi FROM ins \\gset
SELECT (CASE WHEN count(*) = 0 THEN '1' ELSE 'bad keys: ' || count(*) END)::int AS ok FROM t1
 WHERE id BETWEEN :lo AND :hi
   AND (bloomguard_check('t1', id) = 'absent' OR NOT guarded_exists('t1', id));
SELECT (CASE WHEN guarded_exists('t1', :lo::bigint) AND guarded_exists('t1', :hi::bigint) THEN '1' ELSE 'own key not found' END)::int AS ok;
}, 'id', 'g::bigint');

# two-column key (int, text): the text column is hashed from its bytes
race('t2', qq{
WITH ins AS (INSERT INTO t2 (a, b, n)
             SELECT :client_id % 3, 'key-' || x, x
               FROM (SELECT nextval('s2') AS x FROM generate_series(1, $rows_per_tx)) s
             RETURNING n)
SELECT min(n) AS lo, max(n) AS hi FROM ins \\gset
SELECT (CASE WHEN count(*) = 0 THEN '1' ELSE 'bad keys: ' || count(*) END)::int AS ok FROM t2
 WHERE n BETWEEN :lo AND :hi
   AND (bloomguard_check('t2', a, b) = 'absent' OR NOT guarded_exists('t2', a, b));
}, 'a, b', "g % 3, 'key-' || g");

ok(!$node->log_contains('ERROR:  invalid input syntax for type integer'), 'no read-back check failed during the races');

$node->stop;
bg_check_log($node);
done_testing();
