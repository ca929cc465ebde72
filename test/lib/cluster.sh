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
