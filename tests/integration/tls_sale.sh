#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tls_sale.sh - a JWT flash sale over HTTPS: the dataplane terminates TLS
# ([tls] port 443, an ECDSA P-256 certificate for shop.test made here with
# the openssl CLI, a ticket key file), tokens on, two lcores:
#
#  1. TLS 1.3 (or whatever the two sides agree): 300 units, 3,000 users
#     trying twice on average (seckill-crowd --tls, 64 connections that
#     reconnect every 25 answers and resume their session, the
#     certificate verified against shop.test): exactly 300 distinct
#     winners, no user and no order twice, every winner's order polls as
#     queued over TLS, and the dataplane's /seckill/tls telemetry counts
#     the crowd's handshakes, full and resumed, with none failed;
#  2. TLS 1.2 only, a second item: 50 units, 500 users, the same promises;
#     every reconnect resumes (a TLS 1.2 session may be reused).
. "$(dirname "$0")/lib.sh"
require_env curl openssl SK_CROWD
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"

tmp=$(mktemp -d)
at_exit rm_tmp
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/ticket.key"
chmod 600 "$tmp/secret" "$tmp/ticket.key"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$tmp/ec.key" -out "$tmp/ec.pem" -subj /CN=shop.test \
	-addext subjectAltName=DNS:shop.test 2>/dev/null || {
	bad "openssl req made no certificate"
	finish
}
chmod 600 "$tmp/ec.key"

{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[tls]
		port = 443
		cert = $tmp/ec.pem
		key = $tmp/ec.key
		ticket_key_file = $tmp/ticket.key

		[seckill]
		auth = on
		secret_file = $tmp/secret
		token_skew_s = 5

		[item.1]
		name = the sale over TLS 1.3
		total = 300
		price = 99900
		dedup_slots = 65536

		[item.2]
		name = the sale over TLS 1.2
		total = 50
		price = 99900
	EOF
} >"$tmp/sale.ini"
sbx_up --lcores 2 --config "$tmp/sale.ini"

# tls_tele KEY - KEY of /seckill/tls, summed over the lcores.
tls_tele() {
	"$SBX" telemetry /seckill/tls | itpy jsonq tele - "$1" top
}

# tls_tele_is KEY VALUE - whether /seckill/tls KEY reads VALUE now.
tls_tele_is() {
	[ "$(tls_tele "$1")" = "$2" ]
}

HTTPS=(--cacert "$tmp/ec.pem" --resolve "shop.test:443:$SERVER")
check "https://shop.test/healthz answers (curl, certificate verified)" wait_for 20 \
	"https healthz" sbx_exec curl -sf -m 2 "${HTTPS[@]}" https://shop.test/healthz

