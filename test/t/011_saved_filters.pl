# Filters saved at a clean shutdown and loaded at the next start.
#
# A clean restart of the primary brings every guard back ready without a
# scan; an immediate stop saves nothing, and the guards are rebuilt.  The
# file is loaded only when pg_control, read from disk, shows the very
# shutdown it was written at: each refusal we can produce is tried with a
# file planted where it would be read (a copy of an earlier one), and the
# guard must then come back not_loaded and be rebuilt.  Copies of the data
# directory are told apart by the run identity the file carries.  The
# background worker is off, so every state is exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Copy;
use PostgreSQL::Test::RecursiveCopy;
use IPC::Run;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('saved', qq{
bloomguard.background_worker = off
restart_after_crash = on
}, allows_streaming => 1);
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id bigint PRIMARY KEY, v text);
	INSERT INTO t SELECT g, 'v' FROM generate_series(1, 50000) g;
	CREATE TABLE c (a int, b text, PRIMARY KEY (a, b));
	INSERT INTO c SELECT g % 100, 'c' || g FROM generate_series(1, 5000) g;
	CREATE UNLOGGED TABLE u (id int PRIMARY KEY);
	INSERT INTO u SELECT generate_series(1, 1000);
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('t', 200000)});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('c', 20000)});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('u', 5000)});

my $file = $node->data_dir . '/pg_stat/bloomguard.filters';

sub sq { return $node->safe_psql('postgres', $_[0]); }

sub states
{
	return sq(q{SELECT string_agg(relation || ':' || state || ':' || coalesce(source, '-'), ',' ORDER BY relation::text) FROM bloomguard_health});
}

# Every key is found and never absent, and absent keys are (mostly) absent.
sub answers_right
{
	my ($label) = @_;
	is(sq(q{SELECT count(*) FILTER (WHERE bloomguard_check('t', id) = 'absent' OR NOT guarded_exists('t', id)) FROM t}),
		'0', "$label: no key of t absent");
	is(sq(q{SELECT count(*) FILTER (WHERE bloomguard_check('c', a, b) = 'absent' OR NOT guarded_exists('c', a, b)) FROM c}),
		'0', "$label: no key of c absent");
	return;
}

# Stop cleanly; the filters are saved.
sub clean_stop
{
	my ($label) = @_;
	my $pos = -s $node->logfile;
	$node->stop;
	ok($node->log_contains(qr/bloomguard: saved 2 filters \(\d+ bytes\) complete as of/, $pos),
		"$label: two filters saved (not the unlogged table's)");
	ok(-f $file, "$label: the file is there");
	return;
}

# Start, and check that the saved file was refused for the reason given.
sub start_refused
{
	my ($label, $reason) = @_;
	my $pos = -s $node->logfile;
	$node->start;
	ok($node->log_contains(qr/bloomguard: ignoring the filters saved at the last shutdown: \Q$reason\E/, $pos),
		"$label: refused because $reason");
	ok(!-f $file, "$label: the file was removed");
	is(states(), 'c:not_loaded:-,t:not_loaded:-,u:not_loaded:-', "$label: every guard is not_loaded");
	answers_right($label);
	return;
}

# Rebuild every guard by hand (the worker is off).
sub rebuild_all
{
	sq(q{SELECT bloomguard_rebuild('t'); SELECT bloomguard_rebuild('c'); SELECT bloomguard_rebuild('u');});
	return;
}

# 1. a clean restart: loaded, no scan, the same generation, every answer right
my $gen = sq(q{SELECT string_agg(relation || ':' || generation, ',' ORDER BY relation::text) FROM bloomguard_health});
clean_stop('clean restart');
my $pos = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/bloomguard: loaded 2 of 2 filters saved at the last shutdown/, $pos),
	'clean restart: both filters loaded');
ok(!-f $file, 'clean restart: the file was removed once read');
is(states(), 'c:ready:loaded,t:ready:loaded,u:not_loaded:-',
	'clean restart: t and c ready from the file; the unlogged table is not saved');
is(sq(q{SELECT string_agg(relation || ':' || generation, ',' ORDER BY relation::text) FROM bloomguard_health WHERE relation <> 'u'::regclass}),
	join(',', grep { !/^u:/ } split /,/, $gen), 'clean restart: the generations are the saved ones');
answers_right('clean restart');
cmp_ok(sq(q{SELECT count(*) FROM generate_series(-10000, -1) g WHERE bloomguard_check('t', g) = 'absent'}),
	'>', 9800, 'clean restart: absent keys are absent at once');
is(sq(q{SELECT bloomguard_check('u', 1)}), 'unknown', 'clean restart: the unlogged table has no filter');
sq(q{INSERT INTO t SELECT g, 'after' FROM generate_series(60001, 61000) g});
is(sq(q{SELECT count(*) FROM t WHERE id > 60000 AND bloomguard_check('t', id) = 'maybe'}),
	'1000', 'clean restart: the loaded filter is fed');
