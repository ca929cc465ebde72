#!/usr/bin/env bash
# Proves that a new Debian 12 machine needs nothing but this repository: in
# a minimal Debian 12 root (debootstrap --variant=minbase with git and
# ca-certificates, nothing else), as root, it clones the repository at HEAD
# and runs the README's two Quick start commands.  As root on Debian 12:
#
#   test/fresh-root.sh             # the README's commands in a new root
#   test/fresh-root.sh --deb F...  # install the packages F (made by
#                                  # test/package.sh) in a new root, run the
#                                  # demo against them, then the package's
#                                  # autopkgtest (debian/tests)
#
# README mode runs `bash test/demo.sh`, then the test command, `bash
# test/run-all.sh --all-versions`, with MATRIX_VERSIONS='' (FRESH_MATRIX
# overrides): inside the root the matrix runs its host row only, since the
# roots of 17 and 18 would have to be made, and mounted, inside this one.
# Uncommitted changes are not tested: the root gets `git clone` of HEAD.
# A CI machine has the Citus archives at /work/shared/vendor/citus, so the
# archives found in $BG_CITUS_SRC (default that directory) are copied to
# that directory in the root, where its run-all.sh looks, and its test
# command builds Citus and runs the citus suite, with the packages they
# install; FRESH_CITUS=0 leaves them out (about 12 minutes less).
#
# The root comes from the mirror in this machine's apt sources
# (test/lib/mirror.sh), and gets the same sources for bookworm,
# bookworm-updates and bookworm-security.  The pristine root is made once
# and kept as $BG_CACHE/fresh-roots/base-bookworm (FRESH_REBUILD=1 makes it
# again); each run works in a copy of it, which is removed at the end
# (FRESH_KEEP=1 keeps it).  Not under $BG_CACHE/roots/, where test/matrix.sh
# checks that nothing is left mounted: both may run at once.  The .deb files apt downloads are kept in
# $BG_CACHE/apt-archives/bookworm and bind-mounted into the root, so a
# second run downloads nothing; every package is still installed in the
# root by the scripts themselves.  Logs: $BG_CACHE/logs/fresh-*.log.
#
# Ends with the time of each step and its result, and the line
# "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

cache=${BG_CACHE:-/var/cache/bloomguard-test}
mode=readme
debs=()
case ${1:-} in
--deb)
	mode=deb
	shift
	for f in "$@"; do
		[ -f "$f" ] || { echo "test/fresh-root.sh: no such package: $f" >&2; exit 2; }
		debs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
	done
	[ ${#debs[@]} -gt 0 ] || { echo "usage: $0 --deb FILE.deb..." >&2; exit 2; }
	;;
'') ;;
*) echo "usage: $0 [--deb FILE.deb...]" >&2; exit 2 ;;
esac

