#!/usr/bin/env bash
# bloomguard cold-index benchmark: lookups against primary key indexes
# several times larger than what the server may cache, the case the guard
# is for (an absent key then costs a read from the disk, which the filter
# saves).
#
#   test/bench/cold.sh                  # full run, about 45 minutes on 2 cores, 20 GB of disk
#   BENCH_SMOKE=1 test/bench/cold.sh    # 1M bigint keys, about a minute (CI)
#
# Needs root: the server runs in a memory cgroup (test/lib/cgroup.sh) that
# the script makes and removes, cgroup v1 (a "memory" hierarchy) or v2
# (the unified hierarchy, as on a stock Debian 12).  Where none can be
# made (not root, a container without cgroup access, a chroot) it says so
# and exits 0 without measuring.  As root it installs what is missing
# (gnuplot), builds and installs bloomguard if it is not installed, and
# runs the measurements as the postgres user, whose own server it moves
# into the cgroup at start.  On PostgreSQL 16 and later, debug_io_direct =
# data is another way to read from the disk; this script does not use it.
#
# For each key type (bigint, and a 32-byte sha256 as bytea) and each size:
# load the table (even keys present, odd keys absent, so misses land on the
# same index pages as hits), attach the guard, then lower the cgroup's
# limit to shared memory + processes + a fixed page-cache budget, so that
# the kernel evicts the table and its index down to that budget.  Then, in
# interleaved rounds (the order rotating), pgbench -M prepared runs SELECT 1,
# and absent keys, the 80/20 mix and present keys with guarded_exists()
# and with plain EXISTS (bloomguard.transparent off).  The filter stays
# allocated in both arms.  Per run: lookups/s, index and heap blocks read
# per lookup (pg_statio_user_indexes / _tables: shared-buffer misses, OS
# cache hits included), 8 kB device reads per lookup (read_bytes of the
# server's processes, /proc/PID/io), read time per lookup
# (track_io_timing), refaults (memory.stat).  Writes test/bench/out/:
# results-cold.md, cold.csv, cold.png.  Exits non-zero on a wrong answer,
# a failed run, a guarded miss that reads the index, or a cold case that
# is not cold (plain misses that do not reach the disk).
#
# Parameters (environment):
#   BENCH_COLD_SIZES    keys per table            ("10000000 40000000 100000000"; smoke 1000000)
#   BENCH_COLD_KEYS     key types                 ("bigint bytea"; smoke bigint)
#   BENCH_COLD_CLIENTS  pgbench clients           (2)
#   BENCH_COLD_SWEEP    more client counts, absent keys and the mix only ("1 4 8"; smoke "")
#   BENCH_COLD_SWEEP_SIZES  sizes the sweep runs at (40000000)
#   BENCH_COLD_SWEEP_KEYS   key types the sweep runs for (bigint)
#   BENCH_COLD_SECONDS  seconds per run           (10; smoke 1)
#   BENCH_COLD_WARM     seconds of warm-up per script and size, 0 for none (3; smoke 0)
#   BENCH_COLD_ROUNDS   interleaved rounds        (3; smoke 1)
#   BENCH_COLD_SHARED_BUFFERS  shared_buffers     (64MB; smoke 2MB)
#   BENCH_COLD_CACHE_MB  page-cache budget in the limit, MB (160; smoke 4)
#   BENCH_COLD_BACKEND_MB  allowance per client's backend in the limit, MB (4)
#   BENCH_OUT           output directory          (test/bench/out)
#   BENCH_KEEP=1        keep the temporary cluster directory
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/test/lib/common.sh"
. "$top/test/lib/cgroup.sh"

OUT=${BENCH_OUT:-$here/out}
CMD_SHOWN=${BENCH_CMD:-"${BENCH_SMOKE:+BENCH_SMOKE=$BENCH_SMOKE }test/bench/cold.sh"}
IO_DIRECT_NOTE="on PostgreSQL 16 and later, debug_io_direct = data in postgresql.conf is another way to make every read reach the disk"

# ---------------------------------------------------------------- as root
if [ "$(id -u)" = 0 ]; then
	bg_install_deps gnuplot-nox || exit 1
	if [ ! -f "$PG_PKGLIBDIR/bloomguard.so" ]; then
		bg_build_install "$top" || exit 1
	fi
	if ! bg_cg_create bloomguard-cold postgres; then
		echo "cold-index benchmark SKIPPED: no memory cgroup: $BG_CG_WHY ($IO_DIRECT_NOTE)"
		exit 0
	fi
	stage=$(mktemp -d /tmp/bgcold-stage.XXXXXX)
	trap 'bg_cg_remove; rm -rf "$stage"' EXIT
	mkdir -p "$stage/test/bench" "$stage/test/lib" "$stage/out"
	cp "$here/cold.sh" "$here/lib.sh" "$stage/test/bench/"
	cp "$top/test/lib/common.sh" "$top/test/lib/cgroup.sh" "$stage/test/lib/"
	chown -R postgres:postgres "$stage"
	chmod 755 "$stage"
	envs="PG_CONFIG=$(printf %q "$PG_CONFIG") BENCH_OUT=$(printf %q "$stage/out") BENCH_CMD=$(printf %q "$CMD_SHOWN")"
	envs="$envs BG_CG=$(printf %q "$BG_CG") BG_CG_VERSION=$BG_CG_VERSION"
	for v in $(compgen -e | grep '^BENCH_' || true); do
		case $v in BENCH_OUT | BENCH_CMD) continue ;; esac
		envs="$envs $v=$(printf %q "${!v}")"
	done
	bg_log "memory cgroup v$BG_CG_VERSION: $BG_CG"
	rc=0
	(
		bg_cg_enter_client
		exec su postgres -s /bin/bash -c "cd $stage && env $envs bash $stage/test/bench/cold.sh"
	) || rc=$?
	mkdir -p "$OUT"
	rm -f "$OUT"/results-cold.md "$OUT"/cold.csv "$OUT"/cold.png "$OUT"/cold*.dat "$OUT"/cold-partial.tsv
	cp -r "$stage/out/." "$OUT/"
	[ "$rc" = 0 ] && bg_log "results in $OUT"
	exit "$rc"
