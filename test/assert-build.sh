#!/usr/bin/env bash
# Builds the host's PostgreSQL with assertions on, from Debian's own source
# package at the installed version, and prints the path of its pg_config.
# As root, on Debian 12:
#
#   pgc=$(test/assert-build.sh)    # build, or reuse the cached build
#
# The source comes through the machine's own mirror: deb-src lines for the
# release, -updates and -security suites that the apt sources name are
# written to a private apt directory under the cache, so the machine's apt
# configuration is not touched.  The tree is configured with
# --enable-cassert --enable-debug --enable-tap-tests --with-icu and
# -DUSE_VALGRIND (memory contexts tell Valgrind what is allocated, as
# pgvector's CI builds; no cost outside Valgrind but a few no-op
# instructions, so the one cached build serves test/valgrind.sh too), built and
# installed under $BG_CACHE/pgNN-assert, together with the isolation tester
# and the contrib modules the tests use.  The source and build tree stay in
# $BG_CACHE/pgNN-assert-src, for PostgreSQL's own regression suite
# (test/core-regress.sh).  A second run at the same package version reuses
# everything; ASSERT_REBUILD=1 builds again.  A first build takes about ten
# minutes on two cores.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/mirror.sh"

cache=${BG_CACHE:-/var/cache/bloomguard-test}
major=${PG_MAJOR:-$(ls /usr/lib/postgresql/ 2>/dev/null | sort -n | tail -1)}
major=${major:-15}
log() { printf '==> [assert-build] %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "test/assert-build.sh needs root (apt-get)" >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive

need=""
# valgrind for valgrind/memcheck.h: the build is made with -DUSE_VALGRIND
for p in dpkg-dev bison flex libreadline-dev zlib1g-dev libicu-dev pkg-config gcc make perl \
	libipc-run-perl xz-utils valgrind "postgresql-$major"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
	log "installing:$need"
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

# the version to build: the installed server's package version
version=$(dpkg-query -W -f='${Version}' "postgresql-$major")
prefix=$cache/pg$major-assert
srcdir=$cache/pg$major-assert-src
stamp="postgresql-$major $version cassert valgrind"
# one build at a time: a second caller waits, then reuses the first's build
mkdir -p "$cache"
exec 8>"$cache/.assert-build.lock"
flock 8
# a build is reused only if it is complete and self-contained: an earlier
# version of this script installed the modules into Debian's own directory
# (see below), and such a build is made again
if [ "${ASSERT_REBUILD:-0}" != 1 ] && [ -x "$prefix/bin/pg_config" ] &&
	[ "$(head -1 "$prefix/.bloomguard-stamp" 2>/dev/null)" = "$stamp" ] &&
	case $("$prefix/bin/pg_config" --pkglibdir) in "$prefix"/*) true ;; *) false ;; esac; then
	log "reusing $stamp in $prefix (built from $(sed -n 2p "$prefix/.bloomguard-stamp"))"
	echo "$prefix/bin/pg_config"
	exit 0
fi

# a private apt directory with deb-src lines for the machine's own mirrors;
# one suite at a time, since a version can be listed by a suite whose pool
# this machine cannot reach (-security, here)
apt=$cache/apt-src
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
rm -rf "$srcdir" "$prefix"
mkdir -p "$srcdir"
log "fetching the source of postgresql-$major $version through the machine's mirror"
# fetch_source VERSION-OR-EMPTY: the first suite whose pool serves it
fetch_source() {
	local uri suite d want=$1
	while read -r uri suite; do
		d=$apt/$suite
		mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
		echo "deb-src [signed-by=$keyring] $uri $suite main" >"$d/sources.list"
		aptopts=(-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
			-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o "APT::Get::List-Cleanup=0"
			-o "APT::Sandbox::User=root")
		apt-get "${aptopts[@]}" update -qq >/dev/null 2>&1 || continue
		if (cd "$srcdir" && apt-get "${aptopts[@]}" source -qq "postgresql-$major${want:+=$want}" >source.log 2>&1); then
			log "source of postgresql-$major ${want:-(newest)} from $suite"
			return 0
		fi
		rm -rf "${srcdir:?}"/postgresql-*
	done < <(release_sources)
	return 1
}
if ! fetch_source "$version"; then
	# the binary can come from a suite whose source pool is out of reach:
	# build the newest source a reachable suite has, and say so
	log "NOTE: no reachable suite serves the source of $version; building the newest one that is reachable"
	fetch_source "" || { echo "no reachable suite has the source of postgresql-$major" >&2; tail -5 "$srcdir/source.log" >&2; exit 1; }
fi
tree=$(find "$srcdir" -maxdepth 1 -mindepth 1 -type d -name "postgresql-$major-*" | head -1)
[ -x "$tree/configure" ] || { echo "no source tree in $srcdir" >&2; exit 1; }
ln -sfn "$(basename "$tree")" "$srcdir/tree"
srcversion=$(sed -n 's/^Version: //p' "$srcdir"/postgresql-"$major"_*.dsc | head -1)
# Debian's 50-per-version-dirs.patch hard-codes the module directory to
# /usr/lib/postgresql/NN/lib whatever the prefix: `make install` would put
# this build's plpgsql.so, pgoutput.so, pgxs and pg_regress over the
# installed package's.  Put the module directory back under the prefix
# (and check it below, before anything is installed).
sed -i 's|^override pkglibdir := /usr/lib/postgresql/@PG_MAJORVERSION@/lib$|override pkglibdir := $(pkglibdir)/postgresql|' \
	"$tree/src/Makefile.global.in"

log "building $stamp into $prefix"
t0=$(date +%s)
(
	cd "$tree" &&
		./configure --prefix="$prefix" --enable-cassert --enable-debug --enable-tap-tests \
			--with-icu CFLAGS="-O1 -g" CPPFLAGS="-DUSE_VALGRIND" >configure.log 2>&1 &&
		dirs=$(make -s --no-print-directory -C src/port -f Makefile -f - show-dirs <<-'EOF'
			show-dirs: ; @echo $(bindir) $(libdir) $(pkglibdir) $(datadir) $(includedir_server) $(sysconfdir)
		EOF
		) &&
		for d in $dirs; do
			case $d in "$prefix"/*) ;; *)
				echo "an install directory outside $prefix: $d" >&2
				exit 1 ;;
			esac
		done &&
		make -s -j"$(nproc)" >make.log 2>&1 &&
		make -s install >install.log 2>&1 &&
		make -s -C src/test/isolation install >>install.log 2>&1 &&
		for m in pg_walinspect pg_stat_statements pageinspect; do
			make -s -C "contrib/$m" install >>install.log 2>&1 || exit 1
		done
) || {
	echo "the assert-enabled build failed; logs in $tree:" >&2
	tail -n 30 "$tree"/*.log >&2
	exit 1
}
# the tests run as postgres, which must reach the installation and write
# the regression suite's output in the source tree
chmod -R go+rX "$prefix"
chown -R postgres:postgres "$srcdir" 2>/dev/null || true
printf '%s\nsource %s\n' "$stamp" "$srcversion" >"$prefix/.bloomguard-stamp"
log "built $("$prefix/bin/pg_config" --version) (assertions on; Debian source $srcversion) in $(($(date +%s) - t0)) s"
echo "$prefix/bin/pg_config"
