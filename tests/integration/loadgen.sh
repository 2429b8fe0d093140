#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# loadgen.sh - seckill-loadgen against the sandbox over net_memif (issue 9):
# the dataplane with a memif port in server role (sandbox.sh up --memif) on
# the last core, the loadgen in client role on core 0, a few seconds each:
#   1. healthz, keep-alive, 32 connections x depth 4: every request
#      answered 200, zero TCP errors (resets, timeouts, refusals), and the
#      dataplane answered exactly as many requests as the loadgen sent;
#   2. a mix of every kind with expected statuses (auth on: X-User-Id buys
#      401; unknown order 404; item 200; healthz 200);
#   3. a sale driven by the loadgen with pre-minted JWTs: 2,000 distinct
#      users on 500 units (a store and the control plane: ack = durable),
#      exactly 500 wins (200 confirmed), the rest sold out (410), the
#      appliance's won count the same, and LMDB holds exactly 500 live
#      units (seckillctl items), reconcile ok;
#   4. short connections (connect, request with Connection: close, FIN):
#      every one answered, and afterwards conns_open is 0 on the dataplane
#      (the loadgen's own table is empty when it exits: closed == opened);
#   5. open loop --rate with a step: the requests sent match the curve;
#   6. TLS on the dataplane's [tls] port (an ECDSA P-256 certificate made
#      here): a full handshake per short connection, then resumed ones (one
#      full handshake per client slot), keep-alive over TLS, and TLS 1.2
#      with resumption; zero errors, and /seckill/tls counted the same
#      handshakes, full and resumed;
#   7. both sides on two lcores: the dataplane with a queue pair per lcore
#      on its memif port (sandbox.sh up --memif --lcores 2), the loadgen
#      with one stack per lcore (-l 0,1): keep-alive, a JWT sale (exactly
#      the stock sold, every winner once), short connections and TLS: every
#      request answered, both loadgen stacks sent and got answers (the
#      JSON's "lcores"), and both dataplane lcores served requests; before
#      that, two loadgen lcores against the one-queue memif of a one-lcore
#      dataplane: the link stays down and the error names the queues.
#
# SK_LOADGEN: the binary (meson test sets it).
. "$(dirname "$0")/lib.sh"
require_env taskset openssl SK_LOADGEN
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
LOADGEN=$SK_LOADGEN
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
LG_PREFIX=sk-it-lg-$$
cleanup() {
	# --in-memory leaves no hugepage file; the EAL's runtime folder stays
	rm -rf "/var/run/dpdk/$LG_PREFIX" "$tmp"
}
at_exit cleanup

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=shop.test -addext subjectAltName=DNS:shop.test \
	-keyout "$tmp/ec.key" -out "$tmp/ec.pem" 2>"$tmp/openssl.log" || {
	bad "openssl req: $(cat "$tmp/openssl.log")"
	finish
	exit 1
}
chmod 600 "$tmp/ec.key"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		token_skew_s = 5
		store = $tmp/store

		[item.1]
		name = loadgen sale
		total = 500
		price = 100
		dedup_slots = 65536

		[tls]
		port = 443
		cert = $tmp/ec.pem
		key = $tmp/ec.key
	EOF
} >"$tmp/sale.ini"

