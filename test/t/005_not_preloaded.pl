# bloomguard without shared_preload_libraries.
#
# The library can be loaded on demand (CREATE EXTENSION loads it to check
# its C functions), but then it has no shared memory.  Every entry point
# that needs the shared state must refuse with the same error and hint,
# rather than crash or answer from nothing.  Dropping objects must still
# work, so that a user can clean up.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $errmsg = qr/ERROR:  bloomguard must be loaded via shared_preload_libraries/;
my $hint = qr/HINT:  Add bloomguard to shared_preload_libraries in postgresql\.conf and restart the server\./;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 16\n");
$node->start;

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'library is not preloaded');

# CREATE EXTENSION needs no shared memory: it only creates catalog objects.
my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION bloomguard');
is($ret, 0, 'CREATE EXTENSION bloomguard succeeds without preloading');
is($err, '', 'CREATE EXTENSION gives no error or warning');
note "CREATE EXTENSION: ret=$ret stderr=$err";

$node->safe_psql('postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, v text);
	INSERT INTO t SELECT g, 'x' FROM generate_series(1, 100) g;
	CREATE TABLE t2 (a int, b text, PRIMARY KEY (a, b));
	INSERT INTO t2 VALUES (1, 'one');
});

# Run one statement in a fresh session (so that the library is loaded, or
# not, only by that statement) and check it fails with the message and hint.
sub fails_unloaded
{
	my ($sql, $name) = @_;
	my ($r, $o, $e) = $node->psql('postgres', $sql);
	isnt($r, 0, "$name: fails");
	like($e, $errmsg, "$name: error message");
	like($e, $hint, "$name: hint");
	is($o, '', "$name: no result");
	return;
}

fails_unloaded(q{SELECT bloomguard_attach('t')}, 'bloomguard_attach');
fails_unloaded(q{SELECT bloomguard_attach('t', 1000, 0.01)},
	'bloomguard_attach with sizing');
fails_unloaded(q{SELECT guarded_exists('t', 1)}, 'guarded_exists int');
fails_unloaded(q{SELECT guarded_exists('t', 1000)}, 'guarded_exists absent key');
fails_unloaded(q{SELECT guarded_exists('t', '1')}, 'guarded_exists unknown literal');
fails_unloaded(q{SELECT guarded_exists('t2', 1, 'one')}, 'guarded_exists 2-column');
fails_unloaded(q{SELECT bloomguard_check('t', 1)}, 'bloomguard_check');
fails_unloaded(q{SELECT bloomguard_check('t2', 1, 'one')}, 'bloomguard_check 2-column');
fails_unloaded(q{SELECT count(*) FROM t WHERE guarded_exists('t', id)},
	'guarded_exists in a scan');
fails_unloaded(q{SELECT * FROM bloomguard_guard_stats()}, 'bloomguard_guard_stats');
fails_unloaded(q{SELECT bloomguard_reset_stats()}, 'bloomguard_reset_stats()');
fails_unloaded(q{SELECT bloomguard_reset_stats('t')}, 'bloomguard_reset_stats(t)');

# The remaining entry points check the registry after the library: they
# must fail the same way whether or not the table is registered.
fails_unloaded(q{SELECT bloomguard_rebuild('t')}, 'bloomguard_rebuild unregistered');
fails_unloaded(q{SELECT bloomguard_detach('t')}, 'bloomguard_detach unregistered');
fails_unloaded(q{SELECT bloomguard_probe('t')}, 'bloomguard_probe unregistered');

# The health view: with an empty registry it never has to call the stats
# function; whatever it does, it must not claim a guard exists.
($ret, $out, $err) = $node->psql('postgres',
	'SELECT count(*) FROM bloomguard_health');
note "bloomguard_health with an empty registry: ret=$ret out=$out err=$err";
ok(($ret == 0 && $out eq '0') || ($ret != 0 && $err =~ $errmsg),
	'bloomguard_health with empty registry: no rows or the preload error');

# A registered guard (a restored dump, or a server that lost its
# shared_preload_libraries setting): the view has a row to report and must
# fail with the preload error, not an "unrecognized configuration
# parameter" error or a made-up state.
$node->safe_psql('postgres',
	q{INSERT INTO bloomguard_guards (relation, capacity, error_rate) VALUES ('t', 1000, 0.01)});
fails_unloaded(q{SELECT * FROM bloomguard_health}, 'bloomguard_health');
fails_unloaded(q{SELECT relation, state FROM bloomguard_health},
	'bloomguard_health (state column)');
fails_unloaded(q{SELECT bloomguard_rebuild('t')}, 'bloomguard_rebuild registered');
fails_unloaded(q{SELECT bloomguard_rebuild('t', 5000, 0.001)},
	'bloomguard_rebuild registered with sizing');
fails_unloaded(q{SELECT bloomguard_detach('t')}, 'bloomguard_detach registered');
fails_unloaded(q{SELECT bloomguard_probe('t', 10)}, 'bloomguard_probe registered');

# A hand-made feed trigger cannot silently skip keys: the write fails.
$node->safe_psql('postgres',
	q{CREATE TRIGGER bloomguard AFTER INSERT OR UPDATE ON t FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger()});
fails_unloaded(q{INSERT INTO t VALUES (1001, 'y')}, 'feed trigger on INSERT');
fails_unloaded(q{UPDATE t SET id = 2001 WHERE id = 1}, 'feed trigger on UPDATE');
is($node->safe_psql('postgres', q{SELECT count(*) FROM t WHERE id IN (1, 1001, 2001)}),
	'1', 'the failed writes changed nothing');

# Nothing above left a registry row of its own.
is($node->safe_psql('postgres', q{SELECT string_agg(relation::text, ',') FROM bloomguard_guards}),
	't', 'registry holds only the hand-inserted row');

# Cleaning up must work without the shared state: DROP TABLE runs the
# extension's sql_drop event trigger, DROP EXTENSION frees "every guard".
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLE t2');
is($ret, 0, 'DROP TABLE of an unguarded table works');
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLE t');
is($ret, 0, 'DROP TABLE of a registered table works');
is($err, '', 'DROP TABLE gives no error');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloomguard_guards'),
	'0', 'dropping the table removed its registry row');
($ret, $out, $err) = $node->psql('postgres', 'DROP EXTENSION bloomguard');
is($ret, 0, 'DROP EXTENSION works');
is($err, '', 'DROP EXTENSION gives no error');

# The GUCs that need the postmaster do not exist; the others do once the
# library is loaded in a session.
($ret, $out, $err) = $node->psql('postgres', 'SHOW bloomguard.max_memory');
isnt($ret, 0, 'bloomguard.max_memory is not defined without preloading');

# The server is still healthy (nothing crashed along the way).
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');
ok(!$node->log_contains('\(PID \d+\) was terminated by signal'),
	'no backend crashed');

$node->stop;
bg_check_log($node);
done_testing();
