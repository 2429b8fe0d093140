#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench.sh - the appliance measured end to end (issue 9): seckill-dataplane
# in a sandbox with a memif port (sandbox.sh up --memif, one lcore on the
# last cpu), seckill-loadgen on core 0 (EAL -l 0, its own --file-prefix,
# --in-memory), and the same requests through the sandbox's kernel link
# (af_packet veth) with wrk on core 0, in one table.
#
#   scripts/bench.sh [--quick] [--json] [--profile[=NAME]] [--perf-data FILE]
#                    [--only NAMES] [--baseline DATAPLANE] [--build DIR]
#
#   --quick    short runs (about a minute in all)
#   --json     one JSON object on stdout:
#              {"scenarios": {"<name>": {"rps", "cps", "p99_us", "errors",
#               "busy_cycles_per_req", "own_cycles_per_req", ...}, ...}}
#              (else a markdown table)
#   --profile[=NAME]  perf record on both cpus for 5 s during the
#              loadgen scenario NAME (default soldout); the top symbols of
#              the dataplane and of the loadgen are printed on stderr (needs
#              a run of 7 s at least: not with --quick)
#   --perf-data FILE  keep the profile's perf.data there (for perf annotate)
#   --only NAMES  run only these scenarios (comma-separated names below)
#   --baseline B  also run the loadgen scenarios against the dataplane
#              binary B (an older build kept aside): each phase runs first
#              with B, then with the build's; "NAME@base" next to "NAME" in
#              the table, measured in the same minutes
#   --build D  the build holding dataplane/, loadgen/, tools/ (default
#              build/rel, else build/me, else build)
#
# Scenarios, over memif with seckill-loadgen (keep-alive, 64 conns x depth 8
# unless said):
#   healthz        GET /healthz
#   soldout        POST /v1/seckill/2 (total 0), X-User-Id of distinct users
#   soldout_d1     the same, one request per frame: 1000 conns x depth 1
#   buy            POST /v1/seckill/1, X-User-Id, distinct users; the item
#                  holds more units than the run can sell (bounded by
#                  --requests), so every answer is a win
#   cart3          POST /v1/cart, X-User-Id, distinct users, 3 lines (items
#                  8, 9, 10, one unit each), every answer a win: compare its
#                  busy cycles per request with buy's
#   soldout6, buy6 soldout and buy over IPv6 (the memif port's address6
#                  2001:2::1/64, the loadgen's client 2001:2::100); buy6 on
#                  item 6
#   short_conn     SYN -> GET /healthz (Connection: close) -> FIN, 32 at once
#   soldout_jwt    POST /v1/seckill/4 (total 0), valid JWTs of non-holders
#   buy_jwt        POST /v1/seckill/3, a distinct pre-minted JWT per request
#   buy_jwt_claim  buy_jwt on item 9, every token with the gate claim
#                  (--gate 100), the item without the gate flag: the cost
#                  of the longer token and of reading the claim
#   buy_jwt_gate   the same on item 8, which requires the claim ([item.8]
#                  gate = on): every buy passes the check and wins; the
#                  check's own cost is buy_jwt_gate - buy_jwt_claim
#   unauthorized   POST /v1/seckill/5, JWTs signed with another secret (401)
#   buy_jwt_reserved  buy_jwt on item 8, a reserved_only activity whose set
#                  holds every token's user (loaded by the control plane,
#                  which is stopped before the run): buy_jwt plus the
#                  reservation lookup
# and over TLS (the dataplane's [tls] port 443, an ECDSA P-256 certificate
# made with openssl in the run's temp dir; TLS 1.3, X25519):
#   soldout_tls    soldout, keep-alive over TLS
#   buy_tls        buy on item 7, keep-alive over TLS
#   tls_full       a new connection and a full handshake per GET /healthz,
#                  32 at once
#   tls_resumed    the same, each connection resuming its client slot's
#                  session (--tls-resume)
# whose dataplane figure is also given per handshake (busy cycles over the
# handshakes /seckill/tls counted: hs_full + hs_resumed).
# and through the kernel link with wrk -t1 -c64 (wrk_<name>): healthz,
# soldout, buy (a Lua counter for distinct users), soldout_jwt (one token of
# a non-holder), unauthorized.
#
# Identity is per dataplane (auth on/off), so the script starts the sandbox
# twice: auth off for the X-User-Id scenarios, then auth on with a secret.
# For each scenario the dataplane's telemetry is read before and after
# (/seckill/stats: busy_tsc, busy_pmd_tsc, requests) and the busy cycles
# per request are split into the PMD's (rte_eth_rx/tx_burst) and its own.
#
# Needs root (namespaces, hugepages: the sandbox reserves them), 2 cpus,
# wrk, python3, openssl; perf for --profile. Every run is bounded (timeout), every
# process is stopped by its PID, and the sandbox is taken down on exit.
# Addresses: 198.18.0.0/24 (kernel link), 198.19.0.0/16 (memif).
set -euo pipefail

