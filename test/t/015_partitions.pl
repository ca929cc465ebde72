# Partitioned tables with the background worker: a new partition (CREATE
# TABLE ... PARTITION OF, ATTACH PARTITION of a table with rows) is built
# by the worker without anyone asking, after a restart every leaf is
# rebuilt, and a leaf that lost its registry row (made while the library
# was not loaded) is registered again by the worker's pass.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

my $node = bg_node('partitions', qq{
bloomguard.maintenance_interval = 1
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE pt (id bigint, day int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
	CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (1) TO (2);
	CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (2) TO (3);
	INSERT INTO pt SELECT g, 1 + g % 2 FROM generate_series(1, 20000) g;
	ANALYZE pt;
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('pt')});

my $lost = q{SELECT count(*) FROM pt WHERE NOT guarded_exists('pt', id, day)
                OR bloomguard_check('pt', id, day) = 'absent'};

# a new partition is built by the worker, and its keys are found
$node->safe_psql('postgres', q{
	CREATE TABLE pt_3 PARTITION OF pt FOR VALUES FROM (3) TO (4);
	INSERT INTO pt SELECT g, 3 FROM generate_series(1, 500) g;
});
$node->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'pt_3'::regclass})
  or die 'the new partition was not built';
is($node->safe_psql('postgres', q{SELECT bloomguard_check('pt', 10001::bigint, 3)}),
	'absent', 'the new partition answers from its filter');
is($node->safe_psql('postgres', $lost), '0', 'no present key of the tree is absent');

# ATTACH PARTITION of a table with rows: found by lookup, then built
$node->safe_psql('postgres', q{
	CREATE TABLE pt_4 (id bigint, day int, PRIMARY KEY (id, day));
	INSERT INTO pt_4 SELECT g, 4 FROM generate_series(1, 3000) g;
	ALTER TABLE pt ATTACH PARTITION pt_4 FOR VALUES FROM (4) TO (5);
});
is($node->safe_psql('postgres', $lost), '0', 'attached partition: its rows are found before its build');
$node->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'pt_4'::regclass})
  or die 'the attached partition was not built';
is($node->safe_psql('postgres', q{SELECT bloomguard_check('pt', 2999::bigint, 4) || ' ' || (SELECT count(*) > 950 FROM generate_series(3001, 4000) g WHERE bloomguard_check('pt', g::bigint, 4) = 'absent')}),
	'maybe true', 'the attached partition is built from its rows, sized for them');
is($node->safe_psql('postgres', q{SELECT capacity >= 6000 FROM bloomguard_health WHERE relation = 'pt_4'::regclass}),
	't', 'the attached partition is sized from its rows');

# restart: every leaf rebuilt by the worker
$node->restart;
is($node->safe_psql('postgres', $lost), '0', 'right after restart: present keys are found');
$node->poll_query_until('postgres', q{SELECT count(*) = 4 AND bool_and(state = 'ready' AND parent = 'pt'::regclass) FROM bloomguard_health})
  or die 'the leaves were not rebuilt after the restart';
is($node->safe_psql('postgres', $lost), '0', 'rebuilt after restart: no present key absent');

# the worker's safety net: a leaf with no registry row is registered again
$node->safe_psql('postgres', q{DELETE FROM bloomguard_guards WHERE relation = 'pt_2'::regclass});
$node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM bloomguard_guards WHERE relation = 'pt_2'::regclass})
  or die 'the worker did not register the leaf again';
$node->poll_query_until('postgres', q{SELECT state = 'ready' FROM bloomguard_health WHERE relation = 'pt_2'::regclass})
  or die 'the re-registered leaf was not built';
is($node->safe_psql('postgres', $lost), '0', 'no present key absent after re-registration');

# DETACH PARTITION ... CONCURRENTLY frees the leaf's guard too
$node->safe_psql('postgres', q{ALTER TABLE pt DETACH PARTITION pt_1 CONCURRENTLY});
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloomguard_guards WHERE relation = 'pt_1'::regclass}),
	'0', 'a partition detached concurrently is unregistered');
is($node->safe_psql('postgres', q{SELECT guarded_exists('pt_1', 2::bigint, 1) AND NOT guarded_exists('pt', 2::bigint, 1)}),
	't', 'its rows stay in it, and are no longer in the tree');

# dump and restore: the tree comes back guarded, leaf by leaf
my $dump = $node->basedir . '/pt.dump';
my $registry = q{SELECT string_agg(relation || ':' || capacity, ' ' ORDER BY relation::text) FROM bloomguard_guards};
my $before = $node->safe_psql('postgres', $registry);
$node->command_ok(['pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres')], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(['pg_restore', '-d', $node->connstr('dst'), $dump], 'pg_restore');
is($node->safe_psql('dst', $registry), $before, 'the registry rows of the tree are restored');
is($node->safe_psql('dst', q{SELECT string_agg(DISTINCT tgenabled::text, ',') FROM pg_trigger WHERE tgname = 'bloomguard'}),
	'A', 'every clone of the trigger is enabled ALWAYS');
$node->poll_query_until('dst', q{SELECT count(*) = 3 AND bool_and(state = 'ready') FROM bloomguard_health})
  or die 'the restored leaves were not built';
is($node->safe_psql('dst', $lost), '0', 'restored: no present key absent');

$node->stop;
bg_check_log($node);
done_testing();
