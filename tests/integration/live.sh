#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# live.sh - live changes without a restart (docs/operations.md), on the real
# dataplane and control plane, tokens on:
#
#  1. seckillctl status: generation 1, the config's limits, every lcore on it;
#     a bad change (unknown key, value out of range, bad log level) exits 2,
#     names the key and changes nothing;
#  2. while seckill-crowd buys (20000 users with JWTs): the rate limits and
#     the log level change; every lcore reaches the new generation and the
#     crowd sees no 5xx and no 401;
#  3. deny lists: a denied user gets 403 denied while another buys; a denied
#     prefix (a second client address) gets 403 while the first address
#     buys; clear, and both buy again; a bad line refuses the whole load;
#  4. a user hammering one item gets 429 once its burst is spent, while
#     another user is served;
#  5. token keys rotated while a crowd buys with the old key (no kid): a new
#     key k2 is added and named the signing key, tokens with kid k2 buy at
#     once, the crowd sees no 401; once its tokens are done, k2 becomes the
#     default and the old key is removed: a second crowd signed with k2
#     buys without a 401, old tokens get 401; removing the last key and a
#     key file open to others are refused;
#  6. while the loadgen buys (buy_jwt, through memif): the rate limits change
#     and a key k4 is added and named the signing key; the loadgen sees only
#     200/202 (no 401, no 5xx, no 429) and no error;
#  7. each change is in the control plane's log.
. "$(dirname "$0")/lib.sh"
require_env curl taskset SK_CROWD SK_TOKEN SK_CONTROL SK_SECKILLCTL SK_LOADGEN
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
secret_file "$tmp/secret"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		store = $tmp/store
		ack = queued
		ip_rate = 0
		user_rate = 10
		user_burst = 20
		deny_max = 1024

		[item.1]
		name = crowd
		total = 100000
		dedup_slots = 65536

		[item.2]
		name = deny and hammer
		total = 1000
		per_user_limit = 100
	EOF
} >"$tmp/live.ini"
sbx_up --memif --config "$tmp/live.ini"
MEMIF=$(echo "$SBX_OUT" | sed -n 's/.* memif=\([^ ]*\).*/\1/p')
MEMIF_ADDR=$(echo "$SBX_OUT" | sed -n 's/.* memif_addr=\([0-9.]*\).*/\1/p')
LG_PREFIX=sk-it-live-lg-$$
lg_cleanup() { rm -rf "/var/run/dpdk/$LG_PREFIX"; }
at_exit lg_cleanup

ctl() { "$SBX" ctl "$@"; }
status_json() { ctl --json status >"$tmp/status.json"; }
# st EXPR - a value of seckillctl status --json (d the document).
st() {
	status_json
	json_get "$tmp/status.json" "$1"
}
# all_on GEN - every lcore runs on generation GEN.
all_on() {
	status_json
	[ "$(json_get "$tmp/status.json" "set(l['generation'] for l in d['lcores'])")" = "{$1}" ]
}
# token USER ITEM [SECRET_FILE [KID]] - a JWT (default: the start secret, no kid).
token() {
	"$SK_TOKEN" --secret-file "${3:-$tmp/secret}" --sub "$1" --item "$2" ${4:+--kid "$4"}
}
# buy USER ITEM [CURL ARGS] - the status of one buy.
buy() {
	local user=$1 item=$2
	shift 2
	sbx_exec curl -s -o /dev/null -w '%{http_code}' -X POST "$@" \
		-H "Authorization: Bearer $(token "$user" "$item")" "$URL/v1/seckill/$item"
}
# buy_with USER ITEM SECRET_FILE [KID] - the status of one buy with that key.
buy_with() {
	sbx_exec curl -s -o /dev/null -w '%{http_code}' -X POST \
		-H "Authorization: Bearer $(token "$1" "$2" "$3" "${4:-}")" "$URL/v1/seckill/$2"
}

