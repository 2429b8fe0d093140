# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# demo_cluster.sh - the demo's second act (docs/cluster.md): two appliances
# sell one item through one Redis pool, and the sold-out broadcast.
#
# A redis-server of the demo on a unix socket in the demo's folder (no TCP
# port at all); two sandboxes, seckill-demo-a and seckill-demo-b (each a
# dataplane in namespaces of its own with its own DPDK file prefix, and a
# control plane that is cluster member a or b, its admin API on a free
# port of 127.0.0.1); one cluster activity of DC_UNITS units, added on both
# with the same definition. A redis-cli SUBSCRIBE seckill:soldout (bounded
# by timeout) listens while waves of crowds (disjoint users, both
# appliances at once) buy until the item is sold out everywhere. Then it
# prints the winners at a and at b, LMDB of both, seckillctl cluster show,
# the broadcast received, a fresh buyer answered 410 on both, and reconcile
# on both.
#
# The caller sets: work (the demo's scratch folder, removed by the caller),
# BIN (the dataplane), CROWD (seckill-crowd), TOKEN (seckill-token), and
# runs from the repository's root. dc_act runs the act and returns non-zero
# if a check failed; dc_cleanup, called from the caller's EXIT trap, stops
# every process the act started by its PID and takes both sandboxes down
# (processes, namespaces, hugepage files).
#
# Tunables: SK_DEMO_CLUSTER_UNITS (default 1000), SK_DEMO_CLUSTER_WAVE
# (users per appliance and wave, default 1000), SK_DEMO_CLUSTER_WAVES (at
# most, default 15), SK_DEMO_START_IN (seconds to the start, default 6).
# shellcheck disable=SC2154 # work, BIN, CROWD, TOKEN: the caller's

DC_ITEM=2001
DC_UNITS=${SK_DEMO_CLUSTER_UNITS:-1000}
DC_WAVE=${SK_DEMO_CLUSTER_WAVE:-1000}
DC_WAVES=${SK_DEMO_CLUSTER_WAVES:-15}
DC_START_IN=${SK_DEMO_START_IN:-6}
DC_REDIS_PID=
DC_SUB_PID=
DC_CROWD_PIDS=()
DC_UP=()
declare -A DC_PORT=() DC_SERVER=()

# dc_sbx M ARGS... - scripts/sandbox.sh of appliance M (a or b).
dc_sbx() {
	local m=$1
	shift
	SK_SBX=seckill-demo-$m SK_SBX_ADMIN_PORT=${DC_PORT[$m]:-0} SK_SBX_PAGES=256 \
		scripts/sandbox.sh "$@"
}

# dc_stop PID - TERM to PID (a child of this shell), SIGKILL after 10 s; reaps it.
dc_stop() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# dc_cleanup - stop the crowds, the subscriber, both appliances, then Redis.
dc_cleanup() {
	local p m
	for p in "${DC_CROWD_PIDS[@]}"; do
		dc_stop "$p"
	done
	DC_CROWD_PIDS=()
	dc_stop "$DC_SUB_PID"
	DC_SUB_PID=
	for m in "${DC_UP[@]}"; do
		dc_sbx "$m" down >/dev/null 2>&1 || true
	done
	DC_UP=()
	dc_stop "$DC_REDIS_PID"
	DC_REDIS_PID=
}

# dc_free_ports N - N free TCP ports of 127.0.0.1, one a line (held at
# once while they are picked, so they differ).
dc_free_ports() {
	python3 - "$1" <<-'EOF'
		import socket, sys
		socks = [socket.socket() for _ in range(int(sys.argv[1]))]
		for s in socks:
		    s.bind(("127.0.0.1", 0))
		for s in socks:
		    print(s.getsockname()[1])
	EOF
}

