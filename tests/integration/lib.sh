# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# lib.sh - shared by the integration tests: skip rules, a private sandbox
# per test (its own namespace, tap and file prefix), assertions.
#
# Sourced by each test script. The test runs its own sandbox named
# sk-it-<test>-<pid>, so it never disturbs a developer's seckill-sbx, and
# always takes it down on exit: sbx_up installs the one EXIT trap (it_exit);
# a test hands its own cleanup to it with at_exit FN and sets no EXIT trap
# of its own (a second "trap ... EXIT" replaces the first, whichever of the
# two comes first).
set -euo pipefail

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
SBX=$REPO/scripts/sandbox.sh
# The Python helpers (JSON values, order checks, reports): see itpy. They
# import each other: no __pycache__ written into the source tree.
IT_PY=$REPO/tests/lib/python
export PYTHONDONTWRITEBYTECODE=1
TEST=$(basename "$0" .sh)
export SK_SBX=sk-it-$TEST-$$
export SK_SBX_PAGES=${SK_SBX_PAGES:-256}
FAILS=0
PASSES=0
# The admin API's bearer token on TCP: sandbox.sh writes it at "up" (see
# admin_curl). The Python helpers (tests/lib/python/admin.py) read the file
# this names; seckillctl would too ($SECKILLCTL_TOKEN_FILE), but "$SBX" ctl
# goes through the unix socket and needs none.
export SK_ADMIN_TOKEN_FILE=/run/$SK_SBX/admin.token

skip() {
	echo "SKIP: $*"
	exit 77
}

# require_env TOOL... - skip unless root, /dev/net/tun and every TOOL exist.
# shellcheck disable=SC2120 # the TOOLs are optional
require_env() {
	[ "$(id -u)" = 0 ] || skip "needs root (network namespace, hugepages)"
	[ -c /dev/net/tun ] || skip "needs /dev/net/tun"
	[ -x "${SK_DATAPLANE:-}" ] || skip "SK_DATAPLANE is not an executable (run through meson test)"
	for t in ip python3 "$@"; do
		command -v "$t" >/dev/null || skip "needs $t (see docs/operations.md for the packages)"
	done
}

ok() {
	PASSES=$((PASSES + 1))
	echo "ok   - $*"
}

bad() {
	FAILS=$((FAILS + 1))
	echo "FAIL - $*"
}

# check DESC CMD... - run CMD; ok if it succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else bad "$desc"; fi
}

# expect_eq DESC GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1 ($2)"; else bad "$1: got '$2', want '$3'"; fi
}

# expect_match DESC GOT REGEX - ok if GOT matches the bash extended REGEX.
expect_match() {
	if [[ $2 =~ $3 ]]; then ok "$1 ($2)"; else bad "$1: got '$2', want /$3/"; fi
}

# itpy MODULE ARGS... - python3 tests/lib/python/MODULE.py ARGS... (each
# module's commands are listed at its top).
itpy() {
	local m=$1
	shift
	python3 "$IT_PY/$m.py" "$@"
}

# admin_curl [CURL ARGS...] URL - curl with the admin token of sandbox
# ${IT_ADMIN_SBX:-$SK_SBX} (the header line sandbox.sh writes, read by
# curl from the file: the token is never in argv). /healthz and /metrics
# need no token; every other route of the admin API on TCP does.
admin_curl() {
	curl -H @"/run/${IT_ADMIN_SBX:-$SK_SBX}/admin.header" "$@"
}

sbx_exec() {
	"$SBX" exec "$@"
}

# pids_below PID - every process below PID (children, theirs ...), by PPID.
pids_below() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		echo "$c"
		pids_below "$c"
	done
}

