# A standby's build cancelled by a conflict with recovery is tried again,
# and the health view says so.
#
# The standby can only take AccessShareLock; replay of an ACCESS EXCLUSIVE
# lock taken on the primary waits max_standby_streaming_delay for it, then
# cancels the build.  To have a build running at that moment, the table's
# key is of type money with a hash function of the test's own, which, in
# the standby's bloomguard worker only, waits for advisory lock 4711 while
# a session on the standby holds it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $primary = bg_node('primary', "bloomguard.wal_log = on\n", allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE FUNCTION worker_waits_hash(money, int8) RETURNS int8 LANGUAGE plpgsql IMMUTABLE AS $$
	BEGIN
	  IF (SELECT backend_type FROM pg_stat_activity WHERE pid = pg_backend_pid()) = 'bloomguard worker' THEN
	    PERFORM pg_advisory_lock_shared(4711);
	    PERFORM pg_advisory_unlock_shared(4711);
	  END IF;
	  RETURN hashint8extended(($1::numeric * 100)::int8, $2);
	END $$;
	CREATE FUNCTION worker_waits_hash32(money) RETURNS int4 LANGUAGE sql IMMUTABLE
	  AS $$ SELECT hashint8(($1::numeric * 100)::int8) $$;
	CREATE OPERATOR CLASS worker_waits_ops DEFAULT FOR TYPE money USING hash AS
	  OPERATOR 1 = (money, money), FUNCTION 1 worker_waits_hash32(money),
	  FUNCTION 2 worker_waits_hash(money, int8);
	CREATE TABLE m (id money PRIMARY KEY);
	INSERT INTO m SELECT g::numeric::money FROM generate_series(1, 200) g;
});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('m')});
$primary->backup('bk');

my $standby = bg_standby('standby', $primary, 'bk', qq{
max_standby_streaming_delay = 1s
bloomguard.maintenance_interval = 1
});

# hold the standby's worker inside its scan
$standby->start;
my $holder = $standby->background_psql('postgres');
$holder->query_safe(q{SELECT pg_advisory_lock(4711)});
$primary->safe_psql('postgres', q{INSERT INTO m VALUES ('1000')});    # a KEYS record
$primary->wait_for_catchup($standby);
$standby->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity
	 WHERE backend_type = 'bloomguard worker' AND wait_event_type = 'Lock'})
  or die 'the standby did not start its build';

# replay of the primary's exclusive lock cancels the build after 1 s
$primary->safe_psql('postgres', q{BEGIN; LOCK TABLE m IN ACCESS EXCLUSIVE MODE; COMMIT});
$primary->wait_for_catchup($standby);
$standby->poll_query_until('postgres', q{SELECT last_error LIKE '%conflict with recovery%' FROM bloomguard_health})
  or die 'the health view does not show the conflict';
like($standby->safe_psql('postgres', q{SELECT state || ': ' || last_error FROM bloomguard_health}),
	qr/^building: the build was cancelled by a conflict with recovery \(attempt 1 of 3\); retrying$|^not_loaded: the build was cancelled by a conflict with recovery \(attempt 1 of 3\); retrying$/,
	'the health view says the build was cancelled and is tried again');
ok($standby->log_contains(qr/LOG:  bloomguard: not rebuilding the filter of relation \d+ in database "postgres": \Qthe build was cancelled by a conflict with recovery (attempt 1 of 3); retrying\E/),
	'the log says so too, at LOG level');

# let the retry finish: the guard is ready and trusted
$holder->query_safe(q{SELECT pg_advisory_unlock(4711)});
$holder->quit;
$standby->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health})
  or die 'the retried build did not finish';
is($standby->safe_psql('postgres', q{SELECT count(*) FROM m WHERE bloomguard_check('m', id) <> 'maybe'}),
	'0', 'the retried build has every key');
is($standby->safe_psql('postgres', q{SELECT coalesce(last_error, '') FROM bloomguard_health}),
	'', 'the health view forgets the conflict once built');

$standby->stop;
$primary->stop;
bg_check_log($primary);
bg_check_log($standby);
done_testing();
