# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - shared by the integration tests: skip rules, a private sandbox
# per test (its own namespace, tap and file prefix), assertions.
#
# Sourced by each test script. The test runs its own sandbox named
# sk-it-<test>-<pid>, so it never disturbs a developer's seckill-sbx, and
# always takes it down on exit.
set -euo pipefail

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
SBX=$REPO/scripts/sandbox.sh
TEST=$(basename "$0" .sh)
export SK_SBX=sk-it-$TEST-$$
export SK_SBX_PAGES=${SK_SBX_PAGES:-256}
FAILS=0
PASSES=0

skip() {
	echo "SKIP: $*"
	exit 77
}

# require_env TOOL... - skip unless root, /dev/net/tun and every TOOL exist.
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

sbx_exec() {
	"$SBX" exec "$@"
}

# tele KEY [SECTION] - one number of /seckill/stats (SECTION: total or top).
tele() {
	"$SBX" telemetry | python3 -c '
import json, sys
d = json.load(sys.stdin)
k, sec = sys.argv[1], sys.argv[2]
print(d[k] if sec == "top" else d[sec][k])' "$1" "${2:-total}"
}

sbx_up() {
	local out
	trap sbx_down EXIT
	out=$("$SBX" up "$@") || {
		echo "sandbox up failed"
		exit 1
	}
	echo "$out"
	SERVER=$(echo "$out" | sed -n 's/.*server=\([0-9.]*\).*/\1/p')
	URL=http://$SERVER
}

# sbx_down - the EXIT trap: take the sandbox down; a sanitizer report in the
# dataplane's log (sandbox.sh down fails then) fails the test.
sbx_down() {
	local rc=$?
	if ! "$SBX" down >/dev/null; then
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