say() { printf '==> [fresh-root] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
	echo "test/fresh-root.sh needs root (debootstrap, chroot, mount)" >&2
	exit 2
fi
# kill_in_root, mounts_under, umount_all, mount_root, in_root, remove_root,
# copy_source_tree, apt_install_missing, make_dev_nodes
. "$top/test/lib/roots.sh"
# what the root needs on the host
apt_install_missing debootstrap git || exit 1
# debian_mirror, release_sources
. "$top/test/lib/mirror.sh"

suite=bookworm
base=$cache/fresh-roots/base-$suite
archives=$cache/apt-archives/$suite
mkdir -p "$cache/fresh-roots" "$cache/logs" "$archives/partial"
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || { echo "test/fresh-root.sh: no Debian mirror in this machine's apt sources" >&2; exit 1; }

root=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	umount_all
	if [ -n "$root" ] && [ -d "$root" ]; then
		if [ "${FRESH_KEEP:-0}" = 1 ]; then
			say "FRESH_KEEP=1: keeping $root"
		else
			remove_root "$root" || rc=1
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

STEPS=()    # name|seconds|result
passed=0
failed=0
step_result() { # name seconds ok?
	if [ "$3" = 0 ]; then
		passed=$((passed + 1))
		STEPS+=("$1|$2|passed")
	else
		failed=$((failed + 1))
		STEPS+=("$1|$2|FAILED")
	fi
}
summary() {
	echo
	echo "bloomguard fresh-root ($mode mode, $(git -C "$top" rev-parse --short HEAD); logs in $cache/logs)"
	printf '%-62s | %7s | %s\n' step seconds result
	printf '%s\n' "---------------------------------------------------------------+---------+-------"
	local s
	for s in "${STEPS[@]}"; do
		IFS='|' read -r a b c <<<"$s"
		printf '%-62s | %7s | %s\n' "$a" "$b" "$c"
	done
	echo
	echo "$passed passed, $failed failed"
}

# --- the pristine root: made once, never mounted, never run in
t0=$(date +%s)
exec 8>"$cache/.fresh-base.lock"
flock 8
if [ "${FRESH_REBUILD:-0}" = 1 ] || ! grep -qx complete=yes "$base/.bloomguard-base" 2>/dev/null; then
	say "debootstrap --variant=minbase --include=git,ca-certificates $suite into $base"
	rm -rf --one-file-system "$base" "$base.new"
	if ! debootstrap --variant=minbase --include=git,ca-certificates --arch="$(dpkg --print-architecture)" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$base.new" "$MIRROR" >"$cache/logs/fresh-debootstrap.log" 2>&1; then
		tail -20 "$cache/logs/fresh-debootstrap.log" >&2
		rm -rf --one-file-system "$base.new"
		step_result "make the pristine root (debootstrap)" "$(($(date +%s) - t0))" 1
		summary
		exit 1
	fi
	# debootstrap's own download cache is not part of a new machine
	rm -f "$base.new"/var/cache/apt/archives/*.deb
	printf 'suite=%s\ncreated=%s\ncomplete=yes\n' "$suite" "$(date -u +%FT%TZ)" >"$base.new/.bloomguard-base"
	mv "$base.new" "$base"
	base_note="made with debootstrap"
else
	base_note="cached pristine root"
fi
root=$(mktemp -d "$cache/fresh-roots/fresh.XXXXXX")
cp -a "$base/." "$root/"
rm -f "$root/.bloomguard-base"
flock -u 8

# what a new machine of this network has: this machine's apt sources for
# the release and its -updates and -security suites, a resolver; and what
# a root needs: no service starts in it, device nodes
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
release_sources | awk '{ print "deb", $1, $2, "main" }' >"$root/etc/apt/sources.list"
# the mirror is a dated snapshot: its -updates Release is past its
# Valid-Until, as on the host (which has the same setting)
echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/90bloomguard-snapshot"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp -L /etc/hosts "$root/etc/hosts" 2>/dev/null || true
make_dev_nodes "$root"

mount_root "$root" || { echo "mounting in $root failed" >&2; exit 1; }
mkdir -p "$root/var/cache/apt/archives"
mount --bind "$archives" "$root/var/cache/apt/archives" && MOUNTS+=("$root/var/cache/apt/archives") || exit 1

if [ "$mode" = readme ]; then
	# the repository at HEAD, cloned by the root's own git
	git -C "$top" bundle create "$root/root/bloomguard.bundle" HEAD 2>/dev/null || { echo "git bundle failed" >&2; exit 1; }
	in_root "$root" git -c advice.detachedHead=false clone -q /root/bloomguard.bundle /root/bloomguard || exit 1
	rm -f "$root/root/bloomguard.bundle"
	what="clone of HEAD"
	citus_src=${BG_CITUS_SRC:-/work/shared/vendor/citus}
	if [ "${FRESH_CITUS:-1}" = 1 ] && ls "$citus_src"/citus-*.tar.gz >/dev/null 2>&1; then
		mkdir -p "$root/work/shared/vendor/citus" &&
			cp "$citus_src"/citus-*.tar.gz "$root/work/shared/vendor/citus/" || exit 1
		what="$what, Citus archives"
	fi
else
	# the source tree the package was built from (test/package.sh builds
	# this tree as it is): the demo and the autopkgtest run from it
	copy_source_tree "$top" "$root/root/bloomguard" || exit 1
	what="copy of the tree"
fi
step_result "root ready ($base_note, $what)" "$(($(date +%s) - t0))" 0
say "root $root ready; installed packages: $(in_root "$root" dpkg-query -W -f='.\n' | wc -l)"

# run_step NAME LOG COMMAND...: run COMMAND in the root, in the clone, as root
run_step() {
	local name=$1 log=$2 t rc
	shift 2
	say "$name (log: $log)"
	t=$(date +%s)
	in_root "$root" /bin/bash -c 'cd /root/bloomguard && "$@"' bash "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	step_result "$name" "$(($(date +%s) - t))" "$rc"
	return "$rc"
}

if [ "$mode" = readme ]; then
	run_step "bash test/demo.sh" "$cache/logs/fresh-demo.log" bash test/demo.sh
	run_step "bash test/run-all.sh --all-versions" "$cache/logs/fresh-test.log" \
		env MATRIX_VERSIONS="${FRESH_MATRIX-}" bash test/run-all.sh --all-versions
else
	mkdir -p "$root/root/debs"
	cp "${debs[@]}" "$root/root/debs/"
	run_step "apt-get install ./$(basename "${debs[0]}")" "$cache/logs/fresh-deb-install.log" \
		sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /root/debs/*.deb' &&
		run_step "DEMO_INSTALLED=1 bash test/demo.sh" "$cache/logs/fresh-deb-demo.log" \
			env DEMO_INSTALLED=1 DEMO_ROWS="${DEMO_ROWS:-200000}" DEMO_SECONDS="${DEMO_SECONDS:-5}" bash test/demo.sh
	# the autopkgtest, as autopkgtest runs it: its Depends ("@" is the
	# package, installed above), then each test of debian/tests/control,
	# from the source tree, as root
	tdeps=$(sed -n '/^Depends:/,/^[A-Z]/p' "$top/debian/tests/control" | sed -e '1s/^Depends://' -e '/^[A-Z]/d' |
		tr ',\n' '  ' | tr -s ' ' '\n' | grep -v '^@$' | grep . | tr '\n' ' ')
	tests=$(sed -n 's/^Tests: *//p' "$top/debian/tests/control")
	run_step "autopkgtest Depends: $tdeps" "$cache/logs/fresh-deb-testdeps.log" \
		sh -c "apt-get install -y -qq --no-install-recommends $tdeps >/dev/null"
	# the root shares the host's network: its throwaway cluster
	# (pg_virtualenv) takes a port nothing listens on, not 5432
	port=""
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 20000))
		ss -ltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$port\$" || break
	done
	for t in $tests; do
		run_step "autopkgtest debian/tests/$t" "$cache/logs/fresh-deb-autopkgtest-$t.log" \
			sh -c "export AUTOPKGTEST_TMP=\$(mktemp -d) PGPORT=$port; chmod 755 debian/tests/$t; debian/tests/$t"
	done
fi

summary
[ "$failed" = 0 ]
