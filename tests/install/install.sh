#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# install.sh - the operator's kit of a build (docs/install.md):
#   1. "meson install --destdir" puts exactly the expected files in place:
#      daemons and the loadgen in sbindir, seckillctl and seckill-token in
#      bindir, no test tool unless -Dinstall_test_tools=true, the example
#      config in <sysconfdir>/seckill/, the units, the tmpfiles.d entry, the
#      dataplane units' helper, one man page per program; a second
#      install keeps the operator's edited config;
#   2. the installed config and units agree (token secret, store, paths);
#   3. "systemd-analyze verify" of the installed units, under the destdir as
#      root (with the host's own units copied in, so that dev-hugepages.mount
#      and friends resolve) and MANPATH on its man pages: no output at all;
#      then mistakes planted one at a time must each be reported;
#   4. every man page passes "groff -man -ww -z" silently, and names every
#      long option of its program's --help (seckillctl: every command too).
#
# Run by meson (suite install) with SK_BUILD, SK_PREFIX and the install
# dirs of the build (SK_BINDIR, SK_SBINDIR, ... absolute) in the environment.
. "$(dirname "$0")/../integration/lib.sh"

# man: systemd-analyze verify runs it on each Documentation=man: page.
for t in systemd-analyze groff man python3; do
	command -v "$t" >/dev/null || skip "needs $t (Debian: systemd, groff-base, man-db, python3)"
done
[ -n "${SK_BUILD:-}" ] || skip "SK_BUILD is not set (run through meson test)"

tmp=$(mktemp -d /tmp/sk-install.XXXXXX)
at_exit rm_tmp
dest=$tmp/root

# --------------------------------------------------------------------------
# 1. the file set

if ! meson install -C "$SK_BUILD" --no-rebuild --destdir "$dest" --quiet >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	bad "meson install --destdir"
	finish
	exit 1
fi
ok "meson install --destdir $dest"

expected=(
	"$SK_BINDIR/seckillctl"
	"$SK_BINDIR/seckill-token"
	"$SK_SBINDIR/seckill-control"
	"$SK_SBINDIR/seckill-dataplane"
	"$SK_SBINDIR/seckill-loadgen"
	"$SK_SBINDIR/seckill-mysql-writer"
	"$SK_LIBEXECDIR/seckill/seckill-dataplane-helper"
	"$SK_SYSCONFDIR/seckill/seckill.env"
	"$SK_SYSCONFDIR/seckill/seckill.ini"
	"$SK_UNITDIR/seckill-control.service"
	"$SK_UNITDIR/seckill-dataplane.service"
	"$SK_UNITDIR/seckill-mysql-writer.service"
	"$SK_TMPFILESDIR/seckill.conf"
	"$SK_MANDIR/man1/seckill-token.1"
	"$SK_MANDIR/man8/seckill-control.8"
	"$SK_MANDIR/man8/seckill-dataplane.8"
	"$SK_MANDIR/man8/seckill-loadgen.8"
	"$SK_MANDIR/man8/seckill-mysql-writer.8"
	"$SK_MANDIR/man8/seckillctl.8"
)
if [ "$SK_TEST_TOOLS" = true ]; then
	expected+=("$SK_BINDIR/seckill-crowd" "$SK_BINDIR/seckill-kafka")
fi
printf '%s\n' "${expected[@]}" | sort >"$tmp/want"
(cd "$dest" && find . -type f -o -type l) | sed 's/^\.//' | sort >"$tmp/got"
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	ok "installed files: exactly the ${#expected[@]} expected (test tools: $SK_TEST_TOOLS)"
else
	cat "$tmp/diff"
	bad "installed files differ from the expected set (- missing, + unexpected)"
fi

notx=
for f in "$SK_BINDIR"/seckill{ctl,-token} "$SK_SBINDIR"/seckill-{control,dataplane,loadgen,mysql-writer} \
	"$SK_LIBEXECDIR/seckill/seckill-dataplane-helper"; do
	[ -x "$dest$f" ] || notx="$notx $f"
done
if [ -z "$notx" ]; then
	ok "programs and the helper are executable"
else
	bad "not executable:$notx"
fi

for f in "$SK_SYSCONFDIR"/seckill/seckill.{ini,env}; do
	expect_eq "$f: mode" "$(stat -c %a "$dest$f")" 644
done

# A second install over the first (an upgrade from source): the operator's
# edited configuration stays, everything else is replaced.
ini=$dest$SK_SYSCONFDIR/seckill/seckill.ini
unit=$dest$SK_UNITDIR/seckill-control.service
cp "$ini" "$tmp/ini.orig"
cp "$unit" "$tmp/unit.orig"
echo "# the operator's edit" >>"$ini"
echo "# changed" >>"$unit"
if meson install -C "$SK_BUILD" --no-rebuild --destdir "$dest" --quiet >"$tmp/install.log" 2>&1; then
	expect_eq "a re-install keeps the edited seckill.ini" "$(tail -n 1 "$ini")" "# the operator's edit"
	check "a re-install replaces a unit" cmp -s "$unit" "$tmp/unit.orig"
