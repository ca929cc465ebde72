# Shared by the benchmarks test/bench/run.sh and test/bench/cold.sh, sourced
# once their parameters are checked: the clock and load at the start,
# progress lines, failures collected for the end, and the statistics.

T0=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# A progress line, with the seconds since the start.
say() { printf '[%4ds] %s\n' "$(($(date +%s) - T0))" "$*" >&2; }
# Stop the benchmark.
die() { say "FATAL: $*"; exit 1; }
# Record a failure (a wrong answer, a failed run); the benchmark goes on
# and exits non-zero at the end.
FAILS=()
bad() { FAILS+=("$*"); say "FAIL: $*"; }
trap 'say "error at line $LINENO: $BASH_COMMAND"' ERR

# The median of the numbers on stdin, one a line ("nan" if none).
median() {
	sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
# An awk expression's value.
calc() { awk "BEGIN {x = $*; print x}"; }

# The failures as a section of a results file (nothing if none).
fails_md() {
	[ ${#FAILS[@]} -gt 0 ] || return 0
	printf '\n## FAILURES\n\n'
	printf -- '- %s\n' "${FAILS[@]}"
}
# The end: exit 1, listing the failures, if there were any.
exit_on_fails() {
	[ ${#FAILS[@]} -gt 0 ] || return 0
	echo "FAILED:" >&2
	printf '  %s\n' "${FAILS[@]}" >&2
	exit 1
}
