#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench_year.sh - a year of durable buys through one dataplane lcore, in one
# run: seckill-dataplane on one lcore (the last cpu) with a status table of
# 2^10 slots per lcore (status_bits = 10), ack = durable, the control plane
# and its LMDB store (the sandbox starts seckill-control from the config's
# [store] path), and seckill-loadgen on core 0 over memif sending exactly N
# buys of item 1 over keep-alive connections. Every buy must be a win: the
# table's slots are reused once the control plane settled their order, and
# the lcore rolls to a new epoch of order ids after 2^23 sequences, without
# a restart (docs/stock.md, "The status table is a ring").
#
#   scripts/bench_year.sh [--buys N] [--max-seconds S] [--json FILE]
#                         [--users U] [--conns C] [--depth D] [--build DIR]
#
#   --buys N         buy requests the loadgen sends (its --requests budget;
#                    default 10000000)
#   --max-seconds S  bound on the load phase (default 900): a run that could
#                    not send N buys in S seconds fails its checks
#   --users U        distinct X-User-Id users (default ceil(N / 1000)); they
#                    buy in turn, and the item's per_user_limit is what each
#                    one buys (at most 1,000: one page of 'seckillctl orders')
#   --conns C, --depth D  keep-alive connections and requests pipelined on
#                    each (default 512 x 1: 512 in flight, half the 1,024
#                    status slots, so that the control plane is never a whole
#                    table behind and no winner is answered 429 busy). With
#                    ack = durable a connection's next request waits for its
#                    parked winner's answer, so only connections add buys to
#                    a group commit: 32 x 16 sells about a third as fast
#   --json FILE      the figures and every check's verdict as one JSON object
#   --build DIR      the build holding dataplane/, loadgen/, control/,
#                    seckillctl/ (default build/rel, build/release, build)
#
# The store runs with [store] nosync = on: no fsync per group commit (not
# power-loss safe). A benchmark measures the ring and the drain, not the
# disk; a real sale keeps nosync off. Its map starts at 4 GiB, room for
# 10M orders, so that the run measures the ring, not the map's online grow
# (tests/integration/durable.sh covers that).
#
# Checks, one line each ("ok" or "FAIL"), after the load:
#   answers    every buy answered 200 (202 and the others are counted apart)
#   sent       the loadgen sent and got answers to exactly N buys
#   committed  seckill_orders_committed_total and seckill_store_order_lines
#              == N (seckillctl metrics)
#   ledger     the item's LMDB live units == N (seckillctl --json item 1)
#   reconcile  seckillctl reconcile exits 0
#   orders     the first, middle and last user's orders are all in the store
#              (seckillctl orders), as many as each bought, and the first,
#              middle and last of each is shown by seckillctl order show
#   epochs     the sampled order ids span floor(N / 2^23) + 1 epochs (the
#              lcore rolled without a restart)
#   pid        the dataplane's pid is the one it started with (no restart)
# Exit 0 only if all hold; 1 otherwise.
#
# Needs root (network namespaces, hugepages), python3, taskset, timeout.
# Every process is stopped by its PID; files go to a temp dir (BENCH_KEEP=1
# keeps it). Run it alone on the machine: it takes minutes at 10M.
set -euo pipefail

BUYS=10000000 MAXS=900 JSON_OUT="" USERS="" CONNS=512 DEPTH=1 BUILD=""
while [ $# -gt 0 ]; do
	case $1 in
	--buys) BUYS=${2:?--buys N}; shift 2 ;;
	--max-seconds) MAXS=${2:?--max-seconds S}; shift 2 ;;
	--users) USERS=${2:?--users U}; shift 2 ;;
	--conns) CONNS=${2:?--conns C}; shift 2 ;;
	--depth) DEPTH=${2:?--depth D}; shift 2 ;;
	--json) JSON_OUT=${2:?--json FILE}; shift 2 ;;
	--build) BUILD=${2:?--build DIR}; shift 2 ;;
	-h | --help)
		awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
		exit 0
		;;
	*) echo "bench_year: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in BUYS MAXS CONNS DEPTH ${USERS:+USERS}; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench_year: ${v,,}: '${!v}' is not a count" >&2; exit 2; }
done
[ -n "$USERS" ] || USERS=$(((BUYS + 999) / 1000))
LIMIT=$(((BUYS + USERS - 1) / USERS)) # each user's buys: the per-user limit
if [ "$LIMIT" -gt 1000 ] || [ "$USERS" -gt "$BUYS" ]; then
	echo "bench_year: --users $USERS: each user must buy 1..1000 of the $BUYS" >&2
	exit 2
