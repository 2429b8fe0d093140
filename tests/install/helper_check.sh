#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# helper_check.sh - seckill-dataplane-helper's "check" (the dataplane unit's
# ExecStartPre: hugepages, NIC bindings) and "cleanup" (ExecStartPre and
# ExecStopPost: what a dead DPDK process left) on a made-up root: /proc/mounts,
# /sys/kernel/mm/hugepages, /sys/bus/pci/devices, /dev/vfio, a hugetlbfs
# folder and /var/run/dpdk, through the helper's --root. Each case: the exit
# status and the line that names the problem and its fix.
. "$(dirname "$0")/../integration/lib.sh"

command -v python3 >/dev/null || skip "needs python3"
[ -f "${SK_HELPER:-}" ] || skip "SK_HELPER is not set (run through meson test)"

tmp=$(mktemp -d /tmp/sk-helper.XXXXXX)
holders=()
stop_holders() {
	local p
	for p in "${holders[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}
at_exit stop_holders
at_exit rm_tmp
r=$tmp/root

helper() {
	python3 "$SK_HELPER" --root "$r" "$@"
}

# reset_root - a machine with 512 free 2 MiB pages on a mounted hugetlbfs
# and NIC 0000:03:00.0 bound to vfio-pci in IOMMU group 12.
reset_root() {
	rm -rf "$r"
	mkdir -p "$r/proc" "$r/sys/kernel/mm/hugepages/hugepages-2048kB" "$r/dev/hugepages" \
		"$r/dev/vfio" "$r/var/run/dpdk" "$r/sys/bus/pci/drivers/vfio-pci" \
		"$r/sys/kernel/iommu_groups/12"
	echo 'hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0' >"$r/proc/mounts"
	echo 512 >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	add_nic 0000:03:00.0 vfio-pci 12
	touch "$r/dev/vfio/vfio" "$r/dev/vfio/12"
}

# add_nic ADDR DRIVER|- [GROUP]
add_nic() {
	local d=$r/sys/bus/pci/devices/$1
	mkdir -p "$d"
	if [ "$2" != - ]; then
		mkdir -p "$r/sys/bus/pci/drivers/$2"
		ln -sfn "../../../bus/pci/drivers/$2" "$d/driver"
	fi
	[ -z "${3:-}" ] || ln -sfn "../../../kernel/iommu_groups/$3" "$d/iommu_group"
}

cfg=$tmp/seckill.ini
cat >"$cfg" <<'EOF'
[dataplane]
lcores = 1
[port0]
device = 0000:03:00.0   # the NIC
address = 198.18.0.1/24
[port1]
device = net_memif0,role=server,socket=/run/seckill/memif.sock
address = 198.19.0.1/16
# device = 0000:05:00.0 is commented out
[tcp]
; device = 0000:06:00.0 is not a port key
EOF

# case DESC WANT_RC WANT_TEXT HELPER_ARGS... - run the helper; its exit
# status must be WANT_RC and its output must hold WANT_TEXT (a fixed string).
case_() {
	local desc=$1 want_rc=$2 want=$3 rc=0
	shift 3
	helper "$@" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = "$want_rc" ] && grep -qF -- "$want" "$tmp/out"; then
		ok "$desc: exit $rc, '$want'"
	else
		bad "$desc: exit $rc (want $want_rc), output: $(cat "$tmp/out")"
	fi
}

reset_root
case_ "all there" 0 "PCI devices ok: 0000:03:00.0" check --config "$cfg"

reset_root
: >"$r/proc/mounts"
case_ "no hugetlbfs mounted" 1 "no hugetlbfs is mounted: start dev-hugepages.mount" check --config "$cfg"

reset_root
echo 0 >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
case_ "no free hugepage" 1 "no free hugepages (2048kB: 0): reserve some" check --config "$cfg"
case_ "no free hugepage but --no-huge" 0 "PCI devices ok" check --config "$cfg" -- -l 1 --no-huge

reset_root
add_nic 0000:03:00.0 ixgbe
case_ "NIC on its kernel driver" 1 \
	"$cfg:4: device: 0000:03:00.0 is bound to the kernel driver ixgbe, not to one DPDK can use: dpdk-devbind.py -b vfio-pci 0000:03:00.0" \
	check --config "$cfg"

