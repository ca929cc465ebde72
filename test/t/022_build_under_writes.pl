# Builds under concurrent inserts leave the guard trusted, and say nothing.
#
# A guard whose slot has no filter yet (an attach, or any guard after a
# crash) has no relfilenode to check a saved filter against.  A flush of
# a concurrent insert during the build must not take that for a table
# rewritten since the filter was saved: that untrusted the new filter
# ("the trigger ... changed during the build", WARNING) with a stored
# reason that was not true either.  Here attach runs three times and a
# rebuild after a crash once, each while pgbench inserts; each must end
# ready, with no reason stored and no WARNING in the log (bg_check_log),
# and no key absent.  The background worker is off, so every state is
# exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('underwrites', "bloomguard.background_worker = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id bigint PRIMARY KEY, v text);
	INSERT INTO t SELECT g, 'v' FROM generate_series(1, 400000) g;
	CREATE SEQUENCE s START 10000000;
});

sub sq { return $node->safe_psql('postgres', $_[0]); }

sub health
{
	return sq(q{SELECT state || ':' || coalesce(last_error, '') FROM bloomguard_health WHERE relation = 't'::regclass});
}

# Run $sql while pgbench inserts into t (it has been inserting for a
# while when $sql starts, and goes on after it), then check the guard.
sub build_under_inserts
{
	my ($label, $sql) = @_;
	my $before = sq(q{SELECT last_value FROM s});
	my $done = 0;
	my ($out) = bg_under_load($node, "INSERT INTO t VALUES (nextval('s'), 'w');\n", 3,
		sub {
			if (!$done)
			{
				usleep(700_000);
				sq($sql);
				$done = 1;
			}
			usleep(100_000);
			return 0;
		});
	cmp_ok(sq(q{SELECT last_value FROM s}) - $before, '>', 100, "$label: pgbench inserted");
	is(health(), 'ready:', "$label: the guard is ready, with no reason stored");
	is(sq(q{SELECT count(*) FROM t WHERE bloomguard_check('t', id) <> 'maybe' OR NOT guarded_exists('t', id)}),
		'0', "$label: no key is absent");
	return;
}

for my $i (1 .. 3)
{
	build_under_inserts("attach $i", q{SELECT bloomguard_attach('t', 2000000)});
	sq(q{SELECT bloomguard_detach('t')}) if $i < 3;
}

# after a crash the guard's slot has no filter: an insert is no rewrite
$node->stop('immediate');
$node->start;
is(health(), 'not_loaded:', 'after a crash: not_loaded, no reason stored');
sq(q{INSERT INTO t VALUES (nextval('s'), 'after the crash')});
is(health(), 'not_loaded:', 'after a crash: an insert stores no reason either');
build_under_inserts('rebuild after a crash', q{SELECT bloomguard_rebuild('t')});

$node->stop;
bg_check_log($node);
done_testing();
