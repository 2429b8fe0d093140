#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dashboard.sh - the live dashboard (GET /dashboard of the admin API) in a
# real browser: Debian's chromium, headless, driven by chromedriver through
# tests/lib/python/webdriver.py. The sandbox runs with a store, ack =
# durable, auth off, and the control plane exports to seckill-kafka.
#
#  1. over HTTP (curl): /dashboard and /dashboard/ are the page
#     (text/html), each file has its type, a Content-Security-Policy that
#     allows only 'self', Cache-Control and nosniff; HEAD has the headers
#     and no body; an unknown file (or ../) is 404, POST is 405 with Allow;
#     no file names an http(s):// URL but the SVG namespace name, and the
#     page loads only /dashboard/... paths; these files need no admin
#     token, /v1/items, /dashboardx and POST /dashboard do (401 without);
#  2. the page open (#window=60&token=..., the token then gone from the
#     address bar) before any sale: live, "No item on sale", Redis and
#     MySQL "not configured"; then "seckillctl activity add 1 --total N
#     --start +15s": the page shows item 1 scheduled with N remaining;
#  3. a crowd (3,000 users, 5,000 attempts, --wait-start) buys the N units:
#     the page shows sold N, remaining 0, "sold out", N confirmed orders of
#     this run, an export backlog of 0, the won and sold_out request rates
#     seen; the admin API agrees;
#  4. the browser's console has no error; every resource the page loaded
#     came from its own origin; the page's Prometheus parser read every
#     sample of /metrics and no bad line; screenshots (the window, 1440x900, and the
#     whole page) are saved in the build directory (SK_BUILD_ROOT, set by
#     meson: build/h/dashboard.png, dashboard-full.png);
#  5. chromium's net log: every TCP connection went to 127.0.0.1 (the
#     admin API, or the dead proxy all else is sent to), no UDP byte and no
#     DNS query left the host, every request of the page went to its origin.
# chromedriver (and chromium below it) and the broker are stopped by PID on
# every exit path; every wait is on a condition and bounded.
. "$(dirname "$0")/lib.sh"
require_env curl nc chromedriver SK_CROWD SK_CONTROL SK_SECKILLCTL SK_KAFKA
[ -x /usr/lib/chromium/chromium ] || skip "needs chromium (Debian package chromium)"
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"

