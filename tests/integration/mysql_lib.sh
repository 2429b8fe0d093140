# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# mysql_lib.sh - what tests/integration/mysql.sh, payments.sh and
# bench/mysql/bench_mysql.sh share beyond scripts/lib/mariadb.sh (MariaDB
# and the writer): the sale's config and paying orders. Sourced after lib.sh.
# shellcheck disable=SC2154 # tmp, REPO, SBX: the caller's and lib.sh's
# shellcheck source=../../scripts/lib/mariadb.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/mariadb.sh"

# sale_config FILE TOTAL - the sandbox's config plus a store in $tmp/store,
# ack = durable, auth off and item 1 with TOTAL units, into FILE.
sale_config() {
	cat "$REPO/config/sandbox.ini" >"$1"
	printf '\n[seckill]\nauth = off\nstore = %s\nack = durable\nack_wait_ms = 3000\n' "$tmp/store" >>"$1"
	printf '\n[item.1]\nname = mysql sale\ntotal = %s\ndedup_slots = 65536\n' "$2" >>"$1"
}

# pay_orders N FILE - seckillctl order pay for the first N orders of the
# "user order" lines of FILE; prints how many succeeded.
pay_orders() {
	local n=0 id
	while read -r id; do
		"$SBX" ctl order pay "$id" >/dev/null && n=$((n + 1))
	done < <(head -n "$1" "$2" | awk '{ print $2 }')
	echo "$n"
}

# produce TOPIC KEY=VALUE... - hand-made messages (unsigned: the writer's
# topics; payments are signed by their own tests).
produce() {
	local topic=$1
	shift
	"$SK_KAFKA" produce --bootstrap "$KAFKA_BOOTSTRAP" --topic "$topic" "$@" >/dev/null
}

# mysql_require - skip (lib.sh's skip) unless the broker tool, the writer
# and MariaDB's programs are there; the caller checks root and the rest.
mysql_require() {
	local t
	[ -x "${SK_KAFKA:-}" ] || skip "SK_KAFKA is not an executable (run through meson test)"
	[ -x "${SK_MYSQL_WRITER:-}" ] || skip "SK_MYSQL_WRITER is not an executable (run through meson test)"
	for t in mariadbd mariadb-install-db mariadb mariadb-admin; do
		command -v "$t" >/dev/null || skip "needs $t (Debian: mariadb-server, mariadb-client)"
	done
}

# mysql_fail_logs - after a failed check (FAILS), the last lines of the
# writer's and mariadbd's logs in $tmp.
mysql_fail_logs() {
	[ "$FAILS" != 0 ] || return 0
	echo "--- writer log (last lines)"
	tail -n 20 "$tmp/writer.log" 2>/dev/null || true
	echo "--- mariadbd log (last lines)"
	tail -n 10 "$tmp/db.err" 2>/dev/null || true
}
