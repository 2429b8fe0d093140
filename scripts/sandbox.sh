#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# sandbox.sh - a dataplane anyone can poke, on a port whose kernel side
# lives in a network namespace of its own. Nothing touches the host's
# interfaces. Two links (SK_SBX_LINK or up --link):
#   afpacket (default): a veth pair made by this script; the dataplane runs
#       in a namespace of its own (<name>-dp) on one end through
#       net_af_packet, the other end is in the client namespace <name>.
#       About twice as cheap per packet as a tap: no SIGIO per frame.
#   tap: a net_tap made by the dataplane, moved into the client namespace.
# Either way the client side is addressed from 198.18.0.0/15.
#
#   scripts/sandbox.sh up [--config FILE] [--lcores N] [--bin PATH] [--no-control] [--memif]
#                         [--link afpacket|tap]
#       reserve hugepages, start seckill-dataplane on the link (see
#       above), its other end in the namespace, wait for /healthz, print
#       "server=<ip> netns=<ns>". The default config/sandbox.ini sells
#       nothing: for a sale, pass a copy with [seckill] keys and
#       [item.<id>] sections appended (docs/operations.md, "The sandbox").
#       When the config names a store ([store] path, or the older
#       [seckill] store), seckill-control is started too (same
#       --file-prefix, secondary; with [store] path it reads the same file,
#       --config, and gets only the [admin] settings the file lacks as
#       options; else --store DIR; its admin API
#       on the unix socket $STATE/admin.sock and, with a bearer token, on
#       127.0.0.1:SK_SBX_ADMIN_PORT) and "up" waits until it answers;
#       the line then ends with " admin=127.0.0.1:<port>" (or
#       " admin=<socket>" when SK_SBX_ADMIN_PORT is 0: no TCP).
#       The token is random per "up", in $STATE/admin.token (mode 0600,
#       for --admin-token-file / seckillctl --token-file), and as a curl
#       header line in $STATE/admin.header (curl -H @FILE: the token never
#       in argv); both are removed by "down"
#       --memif adds a second port for a DPDK load generator (seckill-loadgen):
#       [port1] net_memif0 in server role on the socket $STATE/memif.sock
#       (a file, not an abstract socket, so any namespace can reach it),
#       address 198.19.0.1/16 (clients from 198.19.0.0/16); the line then
#       also has " memif=<socket> memif_addr=198.19.0.1 memif_addr6=2001:2::1"
#   scripts/sandbox.sh control start|stop|kill
#                                      (re)start the control plane, stop it
#                                      (SIGTERM: last drain), or SIGKILL it
#   scripts/sandbox.sh kill            SIGKILL the dataplane (crash tests);
#                                      "down" then "up" restarts everything
#   scripts/sandbox.sh ctl ARGS...     seckillctl against this sandbox (its
#                                      unix socket: no token needed)
#   scripts/sandbox.sh exec CMD...     run CMD inside the namespace
#   scripts/sandbox.sh telemetry [CMD] a DPDK telemetry command (JSON),
#                                      default /seckill/stats; also
#                                      /seckill/items, /seckill/net,<lcore>
#   scripts/sandbox.sh status          what is up (exit 1 if nothing)
#   scripts/sandbox.sh down            stop what up started (by PID: the
#                                      control plane first), free its
#                                      hugepages, delete the namespace
#
# Environment:
#   SK_SBX        sandbox name = namespace name (default seckill-sbx); lets
#                 tests run their own sandbox next to a developer's
#   SK_DATAPLANE  the binary (default: build/dataplane/seckill-dataplane)
#   SK_SBX_PAGES  2 MiB hugepages wanted free before start (default 512)
#   SK_CONTROL    seckill-control (default: build/control/seckill-control,
#                 or next to SK_DATAPLANE's build); SK_SECKILLCTL likewise
#   SK_SBX_ADMIN_PORT  the control plane's admin TCP port (default 8081; 0 =
#                 the unix socket only)
#   SK_SBX_CONTROL_ARGS extra seckill-control options, e.g.
#                 "--payment-timeout 3" (word-split)
#
# Cores: the dataplane's lcores are the LAST N cpus (N=1 on a 2-core box:
# core 1); its single lcore is the EAL main lcore and runs the loop itself.
# Run load generators on core 0: scripts/sandbox.sh exec taskset -c 0 wrk ...
# The control plane runs on core 0 too: it sleeps between group commits, and
# the dataplane's core must stay free for the polling loop.
set -euo pipefail