# --- 1. status, refusals
expect_eq "status: generation 1 at start" "$(st 'd["generation"]')" 1
expect_eq "status: the config's limits" "$(st '(d["limits"]["user_rate"], d["limits"]["user_burst"], d["limits"]["ip_rate"])')" "(10, 20, 0)"
check "status: every lcore on generation 1" all_on 1
rc=0
ctl live limits user_rate=5 no_such_rate=1 2>"$tmp/bad1.err" || rc=$?
expect_eq "an unknown key: exit 2" "$rc" 2
check "an unknown key: named" grep -q no_such_rate "$tmp/bad1.err"
rc=0
ctl live limits user_rate=5 ip_burst=2000000000 2>"$tmp/bad2.err" || rc=$?
expect_eq "a value out of range: exit 2" "$rc" 2
rc=0
admin_curl -s -o "$tmp/bad3.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"user_rate":5,"ip_burst":2000000000}' "$ADMIN/v1/live/limits" >"$tmp/bad3.code" || rc=$?
expect_eq "a value out of range: 400 naming the key" \
	"$(cat "$tmp/bad3.code") $(json_get "$tmp/bad3.json" 'd["key"]')" "400 ip_burst"
rc=0
ctl live log loud 2>/dev/null || rc=$?
expect_eq "a bad log level: exit 2" "$rc" 2
expect_eq "nothing changed by the refusals" "$(st '(d["generation"], d["limits"]["user_rate"])')" "(1, 10)"

# --- 2. limits and log level changed under load
requests_above() { [ "$(tele requests)" -gt "$1" ]; }
req0=$(tele requests)
sbx_exec timeout 120 "$SK_CROWD" --server "$SERVER" --item 1 --users 20000 --conns 32 \
	--secret-file "$tmp/secret" --max-seconds 100 --json "$tmp/crowd.json" >"$tmp/crowd.log" 2>&1 &
crowd=$!
check "the crowd is buying" wait_for 30 "crowd requests" requests_above $((req0 + 1000))
check "live limits under load" ctl live limits ip_rate=100000 ip_burst=100000 user_rate=50 user_burst=50
check "every lcore applied generation 2" wait_for 5 "lcores on 2" all_on 2
check "live log debug" ctl live log debug
check "live log info" ctl live log info
check "every lcore applied generation 4" wait_for 5 "lcores on 4" all_on 4
rc=0
wait "$crowd" || rc=$?
expect_eq "the crowd finished" "$rc" 0
expect_eq "the crowd: only 200/202 (no 5xx, no 401, no 429)" \
	"$(json_get "$tmp/crowd.json" '{k for k, v in d["http"].items() if v} <= {"200", "202"} and d["answered"] == 20000')" True
expect_eq "status: the new limits" \
	"$(st '(d["limits"]["ip_rate"], d["limits"]["user_rate"], d["log_level"])')" "(100000, 50, 'info')"

# --- 3. deny lists
printf '# denied users\n77\n' >"$tmp/users.txt"
sbx_exec ip addr add 198.18.0.200/24 dev "$(sbx_exec ip -o link show |
	awk -F': ' '$2 != "lo" { sub(/@.*/, "", $2); print $2; exit }')"
