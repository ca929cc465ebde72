# Trusted guards on hot standbys: the feed through the WAL.
#
# With bloomguard.wal_log on, the primary writes every flushed key to the
# WAL, and a hot standby builds its own filter and keeps it complete by
# replay.  A standby's guard must then be as trusted as the primary's: no
# key the standby can see is ever 'absent', and absent keys are 'absent'.
#
#  - standbys made from a backup taken before the attach and after it;
#  - a pgbench write load on the primary (inserts, key updates, non-key
#    updates that move rows to other pages) while a loop on each standby
#    checks every key it can see;
#  - a cascading standby;
#  - pg_walinspect shows the records;
#  - bloomguard.wal_log turned off reaches the standbys through the WAL
#    (they stop trusting at once), and on again (they rebuild);
#  - coverage breaks (a trigger disabled and enabled again) reach them too;
#  - promotion keeps the guard trusted, and the promoted node feeds it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $primary = bg_node('primary', qq{
bloomguard.wal_log = on
bloomguard.maintenance_interval = 1
wal_keep_size = 512MB
}, allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE EXTENSION pg_walinspect;
	CREATE TABLE t (id bigint PRIMARY KEY, v text) WITH (fillfactor = 100);
	INSERT INTO t SELECT g, 'v' FROM generate_series(1, 20000) g;
});
$primary->backup('before_attach');
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('t', 200000)});
$primary->backup('after_attach');

my $standby_a = bg_standby('standby_a', $primary, 'before_attach');
my $standby_b = bg_standby('standby_b', $primary, 'after_attach');
$standby_a->start;
$standby_b->start;
$primary->wait_for_catchup($standby_a);
$primary->wait_for_catchup($standby_b);

# Wait until a node's guard of t is ready.
sub wait_ready
{
	my ($node, $label) = @_;
	$node->poll_query_until('postgres',
		q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 't'::regclass})
	  or die "$label: the guard of t did not become ready";
	return;
}

# Every key the node sees is found and never 'absent'; returns the number
# of absent keys (of 5000 that the test never writes) the filter calls
# 'absent'.
sub check_node
{
	my ($node, $label) = @_;
	is($node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE bloomguard_check('t', id) = 'absent') || ',' ||
		       count(*) FILTER (WHERE NOT guarded_exists('t', id))
		  FROM t}),
		'0,0', "$label: no key of t is absent");
	my $absent = $node->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(-60000, -55001) g
		 WHERE bloomguard_check('t', g) = 'absent' AND NOT guarded_exists('t', g)});
	return $absent;
}

wait_ready($standby_a, 'standby from a backup before attach');
wait_ready($standby_b, 'standby from a backup after attach');
for my $s ([$standby_a, 'standby a'], [$standby_b, 'standby b'])
{
	my $absent = check_node(@$s);
	cmp_ok($absent, '>', 4900, "$s->[1]: absent keys are 'absent' ($absent of 5000)");
}

# a cascading standby, streaming from standby b
$standby_b->backup('cascade');
my $cascade = bg_standby('cascade', $standby_b, 'cascade');
$cascade->start;

# the write load: new keys, key updates, non-key updates (which move
# rows of the full pages to other pages), while each standby checks
my ($out, $rounds, $bad) = bg_under_load($primary, q{
\set k random(100000, 900000000)
\set r random(1, 20000)
BEGIN;
INSERT INTO t VALUES (:k, 'p') ON CONFLICT DO NOTHING;
UPDATE t SET v = v || 'x' WHERE id = :r;
UPDATE t SET id = -id WHERE id = :k;
END;
}, 8, sub {
	my $n = 0;
	$n += $_->safe_psql('postgres', q{
		SELECT count(*) FROM t
		 WHERE bloomguard_check('t', id) = 'absent' OR NOT guarded_exists('t', id)})
	  for ($standby_a, $standby_b);
	return $n;
});
like($out, qr/number of failed transactions: 0/, 'the write load ran without failures');
cmp_ok($rounds, '>=', 4, "the standbys were checked during the load ($rounds checks)");
is($bad, 0, 'during the load no replicated key was ever absent on a standby');

