#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# config_errors.sh - a bad config, secret or argument gives a one-line error
# naming the key and a non-zero exit, and nothing half-starts: no EAL state
# for errors found in the file, no tap left behind for errors found later.
# The error is a log line (docs/logs.md): level=error, event=config before
# the EAL, event=startup after it, event=usage for a bad argument; every
# line on stderr is valid logfmt, nothing goes to stdout.
. "$(dirname "$0")/lib.sh"
require_env openssl SK_SECKILLCTL SK_CONTROL SK_MYSQL_WRITER
tmp=$(mktemp -d)
prefix=skit_cfg_$$
trap 'rm -rf "$tmp" "/var/run/dpdk/$prefix"' EXIT

# run EXPECTED_STATUS NEEDLE CONFIG_TEXT [EAL args...]: the last stderr line
# must be a level=error line of the dataplane whose err= holds NEEDLE; no
# event=ready, nothing on stdout, every stderr line valid logfmt.
run() {
	local want=$1 needle=$2 text=$3 rc=0 last
	shift 3
	printf '%b' "$text" >"$tmp/c.ini"
	"$SK_DATAPLANE" --no-huge -m 256 --no-pci --file-prefix "$prefix" "$@" \
		-- --config "$tmp/c.ini" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	last=$(tail -n 1 "$tmp/err")
	if [ "$rc" = "$want" ] && [[ $last == *"level=error prog=seckill-dataplane event="*"err=\""*"$needle"* ]] &&
		! grep -q "event=ready" "$tmp/err" && [ ! -s "$tmp/out" ] &&
		itpy logfmt_check --quiet "$tmp/err"; then
		ok "exit $rc: $last"
	else
		bad "want exit $want and '$needle'; got exit $rc: $last"
	fi
}

PORT0='[port0]\ndevice = net_tap0\naddress = 198.18.0.1/24\n'
tap=skcfg$$
VDEV="--vdev=net_tap0,iface=$tap"

# Found in the file, before the EAL starts: no EAL state at all.
run 1 "c.ini:5: tcp.msss: unknown key" "${PORT0}[tcp]\nmsss = 1460\n" "$VDEV"
check "no EAL runtime dir after a file error" test ! -e "/var/run/dpdk/$prefix"
run 1 "c.ini:4: port0.rx_queues: 'many' is not a decimal number or 'auto'" "${PORT0}rx_queues = many\n" "$VDEV"
run 1 "c.ini: port0.device: no port configured" "[dataplane]\nmbufs = 4096\n" "$VDEV"
# The buy path's settings, also before the EAL: the secret is read first.
printf 'too-short-secret\n' >"$tmp/short"
run 1 "seckill.secret_file: $tmp/short: 16 bytes, at least 32 are needed" \
	"${PORT0}[seckill]\nsecret_file = $tmp/short\n[item.1]\ntotal = 5\n" "$VDEV"
run 1 "seckill.secret_file: /nonexistent/secret: No such file or directory" \
	"${PORT0}[seckill]\nsecret_file = /nonexistent/secret\n" "$VDEV"
run 1 "c.ini:6: seckill.ack_wait_ms: 0 is out of range 1..60000" \
	"${PORT0}[seckill]\nack = durable\nack_wait_ms = 0\n" "$VDEV"
run 1 "c.ini: seckill.secret_file: required when seckill.auth = on and items are configured or come from store.path" \
	"${PORT0}[item.1]\ntotal = 5\n" "$VDEV"
check "no EAL runtime dir after the seckill errors" test ! -e "/var/run/dpdk/$prefix"
rc=0
"$SK_DATAPLANE" --no-huge --no-pci -- --config /nonexistent/sk.ini >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "missing file: exit 1" "$rc" 1
check "missing file: one line naming it" grep -qxE \
	'ts=[^ ]+ level=error prog=seckill-dataplane event=config err="/nonexistent/sk.ini: No such file or directory"' "$tmp/err"
expect_eq "missing file: that line alone" "$(wc -l <"$tmp/err")" 1

