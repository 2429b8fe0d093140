# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# harness.sh - the harness every integration test runs in (sourced through
# tests/integration/lib.sh): skip rules, a private sandbox per test (its own
# namespace, tap and file prefix), the one EXIT trap, assertions and the
# tally, bounded waits. The fixtures of a domain (Kafka, Redis, MariaDB, a
# control plane with a durable store, a two-member cluster) are in the other
# files of this folder; a test sources those it uses.
#
# The test runs its own sandbox named sk-it-<test>-<pid>, so it never
# disturbs a developer's seckill-sbx, and always takes it down on exit:
# sbx_up installs the one EXIT trap (it_exit); a test hands its own cleanup
# to it with at_exit FN and sets no EXIT trap of its own (a second "trap ...
# EXIT" replaces the first, whichever of the two comes first).
set -euo pipefail

# IT_DIR: tests/integration (fixtures: "$IT_DIR/lib/NAME.sh").
IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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

# require_tools NAME... - skip (one line naming every missing one) unless
# each NAME is there: a NAME of capitals (SK_CROWD, SK_CONTROL ...) is a
# variable that must hold an executable (meson test sets them: see
# tests/integration/meson.build), any other NAME a command on PATH.
require_tools() {
	local n
	local -a vars=() cmds=()
	for n in "$@"; do
		if [[ $n =~ ^[A-Z][A-Z0-9_]*$ ]]; then
			[ -x "${!n:-}" ] || vars+=("$n")
		else
			command -v "$n" >/dev/null || cmds+=("$n")
		fi
	done
	[ ${#vars[@]} = 0 ] || skip "not an executable: ${vars[*]} (run through meson test)"
	[ ${#cmds[@]} = 0 ] || skip "needs ${cmds[*]} (see docs/operations.md for the packages)"
}

# require_env NAME... - what a sandbox needs (root, /dev/net/tun, SK_DATAPLANE,
# ip, python3), then require_tools NAME...: skip (77) otherwise.
#   require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck disable=SC2120 # the NAMEs are optional
require_env() {
	[ "$(id -u)" = 0 ] || skip "needs root (network namespace, hugepages)"
	[ -c /dev/net/tun ] || skip "needs /dev/net/tun"
	require_tools SK_DATAPLANE ip python3 "$@"
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

# secret_file FILE - 32 random bytes in hex into FILE, mode 0600 (a token or
# payment secret for the dataplane or the control plane).
secret_file() {
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1"
	chmod 600 "$1"
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

# stop_wait PID - SIGTERM to PID (a child of this shell), SIGKILL after 5 s,
# and reap it. Nothing if PID is empty.
stop_wait() {
	local pid=$1
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
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
# JSON values and waits.

# json_get FILE EXPR - a value of a JSON file (python expression on d).
json_get() {
	itpy jsonq get "$1" "$2"
}

# wait_for SECONDS DESC CMD... - poll CMD (every 0.1 s: a poll interval, not
# a guess; its output dropped) until it succeeds, for SECONDS at most; on
# time out prints "(gave up waiting: DESC)" and returns 1. A wait whose
# failure is a failed check: check "DESC" wait_for ...; one whose failure the
# checks after it show: wait_for ... || true.
wait_for() {
	local end=$((SECONDS + $1)) desc=$2
	shift 2
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.1
	done
	echo "    (gave up waiting: $desc)"
	return 1
}
