# The background worker: rebuilds after a restart (time to ready for a
# 500k-row table), automatic resize of guards past capacity (and its
# refusal at the memory cap, with advice), rebuild of untrusted guards,
# and surviving pg_ctl reload.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomguard'
bloomguard.maintenance_interval = 1
bloomguard.max_memory = 4MB
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE big (id bigint PRIMARY KEY);
	INSERT INTO big SELECT generate_series(1, 500000);
	VACUUM ANALYZE big;
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('big')});

# restart: not trusted until rebuilt, then ready within seconds
$node->stop;
$node->start;
my $t0 = time();
is($node->safe_psql('postgres', q{SELECT count(*) FROM generate_series(1, 500000, 997) g WHERE NOT guarded_exists('big', g) OR bloomguard_check('big', g) = 'absent'}),
	'0', 'right after restart: present keys are found, never absent');
$node->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'big'::regclass})
  or die 'not rebuilt after restart';
my $elapsed = time() - $t0;
cmp_ok($elapsed, '<', 10, 'a 500k-row guard is ready again within seconds of startup');
diag(sprintf('time to ready after restart, 500k rows: %.2f s', $elapsed));
is($node->safe_psql('postgres', q{SELECT count(*) FROM big WHERE bloomguard_check('big', id) = 'absent'}),
	'0', 'rebuilt after restart: no present key absent');

# automatic resize past capacity
$node->safe_psql('postgres', q{
	CREATE TABLE grow (id int PRIMARY KEY);
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('grow', 1000)});
$node->safe_psql('postgres', q{INSERT INTO grow SELECT generate_series(1, 5000)});
$node->poll_query_until('postgres', q{SELECT capacity = 10000 AND status = 'HEALTHY' FROM bloomguard_health WHERE relation = 'grow'::regclass})
  or die 'the worker did not resize the guard';
ok($node->log_contains('rebuilt the filter of "grow" in database "postgres" because it is over capacity'),
	'the resize is logged');
is($node->safe_psql('postgres', q{SELECT count(*) FROM grow WHERE bloomguard_check('grow', id) = 'absent'}),
	'0', 'resized: no present key absent');

# the cap stops a resize: the guard stays DEGRADED and the advice says why
$node->safe_psql('postgres', q{CREATE TABLE capped (id int PRIMARY KEY)});
# resizing to 2 x 400000 keys at 1e-9 needs 4.3 MB, more than the 4 MB cap
$node->safe_psql('postgres', q{SELECT bloomguard_attach('capped', 10000, 0.000000001)});
$node->safe_psql('postgres', q{INSERT INTO capped SELECT generate_series(1, 400000)});
$node->poll_query_until('postgres', q{SELECT advice LIKE '%would exceed bloomguard.max_memory%' FROM bloomguard_health WHERE relation = 'capped'::regclass})
  or die 'no advice about the memory cap';
is($node->safe_psql('postgres', q{SELECT status || ':' || capacity || ':' || array_to_string(reasons, ',') FROM bloomguard_health WHERE relation = 'capped'::regclass}),
	'DEGRADED:10000:OVER_CAPACITY', 'the capped guard stays DEGRADED at its old capacity');
is($node->safe_psql('postgres', q{SELECT count(*) FROM capped WHERE bloomguard_check('capped', id) = 'absent'}),
	'0', 'capped: no present key absent');

# auto_rebuild off: no resize
$node->append_conf('postgresql.conf', 'bloomguard.auto_rebuild = off');
my $launcher = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'bloomguard launcher'});
$node->reload;
$node->safe_psql('postgres', q{CREATE TABLE still (id int PRIMARY KEY)});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('still', 1000)});
$node->safe_psql('postgres', q{INSERT INTO still SELECT generate_series(1, 3000)});
sleep 3;
is($node->safe_psql('postgres', q{SELECT capacity FROM bloomguard_health WHERE relation = 'still'::regclass}),
	'1000', 'auto_rebuild = off: no automatic resize');
is($node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'bloomguard launcher'}),
	$launcher, 'the launcher survives pg_ctl reload');

# untrusted guards are rebuilt once their trigger is back
$node->safe_psql('postgres', q{ALTER TABLE grow DISABLE TRIGGER bloomguard});
$node->safe_psql('postgres', q{INSERT INTO grow SELECT generate_series(9001, 9500)});
$node->safe_psql('postgres', q{ALTER TABLE grow ENABLE ALWAYS TRIGGER bloomguard});
is($node->safe_psql('postgres', q{SELECT count(*) FROM grow WHERE id > 9000 AND (NOT guarded_exists('grow', id) OR bloomguard_check('grow', id) = 'absent')}),
	'0', 'rows written while the trigger was off are found');
$node->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'grow'::regclass})
  or die 'the untrusted guard was not rebuilt';
is($node->safe_psql('postgres', q{SELECT count(*) FROM grow WHERE bloomguard_check('grow', id) <> 'maybe'}),
	'0', 'rebuilt: every key is in the filter');

# crash of a backend: shared memory is reinitialized, the worker rebuilds
# (restart_after_crash is on by default)
my ($stdout, $stderr);
my $h = IPC::Run::start(['psql', '-X', '-d', $node->connstr('postgres'), '-c', 'SELECT pg_sleep(60)'],
	'>', \$stdout, '2>', \$stderr);
$node->poll_query_until('postgres', q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%'});
my $victim = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%'});
kill 'KILL', $victim;
$h->finish;
$node->poll_query_until('postgres', q{SELECT bool_and(state = 'ready') AND count(*) = 4 FROM bloomguard_health})
  or die 'not rebuilt after the crash';
ok($node->log_contains('terminated by signal 9'), 'a backend crashed');
is($node->safe_psql('postgres', q{SELECT count(*) FROM big WHERE bloomguard_check('big', id) = 'absent'}),
	'0', 'rebuilt after the crash: no present key absent');

$node->stop;
done_testing();