NAME=${SK_SBX:-seckill-sbx}
STATE=/run/$NAME
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGES=${SK_SBX_PAGES:-512}

die() {
	echo "sandbox: $*" >&2
	exit 1
}

need_root() {
	[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, hugepages)"
	[ -c /dev/net/tun ] || die "/dev/net/tun missing: net_tap cannot work here"
}

# state KEY - a value saved by "up" (empty if none).
state() {
	[ -f "$STATE/env" ] || return 0
	sed -n "s/^$1=//p" "$STATE/env"
}

hugetlbfs_dir() {
	awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts
}

# reserve_hugepages - make sure PAGES 2 MiB pages are free and hugetlbfs is mounted.
reserve_hugepages() {
	local f=/sys/kernel/mm/hugepages/hugepages-2048kB
	local total free
	total=$(cat $f/nr_hugepages)
	free=$(cat $f/free_hugepages)
	if [ "$free" -lt "$PAGES" ]; then
		echo $((total + PAGES - free)) >$f/nr_hugepages
		free=$(cat $f/free_hugepages)
		[ "$free" -ge "$PAGES" ] || die "only $free free hugepages of 2 MiB (wanted $PAGES)"
	fi
	if [ -z "$(hugetlbfs_dir)" ]; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages
	fi
}