printf '198.18.0.200/32\n2001:db8::/32\n' >"$tmp/prefixes.txt"
check "deny load" ctl deny load --users "$tmp/users.txt" --prefixes "$tmp/prefixes.txt"
expect_eq "deny show: 1 user, 2 prefixes" "$(st '(d["deny"]["users"], d["deny"]["prefixes"])')" "(1, 2)"
check "every lcore applied the deny lists" wait_for 5 "lcores on 5" all_on 5
expect_eq "a denied user: 403" "$(buy 77 2)" 403
sbx_exec curl -s -X POST -H "Authorization: Bearer $(token 77 2)" "$URL/v1/seckill/2" >"$tmp/denied.json"
expect_eq "a denied user: denied" "$(json_get "$tmp/denied.json" 'd["status"]')" denied
expect_match "another user buys" "$(buy 78 2)" '^20[02]$'
expect_eq "a denied prefix: 403" "$(buy 79 2 --interface 198.18.0.200)" 403
expect_match "the other address buys" "$(buy 79 2)" '^20[02]$'
printf '77\nnot-a-user\n' >"$tmp/bad-users.txt"
rc=0
ctl deny load --users "$tmp/bad-users.txt" 2>"$tmp/bad-deny.err" || rc=$?
expect_eq "a bad deny file: exit 2" "$rc" 2
check "a bad deny file: the line named" grep -q "line 2" "$tmp/bad-deny.err"
expect_eq "a bad deny file: nothing changed" "$(st '(d["generation"], d["deny"]["users"])')" "(5, 1)"
check "deny clear" ctl deny clear
check "every lcore applied the clear" wait_for 5 "lcores on 6" all_on 6
expect_match "the user buys again" "$(buy 77 2)" '^20[02]$'
expect_match "the address buys again" "$(buy 80 2 --interface 198.18.0.200)" '^20[02]$'
expect_eq "status: denied counted" "$(st 'sum(l["denied"] for l in d["lcores"])')" 3
check "metrics: the three refusals are the outcome denied" \
	wait_metric 'seckill_requests_total{outcome="denied"}' -eq 3 10

# --- 4. a user hammering one item is limited; another is served
check "live limits user_rate=1 user_burst=5" ctl live limits user_rate=1 user_burst=5
check "every lcore applied generation 7" wait_for 5 "lcores on 7" all_on 7
tok=$(token 90 2)
args=()
for _ in $(seq 1 40); do
	args+=(-o /dev/null "$URL/v1/seckill/2")
done
sbx_exec curl -s -X POST -w '%{http_code}\n' -H "Authorization: Bearer $tok" "${args[@]}" >"$tmp/hammer.txt"
n429=$(grep -c '^429$' "$tmp/hammer.txt" || true)
expect_eq "the hammering user: at most 5 served within the burst, the rest 429" \
	"$((n429 >= 35))" 1
expect_match "another user is served" "$(buy 91 2)" '^20[02]$'
check "status: user-limited counted" \
	test "$(st 'sum(l["user_limited"] for l in d["lcores"])')" -ge 35

# --- 5. key rotation under load
secret_file "$tmp/k2"
# crowd_only_ok FILE USERS - a crowd's answers: all answered, only 200/202.
crowd_only_ok() {
	json_get "$1" '{k for k, v in d["http"].items() if v} <= {"200", "202"} and d["answered"] == '"$2"
}
req0=$(tele requests)
sbx_exec timeout 120 "$SK_CROWD" --server "$SERVER" --item 1 --users 20000 --user-base 100000 \
	--conns 32 --secret-file "$tmp/secret" --max-seconds 100 --json "$tmp/crowd-a.json" \
	>"$tmp/crowd-a.log" 2>&1 &
crowd=$!
check "crowd A is buying" wait_for 30 "crowd A requests" requests_above $((req0 + 1000))
check "keys add k2 under load" ctl keys add k2 --file "$tmp/k2"
check "keys sign k2 under load" ctl keys sign k2
check "every lcore applied generation 9" wait_for 5 "lcores on 9" all_on 9
expect_match "a token of k2 (kid k2) buys at once" "$(buy_with 300 2 "$tmp/k2" k2)" '^20[02]$'
rc=0
wait "$crowd" || rc=$?
expect_eq "crowd A finished" "$rc" 0
expect_eq "crowd A (old key, no kid): no 401, no 5xx" "$(crowd_only_ok "$tmp/crowd-a.json" 20000)" True
check "keys default k2" ctl keys default k2
check "keys remove default" ctl keys remove default
check "every lcore applied generation 11" wait_for 5 "lcores on 11" all_on 11
expect_eq "status: k2 alone, signing and default" \
	"$(st '[(k["kid"], k["sign"], k["default"]) for k in d["keys"]]')" "[('k2', True, True)]"
