#!/usr/bin/env bash
# PostgreSQL's own regression suite against a server with bloomguard
# preloaded, then every table with a primary key the suite leaves behind,
# guarded and checked (test/attach-all.py), then the suite once more with
# the extension created in "regression" before the tests run
# (pg_regress --load-extension, as TimescaleDB's pginstallcheck does).
#
#   test/core-regress.sh        # as root: installs what is missing, builds
#                               # and installs bloomguard into $PG_CONFIG's
#                               # installation, runs as the postgres user
#
# PG_SRC is a PostgreSQL source tree of the same major version as
# $PG_CONFIG (default: the one test/assert-build.sh unpacks); the suite's
# inputs (sql/, expected/, data/, parallel_schedule) come from it, pg_regress
# from $PG_CONFIG's pgxs (or the tree's own, when the installation has
# none), and the suite's C functions (regress.so, refint.so, autoinc.so) are
# built from the tree's sources against $PG_CONFIG.
#
# The closing line is "N passed, N failed" over: the first run, the attach
# check, the second run; the exit status is non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"
PG_SRC=${PG_SRC:-/var/cache/bloomguard-test/pg15-assert-src/tree}
export PG_SRC

. "$top/test/lib/cluster.sh"
if [ "${1:-}" != --as-postgres ]; then
	bg_rerun_as_postgres test/core-regress.sh python3-psycopg2 \
		"PG_SRC CORE_REGRESS_ONLY CORE_REGRESS_INTERVAL CORE_REGRESS_ANY_MINOR CORE_REGRESS_SKIP"
fi

regress=$PG_SRC/src/test/regress
src_version=$(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' "$PG_SRC/src/include/pg_config.h" 2>/dev/null)
src_major=${src_version%%.*}
pg_version=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9.]*\).*/\1/p')
echo "server:      PostgreSQL $pg_version ($PG_CONFIG)"
echo "suite from:  ${src_version:-nothing} ($PG_SRC)"
if [ -z "$src_version" ] || [ ! -f "$regress/parallel_schedule" ]; then
	echo "SKIPPED: $PG_SRC is not a configured PostgreSQL source tree (run test/assert-build.sh, or set PG_SRC)"
	echo "0 passed, 0 failed"
	exit 0
fi
if [ "$src_major" != "$PG_MAJOR" ]; then
	echo "SKIPPED: the suite is PostgreSQL $src_version's, the server is $pg_version (major versions differ)"
	echo "0 passed, 0 failed"
	exit 0
fi
# A minor release can change what the suite expects (15.20's psql and
# ruleutils print what 15.18's expected files do not), so only the same
# release is compared, unless CORE_REGRESS_ANY_MINOR=1.
if [ "$src_version" != "$pg_version" ]; then
	if [ "${CORE_REGRESS_ANY_MINOR:-}" != 1 ]; then
		echo "SKIPPED: the suite is PostgreSQL $src_version's, the server is $pg_version (set CORE_REGRESS_ANY_MINOR=1 to run it anyway)"
		echo "0 passed, 0 failed"
		exit 0
	fi
	echo "note:        minor versions differ ($src_version's suite against $pg_version)"
fi

pg_regress=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
[ -x "$pg_regress" ] || pg_regress=$regress/pg_regress
dir=$(mktemp -d /tmp/bloomguard-core.XXXXXX)
trap 'bg_cluster_stop "$dir"' EXIT
passed=0 failed=0 failed_names=""
result() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)) failed_names="$failed_names $1"
	fi
}

# the suite's C functions, built against this installation
mkdir -p "$dir/lib"
cp "$regress/regress.c" "$PG_SRC/contrib/spi/refint.c" "$PG_SRC/contrib/spi/autoinc.c" "$dir/lib/"
# (refint with REFINT_VERBOSE, as the tree's own makefile builds it: the
# triggers test expects its notices)
printf 'MODULES = regress refint autoinc\nPG_CPPFLAGS = -DREFINT_VERBOSE\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$dir/lib/Makefile"
if ! make -s -C "$dir/lib" PG_CONFIG="$PG_CONFIG" >"$dir/lib/build.log" 2>&1; then
	cat "$dir/lib/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# The launcher starts a worker in every database at each pass, and a
