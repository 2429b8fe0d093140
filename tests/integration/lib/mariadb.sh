# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# mariadb.sh - the MariaDB fixture: scripts/lib/mariadb.sh (a temporary
# mariadbd and seckill-mysql-writer, by PID: db_start, writer_start, sql,
# verify ...) plus what the MySQL tests and bench/mysql/bench_mysql.sh
# share: the sale's config and paying orders. Source it after lib.sh (and
# lib/kafka.sh: the writer reads Kafka):
#   # shellcheck source=lib/mariadb.sh
#   . "$IT_DIR/lib/mariadb.sh"
# shellcheck disable=SC2154 # tmp, REPO, SBX: the caller's and lib.sh's
# shellcheck source=scripts/lib/mariadb.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/mariadb.sh"

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

# mysql_fail_logs - after a failed check (FAILS), the last lines of the
# writer's and mariadbd's logs in $tmp.
mysql_fail_logs() {
	[ "$FAILS" != 0 ] || return 0
	echo "--- writer log (last lines)"
	tail -n 20 "$tmp/writer.log" 2>/dev/null || true
	echo "--- mariadbd log (last lines)"
	tail -n 10 "$tmp/db.err" 2>/dev/null || true
}
