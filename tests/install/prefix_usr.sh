#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prefix_usr.sh - a packager's build: "meson setup --prefix=/usr
# -Dinstall_test_tools=true" (configured only, nothing compiled) must plan
# to install exactly these paths: the config in /etc/seckill (meson's
# sysconfdir for prefix /usr), the units in /usr/lib/systemd/system, the
# test tools in /usr/bin; and the configured units must name those paths.
# The config (/etc/seckill/seckill.ini, seckill.env) is copied by an install
# script (never over an operator's copy), which the plan does not list: its
# folder is the one the units name, the same meson variable.
. "$(dirname "$0")/../integration/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
[ -n "${SK_SRC:-}" ] || skip "SK_SRC is not set (run through meson test)"

tmp=$(mktemp -d /tmp/sk-prefix-usr.XXXXXX)
at_exit rm_tmp

if ! meson setup "$tmp/build" "$SK_SRC" --prefix=/usr -Dinstall_test_tools=true -Dtests=false \
	>"$tmp/setup.log" 2>&1; then
	tail -n 30 "$tmp/setup.log"
	bad "meson setup --prefix=/usr -Dinstall_test_tools=true"
	finish
	exit 1
fi
ok "meson setup --prefix=/usr -Dinstall_test_tools=true -Dtests=false"

meson introspect "$tmp/build" --installed | itpy install_check installed >"$tmp/got"
sort >"$tmp/want" <<'EOF'
/usr/bin/seckill-crowd
/usr/bin/seckill-kafka
/usr/bin/seckill-token
/usr/bin/seckillctl
/usr/sbin/seckill-control
/usr/sbin/seckill-dataplane
/usr/sbin/seckill-loadgen
/usr/sbin/seckill-mysql-writer
/usr/libexec/seckill/seckill-dataplane-helper
/usr/lib/systemd/system/seckill-control.service
/usr/lib/systemd/system/seckill-dataplane.service
/usr/lib/systemd/system/seckill-mysql-writer.service
/usr/lib/tmpfiles.d/seckill.conf
/usr/share/man/man1/seckill-token.1
/usr/share/man/man8/seckill-control.8
/usr/share/man/man8/seckill-dataplane.8
/usr/share/man/man8/seckill-loadgen.8
/usr/share/man/man8/seckill-mysql-writer.8
/usr/share/man/man8/seckillctl.8
EOF
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	ok "install plan: exactly the $(wc -l <"$tmp/want") expected paths"
else
	cat "$tmp/diff"
	bad "install plan differs (- missing, + unexpected)"
fi

dist=$tmp/build/dist
# The units' $VARIABLES are systemd's (from seckill.env), not the shell's.
# shellcheck disable=SC2016
expect_eq "the dataplane unit's ExecStart" \
	"$(grep '^ExecStart=' "$dist/seckill-dataplane.service")" \
	'ExecStart=/usr/sbin/seckill-dataplane --file-prefix seckill $SECKILL_DATAPLANE_EAL -- --config /etc/seckill/seckill.ini $SECKILL_DATAPLANE_ARGS'
# shellcheck disable=SC2016
expect_eq "the control unit's ExecStart" \
	"$(grep '^ExecStart=' "$dist/seckill-control.service")" \
	'ExecStart=/usr/sbin/seckill-control --file-prefix seckill $SECKILL_CONTROL_EAL -- --config /etc/seckill/seckill.ini $SECKILL_CONTROL_ARGS'
# shellcheck disable=SC2016
expect_eq "the writer unit's ExecStart" \
	"$(grep '^ExecStart=' "$dist/seckill-mysql-writer.service")" \
	'ExecStart=/usr/sbin/seckill-mysql-writer run --config /etc/seckill/seckill.ini $SECKILL_MYSQL_WRITER_ARGS'
expect_eq "the units' environment file" \
	"$(grep -h '^EnvironmentFile=' "$dist"/seckill-*.service | sort -u)" \
	'EnvironmentFile=-/etc/seckill/seckill.env'
expect_eq "the dataplane helper's path in the units" \
	"$(grep -ho '^Exec[A-Za-z]*=[^ ]*seckill-dataplane-helper' "$dist/seckill-dataplane.service" |
		sed 's/^[^=]*=//' | sort -u)" /usr/libexec/seckill/seckill-dataplane-helper
expect_eq "the config's token secret" \
	"$(sed -n 's/^secret_file *= *\([^ ]*\).*/\1/p' "$dist/seckill.ini")" /etc/seckill/token.secret
check "no @VAR@ left in the units" \
	bash -c '! grep -n "@[A-Z_]*@" "$@"' _ "$dist"/seckill-*.service

finish