else
	cat "$tmp/install.log"
	bad "meson install over an installed tree"
fi
cp "$tmp/ini.orig" "$ini"

# --------------------------------------------------------------------------
# 2. config and units agree

units=$dest$SK_UNITDIR
expect_eq "seckill.ini: the token secret is in <sysconfdir>/seckill" \
	"$(sed -n 's/^secret_file *= *\([^ ]*\).*/\1/p' "$ini")" "$SK_SYSCONFDIR/seckill/token.secret"
# [store] path: the one store of every daemon (no --store in any unit).
store=$(sed -n '/^\[store\]/,/^\[/s/^path *= *\([^ ]*\).*/\1/p' "$ini")
expect_eq "seckill.ini names the store once, in [store] path" "$store" /var/lib/seckill/orders
check "no unit passes --store (the file names it)" bash -c "! grep -q -- '--store' '$units'/*.service"
for u in seckill-control seckill-mysql-writer; do
	expect_match "$u.service runs the installed binary on the installed config" \
		"$(grep '^ExecStart=' "$units/$u.service")" \
		"^ExecStart=$SK_SBINDIR/$u .*--config $SK_SYSCONFDIR/seckill/seckill.ini \\\$SECKILL_[A-Z_]*_ARGS\$"
done
env_file=$dest$SK_SYSCONFDIR/seckill/seckill.env
check "seckill.env: only EAL options are set (the rest is in seckill.ini)" \
	bash -c "! grep -E '^SECKILL_[A-Z_]*_ARGS=.' '$env_file'"
if "$dest$SK_BINDIR/seckillctl" config check "$ini" >"$tmp/check.log" 2>&1; then
	ok "seckillctl config check: the installed seckill.ini is good for every daemon"
else
	cat "$tmp/check.log"
	bad "seckillctl config check refuses the installed seckill.ini"
fi
expect_match "the dataplane unit runs the installed binary on the installed config" \
	"$(grep '^ExecStart=' "$units/seckill-dataplane.service")" \
	"^ExecStart=$SK_SBINDIR/seckill-dataplane --file-prefix seckill .* -- --config $SK_SYSCONFDIR/seckill/seckill.ini \\\$SECKILL_DATAPLANE_ARGS\$"
expect_eq "the control plane's EAL file prefix is the dataplane's" \
	"$(sed -n 's/^ExecStart=.*seckill-control --file-prefix \([^ ]*\) .*/\1/p' "$units/seckill-control.service")" seckill
check "the control plane is bound to the dataplane (BindsTo, PartOf, After, WantedBy)" \
	grep -qzE 'BindsTo=seckill-dataplane\.service.*PartOf=seckill-dataplane\.service.*After=seckill-dataplane\.service.*WantedBy=seckill-dataplane\.service' \
	"$units/seckill-control.service"
for u in seckill-dataplane seckill-control seckill-mysql-writer; do
	check "$u.service restarts on failure and reads <sysconfdir>/seckill/seckill.env" \
		grep -qzE "EnvironmentFile=-$SK_SYSCONFDIR/seckill/seckill\.env.*Restart=on-failure" "$units/$u.service"
done
for d in /run/seckill /var/lib/seckill; do
	check "tmpfiles.d makes $d (0750, root)" \
		grep -qE "^d +$d +0750 root root " "$dest$SK_TMPFILESDIR/seckill.conf"
done
check "the store is under /var/lib/seckill (StateDirectory=seckill)" \
	test "${store#/var/lib/seckill/}" != "$store"

# --------------------------------------------------------------------------
# 3. systemd-analyze verify, with the units' Documentation= man pages

# The units name dev-hugepages.mount, network-online.target ...: the host's
# units, copied into the root (never over ours).
mkdir -p "$dest/usr/lib/systemd/system"
cp -an /usr/lib/systemd/system/. "$dest/usr/lib/systemd/system/"

# verify UNIT... - systemd-analyze verify under the root; its output in
# $tmp/verify.log; 0 if it exits 0 and prints nothing.
verify() {
	MANPATH=$dest$SK_MANDIR systemd-analyze verify --root="$dest" "$@" >"$tmp/verify.log" 2>&1 &&
		[ ! -s "$tmp/verify.log" ]
}
if verify seckill-dataplane.service seckill-control.service seckill-mysql-writer.service; then
	ok "systemd-analyze verify: the three units, silently"
else
	cat "$tmp/verify.log"
	bad "systemd-analyze verify of the installed units"
fi