$primary->wait_for_catchup($standby_a);
$primary->wait_for_catchup($standby_b);
$standby_b->wait_for_catchup($cascade, 'replay', $primary->lsn('insert'));
wait_ready($cascade, 'cascading standby');
for my $s ([$standby_a, 'standby a'], [$standby_b, 'standby b'], [$cascade, 'cascading standby'])
{
	my $absent = check_node($s->[0], "$s->[1], after the load");
	cmp_ok($absent, '>', 4900, "$s->[1], after the load: absent keys are 'absent' ($absent)");
	is($s->[0]->safe_psql('postgres', q{SELECT state || ':' || coalesce(last_error, '') FROM bloomguard_health}),
		'ready:', "$s->[1]: the guard is ready");
}
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM t}),
	$primary->safe_psql('postgres', q{SELECT count(*) FROM t}), 'the standby has every row');

# pg_walinspect shows the records with their names and descriptions
my $logpos;
my $gen_b = $standby_b->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
my $gen_a0 = $standby_a->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
my $start = $primary->safe_psql('postgres', q{SELECT pg_current_wal_lsn()});
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, 'w' FROM generate_series(-30, -21) g;
	ALTER TABLE t DISABLE TRIGGER bloomguard;
	ALTER TABLE t ENABLE ALWAYS TRIGGER bloomguard;
});
my $relid = $primary->safe_psql('postgres', q{SELECT 't'::regclass::oid});
my $dbid = $primary->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
is($primary->safe_psql('postgres', qq{
	SELECT string_agg(record_type || ' ' || description, E'\\n' ORDER BY start_lsn)
	  FROM pg_get_wal_records_info('$start', pg_current_wal_lsn())
	 WHERE resource_manager = 'bloomguard' AND record_type <> 'WAL_LOG_ON'}),
	"KEYS db $dbid rel $relid: 10 keys, 0 moved, 1 column\n"
	  . "UNTRUST db $dbid rel $relid: its trigger was disabled or altered\n"
	  . "UNTRUST db $dbid rel $relid: its trigger was disabled or altered",
	'pg_walinspect shows the KEYS and UNTRUST records');
is($primary->safe_psql('postgres', q{
	SELECT rm_name FROM pg_get_wal_resource_managers() WHERE rm_id = 188}),
	'bloomguard', 'the resource manager is registered with id 188');

# the coverage break reached standby b through the WAL: its worker rebuilt
$primary->wait_for_catchup($standby_b);
$standby_b->poll_query_until('postgres', qq{
	SELECT state = 'ready' AND generation > $gen_b FROM bloomguard_health})
  or die 'standby b did not rebuild after the coverage break';
ok($standby_b->log_contains('rebuilt the filter of "t" in database "postgres" because its coverage was broken'),
	'standby b rebuilt its guard because the trigger was disabled on the primary');

# a standby's clean restart: its filter is saved at the shutdown
# restartpoint, loaded at the start, and replay brings it forward with the
# keys written while it was down; no scan.  Standby a's guard was untrusted
# by the same coverage break: only a ready guard is saved, so wait for its
# rebuild first (stopping it before that lost the race on a busy machine).
$primary->wait_for_catchup($standby_a);
$standby_a->poll_query_until('postgres', qq{
	SELECT state = 'ready' AND generation > $gen_a0 FROM bloomguard_health})
  or die 'standby a did not rebuild after the coverage break';
my $gen_a = $standby_a->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
$logpos = -s $standby_a->logfile;
$standby_a->stop;
ok($standby_a->log_contains(qr/bloomguard: saved 1 filters \(\d+ bytes\) complete as of/, $logpos),
	'standby a: its filter saved at shutdown');
$primary->safe_psql('postgres', q{INSERT INTO t SELECT g, 'down' FROM generate_series(-8000, -7001) g});
$standby_a->start;
$primary->wait_for_catchup($standby_a);
ok($standby_a->log_contains(qr/bloomguard: loaded 1 of 1 filters saved at the last shutdown/, $logpos),
	'standby a: its filter loaded at start');
is($standby_a->safe_psql('postgres', q{SELECT state || ':' || source || ':' || generation FROM bloomguard_health}),
	"ready:replayed:$gen_a", 'standby a: ready at once, from the file and replay, not rebuilt');
ok(!$standby_a->log_contains('rebuilt the filter', $logpos), 'standby a: no scan after the clean restart');
my $absent = check_node($standby_a, 'standby a after a clean restart');
cmp_ok($absent, '>', 4900, "standby a after a clean restart: absent keys are 'absent' ($absent)");
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM t WHERE id BETWEEN -8000 AND -7001 AND bloomguard_check('t', id) = 'maybe'}),
	'1000', 'standby a: the keys written while it was down were replayed into the loaded filter');

