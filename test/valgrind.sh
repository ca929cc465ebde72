#!/usr/bin/env bash
# The regression tests against a server run under Valgrind, as pgvector's
# CI does: every invalid read or write, every use of an uninitialised value
# and every access to memory a memory context has freed (the server must be
# built with -DUSE_VALGRIND, as test/assert-build.sh builds it, for the
# last) fails the run.
#
#   test/valgrind.sh            # as root: installs what is missing, builds
#                               # and installs bloomguard into $PG_CONFIG's
#                               # installation, runs as the postgres user
#   test/valgrind.sh --long     # every regression file but the
#                               # timing-dependent ones
#   VALGRIND_TESTS="planner" test/valgrind.sh    # these files only
#
# The postmaster runs under valgrind --trace-children=yes with a log file
# per process (%p): the backends, the background workers and the
# processes they fork each write their own.  A child's errors do not reach
# the postmaster's exit status (so --error-exitcode is no use), so every
# log's "ERROR SUMMARY" is read, and any error marker counts too (a
# process that never exited cleanly writes no summary).  Suppressions:
# PostgreSQL's own src/tools/valgrind.supp from the source tree PG_SRC
# (by default the one test/assert-build.sh unpacks), which must be of the
# server's major version.
#
# CI (test/run-all.sh --assert) runs the files of the planner path and the
# lookups: planner, lookup and discard.  --long runs every other file too,
# except those whose outcome depends on timing, which Valgrind's slowdown
# (some 20 to 50 times) changes: build (a 1 ms statement timeout must land
# in a rebuild) and hardening (a 100 ms deadlock timeout, a 30 s statement
# timeout).  The regression files' own expected output must still match.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"
PG_SRC=${PG_SRC:-/var/cache/bloomguard-test/pg15-assert-src/tree}
export PG_SRC

. "$top/test/lib/cluster.sh"
if [ "${1:-}" != --as-postgres ]; then
	bg_rerun_as_postgres test/valgrind.sh valgrind "PG_SRC VALGRIND_TESTS VALGRIND_FLAGS" "$@"
fi
shift
long=0
for arg in "$@"; do
	case $arg in
	--long) long=1 ;;
	*) echo "usage: $0 [--long]" >&2; exit 2 ;;
	esac
done

supp=$PG_SRC/src/tools/valgrind.supp
src_version=$(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' "$PG_SRC/src/include/pg_config.h" 2>/dev/null)
if [ ! -f "$supp" ] || [ "${src_version%%.*}" != "$PG_MAJOR" ]; then
	echo "SKIPPED: no src/tools/valgrind.supp of PostgreSQL $PG_MAJOR in $PG_SRC (run test/assert-build.sh, or set PG_SRC)"
	echo "0 passed, 0 failed"
	exit 0
fi
if ! "$PG_CONFIG" --cppflags | grep -q -- '-DUSE_VALGRIND'; then
	echo "note: $PG_CONFIG was not built with -DUSE_VALGRIND: accesses to freed palloc memory go unseen"
fi

# the files: CI's, or every one but the timing-dependent ones
all=$(sed -n 's/^REGRESS = //p' "$top/Makefile")
if [ -n "${VALGRIND_TESTS:-}" ]; then
	tests=$VALGRIND_TESTS
elif [ "$long" = 1 ]; then
	tests=$(for t in $all; do case " build hardening " in *" $t "*) ;; *) echo "$t" ;; esac; done)
else
	tests="planner lookup discard"
fi
tests=$(echo $tests)

dir=$(mktemp -d /tmp/bloomguard-valgrind.XXXXXX)
mkdir -p "$dir/vg" "$dir/out"
"$PG_BIN/initdb" -D "$dir/data" -A trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log"
	echo "0 passed, 1 failed"
	exit 1
}
# the regression tests' own settings, and a server that waits for Valgrind
cat "$top/test/bloomguard.conf" >>"$dir/data/postgresql.conf"
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = 5432
log_line_prefix = '%m [%p] %q%a '
# every statement with its process id, to find the one a process's
# Valgrind log (named by the same id) reports errors in
log_statement = 'all'
# Valgrind runs the server some 20 to 50 times slower
authentication_timeout = '10min'
wal_sender_timeout = 0
checkpoint_timeout = '1h'
# and an autovacuum's ANALYZE, late by as much, would change the plans the
# expected output shows (a 100-row table analyzed in the middle of
# planner.sql gets a sequential scan)
autovacuum = off
CONF
export PGHOST=$dir PGPORT=5432

