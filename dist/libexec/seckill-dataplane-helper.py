#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""seckill-dataplane-helper - what systemd runs around seckill-dataplane
(dist/systemd/seckill-dataplane.service.in, docs/install.md).

  seckill-dataplane-helper cleanup --file-prefix P
      ExecStartPre and ExecStopPost: remove what a DPDK process of prefix P
      left behind (its hugepage files <hugetlbfs>/<P>map_*, and once none is
      in use, its runtime folder /var/run/dpdk/<P>/). A file some process
      still maps is kept: DPDK holds a shared flock on every hugepage file
      it maps, and DPDK's own start-up removes only the files it can lock
      exclusively; so does this. Exit 0 (1 on a bad argument).

  seckill-dataplane-helper check --config FILE [-- EAL OPTIONS]
      ExecStartPre: hugetlbfs is mounted and some hugepage is free (unless
      the EAL options say --no-huge); every PCI device of the config's
      [portN] device keys and of -a/--allow is present and bound to a
      driver DPDK can use (vfio-pci, uio_pci_generic, igb_uio, or the
      bifurcated mlx4_core/mlx5_core), and a vfio-pci device's IOMMU group
      has its /dev/vfio node. One line per problem on stderr, naming the
      fix; exit 1 if any, 0 if none.

  seckill-dataplane-helper wait-ready --file-prefix P [--pid PID] [--timeout S]
      ExecStartPost: wait until the dataplane of prefix P answers the
      telemetry command /seckill/stats (it registers it once its ports are
      up, just before its "ready" line), so that units ordered after it
      (seckill-control, a DPDK secondary) start against a complete arena.
      With PID (the unit's $MAINPID), the socket must belong to that
      process, and its exit ends the wait at once. Exit 0 when ready, 1
      when PID exited or S seconds (default 110) passed.

--root DIR (before the command; tests only) reads /proc, /sys, /dev, the
hugetlbfs mounts and /var/run/dpdk under DIR.
"""
import errno
import fcntl
import json
import os
import re
import shutil
import socket
import sys
import time

PROG = "seckill-dataplane-helper"
ROOT = ""
RUNTIME = "/var/run/dpdk"
# Drivers a DPDK PMD can drive a PCI NIC through; mlx4/mlx5 are bifurcated
# (the kernel driver stays bound).
DPDK_DRIVERS = ("vfio-pci", "uio_pci_generic", "igb_uio")
BIFURCATED = ("mlx4_core", "mlx5_core")
PCI_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


def path(p):
    """p (absolute) under --root."""
    return ROOT + p


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def usage(msg):
    say(f"{msg} (see the top of this file, or docs/install.md)")
    sys.exit(1)


def good_prefix(p):
    return p != "" and "/" not in p and p not in (".", "..")


# --------------------------------------------------------------- hugetlbfs


def hugetlbfs_mounts():
    """Mount points of every hugetlbfs, from /proc/mounts, each once (a
    mount point may be listed many times: hugetlbfs mounted over itself)."""
    out = []
    try:
        with open(path("/proc/mounts")) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 3 and fields[2] == "hugetlbfs":
                    m = fields[1].replace("\\040", " ")
                    if m not in out:
                        out.append(m)
    except OSError as e:
        say(f"cannot read /proc/mounts: {e.strerror}")
    return out


def free_hugepages():
    """{page size name: free pages} from /sys/kernel/mm/hugepages."""
    base = path("/sys/kernel/mm/hugepages")
    out = {}
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return out
    for d in names:
        try:
            with open(os.path.join(base, d, "free_hugepages")) as f:
                out[d.removeprefix("hugepages-")] = int(f.read().strip())
        except (OSError, ValueError):
            continue
    return out


# ----------------------------------------------------------------- cleanup


def try_remove_locked(f):
    """Unlink f if no process holds a lock on it (DPDK's clear_hugedir rule).
    True if removed (or already gone)."""
    try:
        fd = os.open(f, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    try:
        os.unlink(f)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
    return True


def primary_alive(rundir):
    """Whether a DPDK primary holds the write lock on rundir/config."""
    try:
        fd = os.open(os.path.join(rundir, "config"), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError as e:
        return e.errno in (errno.EACCES, errno.EAGAIN)
    finally:
        os.close(fd)


def cmd_cleanup(prefix):
    removed = kept = 0
    seen = set()  # (device, inode): one file seen through two mounts counts once
    for m in hugetlbfs_mounts():
        try:
            names = os.listdir(path(m))
        except OSError:
            continue
        for n in sorted(names):
            if not n.startswith(prefix + "map_"):
                continue
            f = os.path.join(path(m), n)
            try:
                st = os.stat(f)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            if try_remove_locked(f):
                removed += 1
            else:
                kept += 1
    rundir = path(f"{RUNTIME}/{prefix}")
    rundir_state = "absent"
    if os.path.isdir(rundir):
        if kept == 0 and not primary_alive(rundir):
            shutil.rmtree(rundir, ignore_errors=True)
            rundir_state = "removed"
        else:
            rundir_state = "kept (in use)"
    print(f"{PROG}: cleanup {prefix}: hugepage files removed {removed}, in use {kept}; "
          f"{RUNTIME}/{prefix} {rundir_state}", flush=True)
    return 0


# ------------------------------------------------------------------- check


def config_devices(config):
    """(line number, value) of every device key of a [portN] section."""
    out = []
    section = ""
    with open(config) as f:
        for no, line in enumerate(f, 1):
            # A comment starts a line or follows a blank (docs/operations.md).
            line = re.sub(r"(^|\s)[#;].*$", "", line).strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif "=" in line and re.fullmatch(r"port[0-9]+", section):
                k, v = (x.strip() for x in line.split("=", 1))
                if k == "device":
                    out.append((no, v))
    return out


def eal_devices(args):
    """Values of -a/--allow (and the old -w/--pci-whitelist) in EAL options."""
    out = []
    i = 0
    while i < len(args):
        a = args[i]
        for opt in ("-a", "--allow", "-w", "--pci-whitelist"):
            if a == opt and i + 1 < len(args):
                out.append(args[i + 1])
                i += 1
                break
            if a.startswith(opt + "=") and opt.startswith("--"):
                out.append(a[len(opt) + 1:])
                break
            if a.startswith(opt) and not opt.startswith("--") and len(a) > 2:
                out.append(a[2:])
                break
        i += 1
    return out


def pci_address(spec):
    """The normalised PCI address of a device spec, or None for a vdev."""
    m = PCI_RE.match(spec.split(",", 1)[0].strip())
    if m is None:
        return None
    dom = m.group(1) or "0000"
    return f"{dom}:{m.group(2)}:{m.group(3)}.{m.group(4)}".lower()


def check_pci(addr, where):
    """Problems of PCI device addr (a list of strings)."""
    dev = path(f"/sys/bus/pci/devices/{addr}")
    if not os.path.isdir(dev):
        return [f"{where}: no PCI device {addr} on this machine (lspci -D lists them)"]
    drv_link = os.path.join(dev, "driver")
    driver = os.path.basename(os.readlink(drv_link)) if os.path.islink(drv_link) else None
    bind = f"dpdk-devbind.py -b vfio-pci {addr} (modprobe vfio-pci first; docs/install.md)"
    if driver is None:
        return [f"{where}: {addr} is bound to no driver: {bind}"]
    if driver in BIFURCATED:
        return []
    if driver not in DPDK_DRIVERS:
        return [f"{where}: {addr} is bound to the kernel driver {driver}, "
                f"not to one DPDK can use: {bind}"]
    if driver != "vfio-pci":
        return []
    grp_link = os.path.join(dev, "iommu_group")
    if not os.path.islink(grp_link):
        return [f"{where}: {addr} is bound to vfio-pci but has no IOMMU group: turn the "
                "IOMMU on (intel_iommu=on iommu=pt, or amd_iommu=on, on the kernel command "
                "line) or, without one, load vfio with enable_unsafe_noiommu_mode=1"]
    grp = os.path.basename(os.readlink(grp_link))
    if not (os.path.exists(path(f"/dev/vfio/{grp}"))
            or os.path.exists(path(f"/dev/vfio/noiommu-{grp}"))):
        return [f"{where}: {addr}: no /dev/vfio/{grp} for its IOMMU group {grp}: "
                "is the vfio-pci module loaded and the device bound to it?"]
    return []


def cmd_check(config, eal):
    problems = []
    if "--no-huge" not in eal:
        if not hugetlbfs_mounts():
            problems.append("no hugetlbfs is mounted: start dev-hugepages.mount "
                            "(or mount -t hugetlbfs nodev /dev/hugepages)")
        free = free_hugepages()
        if sum(free.values()) == 0:
            sizes = ", ".join(f"{k}: 0" for k in free) or "none reserved"
            problems.append(f"no free hugepages ({sizes}): reserve some, e.g. "
                            "vm.nr_hugepages = 1024 in /etc/sysctl.d/ (docs/install.md)")
    try:
        devs = [(f"{config}:{no}: device", v) for no, v in config_devices(config)]
    except OSError as e:
        problems.append(f"cannot read {config}: {e.strerror}")
        devs = []
    devs += [("EAL option -a", v) for v in eal_devices(eal)]
    seen = set()
    for where, spec in devs:
        addr = pci_address(spec)
        if addr is None or addr in seen:
            continue
        seen.add(addr)
        problems += check_pci(addr, where)
    for p in problems:
        say(p)
    if problems:
        return 1
    print(f"{PROG}: check: hugepages free {free_hugepages()}, "
          f"PCI devices ok: {' '.join(sorted(seen)) or 'none'}", flush=True)
    return 0


# -------------------------------------------------------------- wait-ready


def alive(pid):
    """Whether process pid runs (a zombie does not)."""
    try:
        with open(path(f"/proc/{pid}/stat")) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def ask_ready(sock_path, pid):
    """True if the telemetry socket answers /seckill/stats (for pid, if set)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(2)
    try:
        s.connect(sock_path)
        info = json.loads(s.recv(1024))
        if pid is not None and info.get("pid") != pid:
            return False
        s.send(b"/seckill/stats")
        reply = json.loads(s.recv(info.get("max_output_len", 16384)))
        return isinstance(reply.get("/seckill/stats"), dict)
    except (OSError, ValueError, AttributeError):
        return False
    finally:
        s.close()


def cmd_wait_ready(prefix, pid, timeout):
    sock_path = path(f"{RUNTIME}/{prefix}/dpdk_telemetry.v2")
    end = time.monotonic() + timeout
    while True:
        if pid is not None and not alive(pid):
            say(f"seckill-dataplane (pid {pid}) exited before it was ready "
                "(journalctl -u seckill-dataplane says why)")
            return 1
        if ask_ready(sock_path, pid):
            print(f"{PROG}: seckill-dataplane{f' (pid {pid})' if pid else ''} is ready "
                  f"({sock_path} answers /seckill/stats)", flush=True)
            return 0
        if time.monotonic() > end:
            say(f"seckill-dataplane not ready after {timeout:g} s: {sock_path} does not "
                "answer /seckill/stats (EAL option --no-telemetry? see the journal)")
            return 1
        time.sleep(0.1)


# -------------------------------------------------------------------- main


def take(args, opt):
    """The value of option opt (and remove both), or None."""
    if opt in args:
        i = args.index(opt)
        if i + 1 >= len(args):
            usage(f"{opt} needs a value")
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return None


def main(argv):
    global ROOT
    args = argv[1:]
    if args[:1] == ["--root"]:
        if len(args) < 2:
            usage("--root needs a value")
        ROOT = args[1].rstrip("/")
        args = args[2:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 1
    cmd, args = args[0], args[1:]
    extra = []
    if "--" in args:
        i = args.index("--")
        args, extra = args[:i], args[i + 1:]
    if cmd == "check":
        config = take(args, "--config")
        if config is None or args:
            usage("check --config FILE [-- EAL OPTIONS]")
        return cmd_check(config, extra)
    prefix = take(args, "--file-prefix")
    if prefix is None or not good_prefix(prefix):
        usage(f"{cmd}: --file-prefix P is required (a name, no '/')")
    if cmd == "cleanup" and not args and not extra:
        return cmd_cleanup(prefix)
    if cmd == "wait-ready" and not extra:
        pid_s = take(args, "--pid")
        timeout_s = take(args, "--timeout")
        if args:
            usage(f"wait-ready: unexpected {' '.join(args)}")
        try:
            pid = int(pid_s) if pid_s else None  # "" = systemd had no $MAINPID
            timeout = float(timeout_s) if timeout_s is not None else 110.0
        except ValueError:
            usage("wait-ready: --pid and --timeout take numbers")
        if (pid is not None and pid <= 0) or not 0 < timeout <= 86400:
            usage("wait-ready: --pid > 0, 0 < --timeout <= 86400")
        return cmd_wait_ready(prefix, pid, timeout)
    usage(f"unknown command or arguments: {' '.join(argv[1:])}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
