# Shared by test/run-all.sh, test/demo.sh and test/bench/run.sh.
# Installs what is missing (Debian 12, as root), builds and installs
# bloomguard, and runs things as the postgres user (PostgreSQL refuses root).

PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
export PG_CONFIG=${PG_CONFIG:-$PG_BIN/pg_config}

bg_log() { printf '==> %s\n' "$*" >&2; }

# Install the packages we need, if any is missing.
bg_install_deps() {
	local pkgs="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR libxxhash-dev libipc-run-perl python3-yaml make gcc $*"
	local missing=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
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
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Build and install the extension from the tree at $1.
bg_build_install() {
	bg_log "building bloomguard"
	make -C "$1" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
	make -C "$1" -s PG_CONFIG="$PG_CONFIG" >/dev/null
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
		su postgres -s /bin/bash -c "$*"
	else
		bash -c "$*"
	fi
}