# Arguments.
rc=0
"$SK_DATAPLANE" --no-huge --no-pci >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "no '--': usage error" "$rc" 2
check "no '--': says so" grep -q "level=error prog=seckill-dataplane event=usage msg=\"missing '-- --config FILE'" "$tmp/err"
rc=0
"$SK_DATAPLANE" --no-huge --no-pci -- --config "$tmp/c.ini" --bogus >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "unknown option: usage error" "$rc" 2
check "unknown option: named" grep -q "level=error .*event=usage option=--bogus " "$tmp/err"
rc=0
"$SK_DATAPLANE" --no-huge --no-pci -- --config "$tmp/c.ini" --log-level loud >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "bad --log-level: usage error" "$rc" 2
check "bad --log-level: named" grep -q "level=error .*event=usage option=--log-level value=loud " "$tmp/err"
# The level filter, on an error found after the EAL started (DPDK's own
# lines are logged then): at the default level they show, with --log-level
# error only the error does.
printf '%b' "[dataplane]\nmbufs = 300\nmbuf_cache = 32\n${PORT0}" >"$tmp/late.ini"
for lv in default error; do
	rc=0
	args=()
	[ "$lv" = default ] || args=(--log-level "$lv")
	"$SK_DATAPLANE" --no-huge -m 256 --no-pci --file-prefix "$prefix" "$VDEV" \
		-- --config "$tmp/late.ini" "${args[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	expect_eq "--log-level $lv: exit 1 on a late error" "$rc" 1
	check "--log-level $lv: the error is the last line" \
		bash -c "tail -n 1 '$tmp/err' | grep -q 'level=error prog=seckill-dataplane event=startup err=\"dataplane.mbufs: 300 is too small'"
	check "--log-level $lv: every line is logfmt" itpy logfmt_check "$tmp/err"
	[ "$lv" != default ] || check "default level: DPDK's lines logged (event=dpdk)" \
		grep -q "prog=seckill-dataplane event=dpdk " "$tmp/err"
done
check "--log-level error: no line below error" bash -c "! grep -v ' level=error ' '$tmp/err'"
rm -f "$tmp/late.ini"
rc=0
"$SK_DATAPLANE" --no-huge --no-pci -- >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "missing --config: usage error" "$rc" 2
rc=0
"$SK_DATAPLANE" -- --help >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "--help exits 0" "$rc" 0
check "--help prints usage" grep -q "usage: seckill-dataplane" "$tmp/out"

# Found after the EAL started: the process cleans up (tap removed).
run 1 "port1.device: cannot probe 'net_bogus0'" \
	"${PORT0}[port1]\ndevice = net_bogus0\naddress = 198.18.1.1/24\n" "$VDEV"
check "tap of port0 removed after a later port failed" bash -c "! ip link show $tap >/dev/null 2>&1"
run 1 "dataplane.mbufs: 300 is too small" "[dataplane]\nmbufs = 300\nmbuf_cache = 32\n${PORT0}" "$VDEV"
run 1 "port0.rx_queues: must be auto, 1 or the number of lcores (1)" "${PORT0}rx_queues = 3\n" "$VDEV" -l 0
run 1 "tcp.rcv_buf_size: 4096 must exceed http.head_max (8192)" "${PORT0}[tcp]\nrcv_buf_size = 4096\n" "$VDEV"
run 1 "tcp.rcv_buf_size: 9000 is less than http.head_max + http.body_max (8192 + 1024)" \
	"${PORT0}[tcp]\nrcv_buf_size = 9000\n" "$VDEV"
# The arena and the items come first after the EAL, before the ports.
run 1 "seckill.dedup_slots: cannot reserve the 65576 MiB arena" \
	"${PORT0}[seckill]\ndedup_slots = 2147483648\n" "$VDEV"
run 1 "item.5.end: must be after item.5.start (one is relative to the start, the other absolute)" \
	"${PORT0}[seckill]\nauth = off\n[item.5]\ntotal = 1\nstart = 8000000000\nend = +5\n" "$VDEV"
run 1 "item.6.dedup_slots: no room left in seckill.dedup_slots" \
	"${PORT0}[seckill]\nauth = off\ndedup_slots = 4096\n[item.5]\ntotal = 1\ndedup_slots = 4096\n[item.6]\ntotal = 1\n" "$VDEV"
check "no tap left behind" bash -c "! ip link show $tap >/dev/null 2>&1"

