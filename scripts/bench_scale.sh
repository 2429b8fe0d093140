#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench_scale.sh - answers per second against dataplane lcores: the same
# scenarios at 1, 2, 4 ... N lcores, each against seckill-loadgen on as
# many lcores, over one multi-queue memif port (the spread layout: the
# loadgen's stack k sends on queue k, which dataplane lcore k polls and
# answers on; docs/operations.md "Lcores and queues").
#
#   scripts/bench_scale.sh [--lcores LIST] [--duration S] [--only NAMES]
#                          [--json] [--build DIR] [--no-huge]
#
#   --lcores LIST  dataplane lcore counts (default 1,2,4,... while 2 x N
#                  cpus exist); each N takes N cpus for the dataplane (the
#                  last ones) and N for the loadgen (the first ones)
#   --duration S   seconds of load per scenario (default 5)
#   --only NAMES   comma-separated scenarios of: soldout16, soldout1, buy,
#                  buy_jwt
#   --json         one JSON object on stdout: {"machine": ..., "runs":
#                  [{"lcores", "scenario", "rps", "busy_cycles_per_req",
#                  "efficiency", "p99_us", "dp_idle_share", "loadgen_limited",
#                  "errors", "per_lcore_rps"}, ...]}; else a markdown table
#   --build DIR    the build holding dataplane/ and loadgen/ (default
#                  build/rel, build/release, build)
#   --no-huge      run both programs without hugepages (--no-huge; for a
#                  machine where none can be reserved)
#
# Scenarios (keep-alive; connections and requests are totals over the
# loadgen's lcores):
#   soldout16  POST /v1/seckill/2 (total 0), X-User-Id, 64 conns per lcore x
#              depth 16
#   soldout1   the same, one request per frame: 1,000 conns per lcore x depth 1
#   buy        POST /v1/seckill/1, distinct X-User-Id, every answer a win,
#              64 conns per lcore x depth 16, for half the duration (at
#              least 1 s), at most 3,900,000 per lcore (what each lcore's
#              order ring holds without a control plane)
#   buy_jwt    POST /v1/seckill/3, a distinct pre-minted JWT per request,
#              64 conns per lcore x depth 16, for half the duration, at most
#              500,000 per lcore (4,000,000 in all: the loadgen's token pool)
# Every run is bounded by time, so that all loadgen stacks load for the same
# time: a run bounded by a count ends when its slowest stack does, and the
# idle tail of the others would read as poor scaling.
#
# For each run: the answers/s (the loadgen's, summed over its lcores, and
# each lcore's), busy cycles per request (the dataplane's telemetry between
# the loadgen's connections being up and its end), the efficiency against
# N x the 1-lcore answers/s, p99, and whether the loadgen was the limit
# (the dataplane idle more than 10% of the measured time: then the figure
# says what the loadgen could send, not what the dataplane can answer).
#
# Needs root (hugepages), python3, timeout. Every run is bounded
# (timeout), every process is stopped by its PID, files go to a temp dir.
# Addresses: 198.18.0.0/15 (the memif link; no kernel interface is made).
set -euo pipefail

LCORES="" DUR=5 ONLY="" JSON=0 BUILD="" NOHUGE=0
while [ $# -gt 0 ]; do
	case $1 in
	--lcores) LCORES=${2:?--lcores LIST}; shift 2 ;;
	--duration) DUR=${2:?--duration S}; shift 2 ;;
	--only) ONLY=,${2:?--only NAMES},; shift 2 ;;
	--json) JSON=1; shift ;;
	--build) BUILD=${2:?--build DIR}; shift 2 ;;
	--no-huge) NOHUGE=1; shift ;;
	-h | --help)
		awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
		exit 0
		;;
	*) echo "bench_scale: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
if ! [[ $DUR =~ ^[0-9]+$ ]] || [ "$DUR" -lt 2 ] || [ "$DUR" -gt 600 ]; then
	echo "bench_scale: --duration: 2..600 seconds" >&2
	exit 2
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
die() {
	echo "bench_scale: [${SECONDS}s] $*" >&2
	exit 1
}
log() {
	echo "bench_scale: [${SECONDS}s] $*" >&2
}
for t in python3 timeout; do
	command -v "$t" >/dev/null || die "needs $t"
done
[ "$(id -u)" = 0 ] || die "must run as root (hugepages, DPDK runtime files)"
# shellcheck source=lib/bench_tele.sh
. "$HERE/lib/bench_tele.sh"
bench_build
DP=${SK_DATAPLANE:-$BUILD/dataplane/seckill-dataplane}
LOADGEN=${SK_LOADGEN:-$BUILD/loadgen/seckill-loadgen}
for b in "$DP" "$LOADGEN"; do
	[ -x "$b" ] || die "not an executable: $b"
