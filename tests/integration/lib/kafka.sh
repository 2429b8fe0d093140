# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# kafka.sh - the Kafka fixture (tests of the export, the payments, the MySQL
# writer): SK_KAFKA is seckill-kafka (tools/kafka), a mock-cluster broker on
# 127.0.0.1 only, started and stopped by its PID. Source it after lib.sh:
#   # shellcheck source=lib/kafka.sh
#   . "$IT_DIR/lib/kafka.sh"

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

# kafka_down - stop the broker kafka_up started, by its PID (SIGTERM, SIGKILL
# after 5 s), and wait for it. Nothing if none.
kafka_down() {
	local pid=${KAFKA_PID:-}
	KAFKA_PID=
	stop_wait "$pid"
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

# pay_key_file FILE - write a payments signing key file (kid "test-1", a
# random secret, mode 600): what --payments-key-file and seckill-kafka
# produce --sign-key-file read (docs/kafka.md, "Signatures").
pay_key_file() {
	(umask 077 && echo "test-1 $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$1")
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

# produce TOPIC KEY=VALUE... - hand-made messages (unsigned: the writer's
# topics; payments are signed by their own tests).
produce() {
	local topic=$1
	shift
	"${SK_KAFKA:?}" produce --bootstrap "${KAFKA_BOOTSTRAP:?}" --topic "$topic" "$@" >/dev/null
}
