#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# gate.sh - the gate claim end to end: a JWT sale of an item created with
# `seckillctl activity add --gate` (control plane, store, tokens on), two
# lcores:
#
#  1. single buys (seckill-token): a token without the gate claim, or with
#     the claim of another item, gets 403 {"status":"gate"} and takes no
#     unit; a forged token is still 401 (the identity comes first); a token
#     with the claim (--gate) wins; an item without the flag sells to a
#     token without the claim;
#  2. the sale: 2000 users, 30 % of them without the claim (seckill-crowd
#     --gate 70: user index mod 100 >= 70), 1300 units: exactly 1300
#     winners, every winner's user id is one with the claim (checked from
#     the ids against the crowd's split), no user with the claim was
#     refused 403 gate, every user without it got 403 gate - or, when its
#     only tries came after the sell-out, 410 (the sold-out flag is checked
#     before the identity) - and nothing else; the 403 gate answers are
#     counted by the dataplane's telemetry and the control plane's
#     /metrics (seckill_requests_total{outcome="gate"}).
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_TOKEN SK_CONTROL SK_SECKILLCTL
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((17000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
secret_file "$tmp/secret"
secret_file "$tmp/other-secret"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		token_skew_s = 5
		store = $tmp/store
		ack = queued
		ip_rate = 0
	EOF
} >"$tmp/gate.ini"
sbx_up --lcores 2 --config "$tmp/gate.ini"

ctl() { "$SBX" ctl "$@" >"$tmp/ctl.out" 2>&1; }
token() { "$SK_TOKEN" --secret-file "$tmp/secret" "$@"; }
# buy ITEM TOKEN - one buy; sets CODE and BODY.
buy() {
	BODY=$(sbx_exec curl -s -m 5 -o - -w '\n%{http_code}' -X POST \
		-H "Authorization: Bearer $2" "$URL/v1/seckill/$1") || true
	CODE=${BODY##*$'\n'}
	BODY=${BODY%$'\n'*}
}
# open ITEM - the dataplane sells ITEM (its activity preheated).
open() {
	[[ $(sbx_exec curl -s -m 5 "$URL/v1/items/$1") == *'"state":"open"'* ]]
}

check "activity 1 (gated, 1300 units) created" ctl activity add 1 --total 1300 --gate \
	--name "gated sale"
check "activity 2 (gated, 5 units) created" ctl activity add 2 --total 5 --gate --name "checks"
check "activity 3 (not gated) created" ctl activity add 3 --total 5 --name "open"
check "activity show 2 says gate" grep -q '"gate": *true' <("$SBX" ctl --json activity show 2)
for i in 1 2 3; do
	check "item $i open in the dataplane" wait_for 10 "item $i open" open "$i"
done

# ------------------------------------------------ 1. single buys
gate0=$(tele buy_gate)
buy 2 "$(token --sub 900001 --item 2)"
expect_eq "no gate claim: 403 gate" "$CODE $BODY" '403 {"status":"gate"}'
buy 2 "$(token --sub 900002)"
expect_eq "no item claim, no gate claim: 403 gate" "$CODE $BODY" '403 {"status":"gate"}'
buy 2 "$(token --sub 900003 --item 3 --gate)"
expect_eq "the gate claim of another item (and its item claim): 401 wrong item" "$CODE" 401
buy 2 "$("$SK_TOKEN" --secret-file "$tmp/other-secret" --sub 900004 --item 2 --gate)"
expect_eq "a forged token with the claim: 401" "$CODE $BODY" '401 {"status":"unauthorized"}'
expect_eq "telemetry: the two refusals counted as gate" "$(tele buy_gate)" $((gate0 + 2))
expect_match "item 2 untouched" "$(sbx_exec curl -s -m 5 "$URL/v1/items/2")" '"remaining":5'
buy 2 "$(token --sub 900005 --item 2 --gate)"
expect_match "the gate claim of the item: 202" "$CODE $BODY" '^202 \{"status":"queued","order":"[1-9][0-9]*"\}$'
buy 3 "$(token --sub 900006 --item 3)"
expect_eq "an item without the flag sells without the claim" "$CODE" 202

# ------------------------------------------------ 2. the sale
rc=0
sbx_exec timeout 150 "$SK_CROWD" --server "$SERVER" --item 1 --users 2000 --attempts 2400 \
	--retriers 0.1 --conns 64 --secret-file "$tmp/secret" --gate 70 --expect-units 1300 \
	--max-seconds 120 --cpu 0 --json "$tmp/crowd.json" --orders "$tmp/crowd.orders" \
	>"$tmp/crowd.out" 2>&1 || rc=$?
cat "$tmp/crowd.out"
expect_eq "crowd: every check passed, the gate check included (exit status)" "$rc" 0
g() { json_get "$tmp/crowd.json" "d['gate']['$1']"; }
expect_eq "crowd: exactly 1300 winners" "$(json_get "$tmp/crowd.json" "d['winners']")" 1300
expect_eq "crowd: the split, 1400 with the claim and 600 without" \
	"$(g with_claim) $(g without)" "1400 600"
expect_eq "crowd: no user without the claim won" "$(g lacking_won)" 0
expect_eq "crowd: no user with the claim was refused 403 gate" "$(g claim_refused)" 0
expect_eq "crowd: users without the claim got nothing but 403 gate or 410" "$(g lacking_other)" 0
expect_eq "crowd: every user without the claim got 403 gate, or 410 after the sell-out" \
	"$(($(g lacking_gate) + $(g lacking_sold_out)))" 600
check "crowd: most users without the claim came before the sell-out ($(g lacking_gate) of 600)" \
	test "$(g lacking_gate)" -ge 300
# The winners' ids against the crowd's split, from the ids themselves.
# shellcheck disable=SC2016 # an awk program
check "winners: 1300 distinct users, every one with the claim ((id - 1) mod 100 < 70)" \
	awk 'BEGIN { n = 0 } ($1 - 1) % 100 >= 70 { bad++ } !seen[$1]++ { n++ }
		END { exit !(n == 1300 && NR == 1300 && bad == 0) }' "$tmp/crowd.orders"
refused=$(g refused)
expect_eq "crowd: 403 answers are the gate refusals" \
	"$(json_get "$tmp/crowd.json" "d['http'].get('403', 0)")" "$refused"
expect_eq "telemetry: buy_gate counts them" "$(tele buy_gate)" $((gate0 + 2 + refused))
check "metrics: seckill_requests_total{outcome=\"gate\"} counts them" \
	wait_metric 'seckill_requests_total{outcome="gate"}' -eq $((gate0 + 2 + refused)) 10
expect_match "item 1 sold out" "$(sbx_exec curl -s -m 5 "$URL/v1/items/1")" \
	'"state":"sold_out","remaining":0'
finish