# config_addr FILE - "A.B.C.D/P" of [port0] address.
config_addr() {
	awk -F= '
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec); next }
		sec == "port0" {
			key = $1; gsub(/[ \t]/, "", key)
			if (key == "address") { v = $2; sub(/[ \t]+[#;].*/, "", v); gsub(/[ \t]/, "", v); print v; exit }
		}' "$1"
}

# lcore_list N - the last N cpus as an EAL -l list.
lcore_list() {
	local n=$1 ncpu
	ncpu=$(nproc)
	{ [ "$n" -ge 1 ] && [ "$n" -le "$ncpu" ]; } || die "--lcores must be 1..$ncpu"
	if [ "$n" = 1 ]; then echo $((ncpu - 1)); else echo "$((ncpu - n))-$((ncpu - 1))"; fi
}

# proc_start PID - when PID started (clock ticks after boot; /proc/PID/stat
# field 22), or nothing if there is no such process (or only its zombie).
proc_start() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 0
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '$1 != "Z" { print $20 }'
}

# alive KEY - the process saved as KEY (pid or control_pid) by "up" still
# runs: the same PID with the same start time (KEY_start), whatever binary
# it is (SK_DATAPLANE may be any path) and never a later process that got
# the PID again.
alive() {
	local pid start
	pid=$(state "$1")
	start=$(state "$1_start")
	[ -n "$pid" ] && [ -n "$start" ] && [ "$(proc_start "$pid")" = "$start" ]
}

# remember KEY PID - save PID and its start time as KEY for alive/stop_pid.
remember() {
	sed -i "/^$1=/d; /^$1_start=/d" "$STATE/env"
	printf '%s=%s\n%s_start=%s\n' "$1" "$2" "$1" "$(proc_start "$2")" >>"$STATE/env"
}

# config_key FILE SECTION KEY - a value of the config (empty if unset).
config_key() {
	awk -F= -v want="$2" -v k="$3" '
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec); next }
		sec == want {
			key = $1; gsub(/[ \t]/, "", key)
			if (key == k) { v = $0; sub(/^[^=]*=/, "", v); sub(/[ \t]+[#;].*/, "", v); gsub(/^[ \t]+|[ \t]+$/, "", v); print v; exit }
		}' "$1"
}

# stop_pid KEY SIGNAL - signal the process saved as KEY (if it still is
# that process) and wait for it, SIGKILL after 10 s.
stop_pid() {
	local key=$1 sig=$2 pid
	alive "$key" || return 0
	pid=$(state "$key")
	kill "-$sig" "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		alive "$key" || return 0
		sleep 0.1
	done
	echo "sandbox: $key $pid ignored SIG$sig for 10 s, killing it" >&2
	kill -KILL "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		alive "$key" || return 0
		sleep 0.1
	done
}

ctl_bin() {
	local d
	d=$(dirname "${SK_DATAPLANE:-$REPO/build/dataplane/seckill-dataplane}")
	echo "${SK_SECKILLCTL:-$d/../seckillctl/seckillctl}"
}

# admin_token - a fresh random admin token: $STATE/admin.token (0600) and
# the curl header line $STATE/admin.header (0600), both made under umask 077.
admin_token() {
	(
		umask 077
		head -c 32 /dev/urandom | base64 >"$STATE/admin.token"
		printf 'Authorization: Bearer %s\n' "$(cat "$STATE/admin.token")" >"$STATE/admin.header"
	)
}

# control_start - start seckill-control for the running dataplane, wait
# until its admin API answers (on its unix socket). A secondary whose EAL init fails (seen now
# and then with sanitizer builds, where the primary's memory may not map at
# the same addresses) is started again, at most 3 times.
control_start() {
	local store prefix port pid bin ctl d try sock
	local -a tcp=()
	store=$(state store)
	prefix=$(state prefix)
	port=$(state admin_port)
	sock=$STATE/admin.sock
	[ -s "$STATE/admin.token" ] || admin_token
	[ "$port" = 0 ] || tcp=(--admin-port "$port" --admin-token-file "$STATE/admin.token")
	[ -n "$store" ] || die "the config names no [store] path: no control plane"
	alive pid || die "the dataplane is not running"
	alive control_pid && die "control plane already up (pid $(state control_pid))"
	d=$(dirname "${SK_DATAPLANE:-$REPO/build/dataplane/seckill-dataplane}")
	bin=${SK_CONTROL:-$d/../control/seckill-control}
	ctl=$(ctl_bin)
	[ -x "$bin" ] || die "no control plane binary at $bin (build it, or set SK_CONTROL)"
	# Sanitizer builds: DPDK's vdev bus allocates, in a secondary, a copy of
	# each vdev of the primary (our net_tap) that rte_eal_cleanup() never
	# frees; suppress that one library's leak, nothing of ours.
	printf 'leak:librte_bus_vdev\n' >"$STATE/lsan.supp"
	# One file for both daemons ([store] path): --config, plus what the
	# sandbox manages and the file leaves out (the socket it polls, TCP).
	local -a opts=(--store "$store" --admin-socket "$sock" "${tcp[@]}")
	local dpconfig=$STATE/config.ini
	if [ -n "$(config_key "$dpconfig" store path)" ]; then
		opts=(--config "$dpconfig")
		[ -n "$(config_key "$dpconfig" admin socket)" ] || opts+=(--admin-socket "$sock")
		[ -n "$(config_key "$dpconfig" admin port)" ] || opts+=("${tcp[@]}")
	fi
	for try in 1 2 3; do
		# shellcheck disable=SC2086
		LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$STATE/lsan.supp" \
			"$bin" -l 0 --file-prefix "$prefix" --proc-type=secondary --no-pci -- \
			"${opts[@]}" ${SK_SBX_CONTROL_ARGS:-} \
			</dev/null >>"$STATE/control.log" 2>&1 &
		remember control_pid $!
		for _ in $(seq 1 150); do
			if "$ctl" --socket "$sock" items >/dev/null 2>&1; then
				return 0
			fi
			alive control_pid || break
			sleep 0.1
		done
		alive control_pid && break # up but not answering: give up
		echo "sandbox: control plane exited at start (try $try), see $STATE/control.log" >&2
	done
	tail -n 20 "$STATE/control.log" >&2
	echo "sandbox: control plane did not answer on $sock" >&2
	return 1
}

cmd_control() {
	case ${1:-} in
	start) control_start || exit 1 ;;
	stop) stop_pid control_pid TERM ;;
	kill) stop_pid control_pid KILL ;;
	*) die "control start|stop|kill" ;;
	esac
}

# cleanup_dpdk PREFIX - remove what a dead DPDK process of PREFIX left behind.
cleanup_dpdk() {
	local prefix=$1 dir
	[ -n "$prefix" ] || return 0
	dir=$(hugetlbfs_dir)
	[ -n "$dir" ] && rm -f "$dir/${prefix}map_"*
	rm -rf "/var/run/dpdk/$prefix"
}

cmd_down() {
	local pid prefix ns dpns
	pid=$(state pid)
	prefix=$(state prefix)
	ns=$(state netns)
	dpns=$(state dpns)
	# The control plane first: it is a secondary of the dataplane's memory,
	# and its last drain needs the rings.
	stop_pid control_pid TERM
	stop_pid pid TERM
	cleanup_dpdk "$prefix"
	if [ -n "$ns" ] && ip netns list | grep -qw "^$ns"; then
		ip netns del "$ns"
	fi
	if [ -n "$dpns" ] && ip netns list | grep -qw "^$dpns"; then
		ip netns del "$dpns"
	fi
	local rc=0 log
	[ -f "$STATE/log" ] && { grep -E "prog=seckill-dataplane event=shutdown" "$STATE/log" || true; }
	for log in "$STATE/log" "$STATE/control.log"; do
		[ -f "$log" ] || continue
		# Sanitizer builds: a report must not vanish with the state dir.
		if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log"; then
			cp "$log" "/tmp/$NAME.$(basename "$log")"
			echo "sandbox: sanitizer report in $log, kept as /tmp/$NAME.$(basename "$log")" >&2
			grep -E -A3 "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log" >&2
			rc=1
		fi
	done
	rm -rf "$STATE"
	return $rc
}

