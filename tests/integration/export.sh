#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# export.sh - the Kafka export of the event log through the real appliance:
# seckill-kafka broker (librdkafka's mock cluster on 127.0.0.1, topics
# seckill.orders and seckill.events), the sandbox with a store, ack =
# durable, auth off (X-User-Id) and the control plane started with
# --kafka BOOTSTRAP:
#
#  1. a sale of 500 units to 3,000 users: once the export backlog is 0,
#     seckill.orders holds exactly the winners' orders (keys = order ids),
#     every value is {"v":1, "type":"confirmed", "order" = key, "user" =
#     the winner, "units", "lines" of item 1}; delivered_total >= winners;
#  2. 5 orders paid (seckillctl order pay): seckill.events has "paid" events
#     for exactly those order ids;
#  3. broker outage (SIGUSR1: every broker down): a restock and a second
#     wave (200 units, new users) are still answered 200 (durable acks do
#     not wait for Kafka) and are in LMDB, reconcile passes, the export
#     cursor does not move and the backlog covers the second wave; SIGUSR2:
#     the backlog drains to 0 and seckill.orders holds every order of both
#     waves (at least once: duplicates allowed, with the same value);
#  4. restock, 2 more pays and at once kill -9 of the control plane (the
#     cursor is saved at most once a second, so the last events are
#     re-exported); the dataplane sells a third wave meanwhile (60 units,
#     answered 202 after ack_wait_ms); the control plane restarts with the
#     same --kafka: the third wave reaches LMDB, the backlog drains to 0,
#     seckill.orders holds every order of the three waves and nothing else,
#     seckill.events exactly the 7 paid orders, per key the seq values are
#     non-decreasing in consumption order, duplicates carry the same value,
#     every event 1..cursor was exported exactly under one key, and
#     reconcile passes;
#  5. a clean stop (SIGTERM) and start of the control plane: the cursor was
#     flushed at stop, nothing is produced again.
# Every crowd run, wait and consume is bounded; the broker is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl
[ -x "${SK_CROWD:-}" ] || skip "SK_CROWD is not an executable (run through meson test)"
[ -x "${SK_CONTROL:-}" ] || skip "SK_CONTROL is not an executable (run through meson test)"
[ -x "${SK_SECKILLCTL:-}" ] || skip "SK_SECKILLCTL is not an executable (run through meson test)"
[ -x "${SK_KAFKA:-}" ] || skip "SK_KAFKA is not an executable (run through meson test)"

tmp=$(mktemp -d)
KAFKA_PID=
cleanup() {
	local rc=$?
	if [ "$rc" != 0 ] && [ -f "/run/$SK_SBX/control.log" ]; then
		echo "--- control plane log (last lines)"
		tail -n 15 "/run/$SK_SBX/control.log"
		echo "--- broker log"
		tail -n 10 "$tmp/kafka.log" 2>/dev/null || true
	fi
	"$SBX" down >/dev/null 2>&1 || rc=1
	kafka_down
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib.sh's item_field and orders_in_store
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS
W1=500 W2=200 W3=60

ctl() {
	"$SBX" ctl "$@"
}

# control_gone - the control plane's PID (sandbox state) is no seckill-control
# any more (a zombie waiting for its reaper counts as gone).
control_gone() {
	local pid
	pid=$(sed -n 's/^control_pid=//p' "/run/$SK_SBX/env")
	[ -n "$pid" ] && ! grep -q seckill-control "/proc/$pid/cmdline" 2>/dev/null
}

crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 32 \
		--timeout-ms 8000 --max-seconds 40 "$@"
}