QUICK=0 JSON=0 PROFILE="" ONLY="" BUILD="" PERF_KEEP="" BASELINE=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--json) JSON=1; shift ;;
	--profile) PROFILE=soldout; shift ;;
	--profile=*) PROFILE=${1#--profile=}; shift ;;
	--perf-data) PERF_KEEP=${2:?--perf-data FILE}; shift 2 ;;
	--baseline) BASELINE=${2:?--baseline DATAPLANE}; shift 2 ;;
	--only) ONLY=,${2:?--only NAMES},; shift 2 ;;
	--build) BUILD=${2:?--build DIR}; shift 2 ;;
	-h | --help)
		awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
		exit 0
		;;
	*) echo "bench: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

BENCH_NAME=bench
. "$(dirname "${BASH_SOURCE[0]}")/lib/bench_lib.sh"
command -v wrk >/dev/null || die "needs wrk"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "--baseline: not an executable: $BASELINE"
DP_NEW=$SK_DATAPLANE
if [ -n "$PROFILE" ]; then
	command -v perf >/dev/null || die "--profile needs perf"
	[ "$QUICK" = 0 ] || die "--profile needs the full run (a 7 s soldout)"
fi

# Sizes. The runs are bounded by time (DUR s) and, for buys, by a request
# count that the item's stock and the order ring can hold without a control
# plane draining it (the order ring keeps every win of the run: BUY_N,
# BUY6_N, wrk's and 3 x CART_N records must stay under its 4194304).
if [ "$QUICK" = 1 ]; then
	DUR=2 WRK_DUR=2 BUY_N=1500000 BUY6_N=500000 JWT_N=300000 BUYTLS_N=500000 CART_N=200000
else
	DUR=8 WRK_DUR=8 BUY_N=2500000 BUY6_N=1000000 JWT_N=1000000 BUYTLS_N=1000000 CART_N=300000
fi
BUY_TOTAL=3100000   # BUY_N + wrk's buys (< 600k) on item 1
JWT_TOTAL=1100000   # JWT_N on item 3 (and on items 8 and 9)

SK_SBX_PAGES=${SK_SBX_PAGES:-768}
export SK_SBX_PAGES

# scenario NAME TOOL PATH - start a scenario's folder; prints it.
scenario() {
	local d=$RUN/$1
	mkdir -p "$d"
	echo "$2 $3" >"$d/meta"
	echo "$1" >>"$RUN/order"
	echo "$d"
}

# lg NAME LOADGEN-ARGS... - one loadgen run over memif on core 0, between
# two telemetry snapshots.
lg() {
	local name=$1 d rc=0
	shift
	wanted "$name" || return 0
	name=$name$SUF
	d=$(scenario "$name" loadgen memif)
	snap "$d/t0.json"
	[[ $name == *tls* ]] && snap "$d/t0_tls.json" /seckill/tls
	[ "$PROFILE" = "$name" ] && [ -z "$SUF" ] && profile_start
	lg_start "$d" $((DUR + 60)) --drain-ms 1000 "$@"
	lg_wait || rc=$?
	snap "$d/t1.json"
	[[ $name == *tls* ]] && snap "$d/t1_tls.json" /seckill/tls
	echo "$rc" >"$d/rc"
	log "$name: $(sed -n 's/^  requests: //p' "$d/log" | head -1) (exit $rc)"
	[ "$PROFILE" = "$name" ] && [ -z "$SUF" ] && profile_report "$name"
	return 0
}

# wanted NAME - whether --only lets scenario NAME run; any_wanted NAME...
# - whether it lets one of them run.
wanted() {
	[ -z "$ONLY" ] || [[ $ONLY == *",$1,"* ]]
}
any_wanted() {
	local n
	for n in "$@"; do
		wanted "$n" && return 0
	done
	return 1
}

