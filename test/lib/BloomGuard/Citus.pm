# A Citus cluster for bloomguard's TAP tests: a coordinator and N workers
# on this machine, each with shared_preload_libraries = 'citus,bloomguard'
# and both extensions created in database postgres, the workers added to
# the coordinator's metadata, and helpers to run SQL on every node and to
# wait for Citus's shard operations.  Citus is built and installed by
# test/citus-build.sh (test/run-all.sh runs it); where it is not installed,
# bg_citus_skip_reason() says why, and a test skips with that reason.
#
#   use BloomGuard::Citus;
#
#   if (my $why = bg_citus_skip_reason()) { plan skip_all => $why; }
#   my $citus = BloomGuard::Citus->new(workers => 2);
#   $citus->coordinator->safe_psql('postgres', q{SELECT create_distributed_table(...)});
#   my @answers = $citus->safe_psql_all(q{SELECT ...});   # coordinator first
#   $citus->wait_for_shard_operations;
#   $citus->check_logs;                                    # every node's log
#   $citus->stop;
#
# Settings.  citus must come first in shared_preload_libraries (Citus
# refuses to load after any library that set a planner, executor or utility
# hook), so bloomguard's hooks run outside Citus's.  Citus runs a
# maintenance daemon in every database where it is created, background
# task executors for rebalances, and logical replication workers for shard
# moves and splits (wal_level = logical); bloomguard runs a launcher, a
# worker per database, attach's feed worker and parallel build workers:
# max_worker_processes leaves room for all of them, or moves stall.  Since
# PostgreSQL 15.19 (and 16.11, 17.7, 18.1), output_plugin_libraries lists
# the logical decoding plugins a replication connection may load, and a
# shard split decodes through Citus's own plugin ("citus"): the setting is
# added where the server has it.
package BloomGuard::Citus;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomGuard::Test;

our @EXPORT = qw(bg_citus_skip_reason);

# Why the Citus tests cannot run here (Citus is not installed in this
# PostgreSQL, test/citus-build.sh has not run), or undef if they can.
sub bg_citus_skip_reason
{
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'pg_config', '--pkglibdir', '--sharedir' ], '>', \$out, '2>', \$err)
	  or return "pg_config failed: $err";
	my ($lib, $share) = split /\n/, $out;
	return "Citus is not installed in this PostgreSQL ($lib/citus.so is missing; "
	  . 'test/citus-build.sh builds and installs it)'
	  unless -f "$lib/citus.so" && -f "$share/extension/citus.control";
	return undef;
}

# Does this server have the setting $name?
sub _server_has_setting
{
	my ($name) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'postgres', '--describe-config' ], '>', \$out, '2>', \$err)
	  or die "postgres --describe-config failed: $err";
	return $out =~ /^\Q$name\E\t/m;
}

# The postgresql.conf lines every node of the cluster gets.
sub _conf
{
	my ($extra) = @_;
	my $conf = qq{
shared_preload_libraries = 'citus,bloomguard'
max_worker_processes = 40
max_parallel_workers = 8
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_logical_replication_workers = 12
max_prepared_transactions = 20
max_connections = 100
citus.enable_statistics_collection = off
};
	$conf .= "output_plugin_libraries = 'pgoutput, test_decoding, citus'\n"
	  if _server_has_setting('output_plugin_libraries');
	return $conf . ($extra // '');
}

# A new cluster, started: a coordinator and $opts{workers} workers (2),
# with $opts{extra} added to every node's postgresql.conf.  With
# $opts{coordinator_shards}, new distributed tables get shards on the
# coordinator too (citus_set_node_property(..., 'shouldhaveshards')).
# With $opts{extversion}, every node creates bloomguard at that version
# (an upgrade test updates it).  $opts{before_start}, a function, is called
# with the node's role ('coordinator', 'worker1', ...) just before each
# node starts (a benchmark moves itself into that node's cgroup there).
sub new
{
	my ($class, %opts) = @_;
	my $self = bless {
		extra => $opts{extra},
		extversion => $opts{extversion},
		before_start => $opts{before_start},
		name => $opts{name} // 'citus',
		workers => [],
	}, $class;
	my $n = $opts{workers} // 2;

	$self->{coordinator} = $self->_node('coordinator');
	$self->coordinator->safe_psql('postgres', sprintf(
			q{SELECT citus_set_coordinator_host('%s', %d)},
			$self->coordinator->host, $self->coordinator->port));
	$self->add_worker for 1 .. $n;
	$self->coordinator->safe_psql('postgres', sprintf(
			q{SELECT citus_set_node_property('%s', %d, 'shouldhaveshards', true)},
			$self->coordinator->host, $self->coordinator->port))
	  if $opts{coordinator_shards};
	return $self;
}

# Make, start and set up one node (not yet in the metadata).
sub _node
{
	my ($self, $role) = @_;
	my $node = bg_node("$self->{name}_$role", _conf($self->{extra}));

	# Citus connects to its own node (shard moves, cleanup) at
	# citus.local_hostname: the test nodes listen on a socket directory
	$node->append_conf('postgresql.conf', sprintf("citus.local_hostname = '%s'\n", $node->host));
	$self->{before_start}->($role) if $self->{before_start};
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus; CREATE EXTENSION bloomguard'
		  . ($self->{extversion} ? " VERSION '$self->{extversion}'" : ''));
	return $node;
}