# check.py ORDERS_JSON EVENTS_JSON WINNERS PAID CURSOR - what the
# topics hold against what the appliance sold, as one JSON object on
# stdout (examples of problems on stderr). EVENTS_JSON, PAID may be "-";
# CURSOR 0 skips the log coverage check.
cat >"$tmp/check.py" <<-'EOF'
	import collections, json, sys
	ofile, efile, wfile, pfile, cursor = sys.argv[1:6]
	cursor = int(cursor)
	r = collections.OrderedDict()
	notes = []

	def note(msg):
	    if len(notes) < 8:
	        notes.append(msg)

	def load(path):
	    out = []
	    if path == "-":
	        return out
	    for m in json.load(open(path)):
	        try:
	            d = json.loads(m["value"]) if m.get("value") is not None else None
	        except ValueError:
	            d = None
	        out.append((m["partition"], m["offset"], m.get("key"), m.get("value"), d))
	    return out

	winners = {}
	for line in open(wfile):
	    if line.strip():
	        user, order = line.split()
	        winners[order] = int(user)
	paid = set() if pfile == "-" else {l.strip() for l in open(pfile) if l.strip()}
	topics = {"orders": load(ofile), "events": load(efile)}

	seq_key = {}  # seq -> (topic, key): one event, one key
	value_of = {}  # (key, seq) -> value
	r["seq_clash"] = r["dup_mismatch"] = r["seq_back"] = r["offset_back"] = 0
	r["bad_json"] = 0
	for t, msgs in topics.items():
	    last_seq, last_off = {}, {}
	    for part, off, key, val, d in msgs:
	        if last_off.get(part, -1) >= off:
	            r["offset_back"] += 1
	        last_off[part] = off
	        if not isinstance(d, dict) or d.get("v") != 1 or not isinstance(d.get("seq"), int) \
	                or key is None:
	            r["bad_json"] += 1
	            note(f"{t}: not a v1 event: key {key} value {val}")
	            continue
	        s = d["seq"]
	        if seq_key.setdefault(s, (t, key)) != (t, key):
	            r["seq_clash"] += 1
	            note(f"seq {s} under {seq_key[s]} and {(t, key)}")
	        if value_of.setdefault((key, s), val) != val:
	            r["dup_mismatch"] += 1
	            note(f"{t}: ({key}, {s}) twice with other values: {value_of[(key, s)]} / {val}")
	        if s < last_seq.get(key, 0):
	            r["seq_back"] += 1
	            note(f"{t}: key {key}: seq {s} after {last_seq[key]}")
	        last_seq[key] = max(s, last_seq.get(key, 0))

	om = [m for m in topics["orders"] if isinstance(m[4], dict)]
	keys = {m[2] for m in om}
	r["o_msgs"] = len(topics["orders"])
	r["o_keys"] = len(keys)
	r["o_dups"] = len(om) - len({(m[2], m[4].get("seq")) for m in om})
	missing = sorted(set(winners) - keys)
	extra = sorted(keys - set(winners))
	r["o_missing"], r["o_extra"] = len(missing), len(extra)
	for k in missing[:3]:
	    note(f"orders: winner's order {k} (user {winners[k]}) not exported")
	for k in extra[:3]:
	    note(f"orders: {k} exported but no winner has it")
	r["o_bad"] = 0
	for part, off, key, val, d in om:
	    lines = d.get("lines")
	    good = (d.get("type") == "confirmed" and d.get("order") == key
	            and (key not in winners or d.get("user") == winners[key])
	            and isinstance(d.get("units"), int) and d["units"] >= 1
	            and isinstance(lines, list) and len(lines) >= 1
	            and all(isinstance(l, dict) and l.get("item") == 1 and l.get("qty", 0) >= 1
	                    for l in lines)
	            and sum(l["qty"] for l in lines) == d["units"])
	    if not good:
	        r["o_bad"] += 1
	        note(f"orders: bad value under key {key}: {val}")

	em = [m for m in topics["events"] if isinstance(m[4], dict)]
	r["e_msgs"] = len(topics["events"])
	r["e_dups"] = len(em) - len({(m[2], m[4].get("seq")) for m in em})
	types = collections.Counter()
	seen = set()
	r["e_bad"] = 0
	paid_keys = set()
	for part, off, key, val, d in em:
	    typ, order = d.get("type"), d.get("order")
	    if (key, d["seq"]) not in seen:
	        seen.add((key, d["seq"]))
	        types[typ] += 1
	    if typ not in ("paid", "cancelled", "failed", "restocked", "activity", "closed") or \
	            (order is not None and order != key) or \
	            (order is None and key != f"item:{d.get('item')}"):
	        r["e_bad"] += 1
	        note(f"events: bad value under key {key}: {val}")
	    if typ == "paid":
	        paid_keys.add(key)
	        if key not in winners or d.get("user") != winners[key]:
	            r["e_bad"] += 1
	            note(f"events: paid {key} is no winner's order (or another user): {val}")
	r["e_types"] = dict(sorted(types.items()))
	r["paid_missing"] = len(paid - paid_keys)
	r["paid_extra"] = len(paid_keys - paid)
	for k in sorted(paid ^ paid_keys)[:3]:
	    note(f"events: paid {k}: {'not exported' if k in paid else 'exported but not paid'}")

	if cursor > 0:
	    seqs = set(seq_key)
	    r["seq_missing"] = len(set(range(1, cursor + 1)) - seqs)
	    r["seq_over"] = len([s for s in seqs if s > cursor or s < 1])
	    for s in sorted(set(range(1, cursor + 1)) - seqs)[:3]:
	        note(f"event {s} of the log never exported")
	for n in notes:
	    print(n, file=sys.stderr)
	print(json.dumps(r))