# dc_json FILE PATH - a field of a JSON file ("-": stdin), PATH dotted
# (http.503); 0 when it is missing.
dc_json() {
	python3 -c '
import json, sys
v = json.load(sys.stdin if sys.argv[1] == "-" else open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v.get(k, 0) if isinstance(v, dict) else 0
print(str(v).lower() if isinstance(v, bool) else v)' "$1" "$2"
}

# dc_num FILE KEY - the first "KEY":N of a crowd's JSON summary (its
# top-level winners, its http counts; 0 if none). No python3 between
# waves: on a loaded box its start would leave the members idle.
dc_num() {
	local v
	v=$(grep -o "\"$2\":[0-9]*" "$1" 2>/dev/null | head -n 1) || true
	v=${v#*:}
	echo "${v:-0}"
}

# dc_state M - the dataplane's state of the item on appliance M.
dc_state() {
	dc_sbx "$1" exec curl -s -m 5 "http://${DC_SERVER[$1]}/v1/items/$DC_ITEM" |
		sed -n 's/.*"state":"\([a-z_]*\)".*/\1/p'
}

dc_both_sold_out() {
	[ "$(dc_state a)" = sold_out ] && [ "$(dc_state b)" = sold_out ]
}

# dc_live M - the orders of the item in member M's LMDB.
dc_live() {
	dc_sbx "$1" ctl --json item "$DC_ITEM" | dc_json - ledger.live
}

# dc_view M PATH - a field of member M's cluster view of the item (with the
# admin token sandbox.sh wrote, as a curl header file).
dc_view() {
	curl -sf -m 5 -H @"/run/seckill-demo-$1/admin.header" \
		"http://127.0.0.1:${DC_PORT[$1]}/v1/cluster/items/$DC_ITEM" | dc_json - "$2"
}

# dc_metric M NAME - a value of member M's /metrics (NAME with its labels).
dc_metric() {
	curl -sf -m 5 "http://127.0.0.1:${DC_PORT[$1]}/metrics" | awk -v n="$2" '$1 == n { print $2; exit }'
}

# dc_leases M - "N granted, E found the pool empty" of member M's leases.
dc_leases() {
	echo "$(dc_metric "$1" 'seckill_cluster_leases_total{result="granted"}') granted," \
		"$(dc_metric "$1" 'seckill_cluster_leases_total{result="empty"}') found the pool empty"
}

# dc_preheat START - "A B FREE": the units a and b hold and the pool's free
# units, read before the unix time START only (preheat leases, not the
# sale's), until both hold some (every 0.2 s); "- - -" if none was read. One process: on a loaded
# box a python3 start costs more than a poll.
dc_preheat() {
	python3 - "$1" "${DC_PORT[a]}" "${DC_PORT[b]}" "$DC_ITEM" <<-'EOF'
		import json, sys, time, urllib.request
		start, pa, pb, item = (int(x) for x in sys.argv[1:])
		direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
		def token(m):
		    with open(f"/run/seckill-demo-{m}/admin.token", encoding="ascii") as f:
		        return f.read().strip()
		auth = {pa: token("a"), pb: token("b")}
		def view(port):
		    url = f"http://127.0.0.1:{port}/v1/cluster/items/{item}"
		    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + auth[port]})
		    with direct.open(req, timeout=2) as r:
		        return json.load(r)
		last = None
		while time.time() < start:
		    try:
		        va, vb = view(pa), view(pb)
		    except OSError:
		        va = vb = None
		    if time.time() >= start:
		        break
		    if va is not None and vb is not None:
		        last = (va["held"], vb["held"], va["pool"]["free"])
		        if last[0] > 0 and last[1] > 0:
		            break
		    time.sleep(0.2)
		print(*(last or ("-", "-", "-")))
	EOF
}

