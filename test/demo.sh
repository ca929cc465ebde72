#!/usr/bin/env bash
# bloomguard demo: on a fresh Debian 12 machine (as root), installs what is
# missing, builds, starts a throwaway cluster with the extension preloaded,
# and shows the guard working on a file-hash lookup workload: a table of file
# hashes where 80% of the lookups ask for hashes that are not there.
#
#   bash test/demo.sh                    # build and install from this tree
#   DEMO_INSTALLED=1 bash test/demo.sh   # use the installed extension (a
#                                        # package): build and install nothing
#   DEMO_ROWS=N DEMO_SECONDS=S           # table size, seconds per run
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"

if [ "${DEMO_INSTALLED:-0}" = 1 ]; then
	if [ ! -f "$PG_PKGLIBDIR/bloomguard.so" ] || [ ! -f "$PG_SHAREDIR/extension/bloomguard.control" ]; then
		echo "DEMO_INSTALLED=1, but bloomguard is not installed for $PG_CONFIG" \
			"(no $PG_PKGLIBDIR/bloomguard.so or $PG_SHAREDIR/extension/bloomguard.control)" >&2
		exit 1
	fi
fi
if [ "$(id -u)" = 0 ]; then
	if [ "${DEMO_INSTALLED:-0}" = 1 ]; then
		bg_log "using the installed bloomguard ($PG_PKGLIBDIR/bloomguard.so)"
		bg_ensure_postgres_user
	else
		bg_install_deps
		bg_build_install "$top"
	fi
	work=$(bg_copy_for_postgres "$top")
	exec su postgres -s /bin/bash -c "cd '$work' && PG_CONFIG='$PG_CONFIG' DEMO_ROWS='${DEMO_ROWS:-}' DEMO_SECONDS='${DEMO_SECONDS:-}' '$work/test/demo.sh' --as-postgres"
fi

ROWS=${DEMO_ROWS:-200000}
SECONDS_PER_RUN=${DEMO_SECONDS:-5}
dir=$(mktemp -d /tmp/bloomguard-demo.XXXXXX)
port=$((20000 + RANDOM % 20000))
export PGHOST=$dir PGPORT=$port PGDATABASE=postgres
cleanup() { "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

bg_log "starting a throwaway cluster in $dir (port $port)"
"$PG_BIN/initdb" -D "$dir/data" -A trust >/dev/null
cat >> "$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'bloomguard'
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
shared_buffers = 256MB
CONF
"$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null

psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

bg_log "loading $ROWS file hashes (32-byte sha256 keys)"
psql <<SQL
CREATE EXTENSION bloomguard;
CREATE TABLE files (hash bytea PRIMARY KEY, seen_at timestamptz NOT NULL DEFAULT now());
INSERT INTO files (hash) SELECT sha256(int8send(g)) FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE files;
SQL

bg_log "attaching the guard"
psql -c "SELECT bloomguard_attach('files')"

# 80% of lookups for hashes we never stored, 20% for hashes we did
cat > "$dir/plain.sql" <<SQL
\set r random(1, 100)
\set n random(1, $ROWS)
\if :r <= 80
SELECT EXISTS (SELECT 1 FROM files WHERE hash = sha256(int8send(-(:n)::int8)));
\else
SELECT EXISTS (SELECT 1 FROM files WHERE hash = sha256(int8send((:n)::int8)));
\endif
SQL
cat > "$dir/guarded.sql" <<SQL
\set r random(1, 100)
\set n random(1, $ROWS)
\if :r <= 80
SELECT guarded_exists('files', sha256(int8send(-(:n)::int8)));
\else
SELECT guarded_exists('files', sha256(int8send((:n)::int8)));
\endif
SQL

tps() { "$PG_BIN/pgbench" -n -M prepared -c 2 -j 2 -T "$SECONDS_PER_RUN" -f "$1" 2>"$dir/pgbench.err" | sed -n 's/^tps = \([0-9.]*\).*/\1/p'; }
bg_log "running the 80/20 workload, plain and guarded, alternating ($SECONDS_PER_RUN s each)"
trap 'cat "$dir/pgbench.err" >&2' ERR
p1=$(tps "$dir/plain.sql"); g1=$(tps "$dir/guarded.sql")
p2=$(tps "$dir/plain.sql"); g2=$(tps "$dir/guarded.sql")
plain=$(awk -v a="$p1" -v b="$p2" 'BEGIN { print (a + b) / 2 }')
guarded=$(awk -v a="$g1" -v b="$g2" 'BEGIN { print (a + b) / 2 }')
printf '\n%-32s %12s\n' "80/20 lookups, 2 clients" "lookups/s"
printf '%-32s %12.0f\n' "plain EXISTS" "$plain" "guarded_exists" "$guarded"
printf '%-32s %12.2fx\n\n' "guarded / plain" "$(awk -v g="$guarded" -v p="$plain" 'BEGIN { print g / p }')"

bg_log "the same answers, and the health view"
psql <<SQL
SELECT count(*) FILTER (WHERE guarded_exists('files', sha256(int8send(g))) <> EXISTS (SELECT 1 FROM files WHERE hash = sha256(int8send(g)))) AS disagreements
  FROM generate_series(-2000, 2000) g;
\x on
SELECT relation, status, state, capacity, bits, hashes, memory_bytes, n_added,
       round(load::numeric, 3) AS load, round(fill::numeric, 3) AS fill,
       round(theoretical_fp::numeric, 5) AS theoretical_fp, checks, shortcuts,
       source_lookups, source_hits, fallbacks, round(observed_fp::numeric, 5) AS observed_fp
  FROM bloomguard_health;
SQL