# plant DESC UNIT SED - the unit changed by sed expression SED must fail
# verification; the unit is restored afterwards.
plant() {
	local desc=$1 unit=$units/$2 expr=$3
	cp "$unit" "$tmp/unit.orig"
	sed -i "$expr" "$unit"
	if cmp -s "$unit" "$tmp/unit.orig"; then
		bad "planting '$desc' changed nothing (sed $expr)"
	elif verify "$2"; then
		bad "systemd-analyze verify missed a planted mistake: $desc"
	else
		ok "a planted mistake is reported: $desc ($(head -n 1 "$tmp/verify.log"))"
	fi
	cp "$tmp/unit.orig" "$unit"
}
plant "ExecStart of a binary not installed" seckill-dataplane.service \
	's|/seckill-dataplane --file-prefix|/seckill-dataplan --file-prefix|'
plant "BindsTo= a unit that does not exist" seckill-control.service \
	's|^BindsTo=seckill-dataplane.service|BindsTo=seckill-dataplan.service|'
plant "a misspelt directive" seckill-mysql-writer.service 's|^Restart=on-failure|Restrat=on-failure|'
plant "a man page that is not installed" seckill-control.service \
	's|^Documentation=man:seckill-control(8)|Documentation=man:seckill-controller(8)|'
if verify seckill-dataplane.service seckill-control.service seckill-mysql-writer.service; then
	ok "the restored units verify again"
else
	cat "$tmp/verify.log"
	bad "the restored units do not verify"
fi

# --------------------------------------------------------------------------
# 4. man pages: groff warnings, and every option of --help

for page in "$dest$SK_MANDIR"/man*/*; do
	if groff -man -ww -z "$page" >"$tmp/groff.log" 2>&1 && [ ! -s "$tmp/groff.log" ]; then
		ok "groff -man -ww -z $(basename "$page"): no warning"
	else
		cat "$tmp/groff.log"
		bad "groff warns on $(basename "$page")"
	fi
done

# helptext PROGRAM ARGS... - the program's help (stdout and stderr, any
# exit status: the dataplane's usage without -- exits 2).
helptext() {
	"$@" 2>&1 || true
}

# options_in_man DESC PAGE HELPFILE - every long option of HELPFILE is in PAGE.
options_in_man() {
	local desc=$1 page=$2 help=$3 opts missing
	mapfile -t opts < <(itpy install_check options <"$help")
	if [ "${#opts[@]}" -lt 2 ]; then
		bad "$desc: its help lists ${#opts[@]} long options (cat $help)"
		return
	fi
	if missing=$(itpy install_check man-missing "$page" "${opts[@]}"); then
		ok "$desc: all ${#opts[@]} long options of --help are in $(basename "$page")"
	else
		bad "$desc: options of --help missing from $(basename "$page"): $(echo "$missing" | tr '\n' ' ')"
	fi
}

man8=$dest$SK_MANDIR/man8
sbin=$dest$SK_SBINDIR
bin=$dest$SK_BINDIR
helptext "$sbin/seckill-dataplane" -- --help >"$tmp/h.dataplane"
options_in_man seckill-dataplane "$man8/seckill-dataplane.8" "$tmp/h.dataplane"
helptext "$sbin/seckill-control" --help >"$tmp/h.control"
options_in_man seckill-control "$man8/seckill-control.8" "$tmp/h.control"
helptext "$sbin/seckill-mysql-writer" --help >"$tmp/h.writer"
options_in_man seckill-mysql-writer "$man8/seckill-mysql-writer.8" "$tmp/h.writer"
helptext "$sbin/seckill-loadgen" -- --help >"$tmp/h.loadgen"
options_in_man seckill-loadgen "$man8/seckill-loadgen.8" "$tmp/h.loadgen"
helptext "$bin/seckill-token" --help >"$tmp/h.token"
options_in_man seckill-token "$dest$SK_MANDIR/man1/seckill-token.1" "$tmp/h.token"

# seckillctl: the main help, then each command's.
helptext "$bin/seckillctl" --help >"$tmp/h.ctl"
if mapfile -t cmds < <(itpy install_check commands <"$tmp/h.ctl") && [ "${#cmds[@]}" -ge 8 ]; then
	ok "seckillctl --help lists ${#cmds[@]} commands"
else
	bad "seckillctl --help: commands not found (cat $tmp/h.ctl)"
fi
for c in "${cmds[@]}"; do
	# shellcheck disable=SC2086 # the command's words
	helptext "$bin/seckillctl" $c --help >>"$tmp/h.ctl"
done
options_in_man "seckillctl (and each command's --help)" "$man8/seckillctl.8" "$tmp/h.ctl"
if missing=$(itpy install_check man-missing "$man8/seckillctl.8" "${cmds[@]}"); then
	ok "seckillctl.8 describes every command"
else
	bad "commands missing from seckillctl.8: $(echo "$missing" | tr '\n' ' ')"
fi

finish