# kill_tree SIG PID... - send SIG to each PID that is still a child of this
# shell (a background job not reaped yet: never a process that got the PID
# again) and to every process below it, all listed before any is signalled.
# "sbx_exec CMD &" makes $! a subshell: a signal to it alone leaves timeout
# and CMD running.
kill_tree() {
	local sig=$1 p
	local -a all=()
	shift
	for p in "$@"; do
		[ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$BASHPID" ] || continue
		# shellcheck disable=SC2207 # PIDs: digits only
		all+=("$p" $(pids_below "$p"))
	done
	[ ${#all[@]} = 0 ] || kill "-$sig" "${all[@]}" 2>/dev/null || true
}

# tele KEY [SECTION] - one number of /seckill/stats (SECTION: total or top).
tele() {
	"$SBX" telemetry | itpy jsonq tele - "$1" "${2:-total}"
}

# sbx_up ARGS... - sandbox.sh up ARGS, the exit trap installed first (a
# half-made sandbox comes down too); prints and keeps sandbox.sh's line in
# SBX_OUT ("server=... netns=..." [admin=...] [memif=... memif_addr=...]),
# sets SERVER and URL. Exits 1 if the sandbox does not come up. May be
# called again after "$SBX" down.
# shellcheck disable=SC2120 # the ARGS are optional
sbx_up() {
	IT_SBX_UP=1
	it_trap
	SBX_OUT=$("$SBX" up "$@") || {
		echo "sandbox up failed"
		exit 1
	}
	echo "$SBX_OUT"
	SERVER=$(echo "$SBX_OUT" | sed -n 's/.*server=\([0-9.]*\).*/\1/p')
	# shellcheck disable=SC2034 # for the tests that source this file
	URL=http://$SERVER
}

# sbx_start ARGS... - sandbox.sh up ARGS (again and again: the tests that
# kill and restart the appliance), SERVER set; on failure the tally is
# printed and the test exits 1. For tests with an EXIT trap of their own,
# which takes it down ("$SBX" down || rc=1; ...; exit $rc).
sbx_start() {
	local out
	out=$("$SBX" up "$@") || {
		bad "sandbox up $*"
		finish
		exit 1
	}
	SERVER=$(echo "$out" | sed -n 's/.*server=\([0-9.]*\).*/\1/p')
}

# ---------------------------------------------------------------------------
# Exit: one EXIT trap, installed by sbx_up or at_exit, whichever comes first.

IT_AT_EXIT=()
IT_SBX_UP=0

# at_exit FN - have the exit trap call FN (the test's own cleanup: stop its
# background clients by PID, remove its temporary folder ...) before it
# takes the sandbox down. Call it before or after sbx_up: as soon as the
# test has something to clean. Functions run in the order given.
at_exit() {
	IT_AT_EXIT+=("$1")
	it_trap
}

# rm_tmp - for at_exit: remove the test's temporary folder $tmp.
rm_tmp() {
	[ -z "${tmp:-}" ] || rm -rf "$tmp"
}

# it_trap - install it_exit as the EXIT trap; SIGTERM (meson's timeout) and
# SIGINT exit through it too (bash runs no EXIT trap when a signal kills it).
it_trap() {
	trap it_exit EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
}

# it_exit - the EXIT trap: the at_exit functions, then "sandbox.sh down" if
# sbx_up was called; a sanitizer report in the dataplane's log (down fails
# then) fails the test. Exits with the test's status. Errexit off first: a
# failing command here must not end the trap before the sandbox is down.
it_exit() {
	local rc=$? f
	set +e
	for f in "${IT_AT_EXIT[@]}"; do
		"$f"
	done
	if [ "$IT_SBX_UP" = 1 ] && ! "$SBX" down >/dev/null; then
		echo "FAIL - sandbox down reported a problem (see above)"
		[ "$rc" != 0 ] || rc=1
	fi
	exit "$rc"
}

# finish - print the tally; non-zero exit if anything failed.
finish() {
	echo "$PASSES passed, $FAILS failed"
	[ "$FAILS" = 0 ]
}

# ---------------------------------------------------------------------------
# Control plane helpers (sandboxes with a [seckill] store): ADMIN must hold
# the admin API's base URL (http://127.0.0.1:$SK_SBX_ADMIN_PORT). A test may
# define its own function of the same name after sourcing this file.

# json_get FILE EXPR - a value of a JSON file (python expression on d).
json_get() {
	itpy jsonq get "$1" "$2"
}

# item_field FIELD [ITEM] - a field of the control plane's item (default 1),
# dotted for nested ones: "ledger.live", "sold" ...
item_field() {
	admin_curl -sf "${ADMIN:?}/v1/items/${2:-1}" | itpy jsonq field - "$1"
}

# orders_in_store FILE - every "user order" line of FILE is confirmed or paid
# in LMDB with that user (admin API GET /v1/orders/{id}); prints the number
# checked, exit 1 otherwise.
orders_in_store() {
	itpy orders in-store "$1" "${ADMIN:?}"
}

# same_orders A B - every user of orders file A found in B has the same order
# there.
same_orders() {
	itpy orders same "$1" "$2"
}

# metric NAME - a value of the control plane's /metrics (NAME with its
# labels, as printed); empty if absent. The metrics go to a file first: a
# reader that stops early (awk exit) would SIGPIPE seckillctl under pipefail.
metric() {
	"$SBX" ctl metrics >"$tmp/metrics" 2>&1 || true
	awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/metrics"
}

# reconcile - seckillctl reconcile passes (its report printed if not).
reconcile() {
	"$SBX" ctl reconcile >"$tmp/reconcile" 2>&1 || {
		cat "$tmp/reconcile"
		return 1
	}
}

# wait_drained [ITEM] - wait (10 s at most) until LMDB's live units of ITEM
# (default 1) equal the arena's sold - returned.
wait_drained() {
	for _ in $(seq 1 100); do
		[ "$(item_field ledger.live "${1:-1}")" = "$(($(item_field sold "${1:-1}") - $(item_field returned "${1:-1}")))" ] && return 0
		sleep 0.1
	done
	return 1
}

# kill_poller_start AT SECONDS PID... - start tests/lib/python/kill_poller.py
# in the background (its PID in ppid): it SIGKILLs the PIDs, in that order,
# once the admin API shows AT units of item 1 sold (SECONDS at most).
# Returns once the poller had its first answer (10 s at most), so that the
# crowd started next is watched from its first unit. Uses $tmp.
kill_poller_start() {
	local at=$1 secs=$2
	shift 2
	rm -f "$tmp/poller.ready"
	itpy kill_poller "${ADMIN:?}" "$at" "$secs" --ready "$tmp/poller.ready" "$@" &
	ppid=$!
	for _ in $(seq 1 100); do
		[ -f "$tmp/poller.ready" ] && return 0
		kill -0 "$ppid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# order_lcores FILE - "lcore:count ..." of the order ids in the "user order"
# lines of FILE (ids are epoch30 | member5 | lcore6 | seq23, stock/sk_order.h),
# lcores in order.
order_lcores() {
	itpy orders lcores "$1"
}

# check_second_wave SEED LEFT TOTAL - after a kill round and a second crowd
# wave (summary $tmp/k2.json, orders $tmp/k2; first wave's orders $tmp/k1):
# one order per user, exactly LEFT units sold, first-wave winners kept their
# orders, LMDB holds TOTAL live units of item 1, reconcile passes.
check_second_wave() {
	local seed=$1 left=$2 total=$3
	expect_eq "kill $seed: second wave: one order per user, orders unique, no error" \
		"$(json_get "$tmp/k2.json" '[d["checks"][k] for k in ("one_order_per_user", "orders_unique", "no_errors")]')" \
		"[True, True, True]"
	expect_eq "kill $seed: second wave buys exactly the units left" \
		"$(json_get "$tmp/k2.json" 'd["fresh_wins"]')" "$left"
	check "kill $seed: a first-wave winner seen again got the same order" same_orders "$tmp/k1" "$tmp/k2"
	check "kill $seed: LMDB drained" wait_drained
	expect_eq "kill $seed: LMDB live units == total" "$(item_field ledger.live)" "$total"
	check "kill $seed: reconcile after the second wave" reconcile
}

# ---------------------------------------------------------------------------
# Kafka helpers (tests of the export): SK_KAFKA is seckill-kafka
# (tools/kafka), a mock-cluster broker on 127.0.0.1 only.

# kafka_up DIR TOPIC... - start "seckill-kafka broker" with TOPICs in the
# background (its stderr appended to DIR/kafka.log) and wait (10 s at most)
# for its ready file (SK_KAFKA_PARTITIONS partitions per topic, default 1);
# sets KAFKA_PID and KAFKA_BOOTSTRAP, exit 1 if it did
# not come up. Call it directly, not in $(...), and have the EXIT trap call
# kafka_down.
kafka_up() {
	local dir=$1 t
	local -a args=()
	shift
	for t in "$@"; do args+=(--topic "$t"); done
	rm -f "$dir/kafka.ready"
	"${SK_KAFKA:?}" broker "${args[@]}" --partitions "${SK_KAFKA_PARTITIONS:-1}" \
		--ready-file "$dir/kafka.ready" --max-seconds 1200 \
		</dev/null >/dev/null 2>>"$dir/kafka.log" &
	KAFKA_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$dir/kafka.ready" ] && break
		kill -0 "$KAFKA_PID" 2>/dev/null || break
		sleep 0.1
	done
	KAFKA_BOOTSTRAP=$(sed -n 's/^bootstrap=//p' "$dir/kafka.ready" 2>/dev/null || true)
	[ -n "$KAFKA_BOOTSTRAP" ]
}

# pay_key_file FILE - write a payments signing key file (kid "test-1", a
# random secret, mode 600): what --payments-key-file and seckill-kafka
# produce --sign-key-file read (docs/kafka.md, "Signatures").
pay_key_file() {
	(umask 077 && echo "test-1 $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$1")
}

# kafka_start TOPIC... - kafka_up in $tmp with TOPICs (if the broker does
# not come up: its log, a failure, the tally and exit 1), then have the
# control plane use it: SK_SBX_CONTROL_ARGS="--kafka BOOTSTRAP
# --payments-key-file $tmp/payments.key" (PAY_KEY: that file, for the
# producers of seckill.payments).
kafka_start() {
	kafka_up "${tmp:?}" "$@" || {
		cat "$tmp/kafka.log"
		bad "broker up"
		finish
		exit 1
	}
	ok "broker up: $KAFKA_BOOTSTRAP (pid $KAFKA_PID)"
	PAY_KEY=$tmp/payments.key
	pay_key_file "$PAY_KEY"
	export SK_SBX_CONTROL_ARGS="--kafka $KAFKA_BOOTSTRAP --payments-key-file $PAY_KEY"
}

# durable_config - print the head of a sandbox config for the tests of the
# control plane: config/sandbox.ini, auth off, the store in $tmp/store,
# ack = durable (3 s). The test appends its [item.N] sections.
durable_config() {
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		store = ${tmp:?}/store
		ack = durable
		ack_wait_ms = 3000
	EOF
}

# logs_check WRITER_LOG - every line the sandbox's dataplane and control
# plane wrote (their logs in /run/$SK_SBX) and the writer's WRITER_LOG
# (if given) is a logfmt log line (docs/logs.md: ts=, level=, prog=,
# event=) of that daemon, and each said ready; a summary is printed.
logs_check() {
	local d=/run/$SK_SBX
	check "logs: the dataplane's lines are logfmt, its ready line among them" \
		itpy logfmt_check --prog seckill-dataplane "$d/log"
	check "logs: the dataplane said ready" grep -q "level=notice prog=seckill-dataplane event=ready " "$d/log"
	check "logs: the control plane's lines are logfmt" \
		itpy logfmt_check --prog seckill-control "$d/control.log"
	check "logs: the control plane said ready" grep -q "level=notice prog=seckill-control event=ready " "$d/control.log"
	[ -n "${1:-}" ] || return 0
	check "logs: the writer's lines are logfmt" itpy logfmt_check --prog seckill-mysql-writer "$1"
	check "logs: the writer said ready" grep -q "level=notice prog=seckill-mysql-writer event=ready " "$1"
}

# kafka_down - stop the broker kafka_up started, by its PID (SIGTERM, SIGKILL
# after 5 s), and wait for it. Nothing if none.
kafka_down() {
	local pid=${KAFKA_PID:-}
	[ -n "$pid" ] || return 0
	KAFKA_PID=
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# kafka_signal SIG WORDS DIR - send SIG (USR1: brokers down, USR2: up) to the
# broker and wait (5 s at most) until DIR/kafka.log says "SIG...: brokers
# WORDS" once more than before.
kafka_signal() {
	local sig=$1 words=$2 log=$3/kafka.log n
	n=$(grep -c "SIG$sig: brokers $words" "$log" || true)
	kill "-$sig" "${KAFKA_PID:?}"
	for _ in $(seq 1 50); do
		[ "$(grep -c "SIG$sig: brokers $words" "$log" || true)" -gt "$n" ] && return 0
		sleep 0.1
	done
	return 1
}

# kafka_consume TOPIC OUT - every message of TOPIC from the beginning as the
# JSON array of "seckill-kafka consume --json" in OUT (stops after 2 s
# without a message, 60 s at most).
kafka_consume() {
	"${SK_KAFKA:?}" consume --bootstrap "${KAFKA_BOOTSTRAP:?}" --topic "$1" --from-beginning \
		--json --timeout-ms 2000 --max-seconds 60 >"$2" 2>>"${2}.err"
}

# wait_metric NAME OP VALUE SECONDS - wait until the control plane's metric
# NAME compares OP (-eq, -gt, -ge ...) to VALUE; at most SECONDS.
wait_metric() {
	local v end=$((SECONDS + $4))
	while :; do
		v=$(metric "$1")
		[ -n "$v" ] && test "$v" "$2" "$3" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# redis_start - a redis-server of the test on the unix socket $RSOCK (no
# TCP port), its files in $tmp/redis, no persistence; REDIS_PID set. Waits
# (bounded) until it answers PING. Stop it with redis_kill.
redis_start() {
	mkdir -p "$tmp/redis"
	redis-server --port 0 --unixsocket "$RSOCK" --unixsocketperm 700 --dir "$tmp/redis" \
		--appendonly no --save '' --daemonize no >>"$tmp/redis.log" 2>&1 &
	REDIS_PID=$!
	for _ in $(seq 1 100); do
		[ "$(redis-cli -s "$RSOCK" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "redis-server did not answer"
	return 1
}

# redis_kill - SIGKILL the redis-server of redis_start, and reap it.
redis_kill() {
	[ -n "${REDIS_PID:-}" ] || return 0
	kill -KILL "$REDIS_PID" 2>/dev/null || true
	wait "$REDIS_PID" 2>/dev/null || true
	REDIS_PID=
}
