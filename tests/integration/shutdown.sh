#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shutdown.sh - SIGINT with connections open: every connection is reset,
# the dataplane exits 0 by itself, and "down" leaves no hugepage file, no
# EAL runtime dir and no namespace behind.
. "$(dirname "$0")/lib.sh"
require_env curl
clients=
# stop_clients - for at_exit: stop the idle clients if they still run (their
# whole tree, by the PID this shell started), reap them, remove their report.
stop_clients() {
	if [ -n "$clients" ]; then
		kill_tree TERM "$clients"
		wait "$clients" 2>/dev/null || true
	fi
	rm -f "/tmp/$SK_SBX.clients"
}
at_exit stop_clients
sbx_up
state=/run/$SK_SBX/env
pid=$(sed -n 's/^pid=//p' "$state")
prefix=$(sed -n 's/^prefix=//p' "$state")
huge=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)

# 20 idle connections that report how they ended.
sbx_exec timeout 30 python3 "$IT_PY/clients.py" idle "$SERVER" 20 >"/tmp/$SK_SBX.clients" 2>&1 &
clients=$!
for _ in $(seq 1 50); do
	grep -q "^open 20" "/tmp/$SK_SBX.clients" 2>/dev/null && break
	sleep 0.1
done
# A client's connect() returns before the dataplane has taken the
# handshake's last ACK: wait for its count (5 s at most).
for _ in $(seq 1 50); do
	[ "$(tele conns_open)" = 20 ] && break
	sleep 0.1
done
expect_eq "20 connections open" "$(tele conns_open)" 20

kill -INT "$pid"
for _ in $(seq 1 100); do
	[ -d "/proc/$pid" ] || break
	sleep 0.1
done
check "dataplane exited after SIGINT" test ! -d "/proc/$pid"
wait "$clients" || true
expect_eq "clients saw a reset on every connection" \
	"$(sed -n 's/^reset //p' "/tmp/$SK_SBX.clients")" 20
check "dataplane reported the resets" grep -q "event=shutdown msg=stopped requests=[0-9]* connections_reset=20" "/run/$SK_SBX/log"
rm -f "/tmp/$SK_SBX.clients"

"$SBX" down >/dev/null
check "no hugepage files of the run" bash -c "! ls '$huge/${prefix}map_'* >/dev/null 2>&1"
check "no EAL runtime dir" test ! -e "/var/run/dpdk/$prefix"
check "namespace removed" bash -c "! ip netns list | grep -qw '$SK_SBX'"
finish