EOF

# cx FILE FIELD - a field of a check.py result.
cx() {
	json_get "$1" "d['$2']"
}

# consume_both TAG - both topics from the beginning into $tmp/TAG.orders.json
# and $tmp/TAG.events.json.
consume_both() {
	kafka_consume seckill.orders "$tmp/$1.orders.json" || bad "$1: consume seckill.orders"
	kafka_consume seckill.events "$tmp/$1.events.json" || bad "$1: consume seckill.events"
}

# ------------------------------------------------------------------ broker + sandbox
kafka_up "$tmp" seckill.orders seckill.events || {
	cat "$tmp/kafka.log"
	bad "broker up"
	finish
	exit 1
}
ok "broker up: $KAFKA_BOOTSTRAP (pid $KAFKA_PID)"
export SK_SBX_CONTROL_ARGS="--kafka $KAFKA_BOOTSTRAP"

cfg=$tmp/export.ini
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		store = $tmp/store
		ack = durable
		ack_wait_ms = 3000

		[item.1]
		name = export sale
		total = $W1
		dedup_slots = 65536
	EOF
} >"$cfg"
sbx_start --config "$cfg"
check "control plane exports to $KAFKA_BOOTSTRAP" grep -q "kafka $KAFKA_BOOTSTRAP" "/run/$SK_SBX/control.log"

# ------------------------------------------------------------------ 1. a sale
rc=0
crowd --users 3000 --attempts 4000 --seed 1 --expect-units $W1 \
	--json "$tmp/c1.json" --orders "$tmp/o1" >"$tmp/c1.out" 2>&1 || rc=$?
cat "$tmp/c1.out"
expect_eq "wave 1: crowd checks pass" "$rc" 0
expect_eq "wave 1: $W1 winners" "$(wc -l <"$tmp/o1")" $W1
check "wave 1: LMDB drained" wait_drained
check "wave 1: export backlog reaches 0 (30 s)" wait_metric seckill_export_backlog -eq 0 30
check "wave 1: seckill_export_delivered_total >= winners" \
	wait_metric seckill_export_delivered_total -ge $W1 5
kafka_consume seckill.orders "$tmp/x1.orders.json" || bad "wave 1: consume seckill.orders"
python3 "$tmp/check.py" "$tmp/x1.orders.json" - "$tmp/o1" - 0 >"$tmp/x1.json"
cat "$tmp/x1.json"
expect_eq "wave 1: every winner's order is in seckill.orders" "$(cx "$tmp/x1.json" o_missing)" 0
expect_eq "wave 1: no other key in seckill.orders" "$(cx "$tmp/x1.json" o_extra)" 0
expect_eq "wave 1: every value v1 confirmed with the winner's user and lines" \
	"$(cx "$tmp/x1.json" o_bad):$(cx "$tmp/x1.json" bad_json)" "0:0"
expect_eq "wave 1: duplicates carry the same value" "$(cx "$tmp/x1.json" dup_mismatch)" 0

# ------------------------------------------------------------------ 2. pay a few
head -n 5 "$tmp/o1" | awk '{ print $2 }' >"$tmp/paid"
npaid=0
while read -r id; do
	ctl order pay "$id" >/dev/null && npaid=$((npaid + 1))
done <"$tmp/paid"
expect_eq "pay: seckillctl order pay x5" "$npaid" 5
check "pay: export backlog back to 0 (30 s)" wait_metric seckill_export_backlog -eq 0 30
consume_both x2
python3 "$tmp/check.py" "$tmp/x2.orders.json" "$tmp/x2.events.json" "$tmp/o1" "$tmp/paid" \
	"$(metric seckill_export_cursor)" >"$tmp/x2.json"
