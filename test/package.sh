#!/usr/bin/env bash
# Builds the Debian package postgresql-NN-bloomguard for the host's
# PostgreSQL (debian/, the way Debian's PostgreSQL team builds extensions:
# pg_buildext, dh --with pgxs_loop), then proves it in a new minimal Debian
# 12 root (test/fresh-root.sh --deb): installs it there with apt, runs the
# demo against it (DEMO_INSTALLED=1) and the package's autopkgtest
# (debian/tests: pg_buildext installcheck with the library preloaded).  As
# root on Debian:
#
#   test/package.sh                  # build, then the root
#   PACKAGE_ROOT=0 test/package.sh   # build only
#   PACKAGE_OUT=DIR                  # where the .deb files go
#                                    # ($BG_CACHE/packages)
#
# The build is of a copy of this tree (uncommitted changes included), for
# the host's version only (PG_SUPPORTED_VERSIONS=$PG_MAJOR when debian/control
# is made from debian/control.in); it runs the regression tests against
# the built files before packaging them (dh_pgxs_test, with
# extension_destdir: nothing is installed on the host).  Ends with the
# line "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"
# copy_source_tree, apt_install_missing
. "$top/test/lib/roots.sh"

cache=${BG_CACHE:-/var/cache/bloomguard-test}
out=${PACKAGE_OUT:-$cache/packages}
say() { printf '==> [package] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
	echo "test/package.sh needs root (apt-get, and test/fresh-root.sh)" >&2
	exit 2
fi
if ! bg_pg_is_debian; then
	echo "test/package.sh builds against Debian's PostgreSQL packages; PG_CONFIG=$PG_CONFIG is not one" >&2
	exit 2
fi
# the tests' clusters are their own: none made by the server's package
if ! dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR" 2>/dev/null | grep -q "install ok installed"; then
	mkdir -p /etc/postgresql-common
	grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf ||
		echo 'create_main_cluster = false' >>/etc/postgresql-common/createcluster.conf
fi
apt_install_missing dpkg-dev debhelper postgresql-server-dev-all libxxhash-dev "postgresql-$PG_MAJOR" \
	"postgresql-server-dev-$PG_MAJOR" make gcc || exit 1

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
pkg=postgresql-$PG_MAJOR-bloomguard
work=$(mktemp -d /tmp/bloomguard-package.XXXXXX)
# the build-time test's server runs as postgres and loads the built library
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
src=$work/bloomguard-${version%-*}
mkdir -p "$src" "$out"
copy_source_tree "$top" "$src" || exit 1

passed=0
failed=0
t0=$(date +%s)
say "building $pkg $version ($(cd "$src" && PG_SUPPORTED_VERSIONS=$PG_MAJOR pg_buildext supported-versions | tr '\n' ' ')only; log: $cache/logs/package-build.log)"
mkdir -p "$cache/logs"
if (cd "$src" && export PG_SUPPORTED_VERSIONS=$PG_MAJOR && pg_buildext updatecontrol &&
	dpkg-buildpackage -us -uc -b) >"$cache/logs/package-build.log" 2>&1; then
	deb=$work/${pkg}_${version}_$arch.deb
	if [ -f "$deb" ]; then
		cp "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out/" 2>/dev/null
		say "built in $(($(date +%s) - t0)) s: $out/$(basename "$deb")"
		dpkg-deb -c "$deb" | awk '{ print "    " $6 }' | grep -E '\.(so|control|sql)$' >&2
		# the regression tests dh_pgxs_test ran against the built files
		grep -E '^(ok|not ok) |^# All|tests passed|tests failed|^### ' "$cache/logs/package-build.log" | tail -25 >&2
		passed=$((passed + 1))
	else
		say "dpkg-buildpackage made no $(basename "$deb")"
		failed=$((failed + 1))
	fi
else
	tail -40 "$cache/logs/package-build.log" >&2
	say "BUILD FAILED (log: $cache/logs/package-build.log)"
	failed=$((failed + 1))
	deb=""
fi

if [ -n "$deb" ] && [ "${PACKAGE_ROOT:-1}" != 0 ]; then
	if bash "$top/test/fresh-root.sh" --deb "$out/$(basename "$deb")"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
fi
echo
echo "package: $pkg $version ($(($(date +%s) - t0)) s)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