# profile_start / profile_report NAME - perf record on both cpus for 5 s,
# from 1.5 s into the scenario (after the loadgen's EAL start and ARP);
# then who had the cpus and the top symbols of each side.
profile_start() {
	(
		sleep 1.5
		exec timeout -k 5 20 perf record -q -C "0,$DPCPU" -o "$tmp/perf.data" -- sleep 5
	) >"$tmp/perf.log" 2>&1 &
	PERF_PID=$!
}
profile_report() {
	local comm
	wait "$PERF_PID" 2>/dev/null || true
	PERF_PID=""
	if [ ! -s "$tmp/perf.data" ]; then
		log "perf record gave nothing: $(cat "$tmp/perf.log")"
		return 0
	fi
	{
		echo "perf record -C 0,$DPCPU, 5 s of $1: share of the samples by cpu and command"
		timeout 120 perf report -i "$tmp/perf.data" --stdio --sort cpu,comm 2>/dev/null |
			awk '!/^#/ && NF && n < 6 { print; n++ }' || true
		# comm names are cut at 15 characters
		for comm in seckill-datapla seckill-loadgen; do
			echo "top symbols of $comm, % of its own samples"
			timeout 120 perf report -i "$tmp/perf.data" --stdio --comm "$comm" --percentage relative \
				--sort dso,symbol 2>/dev/null |
				awk '!/^#/ && NF && n < 15 { sub(/[ \t]+$/, ""); print; n++ }' || true
		done
	} >&2
	[ -z "$PERF_KEEP" ] || cp "$tmp/perf.data" "$PERF_KEEP"
}

# wrk_run NAME URL-PATH [LUA] - wrk -t1 -c64 on core 0 inside the client
# namespace, through the kernel link, between two telemetry snapshots.
wrk_run() {
	local name=$1 url=http://$SERVER$2 lua=${3:-} d rc=0
	wanted "$name" && [ -z "$SUF" ] || return 0
	d=$(scenario "$name" wrk afpacket)
	snap "$d/t0.json"
	local args=(-t1 -c64 "-d${WRK_DUR}s" --latency)
	[ -n "$lua" ] && args+=(-s "$lua")
	bg_wait timeout -k 5 $((WRK_DUR + 30)) "$SBX" exec taskset -c 0 wrk "${args[@]}" "$url" \
		>"$d/wrk.txt" 2>&1 || rc=$?
	snap "$d/t1.json"
	echo "$rc" >"$d/rc"
	log "$name: $(sed -n 's/^Requests\/sec: *//p' "$d/wrk.txt") req/s (exit $rc)"
}

# lua_post FILE ITEM HEADER VALUE - a wrk script: POST with one header.
lua_post() {
	cat >"$1" <<-EOF
		wrk.method = "POST"
		wrk.path = "/v1/seckill/$2"
		wrk.headers["$3"] = "$4"
		wrk.headers["Content-Length"] = "0"
	EOF
}

# keep-alive: 64 connections, 8 requests in flight on each
KA=(--conns 64 --depth 8 --duration "$DUR")

