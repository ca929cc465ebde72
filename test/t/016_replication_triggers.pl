# Rows written by logical replication are never visible to a lookup before
# their keys reach the subscriber's filter.  The apply worker inserts and
# updates through ExecSimpleRelationInsert() and its kin, the table
# synchronization worker through CopyFrom(), pglogical through its own
# apply: none passes the hooks that track a session's running writers
# (src/statement.c), so the filter is not trusted in their role,
# session_replication_role = replica.  Triggers enabled ALWAYS on the
# subscriber look rows up while those workers write:
#   aaa_self   AFTER INSERT OR UPDATE, before the feed trigger: the new row;
#   bef_prev   BEFORE INSERT: the row before (earlier in a table sync);
#   zzz_next   AFTER INSERT, after the feed trigger: the row after (later
#              in a table sync, whose AFTER events all wait for its end).
# Every lookup goes three ways: the plain EXISTS through the planner path,
# guarded_exists() and bloomguard_check(); all must agree with the table.
# On 9c693ab every lookup of a row the built-in workers or pglogical's
# apply wrote was wrong; pglogical's own table sync was not (it copies
# through COPY FROM in an ordinary backend, which the hooks track).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;

# pglogical, where its package is installed for this PostgreSQL
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
my $pglogical = -e "$pkglibdir/pglogical.so";
my $preload = $pglogical ? "shared_preload_libraries = 'bloomguard, pglogical'\n" : '';
my $pub = bg_node('publisher', $preload, allows_streaming => 'logical');
my $sub = bg_node('subscriber', $preload . "wal_level = logical\n");
$pub->start;
$sub->start;
# a server that approves output plugins by name (output_plugin_libraries)
# must approve pglogical's
if ($pglogical && $pub->safe_psql('postgres',
	q{SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'}) eq '1')
{
	$pub->safe_psql('postgres', q{
		ALTER SYSTEM SET output_plugin_libraries = pgoutput, test_decoding, pglogical_output;
		SELECT pg_reload_conf();
	});
}

# t1 goes through a built-in subscription, t2 through pglogical
for my $node ($pub, $sub)
{
	$node->safe_psql('postgres', q{
		CREATE TABLE t1 (id bigint PRIMARY KEY, v int);
		CREATE TABLE t2 (id bigint PRIMARY KEY, v int);
		CREATE EXTENSION bloomguard;
	});
	$node->safe_psql('postgres', q{CREATE EXTENSION pglogical}) if $pglogical;
}
$pub->safe_psql('postgres', q{
	INSERT INTO t1 SELECT g, 0 FROM generate_series(1, 3000) g;
	INSERT INTO t2 SELECT g, 0 FROM generate_series(1, 3000) g;
	CREATE PUBLICATION p FOR TABLE t1;
});

# the subscriber guards its empty tables first, and logs every lookup
$sub->safe_psql('postgres', q{
	SELECT bloomguard_attach('t1', 100000, 1e-9);
	SELECT bloomguard_attach('t2', 100000, 1e-9);
	CREATE TABLE lookups (tbl text, who text, k bigint, plain bool, guarded bool,
						  said_absent bool);
	CREATE FUNCTION look(tbl regclass, who text, k bigint) RETURNS void
	LANGUAGE plpgsql SET search_path = public SET enable_seqscan = off AS $$
	DECLARE
		plain bool;
	BEGIN
		EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE id = $1)', tbl)
		  INTO plain USING k;
		INSERT INTO lookups
		  VALUES (tbl::text, who, k, plain, guarded_exists(tbl, k),
				  bloomguard_check(tbl, k) = 'absent');
	END $$;
	CREATE FUNCTION look_trigger() RETURNS trigger
	LANGUAGE plpgsql SET search_path = public AS $$
	BEGIN
		PERFORM look(TG_RELID::regclass, TG_NAME || ' ' || TG_OP,
					 NEW.id + CASE TG_NAME WHEN 'bef_prev' THEN -1
										   WHEN 'zzz_next' THEN 1 ELSE 0 END);
		RETURN NEW;
	END $$;
});
for my $t ('t1', 't2')
{
	$sub->safe_psql('postgres', qq{
		CREATE TRIGGER aaa_self AFTER INSERT OR UPDATE ON $t
		  FOR EACH ROW EXECUTE FUNCTION look_trigger();
		CREATE TRIGGER bef_prev BEFORE INSERT ON $t
		  FOR EACH ROW EXECUTE FUNCTION look_trigger();
		CREATE TRIGGER zzz_next AFTER INSERT ON $t
		  FOR EACH ROW EXECUTE FUNCTION look_trigger();
		ALTER TABLE $t ENABLE ALWAYS TRIGGER aaa_self;
		ALTER TABLE $t ENABLE ALWAYS TRIGGER bef_prev;
		ALTER TABLE $t ENABLE ALWAYS TRIGGER zzz_next;
	});
}

# What the lookups of table $t by triggers $who found: how many found the
# row through the plain query and through guarded_exists(), and how many
# times bloomguard_check() said 'absent' (in the replica role it must say
# 'unknown': every count is checked against the rows there were)
sub lookups_of
{
	my ($t, $who) = @_;
	return $sub->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE plain) || ' plain, ' ||
			   count(*) FILTER (WHERE guarded) || ' guarded, ' ||
			   count(*) FILTER (WHERE said_absent) || ' absent'
		  FROM lookups WHERE tbl = '$t' AND who LIKE '$who%'});
}