fi

if [ -z "${BG_CG:-}" ]; then
	echo "cold-index benchmark SKIPPED: no memory cgroup: making one needs root (run test/bench/cold.sh as root; $IO_DIRECT_NOTE)"
	exit 0
fi

# ---------------------------------------------------------------- parameters
SMOKE=${BENCH_SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
	d_sizes=1000000 d_keys=bigint d_sweep="" d_seconds=1 d_warm=0 d_rounds=1 d_sb=2MB d_cache=4
else
	d_sizes="10000000 40000000 100000000" d_keys="bigint bytea" d_sweep="1 4 8" d_seconds=10 d_warm=3 d_rounds=3 d_sb=64MB d_cache=160
fi
SIZES=${BENCH_COLD_SIZES:-$d_sizes}
KEYS=${BENCH_COLD_KEYS:-$d_keys}
CLIENTS=${BENCH_COLD_CLIENTS:-2}
SWEEP=${BENCH_COLD_SWEEP-$d_sweep}
SWEEP_SIZES=${BENCH_COLD_SWEEP_SIZES:-40000000}
SWEEP_KEYS=${BENCH_COLD_SWEEP_KEYS:-bigint}
DUR=${BENCH_COLD_SECONDS:-$d_seconds}
WARM=${BENCH_COLD_WARM:-$d_warm}
ROUNDS=${BENCH_COLD_ROUNDS:-$d_rounds}
SB=${BENCH_COLD_SHARED_BUFFERS:-$d_sb}
CACHE_MB=${BENCH_COLD_CACHE_MB:-$d_cache}
BACKEND_MB=${BENCH_COLD_BACKEND_MB:-4}

for v in CLIENTS DUR ROUNDS CACHE_MB BACKEND_MB; do
	[[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -ge 1 ] || { echo "BENCH_COLD parameter $v must be a whole number >= 1" >&2; exit 2; }
done
[[ $WARM =~ ^[0-9]+$ ]] || { echo "BENCH_COLD_WARM must be a whole number" >&2; exit 2; }
for n in $SIZES $SWEEP $SWEEP_SIZES; do
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "BENCH_COLD_SIZES, _SWEEP, _SWEEP_SIZES: whole numbers" >&2; exit 2; }
done
for k in $KEYS; do
	case $k in bigint | bytea) ;; *) echo "BENCH_COLD_KEYS: bigint and/or bytea" >&2; exit 2 ;; esac
done
[[ $SB =~ ^[0-9]+(kB|MB|GB)$ ]] || { echo "BENCH_COLD_SHARED_BUFFERS: a size such as 64MB" >&2; exit 2; }

# T0, LOAD0, say, die, bad (FAILS), median, calc
. "$here/lib.sh"

[ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG"
for tool in initdb pg_ctl psql pgbench; do
	[ -x "$PG_BIN/$tool" ] || die "missing $PG_BIN/$tool"
done
[ -f "$PG_PKGLIBDIR/bloomguard.so" ] || die "bloomguard is not installed (run as root, or make install)"
[ -w "$BG_CG/cgroup.procs" ] || die "cannot move a process into $BG_CG (cgroup.procs is not writable by $(id -un))"
mkdir -p "$OUT"
[ -w "$OUT" ] || die "cannot write to $OUT"
rm -f "$OUT"/results-cold.md "$OUT"/cold.csv "$OUT"/cold.png "$OUT"/cold*.dat "$OUT"/cold-partial.tsv

# ---------------------------------------------------------------- cluster
tmp=$(mktemp -d /tmp/bgcold.XXXXXX)
chmod 700 "$tmp"
raw=$tmp/raw.tsv
: >"$raw"
pg_started=0
cleanup() {
	local rc=$?
	trap - ERR
	if [ "$pg_started" = 1 ]; then
		"$PG_BIN/pg_ctl" -D "$tmp/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			"$PG_BIN/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	# what was measured, if the results were not written
	if [ -s "$raw" ] && [ ! -f "$OUT/cold.csv" ]; then cp "$raw" "$OUT/cold-partial.tsv"; fi
	if [ "${BENCH_KEEP:-0}" = 1 ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

max_size=0
for n in $SIZES; do [ "$n" -gt "$max_size" ] && max_size=$n; done
# the filters' pool: 2.5 bytes a key (capacity twice the rows, 1%), one at a time
maxmem_mb=$((max_size * 25 / 10 / 1048576 + 16))
max_clients=$CLIENTS
for c in $SWEEP; do [ "$c" -gt "$max_clients" ] && max_clients=$c; done

say "initdb in $tmp"
"$PG_BIN/initdb" -D "$tmp/data" -A trust -E UTF8 --locale=C --no-sync >"$tmp/initdb.log" 2>&1 ||
	{ cat "$tmp/initdb.log" >&2; die "initdb failed"; }
cat >>"$tmp/data/postgresql.conf" <<EOF
# --- bloomguard cold-index bench
shared_preload_libraries = 'bloomguard'
listen_addresses = ''
unix_socket_directories = '$tmp'
port = 5432
shared_buffers = $SB
max_connections = $((max_clients + 10))
bloomguard.max_memory = ${maxmem_mb}MB
# one filter per table, at load 0.5: no resize
bloomguard.auto_rebuild = off
fsync = off
synchronous_commit = off
full_page_writes = off
# tables created and loaded in one transaction skip the WAL
wal_level = minimal
max_wal_senders = 0
autovacuum = off
max_wal_size = 8GB
checkpoint_timeout = 1h
jit = off
max_parallel_workers_per_gather = 0
maintenance_work_mem = 1GB
max_parallel_maintenance_workers = 2
track_io_timing = on
log_line_prefix = '%m [%p] '
EOF
export PGHOST=$tmp PGPORT=5432
bg_cg_limit max
# Start the server in the cgroup: the postmaster and every process it
# starts are charged there, for the pages they cache and the shared memory
# they touch first.
pg_start() {
	bg_cg_run "$PG_BIN/pg_ctl" -D "$tmp/data" -l "$tmp/pg.log" -w -t 120 start >/dev/null ||
		{ tail -20 "$tmp/pg.log" >&2; die "could not start PostgreSQL"; }
	pg_started=1
}
pg_start
say "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), in memory cgroup v$BG_CG_VERSION $BG_CG"

export PGOPTIONS="-c client_min_messages=warning"
PSQL=("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE bench" >/dev/null
sq() { "${PSQL[@]}" -d bench "$@"; }
sq -c "CREATE EXTENSION bloomguard" >/dev/null

# ---------------------------------------------------------------- measuring
sc=$tmp/scripts
mkdir -p "$sc"
# the pgbench script for key type $1, workload $2 (miss hit), arm $3
# (plain guarded), $4 keys.  The 80/20 mix runs the two workloads' scripts
# in one pgbench, weighted 80 and 20, so that pgbench reports each one's
# latency within the mix.
write_script() {
	local ty=$1 w=$2 arm=$3 n=$4 key tbl col
	if [ "$ty" = bigint ]; then tbl=t col=id key=":id::bigint"; else tbl=h col=k key="sha256(int8send(:id::bigint))"; fi
	{
		case $w in
		miss) echo "\\set id 2 * random(1, $n) + 1" ;;
		hit) echo "\\set id 2 * random(1, $n)" ;;
		esac
		if [ "$arm" = plain ]; then
			echo "SELECT EXISTS (SELECT 1 FROM $tbl WHERE $col = $key);"
		else
			echo "SELECT guarded_exists('$tbl', $key);"
		fi
	} >"$sc/$ty.$w.$arm.sql"
}
echo 'SELECT 1;' >"$sc/select1.sql"
# pgbench's -f arguments for key type $1, arm $2 (select1, or WORKLOAD.ARM)
pgb_files() {
	case $2 in
	select1) echo "-f $sc/select1.sql" ;;
	mix.*) echo "-f $sc/$1.miss.${2#mix.}.sql@80 -f $sc/$1.hit.${2#mix.}.sql@20" ;;
	*) echo "-f $sc/$1.$2.sql" ;;
	esac
}