cmd_up() {
	local config=$REPO/config/sandbox.ini lcores=1 control=1 memif=0 link=${SK_SBX_LINK:-afpacket}
	local bin=${SK_DATAPLANE:-$REPO/build/dataplane/seckill-dataplane}
	while [ $# -gt 0 ]; do
		case $1 in
		--config) config=${2:?--config FILE}; shift 2 ;;
		--lcores) lcores=${2:?--lcores N}; shift 2 ;;
		--bin) bin=${2:?--bin PATH}; shift 2 ;;
		--no-control) control=0; shift ;;
		--memif) memif=1; shift ;;
		--link) link=${2:?--link afpacket|tap}; shift 2 ;;
		*) die "unknown option '$1' (up [--config FILE] [--lcores N] [--bin PATH] [--no-control] [--memif] [--link afpacket|tap])" ;;
		esac
	done
	need_root
	[ -x "$bin" ] || die "no dataplane binary at $bin (build it, or set SK_DATAPLANE)"
	[ -r "$config" ] || die "cannot read $config"
	if [ -d "$STATE" ]; then
		alive pid && die "already up (pid $(state pid)); run: $0 down"
		cmd_down # leftovers of a crashed run
	fi

	local cidr server prefixlen client tap prefix ns=$NAME lcl pid store
	cidr=$(config_addr "$config")
	store=$(config_key "$config" store path)
	[ -n "$store" ] || store=$(config_key "$config" seckill store)
	[ "$control" = 1 ] || store=
	[ -n "$cidr" ] || die "$config: no [port0] address"
	server=${cidr%/*}
	prefixlen=${cidr#*/}
	case $server in
	198.18.* | 198.19.*) ;;
	*) die "$config: port0.address $server is outside 198.18.0.0/15" ;;
	esac
	if [ "${server##*.}" = 2 ]; then client=${server%.*}.1; else client=${server%.*}.2; fi
	lcl=$(lcore_list "$lcores")
	# Unique per run: tap name (<= 15 chars) and EAL file prefix.
	tap=sk$(printf '%x' $$)$(printf '%x' $((RANDOM % 4096)))
	prefix=sksbx_${NAME//[^a-zA-Z0-9]/_}_$$

	case $link in
	afpacket | tap) ;;
	*) die "--link: afpacket or tap, not '$link'" ;;
	esac
	local dpns="" vdev="net_tap0,iface=$tap"
	reserve_hugepages
	ip netns list | grep -qw "^$ns" && ip netns del "$ns"
	ip netns list | grep -qw "^$ns-dp" && ip netns del "$ns-dp"
	mkdir -p "$STATE"
	if [ "$link" = afpacket ]; then
		command -v ethtool >/dev/null || die "--link afpacket needs ethtool (apt-get install ethtool), or use --link tap"
		# Both ends in namespaces of ours: the host's stack never sees them.
		dpns=$ns-dp
		ip netns add "$dpns"
		ip netns add "$ns"
		ip -n "$dpns" link add "${tap}d" type veth peer name "$tap" netns "$ns"
		ip netns exec "$dpns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		# The kernel leaves TCP checksums to the "hardware": the dataplane
		# would see partial checksums and drop the SYNs.
		ip netns exec "$dpns" ethtool -K "${tap}d" tx off >/dev/null
		ip netns exec "$ns" ethtool -K "$tap" tx off >/dev/null
		ip -n "$dpns" link set "${tap}d" up
		vdev="net_af_packet0,iface=${tap}d,qpairs=1"
	fi
	cat >"$STATE/env" <<-EOF
		prefix=$prefix
		tap=$tap
		link=$link
		dpns=$dpns
		netns=$ns
		server=$server
		client=$client
		config=$config
		store=$store
		admin_port=${SK_SBX_ADMIN_PORT:-8081}
	EOF
	# The config the dataplane reads: the given one, port0 on the link's
	# device, and with --memif a [port1] (a section may come after any other).
	local extra=""
	if [ "$memif" = 1 ] && grep -qE '^[[:space:]]*\[port1\]' "$config"; then
		die "$config has a [port1]: --memif adds its own"
	fi
	awk -v dev="${vdev%%,*}" '
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec) }
		sec == "port0" && $0 ~ /^[ \t]*device[ \t]*=/ { print "device = " dev; next }
		{ print }' "$config" >"$STATE/config.ini"
	if [ "$memif" = 1 ]; then
		printf '\n[port1]\ndevice = net_memif0,role=server,socket=%s,socket-abstract=no\naddress = 198.19.0.1/16\naddress6 = 2001:2::1/64\n' \
			"$STATE/memif.sock" >>"$STATE/config.ini"
		printf 'memif=%s\nmemif_addr=198.19.0.1\nmemif_addr6=2001:2::1\n' "$STATE/memif.sock" >>"$STATE/env"
		extra=" memif=$STATE/memif.sock memif_addr=198.19.0.1 memif_addr6=2001:2::1"
	fi
	config=$STATE/config.ini

	# --no-pci: never probe the host's NICs. stdin/stdout detached so callers
	# (meson, ssh) do not wait for the dataplane.
	local inns=()
	[ -n "$dpns" ] && inns=(ip netns exec "$dpns")
	"${inns[@]}" "$bin" -l "$lcl" --file-prefix "$prefix" --no-pci \
		--vdev "$vdev" -- --config "$config" \
		</dev/null >"$STATE/log" 2>&1 &
	pid=$!
	remember pid "$pid"

	for _ in $(seq 1 300); do
		grep -q "prog=seckill-dataplane event=ready" "$STATE/log" && break
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$STATE/log" >&2
			cmd_down
			die "dataplane exited during start-up"
		fi
		sleep 0.1
	done
	grep -q "prog=seckill-dataplane event=ready" "$STATE/log" || {
		tail -n 20 "$STATE/log" >&2
		cmd_down
		die "dataplane not ready after 30 s"
	}

	if [ "$link" = tap ]; then
		ip netns add "$ns"
		ip link set "$tap" netns "$ns"
	fi
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$client/$prefixlen" dev "$tap"
	ip -n "$ns" link set "$tap" up

	for _ in $(seq 1 60); do
		if ip netns exec "$ns" curl -sf -m 1 -o /dev/null "http://$server/healthz"; then
			if [ -n "$store" ]; then
				control_start || { cmd_down; die "control plane did not start"; }
				local admin=$STATE/admin.sock
				[ "$(state admin_port)" = 0 ] || admin=127.0.0.1:$(state admin_port)
				echo "server=$server netns=$ns admin=$admin$extra"
			else
				echo "server=$server netns=$ns$extra"
			fi
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	tail -n 20 "$STATE/log" >&2
	cmd_down
	die "/healthz did not answer"
}

