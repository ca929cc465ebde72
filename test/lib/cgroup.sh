# A memory cgroup around a PostgreSQL server, for test/bench/cold.sh and
# test/demo.sh: the server may then cache only what the cgroup's limit
# leaves it, so a primary key index several times that size is read from
# the disk, as on a server whose tables outgrow its memory.
#
# The kernel charges a page of the page cache to the cgroup of the process
# that first brings it in, and it stays charged there; shared memory is
# charged likewise, to the process that first touches it.  So the server
# is started inside the cgroup before it reads or writes anything: every
# page it caches, its shared buffers and the filters included, counts
# against the limit, and a page someone else cached earlier (the table
# was loaded before the limit) cannot be read for free.  The limit is
# lowered once the data is loaded: the kernel then evicts the cgroup's
# page cache down to it.  No global cache drop is needed.
#
# Both kinds of cgroup:
#   - v1, a "memory" hierarchy (mounted at /sys/fs/cgroup/memory on hybrid
#     systems): one cgroup, whose cgroup.procs and memory.limit_in_bytes
#     are given to the server's user, so that it moves its own server in
#     and sets the limit itself;
#   - v2, the unified hierarchy (/sys/fs/cgroup on a stock Debian 12): a
#     cgroup delegated to the server's user with two leaves, "server" and
#     "client".  Whoever moves a process between cgroups needs write access
#     to their common ancestor, so the user's script runs in "client"
#     (bg_cg_enter_client, by root before it switches user) and moves the
#     server into "server".
# Making one needs root (or a delegated v2 subtree: not handled here).
# On PostgreSQL 16 and later, debug_io_direct = data is another way to
# read the index from the disk (no page cache at all); it is a developer
# setting, and it also bypasses the cache on writes.

# As root: make a memory cgroup for a server run by user $2 ($1 names it).
# Sets BG_CG (the server's cgroup), BG_CG_CLIENT (v2: the user's scripts'
# cgroup; empty for v1), BG_CG_VERSION (1 or 2) and BG_CG_TOP (what
# bg_cg_remove removes).  If none can be made, returns 1 with the reason
# in BG_CG_WHY.
bg_cg_create() {
	local name=$1 owner=$2 mnt top f
	BG_CG="" BG_CG_CLIENT="" BG_CG_VERSION="" BG_CG_TOP="" BG_CG_WHY=""
	if [ "$(id -u)" != 0 ]; then
		BG_CG_WHY="making a memory cgroup needs root"
		return 1
	fi
	bg_cg_mount || return 1
	# v1: a cgroup (not cgroup2) mount with the memory controller
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
	if [ -n "$mnt" ]; then
		top=$mnt/$name.$$
		if ! mkdir "$top" 2>/dev/null; then
			BG_CG_WHY="cannot create a cgroup in $mnt (cgroup v1 memory controller): read-only, or not allowed here"
			return 1
		fi
		for f in cgroup.procs memory.limit_in_bytes; do
			chown "$owner" "$top/$f" || { rmdir "$top"; BG_CG_WHY="cannot give $top/$f to $owner"; return 1; }
		done
		BG_CG=$top BG_CG_TOP=$top BG_CG_VERSION=1
		return 0
	fi
	# v2: the unified hierarchy, with the memory controller available
	mnt=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
	if [ -z "$mnt" ]; then
		BG_CG_WHY="no cgroup file system is mounted (neither a v1 memory hierarchy nor cgroup2)"
		return 1
	fi
	if ! grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null; then
		BG_CG_WHY="the memory controller is not available in the cgroup v2 hierarchy at $mnt"
		return 1
	fi
	if ! grep -qw memory "$mnt/cgroup.subtree_control" &&
		! echo +memory >"$mnt/cgroup.subtree_control" 2>/dev/null; then
		BG_CG_WHY="cannot enable the memory controller for the children of $mnt"
		return 1
	fi
	top=$mnt/$name.$$
	if ! mkdir "$top" 2>/dev/null; then
		BG_CG_WHY="cannot create a cgroup in $mnt (cgroup v2): read-only, or not allowed here"
		return 1
	fi
	if ! echo +memory >"$top/cgroup.subtree_control" 2>/dev/null ||
		! mkdir "$top/server" "$top/client"; then
		rmdir "$top/server" "$top/client" "$top" 2>/dev/null
		BG_CG_WHY="cannot make the server's and the client's cgroups under $top"
		return 1
	fi
	chown "$owner" "$top" "$top/cgroup.procs" "$top/server/cgroup.procs" \
		"$top/client/cgroup.procs" "$top/server/memory.max" || {
		rmdir "$top/server" "$top/client" "$top"
		BG_CG_WHY="cannot delegate $top to $owner"
		return 1
	}
	BG_CG=$top/server BG_CG_CLIENT=$top/client BG_CG_TOP=$top BG_CG_VERSION=2
}

