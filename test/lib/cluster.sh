# Throwaway clusters for test/core-regress.sh, test/sqlsmith.sh and
# test/diffgen.sh, run as the postgres user after test/lib/common.sh.
# Each cluster listens on a Unix socket in its own directory only, so a
# port number never collides with another run's.

# Start a cluster in $1 (created), with bloomguard preloaded and the
# postgresql.conf lines of $2 appended; sets PGHOST and PGPORT.
bg_cluster_start() {
	local dir=$1 extra=${2:-}
	mkdir -p "$dir"
	"$PG_BIN/initdb" -D "$dir/data" -A trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		return 1
	}
	cat >>"$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'bloomguard'
listen_addresses = ''
unix_socket_directories = '$dir'
port = 5432
max_worker_processes = 16
max_prepared_transactions = 10
log_line_prefix = '%m [%p] %q%a '
$extra
CONF
	export PGHOST=$dir PGPORT=5432
	"$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start >/dev/null || {
		tail -20 "$dir/server.log" >&2
		return 1
	}
}

# Stop the cluster in $1 (fast, then immediate if that does not work).
bg_cluster_stop() {
	"$PG_BIN/pg_ctl" -D "$1/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
		"$PG_BIN/pg_ctl" -D "$1/data" -m immediate stop >/dev/null 2>&1 || true
}

# Print the server log lines of $1 that show a crash: an assertion failure,
# a backend killed by a signal, a PANIC.  Succeeds if there are none.
bg_log_crashes() {
	! grep -E 'TRAP: |terminated by signal|PANIC: |was terminated by exception|server process .* exited with exit code [^01]' "$1"
}

# As root: install the packages named in $2 (and what every test needs),
# build and install bloomguard from a postgres-owned copy of $top, run the
# script $1 (a path under $top) from that copy as the postgres user with
# --as-postgres and the arguments after $3, passing on the environment
# variables named in $3; exit with its status.
bg_rerun_as_postgres() {
	local script=$1 pkgs=$2 vars=$3 env="" v work rc
	shift 3
	bg_install_deps $pkgs || exit 1
	work=$(bg_copy_for_postgres "$top")
	bg_build_install "$work" || { echo "0 passed, 1 failed"; exit 1; }
	chown -R postgres:postgres "$work"
	for v in $vars; do
		[ -n "${!v+set}" ] && env="$env $v='${!v}'"
	done
	bg_as_postgres "$env '$work/$script' --as-postgres $*"
	rc=$?
	rm -rf "$work"
	exit $rc
}

# Print the closing line for $2 passed and $3 failed; on success stop the
# cluster in $1 and remove it, else keep it for a look.  Exits.
bg_cluster_finish() {
	echo "$2 passed, $3 failed"
	if [ "$3" = 0 ]; then
		bg_cluster_stop "$1"
		rm -rf "$1"
		exit 0
	fi
	echo "(the cluster, its log and the run's files are kept in $1)"
	exit 1
}
