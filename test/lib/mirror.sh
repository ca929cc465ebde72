# Shared by test/matrix.sh, test/assert-build.sh and test/fresh-root.sh:
# the Debian mirrors this machine's apt sources name.  Nothing here writes
# to the machine's apt configuration.

# "URI suite" for every enabled deb source of this machine's apt (deb822
# .sources files and classic .list lines).
apt_sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no")
					for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
				types = ""; enabled = ""; nu = 0; ns = 0
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[^ \t]/ { field = tolower($1); sub(/:$/, "", field); $1 = "" }
			{
				if (field == "types") types = types " " $0
				else if (field == "enabled") { enabled = tolower($0); gsub(/ /, "", enabled) }
				else if (field == "uris") for (i = 1; i <= NF; i++) { if ($i != "") u[++nu] = $i }
				else if (field == "suites") for (i = 1; i <= NF; i++) { if ($i != "") s[++ns] = $i }
			}
			END { flush() }' "$f"
	done
	{ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' |
		awk '$1 == "deb" && NF >= 3 { print $2, $3 }'
}

# The Debian mirror: the source that serves this machine's own release
# (its codename exactly, not -security or -updates).  BG_DEBIAN_MIRROR
# overrides.
debian_mirror() {
	local codename uri
	if [ -n "${BG_DEBIAN_MIRROR:-}" ]; then
		echo "${BG_DEBIAN_MIRROR%/}"
		return
	fi
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(apt_sources | awk -v c="$codename" '$2 == c && $1 ~ /^(https?|ftp|file):/ { print $1; exit }')
	[ -n "$uri" ] || uri=$(apt_sources | awk '$1 ~ /^(https?|ftp|file):/ && $1 ~ /\/debian\/?$/ { print $1; exit }')
	echo "${uri%/}"
}

# "URI suite" for the machine's own release and its -updates and -security
# suites, as the apt sources name them (for deb-src lines).
release_sources() {
	local codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	apt_sources | awk -v c="$codename" '$1 ~ /^(https?|ftp|file):/ &&
		($2 == c || $2 == c "-updates" || $2 == c "-security") && !seen[$0]++'
}
