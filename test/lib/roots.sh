# Shared by test/matrix.sh and test/fresh-root.sh: minimal Debian roots
# (chroots), what is mounted in them for a run, and how that is undone.
#
# The caller defines say() (a progress line on stderr) and, for
# configure_root, MIRROR (the Debian mirror, test/lib/mirror.sh).  umount_all
# undoes what mount_root did, also after a failure; callers run it from
# their EXIT trap.

# Install those of the Debian packages $@ that are missing, on this
# machine (the caller is root).
apt_install_missing() {
	local p need=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
	done
	[ -n "$need" ] || return 0
	say "installing:$need"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null || {
		echo "installing$need failed" >&2
		return 1
	}
}

MOUNTS=()      # mounted by us, in order
CUR_ROOT=""    # the root in use, if any

# Kill what still runs inside root $1 (a server a failed test left behind):
# only processes whose root directory is that root, by pid.
kill_in_root() {
	local root=$1 sig pid r left
	for sig in TERM KILL; do
		left=0
		for pid in $(ls /proc | grep -E '^[0-9]+$'); do
			r=$(readlink "/proc/$pid/root" 2>/dev/null) || continue
			if [ "$r" = "$root" ]; then
				kill -s "$sig" "$pid" 2>/dev/null && left=1
			fi
		done
		[ "$left" = 0 ] && return 0
		sleep 2
	done
}

# Everything mounted at or below $1, deepest first.
mounts_under() {
	awk -v p="$1" '{ gsub(/\\040/, " ", $2); if ($2 == p || index($2, p "/") == 1) print $2 }' /proc/mounts | sort -r
}

umount_all() {
	local i m
	[ -n "$CUR_ROOT" ] && kill_in_root "$CUR_ROOT"
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[$i]}
		if mountpoint -q "$m"; then
			umount "$m" 2>/dev/null || { sleep 1; umount "$m" 2>/dev/null; } ||
				{ say "umount $m failed; detaching it"; umount -l "$m"; }
		fi
	done
	MOUNTS=()
	CUR_ROOT=""
}

mount_root() {
	local root=$1 m
	CUR_ROOT=$root
	# left by a run that was killed before it could clean up
	kill_in_root "$root"
	for m in $(mounts_under "$root"); do
		say "unmounting $m, left by an earlier run"
		umount "$m" || umount -l "$m"
	done
	mkdir -p "$root/proc" "$root/dev/pts" "$root/dev/shm"
	mount -t proc proc "$root/proc" && MOUNTS+=("$root/proc") || return 1
	mount --bind /dev/pts "$root/dev/pts" && MOUNTS+=("$root/dev/pts") || return 1
	mount -t tmpfs -o mode=1777,nosuid,nodev,size=2g tmpfs "$root/dev/shm" && MOUNTS+=("$root/dev/shm") || return 1
}


in_root() { # root, command...
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

remove_root() {
	local root=$1
	if [ -n "$(mounts_under "$root")" ]; then
		say "not removing $root: something is mounted in it"
		return 1
	fi
	rm -rf --one-file-system "$root"
}

# The files that make a root safe and quiet before any PostgreSQL package
# goes in, and the apt sources for suite $2.
configure_root() {
	local root=$1 suite=$2 base=${2%-backports}
	# no service starts inside the root, and no main cluster is created
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	mkdir -p "$root/etc/postgresql-common"
	echo 'create_main_cluster = false' >"$root/etc/postgresql-common/createcluster.conf"
	{
		echo "deb $MIRROR $base main"
		[ "$base" != "$suite" ] && echo "deb $MIRROR $suite main"
	} >"$root/etc/apt/sources.list"
	cat >"$root/etc/apt/apt.conf.d/90bloomguard" <<-'EOF'
		// a test root: no recommends, no translations; a mirror that is a
		// dated snapshot serves testing/unstable Release files past their
		// Valid-Until, which the signatures still cover
		APT::Install-Recommends "false";
		APT::Install-Suggests "false";
		Acquire::Languages "none";
		Acquire::Check-Valid-Until "false";
		Dpkg::Use-Pty "false";
	EOF
	cat >"$root/etc/dpkg/dpkg.cfg.d/90bloomguard-nodoc" <<-'EOF'
		path-exclude=/usr/share/doc/*
		path-exclude=/usr/share/man/*
		path-exclude=/usr/share/info/*
		path-exclude=/usr/share/locale/*
	EOF
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	cp -L /etc/hosts "$root/etc/hosts" 2>/dev/null || true
	make_dev_nodes "$root"
}

# The device nodes the build and the servers need in root $1 (debootstrap
# makes them where it can).
make_dev_nodes() {
	local root=$1 n name maj min
	for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
		IFS=: read -r name maj min <<<"$n"
		[ -c "$root/dev/$name" ] || { rm -f "$root/dev/$name"; mknod -m 666 "$root/dev/$name" c "$maj" "$min"; }
	done
	[ -e "$root/dev/ptmx" ] || ln -s pts/ptmx "$root/dev/ptmx"
}


# Copy the source tree at $1 into directory $2 (made if missing), without
# .git and without what builds and test runs leave in it.
copy_source_tree() {
	mkdir -p "$2" || return 1
	tar -C "$1" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./tmp_check --exclude=./tmp_check_iso --exclude=./tmp_check_discard --exclude=./results \
		--exclude=./output_iso --exclude=./output_discard \
		--exclude=./log --exclude=./regression.diffs --exclude=./regression.out \
		--exclude=./test/bench/out --exclude=./demo-out -cf - . |
		tar -C "$2" -xf -
}