# The lookups of $t by $who found the $n rows there were, every way.
sub lookups_are
{
	my ($t, $who, $n, $name) = @_;
	return is(lookups_of($t, $who), "$n plain, $n guarded, 0 absent", $name);
}

# The publisher's writes to table $t: 2010 new rows, 50 key updates.
sub publish_writes
{
	my ($t) = @_;
	$pub->safe_psql('postgres', qq{
		INSERT INTO $t SELECT g, 1 FROM generate_series(10001, 10010) g;
		INSERT INTO $t SELECT g, 1 FROM generate_series(20001, 22000) g;
		UPDATE $t SET id = id + 100000 WHERE id <= 50;
	});
	return;
}

# 1. the built-in table sync, then its apply: inserts, key updates
my $pubstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', qq{CREATE SUBSCRIPTION s CONNECTION '$pubstr' PUBLICATION p});
$sub->wait_for_subscription_sync($pub, 's');
# (trigger, rows it found, what it is), counted from the start
my @sync = (
	[ 'bef_prev', 2999, 'table sync: a BEFORE trigger looking up earlier rows of the copy' ],
	[ 'zzz_next', 2999, 'table sync: an AFTER trigger looking up later rows of the copy' ],
	[ 'aaa_self', 3000, 'table sync: an AFTER trigger before the feed trigger, each row' ]);
my @apply = (
	[ 'aaa_self INSERT', 5010,
	  'apply: an AFTER INSERT trigger before the feed trigger (2010 rows applied)' ],
	[ 'aaa_self UPDATE', 50, 'apply: an AFTER UPDATE trigger on a key update (50 rows)' ],
	[ 'bef_prev', 5007, 'apply: a BEFORE trigger looking up the row applied before' ]);
lookups_are('t1', @$_) for @sync;
publish_writes('t1');
$pub->wait_for_catchup('s');
lookups_are('t1', @$_) for @apply;

# 2. pglogical: its sync and its apply
SKIP:
{
	skip 'pglogical is not installed for this PostgreSQL', 4 unless $pglogical;
	my $substr = $sub->connstr . ' dbname=postgres';
	$pub->safe_psql('postgres', qq{
		SELECT pglogical.create_node(node_name := 'provider', dsn := '$pubstr');
		SELECT pglogical.replication_set_add_table('default', 't2');
	});
	$sub->safe_psql('postgres', qq{
		SELECT pglogical.create_node(node_name := 'subscriber', dsn := '$substr');
		SELECT pglogical.create_subscription(subscription_name := 'ps',
			provider_dsn := '$pubstr', replication_sets := ARRAY['default']);
	});
	$sub->safe_psql('postgres', q{SELECT pglogical.wait_for_subscription_sync_complete('ps')});
	is($sub->safe_psql('postgres', q{SELECT count(*) FROM t2}), '3000', 'pglogical: the table synchronized');
	like(lookups_of('t2', ''), qr/^([1-9]\d*) plain, \1 guarded, 0 absent$/,
		'pglogical sync: no wrong lookup');
	$sub->safe_psql('postgres', q{DELETE FROM lookups WHERE tbl = 't2'});
	publish_writes('t2');
	$sub->poll_query_until('postgres', q{
		SELECT count(*) = 5010 AND count(*) FILTER (WHERE id > 100000) = 50 FROM t2})
	  or die 'pglogical did not apply the changes';
	lookups_are('t2', 'aaa_self INSERT', 2010,
		'pglogical apply: an AFTER INSERT trigger before the feed trigger');
	lookups_are('t2', 'aaa_self UPDATE', 50,
		'pglogical apply: an AFTER UPDATE trigger on a key update');
}

# 3. what an ordinary session on the subscriber keeps: the shortcut, and
# every key in the filter
is($sub->safe_psql('postgres', q{
	SELECT count(*) FROM t1 WHERE bloomguard_check('t1', id) <> 'maybe' OR NOT guarded_exists('t1', id)}),
	'0', 'subscriber: every replicated key of t1 is in its filter');
is($sub->safe_psql('postgres', q{
	SELECT count(*) FROM t2 WHERE bloomguard_check('t2', id) <> 'maybe' OR NOT guarded_exists('t2', id)}),
	'0', 'subscriber: every replicated key of t2 is in its filter');
is($sub->safe_psql('postgres', q{SELECT bloomguard_check('t1', -1)}),
	'absent', 'subscriber: an ordinary session still takes the shortcut');
is($sub->safe_psql('postgres', q{
	SET session_replication_role = replica;
	SELECT bloomguard_check('t1', -1) || ' ' || guarded_exists('t1', -1)}),
	'unknown false', 'subscriber: a session as replica does not');

$sub->stop;
$pub->stop;
bg_check_log($pub);
# pglogical's apply leaks a relcache reference for every row it applies
# to a table with row triggers, bloomguard's or not (seen with pglogical
# 2.4 on 15, with a guard-less table and a trigger that does nothing; 17
# words the same warning "resource was not closed")
bg_check_log($sub, qr/pglogical apply .*WARNING:  (relcache reference leak: relation "t2" not closed|resource was not closed: relation "t2")/);
done_testing();