# Stop a node with mode immediate and start it: nothing was saved, so
# the worker rebuilds its guard.
sub immediate_restart
{
	my ($node, $label) = @_;
	my $pos = -s $node->logfile;
	$node->stop('immediate');
	$node->start;
	wait_ready($node, "$label after an immediate stop");
	ok($node->log_contains('rebuilt the filter of "t" in database "postgres" because its filter is not loaded', $pos),
		"$label: rebuilt after an immediate stop");
	check_node($node, "$label after an immediate stop");
	return;
}

# an immediate stop of the standby saves nothing: the worker rebuilds
immediate_restart($standby_a, 'standby a');

# the primary's clean restart: loaded, no scan; its standbys go on trusting
my $gen_p = $primary->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
$logpos = -s $primary->logfile;
$primary->restart;
is($primary->safe_psql('postgres', q{SELECT state || ':' || source || ':' || generation FROM bloomguard_health}),
	"ready:loaded:$gen_p", 'primary: ready at once after a clean restart, from the file');
ok(!$primary->log_contains('rebuilt the filter', $logpos), 'primary: no scan after the clean restart');
$primary->safe_psql('postgres', q{INSERT INTO t SELECT g, 'restarted' FROM generate_series(-9000, -8001) g});
$primary->wait_for_catchup($standby_a);
check_node($primary, 'primary after a clean restart');
check_node($standby_a, 'standby a after the primary restarted');

# the primary's immediate stop: rebuilt; the standbys go on trusting
immediate_restart($primary, 'primary');
$primary->safe_psql('postgres', q{INSERT INTO t SELECT g, 'crashed' FROM generate_series(-9500, -9001) g});
$primary->wait_for_catchup($standby_a);
check_node($standby_a, 'standby a after the primary crashed');
is($standby_a->safe_psql('postgres', q{SELECT state FROM bloomguard_health}), 'ready',
	'standby a: still trusted after the primary crashed and restarted with keys logged');

# bloomguard.wal_log off reaches the standbys: they stop trusting at once
$logpos = -s $primary->logfile;
$primary->safe_psql('postgres', q{ALTER SYSTEM SET bloomguard.wal_log = off});
$primary->reload;
$primary->wait_for_log(qr/bloomguard\.wal_log is off from WAL position/, $logpos);
$primary->wait_for_catchup($standby_a);
is($standby_a->safe_psql('postgres', q{SELECT state || ':' || last_error FROM bloomguard_health}),
	'untrusted:bloomguard.wal_log is off on the primary', 'standby a: untrusted once the switch is replayed');
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM generate_series(-5000, -1) g WHERE bloomguard_check('t', g) <> 'unknown'}),
	'0', "standby a: the filter answers 'unknown'");
# writes while it is off are not logged; the standby stays untrusted
$primary->safe_psql('postgres', q{INSERT INTO t SELECT g, 'off' FROM generate_series(-4000, -3001) g});
$primary->wait_for_catchup($standby_a);
sleep 2;    # two passes of the standby's worker
is($standby_a->safe_psql('postgres', q{SELECT state FROM bloomguard_health}),
	'untrusted', 'standby a: no rebuild while keys are not logged');
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM t WHERE id BETWEEN -4000 AND -3001 AND guarded_exists('t', id)}),
	'1000', 'standby a: rows written meanwhile are found by plain lookups');

# and on again: the standbys rebuild, and the rows written meanwhile are in
$logpos = -s $primary->logfile;
$primary->safe_psql('postgres', q{ALTER SYSTEM SET bloomguard.wal_log = on});
$primary->reload;
$primary->wait_for_log(qr/bloomguard\.wal_log is on from WAL position/, $logpos);
$primary->safe_psql('postgres', q{INSERT INTO t VALUES (-5001, 'on again')});
$primary->wait_for_catchup($standby_a);
wait_ready($standby_a, 'standby a after wal_log on again');
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe'}),
	'0', 'standby a: every key is in the rebuilt filter');

# on a standby, bloomguard_rebuild() builds the standby's own filter;
# attach and detach write, and refuse
my $gen_a2 = $standby_a->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
$standby_a->safe_psql('postgres', q{SELECT bloomguard_rebuild('t')});
is($standby_a->safe_psql('postgres', qq{SELECT state || ':' || source || ':' || (generation = $gen_a2 + 1)::text FROM bloomguard_health}),
	'ready:built:true', 'standby a: bloomguard_rebuild() built a new generation locally');