done
# SK_RUN_PREFIX: a command put before both programs (e.g. a copied
# ld-linux-x86-64.so.2 --library-path DIR on a machine without DPDK), and
# SK_EAL_EXTRA: EAL options for both (e.g. -d PMD.so).
read -ra RUNP <<<"${SK_RUN_PREFIX:-}"
read -ra EALX <<<"${SK_EAL_EXTRA:-}"

mapfile -t CPUS < <(python3 -c 'import os; print("\n".join(map(str, sorted(os.sched_getaffinity(0)))))')
NCPU=${#CPUS[@]}
[ "$NCPU" -ge 2 ] || die "needs 2 cpus (one for the dataplane, one for the loadgen)"
if [ -z "$LCORES" ]; then
	LCORES=1
	for ((n = 2; 2 * n <= NCPU; n *= 2)); do LCORES+=",$n"; done
fi
IFS=, read -ra NS <<<"$LCORES"
for n in "${NS[@]}"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "--lcores: '$n' is not a count"
	[ $((2 * n)) -le "$NCPU" ] ||
		die "--lcores: $n dataplane lcores need $((2 * n)) cpus ($n + $n for the loadgen); this machine gives $NCPU"
done
NEXT=$((2 * ${NS[-1]}))
MORE=""
[ $((2 * NEXT)) -le "$NCPU" ] || MORE="$NEXT lcores need $((2 * NEXT)) cpus ($NEXT for the dataplane, $NEXT for the loadgen); this machine has $NCPU: run on a larger one for more"

tmp=$(mktemp -d /tmp/sk-scale.XXXXXX)
RUN=$tmp/run
mkdir -p "$RUN"
PFX=sk-scale-$$
DP_PID="" CUR_PID="" TELE_PROC=""

cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in $CUR_PID $TELE_PROC $DP_PID; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/$PFX-dp" "/var/run/dpdk/$PFX-lg"
	if [ -n "${BENCH_KEEP:-}" ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

BUY_N=3900000 # most buys per lcore: the order ring (4194304) holds them
BUY_DUR=$(((DUR + 1) / 2)) # seconds of the buy runs

# jwt_n N - most JWT buys at N lcores: 500,000 each, the token pool's 4,000,000 at most.
jwt_n() {
	local t=$((500000 * $1))
	echo $((t > 4000000 ? 4000000 : t))
}

# pow2 N - the least power of two >= N (an item's dedup slots are one).
pow2() {
	local p=1
	while [ "$p" -lt "$1" ]; do p=$((p * 2)); done
	echo "$p"
}

wanted() {
	[ -z "$ONLY" ] || [[ $ONLY == *",$1,"* ]]
}

# cpu_list FIRST COUNT - COUNT cpus from index FIRST of CPUS, comma-separated.
cpu_list() {
	local out="" i
	for ((i = $1; i < $1 + $2; i++)); do out+="${out:+,}${CPUS[$i]}"; done
	echo "$out"
}

# mem_args - the EAL memory options of both programs.
mem_args() {
	if [ "$NOHUGE" = 1 ]; then echo "--no-huge -m $1"; else echo "--in-memory"; fi
}

# dp_start N AUTH - the dataplane on the last N cpus with one memif port
# (N queue pairs), auth off or on; waits for its ready line.
dp_start() {
	local n=$1 auth=$2 cfg=$tmp/dp.ini i d1 d3
	d1=$(pow2 $((2 * BUY_N * n)))
	d3=$(pow2 $((1048576 * n)))
	{
		cat <<-EOF
			[dataplane]
			mbufs = $((16384 * n + 16383))
			burst = 32

			[port0]
			device = net_memif0,role=server,socket=$tmp/memif.sock,socket-abstract=no
			address = 198.18.0.1/15
			rx_desc = 1024
			tx_desc = 1024

			[tcp]
			max_conns = 4096

			[seckill]
			dedup_slots = $((d1 + d3 + 1024))
			order_ring = 4194304
		EOF
		if [ "$auth" = on ]; then
			printf 'auth = on\nsecret_file = %s\n' "$tmp/secret"
		else
			printf 'auth = off\n'
		fi
		printf '\n[item.1]\nname = scale buys\ntotal = %d\ndedup_slots = %d\n' $((BUY_N * n)) "$d1"
		printf '\n[item.2]\nname = scale sold out\ntotal = 0\ndedup_slots = 1024\n'
		printf '\n[item.3]\nname = scale jwt buys\ntotal = %d\ndedup_slots = %d\n' "$(jwt_n "$n")" "$d3"
	} >"$cfg"
	: >"$tmp/dp.log"
	# shellcheck disable=SC2046 # mem_args is words on purpose
	timeout -k 5 3600 "${RUNP[@]}" "$DP" -l "$(cpu_list $((NCPU - n)) "$n")" --file-prefix "$PFX-dp" \
		--no-pci $(mem_args $((2048 + 1024 * n))) "${EALX[@]}" --log-level=lib.eal:warning \
		-- --config "$cfg" >"$tmp/dp.log" 2>&1 &
	DP_PID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q 'event=ready' "$tmp/dp.log" && break
		kill -0 "$DP_PID" 2>/dev/null || die "the dataplane exited: $(tail -3 "$tmp/dp.log")"
		sleep 0.1
	done
	grep -q 'event=ready' "$tmp/dp.log" || die "the dataplane was not ready in 60 s: $(tail -3 "$tmp/dp.log")"
	grep -q "mode=spread queues=$n\|mode=direct queues=1" "$tmp/dp.log" ||
		die "port0 is not in the spread layout: $(grep 'event=port' "$tmp/dp.log")"
	tele_open "/var/run/dpdk/$PFX-dp/dpdk_telemetry.v2"
}

dp_stop() {
	tele_stop
	kill -TERM "$DP_PID" 2>/dev/null || true
	wait "$DP_PID" 2>/dev/null || true
	DP_PID=""
}

# run N NAME CONNS LOADGEN-ARGS... - one scenario: the loadgen on the first
# N cpus; snapshots once its connections are up and after it ends.
run() {
	local n=$1 name=$2 conns=$3 d rc=0
	shift 3
	wanted "$name" || return 0
	d=$RUN/$n-$name
	mkdir -p "$d"
	echo "$n $name" >>"$RUN/order"
	# shellcheck disable=SC2046
	timeout -k 5 $((DUR + 120)) "${RUNP[@]}" "$LOADGEN" -l "$(cpu_list 0 "$n")" --file-prefix "$PFX-lg" \
		--no-pci --no-telemetry $(mem_args $((1024 + 1024 * n))) "${EALX[@]}" \
		--log-level=lib.eal:warning \
		--vdev "net_memif0,role=client,socket=$tmp/memif.sock,socket-abstract=no" -- \
		--server 198.18.0.1 --clients 198.19.0.0/16 --quiet --json --drain-ms 300 \
		--conns "$conns" --duration "$DUR" "$@" >"$d/out.json" 2>"$d/log" &
	CUR_PID=$!
	# a loadgen that cannot start (usage, link) ends this run, not the script
	if tele_try_wait total.tcp_conns "$conns" 60; then snap "$d/t0.json"; fi
	wait "$CUR_PID" || rc=$?
	CUR_PID=""
	snap "$d/t1.json"
	echo "$rc" >"$d/rc"
	log "$n lcores, $name: $(sed -n 's/^  requests: //p' "$d/log" | head -1) (exit $rc)"
}

secret "$tmp/secret"
for n in "${NS[@]}"; do
	if wanted soldout16 || wanted soldout1 || wanted buy; then
		dp_start "$n" off
		run "$n" soldout16 $((64 * n)) --depth 16 --mix buy=1 --item 2 --users 100000000
		run "$n" soldout1 $((1000 * n)) --depth 1 --mix buy=1 --item 2 --users 100000000
		run "$n" buy $((64 * n)) --depth 16 --mix buy=1 --item 1 --user-base 1 \
			--users $((BUY_N * n)) --requests $((BUY_N * n)) --duration "$BUY_DUR"
		dp_stop
	fi
	if wanted buy_jwt; then
		dp_start "$n" on
		run "$n" buy_jwt $((64 * n)) --depth 16 --mix buy_jwt=1 --item 3 \
			--secret-file "$tmp/secret" --tokens "$(jwt_n "$n")" --requests "$(jwt_n "$n")" \
			--duration "$BUY_DUR"
		dp_stop
	fi
done

MACHINE="$(date -u +%Y-%m-%d), $NCPU cpus ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), ${DUR}s per run"
if [ "$JSON" = 1 ]; then
	python3 "$HERE/lib/bench_scale_report.py" "$RUN" --json --machine "$MACHINE" --more "$MORE"
else
	echo "seckill bench_scale, $MACHINE, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 "$HERE/lib/bench_scale_report.py" "$RUN" --machine "$MACHINE" --more "$MORE"
fi
