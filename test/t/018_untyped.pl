# guarded_exists() and bloomguard_check() with untyped parameters through
# the extended protocol (libpq's PQprepare and PQexecParams with parameter
# type 0, as drivers send them), compared with the plain query; and the
# error for a varchar parameter on an integer key (pgJDBC's setString()),
# which names the call and carries no internal query or position.
use strict;
use warnings;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

# build test/untyped.c against the libpq of the installation under test
my $dir = tempdir(DIR => $PostgreSQL::Test::Utils::tmp_check, CLEANUP => 1);
my $prog = "$dir/untyped";
my ($inc, $lib) = map { my $v = `pg_config $_`; chomp $v; $v } qw(--includedir --libdir);
system('cc', '-o', $prog, "$FindBin::RealBin/../untyped.c", "-I$inc", "-L$lib", "-Wl,-rpath,$lib", '-lpq') == 0
  or BAIL_OUT('could not build test/untyped.c');

my $node = bg_node('untyped', 'bloomguard.background_worker = off');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id int PRIMARY KEY);
	INSERT INTO t SELECT generate_series(1, 1000);
	CREATE TABLE tt (id text PRIMARY KEY);
	INSERT INTO tt SELECT 'k' || g FROM generate_series(1, 1000) g;
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('t')});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('tt')});

my $out = `$prog '@{[$node->connstr('postgres')]}' t 5 1000 1001 5000 ' 7 ' 2>&1`;
is($?, 0, 'the program ran');
my ($answers, $error) = split(/(?=sqlstate: )/, $out, 2);
is($answers, "5 t maybe t\n1000 t maybe t\n1001 f absent f\n5000 f absent f\n 7  t maybe t\n",
	'int key, untyped parameters: the answers of the plain query, and the filter rules out absent keys');
is($error, <<'EOT', 'a varchar parameter: bloomguard\'s error, naming the call, no internal query, no position');
sqlstate: 42804
message: key argument 1 of guarded_exists() is of type character varying, which cannot be compared with the key column's type integer
context: -
internal_query: -
position: -
internal_position: -
EOT

$out = `$prog '@{[$node->connstr('postgres')]}' tt k5 k1000 k1001 K5 2>&1`;
($answers, $error) = split(/(?=sqlstate: )/, $out, 2);
is($answers, "k5 t maybe t\nk1000 t maybe t\nk1001 f absent f\nK5 f absent f\n",
	'text key, untyped parameters: the answers of the plain query');

# an input error: the key type's own message, in the context of the call
$out = `$prog '@{[$node->connstr('postgres')]}' t abc 2>&1`;
like($out, qr/^abc error:22P02 error:22P02 error:22P02$/m, 'unreadable untyped keys: the input error, as for the plain query');

bg_check_log($node);
done_testing();
