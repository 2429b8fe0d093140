# SPDX-License-Identifier: BSD-3-Clause
# cluster.sh - the cluster fixture: two appliances (members "a" and "b",
# one sandbox each) on one redis-server of the caller's own (a unix socket
# in $tmp): what tests/integration/cluster.sh and bench/cluster/bench_flip.sh
# share. Source it after lib.sh:
#   # shellcheck source=lib/cluster.sh
#   . "$IT_DIR/lib/cluster.sh"
# It sources lib/redis.sh and sets tmp (a fresh directory), the sandbox
# names and admin ports, RSOCK (redis_start starts the server there) and
# IDLE_MS (the members' idle give-back time, default 3000 ms: set IDLE_MS
# before sourcing to change it).
#
# shellcheck shell=bash disable=SC2034 # the variables are the caller's
# shellcheck source=redis.sh
. "$(dirname "${BASH_SOURCE[0]}")/redis.sh"

tmp=$(mktemp -d)
NAME_A=$SK_SBX-a
NAME_B=$SK_SBX-b
PORT_A=$((20000 + $$ % 1000))
PORT_B=$((21000 + $$ % 1000))
RSOCK=$tmp/redis.sock
IDLE_MS=${IDLE_MS:-3000}
REDIS_PID=
CROWD_PIDS=()

# ---------------------------------------------------------------- helpers

# sbx NAME ARGS... - sandbox.sh of appliance NAME (a or b).
sbx() {
	local n=$1
	shift
	if [ "$n" = a ]; then
		SK_SBX=$NAME_A SK_SBX_ADMIN_PORT=$PORT_A "$SBX" "$@"
	else
		SK_SBX=$NAME_B SK_SBX_ADMIN_PORT=$PORT_B "$SBX" "$@"
	fi
}

member_args() {
	echo "--redis unix:$RSOCK --cluster-member $1 --cluster-members a,b --cluster-idle-ms $IDLE_MS"
}

appliance_up() {
	local n=$1 cfg=$tmp/$1.ini
	{
		cat "$REPO/config/sandbox.ini"
		cat <<-EOF

			[seckill]
			auth = off
			store = $tmp/store-$n
			ack = durable
			ack_wait_ms = 3000

			[cluster]
			member_id = $([ "$n" = a ] && echo 1 || echo 2)
		EOF
	} >"$cfg"
	SK_SBX_CONTROL_ARGS=$(member_args "$n") sbx "$n" up --config "$cfg" >"$tmp/up-$n.out" || {
		cat "$tmp/up-$n.out"
		return 1
	}
	sed -n 's/.*server=\([0-9.]*\).*/\1/p' "$tmp/up-$n.out" >"$tmp/server-$n"
}

all_down() {
	local p n
	for p in "${CROWD_PIDS[@]}"; do
		kill_tree TERM "$p"
	done
	if [ "$FAILS" != 0 ]; then
		for n in $NAME_A $NAME_B; do
			echo "--- the cluster lines of $n's control plane"
			grep -aE 'event=(cluster|lease|giveback|sync)' "/run/$n/control.log" | tail -60 || true
		done
	fi
	sbx a down >/dev/null 2>&1 || true
	sbx b down >/dev/null 2>&1 || true
	redis_kill
}

# ctl N ARGS... - seckillctl against appliance N; output in $tmp/ctl.out,
# exit code in CTL_RC.
ctl() {
	local n=$1
	shift
	CTL_RC=0
	sbx "$n" ctl "$@" >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
}

# ctl_unchanged - the last ctl exited 0 and printed "unchanged".
ctl_unchanged() { [ "$CTL_RC" = 0 ] && grep -q "unchanged" "$tmp/ctl.out"; }

# cluster N ITEM PATH - a field of member N's cluster view of ITEM.
cluster() {
	local port=$PORT_A name=$NAME_A
	[ "$1" = a ] || { port=$PORT_B; name=$NAME_B; }
	IT_ADMIN_SBX=$name admin_curl -sf "http://127.0.0.1:$port/v1/cluster/items/$2" | itpy jsonq field - "$3"
}

# field N ITEM PATH - a field of member N's admin item ITEM.
field() {
	local port=$PORT_A name=$NAME_A
	[ "$1" = a ] || { port=$PORT_B; name=$NAME_B; }
	IT_ADMIN_SBX=$name admin_curl -sf "http://127.0.0.1:$port/v1/items/$2" | itpy jsonq field - "$3"
}

# state N ITEM - the dataplane's state of ITEM on appliance N.
state() {
	SK_SBX=$([ "$1" = a ] && echo "$NAME_A" || echo "$NAME_B") "$SBX" exec \
		curl -s -m 5 "http://$(cat "$tmp/server-$1")/v1/items/$2" | itpy jsonq field - state
}

# crowd N ITEM BASE USERS NAME - USERS users (from BASE) buy ITEM once on
# appliance N, in the background (summary $tmp/NAME.json).
crowd() {
	local n=$1 item=$2 base=$3 users=$4 name=$5
	shift 5
	sbx "$n" exec timeout 60 "$SK_CROWD" --server "$(cat "$tmp/server-$n")" --item "$item" \
		--users "$users" --user-base "$base" --retriers 0 --conns 8 --timeout-ms 8000 \
		--max-seconds 40 --json "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1 &
	CROWD_PIDS+=($!)
}

crowds_wait() {
	local p
	for p in "${CROWD_PIDS[@]}"; do
		wait "$p" || true
	done
	CROWD_PIDS=()
}

winners() { itpy jsonq field "$tmp/$1.json" winners; }

# redis_calls N - member N's seckill_cluster_redis_calls_total (empty if
# its /metrics lacks it).
redis_calls() {
	local port=$PORT_A
	[ "$1" = a ] || port=$PORT_B
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics-$1" || true
	awk '$1 == "seckill_cluster_redis_calls_total" { print $2; exit }' "$tmp/metrics-$1"
}

# soldout_key ITEM - Redis's "<0|1>:<version>" of ITEM.
soldout_key() { redis-cli -s "$RSOCK" get "seckill:soldout:{$1}"; }

# live N ITEM - LMDB's live units of ITEM on member N.
live() { field "$1" "$2" ledger.live; }