# As root, where no cgroup file system is mounted (a machine or container
# whose init did not mount one) but the kernel has the memory controller
# (/proc/cgroups): mount one at a directory of our own, a v1 "memory"
# hierarchy or else cgroup2, and note it in BG_CG_MOUNTED for
# bg_cg_remove to unmount.  Mounting the controller's hierarchy again
# shows the same hierarchy; nothing else on the machine changes.
BG_CG_MOUNTED=""
bg_cg_mount() {
	local dir=/run/bloomguard-cgroup.$$
	if awk '($3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/) || $3 == "cgroup2" {found = 1} END {exit !found}' /proc/mounts; then
		return 0
	fi
	if ! awk '$1 == "memory" && $4 == 1 {found = 1} END {exit !found}' /proc/cgroups 2>/dev/null; then
		BG_CG_WHY="no cgroup file system is mounted, and the kernel has no memory controller enabled (/proc/cgroups)"
		return 1
	fi
	mkdir -p "$dir" || { BG_CG_WHY="cannot make $dir to mount a cgroup file system on"; return 1; }
	if mount -t cgroup -o memory bloomguard "$dir" 2>/dev/null ||
		mount -t cgroup2 bloomguard "$dir" 2>/dev/null; then
		BG_CG_MOUNTED=$dir
		bg_log "no cgroup file system was mounted: mounted one at $dir for this run"
		return 0
	fi
	rmdir "$dir"
	BG_CG_WHY="no cgroup file system is mounted, and mounting one (v1 memory or cgroup2) was refused: a container without the right to mount?"
	return 1
}

# As root, in the (sub)shell that then runs the user's script: move it
# into the client leaf (v2; nothing to do for v1).
bg_cg_enter_client() {
	[ -z "${BG_CG_CLIENT:-}" ] || echo "$BASHPID" >"$BG_CG_CLIENT/cgroup.procs"
}

# As root, once the server has stopped: remove the cgroup.  A process
# still in it (a server that did not stop) keeps it, and is reported.
bg_cg_remove() {
	local d left
	if [ -n "${BG_CG_TOP:-}" ] && [ -d "$BG_CG_TOP" ]; then
		for d in "$BG_CG_TOP/server" "$BG_CG_TOP/client" "$BG_CG_TOP"; do
			[ -d "$d" ] || continue
			left=$(cat "$d/cgroup.procs" 2>/dev/null)
			if [ -n "$left" ]; then
				bg_log "cgroup $d still holds processes $(echo $left): not removed"
				return 1
			fi
			rmdir "$d" || return 1
		done
	fi
	if [ -n "$BG_CG_MOUNTED" ]; then
		umount "$BG_CG_MOUNTED" && rmdir "$BG_CG_MOUNTED" && BG_CG_MOUNTED=""
	fi
}

# Run a command ($@) inside the server's cgroup: it and every process it
# starts are charged there.
bg_cg_run() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$BG_CG" "$@"
}

# Set the cgroup's memory limit to $1 bytes, or "max" for none.  The
# kernel evicts page cache to get under it; a limit it cannot reach (the
# server's shared memory and processes alone exceed it) fails.
bg_cg_limit() {
	local v=$1 f
	if [ "$BG_CG_VERSION" = 1 ]; then
		f=$BG_CG/memory.limit_in_bytes
		[ "$v" = max ] && v=-1
	else
		f=$BG_CG/memory.max
	fi
	echo "$v" >"$f"
}

# The cgroup's memory in use, in bytes.
bg_cg_usage() {
	if [ "$BG_CG_VERSION" = 1 ]; then cat "$BG_CG/memory.usage_in_bytes"; else cat "$BG_CG/memory.current"; fi
}

# The cgroup's memory.stat, reduced to the same names for v1 and v2, one
# "name value" a line: cache (page cache, shared memory included), anon
# (processes' private memory), shmem, mapped (mapped files and shared
# memory), refaults (page cache pages read again soon after being
# evicted: the cache is too small for the working set), and pgpgin /
# pgpgout (v1: pages charged / uncharged) or pgscan / pgsteal (v2: pages
# scanned / reclaimed).
bg_cg_stat() {
	if [ "$BG_CG_VERSION" = 1 ]; then
		awk '$1 == "total_cache" {print "cache", $2} $1 == "total_rss" {print "anon", $2}
			$1 == "total_shmem" {print "shmem", $2} $1 == "total_mapped_file" {print "mapped", $2}
			$1 == "total_workingset_refault_file" {print "refaults", $2}
			$1 == "total_pgpgin" {print "pgpgin", $2} $1 == "total_pgpgout" {print "pgpgout", $2}' "$BG_CG/memory.stat"
	else
		awk '$1 == "file" {print "cache", $2} $1 == "anon" {print "anon", $2}
			$1 == "shmem" {print "shmem", $2} $1 == "file_mapped" {print "mapped", $2}
			$1 == "workingset_refault_file" {print "refaults", $2}
			$1 == "pgscan" {print "pgscan", $2} $1 == "pgsteal" {print "pgsteal", $2}' "$BG_CG/memory.stat"
	fi
}

# Bytes the server's processes have read from the disk (read_bytes of
# /proc/PID/io): every process in the cgroup, the postmaster's figure
# including the children it has reaped, so the sum only grows while the
# server runs.  Needs the server's own user (or root).
bg_cg_read_bytes() {
	local pid sum=0 b
	for pid in $(cat "$BG_CG/cgroup.procs"); do
		b=$(awk '$1 == "read_bytes:" {print $2}' "/proc/$pid/io" 2>/dev/null) || continue
		sum=$((sum + ${b:-0}))
	done
	echo "$sum"
}
