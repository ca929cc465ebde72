#!/usr/bin/env bash
# Builds Citus from its source archive for $PG_CONFIG's PostgreSQL, caches
# the build, and installs it into $PG_CONFIG's installation, for the Citus
# TAP tests (test/t/025_citus.pl).  Citus is AGPL-3.0: it is used only by
# tests, never linked to bloomguard or packaged with it.
#
#   PG_CONFIG=... test/citus-build.sh     # build (or reuse) and install
#
# Exit status: 0 installed (the version is printed on stdout), 3 skipped
# (no archive for this PostgreSQL: the reason is printed on stderr), 1 the
# build failed.
#
# The archives are the unmodified `git archive` tarballs of
# ../shared/vendor/citus/ (README.md there): citus-13.2.2.tar.gz for
# PostgreSQL 15-17, citus-14.0.1.tar.gz for 16-18.  They are looked for
# in $BG_CITUS_SRC (default /work/shared/vendor/citus), never next to the
# checkout: CI runs from a fresh clone elsewhere.  The newest version that
# supports the server is chosen; BG_CITUS_VERSION picks one.
#
# The build is cached under $BG_CACHE (default /var/cache/bloomguard-test)
# as citus-VER-pgMAJOR (citus-VER-pgMAJOR-assert against an assert-enabled
# server): a staged `make install` and a stamp naming the server it was
# built for (its version, configure options and flags, not its paths, so
# that a private copy of an installation reuses the build of the
# original).  A first build takes about five minutes on two cores.
#
# Build notes.  configure wants liblz4-dev and libzstd-dev, and the build
# libkrb5-dev (PostgreSQL's libpq-be.h includes gssapi.h) and, against a
# server built with ICU, whose utils/pg_locale.h includes ICU's headers,
# libicu-dev (bookworm's postgresql-server-dev-15 pulls it in; the
# packages of 17 and 18 in the test roots do not); as root, the script
# installs them.  Citus is configured --without-libcurl: curl only
# serves its anonymous statistics collection, which a test must not
# attempt.  Except against a server whose pg_config.h defines
# HAVE_LIBCURL (18's, built with libcurl for OAuth): Citus's sources test
# that macro, not their own configure's result, so the build needs curl
# (libcurl4-openssl-dev), and the tests turn the collection off
# (citus.enable_statistics_collection, test/lib/BloomGuard/Citus.pm).
# PostgreSQL 15.20's commands/dbcommands.h exports
# have_createdb_privilege(), which 13.2.2's src/include/pg_version_compat.h
# also defines as a static function for PostgreSQL 15: the build fails
# until that one definition is replaced by the header's declaration, done
# here only where the server's header declares it.
set -euo pipefail

log() { printf '==> [citus-build] %s\n' "$*" >&2; }
skip() { printf '==> [citus-build] SKIPPED: %s\n' "$*" >&2; exit 3; }

PG_CONFIG=${PG_CONFIG:-pg_config}
src=${BG_CITUS_SRC:-/work/shared/vendor/citus}
cache=${BG_CACHE:-/var/cache/bloomguard-test}

"$PG_CONFIG" --version >/dev/null 2>&1 || { echo "no pg_config at $PG_CONFIG" >&2; exit 1; }
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')

# the versions of the archives, and the PostgreSQL majors each supports
supports() {
	case $1 in
	13.*) [ "$2" -ge 15 ] && [ "$2" -le 17 ] ;;
	14.*) [ "$2" -ge 16 ] && [ "$2" -le 18 ] ;;
	*) false ;;
	esac
}
if [ -n "${BG_CITUS_VERSION:-}" ]; then
	version=$BG_CITUS_VERSION
	supports "$version" "$major" || skip "Citus $version does not support PostgreSQL $major"
	[ -f "$src/citus-$version.tar.gz" ] || skip "no $src/citus-$version.tar.gz (set BG_CITUS_SRC)"
else
	version=""
	for v in 14.0.1 13.2.2; do
		if supports "$v" "$major" && [ -f "$src/citus-$v.tar.gz" ]; then
			version=$v
			break
		fi
	done
	[ -n "$version" ] || skip "no Citus archive for PostgreSQL $major in $src (set BG_CITUS_SRC)"
fi
archive=$src/citus-$version.tar.gz

flavour=""
if "$PG_CONFIG" --configure | grep -q -- '--enable-cassert'; then
	flavour=-assert
fi
dir=$cache/citus-$version-pg$major$flavour
stamp="citus $version sha256 $(sha256sum "$archive" | cut -d' ' -f1)
$("$PG_CONFIG" --version)
$("$PG_CONFIG" --configure)
$("$PG_CONFIG" --cflags)"