# [tls]: a bad certificate, key or setting refuses the start with one line
# that names the key and the file. Certificates made here (never
# committed): good ECDSA pairs, an RSA 1024 one, an expired one.
# pem NAME KEYSPEC - a self-signed certificate for shop.test in
# $tmp/NAME.pem, its key in $tmp/NAME.key.
pem() {
	local -a spec
	read -ra spec <<<"$2"
	(umask 077 && openssl req -x509 -new "${spec[@]}" -nodes -keyout "$tmp/$1.key" -out "$tmp/$1.pem" \
		-days 2 -subj /CN=shop.test -addext subjectAltName=DNS:shop.test 2>/dev/null)
}
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256"
pem ec "$EC"
pem ec2 "$EC"
pem rsa1024 "-newkey rsa:1024"
# Expired: openssl ca backdates a self-signed certificate to 2020.
mkdir "$tmp/ca"
touch "$tmp/ca/index.txt"
printf '[ca]\ndefault_ca = d\n[d]\ndatabase = %s\nnew_certs_dir = %s\nrand_serial = yes\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n' \
	"$tmp/ca/index.txt" "$tmp/ca" >"$tmp/ca.cnf"
# shellcheck disable=SC2086 # EC: the key options, word-split
(umask 077 && openssl req -new $EC -nodes -keyout "$tmp/old.key" -out "$tmp/old.csr" -subj /CN=shop.test 2>/dev/null)
openssl ca -batch -config "$tmp/ca.cnf" -selfsign -keyfile "$tmp/old.key" -in "$tmp/old.csr" -out "$tmp/old.pem" \
	-startdate 20200101000000Z -enddate 20200102000000Z -notext >/dev/null 2>&1
(umask 077 && head -c 16 /dev/urandom >"$tmp/short.ticket")

# run_tls KEY_REGEX TLS_LINES WORD...: the config PORT0 plus [tls] with
# TLS_LINES refuses the start (run 1 "tls."); the error line names a key
# that KEY_REGEX matches (tls.cert, tls.key ...) and holds each WORD (the
# file, the problem).
run_tls() {
	local re=$1 text=$2 w last
	shift 2
	run 1 "tls." "${PORT0}[tls]\nport = 443\n$text" "$VDEV"
	last=$(tail -n 1 "$tmp/err")
	check "  ... names $re" grep -qE -- "$re: " <<<"$last"
	for w in "$@"; do
		check "  ... says '$w'" grep -qF -- "$w" <<<"$last"
	done
}
pair="cert = $tmp/ec.pem\nkey = $tmp/ec.key\n"
run_tls 'tls\.cert' "cert = $tmp/nonexistent.pem\nkey = $tmp/ec.key\n" "$tmp/nonexistent.pem" "No such file"
run_tls 'tls\.key' "cert = $tmp/ec.pem\nkey = $tmp/nonexistent.key\n" "$tmp/nonexistent.key" "No such file"
run_tls 'tls\.(cert|key)' "cert = $tmp/ec.pem\nkey = $tmp/ec2.key\n" "$tmp/ec2.key" "match"
run_tls 'tls\.(cert|key)' "cert = $tmp/rsa1024.pem\nkey = $tmp/rsa1024.key\n" "rsa1024" "1024"
run_tls 'tls\.cert' "cert = $tmp/old.pem\nkey = $tmp/old.key\n" "$tmp/old.pem" "expired"
run_tls 'tls\.(cert|key)' "cert = $tmp/ec.pem, $tmp/ec2.pem\nkey = $tmp/ec.key\n"
run_tls 'tls\.min_version' "${pair}min_version = 1.1\n" "1.1"
run_tls 'tls\.ciphersuites' "${pair}ciphersuites = TLS_AES_128_CCM_SHA256\n" "TLS_AES_128_CCM_SHA256"
run_tls 'tls\.ciphersuites' "${pair}ciphersuites = TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-SHA\n" "ECDHE-RSA-AES128-SHA"
run_tls 'tls\.ticket_key_file' "${pair}ticket_key_file = $tmp/short.ticket\n" "$tmp/short.ticket" "16 bytes"
run_tls 'tls\.ticket_key_file' "${pair}ticket_key_file = $tmp/nonexistent.ticket\n" "$tmp/nonexistent.ticket" "No such file"
check "no tap left behind after the [tls] errors" bash -c "! ip link show $tap >/dev/null 2>&1"

