#!/usr/bin/env bash
# bloomguard demo: on a fresh Debian 12 machine (as root), installs what is
# missing, builds, starts a throwaway cluster with the extension preloaded,
# loads a table of 10 million IDs and shows, in about two minutes:
#
#   1. the contract: guarded_exists() gives the same answers as EXISTS, and
#      when its filter cannot be trusted (the feed trigger was disabled) it
#      fails open, doing the real lookup;
#   2. where the guard pays: lookups against a primary key index larger
#      than what the server may cache (the server runs in a memory cgroup),
#      plain EXISTS and guarded_exists side by side, with the index blocks
#      and disk reads per lookup: absent keys, and 80% absent / 20% present;
#   3. the same lookups with the index in memory, the case where the guard
#      matters least.
#
#   bash test/demo.sh                    # build and install from this tree
#   DEMO_INSTALLED=1 bash test/demo.sh   # use the installed extension (a
#                                        # package): build and install nothing
#   DEMO_ROWS=N DEMO_SECONDS=S           # keys (10000000; 1000000 where the
#                                        # cold case cannot be shown), seconds
#                                        # per run (2)
#
# The memory cgroup needs root (test/lib/cgroup.sh, v1 or v2; it mounts a
# cgroup file system for the run where none is mounted).  Where none can
# be made, or the index would fit in the cache anyway (DEMO_ROWS
# small), the demo says so and shows the in-memory case only.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"
. "$top/test/lib/cgroup.sh"

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
	nocg=""
	bg_cg_create bloomguard-demo postgres || nocg=$BG_CG_WHY
	trap 'bg_cg_remove; rm -rf "$work"' EXIT
	rc=0
	(
		bg_cg_enter_client
		exec su postgres -s /bin/bash -c "cd '$work' && PG_CONFIG='$PG_CONFIG' DEMO_ROWS='${DEMO_ROWS:-}' DEMO_SECONDS='${DEMO_SECONDS:-}' BG_CG='$BG_CG' BG_CG_VERSION='$BG_CG_VERSION' DEMO_NOCG='$nocg' '$work/test/demo.sh' --as-postgres"
	) || rc=$?
	exit $rc
fi

cold=1
nocg=${DEMO_NOCG:-}
if [ -z "${BG_CG:-}" ]; then
	cold=0
	nocg=${nocg:-making a memory cgroup needs root}
