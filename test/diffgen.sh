#!/usr/bin/env bash
# The differential query generator (test/diffgen.py) against a throwaway
# cluster with bloomguard preloaded: seeded random statements on guarded
# tables and their unguarded twins, with the planner path on and off,
# while a second session inserts new keys.  Any difference fails the run.
#
#   test/diffgen.sh                 # as root: installs what is missing,
#                                   # builds and installs bloomguard into
#                                   # $PG_CONFIG's installation, runs as
#                                   # the postgres user
#   DIFFGEN_STATEMENTS=3000 DIFFGEN_SEED=42 test/diffgen.sh
#   test/diffgen.sh --long          # ten times the statements
#   test/diffgen.sh --only r_errors,w_parallel   # these kinds only
#                                   # (test/diffgen.py lists them)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"

. "$top/test/lib/cluster.sh"
if [ "${1:-}" != --as-postgres ]; then
	bg_rerun_as_postgres test/diffgen.sh python3-psycopg2 "DIFFGEN_STATEMENTS DIFFGEN_SEED" "$@"
fi
shift
dir=$(mktemp -d /tmp/bloomguard-diffgen.XXXXXX)
trap 'bg_cluster_stop "$dir"' EXIT
bg_cluster_start "$dir" "bloomguard.maintenance_interval = 2" || exit 1
"$PG_BIN/psql" -X -q -d postgres -c "CREATE DATABASE diffgen" || exit 1

passed=0 failed=0
opts=()
[ -n "${DIFFGEN_SEED:-}" ] && opts+=(--seed "$DIFFGEN_SEED")
[ -n "${DIFFGEN_STATEMENTS:-}" ] && opts+=(--statements "$DIFFGEN_STATEMENTS")
echo "server: $("$PG_BIN/psql" -XAtc 'SELECT version()' postgres)"
if /usr/bin/python3 "$top/test/diffgen.py" "host=$PGHOST port=$PGPORT dbname=diffgen" "${opts[@]}" "$@"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi
if bg_log_crashes "$dir/server.log" >"$dir/crashes"; then
	passed=$((passed + 1))
else
	echo "CRASH: the server log says"
	cat "$dir/crashes"
	failed=$((failed + 1))
fi
nwarn=$(grep -c 'WARNING: ' "$dir/server.log")
if [ "$nwarn" != 0 ]; then
	echo "server log warnings: $nwarn"
	grep 'WARNING: ' "$dir/server.log" | sed 's/^.*WARNING: */  /' | sort | uniq -c | sort -rn | head -10
	failed=$((failed + 1))
fi
bg_cluster_finish "$dir" "$passed" "$failed"
