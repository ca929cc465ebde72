#!/usr/bin/env bash
# Runs bloomguard's test suites on every PostgreSQL version Debian ships
# (called by `test/run-all.sh --all-versions`, which .ci/run runs).  As root,
# on Debian 12:
#
#   - the host's own version (15 from bookworm; or $PG_CONFIG / $PG_MAJOR)
#     runs test/run-all.sh here, as the README's test command does;
#   - 17 and 18 (MATRIX_VERSIONS) run in minimal Debian roots made with
#     debootstrap, from whichever suite ships postgresql-NN and
#     postgresql-server-dev-NN today (read from the mirror's Packages index;
#     a stable suite is preferred).  A version no suite ships is skipped,
#     loudly, and does not fail the run.  Inside a root the same
#     test/run-all.sh runs, benchmark smoke run included (MATRIX_BENCH=0
#     skips it, and its packages);
#   - the host's version once more, built with assertions from Debian's
#     source package (test/assert-build.sh, cached under $BG_CACHE), runs
#     test/run-all.sh --no-bench --assert: the same suites, then
#     sql/discard.sql with debug_discard_caches = 1 and, where the checkout
#     has them, PostgreSQL's own regression suite, SQLsmith, the
#     differential query generator and the planner path's and lookups'
#     regression files under Valgrind (MATRIX_ASSERT=0 skips the row);
#   - 16 has no Debian package: test/pg16-from-source.sh builds it from a
#     source tree on a developer's machine (not run here).
#
# The mirror is the one the machine's apt sources name (deb822 .sources or
# classic .list lines; BG_DEBIAN_MIRROR overrides).  Roots are cached under
# /var/cache/bloomguard-test/roots/ and reused by the next run; a root that
# is broken, or that came from another suite, is made again.  Versions run
# one at a time (roots share ports with the host but not /tmp, so TAP port
# locks would not see each other).
#
# Environment:
#   MATRIX_VERSIONS  versions to run in roots          ("17 18")
#   MATRIX_HOST=0    skip the host run
#   MATRIX_ASSERT=0  skip the assert-enabled run
#   MATRIX_SUITES    candidate suites, most preferred first
#                    ("trixie trixie-backports bookworm-backports testing unstable")
#   MATRIX_BENCH=0   skip the benchmark smoke run in the roots
#   MATRIX_CITUS=1   copy the Citus archives ($BG_CITUS_SRC) into the roots,
#                    so that their run-all.sh builds Citus and runs the
#                    citus suite too (not in CI: about 12 minutes a root)
#   MATRIX_REBUILD=1 make the roots again
#   BG_CACHE         cache directory                   (/var/cache/bloomguard-test)
#
# Ends with a per-version table and the line "N passed, N failed" over the
# suites of every version; exits non-zero if any suite failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

cache=${BG_CACHE:-/var/cache/bloomguard-test}
versions=${MATRIX_VERSIONS-17 18}
candidates=${MATRIX_SUITES:-trixie trixie-backports bookworm-backports testing unstable}
root_bench=${MATRIX_BENCH:-1}
root_citus=${MATRIX_CITUS:-0}
citus_src=${BG_CITUS_SRC:-/work/shared/vendor/citus}
arch=$(dpkg --print-architecture)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
root_pkgs="make gcc perl libipc-run-perl libxxhash-dev python3-yaml ca-certificates"
t_start=$(date +%s)

say() { printf '==> [matrix] %s\n' "$*" >&2; }
loud() {
	printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
	printf '!!! %s\n' "$@" >&2
	printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' >&2
}

if [ "$(id -u)" != 0 ]; then
	echo "test/matrix.sh needs root (debootstrap, chroot, mount)" >&2
	exit 2
fi
# what the roots need on the host (a new machine has none of it)
host_need=""
for p in debootstrap xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || host_need="$host_need $p"
done
if [ -n "$host_need" ]; then
	say "installing:$host_need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $host_need >/dev/null || {
		echo "test/matrix.sh: installing$host_need failed" >&2
		exit 1
	}
fi
mkdir -p "$cache/roots" "$cache/logs"
exec 9>"$cache/.matrix.lock"
if ! flock -n 9; then
	echo "another test/matrix.sh holds $cache/.matrix.lock" >&2
	exit 2
