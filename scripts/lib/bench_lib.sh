# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# bench_lib.sh - what scripts/bench.sh and scripts/bench_conns.sh share:
# logging, the build's binaries, the sandbox with a memif port, telemetry
# snapshots from one python3 coprocess, and the cleanup trap. Source it
# after setting BENCH_NAME (the log prefix) and BUILD (may be empty).
#
# Sets: HERE REPO SBX NCPU DPCPU SK_DATAPLANE LOADGEN TOKEN SK_SBX LG_PREFIX
# tmp RUN. The caller sets SK_SBX_PAGES before sbx_start if it needs more
# than the default.

HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
REPO=$(dirname "$HERE")
SBX=$HERE/sandbox.sh

die() {
	echo "$BENCH_NAME: [${SECONDS}s] $*" >&2
	exit 1
}
log() {
	echo "$BENCH_NAME: [${SECONDS}s] $*" >&2
}

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, hugepages)"
NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || die "needs 2 cpus (dataplane on the last, load on cpu 0)"
DPCPU=$((NCPU - 1))
for t in python3 taskset timeout ip; do
	command -v "$t" >/dev/null || die "needs $t"
done
# shellcheck source=bench_tele.sh
. "$HERE/lib/bench_tele.sh"
bench_build
export SK_DATAPLANE=${SK_DATAPLANE:-$BUILD/dataplane/seckill-dataplane}
LOADGEN=${SK_LOADGEN:-$BUILD/loadgen/seckill-loadgen}
TOKEN=${SK_TOKEN:-$BUILD/tools/seckill-token}
for b in "$SK_DATAPLANE" "$LOADGEN" "$TOKEN"; do
	[ -x "$b" ] || die "not an executable: $b"
done

export SK_SBX=sk-$BENCH_NAME-$$
LG_PREFIX=sk-$BENCH_NAME-lg-$$
tmp=$(mktemp -d "/tmp/sk-$BENCH_NAME.XXXXXX")
RUN=$tmp/run
mkdir -p "$RUN"
: >"$RUN/order"
CUR_PID=""   # the load tool running now
PERF_PID=""  # perf record (--profile)
TELE_PROC="" # the telemetry reader (coprocess)
SBX_UP=0

bench_cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in $CUR_PID $PERF_PID $TELE_PROC; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ "$SBX_UP" = 1 ] && { "$SBX" down >/dev/null || rc=1; }
	rm -rf "/var/run/dpdk/$LG_PREFIX"
	if [ -n "${BENCH_KEEP:-}" ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
	exit "$rc"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# bg_wait CMD... - run CMD in the background, remember its PID (the trap
# stops it), wait for it; returns its status.
bg_wait() {
	local rc=0
	"$@" &
	CUR_PID=$!
	wait "$CUR_PID" || rc=$?
	CUR_PID=""
	return $rc
}

# tele_start - the telemetry reader of the sandbox (bench_tele.sh).
tele_start() {
	local prefix
	prefix=$(sed -n 's/^prefix=//p' "/run/$SK_SBX/env")
	[ -n "$prefix" ] || die "no prefix in /run/$SK_SBX/env"
	tele_open "/var/run/dpdk/$prefix/dpdk_telemetry.v2"
}

# tls_cert - an ECDSA P-256 certificate for shop.test, self-signed, in
# $tmp/ec.pem and its key in $tmp/ec.key (the [tls] scenarios); dies
# without openssl.
tls_cert() {
	command -v openssl >/dev/null || die "the TLS scenarios need openssl"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj /CN=shop.test -addext subjectAltName=DNS:shop.test \
		-keyout "$tmp/ec.key" -out "$tmp/ec.pem" 2>"$tmp/openssl.log" ||
		die "openssl req: $(cat "$tmp/openssl.log")"
	chmod 600 "$tmp/ec.key"
}


# sbx_start CONFIG [--control] - the sandbox with a memif port (and, with
# --control, the control plane the config's [store] names); sets MEMIF,
# MEMIF_ADDR, MEMIF_ADDR6 (the port's IPv6 address), SERVER, DP_PID.
sbx_start() {
	local out up=(--memif --no-control)
	[ "${2:-}" = --control ] && up=(--memif)
	out=$("$SBX" up "${up[@]}" --config "$1") || die "sandbox up failed"
	SBX_UP=1
	MEMIF=$(echo "$out" | sed -n 's/.* memif=\([^ ]*\).*/\1/p')
	MEMIF_ADDR=$(echo "$out" | sed -n 's/.* memif_addr=\([0-9.]*\).*/\1/p')
	# shellcheck disable=SC2034 # for the caller (bench.sh: soldout6, buy6)
	MEMIF_ADDR6=$(echo "$out" | sed -n 's/.* memif_addr6=\([0-9a-f:]*\).*/\1/p')
	SERVER=$(echo "$out" | sed -n 's/.*server=\([0-9.]*\).*/\1/p')
	[[ -n $MEMIF && -n $MEMIF_ADDR && -n $SERVER ]] || die "sandbox up printed no memif=/server= ($out)"
	DP_PID=$(sed -n 's/^pid=//p' "/run/$SK_SBX/env")
	log "sandbox up: $out (dataplane pid $DP_PID on cpu $DPCPU)"
	tele_start
}

sbx_stop() {
	tele_stop
	"$SBX" down >/dev/null || die "sandbox down reported a problem"
	SBX_UP=0
}

# base_config [SECTION KEY...] - config/sandbox.ini without the given keys
# of the given section (the caller sets its own: a key set twice is an
# error), e.g. base_config seckill dedup_slots tcp max_conns.
base_config() {
	awk -v drop="$*" '
		BEGIN { n = split(drop, d, " "); for (i = 1; i < n; i += 2) skip[d[i] "." d[i + 1]] = 1 }
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec) }
		/^[ \t]*[a-z_]+[ \t]*=/ { k = $0; sub(/[ \t]*=.*/, "", k); gsub(/[ \t]/, "", k); if ((sec "." k) in skip) next }
		{ print }' "$REPO/config/sandbox.ini"
}

# lg_start DIR TIMEOUT LOADGEN-ARGS... - the loadgen over memif on core 0
# (its own EAL prefix, in memory), bounded by TIMEOUT s, in the background
# (CUR_PID; lg_wait returns its status); its JSON in DIR/out.json and its
# log in DIR/log.
lg_start() {
	local d=$1 t=$2
	shift 2
	timeout -k 5 "$t" taskset -c 0 "$LOADGEN" -l 0 --in-memory --no-telemetry \
		--file-prefix "$LG_PREFIX" --no-pci --log-level=lib.eal:warning \
		--vdev "net_memif0,role=client,socket=$MEMIF,socket-abstract=no" -- \
		--server "$MEMIF_ADDR" --quiet --json "$@" >"$d/out.json" 2>"$d/log" &
	CUR_PID=$!
}
lg_wait() {
	local rc=0
	wait "$CUR_PID" || rc=$?
	CUR_PID=""
	return $rc
}
