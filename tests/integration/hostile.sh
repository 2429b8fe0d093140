#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hostile.sh - a hostile pass (random bytes, half-closed and half-open
# connections, RST mid-request, a SYN flood, 1,000 idle connections), after
# which /healthz still answers, no connection is left open and the mbuf
# pool is back at its idle level.
. "$(dirname "$0")/lib.sh"
require_env curl timeout
idle_pid=
# stop_idle - for at_exit: stop the idle connections' client if it still
# runs (its whole tree, by the PID this shell started), and reap it.
stop_idle() {
	[ -n "$idle_pid" ] || return 0
	kill_tree TERM "$idle_pid"
	wait "$idle_pid" 2>/dev/null || true
}
at_exit stop_idle
sbx_up
H=(timeout 120 python3 "$IT_DIR/hostile.py" "$SERVER")

check "random bytes (100 connections)" sbx_exec "${H[@]}" random 100
check "half-closed requests (200)" sbx_exec "${H[@]}" halfclose 200
check "half-open requests (200), then RST" sbx_exec "${H[@]}" halfopen 200
check "RST mid-request (300)" sbx_exec "${H[@]}" rst 300
check "SYN flood (2000 raw SYNs)" sbx_exec "${H[@]}" synflood 2000

# 1000 idle connections from one address: under tcp.max_conns_per_ip (1024),
# held 8 s from the first connect, under tcp.idle_new_ms (10 s). Wait (while
# they are held, 20 s at most) until the telemetry has them all.
sbx_exec "${H[@]}" idle 1000 8 &
idle_pid=$!
open=0
for _ in $(seq 1 100); do
	open=$(tele conns_open)
	[ "$open" -ge 1000 ] && break
	kill -0 "$idle_pid" 2>/dev/null || break
	sleep 0.2
done
check "1000 idle connections open at once (telemetry: $open)" test "$open" -ge 1000
check "1000 idle connections held, none closed by the server, /healthz answered meanwhile" wait $idle_pid

check "/healthz still answers" sbx_exec curl -sf -m 5 -o /dev/null "$URL/healthz"

# Everything drains: connections closed, mbufs back (bounded wait).
for _ in $(seq 1 30); do
	[ "$(tele conns_open)" = 0 ] && [ "$(tele mbuf_in_use top)" = "$(tele mbuf_idle top)" ] && break
	sleep 0.5
done
expect_eq "no connection left open" "$(tele conns_open)" 0
expect_eq "mbuf pool back at its idle level" "$(tele mbuf_in_use top)" "$(tele mbuf_idle top)"
echo "telemetry after the hostile pass:"
"$SBX" telemetry | itpy jsonq kv - total requests parse_errors tcp_syn tcp_cookie_ok \
	tcp_cookie_bad tcp_rst_rx tcp_rst_tx rx_drops tx_drops
finish
