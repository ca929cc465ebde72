# Every setting, set in postgresql.conf, takes effect from the start.
#
# Each file defines its own settings (module.c's header), and _PG_init
# reserves the bloomguard prefix after the last definition: a setting
# defined after MarkGUCPrefixReserved() would have its postgresql.conf
# value removed at load, with a WARNING, and start at its default.  So the
# server starts with every bloomguard setting at a value that is not its
# default, and each must show that value, as read from the configuration
# file, with nothing in the log.  The list of names is the README's
# Settings table: a setting added, lost or renamed fails here too.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

# setting => the value set, as SHOW prints it (none is the default)
my %set = (
	'bloomguard.enabled' => 'off',
	'bloomguard.transparent' => 'off',
	'bloomguard.shortcut_costing' => 'on',
	'bloomguard.max_memory' => '64MB',
	'bloomguard.max_guard_memory' => '8MB',
	'bloomguard.max_guards' => '100',
	'bloomguard.default_error_rate' => '0.02',
	'bloomguard.background_worker' => 'off',
	'bloomguard.maintenance_interval' => '30s',
	'bloomguard.auto_rebuild' => 'off',
	'bloomguard.partition_lookup' => 'ask_all',
	'bloomguard.wal_log' => 'on',);

my $node = bg_node('settings',
	join('', map { "$_ = '$set{$_}'\n" } sort keys %set));
$node->start;

is( $node->safe_psql(
		'postgres',
		q{SELECT string_agg(name, ' ' ORDER BY name) FROM pg_settings WHERE name LIKE 'bloomguard.%'}
	),
	join(' ', sort keys %set),
	'the server defines every bloomguard setting, and no other');

foreach my $name (sort keys %set)
{
	is( $node->safe_psql(
			'postgres',
			"SELECT current_setting('$name') || ' ' || source FROM pg_settings WHERE name = '$name'"
		),
		"$set{$name} configuration file",
		"$name has its postgresql.conf value from the start");
}

$node->stop;
bg_check_log($node);
done_testing();
