#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# load.sh - bounded load through the tap: wrk -t1 -c64 -d10s (keep-alive)
# with zero socket errors and zero non-2xx, then ab -n 20000 -c 50 (a new
# connection per request) all 200. The load generator runs on core 0, the
# dataplane's lcore on the last core. Prints the figures of docs/benchmarks.md.
. "$(dirname "$0")/lib.sh"
require_env wrk ab taskset
sbx_up

snap() {
	"$SBX" telemetry >"$1"
}
tmp=$(mktemp -d)
at_exit rm_tmp

snap "$tmp/t0.json"
sbx_exec taskset -c 0 timeout 60 wrk -t1 -c64 -d10s --latency "$URL/healthz" | tee "$tmp/wrk.txt"
snap "$tmp/t1.json"
check "wrk: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/wrk.txt'"
check "wrk: no non-2xx responses" bash -c "! grep -q 'Non-2xx' '$tmp/wrk.txt'"
check "wrk: served requests" grep -Eq '^ +[1-9][0-9]* requests in' "$tmp/wrk.txt"

sbx_exec taskset -c 0 timeout 120 ab -q -n 20000 -c 50 "$URL/healthz" | tee "$tmp/ab.txt"
expect_eq "ab: complete requests" "$(awk '/^Complete requests:/ {print $3}' "$tmp/ab.txt")" 20000
expect_eq "ab: failed requests" "$(awk '/^Failed requests:/ {print $3}' "$tmp/ab.txt")" 0
check "ab: no non-2xx" bash -c "! grep -q '^Non-2xx' '$tmp/ab.txt'"
snap "$tmp/t2.json"

itpy reports load "$tmp"
finish
