# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# redis.sh - the Redis fixture: a redis-server of the test on a unix socket
# (no TCP port), no persistence, started and stopped by its PID. Source it
# after lib.sh:
#   # shellcheck source=lib/redis.sh
#   . "$IT_DIR/lib/redis.sh"
# The caller sets tmp (a scratch folder) and RSOCK (the socket path).
# shellcheck disable=SC2154 # tmp, RSOCK: the caller's

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
