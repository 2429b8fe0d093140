#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# seckill.sh - the buy path end to end through the sandbox, two lcores on a
# one-queue tap (software dispatch), tokens on:
#
#  1. the sale: 1,000 units, 20,000 distinct users each trying 3 times,
#     concurrently (seckill-crowd, 256 keep-alive connections, signed JWTs):
#     exactly 1,000 distinct winners, every answer 202 (a win, or a
#     duplicate carrying the winner's order) or 410, every winner's order
#     polls as queued, remaining reads 0, and the telemetry agrees;
#  2. tokens: forged, expired, for another item, missing, not a JWT -> 401
#     and the stock unchanged; a good token then wins;
#  3. the window: 425 with starts_in_ms before the start, 403 after the end;
#  4. rate limit (a second run, per-IP limit 5/s, burst 5): a burst of 20 on
#     one connection gets 429 with Retry-After once the burst is spent,
#     and the refused buys do not touch the stock.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_TOKEN
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"

tmp=$(mktemp -d)
at_exit rm_tmp
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/other-secret"
chmod 600 "$tmp/secret" "$tmp/other-secret"

# ------------------------------------------------------------------ run 1
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		token_skew_s = 5

		[item.1]
		name = the sale
		total = 1000
		price = 99900
		dedup_slots = 65536

		[item.2]
		name = token checks
		total = 10
		price = 100

		[item.3]
		name = later
		total = 10
		start = +3600

		[item.4]
		name = over
		total = 10
		start = 1600000000
		end = 1600003600
	EOF
} >"$tmp/run1.ini"
sbx_up --lcores 2 --config "$tmp/run1.ini"

# http ARGS... - "<status>" of a curl request inside the namespace.
http() {
	sbx_exec curl -s -o /dev/null -m 5 -w '%{http_code}' "$@" || true
}
# remaining ITEM - units left, from GET /v1/items/ITEM.
remaining() {
	sbx_exec curl -s -m 5 "$URL/v1/items/$1" |
		itpy jsonq field - remaining
}
token() {
	"$SK_TOKEN" "$@"
}

# --- 1. the sale
rc=0
sbx_exec timeout 150 "$SK_CROWD" --server "$SERVER" --item 1 --users 20000 --attempts 60000 \
	--retriers 1 --conns 256 --secret-file "$tmp/secret" --expect-units 1000 --poll \
	--max-seconds 120 --cpu 0 --json "$tmp/crowd.json" || rc=$?
expect_eq "crowd: every check passed (exit status)" "$rc" 0
itpy reports crowd "$tmp/crowd.json" >"$tmp/crowd.txt"
cat "$tmp/crowd.txt"
val() {
	sed -n "s/^$1 //p" "$tmp/crowd.txt"
}
expect_eq "exactly 1000 distinct winners" "$(val winners)" 1000
expect_eq "1000 fresh wins" "$(val fresh_wins)" 1000
expect_eq "every one of the 60000 attempts answered" "$(val answered)" 60000
expect_match "only 202 and 410 answers (but for busy ones)" "$(val http)" '^202:[0-9]+( 410:[0-9]+)?$'
expect_match "only queued and sold_out bodies" "$(val status)" '^queued:[0-9]+( sold_out:[0-9]+)?$'
[ "$(val busy)" = 0 ] || echo "note: $(val busy) answers were 429 busy (a user's concurrent tries on two lcores)"
expect_eq "every 202 is a win or a duplicate of one" "$(val dup_vs_202)" 0
expect_eq "every winner's order polls as queued" "$(val polls_queued)" 1000
expect_eq "polls all answered right" "$(val polls_ok)" 1000
expect_eq "item 1 reads sold_out" "$(val item_state)" sold_out
expect_eq "item 1 remaining after the sale (crowd)" "$(val item_remaining)" 0
expect_eq "no client errors" "$(val errors)" 0
expect_eq "item 1 remaining (curl)" "$(remaining 1)" 0
expect_eq "telemetry: buy_won" "$(tele buy_won)" 1000
expect_eq "telemetry: engine_ok" "$(tele engine_ok)" 1000
expect_eq "telemetry: orders waiting in the rings" "$(tele orders_queued)" 1000
expect_eq "telemetry: item1 sold" "$(tele sold item1)" 1000
expect_eq "telemetry: item1 remaining" "$(tele remaining item1)" 0
expect_eq "telemetry: item1 sold_out" "$(tele sold_out item1)" 1
expect_eq "telemetry: every 429 is the engine's busy (a user's concurrent try)" \
	"$(tele buy_busy) $(tele engine_busy)" "$(val busy) $(val busy)"
check "busy answers are rare ($(val busy))" test "$(val busy)" -le 20
"$SBX" telemetry >"$tmp/t1.json"
read -ra won <<<"$(itpy jsonq lcores "$tmp/t1.json" buy_won)"
echo "  wins per lcore: ${won[*]}"
check "both lcores sold units" itpy jsonq positive 2 "${won[@]}"