# sale N ITEM USERS ATTEMPTS UNITS EVERY CROWD-ARGS... - run a crowd over TLS
# from the client namespace (64 connections, each reconnecting after EVERY
# answers and offering its last session) and check what it saw; its summary
# is $tmp/crowdN.json (and .txt), its orders $tmp/ordersN.txt. The handshakes
# the dataplane counted meanwhile must be the crowd's. Leaves the crowd's
# figures in full, resumed and reconnects.
sale() {
	local n=$1 item=$2 users=$3 attempts=$4 units=$5 every=$6 rc=0 k
	shift 6
	declare -A base
	for k in hs_full hs_resumed hs_failed hs_timeout tickets_rejected tls12 tls13; do
		base[$k]=$(tls_tele "$k")
	done
	sbx_exec timeout 150 "$SK_CROWD" --server "$SERVER" --tls --sni shop.test \
		--cacert "$tmp/ec.pem" --tls-resume --conn-requests "$every" --item "$item" \
		--users "$users" --attempts "$attempts" --retriers 0.5 --conns 64 \
		--secret-file "$tmp/secret" --expect-units "$units" --poll --max-seconds 120 \
		--cpu 0 --json "$tmp/crowd$n.json" --orders "$tmp/orders$n.txt" "$@" || rc=$?
	expect_eq "sale $n: the crowd's checks all passed (exit status)" "$rc" 0
	itpy reports crowd "$tmp/crowd$n.json" >"$tmp/crowd$n.txt"
	cat "$tmp/crowd$n.txt"
	val() {
		sed -n "s/^$1 //p" "$tmp/crowd$n.txt"
	}
	expect_eq "sale $n: exactly $units distinct winners" "$(val winners)" "$units"
	expect_eq "sale $n: $units fresh wins" "$(val fresh_wins)" "$units"
	expect_eq "sale $n: every one of the $attempts attempts answered" "$(val answered)" \
		"$attempts"
	expect_eq "sale $n: every 202 is a win or a duplicate of one" "$(val dup_vs_202)" 0
	expect_eq "sale $n: every winner's order polls as queued over TLS" "$(val polls_queued)" \
		"$units"
	expect_eq "sale $n: no client errors" "$(val errors)" 0
	expect_eq "sale $n: $units winner lines" "$(wc -l <"$tmp/orders$n.txt")" "$units"
	expect_eq "sale $n: no user won twice" \
		"$(cut -d' ' -f1 "$tmp/orders$n.txt" | sort | uniq -d | wc -l)" 0
	expect_eq "sale $n: no order given twice" \
		"$(cut -d' ' -f2 "$tmp/orders$n.txt" | sort | uniq -d | wc -l)" 0

	# the crowd's handshakes: one per connection set up, none failed, the
	# first of each connection full, every session offered taken
	full=$(tj "$n" "d['tls']['handshakes']['full']")
	resumed=$(tj "$n" "d['tls']['handshakes']['resumed']")
	reconnects=$(tj "$n" "d['reconnects']")
	expect_eq "sale $n: a handshake per connection set up" $((full + resumed)) \
		"$(tj "$n" "d['connects']")"
	check "sale $n: at least one full handshake per connection" test "$full" -ge 64
	check "sale $n: connections reconnected (every $every answers)" \
		test "$reconnects" -ge $((attempts / every - 64))
	expect_eq "sale $n: every session offered was resumed" "$resumed" \
		"$(tj "$n" "d['tls']['offered']")"
	expect_eq "sale $n: no handshake failed (crowd)" \
		"$(tj "$n" "d['tls']['handshakes']['failed']")" 0

	# the dataplane counted the same handshakes (one the crowd finished
	# reaches the dataplane's books once its last flight is read)
	check "sale $n: telemetry hs_resumed grew by the crowd's $resumed" wait_for 10 \
		"hs_resumed" tls_tele_is hs_resumed $((base[hs_resumed] + resumed))
	check "sale $n: telemetry hs_full grew by the crowd's $full" wait_for 10 \
		"hs_full" tls_tele_is hs_full $((base[hs_full] + full))
	for k in hs_failed hs_timeout tickets_rejected; do
		expect_eq "sale $n: telemetry $k did not grow" "$(tls_tele "$k")" "${base[$k]}"
	done
	for k in tls12 tls13; do
		expect_eq "sale $n: telemetry $k grew by the crowd's" \
			$(($(tls_tele "$k") - base[$k])) "$(tj "$n" "d['tls']['$k']")"
	done
	expect_eq "sale $n: item $item sold out (remaining, over https)" \
		"$(sbx_exec curl -s -m 5 "${HTTPS[@]}" "https://shop.test/v1/items/$item" |
			itpy jsonq field - remaining)" 0
}

# tj N EXPR - EXPR (python, on d) of the crowd summary of sale N.
tj() {
	itpy jsonq get "$tmp/crowd$1.json" "$2"
}

# --- 1. TLS 1.3 (both sides' best), 300 units. A client uses a TLS 1.3
# ticket once (RFC 8446 C.4, as OpenSSL does): a reconnect resumes when the
# connection before it got a ticket, so at least every other one does.
sale 1 1 3000 6000 300 25
expect_eq "sale 1: every handshake was TLS 1.3" "$(tj 1 "d['tls']['tls13'] == d['connects']")" \
	True
check "sale 1: at least every other reconnect resumed" test $((2 * resumed)) -ge \
	$((reconnects - 64))

# --- 2. TLS 1.2 only, 50 units: a TLS 1.2 session resumes again and again,
# so after the first handshake of a connection every reconnect resumes
sale 2 2 500 1000 50 5 --tls-version 1.2
expect_eq "sale 2: every handshake was TLS 1.2" "$(tj 2 "d['tls']['tls12'] == d['connects']")" \
	True
expect_eq "sale 2: one full handshake per connection" "$full" 64

expect_eq "telemetry: buy_won" "$(tele buy_won)" 350
expect_eq "telemetry: item1 sold" "$(tele sold item1)" 300
expect_eq "telemetry: item2 sold" "$(tele sold item2)" 50
finish