fi
# without the cold case, a smaller table shows the in-memory case as well
ROWS=${DEMO_ROWS:-$([ "$cold" = 1 ] && echo 10000000 || echo 1000000)}
SECONDS_PER_RUN=${DEMO_SECONDS:-2}
ROUNDS=3
CLIENTS=2
SB_MB=32        # shared_buffers
CACHE_MB=32     # page cache the server may keep, beside its shared memory
dir=$(mktemp -d /tmp/bloomguard-demo.XXXXXX)
export PGHOST=$dir PGPORT=5432 PGDATABASE=postgres
cleanup() { "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

bg_log "starting a throwaway cluster in $dir${BG_CG:+, in memory cgroup $BG_CG}"
"$PG_BIN/initdb" -D "$dir/data" -A trust --no-sync >/dev/null
cat >> "$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'bloomguard'
listen_addresses = ''
unix_socket_directories = '$dir'
port = $PGPORT
shared_buffers = ${SB_MB}MB
# a throwaway cluster: loaded fast, not crash-safe
fsync = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = 4GB
maintenance_work_mem = 512MB
track_io_timing = on
CONF
# Start the server; with a cgroup, inside it: the server and everything it
# starts is charged there, the pages it caches and the shared memory it
# touches.
pg_start() {
	if [ -n "${BG_CG:-}" ]; then
		bg_cg_run "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
	else
		"$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
	fi
}
# no limit while loading
[ -z "${BG_CG:-}" ] || bg_cg_limit max
pg_start

psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
q() { psql -At -c "$1"; }
t0=$(date +%s)
bg_log "loading $ROWS IDs: the even numbers 2 .. $((2 * ROWS)); an odd ID is one never issued"
psql <<SQL
CREATE EXTENSION bloomguard;
BEGIN;
CREATE TABLE ids (id bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO ids (id) SELECT 2 * g FROM generate_series(1, $ROWS) g;
ALTER TABLE ids ADD PRIMARY KEY (id);
COMMIT;
VACUUM ANALYZE ids;
SQL
bg_log "attaching the guard (loaded in $(($(date +%s) - t0)) s)"
q "SELECT bloomguard_attach('ids')" >/dev/null

# ---------------------------------------------------------------- contract
echo
echo "1. The contract"
echo
n=$(q "SELECT count(*) FILTER (WHERE guarded_exists('ids', k) IS DISTINCT FROM EXISTS (SELECT 1 FROM ids WHERE id = k))
         FROM (SELECT (random() * (2 * $ROWS + 10))::bigint - 5 AS k FROM generate_series(1, 20000)) s")
echo "   guarded_exists() against EXISTS on 20,000 random IDs, present and absent: $n different answers"
psql -At >"$dir/contract.out" <<'SQL'
ALTER TABLE ids DISABLE TRIGGER bloomguard;
INSERT INTO ids (id) VALUES (-1);
SELECT state || ' (' || last_error || ')' FROM bloomguard_health WHERE relation = 'ids'::regclass;
SELECT bloomguard_check('ids', -1::bigint) || ' ' || guarded_exists('ids', -1::bigint) || ' ' || EXISTS (SELECT 1 FROM ids WHERE id = -1);
ALTER TABLE ids ENABLE ALWAYS TRIGGER bloomguard;
-- the background worker may have started the same rebuild
DO $$ BEGIN PERFORM bloomguard_rebuild('ids'); EXCEPTION WHEN object_in_use THEN NULL; END $$;
SQL
{ read -r state; read -r check g e; } <"$dir/contract.out"
for _ in $(seq 1 100); do
	[ "$(q "SELECT state FROM bloomguard_health WHERE relation = 'ids'::regclass")" = ready ] && break
	sleep 0.2
done
echo "   the feed trigger disabled, then ID -1 inserted: the filter does not have it, and the guard knows:"
echo "     state: $state"
echo "     bloomguard_check('ids', -1) = '$check' (the filter is not asked); guarded_exists = $g, as EXISTS = $e (the real lookup)"
echo "   trigger enabled again, bloomguard_rebuild(): state $(q "SELECT state FROM bloomguard_health WHERE relation = 'ids'::regclass")"
# the demo is also a test (test/package.sh, test/fresh-root.sh run it)
if [ "$n" != 0 ] || [ "$g" != true ] || [ "$e" != true ] || [ "$check" != unknown ] || [ "${state%% *}" != untrusted ]; then
	echo "THE CONTRACT IS BROKEN: see the lines above" >&2
	exit 1
fi

# ---------------------------------------------------------------- lookups
for s in miss mix; do
	case $s in
	miss) set="\\set id 2 * random(1, $ROWS) + 1" ;;
	mix) set=$(printf '%s\n' '\set r random(1, 100)' '\if :r <= 80' "\\set id 2 * random(1, $ROWS) + 1" \
		'\else' "\\set id 2 * random(1, $ROWS)" '\endif') ;;
	esac
	printf '%s\nSELECT EXISTS (SELECT 1 FROM ids WHERE id = :id::bigint);\n' "$set" >"$dir/$s.plain.sql"
	printf '%s\nSELECT guarded_exists(%s, :id::bigint);\n' "$set" "'ids'" >"$dir/$s.guarded.sql"
done
# index blocks read (shared-buffer misses) and the server's disk reads
counters() {
	printf '%s %s\n' "$(q "SELECT idx_blks_read FROM pg_statio_user_indexes WHERE indexrelid = 'ids_pkey'::regclass")" \
		"$([ -n "${BG_CG:-}" ] && bg_cg_read_bytes || echo 0)"
}
idle() {
	for _ in $(seq 1 100); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ] && return
		sleep 0.1
	done
}
# run NAME SECONDS: one pgbench run of $dir/NAME.sql; appends "NAME tps
# index-blocks-read disk-reads" (per lookup) to $dir/runs
run() {
	local opts="" a b out tps n
	case $1 in *.plain) opts="-c bloomguard.transparent=off" ;; esac
	idle
	a=$(counters)
	out=$(PGOPTIONS="$opts" "$PG_BIN/pgbench" -n -M prepared -c $CLIENTS -j $CLIENTS -T "$2" -f "$dir/$1.sql" 2>"$dir/pgbench.err") ||
		{ cat "$dir/pgbench.err" >&2; return 1; }
	idle
	b=$(counters)
	tps=$(printf '%s\n' "$out" | sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p')
	n=$(printf '%s\n' "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	echo "$a $b" | awk -v name="$1" -v tps="$tps" -v n="$n" '{print name, tps, ($3 - $1) / n, ($4 - $2) / 8192 / n}' >>"$dir/runs"
}
# rounds PHASE: ROUNDS rounds of the four runs, the order alternating
rounds() {
	local r a
	: >"$dir/runs"
	for r in $(seq 1 $ROUNDS); do
		if [ $((r % 2)) = 1 ]; then a="miss.plain miss.guarded mix.plain mix.guarded"; else a="mix.guarded mix.plain miss.guarded miss.plain"; fi
		for x in $a; do run "$x" "$SECONDS_PER_RUN"; done
	done
	mv "$dir/runs" "$dir/runs.$1"
}
# the median of the numbers on stdin; "min max" of them
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo, hi}'; }
# the median of column $3 of phase $1's runs of $2
med() { awk -v w="$2" -v c="$3" '$1 == w {print $c}' "$dir/runs.$1" | median; }
# phase $1's lookups/s of $2.guarded over $2.plain, round by round (the
# runs alternate, so the nth of each belong to one round)
ratios() {
	paste <(awk -v w="$2.guarded" '$1 == w {print $2}' "$dir/runs.$1") <(awk -v w="$2.plain" '$1 == w {print $2}' "$dir/runs.$1") |
		awk '$2 > 0 {print $1 / $2}'
}
# the table of phase $1; $2: show the blocks read
table() {
	local w label
	printf '   %-26s %14s %16s   %s\n' "" "plain EXISTS" "guarded_exists" "guarded / plain (min-max)"
	for w in miss mix; do
		[ $w = miss ] && label="absent keys" || label="80% absent, 20% present"
		printf '   %-26s %12.0f/s %14.0f/s %8.2fx (%.2f-%.2f)\n' "$label" "$(med "$1" $w.plain 2)" "$(med "$1" $w.guarded 2)" \
			"$(ratios "$1" $w | median)" $(ratios "$1" $w | range)
		if [ "$2" = 1 ]; then
			printf '   %-26s %14.3f %16.3f\n' "  index blocks read" "$(med "$1" $w.plain 3)" "$(med "$1" $w.guarded 3)"
			printf '   %-26s %14.3f %16.3f\n' "  disk reads (8 kB)" "$(med "$1" $w.plain 4)" "$(med "$1" $w.guarded 4)"
		fi
	done
}