sq(q{SELECT bloomguard_rebuild('u')});

# 2. an immediate stop saves nothing: every guard is rebuilt
$pos = -s $node->logfile;
$node->stop('immediate');
ok($node->log_contains('bloomguard: not saving 2 filters: the server did not write a shutdown checkpoint', $pos),
	'immediate stop: nothing saved, and the log says why');
$node->start;
is(states(), 'c:not_loaded:-,t:not_loaded:-,u:not_loaded:-', 'immediate stop: nothing loaded');
answers_right('immediate stop');
rebuild_all();

# 3. another checkpoint since: a file kept from an earlier shutdown
clean_stop('stale file');
copy($file, "$file.kept") or die;
$node->start;
$node->stop;
move("$file.kept", $file) or die;
start_refused('another checkpoint', 'the last checkpoint is not the one the file was written at');
rebuild_all();

# 4. a crash since the file was written
clean_stop('crash');
copy($file, "$file.kept") or die;
$node->start;
$node->stop('immediate');
move("$file.kept", $file) or die;
start_refused('a crash', 'the server did not shut down cleanly since the file was written');
rebuild_all();

# 5. pg_resetwal
clean_stop('pg_resetwal');
command_ok([ 'pg_resetwal', '-f', $node->data_dir ], 'pg_resetwal ran');
start_refused('pg_resetwal', 'the last checkpoint is not the one the file was written at');
rebuild_all();

# 6. a file that is damaged
clean_stop('damaged');
{
	open(my $fh, '+<', $file) or die;
	binmode $fh;
	seek($fh, -8, 2);
	print $fh "\xff" x 8;
	close $fh;
}
$pos = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/bloomguard: the saved filter of relation \d+ in database \d+ has a wrong checksum/, $pos),
	'damaged: the checksum catches it');
is(sq(q{SELECT count(*) FROM bloomguard_health WHERE state = 'ready'}), '1',
	'damaged: the filter before the damaged one is loaded, the damaged one is not');
answers_right('damaged');
rebuild_all();

# 7. a table rewritten while the server ran without the filter in shared
# memory: single-user mode loads the file (and saves it again at its
# exit), VACUUM FULL gives t a new relfilenode; the next start loads the
# filter, and its first lookup finds the relfilenode changed
clean_stop('rewritten');
my ($in, $out, $err) = ("SELECT relfilenode FROM pg_class WHERE relname = 't';\nVACUUM FULL t;\n"
	  . "SELECT relfilenode FROM pg_class WHERE relname = 't';\n", '', '');
ok(IPC::Run::run([ 'postgres', '--single', '-D', $node->data_dir, 'postgres' ],
		'<', \$in, '>', \$out, '2>', \$err),
	'single-user mode ran');
my @rfn = $out =~ /relfilenode = "(\d+)"/g;
ok(@rfn == 2 && $rfn[0] != $rfn[1], "rewritten: VACUUM FULL gave t a new relfilenode (@rfn)");
ok(-f $file, 'rewritten: single-user mode saved the filters again at its exit');
$node->start;
is(states(), 'c:ready:loaded,t:ready:loaded,u:not_loaded:-', 'rewritten: loaded');
is(sq(q{SELECT bloomguard_check('t', 1)}), 'unknown', 'rewritten: the first lookup does not trust it');
is(sq(q{SELECT state || ': ' || last_error FROM bloomguard_health WHERE relation = 't'::regclass}),
	'untrusted: its table was rewritten since the filter was saved', 'rewritten: untrusted, and the view says why');
is(sq(q{SELECT bloomguard_check('c', 1, 'c1')}), 'maybe', 'rewritten: the other guard is trusted');
answers_right('rewritten');
rebuild_all();

# 7b. a detach prepared but not committed at the shutdown: its filter is
# not saved (COMMIT PREPARED frees the slot), so after the restart and the
# commit nothing is left over, and c can be attached again
sq(q{BEGIN; SELECT bloomguard_detach('c'); PREPARE TRANSACTION 'detach_c';});
$pos = -s $node->logfile;
$node->stop;
ok($node->log_contains(qr/bloomguard: saved 1 filters \(\d+ bytes\) complete as of/, $pos),
	'prepared detach: the filter it frees is not saved');
$node->start;
sq(q{COMMIT PREPARED 'detach_c'});
is(sq(q{SELECT count(*) FROM bloomguard_health WHERE relation = 'c'::regclass}), '0',
	'prepared detach: c is not guarded after the commit');
sq(q{SELECT bloomguard_attach('c')});
is(states(), 'c:ready:built,t:ready:loaded,u:not_loaded:-', 'prepared detach: c attached again');
rebuild_all();