tmp=$(mktemp -d)
KAFKA_PID=
WD_PID=
WD=
SID=
N=400
SHOTS=${SK_BUILD_ROOT:-$REPO/build}
export SK_SBX_ADMIN_PORT=$((20000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS

show_logs() {
	[ "$FAILS" = 0 ] && return 0
	echo "--- control plane log (last lines)"
	tail -n 15 "/run/$SK_SBX/control.log" 2>/dev/null || true
	echo "--- chromedriver log (last lines)"
	tail -n 15 "$tmp/chromedriver.log" 2>/dev/null || true
}

# browser_down - end the session (chromium exits), then stop chromedriver
# and whatever is left below it, by PID.
browser_down() {
	[ -z "$SID" ] || itpy webdriver quit "$WD" "$SID" >/dev/null 2>&1 || true
	SID=
	[ -n "$WD_PID" ] || return 0
	kill_tree TERM "$WD_PID"
	for _ in $(seq 1 50); do
		kill -0 "$WD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill_tree KILL "$WD_PID"
	wait "$WD_PID" 2>/dev/null || true
	WD_PID=
}
at_exit show_logs
at_exit browser_down
at_exit kafka_down
at_exit rm_tmp

# wd CMD ARGS... - webdriver.py CMD on this test's chromedriver and session.
wd() {
	local cmd=$1
	shift
	itpy webdriver "$cmd" "$WD" "$SID" "$@"
}

# shows CSS REGEX SECONDS - the page shows text matching REGEX (case
# ignored) at CSS within SECONDS (webdriver.py wait, its output dropped).
shows() {
	wd wait "$@" >/dev/null
}

# field ITEM NAME - the CSS selector of an item's value on the page.
field() {
	echo "[data-item=\"$1\"][data-field=\"$2\"]"
}

# header FILE NAME - the value of header NAME in a curl -D dump (last one).
header() {
	tr -d '\r' <"$1" | awk -v n="$2" -F': ' \
		'tolower($1) == tolower(n) { v = substr($0, length($1) + 3) } END { print v }'
}

# get PATH [CURL ARGS...] - the admin API's answer to PATH: the status code
# printed, headers in $tmp/h, body in $tmp/b.
get() {
	local path=$1
	shift
	curl -s -m 10 --path-as-is -D "$tmp/h" -o "$tmp/b" -w '%{http_code}' "$@" "$ADMIN$path"
}

# ------------------------------------------------------------------ broker + sandbox
kafka_start seckill.orders seckill.events
cfg=$tmp/dashboard.ini
durable_config >"$cfg"
sbx_up --config "$cfg"

# ------------------------------------------------------------------ 1. over HTTP
expect_eq "GET /dashboard" "$(get /dashboard)" 200
expect_eq "  Content-Type" "$(header "$tmp/h" Content-Type)" "text/html; charset=utf-8"
csp=$(header "$tmp/h" Content-Security-Policy)
expect_match "  Content-Security-Policy: only 'self'" "$csp" "^default-src 'self';"
expect_eq "  no other source in the policy" "$(grep -oE "https?:|\*|'unsafe-[a-z]+'|data:|blob:" <<<"$csp" || true)" ""
expect_eq "  Cache-Control" "$(header "$tmp/h" Cache-Control)" "no-cache"
expect_eq "  X-Content-Type-Options" "$(header "$tmp/h" X-Content-Type-Options)" "nosniff"
cp "$tmp/b" "$tmp/index.html"
check "  the page links its script, style and icon" grep -q 'src="/dashboard/dashboard.js"' "$tmp/index.html"
expect_eq "GET /dashboard/ is the same page" "$(get /dashboard/)" 200
check "  same bytes" cmp -s "$tmp/b" "$tmp/index.html"
# HEAD: the page's headers, no body (HTTP/1.0: the server closes after the answer).
printf 'HEAD /dashboard HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' |
	nc -w 5 127.0.0.1 "$SK_SBX_ADMIN_PORT" >"$tmp/head" || true
expect_match "HEAD /dashboard" "$(head -n 1 "$tmp/head")" "^HTTP/1.[01] 200"
expect_eq "  Content-Length of the page" "$(header "$tmp/head" Content-Length)" "$(wc -c <"$tmp/index.html")"
expect_match "  policy too" "$(header "$tmp/head" Content-Security-Policy)" "^default-src 'self';"
expect_eq "  no body after the headers" "$(tr -d '\r' <"$tmp/head" | sed '1,/^$/d' | wc -c)" 0
for f in "dashboard.js:text/javascript; charset=utf-8" "dashboard.css:text/css; charset=utf-8" \
	favicon.svg:image/svg+xml; do
	expect_eq "GET /dashboard/${f%%:*}" "$(get "/dashboard/${f%%:*}")" 200
	expect_eq "  Content-Type" "$(header "$tmp/h" Content-Type)" "${f#*:}"
	expect_match "  Content-Security-Policy" "$(header "$tmp/h" Content-Security-Policy)" "^default-src 'self';"
	cp "$tmp/b" "$tmp/${f%%:*}"
done
expect_eq "GET /dashboard/nope.js: 404" "$(get /dashboard/nope.js)" 404
expect_eq "GET /dashboard/../metrics: 404" "$(get /dashboard/../metrics)" 404
# Only GET/HEAD of /dashboard and its files are open on TCP: the rest needs the token.
auth=(-H @"/run/$SK_SBX/admin.header")
expect_eq "GET /dashboardx without the token: 401" "$(get /dashboardx)" 401
expect_eq "GET /dashboardx: 404" "$(get /dashboardx "${auth[@]}")" 404
expect_eq "POST /dashboard without the token: 401" "$(get /dashboard -X POST -H 'Content-Type: application/json')" 401
expect_eq "POST /dashboard: 405" "$(get /dashboard -X POST -H 'Content-Type: application/json' "${auth[@]}")" 405
expect_eq "  Allow" "$(header "$tmp/h" Allow)" "GET, HEAD"
# The only http(s):// text allowed: the SVG namespace name, an identifier
# that nothing fetches.
urls=$(grep -ohE "https?://[^\"' )<>]*" "$tmp/index.html" "$tmp/dashboard.js" "$tmp/dashboard.css" "$tmp/favicon.svg" |
	grep -vx 'http://www.w3.org/2000/svg' || true)
expect_eq "no http(s):// URL in the files but the SVG namespace" "$urls" ""
expect_eq "the page loads only /dashboard/ paths" \
	"$(grep -oE '(src|href)="[^"]*"' "$tmp/index.html" | grep -v '="/dashboard/' || true)" ""

# ------------------------------------------------------------------ 2. the browser
port=$(itpy webdriver free-port)
WD=http://127.0.0.1:$port
chromedriver --port="$port" --log-path="$tmp/chromedriver.log" </dev/null >/dev/null 2>&1 &
WD_PID=$!
check "chromedriver ready on $WD" itpy webdriver ready "$WD" 20
SID=$(itpy webdriver session "$WD" "$tmp/profile" "$tmp/netlog.json" 1440x900) || {
	bad "chromium session"
	finish
	exit 1
}
ok "chromium session $SID"
# The token in the fragment (never sent; docs/dashboard.md): the page keeps it
# in sessionStorage and takes it out of the address bar.
expect_eq "without the token: /v1/items is 401" "$(get /v1/items)" 401
expect_match "  with WWW-Authenticate: Bearer" "$(header "$tmp/h" WWW-Authenticate)" "^Bearer"
expect_eq "  with the token: 200" "$(get /v1/items "${auth[@]}")" 200
check "open $ADMIN/dashboard" wd open "$ADMIN/dashboard#window=60&token={admin_token}"
expect_eq "the token is out of the address bar" "$(wd eval 'return location.hash;')" '"#window=60"'
check "the page polls the admin API (live)" shows '#conn-text' 'live' 15
check "no item yet: the page says so" shows '#no-items' 'No item on sale.*' 5
check "Redis: not configured" shows '[data-metric="redis"]' 'not configured' 5
check "MySQL: not configured" shows '[data-metric="mysql"]' 'not configured' 5
check "Kafka export shown (backlog 0)" shows '[data-metric="export-backlog"]' '0' 10

out=$("$SBX" ctl activity add 1 --total $N --name "dashboard sale" --start +15s 2>&1) || true
expect_match "activity add 1 --total $N --start +15s" "$out" "created"
check "item 1 shows scheduled" shows "$(field 1 state)" 'scheduled' 12
check "item 1 shows $N remaining" shows "$(field 1 remaining)" "$N" 5
check "item 1 shows total $N" shows "$(field 1 total)" "$N" 5

# ------------------------------------------------------------------ 3. the sale
rc=0
sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --users 3000 --attempts 5000 \
	--conns 32 --wait-start --seed 7 --expect-units $N --timeout-ms 8000 --max-seconds 60 \
	--json "$tmp/crowd.json" >"$tmp/crowd.out" 2>&1 || rc=$?
tail -n 4 "$tmp/crowd.out"
expect_eq "crowd: $N winners, its checks pass" "$rc" 0
check "the page shows sold $N" shows "$(field 1 sold)" "$N" 20
check "the page shows remaining 0" shows "$(field 1 remaining)" 0 10
check "the page shows the sold-out state" shows "$(field 1 state)" 'sold out' 10
check "the card is marked sold_out" shows "[data-item-card=\"1\"][data-state=\"sold_out\"] .item-id" '#1' 5
check "the page shows $N confirmed orders" shows '[data-metric="orders-confirmed"]' "$N" 15
check "the page shows the export backlog back at 0" shows '[data-metric="export-backlog"]' '0' 30
check "the won rate was seen" shows '[data-metric="rps-won"]' '[0-9.]+' 5
check "the sold_out rate was seen" shows '[data-metric="rps-sold_out"]' '[0-9.]+' 5
check "a peak of requests/s was seen" shows '[data-metric="rps-peak"]' '[1-9][0-9.]*' 5
expect_eq "the admin API agrees: sold" "$(item_field sold)" $N
expect_eq "the admin API agrees: sold out" "$(item_field sold_out)" true

# ------------------------------------------------------------------ 4. console, resources, screenshots
check "no error in the browser's console" wd console "$tmp/console.jsonl"
wd eval 'return performance.getEntriesByType("resource").map(e => e.name).concat([location.href]);' \
	>"$tmp/resources.json" || true
expect_eq "every resource came from $ADMIN" \
	"$(json_get "$tmp/resources.json" "len(d) > 3 and all(u.startswith('$ADMIN/') for u in d)")" True
# The page's Prometheus parser against the text itself (the sale is over:
# the set of samples no longer changes between the page's poll and curl's).
wd eval 'const m = view.prev.m; return [m.bad, [...m.values()].reduce((a, l) => a + l.length, 0)];' \
	>"$tmp/parsed.json" || true
curl -s -m 10 "$ADMIN/metrics" >"$tmp/metrics.txt" || true
expect_eq "the page parsed every sample of /metrics, no bad line" "$(json_get "$tmp/parsed.json" d)" \
	"[0, $(grep -cv '^#\|^$' "$tmp/metrics.txt")]"
mkdir -p "$SHOTS"
check "screenshot $SHOTS/dashboard.png" wd screenshot "$SHOTS/dashboard.png"
check "screenshot $SHOTS/dashboard-full.png" wd screenshot "$SHOTS/dashboard-full.png" full
check "still no error in the console" wd console "$tmp/console.jsonl"

# ------------------------------------------------------------------ 5. nothing left the host
check "session ended" wd quit
SID=
check "chromium's net log: only 127.0.0.1, the page only its origin" itpy webdriver netlog "$tmp/netlog.json" "$ADMIN"

echo "dashboard: $((SECONDS - T0)) s"
finish
