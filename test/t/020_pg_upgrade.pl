# pg_upgrade between two clusters of the same version, both with
# bloomguard preloaded.  pg_upgrade starts each cluster with -b (binary
# upgrade mode), and promises that --check, and a copy-mode upgrade,
# leave the old cluster as it was: bloomguard registers no launcher then
# (which would rebuild and resize guards, and connect to databases
# pg_upgrade is creating), and neither loads nor writes the saved
# filters.  After the upgrade the guards answer right, and the worker
# builds them in the new cluster.
use strict;
use warnings;
use Digest::MD5;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

# the old cluster: no worker while it is filled, so that nothing changes
# the registry but what the test does
my $old = bg_node('old', qq{
bloomguard.background_worker = off
});
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE a (id int PRIMARY KEY);
	INSERT INTO a SELECT generate_series(1, 3000);
	CREATE TABLE grow (id bigint PRIMARY KEY);
});
$old->safe_psql('postgres', q{SELECT bloomguard_attach('a')});
# over its capacity: a worker with auto_rebuild would resize it
$old->safe_psql('postgres', q{SELECT bloomguard_attach('grow', 1000)});
$old->safe_psql('postgres', q{INSERT INTO grow SELECT generate_series(1, 5000)});
$old->safe_psql('postgres', 'CREATE DATABASE other');
$old->safe_psql('other', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE b (k text PRIMARY KEY);
	INSERT INTO b SELECT 'k' || g FROM generate_series(1, 500) g;
	SELECT bloomguard_attach('b');
});

my $registry = q{SELECT string_agg(relation || ':' || capacity || ':' || error_rate, ',' ORDER BY relation::text) FROM bloomguard_guards};
my %before = (postgres => $old->safe_psql('postgres', $registry),
	other => $old->safe_psql('other', $registry));
like($before{postgres}, qr/^a:\d+:0\.01,grow:1000:0\.01$/, 'the old registry');

# from now on the old cluster runs with the worker, as in production
$old->append_conf('postgresql.conf', qq{
bloomguard.background_worker = on
bloomguard.maintenance_interval = 1
});
$old->stop;
my $saved = $old->data_dir . '/pg_stat/bloomguard.filters';
ok(-f $saved, 'the clean shutdown saved the filters');

# the saved file's modification time and contents
sub file_id
{
	my ($path) = @_;
	open(my $fh, '<', $path) or return 'missing';
	binmode($fh);
	my $md5 = Digest::MD5->new->addfile($fh)->hexdigest;
	close($fh);
	return (stat($path))[9] . ':' . $md5;
}
my $saved_id = file_id($saved);

# the old cluster's registry, read without the worker and without the
# saved filters (a start loads and removes them: keep a copy)
sub old_registry
{
	my %reg;
	my $keep = $old->basedir . '/filters.keep';
	PostgreSQL::Test::Utils::system_or_bail('cp', '-p', $saved, $keep) if -f $saved;
	$old->append_conf('postgresql.conf', 'bloomguard.background_worker = off');
	$old->start;
	$reg{$_} = $old->safe_psql($_, $registry) for qw(postgres other);
	$old->stop;
	$old->append_conf('postgresql.conf', 'bloomguard.background_worker = on');
	PostgreSQL::Test::Utils::system_or_bail('cp', '-p', $keep, $saved) if -f $keep;
	return %reg;
}

my $new = bg_node('new', qq{
bloomguard.maintenance_interval = 1
});
my $bindir = $old->config_data('--bindir');
my $workdir = tempdir(DIR => $PostgreSQL::Test::Utils::tmp_check, CLEANUP => 1);
chdir $workdir or die "could not enter $workdir: $!";
my @upgrade = ('pg_upgrade', '--no-sync', '--retain',
	'-d', $old->data_dir, '-D', $new->data_dir,
	'-b', $bindir, '-B', $bindir,
	'-s', $old->host, '-p', $old->port, '-P', $new->port);

# what pg_upgrade's servers logged (it keeps them with --retain)
sub upgrade_logs
{
	my $text = '';
	foreach my $f (glob($new->data_dir . '/pg_upgrade_output.d/*/log/pg_upgrade_server.log'))
	{
		$text .= slurp_file($f);
	}
	return $text;
}

command_ok([ @upgrade, '--check' ], 'pg_upgrade --check');
is(file_id($saved), $saved_id, '--check neither loaded nor rewrote the saved filters');
my $logs = upgrade_logs();
unlike($logs, qr/bloomguard launcher started/, '--check: no bloomguard launcher in binary-upgrade mode');
like($logs, qr/database system is ready/, 'pg_upgrade\'s server logs were read');
my %after = old_registry();
is_deeply(\%after, \%before, '--check left the old registry as it was');

# the check's start of the old cluster above loaded and rewrote the file: note it again
$saved_id = file_id($saved);
command_ok(\@upgrade, 'pg_upgrade');
is(file_id($saved), $saved_id, 'the upgrade neither loaded nor rewrote the old cluster\'s saved filters');
$logs = upgrade_logs();
unlike($logs, qr/bloomguard launcher started/, 'upgrade: no bloomguard launcher in binary-upgrade mode');
unlike($logs, qr/database \d+ does not exist/, 'upgrade: no worker connected to a database being created');
unlike($logs, qr/bloomguard: (saved|loaded|ignoring)/, 'upgrade: no saved filters handled');
%after = old_registry();
is_deeply(\%after, \%before, 'the upgrade left the old registry as it was');
chdir $PostgreSQL::Test::Utils::tmp_check;

# the new cluster: the same registry, and guards that answer right
$new->start;
my %newreg = (postgres => $new->safe_psql('postgres', $registry),
	other => $new->safe_psql('other', $registry));
is_deeply(\%newreg, \%before, 'the new cluster has the old registry');
my $wrong = q{SELECT (SELECT count(*) FROM a WHERE NOT guarded_exists('a', id) OR bloomguard_check('a', id) = 'absent') +
	(SELECT count(*) FROM grow WHERE NOT guarded_exists('grow', id) OR bloomguard_check('grow', id) = 'absent')};
is($new->safe_psql('postgres', $wrong), '0', 'upgraded: every key found, never absent');
is($new->safe_psql('postgres', q{SELECT guarded_exists('a', 3001)}), 'f', 'upgraded: an absent key is absent');
$new->poll_query_until('postgres', q{SELECT count(*) = 2 AND bool_and(state = 'ready') FROM bloomguard_health})
  or die 'the worker did not build the upgraded guards';
$new->poll_query_until('other', q{SELECT count(*) = 1 AND bool_and(state = 'ready') FROM bloomguard_health})
  or die 'the worker did not build the upgraded guards of database other';
is($new->safe_psql('postgres', $wrong), '0', 'upgraded and built: every key found, never absent');
cmp_ok($new->safe_psql('postgres', q{SELECT count(*) FROM generate_series(3001, 4000) g WHERE bloomguard_check('a', g) = 'absent'}),
	'>', 900, 'the built filter rules out absent keys');
is($new->safe_psql('other', q{SELECT count(*) FROM b WHERE NOT guarded_exists('b', k)}), '0',
	'upgraded: database other answers right');
unlike(slurp_file($new->logfile), qr/database \d+ does not exist/, 'the new cluster\'s log has no missing database');

$new->stop;
bg_check_log($new);
bg_check_log($old);
done_testing();