reset_root
rm "$r/sys/bus/pci/devices/0000:03:00.0/driver"
case_ "NIC on no driver" 1 "0000:03:00.0 is bound to no driver: dpdk-devbind.py -b vfio-pci" check --config "$cfg"

reset_root
rm "$r/dev/vfio/12"
case_ "vfio-pci without its group node" 1 "no /dev/vfio/12 for its IOMMU group 12" check --config "$cfg"
touch "$r/dev/vfio/noiommu-12"
case_ "vfio-pci in no-IOMMU mode" 0 "PCI devices ok: 0000:03:00.0" check --config "$cfg"

reset_root
rm "$r/sys/bus/pci/devices/0000:03:00.0/iommu_group"
case_ "vfio-pci without an IOMMU group" 1 "has no IOMMU group: turn the IOMMU on" check --config "$cfg"

reset_root
add_nic 0000:03:00.0 mlx5_core 12
case_ "a bifurcated driver (mlx5_core)" 0 "PCI devices ok: 0000:03:00.0" check --config "$cfg"

reset_root
rm -r "$r/sys/bus/pci/devices/0000:03:00.0"
case_ "NIC not on this machine" 1 "no PCI device 0000:03:00.0 on this machine" check --config "$cfg"

reset_root
case_ "EAL -a names a NIC on no DPDK driver" 1 "EAL option -a: no PCI device 0000:04:00.1" \
	check --config "$cfg" -- -a 04:00.1,rxq=2
add_nic 0000:04:00.1 uio_pci_generic
case_ "EAL --allow= on uio_pci_generic, short form" 0 "PCI devices ok: 0000:03:00.0 0000:04:00.1" \
	check --config "$cfg" -- --allow=04:00.1
case_ "a missing config" 1 "cannot read $tmp/nothere.ini" check --config "$tmp/nothere.ini"
case_ "check without --config" 1 "check --config FILE" check
case_ "cleanup without --file-prefix" 1 "--file-prefix P is required" cleanup
case_ "a prefix with a slash" 1 "--file-prefix P is required" cleanup --file-prefix ../x

# cleanup: what no process locks goes; what one does stays, with the
# runtime folder; another prefix's files are never touched.
reset_root
hp=$r/dev/hugepages
mkdir -p "$r/var/run/dpdk/seckill"
touch "$hp/seckillmap_0" "$hp/seckillmap_1" "$hp/othermap_0" "$hp/seckill2map_0" \
	"$r/var/run/dpdk/seckill/config"

# hold KIND FILE - a process holding a lock on FILE, as DPDK would, until
# its stdin closes (release); its PID in holders, its stdin's fd in HOLD_FD.
hold() {
	local line=
	coproc HOLD { python3 "$IT_PY/install_check.py" hold-lock "$1" "$2"; }
	holders+=("$HOLD_PID")
	read -r -t 20 line <&"${HOLD[0]}" || true
	[ "$line" = locked ] || bad "the lock holder on $2 did not start"
	HOLD_FD=${HOLD[1]}
}
release() {
	local pid=${holders[-1]}
	exec {HOLD_FD}>&-
	wait "$pid" 2>/dev/null || true
}

hold flock "$hp/seckillmap_1"
case_ "cleanup while a secondary maps a page" 0 \
	"cleanup seckill: hugepage files removed 1, in use 1; /var/run/dpdk/seckill kept (in use)" \
	cleanup --file-prefix seckill
check "the unlocked page file is gone" test ! -e "$hp/seckillmap_0"
check "the locked page file stays" test -e "$hp/seckillmap_1"
check "other prefixes' files stay" test -e "$hp/othermap_0" -a -e "$hp/seckill2map_0"
release

hold fcntl "$r/var/run/dpdk/seckill/config"
case_ "cleanup while a primary holds its config" 0 \
	"hugepage files removed 1, in use 0; /var/run/dpdk/seckill kept (in use)" cleanup --file-prefix seckill
release
case_ "cleanup once nothing is in use" 0 \
	"hugepage files removed 0, in use 0; /var/run/dpdk/seckill removed" cleanup --file-prefix seckill
check "the runtime folder is gone" test ! -e "$r/var/run/dpdk/seckill"
check "other prefixes' files still stay" test -e "$hp/othermap_0" -a -e "$hp/seckill2map_0"
case_ "cleanup with nothing left" 0 "removed 0, in use 0; /var/run/dpdk/seckill absent" \
	cleanup --file-prefix seckill

finish