# 8. a base backup restored with a file in it
clean_stop('backup');
copy($file, "$file.kept") or die;
$node->start;
$node->backup('bk');
my $restored = bg_standby('restored', $node, 'bk', "bloomguard.background_worker = off\n", has_streaming => 0);
copy("$file.kept", $restored->data_dir . '/pg_stat/bloomguard.filters') or die;
unlink("$file.kept");
$pos = -s $restored->logfile;
$restored->start;
ok($restored->log_contains('bloomguard: ignoring the filters saved at the last shutdown: a backup is being restored', $pos),
	'restored backup: refused');
is($restored->safe_psql('postgres', q{SELECT string_agg(state, ',') FROM bloomguard_health}),
	'not_loaded,not_loaded,not_loaded', 'restored backup: nothing loaded');
$restored->stop;

# 9. another database system (a cluster of its own, as after pg_upgrade)
my $other = bg_node('other', "bloomguard.background_worker = off\n");
$node->stop;
ok(-f $file, 'other system: the primary saved its filters');
copy($file, $other->data_dir . '/pg_stat/bloomguard.filters') or die;
$pos = -s $other->logfile;
$other->start;
ok($other->log_contains('bloomguard: ignoring the filters saved at the last shutdown: the file belongs to another database system', $pos),
	'other system: refused');
$other->stop;

# the primary still loads its own file
$node->start;
is(states(), 'c:ready:loaded,t:ready:loaded,u:not_loaded:-', 'its own file still loads');
answers_right('its own file');

# 10. clones: A and B, two copies of one cleanly stopped data directory,
# each started, given one key of the same size, and stopped.  pg_control
# cannot tell them apart (the same checkpoint LSN); the run identity can:
# B's file put into A is refused.  Each copy loads the file of the
# shutdown it was copied at, and later its own.
$node->stop;
ok(-f $file, 'clones: the primary saved its filters');
PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $node->backup_dir . '/cold',
	filterfn => sub { return $_[0] ne 'log' && $_[0] ne 'postmaster.pid'; });
my %clone;
for my $c ([ 'a', 700001 ], [ 'b', 800001 ])
{
	my ($name, $key) = @$c;
	my $n = bg_standby("clone_$name", $node, 'cold', undef, has_streaming => 0);
	$pos = -s $n->logfile;
	$n->start;
	ok($n->log_contains(qr/bloomguard: loaded 2 of 2 filters saved at the last shutdown/, $pos),
		"clone $name: loads the file of the shutdown it was copied at");
	$n->safe_psql('postgres', "INSERT INTO t VALUES ($key, 'clone')");
	$n->stop;
	ok(-f $n->data_dir . '/pg_stat/bloomguard.filters', "clone $name: saved its filters");
	$clone{$name} = $n;
}
my ($ca, $cb) = @clone{qw(a b)};
my @ckpt = map {
	my ($o) = run_command([ 'pg_controldata', $_->data_dir ]);
	$o =~ /^Latest checkpoint location:\s*(\S+)/m ? $1 : 'none';
} ($ca, $cb);
is($ckpt[0], $ckpt[1], "clones: pg_control shows the same checkpoint in both ($ckpt[0])");
copy($cb->data_dir . '/pg_stat/bloomguard.filters', $ca->data_dir . '/pg_stat/bloomguard.filters')
  or die;
$pos = -s $ca->logfile;
$ca->start;
ok($ca->log_contains(qr/bloomguard: ignoring the filters saved at the last shutdown: \Qthe file was not written by the last run of this data directory (it comes from a copy of it)\E/, $pos),
	"clones: B's file is refused by A");
is($ca->safe_psql('postgres', q{SELECT string_agg(state, ',') FROM bloomguard_health}),
	'not_loaded,not_loaded,not_loaded', "clones: A loaded nothing of B's");
is($ca->safe_psql('postgres', q{
	SELECT bloomguard_check('t', 700001) || ',' || guarded_exists('t', 700001) || ',' ||
	       (SELECT count(*) FROM t WHERE id = 700001)}),
	'unknown,true,1', "clones: A's own key is found, by guarded_exists and by the planner path");
$ca->safe_psql('postgres', q{SELECT bloomguard_rebuild('t'); SELECT bloomguard_rebuild('c')});
$ca->restart;
is($ca->safe_psql('postgres', q{SELECT string_agg(relation || ':' || state || ':' || source, ',' ORDER BY relation::text) FROM bloomguard_health WHERE relation <> 'u'::regclass}),
	'c:ready:loaded,t:ready:loaded', 'clones: a clean restart of A loads its own file');
is($ca->safe_psql('postgres', q{SELECT bloomguard_check('t', 700001) || ',' || guarded_exists('t', 800001)}),
	'maybe,false', "clones: A's filter has A's key; B's key is not in A");
$ca->stop;

bg_check_log($node);
bg_check_log($restored);
bg_check_log($other);
bg_check_log($ca);
bg_check_log($cb);
done_testing();
