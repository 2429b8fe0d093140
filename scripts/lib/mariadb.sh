# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# mariadb.sh - a temporary MariaDB and seckill-mysql-writer, for the demo,
# the integration tests and the MySQL benchmark: mariadbd made in a scratch
# datadir by mariadb-install-db, on a unix socket only (--skip-networking),
# stopped by its PID; the writer started in the background, stopped by its
# PID, read through its /metrics on 127.0.0.1.
#
# The caller sets: tmp (a scratch folder), SOCK (the socket path), MPORT
# (the writer's metrics port on 127.0.0.1), SK_MYSQL_WRITER, and
# KAFKA_BOOTSTRAP (the broker). DB_PID and W_PID hold the PIDs, W_RC the
# writer's last exit status.
# shellcheck disable=SC2154,SC2034 # tmp, SOCK, MPORT, KAFKA_BOOTSTRAP: the caller's; W_RC: read by it
DB_PID=
W_PID=
W_RC=

# sql DB QUERY - one query through the socket, tab-separated, no header.
sql() {
	mariadb --no-defaults --socket="$SOCK" -uroot -N -B "$1" -e "$2"
}

# db_start - mariadbd on the datadir (made on the first call), socket only;
# waits (30 s at most) until it answers.
db_start() {
	if [ ! -d "$tmp/db" ]; then
		mariadb-install-db --no-defaults --datadir="$tmp/db" --user=root \
			--auth-root-authentication-method=normal --skip-test-db >"$tmp/install.log" 2>&1 ||
			{
				cat "$tmp/install.log"
				return 1
			}
	fi
	mariadbd --no-defaults --datadir="$tmp/db" --socket="$SOCK" --skip-networking --user=root \
		--pid-file="$tmp/db.pid" --log-error="$tmp/db.err" --innodb-buffer-pool-size=64M \
		</dev/null >/dev/null 2>&1 &
	DB_PID=$!
	for _ in $(seq 1 300); do
		mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1 && return 0
		kill -0 "$DB_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_pid SIG PID - SIG to PID (a child of this shell), then wait (30 s at
# most, then SIGKILL) and reap it; returns its exit status.
stop_pid() {
	local rc=0
	kill "-$1" "$2" 2>/dev/null || true
	for _ in $(seq 1 300); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$2" 2>/dev/null || true
	wait "$2" 2>/dev/null || rc=$?
	return "$rc"
}

# db_stop SIG - SIG (TERM or KILL) to mariadbd by its PID; waits for it.
db_stop() {
	local pid=$DB_PID
	[ -n "$pid" ] || return 0
	DB_PID=
	stop_pid "$1" "$pid" || true
}

# writer_start ARGS... - seckill-mysql-writer run on the socket and the
# broker with ARGS; waits (10 s) for its /metrics.
writer_start() {
	"$SK_MYSQL_WRITER" run --socket "$SOCK" --bootstrap "$KAFKA_BOOTSTRAP" \
		--metrics-port "$MPORT" --max-seconds 900 "$@" </dev/null >>"$tmp/writer.log" 2>&1 &
	W_PID=$!
	for _ in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$MPORT/metrics" >/dev/null && return 0
		kill -0 "$W_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# writer_stop SIG - SIG to the writer by its PID; waits (30 s at most, then
# SIGKILL) and sets W_RC to its exit status. Call it directly, not in $(...).
writer_stop() {
	local pid=$W_PID
	W_RC=
	[ -n "$pid" ] || return 0
	W_PID=
	W_RC=0
	stop_pid "$1" "$pid" || W_RC=$?
}

# wmetric NAME - a value of the writer's /metrics (NAME with its labels).
wmetric() {
	curl -sf "http://127.0.0.1:$MPORT/metrics" >"$tmp/wmetrics" 2>/dev/null || true
	awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/wmetrics"
}

# wait_sql DB QUERY WANT SECONDS - until QUERY prints WANT; at most SECONDS.
wait_sql() {
	local end=$((SECONDS + $4))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(sql "$1" "$2" 2>/dev/null)" = "$3" ] && return 0
		sleep 0.2
	done
	echo "wait_sql: '$2' is '$(sql "$1" "$2" 2>&1)', want '$3'"
	return 1
}

# wait_wmetric NAME WANT SECONDS - until the writer's NAME is >= WANT.
wait_wmetric() {
	local v end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		v=$(wmetric "$1")
		[ -n "$v" ] && [ "$v" -ge "$2" ] && return 0
		sleep 0.2
	done
	echo "wait_wmetric: $1 is '$(wmetric "$1")', want >= $2"
	return 1
}

# verify - seckill-mysql-writer verify against the store in
# $tmp/store; report in $tmp/verify.json, printed when not equal.
verify() {
	"$SK_MYSQL_WRITER" verify --socket "$SOCK" --store "$tmp/store" --json \
		>"$tmp/verify.json" 2>"$tmp/verify.err" || {
		cat "$tmp/verify.json" "$tmp/verify.err"
		return 1
	}
}

# wait_verify SECONDS - until verify finds LMDB and MariaDB equal (the
# writer may still be applying); at most SECONDS, then the last report.
wait_verify() {
	local end=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$end" ]; do
		verify >/dev/null && return 0
		sleep 0.5
	done
	verify
}