export SK_SBX_ADMIN_PORT=$((17000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
sbx_up --memif --config "$tmp/sale.ini"
MEMIF=$(echo "$SBX_OUT" | sed -n 's/.* memif=\([^ ]*\).*/\1/p')
MEMIF_ADDR=$(echo "$SBX_OUT" | sed -n 's/.* memif_addr=\([0-9.]*\).*/\1/p')
[[ -n $MEMIF && -n $MEMIF_ADDR ]] || {
	bad "sandbox up --memif printed no memif= / memif_addr="
	finish
	exit 1
}

# lg NAME ARGS... - one run on the cores $LG_CPUS (default 0, one stack
# per core); its JSON in $tmp/NAME.json, its stderr in $tmp/NAME.log; the
# exit status in $tmp/NAME.rc.
LG_CPUS=0
lg() {
	local name=$1 rc=0
	shift
	timeout 120 taskset -c "$LG_CPUS" "$LOADGEN" -l "$LG_CPUS" --in-memory --no-telemetry \
		--file-prefix "$LG_PREFIX" --no-pci --log-level=lib.eal:warning \
		--vdev "net_memif0,role=client,socket=$MEMIF,socket-abstract=no" -- \
		--server "$MEMIF_ADDR" --quiet --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.log" || rc=$?
	echo "$rc" >"$tmp/$name.rc"
	sed -n '/^seckill-loadgen: /,$p' "$tmp/$name.log"
}

# j NAME EXPR - a value of run NAME's JSON (python expression on d).
j() {
	json_get "$tmp/$1.json" "$2"
}

# tcp_clean NAME - no reset, timeout or refusal, and no loadgen-side error.
tcp_clean() {
	expect_eq "$1: errors" "$(j "$1" 'd["errors"]["total"]')" 0
	expect_eq "$1: tcp resets/timeouts/refused" \
		"$(j "$1" '(d["tcp"]["resets"], d["tcp"]["timeouts"], d["tcp"]["refused"])')" "(0, 0, 0)"
	expect_eq "$1: every request answered" "$(j "$1" 'd["all_answered"]')" True
	expect_eq "$1: exit status" "$(cat "$tmp/$1.rc")" 0
}

# --- 1. healthz keep-alive
req0=$(tele requests)
lg healthz --mix healthz=1 --conns 32 --depth 4 --duration 3
tcp_clean healthz
expect_match "healthz: only 200" "$(j healthz 'list(d["status"])')" "^\['200'\]$"
expect_match "healthz: answered some" "$(j healthz 'd["answered"]')" '^[1-9][0-9]{3,}$'
expect_eq "healthz: the dataplane answered what the loadgen sent" \
	"$(($(tele requests) - req0))" "$(j healthz 'd["sent"]')"
echo "FIGURES loadgen healthz keep-alive c32 d4: rps=$(j healthz 'd["rps"]')" \
	"p99_us=$(j healthz 'd["latency_us"]["p99"]')" \
	"loadgen_cycles_per_req=$(j healthz 'd["cycles_per_req"]')" \
	"retransmits=$(j healthz 'd["tcp"]["retransmits"]')"

# --- 2. every kind, expected statuses (no buy_jwt here: the sale is next)
lg mix --mix healthz=1,item=1,order=1,buy=1 --conns 16 --depth 2 --requests 4000 --order-id 12345
tcp_clean mix
expect_eq "mix: healthz answered = 200s minus item 200s" \
	"$(j mix 'd["status"]["200"] - d["kinds"]["item"]["answered"]')" \
	"$(j mix 'd["kinds"]["healthz"]["answered"]')"
expect_eq "mix: X-User-Id buys with auth on are 401" "$(j mix 'd["status"].get("401", 0)')" \
	"$(j mix 'd["kinds"]["buy"]["answered"]')"
expect_eq "mix: unknown orders are 404" "$(j mix 'd["status"].get("404", 0)')" \
	"$(j mix 'd["kinds"]["order"]["answered"]')"
expect_eq "mix: 4000 sent" "$(j mix 'd["sent"]')" 4000

# jwt_sale NAME STOCK USERS - a sale of item 1 with USERS distinct users
# (one JWT each, one buy each): exactly STOCK wins (200 or 202), the others
# sold out, and the appliance counted and sold the same.
jwt_sale() {
	local name=$1 stock=$2 users=$3
	lg "$name" --mix buy_jwt=1 --secret-file "$tmp/secret" --tokens "$users" \
		--requests "$users" --conns 64 --depth 1 --item 1
	tcp_clean "$name"
	expect_eq "$name: $stock wins (total, 200 + 202)" \
		"$(j "$name" '(d["wins"]["total"], d["status"].get("200", 0) + d["status"].get("202", 0))')" \
		"($stock, $stock)"
	expect_eq "$name: the others sold out (410)" "$(j "$name" 'd["status"].get("410", 0)')" \
		"$((users - stock))"
	expect_eq "$name: the appliance counted the same wins" "$(tele buy_won)" "$stock"
	expect_eq "$name: the appliance sold $stock, nothing left" \
		"$("$SBX" telemetry /seckill/items | itpy jsonq kv - item1 sold remaining)" \
		"sold=$stock remaining=0"
}

# --- 3. a sale with JWTs: exactly 500 winners among 2000 distinct users
jwt_sale sale 500 2000
expect_eq "sale: each win 200 confirmed (durable)" \
	"$(j sale '(d["status"].get("200", 0), d["status"].get("202", 0))')" "(500, 0)"
check "sale: LMDB drained" wait_drained
expect_eq "sale: LMDB holds exactly the 500 winners' units" "$(item_field ledger.live)" 500
check "sale: seckillctl reconcile" reconcile

# --- 4. short connections
conns0=$(tele conns_open)
lg short --short --mix healthz=1 --conns 16 --requests 3000
tcp_clean short
expect_eq "short: one connection per request" "$(j short 'd["connections"]["opened"]')" 3000
expect_eq "short: every connection closed" "$(j short 'd["connections"]["closed"]')" 3000
# tele_is KEY VALUE - the /seckill/stats counter KEY is VALUE now.
tele_is() { [ "$(tele "$1")" = "$2" ]; }
wait_for 5 "conns_open back to $conns0" tele_is conns_open "$conns0" || true
expect_eq "short: conns_open back where it was on the dataplane" "$(tele conns_open)" "$conns0"
wait_for 6 "the connection table empty" tele_is tcp_conns 0 || true
expect_eq "short: the dataplane's table empty after TIME_WAIT" "$(tele tcp_conns)" 0
echo "FIGURES loadgen short connections c16: cps=$(j short 'd["cps"]')" \
	"p99_us=$(j short 'd["latency_us"]["p99"]')"

# --- 5. open loop: 200/s for 1 s, then 2000/s for 1 s = 2200 requests
lg rate --mix healthz=1 --rate 2000 --rate-from 200 --step 1 --duration 2 --conns 8 --depth 4
tcp_clean rate
# A loadgen starved of its core (a busy machine) sends less; what it could
# not send shows as its backlog.
expect_eq "rate: no more than the curve's 2200" "$(j rate 'd["sent"] <= 2200')" True
expect_eq "rate: sent + backlog = the curve (+-2)" "$(j rate 'd["sent"] + d["backlog_max"] >= 2198')" True
echo "FIGURES loadgen rate 200/s then 2000/s: sent=$(j rate 'd["sent"]') backlog_max=$(j rate 'd["backlog_max"]')"

# --- 6. TLS: full handshakes, resumed ones, keep-alive, TLS 1.2
# tls_tele KEY - a counter of /seckill/tls (summed over the lcores)
tls_tele() {
	"$SBX" telemetry /seckill/tls | itpy jsonq get - "d.get('total', d)['$1']"
}
full0=$(tls_tele hs_full)
res0=$(tls_tele hs_resumed)
TLS=(--tls --sni shop.test --mix healthz=1)
lg tls_full "${TLS[@]}" --short --conns 8 --requests 300
tcp_clean tls_full
expect_eq "tls_full: a full handshake per connection (full, resumed, failed, opened)" \
	"$(j tls_full '(d["tls"]["full"], d["tls"]["resumed"], d["tls"]["failed"], d["connections"]["opened"])')" \
	"(300, 0, 0, 300)"
lg tls_resumed "${TLS[@]}" --tls-resume --short --conns 8 --requests 300
tcp_clean tls_resumed
expect_eq "tls_resumed: one full handshake per client slot, then resumed (full, resumed, failed)" \
	"$(j tls_resumed '(d["tls"]["full"], d["tls"]["resumed"], d["tls"]["failed"])')" "(8, 292, 0)"
lg tls_ka "${TLS[@]}" --conns 8 --depth 4 --requests 4000
tcp_clean tls_ka
expect_eq "tls_ka: 8 handshakes carry 4000 requests (full, answered)" \
	"$(j tls_ka '(d["tls"]["full"], d["answered"])')" "(8, 4000)"
lg tls12 "${TLS[@]}" --tls-version 1.2 --tls-resume --short --conns 4 --requests 100
tcp_clean tls12
expect_eq "tls12: TLS 1.2 with tickets (full, resumed, tls12, tls13)" \
	"$(j tls12 '(d["tls"]["full"], d["tls"]["resumed"], d["tls"]["tls12"], d["tls"]["tls13"])')" \
	"(4, 96, 100, 0)"
expect_eq "tls: the dataplane counted the same handshakes (full, resumed)" \
	"($(($(tls_tele hs_full) - full0)), $(($(tls_tele hs_resumed) - res0)))" "(320, 388)"
echo "FIGURES loadgen tls short c8: full cps=$(j tls_full 'd["cps"]')" \
	"resumed cps=$(j tls_resumed 'd["cps"]') p99_us=$(j tls_full 'd["latency_us"]["p99"]')"


# --- 7. two lcores on both sides: a fresh store, a sale of 300
# first against the one-queue memif of a one-lcore dataplane: the link
# stays down and the error says why; too few connections for 2 lcores
LG_CPUS=0,1
lg one_queue --mix healthz=1 --requests 100 --wait-ms 2000 >/dev/null
expect_eq "one_queue: could not run (exit 3)" "$(cat "$tmp/one_queue.rc")" 3
check "one_queue: the error names the queue pairs the server needs" \
	grep -q 'memif server must have at least 2 queue pairs' "$tmp/one_queue.log"
lg few_conns --mix healthz=1 --conns 1 --requests 100 >/dev/null
expect_eq "few_conns: a usage error (exit 2)" "$(cat "$tmp/few_conns.rc")" 2
check "few_conns: the error says what cannot be split" \
	grep -q 'conns: 1 cannot be split over 2 lcores' "$tmp/few_conns.log"
"$SBX" down
sed -e "s|^store = .*|store = $tmp/store2|" -e 's/^total = 500$/total = 300/' "$tmp/sale.ini" \
	>"$tmp/sale2.ini"
sbx_up --memif --lcores 2 --config "$tmp/sale2.ini"
MEMIF=$(echo "$SBX_OUT" | sed -n 's/.* memif=\([^ ]*\).*/\1/p')

# per_lcore KEY - KEY of each dataplane lcore, "v0 v1"
per_lcore() {
	"$SBX" telemetry | itpy jsonq lcores - "$1"
}
# two_stacks NAME - the run's "lcores": two stacks, queues 0 and 1, each
# sent something and got every answer, adding up to the total.
two_stacks() {
	expect_eq "$1: two loadgen stacks on queues 0, 1" \
		"$(j "$1" '[e["queue"] for e in d["lcores"]]')" "[0, 1]"
	expect_eq "$1: each stack sent and got every answer" \
		"$(j "$1" 'all(e["sent"] > 0 and e["answered"] == e["sent"] for e in d["lcores"])')" True
	expect_eq "$1: the stacks add up to the total" \
		"$(j "$1" 'sum(e["sent"] for e in d["lcores"]) == d["sent"]')" True
}
read -ra before <<<"$(per_lcore requests)"
req0=$(tele requests)
lg ka2 --mix healthz=1 --conns 32 --depth 4 --requests 20000
tcp_clean ka2
two_stacks ka2
expect_eq "ka2: 20000 answered" "$(j ka2 'd["answered"]')" 20000
expect_eq "ka2: the dataplane answered what the loadgen sent" "$(($(tele requests) - req0))" 20000
read -ra after <<<"$(per_lcore requests)"
echo "requests per dataplane lcore: ${before[*]} -> ${after[*]}"
check "ka2: both dataplane lcores served requests" itpy jsonq positive 2 \
	"$((after[0] - before[0]))" "$((after[1] - before[1]))"
echo "FIGURES loadgen 2 lcores keep-alive c32 d4: rps=$(j ka2 'd["rps"]')" \
	"per_stack=$(j ka2 '[e["rps"] for e in d["lcores"]]') p99_us=$(j ka2 'd["latency_us"]["p99"]')"

# (4 pollers on 2 cores here: the control plane may commit later than
# ack_wait_ms, so a win may be 202 queued; the count is what matters)
jwt_sale sale2 300 1200
two_stacks sale2

lg short2 --short --mix healthz=1 --conns 16 --requests 2000
tcp_clean short2
two_stacks short2
expect_eq "short2: one connection per request" "$(j short2 'd["connections"]["opened"]')" 2000

lg tls2 "${TLS[@]}" --tls-resume --conns 8 --depth 4 --requests 4000
tcp_clean tls2
two_stacks tls2
expect_eq "tls2: 8 handshakes carry 4000 requests (handshakes, answered)" \
	"$(j tls2 '(d["tls"]["full"] + d["tls"]["resumed"], d["answered"])')" "(8, 4000)"

finish