fi

tmp=$(mktemp -d /tmp/bloomguard-matrix.XXXXXX)

# ------------------------------------------------------------ mounts
# kill_in_root, mounts_under, umount_all, mount_root, in_root, remove_root,
# configure_root, copy_source_tree
. "$top/test/lib/roots.sh"

cleanup() {
	local rc=$? left
	trap - EXIT INT TERM
	umount_all
	left=$(mounts_under "$cache/roots")
	if [ -n "$left" ]; then
		loud "still mounted under $cache/roots:" $left
		rc=1
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# ------------------------------------------------------------ the mirror
# apt_sources, debian_mirror
. "$top/test/lib/mirror.sh"

# Download $1 to $2 with whatever this machine has.
download() {
	if command -v curl >/dev/null; then
		curl -fsSL --retry 2 --max-time 300 -o "$2" "$1"
	elif command -v wget >/dev/null; then
		wget -q -T 60 -O "$2" "$1"
	else
		/usr/lib/apt/apt-helper download-file "$1" "$2" >/dev/null
	fi
}

# "package version" of every postgresql-NN and postgresql-server-dev-NN in
# suite $1 (main, $arch), cached for this run.  Fails if the suite has no
# index there.
suite_pg_packages() {
	local s=$1 out=$tmp/pkgs.$1
	if [ ! -f "$out" ]; then
		if download "$MIRROR/dists/$s/main/binary-$arch/Packages.xz" "$tmp/P.xz" 2>/dev/null && command -v xz >/dev/null; then
			xz -dc "$tmp/P.xz" >"$tmp/P" || return 1
		elif download "$MIRROR/dists/$s/main/binary-$arch/Packages.gz" "$tmp/P.gz" 2>/dev/null; then
			gzip -dc "$tmp/P.gz" >"$tmp/P" || return 1
		else
			return 1
		fi
		awk '/^Package: / { p = $2 } /^Version: / && p ~ /^postgresql-(server-dev-)?[0-9]+$/ { print p, $2 } /^$/ { p = "" }' \
			"$tmp/P" | sort -u >"$out"
		rm -f "$tmp"/P "$tmp"/P.xz "$tmp"/P.gz
	fi
	cat "$out"
}

# "Suite (Codename)" from the suite's Release file, for the table.
suite_label() {
	local f=$tmp/rel.$1
	[ -f "$f" ] || download "$MIRROR/dists/$1/Release" "$f" 2>/dev/null || { echo "$1"; return; }
	awk -v s="$1" '/^Suite: / { su = $2 } /^Codename: / { c = $2 } END {
		if (c != "" && c != s) printf "%s (%s", s, c; else printf "%s (", s
		if (su != "" && su != s) printf "%s%s", (c != "" && c != s) ? ", " : "", su
		print ")" }' "$f" | sed 's/ ()$//'
}

# The first candidate suite that ships both packages for version $1.
find_suite() {
	local v=$1 s checked=""
	for s in $candidates; do
		if ! suite_pg_packages "$s" >/dev/null; then
			checked="$checked $s(no index)"
			continue
		fi
		if suite_pg_packages "$s" | grep -q "^postgresql-$v " &&
			suite_pg_packages "$s" | grep -q "^postgresql-server-dev-$v "; then
			echo "$s"
			return 0
		fi
		checked="$checked $s"
	done
	echo "checked:$checked" >&2
	return 1
}