sbx_exec timeout 120 "$SK_CROWD" --server "$SERVER" --item 1 --users 5000 --user-base 200000 \
	--conns 32 --secret-file "$tmp/k2" --max-seconds 100 --json "$tmp/crowd-b.json" \
	>"$tmp/crowd-b.log" 2>&1 || true
expect_eq "crowd B (k2, no kid): no 401, no 5xx" "$(crowd_only_ok "$tmp/crowd-b.json" 5000)" True
expect_eq "an old token: 401" "$(buy 301 2)" 401
expect_eq "an old token with kid default: 401" "$(buy_with 302 2 "$tmp/secret" default)" 401
rc=0
ctl keys remove k2 2>"$tmp/last.err" || rc=$?
expect_eq "removing the last key: exit 2" "$rc" 2
check "removing the last key: said so" grep -q "last key" "$tmp/last.err"
secret_file "$tmp/k3"
chmod 644 "$tmp/k3"
rc=0
ctl keys add k3 --file "$tmp/k3" 2>"$tmp/k3.err" || rc=$?
expect_eq "a key file open to others: exit 2" "$rc" 2
check "the key bytes are in no log" bash -c "! grep -qF '$(cat "$tmp/k2")' /run/$SK_SBX/control.log /run/$SK_SBX/log"

# --- 6. the loadgen buys while limits and keys change
# The loadgen sends each of its 20,000 users' buys as fast as the
# dataplane answers: up to some 50 a second each on a fast machine, where
# the per-user limit (10/s by default) would answer 429 by design. The
# user limits here are far above that, and change under the load (the
# per-IP one too: the loadgen's clients share few addresses).
check "live limits of users far above the loadgen's rate per user" \
	ctl live limits user_rate=1000 user_burst=2000
secret_file "$tmp/k4"
req0=$(tele requests)
timeout 120 taskset -c 0 "$SK_LOADGEN" -l 0 --in-memory --no-telemetry --file-prefix "$LG_PREFIX" \
	--no-pci --log-level=lib.eal:warning \
	--vdev "net_memif0,role=client,socket=$MEMIF,socket-abstract=no" -- \
	--server "$MEMIF_ADDR" --quiet --json --mix buy_jwt=1 --secret-file "$tmp/k2" \
	--tokens 20000 --conns 16 --depth 1 --item 1 --duration 4 \
	>"$tmp/lg.json" 2>"$tmp/lg.log" &
lgpid=$!
check "the loadgen is buying" wait_for 30 "loadgen requests" requests_above $((req0 + 1000))
check "live limits under the loadgen" ctl live limits ip_rate=10000000 ip_burst=10000000 user_rate=2000 user_burst=4000
check "keys add k4 under the loadgen" ctl keys add k4 --file "$tmp/k4"
check "keys sign k4 under the loadgen" ctl keys sign k4
rc=0
wait "$lgpid" || rc=$?
expect_eq "the loadgen finished" "$rc" 0
expect_eq "the loadgen: only 200/202 (no 401, no 5xx, no 429), no error" \
	"$(json_get "$tmp/lg.json" 'set(k for k, v in d["status"].items() if v) <= {"200", "202"} and d["errors"]["total"] == 0 and d["answered"] > 1000')" True
[ "$FAILS" = 0 ] || json_get "$tmp/lg.json" '(d["answered"], d["status"], d["errors"])'
check "every lcore applied generation 15" wait_for 5 "lcores on 15" all_on 15
expect_match "a token of k4 buys" "$(buy_with 400 2 "$tmp/k4" k4)" '^20[02]$'

# --- 7. logs (the store's events: tests/unit/store)
check "each change is logged (14 generations)" \
	test "$(grep -c 'prog=seckill-control event=live gen=' "/run/$SK_SBX/control.log")" -eq 14
check "the deny change is logged with its sizes" \
	grep -q 'event=live gen=5 kind=deny what="deny load users=1 prefixes=2"' "/run/$SK_SBX/control.log"
check "the key changes are logged by kid" \
	grep -q 'event=live gen=8 kind=keys what="add=k2"' "/run/$SK_SBX/control.log"
finish
