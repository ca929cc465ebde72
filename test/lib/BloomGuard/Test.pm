# Shared by bloomguard's TAP tests (test/t/*.pl): a node with the library
# preloaded, and the check every test ends with, that the server log has
# no WARNING (or worse) that the test did not expect.
#
#   use FindBin;
#   use lib "$FindBin::RealBin/../lib";
#   use BloomGuard::Test;
#
#   my $node = bg_node('name', 'bloomguard.background_worker = off');
#   ...
#   bg_check_log($node, qr/an expected warning/);
package BloomGuard::Test;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(bg_node bg_standby bg_under_load bg_check_log bg_filter_bytes bg_create_wait_for_worker
  bg_wait_back);

# Bytes of a filter of $bits bits, as memory_bytes counts them: the
# filter header (src/filter.h) and whole 64-bit words.
sub bg_filter_bytes
{
	my ($bits) = @_;
	return 64 + 8 * int(($bits + 63) / 64);
}

# A new node (not started) with bloomguard preloaded, room for its
# workers, a log line prefix that names each process's type, and the
# extra postgresql.conf lines given.  %init goes to init() (for example
# allows_streaming => 1).
sub bg_node
{
	my ($name, $extra, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomguard'
max_worker_processes = 16
max_prepared_transactions = 10
log_line_prefix = '%m [%p] %b: '
} . ($extra // ''));
	return $node;
}

# A new standby (not started) made from backup $backup of $primary, or of
# a standby: it keeps the configuration the backup has (bloomguard
# preloaded), and %params go to init_from_backup() (has_streaming => 1 by
# default).  $extra adds postgresql.conf lines.
sub bg_standby
{
	my ($name, $upstream, $backup, $extra, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	%params = (has_streaming => 1) unless %params;
	$node->init_from_backup($upstream, $backup, %params);
	$node->append_conf('postgresql.conf', $extra) if defined $extra;
	return $node;
}

# Run pgbench on $node (2 clients, $seconds seconds) with the script text
# given, and meanwhile call $check again and again: it returns a number
# of problems seen.  Returns pgbench's output, how many checks ran and
# the problems they saw in all.
sub bg_under_load
{
	my ($node, $script, $seconds, $check) = @_;
	my $file = $node->basedir . '/load.sql';
	my ($out, $err) = ('', '');
	my ($rounds, $bad) = (0, 0);

	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh $script;
	close($fh);
	my $load = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds, '-f', $file,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	while ($load->pumpable)
	{
		$bad += $check->();
		$rounds++;
		$load->pump_nb;
	}
	$load->finish;
	return ($out, $rounds, $bad);
}

# Create, in database $db (postgres), the SQL function
# wait_for_worker(rel regclass, OUT builder int, OUT worker int): it waits
# up to 10 s until a build of rel has a parallel worker running and
# returns the building backend's pid and a worker's (NULLs if none came).
sub bg_create_wait_for_worker
{
	my ($node, $db) = @_;
	$node->safe_psql($db // 'postgres', q{
	CREATE FUNCTION wait_for_worker(rel regclass, OUT builder int, OUT worker int)
	LANGUAGE plpgsql AS $$
	BEGIN
		WHILE clock_timestamp() < statement_timestamp() + interval '10 s' LOOP
			PERFORM pg_stat_clear_snapshot();	-- pg_stat_activity as of now
			SELECT builder_pid INTO builder FROM bloomguard_guard_stats() WHERE relid = rel;
			SELECT min(pid) INTO worker FROM pg_stat_activity
			 WHERE leader_pid = builder AND backend_type = 'parallel worker';
			IF worker IS NOT NULL THEN
				RETURN;
			END IF;
			PERFORM pg_sleep(0.001);
		END LOOP;
	END $$});
	return;
}

# Wait until the node, restarting after a crash, answers a query again;
# false if it did not within the default timeout.  poll_query_until()
# feeds its query to psql on stdin, and a psql that finds the server still
# in crash recovery exits before reading it: the write then dies with a
# broken pipe (seen on 16).  Here the query is an argument.  With the log
# offset taken before the kill, it first waits for the postmaster to log
# that it is reinitializing: until the postmaster has reaped the killed
# process, the server still answers, and a query could run before the
# crash restart instead of after it (seen once on the assert build, the
# query 5 ms ahead of the postmaster).
sub bg_wait_back
{
	my ($node, $logpos) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	$node->wait_for_log('all server processes terminated; reinitializing', $logpos)
	  if defined $logpos;
	while (time < $deadline)
	{
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c', 'SELECT 1' ],
			'<', '/dev/null', '>', \$out, '2>', \$err);
		return 1 if $out eq "1\n";
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

# Fail if the node's log has a WARNING (leak reports are warnings too),
# PANIC or assertion failure, or an ERROR or FATAL raised by one of
# bloomguard's background workers, that matches none of the patterns
# given.  Errors of client sessions are the tests' business: they check
# them where they expect them.  A worker told to stop by a shutdown says
# so at FATAL; that is PostgreSQL's own message, not ours.
sub bg_check_log
{
	my ($node, @allowed) = @_;
	my @bad;

	foreach my $line (split /\n/, slurp_file($node->logfile))
	{
		next
		  unless $line =~ /\b(WARNING|PANIC):/
		  || $line =~ /TRAP:/
		  || $line =~ /bloomguard (launcher|worker|attach): (ERROR|FATAL):/;
		next
		  if $line =~
		  /FATAL:  terminating background worker ".*" due to administrator command/;
		next if grep { $line =~ $_ } @allowed;
		push @bad, $line;
	}
	is(scalar(@bad), 0,
		$node->name . ': no unexpected warning or worker error in the server log')
	  or diag(join("\n", @bad[0 .. ($#bad < 19 ? $#bad : 19)]));
	return;
}

1;