# one build at a time: a second caller waits, then reuses the first's
mkdir -p "$cache"
exec 8>"$cache/.citus-build.lock"
flock 8

if [ "${CITUS_REBUILD:-0}" != 1 ] && [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] &&
	[ -f "$dir/paths" ]; then
	log "reusing Citus $version built for $("$PG_CONFIG" --version) in $dir"
else
	need=""
	pkgs="liblz4-dev libzstd-dev libkrb5-dev make gcc"
	# a server built with ICU includes ICU's headers in utils/pg_locale.h,
	# which Citus's sources include
	if grep -qs 'unicode/ucol.h' "$("$PG_CONFIG" --includedir-server)/utils/pg_locale.h"; then
		pkgs="$pkgs libicu-dev"
	fi
	# Citus's sources test HAVE_LIBCURL, which a server built with libcurl
	# (18's, for OAuth) defines in pg_config.h whatever Citus's configure
	# says: such a server's Citus is built with curl
	curl_opt=--without-libcurl
	if grep -qs '^#define HAVE_LIBCURL 1' "$("$PG_CONFIG" --includedir-server)/pg_config.h"; then
		pkgs="$pkgs libcurl4-openssl-dev"
		curl_opt=
	fi
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
	done
	if [ -n "$need" ]; then
		[ "$(id -u)" = 0 ] || { echo "missing packages:$need (run as root to install them)" >&2; exit 1; }
		log "installing:$need"
		export DEBIAN_FRONTEND=noninteractive
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $need >/dev/null ||
			{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null; }
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	tree=$dir/build/citus-$version
	mkdir -p "$dir/build"
	tar -xzf "$archive" -C "$dir/build"
	[ -x "$tree/configure" ] || { echo "$archive holds no citus-$version/configure" >&2; exit 1; }
	compat=$tree/src/include/pg_version_compat.h
	if grep -q 'have_createdb_privilege' "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" &&
		grep -q '^have_createdb_privilege(void)$' "$compat"; then
		log "patching pg_version_compat.h: the server's commands/dbcommands.h declares have_createdb_privilege()"
		perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n/#include "commands\/dbcommands.h"\n/s' "$compat"
		if grep -q '^have_createdb_privilege(void)$' "$compat"; then
			echo "could not patch have_createdb_privilege() out of $compat" >&2
			exit 1
		fi
	fi
	log "building Citus $version against $("$PG_CONFIG" --version) ($PG_CONFIG)"
	t0=$(date +%s)
	if ! (
		cd "$tree" &&
			PG_CONFIG=$PG_CONFIG ./configure $curl_opt >configure.log 2>&1 &&
			make -s -j"$(nproc)" >make.log 2>&1 &&
			make -s install DESTDIR="$dir/stage" >install.log 2>&1
	); then
		echo "the Citus build failed; logs in $tree:" >&2
		tail -n 30 "$tree"/configure.log "$tree"/make.log "$tree"/install.log 2>/dev/null >&2
		exit 1
	fi
	# where the staged files are: the module directory and the extension
	# scripts of the installation it was built with
	printf '%s\n%s\n' "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)" >"$dir/paths"
	rm -rf "$dir/build"
	printf '%s\n' "$stamp" >"$dir/stamp"
	log "built Citus $version in $(($(date +%s) - t0)) s"
fi

# install: the staged module directory and extension scripts into
# $PG_CONFIG's (the headers Citus installs are not needed)
staged_lib=$dir/stage$(sed -n 1p "$dir/paths")
staged_share=$dir/stage$(sed -n 2p "$dir/paths")
lib=$("$PG_CONFIG" --pkglibdir)
share=$("$PG_CONFIG" --sharedir)
[ -f "$staged_lib/citus.so" ] || { echo "no citus.so in $staged_lib" >&2; exit 1; }
# Each file only where it differs, and by a rename: a server running with
# the old citus.so mapped (another suite's cluster) keeps the file it has
# open, where a copy over it would change the pages it runs (a crash).
install_tree() {
	local f
	(cd "$1" && find . -type f) | while IFS= read -r f; do
		cmp -s "$1/$f" "$2/$f" && continue
		mkdir -p "$(dirname "$2/$f")"
		cp -p "$1/$f" "$2/$f.citus-build.$$"
		chmod a+rX "$2/$f.citus-build.$$"
		mv -f "$2/$f.citus-build.$$" "$2/$f"
	done
}
install_tree "$staged_lib" "$lib"
install_tree "$staged_share/extension" "$share/extension"
log "installed Citus $version into $lib"
echo "$version"