# with parallel workers too: they lock the table as the leader does, and
# during recovery that is AccessShareLock (a worker asking for more failed)
$standby_a->safe_psql('postgres', q{
	SET min_parallel_table_scan_size = 0;
	SET max_parallel_maintenance_workers = 2;
	SELECT bloomguard_rebuild('t')});
is($standby_a->safe_psql('postgres', qq{SELECT state || ':' || (generation = $gen_a2 + 2)::text || ':' || (build_workers > 0)::text FROM bloomguard_health}),
	'ready:true:true', 'standby a: a parallel bloomguard_rebuild() works during recovery');
is($standby_a->safe_psql('postgres', q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe'}),
	'0', 'standby a: every key is in the filter built in parallel');
my ($ret, $stdout, $stderr) = $standby_a->psql('postgres', q{SELECT bloomguard_attach('t')});
like($stderr, qr/ERROR:  cannot change guards during recovery/, 'standby a: attach refuses during recovery');

# promotion keeps the guard trusted; the promoted node feeds it
$primary->wait_for_catchup($standby_b);
wait_ready($standby_b, 'standby b after wal_log on again');
my $gen_before = $standby_b->safe_psql('postgres', q{SELECT generation FROM bloomguard_health});
$cascade->stop;
$standby_b->promote;
$standby_b->safe_psql('postgres', q{INSERT INTO t SELECT g, 'promoted' FROM generate_series(-7000, -6001) g});
is($standby_b->safe_psql('postgres', q{
	SELECT state || ':' || generation FROM bloomguard_health}),
	"ready:$gen_before", 'promoted: the guard stayed ready, not rebuilt');
$absent = check_node($standby_b, 'promoted, with keys written before and after the promotion');
cmp_ok($absent, '>', 4900, "promoted: absent keys are 'absent' ($absent)");

# the primary restarted without the library: no hook sees its feed
# trigger disabled and enabled again, and no UNTRUST record reaches the
# standby, which keeps believing that every key is logged.  The trigger's
# catalog row changed, though, and the standby does not trust a filter
# built with the old one: the row written meanwhile is found.
$primary->wait_for_catchup($standby_a);
wait_ready($standby_a, 'standby a before the primary runs without the library');
$primary->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$primary->restart;
$primary->safe_psql('postgres', q{
	ALTER TABLE t DISABLE TRIGGER bloomguard;
	INSERT INTO t VALUES (-9901, 'unguarded');
	ALTER TABLE t ENABLE ALWAYS TRIGGER bloomguard;
});
$primary->wait_for_catchup($standby_a);
is($standby_a->safe_psql('postgres', q{
	SELECT guarded_exists('t', -9901) || ':' || bloomguard_check('t', -9901) || ':' ||
	       (SELECT count(*) FROM t WHERE id = -9901)}),
	'true:unknown:1', 'standby a: a trigger disabled and enabled on a primary without the library untrusts the filter');
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomguard'");
$primary->restart;

# a table whose primary key went away: its trigger untrusts the guard once,
# not once per row (one UNTRUST record, not 200)
$primary->safe_psql('postgres', q{CREATE TABLE nokey (id int PRIMARY KEY)});
$primary->safe_psql('postgres', q{SELECT bloomguard_attach('nokey')});
my $nk_start = $primary->safe_psql('postgres', q{SELECT pg_current_wal_lsn()});
$primary->safe_psql('postgres', q{
	ALTER TABLE nokey DROP CONSTRAINT nokey_pkey;
	INSERT INTO nokey SELECT generate_series(1, 200);
	INSERT INTO nokey SELECT generate_series(201, 400);
});
my $nk_relid = $primary->safe_psql('postgres', q{SELECT 'nokey'::regclass::oid});
my $nk_untrusts = $primary->safe_psql('postgres', qq{
	SELECT count(*) FROM pg_get_wal_records_info('$nk_start', pg_current_wal_lsn())
	 WHERE resource_manager = 'bloomguard' AND record_type = 'UNTRUST'
	   AND description LIKE '%rel $nk_relid:%'});
cmp_ok($nk_untrusts, '<=', 2, "a table without its key: $nk_untrusts UNTRUST records for 400 rows");
is($primary->safe_psql('postgres', q{SELECT state FROM bloomguard_health WHERE relation = 'nokey'::regclass}),
	'untrusted', 'a table without its key: the guard is untrusted');
$primary->safe_psql('postgres', q{DROP TABLE nokey});

$standby_a->stop;
$standby_b->stop;
$primary->stop;
bg_check_log($primary);
bg_check_log($standby_a);
bg_check_log($standby_b);
bg_check_log($cascade);
done_testing();
