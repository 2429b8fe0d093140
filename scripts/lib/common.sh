# shellcheck shell=bash
# Helpers shared by setup.sh, test.sh, demo.sh and sandbox.sh: Debian
# packages, hugepages, logging. Source it; it defines functions only.

# The variables are for the scripts that source this file.
# shellcheck disable=SC2034
SK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian 12 packages the build needs.
# shellcheck disable=SC2034
SK_BUILD_PKGS=(gcc meson ninja-build pkg-config libdpdk-dev dpdk check liblmdb-dev
	librdkafka-dev libhiredis-dev libjansson-dev libmicrohttpd-dev libssl-dev
	libinih-dev libcurl4-openssl-dev libmariadb-dev)
# ... and what the tests and the demo drive it with.
# shellcheck disable=SC2034
SK_TEST_PKGS=(clang libclang-rt-14-dev clang-format curl wrk apache2-utils
	netcat-openbsd iproute2 iputils-ping python3 procps kmod spin
	slowhttptest hping3 ethtool shellcheck mariadb-server mariadb-client
	redis-server redis-tools stunnel4 haproxy openssl chromium chromium-driver prometheus python3-yaml groff-base systemd man-db)

sk_log() { printf '==> %s\n' "$*" >&2; }
sk_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

sk_need_root() {
	[ "$(id -u)" -eq 0 ] || sk_die "run as root (hugepages, network namespaces, apt-get)"
}

# sk_install_pkgs PKG... - install what is missing; 'apt-get update' once.
sk_install_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	sk_log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || sk_die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		sk_die "apt-get install ${missing[*]} failed"
}

# sk_hugepages MB - make sure at least MB MiB of 2 MiB hugepages are reserved
# and hugetlbfs is mounted.
sk_hugepages() {
	local want=$(( $1 / 2 )) have
	have=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$have" -lt "$want" ]; then
		echo "$want" > /proc/sys/vm/nr_hugepages
		have=$(cat /proc/sys/vm/nr_hugepages)
		[ "$have" -ge "$want" ] || sk_die "could reserve only $have of $want hugepages"
	fi
	# The file system type is the third field ("nodev /dev/hugepages
	# hugetlbfs ..."): a second mount over the first would hide the page
	# files of every DPDK primary already running, and a secondary started
	# afterwards could not map them (EAL: "Error allocating from heap").
	if ! awk '$3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages || sk_die "cannot mount hugetlbfs"
	fi
}

# sk_build DIR [--target T]... [MESON OPTIONS...] - configure (once) and
# build: every target, or only the ninja targets named by --target.
sk_build() {
	local dir=$1 targets=()
	shift
	while [ "${1:-}" = --target ]; do
		targets+=("$2")
		shift 2
	done
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; sk_die "meson setup $dir failed"; }
	else
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; sk_die "meson setup $dir failed"; }
	fi
	ninja -C "$dir" "${targets[@]}" >"$dir.ninja.log" 2>&1 ||
		{ tail -50 "$dir.ninja.log"; sk_die "build in $dir failed"; }
}