cmd_exec() {
	local ns
	ns=$(state netns)
	[ -n "$ns" ] || die "not up"
	[ $# -gt 0 ] || die "exec CMD..."
	exec ip netns exec "$ns" "$@"
}

# cmd_telemetry [CMD] - one telemetry command through the DPDK socket, JSON out.
cmd_telemetry() {
	local prefix sock
	prefix=$(state prefix)
	[ -n "$prefix" ] || die "not up"
	sock=/var/run/dpdk/$prefix/dpdk_telemetry.v2
	[ -S "$sock" ] || die "no telemetry socket $sock"
	python3 "$HERE/lib/telemetry.py" "$sock" "${1:-/seckill/stats}"
}

cmd_status() {
	local pid
	pid=$(state pid)
	if alive pid; then
		echo "up: pid=$pid $(tr '\n' ' ' <"$STATE/env")"
		alive control_pid && echo "control: up, pid $(state control_pid)"
		return 0
	fi
	echo "down"
	return 1
}

cmd_ctl() {
	[ -n "$(state admin_port)" ] || die "not up"
	exec "$(ctl_bin)" --socket "$STATE/admin.sock" "$@"
}

case ${1:-} in
up) shift; cmd_up "$@" ;;
down) need_root; cmd_down ;;
exec) shift; cmd_exec "$@" ;;
telemetry) shift; cmd_telemetry "$@" ;;
status) cmd_status ;;
control) shift; need_root; cmd_control "$@" ;;
kill) need_root; stop_pid pid KILL ;;
ctl) shift; cmd_ctl "$@" ;;
*)
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
	exit 2
	;;
esac