cat "$tmp/x2.json"
expect_eq "pay: seckill.events has paid events for exactly the 5 paid orders" \
	"$(cx "$tmp/x2.json" paid_missing):$(cx "$tmp/x2.json" paid_extra)" "0:0"
expect_eq "pay: every event value well-formed" \
	"$(cx "$tmp/x2.json" e_bad):$(cx "$tmp/x2.json" bad_json)" "0:0"
expect_eq "pay: every event of the log so far exported" "$(cx "$tmp/x2.json" seq_missing)" 0

# ------------------------------------------------------------------ 3. broker outage
check "outage: SIGUSR1 takes the brokers down" kafka_signal USR1 down "$tmp"
cursor0=$(metric seckill_export_cursor)
ctl stock add 1 $W2 --request-id 1 >/dev/null || bad "outage: stock add 1 $W2 while Kafka is down"
rc=0
crowd --users 1500 --user-base 10001 --seed 2 --expect-units $W2 \
	--json "$tmp/c2.json" --orders "$tmp/o2" >"$tmp/c2.out" 2>&1 || rc=$?
cat "$tmp/c2.out"
expect_eq "outage: wave 2 crowd checks pass" "$rc" 0
expect_eq "outage: wave 2 answered only 200 and 410 (durable acks do not wait for Kafka)" \
	"$(json_get "$tmp/c2.json" 'sorted(d["http"])')" "['200', '410']"
check "outage: export backlog >= wave-2 orders while down (10 s)" \
	wait_metric seckill_export_backlog -ge $W2 10
expect_eq "outage: the export cursor did not move while down" \
	"$(metric seckill_export_cursor)" "$cursor0"
expect_eq "outage: every wave-2 order durable in LMDB" "$(orders_in_store "$tmp/o2")" $W2
expect_eq "outage: LMDB live units == both waves" "$(item_field ledger.live)" $((W1 + W2))
check "outage: reconcile" reconcile
echo "outage: backlog $(metric seckill_export_backlog), produced $(metric seckill_export_produced_total), failed $(metric seckill_export_failed_total)"
check "outage: SIGUSR2 brings the brokers up" kafka_signal USR2 up "$tmp"
t=$SECONDS
check "outage over: export backlog drains to 0 (60 s)" wait_metric seckill_export_backlog -eq 0 60
echo "outage over: backlog 0 after $((SECONDS - t)) s; rewinds $(metric seckill_export_rewinds_total), failed $(metric seckill_export_failed_total)"
check "outage over: seckill_export_delivered_total >= both waves" \
	wait_metric seckill_export_delivered_total -ge $((W1 + W2)) 5
cat "$tmp/o1" "$tmp/o2" >"$tmp/o12"
kafka_consume seckill.orders "$tmp/x3.orders.json" || bad "outage over: consume seckill.orders"
python3 "$tmp/check.py" "$tmp/x3.orders.json" - "$tmp/o12" - 0 >"$tmp/x3.json"
cat "$tmp/x3.json"
expect_eq "outage over: every order of both waves is in seckill.orders" "$(cx "$tmp/x3.json" o_missing)" 0
expect_eq "outage over: no other key in seckill.orders" "$(cx "$tmp/x3.json" o_extra)" 0
expect_eq "outage over: values well-formed" \
	"$(cx "$tmp/x3.json" o_bad):$(cx "$tmp/x3.json" bad_json)" "0:0"
expect_eq "outage over: duplicates carry the same value" "$(cx "$tmp/x3.json" dup_mismatch)" 0
expect_eq "outage over: per key, seq non-decreasing" "$(cx "$tmp/x3.json" seq_back)" 0

# ------------------------------------------------------------------ 4. kill -9 of the control plane
ctl stock add 1 $W3 --request-id 2 >/dev/null || bad "kill: stock add 1 $W3"
# Two pays and at once the kill: their events are delivered but the cursor
# (saved at most once a second) most likely not past them.
sed -n '6,7p' "$tmp/o1" | awk '{ print $2 }' >"$tmp/paid2"
npaid=0
while read -r id; do
	ctl order pay "$id" >/dev/null && npaid=$((npaid + 1))