# database with a connected worker cannot be renamed or dropped: the
# suite's ALTER DATABASE ... RENAME and pg_regress's DROP DATABASE
# regression would fail now and then.  Only the pass at startup is kept
# (CORE_REGRESS_INTERVAL sets another bloomguard.maintenance_interval).
bg_cluster_start "$dir" "bloomguard.maintenance_interval = ${CORE_REGRESS_INTERVAL:-0}" || exit 1
bg_log "cluster in $dir ($("$PG_BIN/psql" -XAtc 'SHOW server_version' postgres))"

# Run the core suite; $1 names the run, the rest are pg_regress options.
core_suite() {
	local name=$1 start rc
	shift
	mkdir -p "$dir/$name"
	start=$(date +%s)
	"$pg_regress" --bindir="$PG_BIN" --dlpath="$dir/lib" --inputdir="$regress" \
		--outputdir="$dir/$name" --host="$PGHOST" --port="$PGPORT" \
		--max-concurrent-tests=20 "$@" >"$dir/$name/pg_regress.out" 2>&1
	rc=$?
	grep -E 'FAILED|failed|tests passed|tests? failed' "$dir/$name/pg_regress.out" | sed 's/^ *//' | head -40
	echo "$name: $(($(date +%s) - start)) s"
	if [ "$rc" != 0 ] && [ -s "$dir/$name/regression.diffs" ]; then
		echo "---- $name: regression.diffs (first 150 lines)"
		head -150 "$dir/$name/regression.diffs"
	fi
	return $rc
}

# Wait for the server to accept connections (after a crash, its restart).
server_up() {
	local i
	for i in $(seq 120); do
		"$PG_BIN/pg_isready" -q && return 0
		sleep 1
	done
	return 1
}

crashes() {
	if bg_log_crashes "$dir/server.log" >"$dir/crashes"; then
		return 0
	fi
	echo "---- crashes in the server log:"
	cat "$dir/crashes"
	return 1
}

echo
echo "== 1. the core suite, bloomguard preloaded, not created"
core_suite plain --schedule="$regress/parallel_schedule"
rc=$?
crashes || rc=1
result plain $rc

if [ -z "${CORE_REGRESS_ONLY:-}" ]; then
	echo
	echo "== 2. every table with a primary key the suite left in regression, guarded and checked"
	start=$(date +%s)
	/usr/bin/python3 "$top/test/attach-all.py" "dbname=regression host=$PGHOST port=$PGPORT"
	rc=$?
	echo "attach-all: $(($(date +%s) - start)) s"
	crashes || rc=1
	result attach-all $rc
fi

# The second run's skips: tests whose expected output lists objects of the
# whole database, which then include the extension's.  event_trigger
# lists every event trigger, and CREATE EXTENSION adds bloomguard_sql_drop.
skip="${CORE_REGRESS_SKIP-event_trigger}"
echo
echo "== 3. the core suite with CREATE EXTENSION bloomguard in regression first"
sed -E "$(for t in $skip; do printf 's/ %s( |$)/ /;' "$t"; done)" "$regress/parallel_schedule" |
	sed -E 's/^test: *$//' >"$dir/schedule-ext"
echo "skipped tests:${skip:- none}"
server_up
core_suite with-extension --schedule="$dir/schedule-ext" --load-extension=bloomguard
rc=$?
crashes || rc=1
result with-extension $rc

echo
echo "core-regress: PostgreSQL $pg_version${failed_names:+, failed:$failed_names}"
bg_cluster_finish "$dir" "$passed" "$failed"
