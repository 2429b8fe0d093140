#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dataplane_helper.sh - seckill-dataplane-helper (what the systemd unit runs
# around the dataplane: dist/libexec/) against a real dataplane in the
# sandbox: "check" passes on this machine's hugepages; "wait-ready" sees the
# dataplane ready through its telemetry socket, refuses a socket of another
# PID and gives up at once when the PID is gone; "cleanup" removes nothing
# while the dataplane runs (DPDK's own locks), and after a kill -9 removes
# every hugepage file and the runtime folder it left behind.
# (Not checked: that those files were there. Any DPDK primary that starts
# on the machine removes unlocked hugepage files of every prefix.)
. "$(dirname "$0")/lib.sh"

require_env
[ -f "${SK_HELPER:-}" ] || skip "SK_HELPER is not set (run through meson test)"

helper() {
	python3 "$SK_HELPER" "$@"
}

sbx_up --no-control
env=/run/$SK_SBX/env
prefix=$(sed -n 's/^prefix=//p' "$env")
pid=$(sed -n 's/^pid=//p' "$env")
hugedir=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)
rundir=/var/run/dpdk/$prefix
pages() {
	find "$hugedir" -maxdepth 1 -name "${prefix}map_*" | wc -l
}

out=$(helper check --config "/run/$SK_SBX/config.ini" -- --no-pci 2>&1) && rc=0 || rc=$?
expect_eq "check: hugepages and devices of the sandbox's config ($out)" "$rc" 0

out=$(helper wait-ready --file-prefix "$prefix" --pid "$pid" --timeout 30 2>&1) && rc=0 || rc=$?
expect_eq "wait-ready on the running dataplane ($out)" "$rc" 0
expect_match "wait-ready names the PID" "$out" "seckill-dataplane \\(pid $pid\\) is ready"

# Another live PID (this shell): the socket is not its, so never ready.
t0=$SECONDS
out=$(helper wait-ready --file-prefix "$prefix" --pid $$ --timeout 2 2>&1) && rc=0 || rc=$?
expect_eq "wait-ready refuses the socket of another PID ($out)" "$rc" 1
check "... after its timeout (2 s)" test $((SECONDS - t0)) -ge 2

before=$(pages)
check "the dataplane maps hugepage files ($before)" test "$before" -gt 0
out=$(helper cleanup --file-prefix "$prefix" 2>&1) && rc=0 || rc=$?
expect_match "cleanup while it runs removes nothing" "$out" \
	"hugepage files removed 0, in use $before; /var/run/dpdk/$prefix kept \\(in use\\)"
expect_eq "its hugepage files are all there" "$(pages)" "$before"
check "its runtime folder is there" test -d "$rundir"
check "it still answers" sbx_exec curl -sf -m 5 -o /dev/null "$URL/healthz"

"$SBX" kill
# gone PID - no process PID, or only its zombie waiting for its parent.
gone() {
	[ ! -r "/proc/$1/stat" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]
}
check "the dataplane is gone after kill -9" gone "$pid"
t0=$SECONDS
out=$(helper wait-ready --file-prefix "$prefix" --pid "$pid" --timeout 30 2>&1) && rc=0 || rc=$?
expect_eq "wait-ready for a dead PID fails ($out)" "$rc" 1
check "... at once, not after its timeout" test $((SECONDS - t0)) -lt 10

# Any DPDK primary that starts now (another test's, another user's) removes
# every unlocked *map_* file, whatever its prefix: the files kill -9 left
# may be gone already. The runtime folder is ours alone.
check "kill -9 left the runtime folder behind" test -d "$rundir"
out=$(helper cleanup --file-prefix "$prefix" 2>&1) && rc=0 || rc=$?
expect_match "cleanup after the kill" "$out" \
	"hugepage files removed [0-9]+, in use 0; /var/run/dpdk/$prefix removed"
expect_eq "no hugepage file of the prefix is left" "$(pages)" 0
check "the runtime folder is gone" test ! -e "$rundir"

finish
