# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# bench_tele.sh - what the benchmark scripts share besides the sandbox: the
# build to measure, the dataplane's telemetry read by one python3
# coprocess, and secrets. Needs REPO, HERE (the scripts folder), die and
# TELE_PROC (the caller's cleanup stops it) from the caller.

# bench_build - set BUILD, if empty, to the first build holding both
# loadgen/seckill-loadgen and dataplane/seckill-dataplane; dies if none.
bench_build() {
	local b
	if [ -z "${BUILD:-}" ]; then
		for b in build/rel build/release build/me build; do
			if [ -x "$REPO/$b/loadgen/seckill-loadgen" ] &&
				[ -x "$REPO/$b/dataplane/seckill-dataplane" ]; then
				BUILD=$REPO/$b
				break
			fi
		done
	fi
	[ -n "${BUILD:-}" ] || die "no build with loadgen/seckill-loadgen (give --build DIR)"
}

# tele_open SOCKET / snap FILE [CMD] / tele_stop - a telemetry command
# (default /seckill/stats) into FILE through one python3 coprocess per dataplane
# (lib/telemetry.py; the same read as "sandbox.sh telemetry", without a
# python3 start per snapshot).
tele_open() {
	coproc TELE { exec python3 "$HERE/lib/telemetry.py" "$1"; }
	TELE_PROC=$TELE_PID # bash unsets TELE_PID when the coprocess ends
}
snap() {
	local reply=""
	echo "${2:-/seckill/stats} $1" >&"${TELE[1]}"
	read -t 20 -r reply <&"${TELE[0]}" || true
	[ "$reply" = ok ] || die "telemetry: ${reply:-no answer in 20 s}"
}
# tele_wait KEY MIN SECONDS - until /seckill/stats' KEY (dotted path) is at
# least MIN, for at most SECONDS (dies after); tele_try_wait returns 1
# instead (the reason on stderr).
tele_try_wait() {
	local reply=""
	echo "@wait /seckill/stats $1 $2 $3" >&"${TELE[1]}"
	read -t $(($3 + 20)) -r reply <&"${TELE[0]}" || true
	[ "$reply" = ok ] && return 0
	echo "telemetry: ${reply:-no answer}" >&2
	return 1
}
tele_wait() {
	tele_try_wait "$@" || die "telemetry wait for $1 failed"
}
tele_stop() {
	[ -n "$TELE_PROC" ] || return 0
	[ -n "${TELE[1]:-}" ] && eval "exec ${TELE[1]}>&-"
	wait "$TELE_PROC" 2>/dev/null || true
	TELE_PROC=""
}

# secret FILE - 32 random bytes in hex (a token or ticket secret), mode 0600.
secret() {
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1"
	chmod 600 "$1"
}