# --- phase 1: auth off (X-User-Id) ------------------------------------------
# phase_off - the X-User-Id scenarios (SUF: "" or "@base")
phase_off() {
	{
		base_config seckill dedup_slots
		cat <<-EOF

			[seckill]
			auth = off
			dedup_slots = 14159872
			order_ring = 4194304

			[item.1]
			name = bench buys
			total = $BUY_TOTAL
			dedup_slots = 8388608

			[item.2]
			name = bench sold out
			total = 0
			dedup_slots = 1024

			[item.6]
			name = bench buys over IPv6
			total = $BUY6_N
			dedup_slots = 4194304
		EOF
		for i in 8 9 10; do
			printf '\n[item.%s]\nname = bench carts, line %s\ntotal = %s\ndedup_slots = 524288\n' \
				"$i" $((i - 7)) "$CART_N"
		done
	} >"$tmp/off.ini"
	sbx_start "$tmp/off.ini"

	lg healthz --mix healthz=1 "${KA[@]}"
	lg soldout --mix buy=1 --item 2 --users 100000000 "${KA[@]}"
	# one request per frame: the cost of RX, ACK and TX per request
	lg soldout_d1 --mix buy=1 --item 2 --users 100000000 --conns 1000 --depth 1 \
		--duration "$DUR"
	lg buy --mix buy=1 --item 1 --user-base 1 --users "$BUY_N" --requests "$BUY_N" "${KA[@]}"
	lg cart3 --mix cart=1 --item 8 --cart-lines 3 --user-base 1 --users "$CART_N" \
		--requests "$CART_N" "${KA[@]}"
	# the same two over IPv6 (the memif port's address6; the loadgen's one
	# client address in its /64): the cost of IPv6 against the two above
	lg soldout6 --server "$MEMIF_ADDR6" --mix buy=1 --item 2 --users 100000000 "${KA[@]}"
	lg buy6 --server "$MEMIF_ADDR6" --mix buy=1 --item 6 --user-base 1 --users "$BUY6_N" \
		--requests "$BUY6_N" "${KA[@]}"
	lg short_conn --short --mix healthz=1 --conns 32 --duration "$DUR"

	wrk_run wrk_healthz /healthz
	lua_post "$tmp/soldout.lua" 2 X-User-Id 4242
	wrk_run wrk_soldout /v1/seckill/2 "$tmp/soldout.lua"
	cat >"$tmp/buy.lua" <<-'EOF'
		-- distinct users, from 50,000,001 on (the loadgen's are 1..BUY_N)
		local n = 50000000
		request = function()
			n = n + 1
			return wrk.format("POST", "/v1/seckill/1", { ["X-User-Id"] = tostring(n), ["Content-Length"] = "0" })
		end
	EOF
	wrk_run wrk_buy /v1/seckill/1 "$tmp/buy.lua"
	sbx_stop
}

# --- phase 2: auth on (JWTs) -------------------------------------------------
# phase_on - the JWT scenarios (SUF: "" or "@base")
phase_on() {
	secret "$tmp/secret"
	secret "$tmp/other"
	{
		base_config seckill dedup_slots
		cat <<-EOF

			[seckill]
			auth = on
			secret_file = $tmp/secret
			dedup_slots = 6293504
			order_ring = 4194304

			[item.3]
			name = bench jwt buys
			total = $JWT_TOTAL
			dedup_slots = 2097152

			[item.4]
			name = bench jwt sold out
			total = 0
			dedup_slots = 1024

			[item.5]
			name = bench forged tokens
			total = 10
			dedup_slots = 1024

			[item.8]
			name = bench jwt buys through the gate
			total = $JWT_TOTAL
			dedup_slots = 2097152
			gate = on

			[item.9]
			name = bench jwt buys with the claim, no gate
			total = $JWT_TOTAL
			dedup_slots = 2097152
		EOF
	} >"$tmp/on.ini"
	sbx_start "$tmp/on.ini"

	lg soldout_jwt --mix buy_jwt=1 --item 4 --secret-file "$tmp/secret" --tokens 100000 "${KA[@]}"
	lg buy_jwt --mix buy_jwt=1 --item 3 --secret-file "$tmp/secret" --tokens "$JWT_N" --requests "$JWT_N" "${KA[@]}"
	lg buy_jwt_claim --mix buy_jwt=1 --item 9 --secret-file "$tmp/secret" --gate 100 \
		--tokens "$JWT_N" --requests "$JWT_N" "${KA[@]}"
	lg buy_jwt_gate --mix buy_jwt=1 --item 8 --secret-file "$tmp/secret" --gate 100 \
		--tokens "$JWT_N" --requests "$JWT_N" "${KA[@]}"
	lg unauthorized --mix buy_jwt=1 --item 5 --secret-file "$tmp/other" --tokens 100000 "${KA[@]}"

	lua_post "$tmp/soldout_jwt.lua" 4 Authorization \
		"Bearer $("$TOKEN" --secret-file "$tmp/secret" --sub 90000001 --item 4 --ttl 3600)"
	wrk_run wrk_soldout_jwt /v1/seckill/4 "$tmp/soldout_jwt.lua"
	lua_post "$tmp/forged.lua" 5 Authorization \
		"Bearer $("$TOKEN" --secret-file "$tmp/other" --sub 90000002 --item 5 --ttl 3600)"
	wrk_run wrk_unauthorized /v1/seckill/5 "$tmp/forged.lua"
	sbx_stop
}

# --- phase 2b: reservations ----------------------------------------------------
# phase_reserved - buy_jwt on a reserved_only activity: the control plane
# creates it and loads the JWT_N token users into its set, then is killed
# (its drain would share the cpus); the dataplane keeps the set.
phase_reserved() {
	secret "$tmp/secret"
	{
		base_config seckill dedup_slots
		cat <<-EOF

			[seckill]
			auth = on
			secret_file = $tmp/secret
			dedup_slots = 2099200
			order_ring = 2097152
			reserve_mb = 64
			ack = queued

			[store]
			path = $tmp/store-reserved
		EOF
	} >"$tmp/reserved.ini"
	sbx_start "$tmp/reserved.ini" --control
	"$SBX" ctl activity add 8 --total "$JWT_TOTAL" --limit 1 --reserved-only \
		--name "bench jwt reserved" >&2 || die "activity add 8 failed"
	seq 1 "$JWT_N" | "$SBX" ctl activity reserve 8 - >&2 || die "activity reserve 8 failed"
	"$SBX" control kill
	lg buy_jwt_reserved --mix buy_jwt=1 --item 8 --secret-file "$tmp/secret" --tokens "$JWT_N" \
		--requests "$JWT_N" "${KA[@]}"
	sbx_stop
}

# --- phase 3: TLS -------------------------------------------------------------
# phase_tls - the TLS scenarios: the dataplane's [tls] port 443 with an
# ECDSA P-256 certificate (shop.test) made here, auth off (X-User-Id)
phase_tls() {
	tls_cert
	secret "$tmp/ticket.key"
	{
		base_config seckill dedup_slots
		cat <<-EOF

			[seckill]
			auth = off
			dedup_slots = 4196352
			order_ring = 2097152

			[item.2]
			name = bench sold out
			total = 0
			dedup_slots = 1024

			[item.7]
			name = bench buys over TLS
			total = $BUYTLS_N
			dedup_slots = 2097152

			[tls]
			port = 443
			cert = $tmp/ec.pem
			key = $tmp/ec.key
			ticket_key_file = $tmp/ticket.key
		EOF
	} >"$tmp/tls.ini"
	sbx_start "$tmp/tls.ini"

	local TLS=(--tls --sni shop.test)
	lg soldout_tls "${TLS[@]}" --mix buy=1 --item 2 --users 100000000 "${KA[@]}"
	lg buy_tls "${TLS[@]}" --mix buy=1 --item 7 --user-base 1 --users "$BUYTLS_N" \
		--requests "$BUYTLS_N" "${KA[@]}"
	lg tls_full "${TLS[@]}" --short --mix healthz=1 --conns 32 --duration "$DUR"
	lg tls_resumed "${TLS[@]}" --tls-resume --short --mix healthz=1 --conns 32 --duration "$DUR"
	sbx_stop
}

# run_phase FN NAMES... - phase FN if one of NAMES is wanted: with the
# baseline first when there is one, then with the build's dataplane.
run_phase() {
	local fn=$1
	shift
	any_wanted "$@" || return 0
	if [ -n "$BASELINE" ]; then
		SK_DATAPLANE=$BASELINE SUF=@base
		"$fn"
	fi
	SK_DATAPLANE=$DP_NEW SUF=""
	"$fn"
}
SUF=""
run_phase phase_off healthz soldout soldout_d1 buy cart3 soldout6 buy6 short_conn wrk_healthz wrk_soldout wrk_buy
run_phase phase_on soldout_jwt buy_jwt buy_jwt_claim buy_jwt_gate unauthorized wrk_soldout_jwt \
	wrk_unauthorized
if any_wanted buy_jwt_reserved; then
	SK_DATAPLANE=$DP_NEW SUF="" # no baseline: an older dataplane has no sets
	phase_reserved
fi
if any_wanted soldout_tls buy_tls tls_full tls_resumed; then
	SK_DATAPLANE=$DP_NEW SUF="" # no baseline: an older dataplane has no [tls]
	phase_tls
fi

# --- report ------------------------------------------------------------------
if [ "$JSON" = 1 ]; then
	python3 "$HERE/lib/bench_report.py" "$RUN" --json
else
	echo "seckill bench, $(date -u +%Y-%m-%d), $(nproc) cpus ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), dataplane cpu $DPCPU, load cpu 0, loadgen ${DUR}s / wrk ${WRK_DUR}s per scenario, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 "$HERE/lib/bench_report.py" "$RUN"
fi
