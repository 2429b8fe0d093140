#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# challenge_ack.sh - RFC 5961's per-connection challenge-ACK limit, seen
# from outside through the real dataplane (unit-level twin:
# tests/unit/net/test_net_hostile.c, challenge_ack_per_connection). The
# dataplane answers an in-window RST that is not at rcv_nxt, and a SYN on a
# synchronised connection, with a challenge ACK: at most one per connection
# per tcp challenge_ack_conn_ms (500 ms), and per lcore at most a random
# [n/2, 3n/2] a second (n = challenge_ack_per_s, 100).
#
# challenge_ack.py (in the namespace) opens two keep-alive connections A and
# B, learns both sequence spaces from an AF_PACKET sniffer, then forges
# through a raw IPv4 socket (see its header):
#  1. rst: $N RSTs to A and $N to B, interleaved, back to back. Per
#     connection: at least 1 and at most 1 + floor(span / 500 ms) challenge
#     ACKs seen on the wire (B gets its own while A is limited: the limit is
#     per connection, not global), no other segment from the server.
#     Telemetry: tcp_challenge_ack moved by the ACKs seen,
#     tcp_challenge_conn_limited + tcp_challenge_limited by the rest,
#     tcp_challenge_limited not at all (2 ACKs are far below the lcore's
#     budget), tcp_rst_rx and tcp_rst_ignored not at all.
#  2. syn: once A's interval has passed, $N SYNs to A: the interval opened
#     again, so again 1..allowed challenge ACKs, the same telemetry rules;
#     nothing at all from the server on B meanwhile.
#  3. after: GET /healthz again on A and on B (the same kernel sockets)
#     answers 200: no forged segment closed them.
. "$(dirname "$0")/lib.sh"
# The system's python3 when there is one (a pyenv shim costs a second per
# start, and the telemetry is read through python3 many times).
[ -x /usr/bin/python3 ] && export PATH=/usr/bin:$PATH
require_env curl ethtool

N=50
sbx_up --lcores 1
tmp=$(mktemp -d)
at_exit rm_tmp

NS=$SK_SBX
# The namespace's interface towards the server (a veth end or a tap).
DEV=$(ip -n "$NS" -o route get "$SERVER" | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$DEV" ] || {
	echo "no route to $SERVER in $NS"
	exit 1
}

# net KEY - a counter of the lcore's TCP stack (/seckill/net,0).
net() {
	"$SBX" telemetry /seckill/net,0 | itpy jsonq tele - "$1" top
}
jget() {
	json_get "$tmp/r.json" "$1"
}

rst_rx0=$(net tcp_rst_rx)
echo "--- $N forged RSTs to each of two connections, then $N SYNs to one (net device $DEV)"
if ! sbx_exec timeout 90 python3 "$IT_DIR/challenge_ack.py" "$SERVER" "$DEV" \
	--sandbox "$SBX" --json "$tmp/r.json" --count $N >"$tmp/out" 2>&1; then
	cat "$tmp/out"
	bad "challenge_ack.py failed"
	finish
	exit 1
fi
itpy reports challenge-ack "$tmp/r.json"

expect_eq "before: GET /healthz on A and B" "$(jget '[d["before"]["A"], d["before"]["B"]]')" "[200, 200]"

# phase PH CONN... - the assertions of one attack phase.
phase() {
	local ph=$1 c acks allowed sum=0 forged=0
	shift
	for c in "$@"; do
		acks=$(jget "d['$ph']['conns']['$c']['challenge_acks']")
		allowed=$(jget "d['$ph']['conns']['$c']['allowed']")
		forged=$((forged + $(jget "d['$ph']['conns']['$c']['forged']")))
		sum=$((sum + acks))
		expect_eq "$ph: every forged segment to $c left (sniffed)" \
			"$(jget "d['$ph']['conns']['$c']['forged_seen']")" "$N"
		check "$ph: $c got its own challenge ACK ($acks >= 1)" test "$acks" -ge 1
		check "$ph: $c got at most one per 500 ms ($acks <= $allowed in $(jget "d['$ph']['conns']['$c']['span_ms']") ms)" \
			test "$acks" -le "$allowed"
		expect_eq "$ph: nothing else from the server on $c" \
			"$(jget "d['$ph']['conns']['$c']['other_server_segs']")" 0
	done
	expect_eq "$ph: telemetry: tcp_challenge_ack == the challenge ACKs seen" \
		"$(jget "d['$ph']['telemetry']['tcp_challenge_ack']")" "$sum"
	expect_eq "$ph: telemetry: conn_limited + limited == the other forged segments" \
		"$(jget "d['$ph']['telemetry']['tcp_challenge_conn_limited'] + d['$ph']['telemetry']['tcp_challenge_limited']")" \
		"$((forged - sum))"
	expect_eq "$ph: telemetry: the lcore's budget never hit (tcp_challenge_limited)" \
		"$(jget "d['$ph']['telemetry']['tcp_challenge_limited']")" 0
	expect_eq "$ph: telemetry: no RST taken or ignored (tcp_rst_rx, tcp_rst_ignored)" \
		"$(jget "[d['$ph']['telemetry']['tcp_rst_rx'], d['$ph']['telemetry']['tcp_rst_ignored']]")" "[0, 0]"
}
phase rst A B
phase syn A
expect_eq "syn: no segment at all from the server on B, which was left alone" "$(jget "d['syn']['quiet']['B']")" 0

expect_eq "after: GET /healthz on the same sockets A and B" "$(jget '[d["after"]["A"], d["after"]["B"]]')" "[200, 200]"
expect_eq "telemetry: tcp_rst_rx did not move over the whole test" "$(($(net tcp_rst_rx) - rst_rx0))" 0
check "/healthz still answers a new connection" sbx_exec curl -sf -m 5 -o /dev/null "$URL/healthz"
finish
