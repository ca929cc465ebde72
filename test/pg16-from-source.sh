#!/usr/bin/env bash
# Tests bloomguard against PostgreSQL 16 built from source (Debian ships no
# package for 16).  For a developer's machine; CI does not run it.
#
#   test/pg16-from-source.sh /path/to/postgresql-16-source
#   PG16_SOURCE=/path/to/postgresql-16-source test/pg16-from-source.sh
#
# The source tree is a PostgreSQL 16 release tarball or a REL_16_STABLE
# checkout.  It is configured with --enable-tap-tests (and ICU if its
# headers are there), built out of tree and installed under
# $PG16_PREFIX (/var/cache/bloomguard-test/pg16); a second run with the same
# source reuses that install.  PG16_CONFIGURE_OPTS adds configure options
# (e.g. --enable-cassert).  Then test/run-all.sh runs every suite with
# PG_CONFIG pointing there.  Extra arguments after the source tree go to
# run-all.sh (e.g. --no-bench).  PG16_REBUILD=1 forces a new build.
#
# With no source tree it says so and exits 0.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=/var/cache/bloomguard-test
prefix=${PG16_PREFIX:-$cache/pg16}
build=$prefix-build

src=${1:-${PG16_SOURCE:-}}
[ $# -gt 0 ] && shift
if [ -z "$src" ]; then
	echo "SKIPPED: PostgreSQL 16: no source tree given (pass one as an argument or in PG16_SOURCE)"
	exit 0
fi
src=$(cd "$src" 2>/dev/null && pwd) || { echo "no such directory: $src" >&2; exit 2; }
if [ ! -x "$src/configure" ] || ! grep -q 'AC_INIT(\[PostgreSQL\], \[16' "$src/configure.ac" 2>/dev/null; then
	echo "$src is not a PostgreSQL 16 source tree (configure.ac does not say 16)" >&2
	exit 2
fi
version=$(sed -n 's/^AC_INIT(\[PostgreSQL\], \[\([^]]*\)\].*/\1/p' "$src/configure.ac")
log() { printf '==> %s\n' "$*" >&2; }
t0=$(date +%s)

# build tools: a git checkout has no generated parser files
need=""
for tool in bison:bison flex:flex gcc:gcc make:make perl:perl; do
	command -v "${tool%%:*}" >/dev/null || need="$need ${tool#*:}"
done
for hdr in /usr/include/readline/readline.h:libreadline-dev /usr/include/zlib.h:zlib1g-dev; do
	[ -e "${hdr%%:*}" ] || need="$need ${hdr#*:}"
done
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] || { echo "missing:$need (run as root to install them)" >&2; exit 1; }
	log "installing:$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null || exit 1
fi

# identity of this build: source path, version, newest file in the tree
stamp="$src $version $(find "$src" -type f -newer "$src/configure.ac" -printf '%T@\n' 2>/dev/null | sort -n | tail -1)"
if [ "${PG16_REBUILD:-0}" != 1 ] && [ -x "$prefix/bin/pg_config" ] &&
	[ "$(cat "$prefix/.bloomguard-stamp" 2>/dev/null)" = "$stamp" ]; then
	log "reusing PostgreSQL $version in $prefix"
else
	if pkg-config --exists icu-uc icu-i18n 2>/dev/null; then icu=--with-icu; else icu=--without-icu; fi
	log "building PostgreSQL $version from $src into $prefix ($icu)"
	rm -rf "$build" "$prefix"
	mkdir -p "$build"
	tb=$(date +%s)
	(
		cd "$build" &&
			"$src/configure" --prefix="$prefix" --enable-tap-tests $icu \
				${PG16_CONFIGURE_OPTS:-} >configure.log 2>&1 &&
			make -s -j"$(nproc)" >make.log 2>&1 &&
			make -s install >install.log 2>&1
	) || {
		echo "PostgreSQL $version build failed; logs in $build:" >&2
		tail -n 30 "$build"/*.log >&2
		exit 1
	}
	echo "$stamp" >"$prefix/.bloomguard-stamp"
	log "built and installed in $(($(date +%s) - tb)) s"
fi

# the contrib modules the tests use (010_wal_standby: pg_walinspect), built
# in the same build tree and installed if the installation lacks them
for m in pg_walinspect; do
	[ -f "$("$prefix/bin/pg_config" --sharedir)/extension/$m.control" ] && continue
	log "building contrib/$m"
	make -s -C "$build/contrib/$m" install >>"$build/install.log" 2>&1 || {
		echo "contrib/$m failed to build; log in $build/install.log" >&2
		tail -20 "$build/install.log" >&2
		exit 1
	}
done

# the postgres user must reach the installation
chmod -R go+rX "$prefix"
if id postgres >/dev/null 2>&1 && ! su postgres -s /bin/sh -c "test -x '$prefix/bin/postgres'"; then
	echo "the postgres user cannot run $prefix/bin/postgres: choose a PG16_PREFIX it can reach" >&2
	exit 1
fi

log "running test/run-all.sh with PG_CONFIG=$prefix/bin/pg_config"
PG_CONFIG=$prefix/bin/pg_config bash "$top/test/run-all.sh" "$@"
rc=$?
log "PostgreSQL $version: done in $(($(date +%s) - t0)) s"
exit $rc
