#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# sse.sh - the order events stream, GET /v1/orders/{id}/events (Server-Sent
# Events from the dataplane): the sandbox with a store, ack = queued, auth
# off (X-User-Id).
#
#  1. the control plane stopped, user 7 buys: 202 queued; its stream opens
#     with 200 text/event-stream, Cache-Control: no-store, no
#     Content-Length, and the event "queued";
#  2. someone else (user 8) following that order gets 404, as for an
#     unknown order; no identity: 401;
#  3. the control plane starts and stores the order: the stream says
#     "confirmed"; the order is paid through the admin API (seckillctl
#     order pay): the stream says "paid" and the dataplane closes it. The
#     events are exactly queued, confirmed, paid, in that order;
#  4. a stream of a paid order: one event "paid", then the close at once;
#  5. the dataplane's telemetry counts the streams and events;
#  6. seckill-crowd --follow 100: every other winner (user base 100) opens
#     its stream and reads "confirmed" (or queued, then confirmed); the
#     streams stay open (nothing final) until --follow-seconds;
#  7. the per-user cap (sse_per_user = 2): a third stream of one user gets
#     429 {"status":"busy"} with Retry-After while two are open.
# Every wait is on a condition and bounded; the curl clients are stopped by
# their PIDs on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
SPID=
stop_stream() {
	local p
	for p in $SPID "${HOLD[@]}"; do
		kill_tree KILL "$p"
		wait "$p" 2>/dev/null || true
	done
}
HOLD=()
at_exit stop_stream
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT

cfg=$tmp/sse.ini
{
	durable_config | sed -e 's/^ack = durable$/ack = queued/' -e '/^ack_wait_ms/a sse_per_user = 2'
	cat <<-EOF

		[item.1]
		name = sse sale
		total = 10
	EOF
} >"$cfg"
sbx_up --config "$cfg"

# events FILE - the status names of the events in FILE, space-separated.
events() {
	sed -n 's/^data: {"order":"[0-9]*","status":"\([a-z_]*\)"}$/\1/p' "$1" | tr '\n' ' ' |
		sed 's/ $//'
}

# has_event FILE NAME - FILE holds the event NAME.
has_event() {
	grep -q "^data: {\"order\":\"[0-9]*\",\"status\":\"$2\"}$" "$1"
}

# code USER ORDER - the status of a follow of ORDER by USER ("" for none).
code() {
	local h=()
	[ -z "$1" ] || h=(-H "X-User-Id: $1")
	sbx_exec curl -s -m 10 -o /dev/null -w '%{http_code}' "${h[@]}" \
		"http://$SERVER/v1/orders/$2/events" || true
}

# ------------------------------------------------------------------ 1. queued
"$SBX" control stop
out=$(sbx_exec curl -s -m 10 -w ' %{http_code}' -X POST -H 'X-User-Id: 7' \
	"http://$SERVER/v1/seckill/1") || true
order=$(sed -n 's/.*"order":"\([0-9]*\)".*/\1/p' <<<"$out")
expect_match "buy: 202 queued while the control plane is stopped" "$out" '"status":"queued".* 202$'

sbx_exec curl -s -N -m 60 -D "$tmp/head" -H 'X-User-Id: 7' \
	"http://$SERVER/v1/orders/$order/events" >"$tmp/ev" 2>"$tmp/curl.err" &
SPID=$!
check "stream: the event queued arrives" wait_for 10 "queued event" has_event "$tmp/ev" queued
expect_match "stream: 200" "$(head -n 1 "$tmp/head")" '^HTTP/1.1 200 OK'
check "stream: Content-Type: text/event-stream" grep -qi '^Content-Type: text/event-stream' "$tmp/head"
check "stream: Cache-Control: no-store" grep -qi '^Cache-Control: no-store' "$tmp/head"
expect_eq "stream: no Content-Length" "$(grep -ci '^Content-Length' "$tmp/head")" 0
check "stream: the event line names it" grep -qx 'event: status' "$tmp/ev"

