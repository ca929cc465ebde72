# Shared by test/run-all.sh, test/demo.sh, test/bench/run.sh, test/matrix.sh
# and test/pg16-from-source.sh.
# Installs what is missing (Debian, as root), builds and installs bloomguard,
# and runs things as the postgres user (PostgreSQL refuses root).
#
# Which PostgreSQL: every path comes from $PG_CONFIG (bindir, pkglibdir,
# sharedir), so any installation works, a relocated copy or a source build
# included.  When PG_CONFIG is not set it is Debian's pg_config for $PG_MAJOR
# if that is set, else the newest installed /usr/lib/postgresql/*/bin/pg_config,
# else the version the distribution's "postgresql" package depends on (15 on
# Debian 12).

bg_log() { printf '==> %s\n' "$*" >&2; }

# The major version of the PostgreSQL that pg_config $1 belongs to.
bg_pg_config_major() {
	{ "$1" --version 2>/dev/null || true; } | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'
}

# The distribution's default major version, from the "postgresql"
# metapackage (empty if apt knows nothing about it).
bg_distro_major() {
	{ apt-cache depends postgresql 2>/dev/null || true; } |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -1
}

if [ -n "${PG_CONFIG:-}" ]; then
	if [ -x "$PG_CONFIG" ]; then
		PG_MAJOR=$(bg_pg_config_major "$PG_CONFIG")
	elif [ -z "${PG_MAJOR:-}" ]; then
		PG_MAJOR=$(printf '%s\n' "$PG_CONFIG" | sed -n 's|.*/postgresql/\([0-9][0-9]*\)/bin/pg_config$|\1|p')
	fi
elif [ -n "${PG_MAJOR:-}" ]; then
	PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
else
	PG_CONFIG=$({ ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null || true; } | sort -t/ -k5,5n | tail -1)
	if [ -n "$PG_CONFIG" ]; then
		PG_MAJOR=$(bg_pg_config_major "$PG_CONFIG")
	else
		PG_MAJOR=$(bg_distro_major)
		PG_MAJOR=${PG_MAJOR:-15}
		PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
	fi
fi
: "${PG_MAJOR:?cannot tell the PostgreSQL major version of $PG_CONFIG}"
export PG_CONFIG PG_MAJOR

# Set PG_BIN, PG_PKGLIBDIR and PG_SHAREDIR from $PG_CONFIG (again after an
# install has created it).
bg_pg_paths() {
	if [ -x "$PG_CONFIG" ]; then
		PG_BIN=$("$PG_CONFIG" --bindir)
		PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
		PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
	else
		PG_BIN="" PG_PKGLIBDIR="" PG_SHAREDIR=""
	fi
}
bg_pg_paths

# Is $PG_CONFIG the one Debian's postgresql-$PG_MAJOR packages provide (or
# will provide once installed)?
bg_pg_is_debian() {
	[ "$PG_CONFIG" = "/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" ] ||
		[ ! -e "$PG_CONFIG" ]
}

# Install the packages we need, if any is missing.  The PostgreSQL packages
# themselves only when $PG_CONFIG is Debian's.
bg_install_deps() {
	local pkgs="libxxhash-dev libipc-run-perl python3-yaml make gcc $*"
	local missing=""
	if bg_pg_is_debian; then
		pkgs="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR $pkgs"
	fi
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "missing packages:$missing (run as root to install them)" >&2
			return 1
		fi
		bg_log "installing:$missing"
		# no default cluster: the tests start their own
		mkdir -p /etc/postgresql-common
		if ! grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf; then
			echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
		fi
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing >/dev/null || return 1
	fi
	bg_pg_paths
	if [ ! -x "$PG_CONFIG" ]; then
		echo "no pg_config at $PG_CONFIG" >&2
		return 1
	fi
	# pglogical for the TAP test of its apply worker (016), where the
	# distribution builds it for this version; the test skips that part
	# without it
	if bg_pg_is_debian && [ "$(id -u)" = 0 ] &&
		! dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR-pglogical" 2>/dev/null | grep -q "install ok installed"; then
		if apt-cache show "postgresql-$PG_MAJOR-pglogical" >/dev/null 2>&1; then
			bg_log "installing: postgresql-$PG_MAJOR-pglogical"
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				"postgresql-$PG_MAJOR-pglogical" >/dev/null ||
				bg_log "postgresql-$PG_MAJOR-pglogical did not install: TAP 016 skips its pglogical part"
		else
			bg_log "no postgresql-$PG_MAJOR-pglogical package: TAP 016 skips its pglogical part"
		fi
	fi
	bg_ensure_postgres_user
}

# A postgres user to run the servers as (Debian's packages create it; a
# source build does not).
bg_ensure_postgres_user() {
	id postgres >/dev/null 2>&1 && return 0
	[ "$(id -u)" = 0 ] || return 0
	bg_log "creating the postgres user"
	useradd --system --user-group --home-dir /var/lib/postgresql --create-home \
		--shell /bin/bash postgres
}

# Build and install the extension from the tree at $1.  The compiler's
# messages, for every file (make -k), go to stderr (and to $BG_BUILD_LOG if
# set), followed by a line "build: N compiler warnings".
bg_build_install() {
	local rc log nwarn
	log=${BG_BUILD_LOG:-$(mktemp /tmp/bloomguard-build.XXXXXX)}
	bg_log "building bloomguard against $("$PG_CONFIG" --version) ($PG_CONFIG)"
	make -C "$1" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1
	make -C "$1" -s -k -j"$(nproc)" PG_CONFIG="$PG_CONFIG" 2>&1 >/dev/null | tee "$log" >&2
	rc=${PIPESTATUS[0]}
	nwarn=$(grep -c 'warning:' "$log" || true)
	echo "build: $nwarn compiler warnings" >&2
	if [ "$rc" != 0 ]; then
		echo "build: FAILED ($(grep -c 'error:' "$log" || true) errors)" >&2
	fi
	[ -n "${BG_BUILD_LOG:-}" ] || rm -f "$log"
	[ "$rc" = 0 ] || return 1
	make -C "$1" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}

# Copy the tree at $1 into a fresh directory the postgres user owns; print it.
bg_copy_for_postgres() {
	local dir
	dir=$(mktemp -d /tmp/bloomguard.XXXXXX)
	cp -a "$1/." "$dir/"
	chown -R postgres:postgres "$dir"
	chmod 755 "$dir"
	echo "$dir"
}

# Run a command as the postgres user (or as ourselves if we are not root).
bg_as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		su postgres -s /bin/bash -c "export PG_CONFIG='$PG_CONFIG'; $*"
	else
		bash -c "$*"
	fi
}