# Wait until no client backend but ours is left (a backend reports its
# statistics as it exits, and its reads then count in the postmaster's
# read_bytes), then print index blocks read, index blocks hit, heap blocks
# read and read time (ms).  In one session: on a server this short of
# memory, a new backend reads its catalogs from the disk, so every
# connection counts.
sq >/dev/null <<'SQL'
CREATE FUNCTION bench_counters() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. 300 LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
		                       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid());
		IF i = 300 THEN
			RAISE EXCEPTION 'backends still running 30 s after pgbench';
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RETURN concat_ws(' ',
		(SELECT coalesce(sum(idx_blks_read), 0) FROM pg_statio_user_indexes),
		(SELECT coalesce(sum(idx_blks_hit), 0) FROM pg_statio_user_indexes),
		(SELECT coalesce(sum(heap_blks_read), 0) FROM pg_statio_user_tables),
		(SELECT blk_read_time FROM pg_stat_database WHERE datname = current_database()));
END
$$;
SQL
io_counters() { sq -c "SELECT bench_counters()"; }
cg_counter() { bg_cg_stat | awk -v k="$1" '$1 == k {print $2}'; }

# CPU time of the server's backends that have exited (the postmaster's
# children's user + system time), in clock ticks
server_ticks() { awk '{print $16 + $17}' "/proc/$(head -1 "$tmp/data/postmaster.pid")/stat"; }