fi

BENCH_NAME=year
# shellcheck source=lib/bench_lib.sh
. "$(dirname "$0")/lib/bench_lib.sh"
export SK_SBX_ADMIN_PORT=0 # the admin API on the sandbox's unix socket only
SEQ=$((1 << 23))           # sequences of one epoch (stock/sk_order.h)

# jv FILE EXPR - EXPR of the JSON object d read from FILE (python3).
jv() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# ctl FILE ARGS... - seckillctl ARGS against the sandbox, its output in FILE;
# returns its status.
ctl() {
	local f=$1
	shift
	"$SBX" ctl "$@" >"$f" 2>&1
}
# metric NAME - a value of FILE $RUN/metrics (NAME as printed, labels too).
metric() {
	awk -v n="$1" '$1 == n { print $2; exit }' "$RUN/metrics"
}

FAILS=0
: >"$RUN/checks"
# verdict NAME OK DETAIL - one check's line, and its entry for --json.
verdict() {
	local word=ok
	[ "$2" = 1 ] || { word=FAIL; FAILS=$((FAILS + 1)); }
	printf 'bench_year: %-9s %-4s %s\n' "$1" "$word" "$3"
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RUN/checks"
}
# is A B - 1 if A == B (as strings), else 0.
is() {
	[ "$1" = "$2" ] && echo 1 || echo 0
}

# The item's dedup slots (one per user): a power of two >= 2 x the users.
DEDUP=1024
while [ "$DEDUP" -lt $((2 * USERS)) ]; do DEDUP=$((DEDUP * 2)); done
cfg=$tmp/year.ini
{
	base_config seckill dedup_slots
	cat <<-EOF

		[seckill]
		auth = off
		ack = durable
		ack_wait_ms = 5000
		status_bits = 10
		dedup_slots = $DEDUP

		[store]
		path = $tmp/store
		# no fsync per group commit: a benchmark of the ring, not the disk
		nosync = on
		map_mb = 4096

		[item.1]
		name = a year of sales
		total = $BUYS
		per_user_limit = $LIMIT
		dedup_slots = $DEDUP
	EOF
} >"$cfg"

log "$BUYS buys: $USERS users x $LIMIT, $CONNS conns x depth $DEPTH, at most ${MAXS}s"
sbx_start "$cfg" --control
DP_PID0=$DP_PID
START=$(date -u +%FT%TZ)
mkdir -p "$RUN/load"
lg_start "$RUN/load" $((MAXS + 120)) --mix buy=1 --item 1 --user-base 1 --users "$USERS" \
	--requests "$BUYS" --duration "$MAXS" --conns "$CONNS" --depth "$DEPTH" --drain-ms 10000
t0=$SECONDS
lg_rc=0
lg_wait || lg_rc=$?
DUR=$((SECONDS - t0))
log "loadgen exit $lg_rc after ${DUR}s: $(sed -n 's/^  requests: //p' "$RUN/load/log")"
snap "$RUN/tele.json"
L=$RUN/load/out.json
[ -s "$L" ] || die "the loadgen printed no JSON: $(tail -5 "$RUN/load/log")"

# ------------------------------------------------------------------ checks
n200=$(jv "$L" 'd["status"].get("200", 0)')
n202=$(jv "$L" 'd["status"].get("202", 0)')
others=$(jv "$L" '" ".join("%s=%s" % kv for kv in sorted(d["status"].items()) if kv[0] not in ("200", "202")) or "none"')
verdict answers "$(is "$n200" "$BUYS")" "200: $n200 of $BUYS, 202: $n202, others: $others"
sent=$(jv "$L" 'd["sent"]')
answered=$(jv "$L" 'd["answered"]')
errors=$(jv "$L" 'd["errors"]["total"]')
verdict sent "$(is "$sent/$answered/$errors/$lg_rc" "$BUYS/$BUYS/0/0")" \
	"sent $sent, answered $answered, errors $errors, loadgen exit $lg_rc"

ctl "$RUN/metrics" metrics || true
committed=$(metric seckill_orders_committed_total)
lines=$(metric seckill_store_order_lines)
verdict committed "$(is "$committed/$lines" "$BUYS/$BUYS")" \
	"seckill_orders_committed_total $committed, seckill_store_order_lines $lines"