# the flags of PostgreSQL's wiki page and pgvector's CI; VALGRIND_FLAGS adds
flags=(--trace-children=yes --leak-check=no --gen-suppressions=all
	--suppressions="$supp" --time-stamp=yes --num-callers=30
	--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END
	--log-file="$dir/vg/%p.log")
# shellcheck disable=SC2206
[ -n "${VALGRIND_FLAGS:-}" ] && flags+=($VALGRIND_FLAGS)
echo "server:   $("$PG_CONFIG" --version) ($PG_CONFIG), under $(valgrind --version)"
echo "tests:    $tests"
start=$(date +%s)
valgrind "${flags[@]}" "$PG_BIN/postgres" -D "$dir/data" >"$dir/server.log" 2>&1 &
pm=$!
stop() {
	"$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w -t 600 stop >/dev/null 2>&1 ||
		"$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	wait "$pm" 2>/dev/null
}
trap stop EXIT
up=0
for _ in $(seq 600); do
	if "$PG_BIN/pg_isready" -q; then up=1; break; fi
	kill -0 "$pm" 2>/dev/null || break
	sleep 1
done
if [ "$up" != 1 ]; then
	echo "FAILED: the server did not start under Valgrind"
	tail -20 "$dir/server.log"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "startup:  $(($(date +%s) - start)) s"

passed=0 failed=0
pg_regress=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
t0=$(date +%s)
# shellcheck disable=SC2086
(cd "$top" && "$pg_regress" --bindir="$PG_BIN" --inputdir=. --outputdir="$dir/out" \
	--host="$PGHOST" --port="$PGPORT" --dbname=contrib_regression $tests) >"$dir/out/pg_regress.out" 2>&1
rc=$?
grep -E '^(ok|not ok|test |     )|tests passed|failed' "$dir/out/pg_regress.out" | sed 's/^/  /'
echo "regression: $(($(date +%s) - t0)) s"
if [ "$rc" = 0 ]; then
	passed=$((passed + 1))
else
	echo "FAILED: the regression files' output differs under Valgrind"
	[ -s "$dir/out/regression.diffs" ] && head -100 "$dir/out/regression.diffs"
	failed=$((failed + 1))
fi
stop
trap - EXIT

# every process's log: its ERROR SUMMARY, and error markers (a process
# killed before it could exit writes no summary)
logs=$(find "$dir/vg" -name '*.log' | wc -l)
bad=$(grep -l -E 'ERROR SUMMARY: [1-9]|VALGRINDERROR-BEGIN' "$dir"/vg/*.log 2>/dev/null)
nerr=$(cat "$dir"/vg/*.log 2>/dev/null | sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
nctx=$(cat "$dir"/vg/*.log 2>/dev/null | grep -c 'VALGRINDERROR-BEGIN')
nosum=$(grep -L 'ERROR SUMMARY' "$dir"/vg/*.log 2>/dev/null | wc -l)
echo "valgrind: $logs process logs, $nerr errors ($nctx reports), $nosum logs without a summary"
if [ -z "$bad" ] && [ "$logs" -gt 0 ]; then
	passed=$((passed + 1))
else
	echo "FAILED: Valgrind found errors (logs in $dir/vg):"
	for f in $bad; do
		echo "---- $f (statements of process $(basename "$f" .log): grep '\\[$(basename "$f" .log)\\]' $dir/server.log)"
		# the error reports themselves, with the statement that was running
		sed -n '/VALGRINDERROR-BEGIN/,/VALGRINDERROR-END/p' "$f" | head -60
	done | head -300
	failed=$((failed + 1))
fi
if bg_log_crashes "$dir/server.log" >"$dir/crashes"; then
	passed=$((passed + 1))
else
	echo "CRASH: the server log says"
	cat "$dir/crashes"
	failed=$((failed + 1))
fi
echo "valgrind.sh: $(($(date +%s) - start)) s in all"
bg_cluster_finish "$dir" "$passed" "$failed"