# run_one "FILES" CLIENTS SECONDS PGOPTIONS_EXTRA: pgbench -M prepared with
# the -f arguments FILES; prints "tps lookups idx_read idx_hit heap_read
# dev_bytes read_ms refaults server_ticks client_seconds latency_ms
# latency1_ms latency2_ms" (the latencies of the first and second script,
# or 0 with one script)
run_one() {
	local files=$1 c=$2 dur=$3 opts=${4:-} a b ra rb fa fb ta tb out tps n failed lat
	a=$(io_counters) || return 1
	ra=$(bg_cg_read_bytes) fa=$(cg_counter refaults) ta=$(server_ticks)
	# shellcheck disable=SC2086
	if ! out=$(PGOPTIONS="$PGOPTIONS $opts" "$PG_BIN/pgbench" -n -M prepared -c "$c" -j "$c" -T "$dur" $files bench 2>&1 && times); then
		printf '%s\n' "$out" | grep -iE 'error|abort|fatal' | head -3 >&2
		return 1
	fi
	b=$(io_counters) || return 1
	rb=$(bg_cg_read_bytes) fb=$(cg_counter refaults) tb=$(server_ticks)
	tps=$(printf '%s\n' "$out" | sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p')
	n=$(printf '%s\n' "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	failed=$(printf '%s\n' "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
	[ -n "$tps" ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "${failed:-0}" = 0 ] || return 1
	# the last line, from times: the user and system time of the
	# subshell's children, pgbench ("0m1.234s 0m0.567s")
	lat=$(printf '%s\n' "$out" | awk '
		/^latency average = / {all = $4}
		/^SQL script [0-9]+:/ {s = $3 + 0}
		/^ - latency average = / && s {l[s] = $5}
		{last = $0}
		END {split(last, t, " "); split(t[1], u, /[ms]/); split(t[2], y, /[ms]/)
			printf "%s %s %s %s", u[1] * 60 + u[2] + y[1] * 60 + y[2], all + 0, l[1] + 0, l[2] + 0}')
	echo "$a $b" | awk -v tps="$tps" -v n="$n" -v rd=$((rb - ra)) -v rf=$((fb - fa)) -v st=$((tb - ta)) -v lat="$lat" \
		'{print tps, n, $5 - $1, $6 - $2, $7 - $3, rd, $8 - $4, rf, st, lat}'
}
# rec TYPE SIZE CLIENTS WORKLOAD ARM ROUND "run_one output": one line of raw.tsv:
# 7 lookups/s, then per lookup 8 idx_read 9 idx_hit 10 heap_read 11 device
# reads (8 kB) 12 read time µs 13 refaults (4 kB pages) 14 server CPU µs 15
# pgbench CPU µs; 16 latency µs, 17 and 18 the latencies of the absent and
# the present keys within the mix
rec() {
	local tps n ir ih hr db rms rf st cl la l1 l2
	read -r tps n ir ih hr db rms rf st cl la l1 l2 <<<"$7"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$tps" \
		"$(awk -v n="$n" -v ir="$ir" -v ih="$ih" -v hr="$hr" -v db="$db" -v rms="$rms" -v rf="$rf" -v st="$st" \
			-v hz="$(getconf CLK_TCK)" -v cl="$cl" -v la="$la" -v l1="$l1" -v l2="$l2" \
			'BEGIN {printf "%.4f\t%.4f\t%.4f\t%.4f\t%.2f\t%.4f\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f",
				ir / n, ih / n, hr / n, db / 8192 / n, 1000 * rms / n, rf / n, 1e6 * st / hz / n, 1e6 * cl / n,
				1000 * la, 1000 * l1, 1000 * l2}')" >>"$raw"
}
# measure TYPE SIZE CLIENTS ROUND ARMS...: one run of each arm ("select1" or
# WORKLOAD.ARM), in the order given
measure() {
	local ty=$1 n=$2 c=$3 r=$4 a out opts
	shift 4
	for a in "$@"; do
		case $a in *.plain) opts="-c bloomguard.transparent=off" ;; *) opts="" ;; esac
		if out=$(run_one "$(pgb_files "$ty" "$a")" "$c" "$DUR" "$opts"); then
			rec "$ty" "$n" "$c" "${a%.*}" "$([ "$a" = select1 ] && echo select1 || echo "${a#*.}")" "$r" "$out"
		else
			bad "pgbench $ty $n keys, $c clients, $a, round $r"
		fi
	done
}
# the arms in an order that rotates with round $1
rotate() { local r=$1; shift; local a=("$@") i; for ((i = 0; i < ${#a[@]}; i++)); do printf '%s ' "${a[(i + r) % ${#a[@]}]}"; done; }

# guarded_exists must equal EXISTS; no present key may be 'absent'
check_answers() { # type size
	local tbl col key out
	if [ "$1" = bigint ]; then tbl=t col=id key=x; else tbl=h col=k key="sha256(int8send(x))"; fi
	out=$(sq -F ' ' -c "
	SELECT count(*) FILTER (WHERE g IS DISTINCT FROM e), count(*) FILTER (WHERE g IS DISTINCT FROM present),
	       count(*) FILTER (WHERE NOT present AND NOT g)
	  FROM (SELECT x BETWEEN 2 AND 2 * $2 AND x % 2 = 0 AS present, guarded_exists('$tbl', $key) AS g,
	               EXISTS (SELECT 1 FROM $tbl WHERE $col = $key) AS e
	          FROM (SELECT floor(random() * (2 * $2 + 6))::bigint - 2 AS x FROM generate_series(1, 2000)) s) q")
	read -r d1 d2 _ <<<"$out"
	[ "$d1" = 0 ] && [ "$d2" = 0 ] || bad "$1, $2 keys: guarded_exists differs from EXISTS on $d1 of 2000 keys, from the truth on $d2"
}

SIZES_DONE=""
declare -A INFO
for ty in $KEYS; do
	for n in $SIZES; do
		if [ "$ty" = bigint ]; then tbl=t col=id expr="2 * g" coldef="id bigint NOT NULL"; need=$((n * 110)); else
			tbl=h col=k expr="sha256(int8send(2 * g))" coldef="k bytea NOT NULL"; need=$((n * 200)); fi
		avail=$(($(df -Pk "$tmp" | awk 'NR == 2 {print $4}') * 1024))
		if [ "$avail" -lt "$need" ]; then
			bad "$ty, $n keys: skipped, $((avail >> 20)) MB free on the disk, about $((need >> 20)) MB needed"
			continue
		fi
		# ------------------------------------------------ load (no limit)
		bg_cg_limit max
		t1=$(date +%s)
		say "$ty, $n keys: loading"
		if ! sq >/dev/null <<EOF; then
BEGIN;
CREATE TABLE $tbl ($coldef);
INSERT INTO $tbl SELECT $expr FROM generate_series(1, $n) g;
ALTER TABLE $tbl ADD PRIMARY KEY ($col);
COMMIT;
VACUUM (ANALYZE) $tbl;
SELECT bloomguard_attach('$tbl');
EOF
			bad "$ty, $n keys: loading or attaching failed; skipped"
			sq -c "DROP TABLE IF EXISTS $tbl" >/dev/null || true
			continue
		fi
		INFO[$ty.$n.load_s]=$(($(date +%s) - t1))
		check_answers "$ty" "$n"
		[ ${#FAILS[@]} = 0 ] || die "wrong answers; not benchmarking"
		read -r INFO[$ty.$n.index] INFO[$ty.$n.heap] INFO[$ty.$n.filter] <<<"$(sq -F ' ' -c "
			SELECT pg_relation_size('${tbl}_pkey'), pg_relation_size('$tbl'), memory_bytes
			  FROM bloomguard_health WHERE relation = '$tbl'::regclass")"
		for w in miss hit; do
			for arm in plain guarded; do write_script "$ty" "$w" "$arm" "$n"; done
		done

		# ------------------------------------------------ the limit
		# A new server, whose shared memory holds this table's filter only
		# (loaded from the file saved at the shutdown): an earlier, larger
		# filter freed in the pool would stay charged to the cgroup.
		"$PG_BIN/pg_ctl" -D "$tmp/data" -m fast -w -t 120 stop >/dev/null
		pg_start
		for i in $(seq 1 600); do
			state=$(sq -c "SELECT state FROM bloomguard_health WHERE relation = '$tbl'::regclass")
			[ "$state" = ready ] && break
			sleep 0.5
		done
		if [ "$state" != ready ]; then
			bad "$ty, $n keys: the guard is $state 5 minutes after a restart; skipped"
			sq -c "DROP TABLE $tbl" >/dev/null
			continue
		fi
		# the limit: the shared memory in use (the segment less the
		# filters' pool not in use, never touched, so never charged), the
		# private memory of the server's processes now and an allowance
		# for each client's backend, and the page cache budget
		sync
		shm=$(sq -c "SELECT (SELECT setting::bigint * 1048576 FROM pg_settings WHERE name = 'shared_memory_size')
			- (SELECT max_memory + max_memory / 8 - memory_in_use FROM bloomguard_guard_stats() LIMIT 1)")
		anon=$(cg_counter anon)
		limit=$((shm + anon + max_clients * BACKEND_MB * 1048576 + CACHE_MB * 1048576))
		INFO[$ty.$n.shm]=$shm INFO[$ty.$n.limit]=$limit INFO[$ty.$n.anon]=$anon
		ok=0
		for i in 1 2 3 4 5; do
			bg_cg_limit "$limit" 2>/dev/null && { ok=1; break; }
			sleep 2
		done
		if [ "$ok" = 0 ]; then
			bad "$ty, $n keys: the cgroup's usage ($(($(bg_cg_usage) >> 20)) MB) could not be brought under $((limit >> 20)) MB; skipped"
			sq -c "DROP TABLE $tbl" >/dev/null
			continue
		fi
		say "$ty, $n keys: index $((INFO[$ty.$n.index] >> 20)) MB, table $((INFO[$ty.$n.heap] >> 20)) MB, filter $((INFO[$ty.$n.filter] >> 20)) MB; server limited to $((limit >> 20)) MB (shared memory $((shm >> 20)) MB, processes $((anon >> 20)) MB + $max_clients x $BACKEND_MB MB, page cache $CACHE_MB MB)"

		# ------------------------------------------------ warm-up, rounds
		arms="select1 miss.plain miss.guarded mix.plain mix.guarded hit.plain hit.guarded"
		for a in $arms; do
			[ "$a" = select1 ] || [ "$WARM" = 0 ] && continue
			case $a in *.plain) opts="-c bloomguard.transparent=off" ;; *) opts="" ;; esac
			run_one "$(pgb_files "$ty" "$a")" "$CLIENTS" "$WARM" "$opts" >/dev/null || bad "warm-up $ty $n $a"
		done
		for r in $(seq 1 "$ROUNDS"); do
			say "$ty, $n keys: round $r/$ROUNDS, $CLIENTS clients"
			# shellcheck disable=SC2046
			measure "$ty" "$n" "$CLIENTS" "$r" $(rotate "$r" $arms)
		done
		for c in $SWEEP; do
			case " $SWEEP_SIZES " in *" $n "*) ;; *) continue ;; esac
			case " $SWEEP_KEYS " in *" $ty "*) ;; *) continue ;; esac
			[ "$c" = "$CLIENTS" ] && continue
			for r in $(seq 1 "$ROUNDS"); do
				say "$ty, $n keys: round $r/$ROUNDS, $c clients"
				# shellcheck disable=SC2046
				measure "$ty" "$n" "$c" "$r" $(rotate "$r" select1 miss.plain miss.guarded mix.plain mix.guarded)
			done
		done
		bg_cg_stat >"$tmp/memstat.$ty.$n"
		INFO[$ty.$n.usage]=$(bg_cg_usage)
		if grep -qE 'terminated by signal|out of memory' "$tmp/pg.log"; then
			bad "$ty, $n keys: a server process was killed or ran out of memory (see the server log): the limit is too tight"
		fi
		check_answers "$ty" "$n"
		INFO[$ty.$n.secs]=$(($(date +%s) - t1))
		sq -c "DROP TABLE $tbl" >/dev/null
		SIZES_DONE="$SIZES_DONE $ty.$n"
	done
done
bg_cg_limit max

# ---------------------------------------------------------------- results
# the values of column $6 (7 = tps, 8 = idx read, 9 idx hit, 10 heap read,
# 11 dev reads, 12 read µs, 13 refaults) of type $1 size $2 clients $3
# workload $4 arm $5
vals() { awk -F'\t' -v t="$1" -v n="$2" -v c="$3" -v w="$4" -v a="$5" -v col="$6" '$1 == t && $2 == n && $3 == c && $4 == w && $5 == a {print $col}' "$raw"; }
med() { vals "$@" | median; }
# per-round ratios of tps, arm $5 over arm $6
ratios() {
	awk -F'\t' -v t="$1" -v n="$2" -v c="$3" -v w="$4" -v a="$5" -v b="$6" '
		$1 == t && $2 == n && $3 == c && $4 == w && $5 == a {A[$6] = $7}
		$1 == t && $2 == n && $3 == c && $4 == w && $5 == b {B[$6] = $7}
		END {for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r]}' "$raw"
}
# "median× (min–max)"
rfx() {
	local l
	l=$(ratios "$@" | sort -g)
	[ -n "$l" ] || { echo "n/a"; return; }
	printf '%s\n' "$l" | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		if (NR == 1) printf "%.2f×", m; else printf "%.2f× (%.2f–%.2f)", m, a[1], a[NR]}'
}
# the per-round ratios of guarded to SELECT 1 of the same round
ratio_s1() {
	awk -F'\t' -v t="$1" -v n="$2" -v c="$3" -v w="$4" '
		$1 == t && $2 == n && $3 == c && $4 == w && $5 == "guarded" {A[$6] = $7}
		$1 == t && $2 == n && $3 == c && $4 == "select1" {B[$6] = $7}
		END {for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r]}' "$raw" | median
}
# med's value, formatted
m0() { f0 "$(med "$@")"; }
m3() { f3 "$(med "$@")"; }
f0() { awk -v x="$1" 'BEGIN {if (x == "nan" || x == "") print "n/a"; else printf "%.0f", x}'; }
f2() { awk -v x="$1" 'BEGIN {if (x == "nan" || x == "") print "n/a"; else printf "%.2f", x}'; }
f3() { awk -v x="$1" 'BEGIN {if (x == "nan" || x == "") print "n/a"; else printf "%.3f", x}'; }
mb() { awk -v x="$1" 'BEGIN {printf "%.0f MB", x / 1048576}'; }
millions() { awk -v x="$1" 'BEGIN {printf "%gM", x / 1e6}'; }
keyname() { [ "$1" = bigint ] && echo "bigint" || echo "32-byte bytea (sha256)"; }
wname() { case $1 in miss) echo "absent keys" ;; mix) echo "80% absent / 20% present" ;; hit) echo "present keys" ;; esac; }

