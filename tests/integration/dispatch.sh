#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dispatch.sh - two lcores on a one-queue tap: the software dispatch spreads
# flows by hash; every request is answered, both lcores serve, ICMP and ARP
# work, and the mbufs come back.
. "$(dirname "$0")/lib.sh"
require_env curl ab ping
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
# A gateway makes every stack ARP for it: the replies arrive on one queue
# and must be copied to both lcores.
cfg=$(mktemp --suffix=.ini)
tmp=
# rm_files - for at_exit: the derived config, the ab output and the
# telemetry snapshot, also when a check fails on the way.
rm_files() {
	rm -f "$cfg" "/tmp/$SK_SBX.json"
	rm_tmp
}
at_exit rm_files
sed 's/^address = 198.18.0.1\/24$/address = 198.18.0.1\/24\ngateway = 198.18.0.2/' "$REPO/config/sandbox.ini" >"$cfg"
grep -q '^gateway = 198.18.0.2' "$cfg" || { echo "could not derive the config"; exit 1; }
sbx_up --lcores 2 --config "$cfg"
rm -f "$cfg"

ping3() {
	sbx_exec ping -c 3 -i 0.2 -W 2 -q "$SERVER" >/dev/null
}
check "ping answers (3 of 3)" ping3
tmp=$(mktemp)
sbx_exec timeout 60 ab -q -n 2000 -c 20 "$URL/healthz" >"$tmp"
expect_eq "ab (new connections): failed" "$(awk '/^Failed requests:/ {print $3}' "$tmp")" 0
expect_eq "ab (new connections): complete" "$(awk '/^Complete requests:/ {print $3}' "$tmp")" 2000
sbx_exec timeout 60 ab -q -k -n 4000 -c 20 "$URL/healthz" >"$tmp"
expect_eq "ab -k (keep-alive): failed" "$(awk '/^Failed requests:/ {print $3}' "$tmp")" 0
rm -f "$tmp"

"$SBX" telemetry >"/tmp/$SK_SBX.json"
per_lcore=$(itpy jsonq lcores "/tmp/$SK_SBX.json" requests)
arp=$(itpy jsonq lcores "/tmp/$SK_SBX.json" arp_rx)
read -ra arp_v <<<"$arp"
read -ra per_lcore_v <<<"$per_lcore"
echo "ARP frames per lcore: $arp"
check "both lcores got ARP (replies copied to every stack)" itpy jsonq positive 2 "${arp_v[@]}"
echo "requests per lcore: $per_lcore"
check "both lcores served requests" itpy jsonq positive 2 "${per_lcore_v[@]}"
check "frames were dispatched" test "$(tele dispatch_out)" -gt 0
expect_eq "no dispatch drops" "$(tele dispatch_drops)" 0
rm -f "/tmp/$SK_SBX.json"

for _ in $(seq 1 30); do
	[ "$(tele conns_open)" = 0 ] && [ "$(tele mbuf_in_use top)" = "$(tele mbuf_idle top)" ] && break
	sleep 0.5
done
expect_eq "mbuf pool back at its idle level" "$(tele mbuf_in_use top)" "$(tele mbuf_idle top)"
finish