# ------------------------------------------------------------ roots
# Install (or upgrade to the suite's current) packages for version $2 in
# root $1; refresh the apt lists first when they are older than 6 hours.
install_in_root() {
	local root=$1 v=$2 suite=$3 target=""
	local pkgs="postgresql-$v postgresql-server-dev-$v $root_pkgs"
	[ "$root_bench" = 1 ] && pkgs="$pkgs gnuplot-nox redis-server python3-redis python3-psycopg2 bc"
	[ "${suite%-backports}" != "$suite" ] && target="-t $suite"
	if [ -z "$(find "$root/var/lib/apt/lists" -maxdepth 1 -name '*_Packages*' -mmin -360 2>/dev/null | head -1)" ]; then
		in_root "$root" apt-get update -qq || return 1
	fi
	# shellcheck disable=SC2086
	in_root "$root" apt-get install -y -qq $target $pkgs >"$tmp/apt.log" 2>&1 || {
		# the lists may have moved on since the last update
		in_root "$root" apt-get update -qq &&
			in_root "$root" apt-get install -y -qq $target $pkgs >"$tmp/apt.log" 2>&1
	} || { tail -20 "$tmp/apt.log" >&2; return 1; }
	in_root "$root" apt-get clean
	[ -x "$root/usr/lib/postgresql/$v/bin/pg_config" ] || { say "no pg_config for $v in $root"; return 1; }
	[ -z "$(ls "$root/etc/postgresql/$v" 2>/dev/null)" ] || { say "a cluster was created in $root/etc/postgresql/$v"; return 1; }
}

# Make root $1 for version $2 from suite $3 (or reuse the cached one), mount
# what it needs and install the packages.  Leaves it mounted.
setup_root() {
	local root=$1 v=$2 suite=$3 base=${3%-backports} script attempt stampf
	stampf=$root/.bloomguard-root
	for attempt in 1 2; do
		if [ -d "$root" ]; then
			if [ "${MATRIX_REBUILD:-0}" = 1 ] && [ "$attempt" = 1 ]; then
				say "MATRIX_REBUILD=1: making $root again"
				remove_root "$root" || return 1
			elif ! grep -qx "suite=$suite" "$stampf" 2>/dev/null || ! grep -qx "complete=yes" "$stampf" ||
				! in_root "$root" /bin/true 2>/dev/null; then
				say "$root is incomplete, broken or from another suite: making it again"
				remove_root "$root" || return 1
			fi
		fi
		if [ ! -d "$root" ]; then
			script=/usr/share/debootstrap/scripts/$base
			[ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
			say "debootstrap $base into $root"
			rm -rf --one-file-system "$root.new"
			if ! debootstrap --variant=minbase --arch="$arch" --components=main --keyring="$keyring" \
				"$base" "$root.new" "$MIRROR" "$script" >"$tmp/debootstrap.log" 2>&1; then
				tail -20 "$tmp/debootstrap.log" >&2
				[ -f "$root.new/debootstrap/debootstrap.log" ] && tail -20 "$root.new/debootstrap/debootstrap.log" >&2
				rm -rf --one-file-system "$root.new"
				return 1
			fi
			mv "$root.new" "$root"
			printf 'suite=%s\ncreated=%s\n' "$suite" "$(date -u +%FT%TZ)" >"$stampf"
		fi
		configure_root "$root" "$suite"
		mount_root "$root" || { umount_all; return 1; }
		if install_in_root "$root" "$v" "$suite"; then
			grep -qx complete=yes "$stampf" || echo complete=yes >>"$stampf"
			return 0
		fi
		umount_all
		say "setting up $root failed (attempt $attempt)"
		[ "$attempt" = 1 ] && { remove_root "$root" || return 1; }
	done
	return 1
}

# Copy the source tree into root $1 and chown it to the root's own
# postgres user (whose uid differs from the host's).
copy_tree() {
	local root=$1
	rm -rf --one-file-system "$root/build/bloomguard" "$root"/tmp/bloomguard.* "$root"/tmp/bgbench*
	copy_source_tree "$top" "$root/build/bloomguard" || return 1
	in_root "$root" chown -R postgres:postgres /build/bloomguard
}

# Keep what a failed run leaves (diffs, TAP logs) in $2.
keep_results() {
	local root=$1 dest=$2 w
	rm -rf "$dest"
	mkdir -p "$dest"
	for w in "$root"/tmp/bloomguard.*; do
		[ -d "$w" ] || continue
		for f in regression.diffs regression.out output_iso/regression.diffs output_iso/regression.out; do
			[ -f "$w/$f" ] && cp "$w/$f" "$dest/${f//\//_}"
		done
		if [ -d "$w/tmp_check/log" ]; then cp -r "$w/tmp_check/log" "$dest/tap-log"; fi
	done
}

# ------------------------------------------------------------ the runs
ROWS=()     # version|source|result|setup s|test s|note
total_passed=0
total_failed=0
skipped=()

# "N passed, N failed" from run-all's log $1 -> "N N", or nothing
result_of() {
	grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1 | awk '{ print $1, $3 }'
}

add_result() { # version source log setup test note
	local p f res
	read -r p f <<<"$(result_of "$3")"
	if [ -z "${p:-}" ]; then
		p=0 f=1
		res="no result (see $3)"
	else
		res="$p passed, $f failed"
		local names
		names=$(sed -n 's/^suites: failed: *//p' "$3" | tail -1)
		[ -n "$names" ] && res="$res ($names)"
	fi
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	ROWS+=("$1|$2|$res|$4|$5|$6")
}

# --- the host's version
if [ "${MATRIX_HOST:-1}" != 0 ]; then
	log=$cache/logs/host.log
	say "host: test/run-all.sh (log: $log)"
	t0=$(date +%s)
	bash "$top/test/run-all.sh" 2>&1 | tee "$log"
	t1=$(date +%s)
	hv=$(sed -n 's/^PostgreSQL \([0-9]*\) (.*/\1/p' "$log" | tail -1)
	host_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-host}")
	hwarn=$(sed -n 's/^build: \([0-9]*\) compiler warnings$/\1/p' "$log" | tail -1)
	add_result "${hv:-?}" "host ($host_release)" "$log" "-" "$((t1 - t0))" "${hwarn:-?} compiler warnings; bench smoke included"
