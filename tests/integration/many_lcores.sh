#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# many_lcores.sh - eight dataplane lcores (time-shared on this machine's
# cpus: EAL --lcores '(0-7)@(cpus)') on one memif port, against
# seckill-loadgen on eight lcores:
#  1. the port comes up in mode=spread with 8 queue pairs;
#  2. 8,000 sold-out answers: every request answered, each of the 8
#     loadgen stacks got its 1,000, each of the 8 dataplane lcores served
#     (flows stay on their queue), with no dispatch;
#  3. /seckill/stats stays whole at 8 lcores: "total" (which the 16 KiB
#     answer lost past 6 full lcore sections) equals the sum of the 8 lcore
#     sections, lcores_listed 8; /seckill/lcore,7 gives every counter of one
#     lcore, /seckill/lcore,8 is refused.
# No namespace: the memif socket is a file in the test's temp dir.
. "$(dirname "$0")/lib.sh"
require_env SK_DATAPLANE SK_LOADGEN
tmp=$(mktemp -d)
dp_pid=""
stop_dp() {
	stop_wait "$dp_pid"
	rm -rf "/var/run/dpdk/sk-many-$$" "/var/run/dpdk/sk-many-lg-$$"
}
at_exit stop_dp
at_exit rm_tmp
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
cat >"$tmp/dp.ini" <<-INI
	[dataplane]
	mbufs = 32767
	idle_sleep_us = 100
	idle_after_us = 1000

	[port0]
	device = net_memif0,role=server,socket=$tmp/memif.sock,socket-abstract=no
	address = 198.18.0.1/15
	rx_desc = 256
	tx_desc = 256

	[seckill]
	auth = off
	dedup_slots = 2048

	[item.2]
	name = sold out
	total = 0
	dedup_slots = 1024
INI
timeout -k 5 300 "$SK_DATAPLANE" --lcores "(0-7)@($cpus)" --file-prefix "sk-many-$$" --no-pci \
	--in-memory --log-level=lib.eal:warning -- --config "$tmp/dp.ini" >"$tmp/dp.log" 2>&1 &
dp_pid=$!
wait_for 60 "the dataplane's ready line" grep -q 'event=ready' "$tmp/dp.log"
expect_match "port0 spread over 8 queue pairs" "$(grep 'event=port ' "$tmp/dp.log")" \
	"mode=spread queues=8"
# dp_tele CMD - a telemetry command of this dataplane, JSON on stdout
dp_tele() {
	python3 "$REPO/scripts/lib/telemetry.py" "/var/run/dpdk/sk-many-$$/dpdk_telemetry.v2" "$1"
}

rc=0
timeout 180 "$SK_LOADGEN" --lcores "(0-7)@($cpus)" --in-memory --no-telemetry \
	--file-prefix "sk-many-lg-$$" --no-pci --log-level=lib.eal:warning \
	--vdev "net_memif0,role=client,socket=$tmp/memif.sock,socket-abstract=no" -- \
	--server 198.18.0.1 --clients 198.19.0.0/16 --quiet --json --mix buy=1 --item 2 \
	--conns 64 --depth 2 --requests 8000 --duration 120 >"$tmp/lg.json" 2>"$tmp/lg.log" || rc=$?
sed -n '/^seckill-loadgen: /,$p' "$tmp/lg.log"
expect_eq "loadgen exit status" "$rc" 0
expect_eq "8,000 answered 410, no error" \
	"$(json_get "$tmp/lg.json" '(d["answered"], d["status"].get("410"), d["errors"]["total"])')" \
	"(8000, 8000, 0)"
expect_eq "each of the 8 loadgen stacks got its 1,000 answers" \
	"$(json_get "$tmp/lg.json" '[x["answered"] for x in d["lcores"]]')" \
	"[1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]"

dp_tele /seckill/stats >"$tmp/stats.json"
expect_eq "/seckill/stats: lcores, lcores_listed, lcore sections" \
	"$(json_get "$tmp/stats.json" '(d["lcores"], d["lcores_listed"], len([k for k in d if k.startswith("lcore") and isinstance(d[k], dict)]))')" \
	"(8, 8, 8)"
expect_eq "/seckill/stats: total is there and is the sum of the lcores" \
	"$(json_get "$tmp/stats.json" '[sum(v[f] for k, v in d.items() if k.startswith("lcore") and isinstance(v, dict)) == d["total"][f] for f in ("requests", "responses")] + [d["total"]["requests"]]')" \
	"[True, True, 8000]"
read -ra served <<<"$(itpy jsonq lcores "$tmp/stats.json" requests)"
echo "requests per dataplane lcore: ${served[*]}"
check "every dataplane lcore served (no flow left its queue)" itpy jsonq positive 8 "${served[@]}"
expect_eq "no software dispatch" "$(json_get "$tmp/stats.json" 'd["total"]["dispatch_out"]')" 0
dp_tele /seckill/lcore,7 >"$tmp/l7.json"
expect_eq "/seckill/lcore,7: every counter of that lcore (as many as total has)" \
	"$(json_get "$tmp/l7.json" 'len(d) - 1')" "$(json_get "$tmp/stats.json" 'len(d["total"])')"
expect_eq "/seckill/lcore,8: refused" "$(dp_tele /seckill/lcore,8)" null
finish
