#!/usr/bin/perl
# check-logs.pl LOG EXPECTED_DIR...
#
# Fails (exit 1) if the server log of a regression or isolation run has a
# WARNING, ERROR, FATAL or PANIC whose message appears in no expected
# output file: a warning nobody expected, or an error raised where no test
# asked for one (a background worker's, for instance).  Messages the tests
# provoke on purpose are in their expected output, with the same text.
# PostgreSQL's own shutdown messages are expected, and so is the refusal of
# a client connection that pg_regress's start-up probe makes too early.
use strict;
use warnings;

my ($log, @dirs) = @ARGV;
die "usage: $0 LOG EXPECTED_DIR...\n" unless defined $log && @dirs;
unless (-e $log)
{
	print "check-logs: no log at $log\n";
	exit 1;
}

# every "SEVERITY:  message" line of the expected outputs
my %expected;
foreach my $dir (@dirs)
{
	foreach my $file (glob("$dir/*.out"))
	{
		open(my $fh, '<', $file) or die "$file: $!";
		while (my $line = <$fh>)
		{
			$expected{"$1:$2"} = 1
			  if $line =~ /\b(WARNING|ERROR|FATAL|PANIC):  (.*?)\s*$/;
		}
		close $fh;
	}
}

my @allowed = (
	qr/^FATAL:terminating connection due to administrator command$/,
	qr/^FATAL:terminating background worker ".*" due to administrator command$/,
	qr/^FATAL:terminating autovacuum process due to administrator command$/,
);

my @bad;
open(my $fh, '<', $log) or die "$log: $!";
while (my $line = <$fh>)
{
	next unless $line =~ /\b(WARNING|ERROR|FATAL|PANIC):  (.*?)\s*$/ || $line =~ /TRAP:/;
	if ($line =~ /TRAP:/)
	{
		push @bad, $line;
		next;
	}
	my $key = "$1:$2";
	$key =~ s/ at character \d+$//;	# the log adds the error position
	# pg_regress polls the starting server with psql; a loaded machine
	# lets one probe arrive before the server accepts connections
	next if $key eq 'FATAL:the database system is starting up' && $line =~ /client backend/;
	next if $expected{$key};
	next if grep { $key =~ $_ } @allowed;
	push @bad, $line;
}
close $fh;

if (@bad)
{
	print "check-logs: ", scalar(@bad), " unexpected message(s) in $log:\n";
	print "  $_" foreach @bad[0 .. ($#bad < 29 ? $#bad : 29)];
	exit 1;
}
print "check-logs: $log has no unexpected warning or error\n";
exit 0;