# --- 2. tokens: every refusal is 401 and touches nothing
now=$(date +%s)
expect_eq "item 2 remaining before the token checks" "$(remaining 2)" 10
forged=$(token --secret-file "$tmp/other-secret" --sub 500001 --item 2)
expired=$(token --secret-file "$tmp/secret" --sub 500002 --item 2 --now $((now - 1000)) --ttl 300)
other=$(token --secret-file "$tmp/secret" --sub 500003 --item 3)
good=$(token --secret-file "$tmp/secret" --sub 500004 --item 2)
anyitem=$(token --secret-file "$tmp/secret" --sub 500005)
bad_sig0=$(tele token_bad_signature)
expired0=$(tele token_expired)
wrong0=$(tele token_wrong_item)
expect_eq "forged token (other secret)" "$(http -X POST -H "Authorization: Bearer $forged" "$URL/v1/seckill/2")" 401
expect_eq "expired token" "$(http -X POST -H "Authorization: Bearer $expired" "$URL/v1/seckill/2")" 401
expect_eq "token for another item" "$(http -X POST -H "Authorization: Bearer $other" "$URL/v1/seckill/2")" 401
expect_eq "no Authorization" "$(http -X POST "$URL/v1/seckill/2")" 401
expect_eq "X-User-Id with auth on" "$(http -X POST -H 'X-User-Id: 7' "$URL/v1/seckill/2")" 401
expect_eq "Bearer garbage" "$(http -X POST -H 'Authorization: Bearer abc.def' "$URL/v1/seckill/2")" 401
expect_eq "401 body" "$(sbx_exec curl -s -m 5 -X POST "$URL/v1/seckill/2")" '{"status":"unauthorized"}'
expect_eq "item 2 remaining after the refusals" "$(remaining 2)" 10
expect_eq "telemetry: bad signature counted" "$(tele token_bad_signature)" $((bad_sig0 + 1))
expect_eq "telemetry: expired counted" "$(tele token_expired)" $((expired0 + 1))
expect_eq "telemetry: wrong item counted" "$(tele token_wrong_item)" $((wrong0 + 1))
body=$(sbx_exec curl -s -m 5 -X POST -H "Authorization: Bearer $good" "$URL/v1/seckill/2")
expect_match "a good token wins" "$body" '^\{"status":"queued","order":"[1-9][0-9]*"\}$'
order=$(echo "$body" | sed -n 's/.*"order":"\([0-9]*\)".*/\1/p')
body2=$(sbx_exec curl -s -m 5 -X POST -H "Authorization: Bearer $good" "$URL/v1/seckill/2")
expect_eq "its retry is the same order, marked duplicate" "$body2" \
	"{\"status\":\"queued\",\"order\":\"$order\",\"duplicate\":true}"
expect_eq "a token without an item claim is good for any item" \
	"$(http -X POST -H "Authorization: Bearer $anyitem" "$URL/v1/seckill/2")" 202
expect_eq "item 2 remaining after two wins" "$(remaining 2)" 8
expect_eq "the order polls as queued" "$(sbx_exec curl -s -m 5 "$URL/v1/orders/$order")" \
	"{\"order\":\"$order\",\"status\":\"queued\"}"
expect_eq "an unknown order is 404" "$(http "$URL/v1/orders/12345")" 404
expect_eq "an unknown item is 404" "$(http -X POST -H "Authorization: Bearer $anyitem" "$URL/v1/seckill/99")" 404
expect_eq "GET on the buy route is 405" "$(http "$URL/v1/seckill/2")" 405

# --- 3. the window
t3=$(token --secret-file "$tmp/secret" --sub 500006)
body=$(sbx_exec curl -s -m 5 -X POST -H "Authorization: Bearer $t3" -w ' %{http_code}' "$URL/v1/seckill/3")
expect_match "before the start: 425 with starts_in_ms" "$body" \
	'^\{"status":"not_started","starts_in_ms":3[0-9]{6}\} 425$'
body=$(sbx_exec curl -s -m 5 -X POST -H "Authorization: Bearer $t3" -w ' %{http_code}' "$URL/v1/seckill/4")
expect_eq "after the end: 403" "$body" '{"status":"ended"} 403'
expect_match "item 3 reads scheduled" "$(sbx_exec curl -s -m 5 "$URL/v1/items/3")" '"state":"scheduled"'
expect_match "item 4 reads ended" "$(sbx_exec curl -s -m 5 "$URL/v1/items/4")" '"state":"ended"'
expect_eq "no stock moved on items 3 and 4" "$(remaining 3) $(remaining 4)" "10 10"

"$SBX" down >/dev/null || bad "sandbox down after run 1 reported a problem"

# ------------------------------------------------------------------ run 2
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		ip_rate = 5
		ip_burst = 5
		ip_slots = 1024

		[item.1]
		total = 100
	EOF
} >"$tmp/run2.ini"
sbx_up --lcores 2 --config "$tmp/run2.ini"

# 20 buys of distinct users on one keep-alive connection, back to back:
# "<status> <Retry-After or ->" per answer.
sbx_exec timeout 20 python3 "$IT_PY/clients.py" burst "$SERVER" 20 >"$tmp/burst"
codes=$(cut -d' ' -f1 "$tmp/burst" | tr '\n' ' ')
n202=$(grep -c '^202 -$' "$tmp/burst" || true)
n429=$(grep -c '^429 ' "$tmp/burst" || true)
echo "burst of 20: $codes"
expect_eq "the first 5 pass" "$(head -n 5 "$tmp/burst" | cut -d' ' -f1 | tr '\n' ' ')" "202 202 202 202 202 "
check "the burst above the limit gets 429 ($n429)" test "$n429" -ge 1
expect_eq "every answer is 202 or 429" "$((n202 + n429))" 20
expect_eq "every 429 carries Retry-After >= 1" "$(grep -cE '^429 [1-9][0-9]*$' "$tmp/burst" || true)" "$n429"
expect_eq "refused buys took no stock" "$(remaining 1)" $((100 - n202))
expect_eq "telemetry: rl_refused_ip" "$(tele rl_refused_ip)" "$n429"
expect_eq "telemetry: buy_rate_limited" "$(tele buy_rate_limited)" "$n429"
finish
