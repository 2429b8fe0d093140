#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ipv6_basics.sh - the dataplane's IPv6 network layer through the kernel of
# the client namespace: a port with address6 = 2001:2::1/64 beside its IPv4
# address; the client side gets 2001:2::2/64. The kernel resolves the
# dataplane by neighbour discovery (its neighbour entry shows the
# dataplane's MAC, the same as ARP learnt for the IPv4 address), ping -6
# gets its echo replies (to the global and the link-local address), curl -6
# gets /healthz over TCP over IPv6, and IPv4 still answers. Buys over IPv6
# share a per-IP limit per /64, and the control plane's store records each
# winner's IPv6 address (seckillctl orders: client_ip).
. "$(dirname "$0")/lib.sh"
require_env ping curl SK_CONTROL SK_SECKILLCTL

tmp=$(mktemp -d)
rm_tmp() { rm -rf "$tmp"; }
at_exit rm_tmp

# The sandbox's config, with the IPv6 address added to [port0], a per-IP
# buy limit (1/s, burst 3) for the /64 checks below, and a store: the
# control plane drains the orders into LMDB (ack = queued: the buys are
# answered 202 at once, the check below waits for LMDB).
{
	awk '
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec) }
		{ print }
		sec == "port0" && $0 ~ /^[ \t]*address[ \t]*=/ { print "address6 = 2001:2::1/64" }' \
		"$REPO/config/sandbox.ini"
	printf '\n[seckill]\nauth = off\nip_rate = 1\nip_burst = 3\nip_slots = 1024\n'
	printf 'store = %s/store\nack = queued\n' "$tmp"
	printf '\n[item.1]\ntotal = 1000\nper_user_limit = 100\n'
} >"$tmp/v6.ini"
check "the config has address6" grep -q '^address6 = 2001:2::1/64$' "$tmp/v6.ini"
sbx_up --config "$tmp/v6.ini"

# The client's end of the link: the namespace's only interface besides lo.
dev=$(sbx_exec ip -o link show | awk -F': ' '$2 != "lo" { sub(/@.*/, "", $2); print $2; exit }')
[ -n "$dev" ] || {
	bad "no interface in the client namespace"
	finish
}
# The sandbox turns IPv6 off in its namespaces: on again, on the client side only.
sbx_exec sysctl -qw net.ipv6.conf.all.disable_ipv6=0 "net.ipv6.conf.$dev.disable_ipv6=0"
sbx_exec ip -6 addr add 2001:2::2/64 dev "$dev" nodad

ping6_global() {
	sbx_exec ping -6 -c 3 -i 0.2 -W 2 -q 2001:2::1 >/dev/null
}
# The first ping waits for neighbour discovery; retried while the link settles.
check "ping -6 2001:2::1 answers (3 of 3)" wait_for 15 "ping -6" ping6_global

# lladdr NEIGH-ARGS... - the MAC of a neighbour entry of the client.
lladdr() {
	sbx_exec ip "$@" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") { print $(i + 1); exit } }'
}
mac6=$(lladdr -6 neigh show 2001:2::1 dev "$dev")
sbx_exec ping -c 1 -W 2 -q "$SERVER" >/dev/null || true
mac4=$(lladdr -4 neigh show "$SERVER" dev "$dev")
expect_match "ip -6 neigh has the dataplane's MAC" "$mac6" '^([0-9a-f]{2}:){5}[0-9a-f]{2}$'
expect_eq "the same MAC as ARP learnt for $SERVER" "$mac6" "$mac4"

# The link-local address: fe80:: + the modified EUI-64 of that MAC.
ll=""
if [ -n "$mac6" ]; then
	IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac6"
	ll=$(printf 'fe80::%x:%x:%x:%x' $(((0x$m0 ^ 2) << 8 | 0x$m1)) $((0x$m2 << 8 | 0xff)) \
		$((0xfe << 8 | 0x$m3)) $((0x$m4 << 8 | 0x$m5)))
fi
ping6_ll() {
	sbx_exec ping -6 -c 2 -i 0.2 -W 2 -q "$ll%$dev" >/dev/null
}
check "ping -6 $ll (link-local) answers" wait_for 10 "ping -6 link-local" ping6_ll

net() {
	"$SBX" telemetry "/seckill/net,0" | itpy jsonq tele - "$1" top
}
# TCP over IPv6: the same listener as IPv4 ($URL), on the address in brackets.
url6="${URL/$SERVER/[2001:2::1]}"
expect_eq "curl -6 $url6/healthz answers 200" \
	"$(sbx_exec curl -6 -s -o /dev/null -m 5 -w '%{http_code}' "$url6/healthz" || true)" 200
expect_eq "no TCP checksum errors" "$(net tcp_drop_cksum)" 0

check "the dataplane answered solicitations" itpy jsonq positive 1 "$(net nd_na_tx)"
check "the dataplane answered echo requests" itpy jsonq positive 1 "$(net icmp6_echo_tx)"
expect_eq "no ICMPv6 checksum errors" "$(net icmp6_drop_cksum)" 0

# IPv4 unchanged on the same port.
# The per-IP limit keys an IPv6 client on its /64: 3 buys from ::2 take the
# burst, a 4th from ::3 (the same /64) is refused; one from another /64
# (2001:2:0:1::2, reaching the dataplane over the same link) and one over
# IPv4 are not. One curl run, so the four come well inside a second.
sbx_exec ip -6 addr add 2001:2::3/64 dev "$dev" nodad
sbx_exec ip -6 addr add 2001:2:0:1::2/64 dev "$dev" nodad
buy_args=()
n=0
for src in 2001:2::2 2001:2::2 2001:2::2 2001:2::3 2001:2:0:1::2; do
	n=$((n + 1))
	[ "$n" -gt 1 ] && buy_args+=(--next)
	buy_args+=(-6 -s -o /dev/null -m 10 --interface "$src" -w '%{http_code} '
		-H "X-User-Id: $((7000 + n))" -X POST "$url6/v1/seckill/1")
done
expect_eq "buys over IPv6: ::2 x3, ::3 (same /64), 2001:2:0:1::2 (another /64)" \
	"$(sbx_exec curl "${buy_args[@]}" || true)" "202 202 202 429 202 "
# client_is USER ADDR - the order of USER (item 1) in LMDB records ADDR.
client_is() {
	[ "$("$SBX" ctl --json orders --item 1 --user "$1" 2>/dev/null |
		itpy jsonq field - orders.0.client_ip 2>/dev/null)" = "$2" ]
}
check "the store records 2001:2::2 for user 7001 (20 s)" \
	wait_for 20 "order of user 7001" client_is 7001 2001:2::2
check "... and 2001:2:0:1::2 for user 7005 (20 s)" \
	wait_for 20 "order of user 7005" client_is 7005 2001:2:0:1::2
expect_eq "a buy over IPv4 is not limited by them" \
	"$(sbx_exec curl -s -o /dev/null -m 10 -w '%{http_code}' -H 'X-User-Id: 7100' \
		-X POST "$URL/v1/seckill/1" || true)" 202

expect_eq "IPv4 /healthz still answers" \
	"$(sbx_exec curl -s -o /dev/null -m 5 -w '%{http_code}' "$URL/healthz" || true)" 200
finish