# the checks that make the run meaningful
for s in $SIZES_DONE; do
	ty=${s%.*} n=${s#*.}
	g=$(med "$ty" "$n" "$CLIENTS" miss guarded 8)
	[ "$(calc "$g > 0.01")" = 1 ] && bad "$ty, $n keys: guarded absent keys read $(f3 "$g") index blocks per lookup (expected about 0: the filter answers them)"
	p=$(med "$ty" "$n" "$CLIENTS" miss plain 11)
	[ "$(calc "$p < 0.3")" = 1 ] && bad "$ty, $n keys: plain absent keys made only $(f3 "$p") device reads per lookup: the index is not cold (the cgroup does not limit the page cache?)"
done

md=$tmp/table.md
{
	for ty in $KEYS; do
		have=0
		for s in $SIZES_DONE; do [ "${s%.*}" = "$ty" ] && have=1; done
		[ "$have" = 1 ] || continue
		echo "### $(keyname "$ty") keys, $CLIENTS clients"
		echo
		echo "| keys | index / table | server limit | workload | plain EXISTS | guarded_exists | guarded / plain | index blocks read per lookup, plain / guarded | device reads per lookup, plain / guarded | read time per lookup, plain / guarded |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		for s in $SIZES_DONE; do
			[ "${s%.*}" = "$ty" ] || continue
			n=${s#*.}
			for w in miss mix hit; do
				echo "| $(millions "$n") | $(mb "${INFO[$ty.$n.index]}") / $(mb "${INFO[$ty.$n.heap]}") | $(mb "${INFO[$ty.$n.limit]}") | $(wname "$w") | $(m0 "$ty" "$n" "$CLIENTS" "$w" plain 7)/s | $(m0 "$ty" "$n" "$CLIENTS" "$w" guarded 7)/s | $(rfx "$ty" "$n" "$CLIENTS" "$w" guarded plain) | $(m3 "$ty" "$n" "$CLIENTS" "$w" plain 8) / $(m3 "$ty" "$n" "$CLIENTS" "$w" guarded 8) | $(m3 "$ty" "$n" "$CLIENTS" "$w" plain 11) / $(m3 "$ty" "$n" "$CLIENTS" "$w" guarded 11) | $(m0 "$ty" "$n" "$CLIENTS" "$w" plain 12) / $(m0 "$ty" "$n" "$CLIENTS" "$w" guarded 12) µs |"
			done
			echo "| $(millions "$n") | | | \`SELECT 1\`, same server | $(m0 "$ty" "$n" "$CLIENTS" select1 select1 7)/s | | guarded absent keys = $(f2 "$(ratio_s1 "$ty" "$n" "$CLIENTS" miss)")× of it | | | |"
		done
		echo
	done
	echo "### The 80/20 mix against its parts"
	echo
	echo "Each side's mix should run at 1 / (0.8 / (absent keys' lookups/s) + 0.2 / (present keys' lookups/s)), each measured alone in the same rounds: \"expected\". The latencies are pgbench's averages per statement, alone and within the mix (the mix runs the two scripts weighted 80 and 20); CPU is per lookup, the server's backends (user + system) and pgbench's own."
	echo
	echo "| keys | side | absent keys alone: latency, CPU server + pgbench | present keys alone | within the mix: absent / present latency | mix: CPU per lookup | mix lookups/s: expected / measured |"
	echo "|---|---|---|---|---|---|---|"
	for s in $SIZES_DONE; do
		ty=${s%.*} n=${s#*.}
		for arm in plain guarded; do
			m=$(med "$ty" "$n" "$CLIENTS" miss "$arm" 7) h=$(med "$ty" "$n" "$CLIENTS" hit "$arm" 7)
			echo "| $(keyname "$ty") $(millions "$n") | $arm | $(m0 "$ty" "$n" "$CLIENTS" miss "$arm" 16) µs, $(m0 "$ty" "$n" "$CLIENTS" miss "$arm" 14) + $(m0 "$ty" "$n" "$CLIENTS" miss "$arm" 15) µs | $(m0 "$ty" "$n" "$CLIENTS" hit "$arm" 16) µs, $(m0 "$ty" "$n" "$CLIENTS" hit "$arm" 14) + $(m0 "$ty" "$n" "$CLIENTS" hit "$arm" 15) µs | $(m0 "$ty" "$n" "$CLIENTS" mix "$arm" 17) / $(m0 "$ty" "$n" "$CLIENTS" mix "$arm" 18) µs | $(m0 "$ty" "$n" "$CLIENTS" mix "$arm" 14) + $(m0 "$ty" "$n" "$CLIENTS" mix "$arm" 15) µs | $(f0 "$(calc "1 / (0.8 / $m + 0.2 / $h)")") / $(m0 "$ty" "$n" "$CLIENTS" mix "$arm" 7) |"
		done
		pm=$(med "$ty" "$n" "$CLIENTS" miss plain 7) ph=$(med "$ty" "$n" "$CLIENTS" hit plain 7)
		gm=$(med "$ty" "$n" "$CLIENTS" miss guarded 7) gh=$(med "$ty" "$n" "$CLIENTS" hit guarded 7)
		echo "| | guarded / plain | | | | | expected $(f2 "$(calc "(0.8 / $pm + 0.2 / $ph) / (0.8 / $gm + 0.2 / $gh)")")×, measured $(rfx "$ty" "$n" "$CLIENTS" mix guarded plain) |"
	done
	echo
	if [ -n "$SWEEP" ]; then
		echo "### Client counts"
		echo
		echo "| keys | clients | \`SELECT 1\` | absent keys: plain / guarded | guarded / plain | 80/20 mix: plain / guarded | guarded / plain |"
		echo "|---|---|---|---|---|---|---|"
		for s in $SIZES_DONE; do
			ty=${s%.*} n=${s#*.}
			case " $SWEEP_SIZES " in *" $n "*) ;; *) continue ;; esac
			case " $SWEEP_KEYS " in *" $ty "*) ;; *) continue ;; esac
			for c in $(printf '%s\n' $SWEEP "$CLIENTS" | sort -un); do
				echo "| $(keyname "$ty") $(millions "$n") | $c | $(m0 "$ty" "$n" "$c" select1 select1 7)/s | $(m0 "$ty" "$n" "$c" miss plain 7) / $(m0 "$ty" "$n" "$c" miss guarded 7)/s | $(rfx "$ty" "$n" "$c" miss guarded plain) | $(m0 "$ty" "$n" "$c" mix plain 7) / $(m0 "$ty" "$n" "$c" mix guarded 7)/s | $(rfx "$ty" "$n" "$c" mix guarded plain) |"
			done
		done
		echo
	fi
	echo "### The server's memory"
	echo
	echo "| keys | load + attach | shared memory in the limit | server processes' private memory in the limit | limit | in use at the end | memory.stat at the end: page cache / anon / shmem / mapped | refaults per lookup, plain absent keys (4 kB pages) |"
	echo "|---|---|---|---|---|---|---|---|"
	for s in $SIZES_DONE; do
		ty=${s%.*} n=${s#*.}
		st=$tmp/memstat.$ty.$n
		g() { awk -v k="$1" '$1 == k {printf "%.0f MB", $2 / 1048576}' "$st"; }
		echo "| $(keyname "$ty") $(millions "$n") | ${INFO[$ty.$n.load_s]} s | $(mb "${INFO[$ty.$n.shm]}") (filter $(mb "${INFO[$ty.$n.filter]}")) | $(mb "${INFO[$ty.$n.anon]}") + $max_clients × $BACKEND_MB MB | $(mb "${INFO[$ty.$n.limit]}") | $(mb "${INFO[$ty.$n.usage]}") | $(g cache) / $(g anon) / $(g shmem) / $(g mapped) | $(f2 "$(med "$ty" "$n" "$CLIENTS" miss plain 13)") |"
	done
} >"$md"

# CSV: every run
{
	echo "key_type,keys,clients,workload,arm,round,lookups_per_s,idx_blks_read,idx_blks_hit,heap_blks_read,device_reads,read_us,refaults,server_cpu_us,pgbench_cpu_us,latency_us,latency_absent_in_mix_us,latency_present_in_mix_us"
	awk -F'\t' 'BEGIN {OFS = ","} {$1 = $1; print}' "$raw"
} >"$OUT/cold.csv"

# plot: lookups/s and blocks read per lookup against the table's size
plot_note=""
if command -v gnuplot >/dev/null; then
	for ty in $KEYS; do
		for s in $SIZES_DONE; do
			[ "${s%.*}" = "$ty" ] || continue
			n=${s#*.}
			printf '%s' "$(calc "$n / 1e6")"
			for w in miss mix hit; do
				for arm in plain guarded; do printf ' %s %s' "$(med "$ty" "$n" "$CLIENTS" "$w" "$arm" 7)" "$(med "$ty" "$n" "$CLIENTS" "$w" "$arm" 8)"; done
			done
			printf ' %s\n' "$(med "$ty" "$n" "$CLIENTS" select1 select1 7)"
		done >"$tmp/cold-$ty.dat"
	done
	ntypes=$(echo $KEYS | wc -w)
	{
		cat <<EOF
set terminal pngcairo size 1200,$((420 * ntypes)) font ",10" noenhanced
set output '$OUT/cold.png'
set multiplot layout $ntypes,2 title "Cold index: the server in a memory cgroup (shared memory + $CACHE_MB MB of page cache), pgbench -M prepared, $CLIENTS clients, median of $ROUNDS rounds"
set grid
set key top right font ",9"
set xlabel "keys (millions)"
set xtics nomirror
set logscale y
EOF
		for ty in $KEYS; do
			cat <<EOF
set title "$(keyname "$ty") keys: lookups/s"
set ylabel "lookups/s"
set logscale y
set yrange [*:*]
plot '$tmp/cold-$ty.dat' using 1:14 with linespoints lc rgb '#e0a030' dt 2 title 'SELECT 1', \
     '' using 1:4 with linespoints lc rgb '#2a7ab0' pt 7 title 'guarded, absent', \
     '' using 1:2 with linespoints lc rgb '#2a7ab0' pt 6 dt 3 title 'plain, absent', \
     '' using 1:8 with linespoints lc rgb '#30a050' pt 7 title 'guarded, 80/20', \
     '' using 1:6 with linespoints lc rgb '#30a050' pt 6 dt 3 title 'plain, 80/20', \
     '' using 1:12 with linespoints lc rgb '#b03030' pt 7 title 'guarded, present', \
     '' using 1:10 with linespoints lc rgb '#b03030' pt 6 dt 3 title 'plain, present'
set title "$(keyname "$ty") keys: index blocks read per lookup"
set ylabel "index blocks read per lookup"
unset logscale y
set yrange [0:*]
plot '$tmp/cold-$ty.dat' using 1:5 with linespoints lc rgb '#2a7ab0' pt 7 title 'guarded, absent', \
     '' using 1:3 with linespoints lc rgb '#2a7ab0' pt 6 dt 3 title 'plain, absent', \
     '' using 1:9 with linespoints lc rgb '#30a050' pt 7 title 'guarded, 80/20', \
     '' using 1:7 with linespoints lc rgb '#30a050' pt 6 dt 3 title 'plain, 80/20', \
     '' using 1:13 with linespoints lc rgb '#b03030' pt 7 title 'guarded, present', \
     '' using 1:11 with linespoints lc rgb '#b03030' pt 6 dt 3 title 'plain, present'
EOF
		done
		echo "unset multiplot"
	} >"$tmp/cold.gp"
	gnuplot "$tmp/cold.gp" 2>"$tmp/gnuplot.err" || { plot_note="gnuplot failed: $(head -3 "$tmp/gnuplot.err")"; bad "$plot_note"; }
else
	plot_note="no plot: gnuplot is not installed (run as root to install gnuplot-nox)"
fi

pgver=$("$PG_BIN/postgres" --version | awk '{print $3}')
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
memg=$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
runtime=$(($(date +%s) - T0))
{
	echo "# bloomguard cold-index benchmark results"
	echo
	echo "Command: \`$CMD_SHOWN\` (from the top of the tree, as root)."
	echo "Machine: $(nproc) cores ($cpu), ${memg} GiB, $(df -PT "$tmp" | awk 'NR == 2 {print $2}') on $(df -P "$tmp" | awk 'NR == 2 {print $1}'), kernel $(uname -r), PostgreSQL $pgver, memory cgroup v$BG_CG_VERSION; $(date -u '+%Y-%m-%d %H:%M UTC'); runtime ${runtime}s; load average $LOAD0 before the run, $(cut -d' ' -f1-3 /proc/loadavg) after it."
	echo "Parameters: BENCH_COLD_SIZES=\"$SIZES\" BENCH_COLD_KEYS=\"$KEYS\" BENCH_COLD_CLIENTS=$CLIENTS BENCH_COLD_SWEEP=\"$SWEEP\" BENCH_COLD_SWEEP_SIZES=\"$SWEEP_SIZES\" BENCH_COLD_SWEEP_KEYS=\"$SWEEP_KEYS\" BENCH_COLD_SECONDS=$DUR BENCH_COLD_WARM=$WARM BENCH_COLD_ROUNDS=$ROUNDS BENCH_COLD_SHARED_BUFFERS=$SB BENCH_COLD_CACHE_MB=$CACHE_MB BENCH_COLD_BACKEND_MB=$BACKEND_MB${SMOKE:+ BENCH_SMOKE=$SMOKE}."
	echo
	cat "$md"
	echo "## How it was measured"
	echo
	echo "- The server runs in a memory cgroup made by the script: started inside it, so that every page it caches and the shared memory it touches are charged there. Each table is loaded with no limit; then the server is restarted (its shared memory then holds this table's filter only, loaded from the file saved at the shutdown), and the limit is lowered to the shared memory in use (shared_memory_size less the filters' pool not in use: shared_buffers $SB, the filter, PostgreSQL's own structures) + the private memory of the server's processes at that moment + $BACKEND_MB MB for each client's backend + $CACHE_MB MB of page cache. The kernel then evicts the cgroup's page cache down to the limit, and keeps it there: the index, several times that size, is read from the disk."
	echo "- Tables: t(id bigint PRIMARY KEY) holding the even numbers 2..2N, h(k bytea PRIMARY KEY) holding sha256(int8send(2g)), one at a time (each dropped after its rounds); absent keys are the odd numbers in between (and their hashes). Loaded in the transaction that creates them (wal_level minimal, no WAL), the key added after the rows, vacuumed (plain EXISTS gets index-only scans, and the guard's probe reads the heap only where the visibility map does not vouch), guarded with the default capacity (2 × rows: load 0.5, 1%). fsync off, autovacuum off, bloomguard.auto_rebuild off, JIT off, no parallel query, track_io_timing on."
	echo "- Lookups: pgbench -M prepared, $DUR s a run, after $WARM s of each script as warm-up. Plain arms run with bloomguard.transparent off (PGOPTIONS), so that EXISTS takes no planner path; the filter stays allocated and fed in both arms. Each round runs SELECT 1 and the six arms once, the order rotating from round to round; the ratio is the median of the per-round ratios (min–max): on a shared machine the load changes within a run, and a single absolute figure means little."
	echo "- Blocks read per lookup: idx_blks_read / heap_blks_read of pg_statio_user_indexes / pg_statio_user_tables over the run (shared-buffer misses, which a page-cache hit also counts as). Device reads: read_bytes of /proc/PID/io summed over the server's processes (the postmaster's figure includes the backends it has reaped), in 8 kB units. Read time: blk_read_time of pg_stat_database (track_io_timing), which includes any wait for a CPU after the read completes. Refaults: workingset_refault of the cgroup's memory.stat, pages read again soon after being evicted. The counters are read once every backend of the run has exited."
	echo "- The 80/20 mix: pgbench runs the absent-key and the present-key scripts weighted 80 and 20 (-f FILE@80 -f FILE@20), and reports each one's latency within the mix. CPU per lookup: the user + system time of the server's backends that exited during the run (the postmaster's children's times in /proc/PID/stat) and of pgbench (the shell's times), over the lookups made; on a shared machine it rises with the contention for the cores (caches, the hypervisor), less than the wall time does."
	echo
	echo "## Plot"
	echo
	if [ -z "$plot_note" ]; then echo "![cold index: lookups/s and index blocks read per lookup against the table's size](cold.png)"; else echo "$plot_note"; fi
	fails_md
} >"$OUT/results-cold.md"

echo
cat "$md"
[ -n "$plot_note" ] && echo "$plot_note"
say "done in ${runtime}s; results in $OUT"
exit_on_fails