# ------------------------------------------------------------------ 2. strangers
expect_eq "another user's follow: 404" "$(code 8 "$order")" 404
expect_eq "an unknown order: 404" "$(code 7 $((order + 5)))" 404
expect_eq "no identity: 401" "$(code "" "$order")" 401

# ------------------------------------------------------------------ 3. confirmed, paid
"$SBX" control start
check "stream: confirmed once stored (30 s)" wait_for 30 "confirmed event" has_event "$tmp/ev" confirmed
check "pay: seckillctl order pay" "$SBX" ctl order pay "$order"
check "stream: paid (10 s)" wait_for 10 "paid event" has_event "$tmp/ev" paid
rc=0
gone() { ! kill -0 "$1" 2>/dev/null; }
check "stream: curl ends (10 s)" wait_for 10 "the stream's close" gone "$SPID"
wait "$SPID" || rc=$?
SPID=
expect_eq "stream: closed by the dataplane after paid (curl exit 0)" "$rc" 0
expect_eq "stream: events queued confirmed paid" "$(events "$tmp/ev")" "queued confirmed paid"

# ------------------------------------------------------------------ 4. a paid order
sbx_exec curl -s -N -m 10 -H 'X-User-Id: 7' "http://$SERVER/v1/orders/$order/events" \
	>"$tmp/ev2" 2>/dev/null || true
expect_eq "a paid order's stream: one event paid, then the close" "$(events "$tmp/ev2")" paid

# ------------------------------------------------------------------ 5. telemetry
expect_eq "telemetry: sse_opened" "$(tele sse_opened)" 1
expect_eq "telemetry: sse_events (4 pushed)" "$(tele sse_events)" 4
expect_eq "telemetry: sse_finished" "$(tele sse_finished)" 2
expect_eq "telemetry: sse_open back to 0" "$(tele sse_open)" 0

# ------------------------------------------------------------------ 6. crowd --follow
rc=0
sbx_exec timeout 60 "$SK_CROWD" --server "$SERVER" --item 1 --users 20 --user-base 100 \
	--retriers 0 --conns 16 --follow 100 --follow-seconds 2 --json "$tmp/crowd.json" \
	--orders "$tmp/crowd.orders" >"$tmp/crowd.out" 2>&1 || rc=$?
cat "$tmp/crowd.out"
expect_eq "crowd: checks pass" "$rc" 0
cf() {
	json_get "$tmp/crowd.json" "d['follow']['$1']"
}
expect_eq "crowd --follow: 9 winners (10 units, 1 sold before)" "$(cf winners)" 9
expect_eq "crowd --follow: a stream per winner, each 200" "$(cf streams):$(cf opened)" "9:9"
expect_eq "crowd --follow: each stream ends on confirmed" \
	"$(json_get "$tmp/crowd.json" "d['follow']['by_status']['confirmed']")" 9
expect_eq "crowd --follow: open until the end (no final status), no error" \
	"$(cf open_at_end):$(cf closed_final):$(cf errors)" "9:0:0"

# ------------------------------------------------------------------ 7. per-user cap
read -r u o < <(head -n 1 "$tmp/crowd.orders")
for i in 1 2; do
	sbx_exec curl -s -N -m 30 -H "X-User-Id: $u" "http://$SERVER/v1/orders/$o/events" \
		>"$tmp/hold$i" 2>/dev/null &
	HOLD+=($!)
	check "cap: stream $i of user $u open" wait_for 10 "stream $i" has_event "$tmp/hold$i" confirmed
done
out=$(sbx_exec curl -s -m 10 -D "$tmp/busy.head" -w ' %{http_code}' -H "X-User-Id: $u" \
	"http://$SERVER/v1/orders/$o/events") || true
expect_eq "cap: a third stream of the user: 429 busy" "$out" '{"status":"busy"} 429'
check "cap: with Retry-After" grep -qi '^Retry-After: 1' "$tmp/busy.head"
expect_eq "telemetry: sse_refused_user" "$(tele sse_refused_user)" 1

finish