ctl "$RUN/item.json" --json item 1 || true
live=$(jv "$RUN/item.json" 'd["ledger"]["live"]' 2>/dev/null || echo "?")
verdict ledger "$(is "$live" "$BUYS")" "item 1 ledger live units $live"

rec_rc=0
ctl "$RUN/reconcile" reconcile || rec_rc=$?
verdict reconcile "$(is "$rec_rc" 0)" "seckillctl reconcile exit $rec_rc: $(tail -1 "$RUN/reconcile")"

# The loadgen's users buy in turn: user 1 + j (j from 0) buys floor(N/U)
# times, once more if j < N mod U, over the whole run.
bought() {
	echo $((BUYS / USERS + ($1 < BUYS % USERS ? 1 : 0)))
}
ok=1 detail=""
: >"$RUN/ids"
for j in 0 $((USERS / 2)) $((USERS - 1)); do
	u=$((j + 1))
	if ! ctl "$RUN/orders-$u.json" --json orders --item 1 --user "$u" --limit 1000; then
		ok=0 detail+="user $u: $(head -c 200 "$RUN/orders-$u.json"); "
		continue
	fi
	jv "$RUN/orders-$u.json" '"\n".join(o["order"] for o in d["orders"])' >"$RUN/ids-$u"
	cat "$RUN/ids-$u" >>"$RUN/ids"
	got=$(wc -l <"$RUN/ids-$u")
	[ "$got" = "$(bought "$j")" ] || ok=0
	shown=0
	mapfile -t pick < <(sed -n "1p;$(((got + 1) / 2))p;\$p" "$RUN/ids-$u")
	for id in "${pick[@]}"; do
		ctl "$RUN/show" --json order show "$id" &&
			[ "$(jv "$RUN/show" 'd["status"]')" = confirmed ] && shown=$((shown + 1))
	done
	[ "$shown" = 3 ] || ok=0
	detail+="user $u: $got of $(bought "$j") in the store, $shown of 3 shown confirmed; "
done
verdict orders "$ok" "${detail%; }"

# Epoch = the id's top 30 bits; the first epoch of a run counts sequences
# from 1, so buy k (from 1) is in epoch k / 2^23 of the run.
want_epochs=$((BUYS / SEQ + 1))
epochs=$(python3 -c 'import sys; print(len({int(l) >> 34 for l in open(sys.argv[1]) if l.strip()}))' "$RUN/ids")
verdict epochs "$(is "$epochs" "$want_epochs")" \
	"the sampled ids span $epochs epochs (want $want_epochs: $((BUYS / SEQ)) rolls); $((BUYS >> 10)) turns of the 1,024-slot ring; seckill_settled_seq{lcore=\"0\"} $(metric 'seckill_settled_seq{lcore="0"}')"

DP_PID=$(sed -n 's/^pid=//p' "/run/$SK_SBX/env")
alive=0
kill -0 "$DP_PID0" 2>/dev/null && alive=1
verdict pid "$(is "$DP_PID/$alive" "$DP_PID0/1")" "dataplane pid $DP_PID0 at the start, $DP_PID now, alive $alive"

rps=$(jv "$L" 'round(d["rps"])')
p99=$(jv "$L" 'd["latency_us"]["p99"]')
log "$BUYS buys in ${DUR}s: $rps buys/s, p99 ${p99} us, $FAILS check(s) failed"
if [ -n "$JSON_OUT" ]; then
	python3 - "$RUN/checks" "$L" "$RUN/tele.json" "$JSON_OUT" <<-EOF
		import json, sys
		checks = {}
		for line in open(sys.argv[1]):
		    name, ok, detail = line.rstrip("\n").split("\t", 2)
		    checks[name] = {"ok": ok == "1", "detail": detail}
		lg = json.load(open(sys.argv[2]))
		out = {
		    "machine": "$(nproc) cpus ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))",
		    "date": "$START", "buys": $BUYS, "users": $USERS, "per_user_limit": $LIMIT,
		    "conns": $CONNS, "depth": $DEPTH, "status_bits": 10, "seconds": $DUR,
		    "loadgen": {k: lg[k] for k in ("sent", "answered", "rps", "status", "wins", "latency_us", "errors")},
		    "dataplane": json.load(open(sys.argv[3])),
		    "checks": checks, "ok": all(c["ok"] for c in checks.values()),
		}
		json.dump(out, open(sys.argv[4], "w"), indent=1)
	EOF
fi
sbx_stop
[ "$FAILS" = 0 ]