# Add one more worker to the cluster (citus_add_node); returns it.
sub add_worker
{
	my ($self) = @_;
	my $node = $self->_node('worker' . (scalar(@{ $self->{workers} }) + 1));

	$self->coordinator->safe_psql('postgres', sprintf(
			q{SELECT citus_add_node('%s', %d)}, $node->host, $node->port));
	push @{ $self->{workers} }, $node;
	return $node;
}

# The coordinator node.
sub coordinator { return $_[0]->{coordinator}; }

# The worker nodes, in the order they were added.
sub workers { return @{ $_[0]->{workers} }; }

# Every node: the coordinator, then the workers.
sub nodes { my ($self) = @_; return ($self->coordinator, $self->workers); }

# The node whose port is $port (Citus's metadata names nodes by port here).
sub node_by_port
{
	my ($self, $port) = @_;
	my @n = grep { $_->port == $port } $self->nodes;
	die "no node of this cluster has port $port" unless @n;
	return $n[0];
}

# Run $sql with safe_psql on every node, coordinator first; the outputs.
sub safe_psql_all
{
	my ($self, $sql) = @_;
	return map { $_->safe_psql('postgres', $sql) } $self->nodes;
}

# The placements of table $table, as a list of hashes
# { shardid, shard (the shard table's name), node (the node holding it) },
# ordered by shard id and node.
sub placements
{
	my ($self, $table) = @_;
	my $out = $self->coordinator->safe_psql('postgres', qq{
		SELECT shardid, shard_name, nodeport FROM citus_shards
		 WHERE table_name = '$table'::regclass ORDER BY shardid, nodeport});
	return map {
		my ($id, $name, $port) = split /\|/;
		{ shardid => $id, shard => $name, node => $self->node_by_port($port) }
	} grep { $_ ne '' } split /\n/, $out;
}

# Wait until Citus has no background task left to run (rebalances, moves
# started in the background) and no orphaned resource left to clean up
# (old placements of moves and splits, their replication slots): Citus's
# maintenance daemon drops those on its own, every
# citus.defer_shard_delete_interval; this waits for it, then calls the
# cleanup itself if it did not come.  Returns whether Citus cleaned up on
# its own.
sub wait_for_shard_operations
{
	my ($self) = @_;
	my $c = $self->coordinator;

	$c->poll_query_until('postgres', q{
		SELECT count(*) = 0 FROM pg_dist_background_task
		 WHERE status NOT IN ('done', 'error', 'cancelled')})
	  or die 'Citus background tasks did not finish';
	return 1 if $c->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_dist_cleanup});
	diag('Citus did not clean up on its own; calling citus_cleanup_orphaned_resources()');
	$c->safe_psql('postgres', q{CALL citus_cleanup_orphaned_resources()});
	return 0;
}

# bg_check_log on every node; @allowed as there.
sub check_logs
{
	my ($self, @allowed) = @_;
	bg_check_log($_, @allowed) for $self->nodes;
	return;
}

# Stop every node.
sub stop
{
	my ($self) = @_;
	$_->stop for reverse $self->nodes;
	return;
}

1;