done <"$tmp/paid2"
expect_eq "kill: 2 more orders paid" "$npaid" 2
cat "$tmp/paid2" >>"$tmp/paid"
delivered_before=$(metric seckill_export_delivered_total)
"$SBX" control kill
check "kill: the control plane is gone" control_gone
rc=0
crowd --users 1000 --user-base 20001 --seed 3 --expect-units $W3 \
	--json "$tmp/c3.json" --orders "$tmp/o3" >"$tmp/c3.out" 2>&1 || rc=$?
cat "$tmp/c3.out"
expect_eq "kill: wave 3 (control plane down) crowd checks pass" "$rc" 0
expect_eq "kill: wave 3 winners answered 202 queued" \
	"$(json_get "$tmp/c3.json" 'd["http"].get("202", 0)')" "$(json_get "$tmp/c3.json" 'd["fresh_wins"]')"
restarted=0
for try in 1 2 3; do
	"$SBX" control start && {
		restarted=1
		break
	}
	echo "control plane restart: try $try failed"
done
expect_eq "kill: control plane restarted with --kafka" "$restarted" 1
check "kill: LMDB drained after the restart" wait_drained
expect_eq "kill: every wave-3 order durable in LMDB" "$(orders_in_store "$tmp/o3")" $W3
check "kill: export backlog drains to 0 after the restart (60 s)" \
	wait_metric seckill_export_backlog -eq 0 60
echo "after the restart: produced $(metric seckill_export_produced_total), delivered $(metric seckill_export_delivered_total) (before the kill: $delivered_before), cursor $(metric seckill_export_cursor)"
cat "$tmp/o1" "$tmp/o2" "$tmp/o3" >"$tmp/o123"
cursor=$(metric seckill_export_cursor)
consume_both x4
python3 "$tmp/check.py" "$tmp/x4.orders.json" "$tmp/x4.events.json" "$tmp/o123" "$tmp/paid" \
	"${cursor:-0}" >"$tmp/x4.json"
cat "$tmp/x4.json"
expect_eq "kill: every order of the three waves is in seckill.orders" "$(cx "$tmp/x4.json" o_missing)" 0
expect_eq "kill: no other key in seckill.orders" "$(cx "$tmp/x4.json" o_extra)" 0
expect_eq "kill: values well-formed" \
	"$(cx "$tmp/x4.json" o_bad):$(cx "$tmp/x4.json" e_bad):$(cx "$tmp/x4.json" bad_json)" "0:0:0"
expect_eq "kill: seckill.events has paid events for exactly the 7 paid orders" \
	"$(cx "$tmp/x4.json" paid_missing):$(cx "$tmp/x4.json" paid_extra)" "0:0"
expect_eq "kill: per key, seq non-decreasing in consumption order" "$(cx "$tmp/x4.json" seq_back)" 0
expect_eq "kill: duplicates carry the same value" "$(cx "$tmp/x4.json" dup_mismatch)" 0
expect_eq "kill: one key per event seq" "$(cx "$tmp/x4.json" seq_clash)" 0
expect_eq "kill: every event 1..cursor exported, none beyond" \
	"$(cx "$tmp/x4.json" seq_missing):$(cx "$tmp/x4.json" seq_over)" "0:0"
expect_eq "kill: 2 restocks exported" "$(json_get "$tmp/x4.json" 'd["e_types"].get("restocked", 0)')" 2
echo "re-exported (duplicates consumers drop): $(cx "$tmp/x4.json" o_dups) in seckill.orders, $(cx "$tmp/x4.json" e_dups) in seckill.events"
check "kill: reconcile" reconcile

# ------------------------------------------------------------------ 5. graceful stop
# SIGTERM: the exporter flushes and writes the cursor at stop, so the next
# control plane has nothing to produce again.
"$SBX" control stop
check "stop: the control plane is gone" control_gone
check "stop: control plane started again" "$SBX" control start
sleep 1
expect_eq "stop: nothing re-exported after a clean stop (produced, backlog)" \
	"$(metric seckill_export_produced_total):$(metric seckill_export_backlog)" "0:0"
expect_eq "stop: the cursor read back is the one before the stop" \
	"$(metric seckill_export_cursor)" "$cursor"

echo "export test: $((SECONDS - T0)) s"
finish
