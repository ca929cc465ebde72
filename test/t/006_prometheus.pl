# doc/queries.yaml parses as a postgres_exporter query file, and every
# query runs and returns every column it declares as a metric.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../lib";
use BloomGuard::Test;
use FindBin;

# relative to this script: PGXS sets $ENV{TESTDIR} only up to 15
my $yaml = "$FindBin::RealBin/../../doc/queries.yaml";
ok(-f $yaml, 'doc/queries.yaml exists');

# parse with python3-yaml; print "name<TAB>columns<TAB>query" per query
my ($out, $err) = run_command([
	'python3', '-c', q{
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert isinstance(doc, dict) and doc, "top level must be a non-empty mapping"
for name, q in doc.items():
    assert "query" in q and "metrics" in q, name
    cols = []
    for m in q["metrics"]:
        (col, spec), = m.items()
        assert spec["usage"] in ("LABEL", "GAUGE", "COUNTER"), col
        assert spec.get("description"), col
        cols.append(col)
    print(name + "\t" + ",".join(cols) + "\t" + " ".join(q["query"].split()))
}, $yaml ]);
is($err, '', 'queries.yaml parses');

my $node = bg_node('prom');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomguard;
	CREATE TABLE t (id int PRIMARY KEY);
	INSERT INTO t SELECT generate_series(1, 1000);
});
$node->safe_psql('postgres', q{SELECT bloomguard_attach('t')});
$node->safe_psql('postgres', q{SELECT guarded_exists('t', g) FROM generate_series(1, 50) g});

my $nqueries = 0;
foreach my $line (split /\n/, $out)
{
	my ($name, $cols, $query) = split /\t/, $line;
	$nqueries++;
	my $res = $node->safe_psql('postgres', "COPY ($query) TO STDOUT WITH (FORMAT csv, HEADER)");
	my @lines = split /\n/, $res;
	my %have = map { $_ => 1 } split /,/, $lines[0];
	foreach my $c (split /,/, $cols)
	{
		ok($have{$c}, "query $name returns column $c");
	}
	is(scalar(@lines), 2, "query $name returns one row per guard");
	like($lines[1], qr/^t,ready,1,/, "query $name labels the guard and its state");
}
ok($nqueries > 0, 'at least one query');

$node->stop;
bg_check_log($node);
done_testing();