fi

# --- the host's version with assertions (test/assert-build.sh; the build
# is cached, and bloomguard is installed into it, one run at a time)
if [ "${MATRIX_ASSERT:-1}" != 0 ]; then
	log=$cache/logs/assert.log
	say "assert: test/assert-build.sh, then test/run-all.sh --no-bench --assert (log: $log)"
	t0=$(date +%s)
	if pgc=$(env -u PG_CONFIG bash "$top/test/assert-build.sh" 2> >(tee "$cache/logs/assert-build.log" >&2)); then
		t1=$(date +%s)
		amajor=$(sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p' <<<"$("$pgc" --version)")
		asrc=$(sed -n 's/^source //p' "$(dirname "$(dirname "$pgc")")/.bloomguard-stamp")
		PG_CONFIG=$pgc bash "$top/test/run-all.sh" --no-bench --assert 2>&1 | tee "$log"
		t2=$(date +%s)
		awarn=$(sed -n 's/^build: \([0-9]*\) compiler warnings$/\1/p' "$log" | tail -1)
		adisc=$(sed -n 's/^==> discard-caches: \([0-9]*\) s$/\1/p' "$log" | tail -1)
		add_result "${amajor:-?} assert" "Debian source ${asrc:-?}, cassert" "$log" "$((t1 - t0))" "$((t2 - t1))" \
			"${awarn:-?} compiler warnings; discard-caches ${adisc:-?} s; no bench"
	else
		t1=$(date +%s)
		loud "the assert-enabled build FAILED (log: $cache/logs/assert-build.log)"
		ROWS+=("assert|-|FAILED: assert build|$((t1 - t0))|-|$cache/logs/assert-build.log")
		total_failed=$((total_failed + 1))
	fi
fi

# --- the roots
MIRROR=""
if [ -n "$versions" ]; then
	MIRROR=$(debian_mirror)
	if [ -z "$MIRROR" ]; then
		loud "no Debian mirror in this machine's apt sources: cannot make roots for $versions"
		for v in $versions; do
			ROWS+=("$v|-|FAILED: no mirror|-|-|")
			total_failed=$((total_failed + 1))
		done
		versions=""
	else
		say "mirror from the apt sources; candidate suites: $candidates"
	fi
fi

for v in $versions; do
	say "PostgreSQL $v: looking for a suite that ships postgresql-$v and postgresql-server-dev-$v"
	if ! suite=$(find_suite "$v" 2>"$tmp/checked"); then
		loud "PostgreSQL $v: NO candidate suite ships postgresql-$v and postgresql-server-dev-$v" \
			"($(cat "$tmp/checked")): SKIPPED, not tested"
		skipped+=("$v")
		ROWS+=("$v|none ships it|SKIPPED|-|-|$(cat "$tmp/checked")")
		continue
	fi
	pkgver=$(suite_pg_packages "$suite" | awk -v p="postgresql-$v" '$1 == p { print $2 }' | tail -1)
	label="$(suite_label "$suite") $pkgver"
	say "PostgreSQL $v: $label"
	root=$cache/roots/pg$v
	log=$cache/logs/pg$v.log
	t0=$(date +%s)
	if ! setup_root "$root" "$v" "$suite"; then
		t1=$(date +%s)
		umount_all
		loud "PostgreSQL $v: setting up the root from $suite FAILED"
		ROWS+=("$v|$label|FAILED: root setup|$((t1 - t0))|-|")
		total_failed=$((total_failed + 1))
		continue
	fi
	t1=$(date +%s)
	say "PostgreSQL $v: root ready in $((t1 - t0)) s; running test/run-all.sh inside it (log: $log)"
	bench_arg=""
	note="bench smoke included"
	[ "$root_bench" = 1 ] || bench_arg=--no-bench note="bench smoke SKIPPED (MATRIX_BENCH=0)"
	# the Citus archives, where run-all.sh inside looks for them; a copy
	# left by an earlier MATRIX_CITUS=1 run is removed otherwise
	rm -rf --one-file-system "$root/work/shared/vendor/citus"
	if [ "$root_citus" = 1 ]; then
		if ls "$citus_src"/citus-*.tar.gz >/dev/null 2>&1 &&
			mkdir -p "$root/work/shared/vendor/citus" &&
			cp "$citus_src"/citus-*.tar.gz "$root/work/shared/vendor/citus/"; then
			note="$note; citus suite included (MATRIX_CITUS=1)"
		else
			note="$note; MATRIX_CITUS=1 but no Citus archives in $citus_src"
		fi
	fi
	if copy_tree "$root"; then
		in_root "$root" PG_MAJOR="$v" PG_CONFIG="/usr/lib/postgresql/$v/bin/pg_config" \
			BG_BUILD_LOG=/build/build.log \
			bash /build/bloomguard/test/run-all.sh $bench_arg 2>&1 | tee "$log"
	else
		echo "copying the tree into $root failed" | tee "$log"
	fi
	t2=$(date +%s)
	cp "$root/build/build.log" "$cache/logs/pg$v-build.log" 2>/dev/null
	keep_results "$root" "$cache/logs/pg$v"
	umount_all
	nwarn=$(sed -n 's/^build: \([0-9]*\) compiler warnings$/\1/p' "$log" | tail -1)
	add_result "$v" "$label" "$log" "$((t1 - t0))" "$((t2 - t1))" "${nwarn:-?} compiler warnings; $note"
done

# ------------------------------------------------------------ summary
umount_all
left=$(mounts_under "$cache/roots")
if [ -n "$left" ]; then
	loud "still mounted under $cache/roots:" $left
	ROWS+=("-|-|FAILED: mounts left behind|-|-|$(echo $left)")
	total_failed=$((total_failed + 1))
fi
{
	echo
	echo "bloomguard test matrix ($(($(date +%s) - t_start)) s in all; logs in $cache/logs)"
	printf '%-9s | %-40s | %-40s | %7s | %7s | %s\n' version source result "setup s" "tests s" notes
	printf '%s\n' "----------+------------------------------------------+------------------------------------------+---------+---------+------"
	for r in "${ROWS[@]}"; do
		IFS='|' read -r a b c d e f <<<"$r"
		printf '%-9s | %-40s | %-40s | %7s | %7s | %s\n' "$a" "$b" "$c" "$d" "$e" "$f"
	done
	printf '%-9s | %-40s | %-40s | %7s | %7s | %s\n' 16 "no Debian package" "not run" - - "test/pg16-from-source.sh SRC (developer machines)"
	for v in "${skipped[@]}"; do
		echo "!!! PostgreSQL $v was SKIPPED: no candidate suite ships it today"
	done
	echo
	echo "$total_passed passed, $total_failed failed"
}
[ "$total_failed" = 0 ]