idx=$(q "SELECT pg_relation_size('ids_pkey')")
heap=$(q "SELECT pg_relation_size('ids')")
filter=$(q "SELECT memory_bytes FROM bloomguard_health WHERE relation = 'ids'::regclass")
if [ "$cold" = 1 ] && [ "$idx" -lt $((2 * (SB_MB + CACHE_MB) * 1048576)) ]; then
	cold=0
	nocg="the index ($((idx >> 20)) MB, DEMO_ROWS=$ROWS) is not several times what the server would cache ($((SB_MB + CACHE_MB)) MB)"
fi
if [ "$cold" = 1 ]; then
	# the limit: the shared memory in use, the processes' private memory
	# and a backend per client, and CACHE_MB of page cache; the kernel
	# evicts the rest of what the server has cached
	q "CHECKPOINT" >/dev/null
	sync
	# (the rebuild above had two filters at once: pool memory, once
	# touched, stays charged, so the shared memory charged counts if larger)
	shm=$(q "SELECT (SELECT setting::bigint * 1048576 FROM pg_settings WHERE name = 'shared_memory_size')
		- (SELECT max_memory + max_memory / 8 - memory_in_use FROM bloomguard_guard_stats() LIMIT 1)")
	charged=$(bg_cg_stat | awk '$1 == "shmem" {print $2}')
	[ "$charged" -le "$shm" ] || shm=$charged
	anon=$(bg_cg_stat | awk '$1 == "anon" {print $2}')
	limit=$((shm + anon + CLIENTS * 4 * 1048576 + CACHE_MB * 1048576))
	ok=0
	for _ in 1 2 3 4 5; do bg_cg_limit "$limit" 2>/dev/null && { ok=1; break; }; sleep 1; done
	if [ "$ok" = 0 ]; then
		cold=0
		nocg="the kernel could not bring the server under $((limit >> 20)) MB"
	fi
fi
echo
if [ "$cold" = 1 ]; then
	echo "2. Where the guard pays: the index does not fit in memory"
	echo
	echo "   $ROWS IDs: index $((idx >> 20)) MB, table $((heap >> 20)) MB. The server runs in a memory cgroup"
	echo "   capped at $((limit >> 20)) MB: shared_buffers $SB_MB MB, the filter $((filter >> 20)) MB, the rest of its shared"
	echo "   memory and processes, and $CACHE_MB MB of page cache. So most lookups that reach the index read"
	echo "   it from the disk, as on a server whose tables outgrew its memory."
	bg_log "measuring: pgbench -M prepared, $CLIENTS clients, $ROUNDS rounds of ${SECONDS_PER_RUN} s per run, the ratio the median of the rounds'"
	run miss.plain 2
	rounds cold
	echo
	echo "   lookups/s (medians of the rounds), and per lookup:"
	table cold 1
else
	echo "2. The cold case is not shown: $nocg."
	[ -z "${BG_CG:-}" ] && echo "   (As root, with cgroups available, the demo caps the server's memory below the index's size.)"
fi

# ---------------------------------------------------------------- in memory
# shared_buffers large enough for the index, the server restarted (the
# filter is saved at the shutdown and loaded at the start), and every
# index page read into them (an index-only scan of it all)
[ -z "${BG_CG:-}" ] || bg_cg_limit max
"$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
echo "shared_buffers = $((idx / 1048576 + 128))MB" >>"$dir/data/postgresql.conf"
pg_start
for _ in $(seq 1 100); do
	[ "$(q "SELECT state FROM bloomguard_health WHERE relation = 'ids'::regclass")" = ready ] && break
	sleep 0.2
done
psql -At -c "SET enable_seqscan = off" -c "SET bloomguard.transparent = off" -c "SELECT count(*) FROM ids WHERE id > 0" >/dev/null
bg_log "measuring the in-memory case"
run miss.plain 1
run miss.guarded 1
rounds warm
echo
echo "3. The same lookups with the index in memory: the case where the guard matters least."
echo "   shared_buffers $((idx / 1048576 + 128)) MB, the whole index in them: a miss the guard saves"
echo "   is a B-tree descent through cached pages, a few microseconds of a round trip that costs tens."
echo
table warm 0
echo
bg_log "the health view"
psql <<SQL
\x on
SELECT relation, status, state, capacity, memory_bytes, n_added, round(load::numeric, 3) AS load,
       round(theoretical_fp::numeric, 5) AS theoretical_fp, checks, shortcuts,
       source_lookups, source_hits, fallbacks, round(observed_fp::numeric, 5) AS observed_fp
  FROM bloomguard_health;
SQL