# --------------------------------------------------------------------------
# One file for every daemon: seckillctl config check gives the daemons'
# own errors (the same loader), exit 0 / 1 / 2.
rc=0
"$SK_SECKILLCTL" config check "$REPO/config/seckill.ini" >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "config check seckill.ini: exit 0" "$rc" 0
expect_eq "config check seckill.ini: says ok" "$(cat "$tmp/out")" "$REPO/config/seckill.ini: ok"
rc=0
"$SK_SECKILLCTL" config check >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "config check without a FILE: usage, exit 2" "$rc" 2
rc=0
"$SK_SECKILLCTL" config check /nonexistent/sk.ini >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_eq "config check of a missing file: exit 1" "$rc" 1
check "config check of a missing file: says so" grep -q "/nonexistent/sk.ini: No such file" "$tmp/err"
printf '[mysql]\nsocket = /run/mysqld/mysqld.sock\n[kafka]\nbootstrap = 127.0.0.1:9092\n' >"$tmp/w.ini"
check "config check --for mysql-writer: a writer's host needs no [port0]" \
	"$SK_SECKILLCTL" config check "$tmp/w.ini" --for mysql-writer
check "config check of the same file for every daemon: refused (no port)" \
	bash -c "! '$SK_SECKILLCTL' config check '$tmp/w.ini' 2>/dev/null"

# ctl_check WHO NEEDLE TEXT: seckillctl config check refuses PORT0 + TEXT
# (exit 1, one line holding NEEDLE), and daemon WHO (control, mysql-writer
# or none) refuses it with that very message in its err= (exit 2).
ctl_check() {
	local who=$1 needle=$2 rc=0 msg
	printf '%b' "${PORT0}[seckill]\nauth = off\n$3" >"$tmp/k.ini"
	"$SK_SECKILLCTL" config check "$tmp/k.ini" >"$tmp/out" 2>"$tmp/err" || rc=$?
	msg=$(sed -n 's/^seckillctl: //p' "$tmp/err")
	if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [[ $msg == "$tmp/k.ini:"*"$needle"* ]]; then
		ok "config check: exit 1: $msg"
	else
		bad "config check: want exit 1 and '$needle'; got exit $rc: $(cat "$tmp/err")"
		return
	fi
	rc=0
	case $who in
	control) "$SK_CONTROL" -- --config "$tmp/k.ini" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$? ;;
	mysql-writer) "$SK_MYSQL_WRITER" run --config "$tmp/k.ini" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$? ;;
	*) return ;;
	esac
	if [ "$rc" = 2 ] && grep -qF "event=config " "$tmp/err" && grep -qF "err=\"$msg\"" "$tmp/err"; then
		ok "  ... seckill-$who says the same (exit 2)"
	else
		bad "  ... seckill-$who: want exit 2 and err=\"$msg\"; got exit $rc: $(tail -n 1 "$tmp/err")"
	fi
}
ctl_check control "store.map_mb: 0 is out of range 1..16777216" "[store]\npath = $tmp/st\nmap_mb = 0\n"
ctl_check control "control.log_level: 'loud' is not one of" "[control]\nlog_level = loud\n"
ctl_check control "admin.port: 65536 is out of range 0..65535" "[admin]\nport = 65536\n"
ctl_check control "admin.token_file: required when admin.port is set" "[admin]\nport = 8081\n"
ctl_check control "kafka.payments_topic: blanks and control characters" "[kafka]\npayments_topic = a b\n"
ctl_check control "cluster.member: 'Shop' is not a member id" "[cluster]\nmember = Shop\n"
ctl_check control "seckill.store: a deprecated alias of store.path" "store = /a\n[store]\npath = /a\n"
ctl_check control "kafka.bogus: unknown key" "[kafka]\nbogus = 1\n"
ctl_check mysql-writer "mysql.port: 0 is out of range 1..65535" "[mysql]\nport = 0\n"
ctl_check mysql-writer "mysql.log_level: 'x' is not one of" "[mysql]\nlog_level = x\n"
ctl_check mysql-writer "kafka.orders_topic: blanks" "[kafka]\norders_topic = a b\n"
ctl_check none "tcp.mss: 80 is out of range 536..9000" "[tcp]\nmss = 80\n"
ctl_check none "port0.rx_queues: 'many' is not a decimal number" "[port0]\nrx_queues = many\n"
# ... while each daemon ignores the values it does not read.
printf '%b' "[port0]\nrx_queues = many\n[store]\nmap_mb = 0\n[mysql]\nport = 3306\n" >"$tmp/w2.ini"
rc=0
"$SK_MYSQL_WRITER" run --config "$tmp/w2.ini" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
check "the writer ignores the dataplane's and control's bad values (then wants --bootstrap)" \
	grep -q 'event=usage cmd=run msg="--bootstrap is required' "$tmp/err"
finish