# dc_wait SECONDS CMD... - poll CMD every 0.2 s until it succeeds.
dc_wait() {
	local secs=$1
	shift
	for _ in $(seq 1 $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

dc_redis_start() {
	mkdir -p "$work/redis"
	redis-server --port 0 --unixsocket "$work/redis.sock" --unixsocketperm 700 \
		--dir "$work/redis" --appendonly no --save '' --daemonize no \
		</dev/null >"$work/redis.log" 2>&1 &
	DC_REDIS_PID=$!
	for _ in $(seq 1 100); do
		[ "$(redis-cli -s "$work/redis.sock" ping 2>/dev/null)" = PONG ] && return 0
		kill -0 "$DC_REDIS_PID" 2>/dev/null || break
		sleep 0.1
	done
	sk_die "redis-server did not answer: $(tail -n 5 "$work/redis.log")"
}

# dc_up M - appliance M: its sandbox, its control plane a cluster member.
dc_up() {
	local m=$1 out
	{
		cat config/sandbox.ini
		cat <<-EOF

			[seckill]
			auth = on
			secret_file = $work/secret
			store = $work/store-$m
			ack = durable
			ack_wait_ms = 3000

			[cluster]
			member_id = $([ "$m" = a ] && echo 1 || echo 2)
		EOF
	} >"$work/cluster-$m.ini"
	DC_UP+=("$m")
	out=$(SK_SBX_CONTROL_ARGS="--redis unix:$work/redis.sock --cluster-member $m --cluster-members a,b" \
		dc_sbx "$m" up --config "$work/cluster-$m.ini" --bin "$BIN" --lcores 1) ||
		sk_die "appliance $m did not come up"
	DC_SERVER[$m]=$(sed -n 's/.*server=\([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "${DC_SERVER[$m]}" ] || sk_die "appliance $m did not report its address: $out"
}

# dc_crowd M WAVE - DC_WAVE fresh users buy once on appliance M, in the
# background (a's users from 10,000,001, b's from 20,000,001: disjoint).
dc_crowd() {
	local m=$1 w=$2 base=10000001
	[ "$m" = a ] || base=20000001
	base=$((base + (w - 1) * DC_WAVE))
	SK_SBX=seckill-demo-$m scripts/sandbox.sh exec timeout 60 "$CROWD" \
		--server "${DC_SERVER[$m]}" --item "$DC_ITEM" --users "$DC_WAVE" --user-base "$base" \
		--retriers 0 --conns 4 --timeout-ms 8000 --max-seconds 40 --wait-start --cpu 0 \
		--secret-file "$work/secret" --json "$work/dc-$m-$w.json" \
		>"$work/dc-$m-$w.out" 2>&1 &
	DC_CROWD_PIDS+=($!)
}

# dc_buy M - one buy of a fresh user (a valid token) on appliance M:
# "<body> (HTTP <code>)".
dc_buy() {
	local tok sub=30000001
	[ "$1" = a ] || sub=30000002
	tok=$("$TOKEN" --secret-file "$work/secret" --sub "$sub" --item "$DC_ITEM") || return 1
	dc_sbx "$1" exec curl -s -m 5 -w ' (HTTP %{http_code})' -X POST \
		-H "Authorization: Bearer $tok" "http://${DC_SERVER[$1]}/v1/seckill/$DC_ITEM"
}

# dc_act - the whole act; prints its summary, returns 1 if a check failed.
dc_act() {
	local m w p start won_a=0 won_b=0 waves=0 r503=0 bad=()
	local -a ports

	sk_log "act 2: two appliances, one Redis pool, $DC_UNITS units of item $DC_ITEM"
	dc_redis_start
	mapfile -t ports < <(dc_free_ports 2)
	DC_PORT[a]=${ports[0]}
	DC_PORT[b]=${ports[1]}
	sk_log "redis-server $(redis-server --version | awk '{ print $3 }') on $work/redis.sock (pid $DC_REDIS_PID)"
	for m in a b; do
		sk_log "appliance $m: sandbox seckill-demo-$m, member $m of a,b, admin 127.0.0.1:${DC_PORT[$m]}"
		dc_up "$m"
	done

	# The listener of the broadcast, as any upstream tier would subscribe.
	timeout 300 redis-cli -s "$work/redis.sock" SUBSCRIBE seckill:soldout \
		</dev/null >"$work/soldout.txt" 2>&1 &
	DC_SUB_PID=$!
	dc_wait 10 grep -qx subscribe "$work/soldout.txt" ||
		sk_die "redis-cli SUBSCRIBE did not subscribe: $(cat "$work/soldout.txt")"
	sk_log "redis-cli SUBSCRIBE seckill:soldout listens (pid $DC_SUB_PID, at most 300 s)"

	start=$(($(date +%s) + DC_START_IN))
	sk_log "the operator adds the cluster sale on both: seckillctl activity add $DC_ITEM --total $DC_UNITS --cluster --start $start"
	for m in a b; do
		p=$(dc_sbx "$m" ctl activity add "$DC_ITEM" --total "$DC_UNITS" --cluster \
			--price 99900 --limit 1 --name "demo phone (cluster)" --start "$start" \
			--end $((start + 600)) 2>&1) || sk_die "activity add on $m: $p"
		echo "$m: $(head -n 1 <<<"$p")"
	done
	# The first wave waits at the door for the start (--wait-start), as a
	# flash-sale crowd does; meanwhile the members lease at preheat.
	sk_log "crowds on both at once, $DC_WAVE fresh users each per wave, until sold out everywhere"
	dc_crowd a 1
	dc_crowd b 1
	local pre ha hb hfree
	pre=$(dc_preheat "$start") || pre="- - -"
	read -r ha hb hfree <<<"$pre"
	if [ "$ha" = - ]; then
		sk_log "before the open (preheat leases): not read in time (a busy machine)"
	else
		sk_log "before the open (preheat leases): a holds $ha, b holds $hb, the pool has $hfree free"
	fi
	for w in $(seq 1 "$DC_WAVES"); do
		if [ "$w" -gt 1 ]; then
			dc_crowd a "$w"
			dc_crowd b "$w"
		fi
		for p in "${DC_CROWD_PIDS[@]}"; do
			wait "$p" || true
		done
		DC_CROWD_PIDS=()
		waves=$w
		local wa wb ra rb
		wa=$(dc_num "$work/dc-a-$w.json" winners)
		wb=$(dc_num "$work/dc-b-$w.json" winners)
		ra=$(dc_num "$work/dc-a-$w.json" 503)
		rb=$(dc_num "$work/dc-b-$w.json" 503)
		won_a=$((won_a + wa))
		won_b=$((won_b + wb))
		r503=$((r503 + ra + rb))
		sk_log "wave $w: a won $wa, b won $wb (so far $((won_a + won_b)) of $DC_UNITS); states: a $(dc_state a), b $(dc_state b)"
		[ $((won_a + won_b)) -lt "$DC_UNITS" ] || break
		# Sold out everywhere with fewer winners seen: an answer was lost
		# (LMDB has the count); more waves would find nothing.
		! dc_both_sold_out 2>/dev/null || break
	done
	dc_wait 15 dc_both_sold_out || true
	# The broadcast reached the listener too (bounded), then it is stopped.
	dc_wait 10 grep -qx message "$work/soldout.txt" || true
	dc_stop "$DC_SUB_PID"
	DC_SUB_PID=

	local live_a live_b buy_a buy_b rec_a rec_b rc_a=0 rc_b=0 show msgs
	for _ in $(seq 1 50); do
		live_a=$(dc_live a) || live_a=0
		live_b=$(dc_live b) || live_b=0
		[ $((live_a + live_b)) -ge $((won_a + won_b)) ] && break
		sleep 0.1
	done
	buy_a=$(dc_buy a) || true
	buy_b=$(dc_buy b) || true
	show=$(dc_sbx a ctl cluster show "$DC_ITEM" 2>&1) || true
	rec_a=$(dc_sbx a ctl reconcile 2>&1) || rc_a=$?
	rec_b=$(dc_sbx b ctl reconcile 2>&1) || rc_b=$?
	msgs=$(awk 'prev2 == "message" { print } { prev2 = prev1; prev1 = $0 }' "$work/soldout.txt")

	[ $((won_a + won_b)) = "$DC_UNITS" ] || bad+=("winners $((won_a + won_b)) != $DC_UNITS")
	[ $((live_a + live_b)) = "$DC_UNITS" ] || bad+=("LMDB $((live_a + live_b)) != $DC_UNITS")
	[ "$(dc_view a pool.free)" = 0 ] || bad+=("the pool is not empty")
	[ "$(dc_view a checks.pool_sum)" = true ] || bad+=("total != free + leases")
	grep -q "\"item\":$DC_ITEM,\"sold_out\":true" <<<"$msgs" || bad+=("no sold-out broadcast received")
	[[ $buy_a == *'(HTTP 410)' ]] || bad+=("a answered $buy_a")
	[[ $buy_b == *'(HTTP 410)' ]] || bad+=("b answered $buy_b")
	[ "$rc_a" = 0 ] || bad+=("reconcile on a exit $rc_a")
	[ "$rc_b" = 0 ] || bad+=("reconcile on b exit $rc_b")

	echo
	echo "=========== act 2: two appliances, one Redis pool ==========="
	echo "item $DC_ITEM: $DC_UNITS units in one Redis pool; crowds on both at once, $waves wave(s) of $DC_WAVE fresh users each"
	echo "winners at a: $won_a, at b: $won_b, total: $((won_a + won_b)) (== $DC_UNITS: $([ $((won_a + won_b)) = "$DC_UNITS" ] && echo yes || echo NO))"
	echo "durable in LMDB: a $live_a + b $live_b = $((live_a + live_b)); 503 restocking answers while units moved: $r503"
	echo "leases from the pool (the members' /metrics): a $(dc_leases a); b $(dc_leases b)"
	echo "seckillctl cluster show $DC_ITEM (on a):"
	# shellcheck disable=SC2001 # indents every line: no single ${var//}
	sed 's/^/  /' <<<"$show"
	echo "sold-out broadcast received by redis-cli SUBSCRIBE seckill:soldout:"
	# shellcheck disable=SC2001
	sed 's/^/  /' <<<"${msgs:-(none)}"
	echo "a fresh buyer after it: a $buy_a; b $buy_b"
	for m in a b; do
		echo "seckillctl reconcile on $m:"
		if [ "$m" = a ]; then p=$rec_a; else p=$rec_b; fi
		# shellcheck disable=SC2001
		sed 's/^/  /' <<<"$p"
	done
	if [ ${#bad[@]} = 0 ]; then
		echo "checks: all passed"
	else
		printf 'checks: FAILED: %s\n' "${bad[@]}"
	fi
	echo "============================================================="
	[ ${#bad[@]} = 0 ]
}
