# The background worker and commands that need a database to themselves
# (DROP DATABASE, ALTER DATABASE ... RENAME): the launcher sends no worker
# to a database without guards after its first pass, and a worker that is
# rebuilding a filter in a database someone wants to drop or rename leaves
# at once, so those commands succeed promptly.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time);
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('dbcmd', qq{
bloomguard.maintenance_interval = 1
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE plain');
$node->safe_psql('postgres', 'CREATE DATABASE plainext');
$node->safe_psql('plainext', 'CREATE EXTENSION bloomguard');

# Sample pg_stat_activity every millisecond for $seconds: how many samples
# saw a bloomguard worker connected to one of the databases named.
sub worker_sightings
{
	my ($seconds, @dbs) = @_;
	my $list = join(',', map { "'$_'" } @dbs);
	return $node->safe_psql('postgres', qq{
	DO \$\$
	DECLARE seen int := 0; n int;
	BEGIN
		WHILE clock_timestamp() < statement_timestamp() + interval '$seconds s' LOOP
			PERFORM pg_stat_clear_snapshot();
			SELECT count(*) INTO n FROM pg_stat_activity
			 WHERE backend_type = 'bloomguard worker' AND datname IN ($list);
			seen := seen + n;
			PERFORM pg_sleep(0.001);
		END LOOP;
		RAISE NOTICE 'seen %', seen;
		PERFORM set_config('bg.seen', seen::text, false);
	END \$\$;
	SELECT current_setting('bg.seen')});
}

# the pass that visits every database is over once a pass has visited postgres twice
is(worker_sightings(4, 'plain', 'plainext'), '0',
	'no worker visits the databases without guards (4 s of 1-second passes)');

my $t0 = time();
$node->safe_psql('postgres', 'ALTER DATABASE plainext RENAME TO plainext2');
$node->safe_psql('postgres', 'DROP DATABASE plain');
$node->safe_psql('postgres', 'DROP DATABASE plainext2');
cmp_ok(time() - $t0, '<', 3, 'databases without guards: renamed and dropped at once');

# A guarded database whose rebuild takes long: money has no hash opclass of
# its own, so this one's extended hash function is the key's; it sleeps
# while slow_hash.on holds true.
sub guarded_db
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE slow_hash (on_ boolean);
	INSERT INTO slow_hash VALUES (false);
	CREATE FUNCTION money_hash(money) RETURNS int LANGUAGE sql IMMUTABLE
	  AS $$ SELECT hashint8(($1::numeric * 100)::bigint) $$;
	CREATE FUNCTION money_hash_ext(money, bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
	  AS $$ SELECT hashint8extended(($1::numeric * 100)::bigint, $2)
	        FROM (SELECT CASE WHEN on_ THEN pg_sleep(0.005) END FROM slow_hash) s $$;
	CREATE OPERATOR CLASS money_hash_ops DEFAULT FOR TYPE money USING hash AS
	  OPERATOR 1 = (money, money), FUNCTION 1 money_hash(money), FUNCTION 2 money_hash_ext(money, bigint);
	CREATE TABLE m (id money PRIMARY KEY);
	INSERT INTO m SELECT g::numeric::money FROM generate_series(1, 4000) g;
	});
	$node->safe_psql($db, q{SELECT bloomguard_attach('m')});
	is($node->safe_psql($db, q{SELECT state FROM bloomguard_health}), 'ready', "$db: guarded");
	# slow from now on; break the coverage, so the worker rebuilds (about 20 s)
	$node->safe_psql($db, q{
	UPDATE slow_hash SET on_ = true;
	ALTER TABLE m DISABLE TRIGGER bloomguard;
	ALTER TABLE m ENABLE ALWAYS TRIGGER bloomguard;
	});
	return;
}

# Wait until a worker is rebuilding in $db, as the postgres database sees it.
sub wait_for_rebuild
{
	my ($db) = @_;
	$node->poll_query_until('postgres', qq{
	SELECT count(*) > 0 FROM pg_stat_activity
	 WHERE backend_type = 'bloomguard worker' AND datname = '$db'
	   AND state = 'active' AND now() - query_start > interval '0.5 s'})
	  or die "no worker rebuilding in $db";
	return;
}

guarded_db('g1');
wait_for_rebuild('g1');
$t0 = time();
my ($ret, $out, $err) = $node->psql('postgres', 'ALTER DATABASE g1 RENAME TO g1r');
is($ret, 0, 'a guarded database is renamed while its worker rebuilds') or diag($err);
cmp_ok(time() - $t0, '<', 3, 'the rename did not wait for the rebuild');
# the guard is still there, under the new name; its rebuild starts again
wait_for_rebuild('g1r');
$t0 = time();
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE g1r');
is($ret, 0, 'a guarded database is dropped while its worker rebuilds') or diag($err);
cmp_ok(time() - $t0, '<', 3, 'the drop did not wait for the rebuild');

# the worker still serves the databases that keep guards
guarded_db('g2');
$node->safe_psql('g2', 'UPDATE slow_hash SET on_ = false');
$node->poll_query_until('g2', q{SELECT state = 'ready' FROM bloomguard_health})
  or die 'the worker did not rebuild g2';
is($node->safe_psql('g2', q{SELECT count(*) FROM m WHERE NOT guarded_exists('m', id)}), '0',
	'g2: every key found');

bg_check_log($node);
done_testing();
