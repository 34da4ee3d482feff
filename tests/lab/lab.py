#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lab: boot real Linux kernels in QEMU and run clockdoctor inside them.

The development machine runs on the tsc clocksource, so it can never show the
tool on hpet, acpi_pm, a forced clocksource or a TSC the kernel refused.  A
Debian kernel under QEMU's software emulation (TCG) can: with two vCPUs of
`-cpu max` the kernel finds the TSCs unsynchronized and falls back to hpet.

This module does four things, each a plain function or small class:

  find_tools()      QEMU, a kernel image and a static busybox, or Missing
  build_initramfs() a gzip'd cpio (newc) with busybox, the clockdoctor binary
                    and its shared libraries, small C helpers, and an /init
                    that runs the scenario steps and powers off; cached by the
                    hash of its content
  boot()            one qemu-system-x86_64 -accel tcg run with a hard timeout;
                    the guest's console goes to one serial port (ttyS0), the
                    step results to another (ttyS1), so kernel messages can
                    never interleave with the results
  Lab               groups scenarios that want the same guest into one boot
                    and boots the groups in parallel (two at a time)

Scenario files (scenarios/*.py) and their format are described in README.md.
Run `python3 tests/lab/lab.py --help` for the command-line uses (an
interactive guest shell among them).

KVM is never used: on this machine a KVM guest hangs, and TCG is what the
fixtures in tests/fixtures/qemu-tcg-* were taken from.
"""

import argparse
import concurrent.futures
import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import arm64

LAB_DIR = Path(__file__).resolve().parent
REPO = LAB_DIR.parent.parent
SCENARIO_DIR = LAB_DIR / "scenarios"
GUEST_DIR = LAB_DIR / "guest"

# The Makefile passes CLOCKDOCTOR; by hand, the build in this tree.
DEFAULT_CLOCKDOCTOR = str(REPO / "build" / "clockdoctor")
GUEST_USER = ("lab", 1000, 1000)

# Guest time a scenario gets for its steps unless it sets TIMEOUT, and the
# time a boot gets before the first step.  A group's hard limit is the sum.
# TCG boots in about 5 s on the development machine; the margins are for a
# loaded CI machine running two guests at once.
DEFAULT_SCENARIO_TIMEOUT = 60
BOOT_TIMEOUT = 40
STEP_TIMEOUT = 45          # one step (guest/run-step.c kills it after that)

MARK = "====="


def log(msg):
    """Progress lines go to stderr, so `pytest -s` and the CLI show them."""
    sys.stderr.write("[lab %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def timeout_scale():
    try:
        return max(0.1, float(os.environ.get("LAB_TIMEOUT_SCALE", "1")))
    except ValueError:
        return 1.0


def cache_dir():
    """build/lab/ beside the other build products (make clean removes it),
    or LAB_CACHE_DIR, or a temp directory when the tree is read-only."""
    env = os.environ.get("LAB_CACHE_DIR")
    cands = [Path(env)] if env else []
    cands += [REPO / "build" / "lab",
              Path(tempfile.gettempdir()) / ("clockdoctor-lab-%d" % os.getuid())]
    for c in cands:
        try:
            c.mkdir(parents=True, exist_ok=True)
            if os.access(c, os.W_OK):
                return c
        except OSError:
            continue
    raise RuntimeError("no writable cache directory among %s" % cands)


# ---------------------------------------------------------------- tools --

class Missing(Exception):
    """A lab tool is absent: the lab must be skipped, loudly."""


def elf_is_static(path):
    """True when the ELF file has no PT_INTERP (no dynamic loader)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", ph, i * phentsize)[0] != 3
               for i in range(phnum))


def _kernel_version_key(path):
    return [int(n) for n in re.findall(r"\d+", path.name.split("vmlinuz-", 1)[1])]


def find_kernel():
    env = os.environ.get("LAB_KERNEL")
    if env:
        return Path(env) if Path(env).is_file() else None
    cands = sorted(Path("/boot").glob("vmlinuz-6.*"), key=_kernel_version_key)
    cands = [c for c in cands if os.access(c, os.R_OK)]
    return cands[-1] if cands else None


def find_tools(arch=arm64.HOST_ARCH):
    """Returns {"arch", "qemu", "kernel", "busybox", "cc"} (and for arm64
    guests what arm64.find_tools adds), or raises Missing naming everything
    that is absent and how to install it."""
    if arch == arm64.ARCH:
        return arm64.find_tools(elf_is_static, Missing)
    qemu = shutil.which(os.environ.get("LAB_QEMU", "qemu-system-x86_64"))
    kernel = find_kernel()
    busybox = None
    for c in [os.environ.get("LAB_BUSYBOX"), "/bin/busybox", "/usr/bin/busybox"]:
        if c and os.path.isfile(c) and elf_is_static(c):
            busybox = c
            break
    missing = []
    if not qemu:
        missing.append("qemu-system-x86_64 (apt-get install qemu-system-x86)")
    if not kernel:
        missing.append("a readable kernel image /boot/vmlinuz-6.* "
                       "(apt-get install linux-image-amd64, or set LAB_KERNEL)")
    if not busybox:
        missing.append("a static busybox (apt-get install busybox-static)")
    if missing:
        raise Missing("QEMU lab cannot run, missing: " + "; ".join(missing))
    return {"arch": arm64.HOST_ARCH, "qemu": qemu, "kernel": str(kernel), "busybox": busybox,
            "cc": os.environ.get("LAB_CC", "gcc")}


def clockdoctor_path(arch=arm64.HOST_ARCH):
    """The binary put in the guest: CLOCKDOCTOR (x86), LAB_ARM64_CLOCKDOCTOR
    or the aarch64 build of this tree (`make arm64-build`)."""
    if arch == arm64.ARCH:
        return Path(os.environ.get("LAB_ARM64_CLOCKDOCTOR") or REPO / "build" / "aarch64" / "clockdoctor")
    return Path(os.environ.get("CLOCKDOCTOR", DEFAULT_CLOCKDOCTOR))


# ------------------------------------------------------------ initramfs --

class Tree:
    """The guest's file system, as {path: (mode, data)}.  Directories are
    added implicitly; symlinks carry their target as data."""

    S_IFDIR, S_IFREG, S_IFLNK, S_IFCHR = 0o040000, 0o100000, 0o120000, 0o020000

    def __init__(self):
        self.entries = {}

    def _dirs(self, path):
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            self.entries.setdefault(d, (self.S_IFDIR | 0o755, b"", 0))

    def dir(self, path, perm=0o755):
        self._dirs(path + "/x")
        self.entries[path.strip("/")] = (self.S_IFDIR | perm, b"", 0)

    def file(self, path, data, perm=0o644):
        if isinstance(data, str):
            data = data.encode()
        self._dirs(path)
        self.entries[path.strip("/")] = (self.S_IFREG | perm, data, 0)

    def copy(self, path, host_path, perm=None):
        st = os.stat(host_path)
        with open(host_path, "rb") as f:
            self.file(path, f.read(), perm if perm is not None else st.st_mode & 0o7777)

    def symlink(self, path, target):
        self._dirs(path)
        self.entries[path.strip("/")] = (self.S_IFLNK | 0o777, target.encode(), 0)

    def chardev(self, path, major, minor, perm=0o600):
        self._dirs(path)
        self.entries[path.strip("/")] = (self.S_IFCHR | perm, b"", (major, minor))

    def digest(self):
        h = hashlib.sha256()
        for name in sorted(self.entries):
            mode, data, rdev = self.entries[name]
            h.update(("%s\0%o\0%s\0%d\0" % (name, mode, rdev, len(data))).encode())
            h.update(data)
        return h.hexdigest()

    def cpio(self):
        """The tree as a cpio archive in the kernel's "newc" format."""
        out = bytearray()

        def entry(name, mode, data, rdev, ino):
            nameb = name.encode() + b"\0"
            rmaj, rmin = rdev if rdev else (0, 0)
            hdr = "070701" + "".join("%08X" % v for v in (
                ino, mode, 0, 0, 2 if mode & self.S_IFDIR == self.S_IFDIR else 1,
                0, len(data), 0, 0, rmaj, rmin, len(nameb), 0))
            out.extend(hdr.encode() + nameb)
            out.extend(b"\0" * (-len(out) % 4))
            out.extend(data)
            out.extend(b"\0" * (-len(out) % 4))

        for ino, name in enumerate(sorted(self.entries), start=1):
            mode, data, rdev = self.entries[name]
            entry(name, mode, data, rdev, ino)
        entry("TRAILER!!!", 0, b"", None, 0)
        return bytes(out)


def shared_libraries(binary):
    """Every file `ldd` lists for a dynamically linked binary (libraries and
    the dynamic loader), as host paths; [] for a static one."""
    if elf_is_static(binary):
        return []
    p = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("ldd %s failed: %s" % (binary, p.stderr.strip()))
    libs = []
    for line in p.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            libs.append(m.group(1))
        elif "=> not found" in line:
            raise RuntimeError("ldd %s: %s" % (binary, line.strip()))
    return libs


def compile_program(src, tools=None):
    """Compiles a guest helper (static, so it needs no libraries in the
    guest), cached by the hash of its source, of the compiler and of every
    file it is linked with.

    src is a C source (a path, relative to tests/lab/ or absolute), or a
    dict {"src": path, "cflags": [...], "link": [...], "dynamic": bool}: extra compiler
    arguments before the source, and linker inputs after it (a static
    library such as build/libfastclock.a, -lpthread).  Every argument that
    names an existing file is hashed by its content, so a rebuilt library
    makes a new binary; a "link" input that is a path and is missing fails
    with its name.  tools: the guest's (find_tools): its "cc" compiles
    (aarch64-linux-gnu-gcc for an arm64 guest).  "dynamic": True links it dynamically (a program that
    LD_PRELOAD must reach); build_initramfs then installs its libraries."""
    spec = src if isinstance(src, dict) else {"src": src}
    static = not spec.get("dynamic", False)
    src = Path(spec["src"])
    if not src.is_absolute():
        src = LAB_DIR / src
    cflags = [str(a) for a in spec.get("cflags", [])]
    link = [str(a) for a in spec.get("link", [])]
    for a in link:
        if not a.startswith("-") and not Path(a).is_file():
            raise RuntimeError("guest program %s: %s is missing (build it first: make lib)"
                               % (src.name, a))
    gcc = (tools or {}).get("cc") or os.environ.get("LAB_CC", "gcc")
    if not shutil.which(gcc):
        raise Missing("gcc (to build the guest helper %s)" % src.name)
    h = hashlib.sha256(src.read_bytes())
    h.update(gcc.encode() + subprocess.run([gcc, "--version"], capture_output=True).stdout)
    h.update(b"static" if static else b"dynamic")
    for a in cflags + link:
        h.update(a.encode() + b"\0")
        if Path(a).is_file():
            h.update(Path(a).read_bytes())
        elif Path(a).is_dir():
            for f in sorted(Path(a).glob("*.h")):
                h.update(f.name.encode() + f.read_bytes())
    out = cache_dir() / ("%s-%s" % (src.stem, h.hexdigest()[:16]))
    if not out.exists():
        tmp = out.with_suffix(".tmp%d" % os.getpid())
        p = subprocess.run([gcc] + (["-static"] if static else []) + ["-O2", "-Wall", "-Wextra"] + cflags +
                           ["-o", str(tmp), str(src)] + link, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("compiling %s failed:\n%s" % (src, p.stderr))
        os.replace(tmp, out)
    return out


INIT_HEAD = r"""#!/bin/sh
# /init of a clockdoctor lab guest, written by tests/lab/lab.py.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /root && cd /tmp
@PORTS@R=${LAB_RESULTS:-/dev/ttyS1}
stty -F $R raw -echo 2>/dev/null
[ -c $R ] || R=/dev/null
cs=/sys/devices/system/clocksource/clocksource0
# A marker line goes to the results port and to the console.
mark() { printf '%s\n' "$*" >$R; printf '%s\n' "$*"; }
# step NAME SCRIPT LIMIT: runs SCRIPT, its stdout shown live on the console
# (so a hang shows how far it got), then sends stdout, stderr and the exit
# status to the results port between markers, with byte counts to check.
step() {
    name=$1; script=$2; limit=$3
    mark "=====BEGIN $name====="
    t0=$(cut -d' ' -f1 /proc/uptime)
    { run-step $limit sh "$script" </dev/null 2>/tmp/.err; echo $? >/tmp/.rc; } | tee /tmp/.out
    rc=$(cat /tmp/.rc)
    t=$(awk "BEGIN { printf \"%.2f\", $(cut -d' ' -f1 /proc/uptime) - $t0 }")
    o=$(wc -c </tmp/.out); e=$(wc -c </tmp/.err)
    [ $e -gt 0 ] && { printf '\n=====STDERR %s=====\n' "$name"; cat /tmp/.err; }
    printf '\n=====END %s rc=%d secs=%s=====\n' "$name" $rc $t
    { cat /tmp/.out; printf '\n=====STDERR %s=====\n' "$name"; cat /tmp/.err
      printf '\n=====END %s rc=%d out=%d err=%d secs=%s=====\n' "$name" $rc $o $e $t; } >$R
}
echo
mark "=====LAB START $(uname -r) cpus=$(nproc) clocksource=$(cat $cs/current_clocksource) available=$(echo $(cat $cs/available_clocksource) | tr ' ' ,)====="
echo "lab: cmdline: $(cat /proc/cmdline)"
"""

INIT_TAIL_POWEROFF = r"""echo "----- kernel log at the end (dmesg) -----"
dmesg
mark "=====LAB DONE====="
sync
poweroff -f
"""

INIT_TAIL_SHELL = r"""mark "=====LAB DONE====="
echo "lab: interactive busybox shell; 'exit' powers the guest off (Ctrl-A X kills QEMU)"
echo "lab: helpers: as-user CMD (uid 1000), wait-clocksource NAME [SECS]; steps in /lab/steps"
setsid cttyhack sh -l
sync
poweroff -f
"""

HOST_HELPER = r"""#!/bin/sh
# host REQUEST...: asks the lab harness to act on this guest's QEMU (pause
# SECS, wakeup SECS, migrate, ping: tests/lab/lab.py HostControl) through the
# third serial port, and prints its one-line answer.  Exit 0 on "ok ...".
# Only in a boot whose scenarios set HOST_CONTROL = True.
p=${LAB_HOSTPORT:-/dev/ttyS2}
exec 3<>$p || exit 2
stty raw -echo <&3 2>/dev/null
printf '%s\n' "$*" >&3
IFS= read -r reply <&3
reply=$(printf '%s' "$reply" | tr -d '\r')
echo "$reply"
case $reply in ok*) exit 0;; esac
exit 1
"""

WAIT_CLOCKSOURCE = r"""#!/bin/sh
# wait-clocksource NAME [SECS]: wait until NAME is the current clocksource
# (e.g. tsc-early becoming tsc a few seconds after boot).  Prints the current
# one; exits 1 if it did not become NAME in SECS (default 15) seconds.
f=/sys/devices/system/clocksource/clocksource0/current_clocksource
n=$(( ${2:-15} * 5 ))
while [ "$(cat $f)" != "$1" ] && [ $n -gt 0 ]; do sleep 0.2; n=$((n - 1)); done
cat $f
[ "$(cat $f)" = "$1" ]
"""


def copy_libraries(t, binary, tools=None):
    """Every library ldd lists for an ELF (and its loader), at the same paths;
    for an arm64 guest, the arm64 C library's (arm64.libraries)."""
    with open(binary, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return
    if (tools or {}).get("arch") == arm64.ARCH:
        for gpath, host in arm64.libraries(binary, tools["libdir"]):
            t.copy(gpath, host, 0o755)
        return
    for lib in shared_libraries(binary):
        t.copy(lib, os.path.realpath(lib), 0o755)


def copy_host(t, gpath, host, tools=None):
    """A host file at gpath (an ELF with its libraries), or a folder's tree
    (without __pycache__)."""
    if not host.exists():
        raise RuntimeError("lab FILES: %s is missing on this machine" % host)
    if host.is_dir():
        for f in sorted(host.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                t.copy("%s/%s" % (gpath.rstrip("/"), f.relative_to(host)), str(f))
        return
    t.copy(gpath, str(host.resolve()), None)
    copy_libraries(t, str(host.resolve()), tools)


def build_initramfs(tools, steps, programs=None, clockdoctor=None, shell=False, files=None):
    """Builds (or takes from the cache) the initramfs for one boot.

    steps: [(name, shell command, timeout_s)], run in order as root, each
    with its stdout, stderr and exit status sent back between markers.
    programs: {guest path: C source, or a dict for compile_program}
    compiled statically with gcc (dynamically, with their libraries, when
    the dict says "dynamic").
    files: {guest path: host path}: host files (an ELF comes with every
    library ldd lists) or folders, copied as they are.
    clockdoctor: host path of the binary to install as /usr/local/bin/
    clockdoctor, with every library ldd lists, at the same paths.
    Returns the path of the gzip'd cpio."""
    t = Tree()
    for d in ("proc", "sys", "dev", "tmp", "root", "etc", "lab", "usr/local/bin"):
        t.dir(d)
    t.dir("tmp", 0o1777)
    t.chardev("dev/console", 5, 1)
    t.chardev("dev/null", 1, 3, 0o666)
    t.copy("bin/busybox", tools["busybox"], 0o755)
    foreign = tools.get("arch", arm64.HOST_ARCH) != arm64.HOST_ARCH
    if foreign:
        # its applets' links are made by /init (arm64.INIT_APPLETS)
        for d in ("sbin", "usr/bin", "usr/sbin"):
            t.dir(d)
        t.symlink("bin/sh", "/bin/busybox")
        for m in tools.get("modules", ()):
            t.copy("lib/modules/lab/%02d-%s" % (tools["modules"].index(m), os.path.basename(m)), m, 0o644)
    else:
        applets = subprocess.run([tools["busybox"], "--list-full"], capture_output=True,
                                 text=True).stdout.split()
        for a in applets:
            if a.strip("/") != "bin/busybox":
                t.symlink(a, "/bin/busybox")
    name, uid, gid = GUEST_USER
    t.file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
           "%s:x:%d:%d:lab user:/tmp:/bin/sh\n" % (name, uid, gid))
    t.file("etc/group", "root:x:0:\n%s:x:%d:\n" % (name, gid))
    t.file("etc/hostname", "lab\n")
    t.file("usr/local/bin/wait-clocksource", WAIT_CLOCKSOURCE, 0o755)
    t.file("usr/local/bin/host", HOST_HELPER, 0o755)
    progs = {"/usr/local/bin/as-user": GUEST_DIR / "as-user.c",
             "/usr/local/bin/run-step": GUEST_DIR / "run-step.c"}
    progs.update(programs or {})
    for gpath, src in sorted(progs.items()):
        binary = compile_program(src, tools)
        t.copy(gpath, binary, 0o755)
        copy_libraries(t, binary, tools)      # a dynamic one's (none for static helpers)
    for gpath, host in sorted((files or {}).items()):
        copy_host(t, gpath, Path(host), tools)
    if clockdoctor:
        t.copy("usr/local/bin/clockdoctor", clockdoctor, 0o755)
        copy_libraries(t, str(clockdoctor), tools)
    head = INIT_HEAD.replace("@PORTS@", arm64.INIT_PORTS if foreign else "")
    if foreign:
        first, rest = head.split("\n", 1)
        head = first + "\n" + arm64.INIT_APPLETS + rest
    init = [head]
    for i, (sname, cmd, limit) in enumerate(steps):
        path = "lab/steps/%02d-%s.sh" % (i, re.sub(r"[^A-Za-z0-9_.-]", "_", sname))
        t.file(path, "# step %s\n%s\n" % (sname, cmd), 0o755)
        init.append("step %s /%s %d\n" % (shlex.quote(sname), path, limit))
    init.append(INIT_TAIL_SHELL if shell else INIT_TAIL_POWEROFF)
    t.file("init", "".join(init), 0o755)

    cdir = cache_dir()
    img = cdir / ("initramfs-%s.cpio.gz" % t.digest()[:24])
    if img.exists():
        os.utime(img)
        return img
    tmp = img.with_suffix(".tmp%d.%d" % (os.getpid(), threading.get_ident()))
    tmp.write_bytes(gzip.compress(t.cpio(), compresslevel=6, mtime=0))
    os.replace(tmp, img)
    # Keep the cache small: every rebuilt binary makes a new image.
    old = sorted(cdir.glob("initramfs-*.cpio.gz"), key=lambda p: p.stat().st_mtime)
    for p in old[:-16]:
        try:
            p.unlink()
        except OSError:
            pass
    return img


# ----------------------------------------------------------------- boot --

def qemu_argv(tools, img, smp=2, cpu="max", append="", mem="512M",
              interactive=False, results=None, extra=(), control=None):
    """The QEMU command line.  extra: more arguments (a scenario's QEMU_ARGS).
    control: a HostControl's socket directory: QMP on control/qmp.sock and a
    third serial port (ttyS2) on control/req.sock, for the guest's `host`
    requests (see HostControl)."""
    is_arm64 = tools.get("arch") == arm64.ARCH
    cmdline = "console=%s loglevel=4 panic=-1 " % (arm64.CONSOLE if is_arm64 else "ttyS0") + append
    if is_arm64:
        argv = arm64.qemu_machine(tools, cpu, smp, mem)
    else:
        argv = [tools["qemu"], "-accel", "tcg", "-cpu", cpu, "-smp", str(smp), "-m", mem]
    argv += ["-nographic", "-no-reboot", "-nic", "none",
             "-kernel", tools["kernel"], "-initrd", str(img),
             "-append", cmdline.strip()] + list(extra)
    if is_arm64:
        # one UART, the console; the results and requests on virtio ports
        argv += ["-serial", "mon:stdio"] if interactive else ["-monitor", "none", "-serial", "stdio"]
        argv += ["-qmp", "unix:%s/qmp.sock,server=on,wait=off" % control] if control else []
        return argv + arm64.port_args(results, control)
    if interactive:
        argv += ["-serial", "mon:stdio"]
    else:
        argv += ["-monitor", "none", "-serial", "stdio"]
    if results:
        # append: a migrated guest's second QEMU goes on writing the same file
        argv += ["-chardev", "file,id=results,path=%s,append=on" % results,
                 "-serial", "chardev:results"]
    else:
        argv += ["-serial", "null"]
    if control:
        argv += ["-qmp", "unix:%s/qmp.sock,server=on,wait=off" % control,
                 "-chardev", "socket,id=hostreq,path=%s/req.sock,server=on,wait=off" % control,
                 "-serial", "chardev:hostreq"]
    return argv


def strip_terminal_codes(text):
    """The console without SeaBIOS's screen-clearing escapes and CRs."""
    text = re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|[A-Za-z])", "", text)
    return text.replace("\r\n", "\n").replace("\r", "")


# Clock ids as clockdoctor's JSON names them: the ones that read the
# clocksource's counter (a system call when it has no vDSO mode), and the ones
# served from the vDSO data page on every clocksource.
HIGH_RES = ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW",
            "CLOCK_BOOTTIME", "CLOCK_TAI")
COARSE = ("CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE", "time")

# Steps scenarios share: waiting for the kernel's switch from tsc-early to
# tsc after boot, and `check --json` (its result: check_step()).
WAIT_TSC = ("wait", "wait-clocksource tsc 20")
CHECK = ("check", "clockdoctor check --json")


def critical_on(r, clocksource):
    """The check step on a clocksource the vDSO cannot read: exit 2, status
    critical, on that clocksource, and every high-resolution clock (and
    gettimeofday) a system call.  Returns the step's result and its JSON."""
    c = r["check"]
    j = c.json
    assert c.rc == 2
    assert j["status"] == "critical"
    assert j["clocksource"]["current"] == clocksource
    for cid in HIGH_RES + ("gettimeofday",):
        assert j["measurements"][cid]["syscall"] is True, cid
    return c, j


def on_tsc(r):
    """The check step on tsc (or on tsc-early, if the kernel has not switched
    yet): no clock a system call.  Returns the step's result and its JSON."""
    c = r["check"]
    j = c.json
    assert j["clocksource"]["current"] in ("tsc", "tsc-early")
    assert c.syscall_ids == set()
    return c, j


class StepResult:
    """One step's output.  .json parses stdout (failing with the output
    shown if it is not JSON); the other properties read clockdoctor's JSON."""

    def __init__(self, name, stdout, stderr, rc, secs=None):
        self.name, self.stdout, self.stderr, self.rc = name, stdout, stderr, rc
        self.secs = secs          # the step's duration, by the guest's clock
        self._json = None

    def __repr__(self):
        return "<step %s rc=%s stdout=%d bytes>" % (self.name, self.rc, len(self.stdout))

    @property
    def json(self):
        if self._json is None:
            try:
                self._json = json.loads(self.stdout)
            except ValueError as e:
                raise AssertionError("step %s: stdout is not JSON (%s); rc=%s\n"
                                     "stdout:\n%s\nstderr:\n%s" % (
                                         self.name, e, self.rc, self.stdout, self.stderr))
        return self._json

    @property
    def codes(self):
        """The set of finding codes."""
        return {f["code"] for f in self.json.get("findings") or []}

    def findings(self, severity=None):
        return [f for f in self.json.get("findings") or []
                if severity is None or f.get("severity") == severity]

    def finding(self, code):
        for f in self.json.get("findings") or []:
            if f.get("code") == code:
                return f
        raise AssertionError("no finding %r; codes: %s" % (code, sorted(self.codes)))

    @property
    def syscall_ids(self):
        """The set of measured clock ids that fell back to a system call."""
        return {k for k, v in (self.json.get("measurements") or {}).items()
                if isinstance(v, dict) and v.get("syscall") is True}

    @property
    def clocksource(self):
        return (self.json.get("clocksource") or {}).get("current")


class BootResult:
    """What came back from one boot: the console, each step's result, and
    whether the guest got to the end."""

    def __init__(self, argv, console, results, elapsed, timed_out, qemu_rc, run_dir):
        self.argv, self.console, self.elapsed = argv, console, elapsed
        self.timed_out, self.qemu_rc, self.run_dir = timed_out, qemu_rc, run_dir
        self.steps, self.header, self.done, self.errors = {}, None, False, []
        self._parse(results)

    def _parse(self, text):
        text = text.replace("\r\n", "\n")
        m = re.search(r"^=====LAB START (.*)=====$", text, re.M)
        self.header = m.group(1) if m else None
        self.done = bool(re.search(r"^=====LAB DONE=====$", text, re.M))
        for m in re.finditer(r"^=====BEGIN (.+?)=====\n", text, re.M):
            name = m.group(1)
            end = re.compile(r"\n=====END %s rc=(\d+) out=(\d+) err=(\d+) secs=([\d.]+)=====$"
                             % re.escape(name), re.M).search(text, m.end())
            if not end:
                self.errors.append("step %s: no END marker (cut off)" % name)
                continue
            body = text[m.end():end.start()]
            sep = "\n=====STDERR %s=====\n" % name
            if sep not in body:
                self.errors.append("step %s: no STDERR marker" % name)
                continue
            out, err = body.split(sep, 1)
            rc, olen, elen = (int(g) for g in end.groups()[:3])
            if len(out.encode()) != olen or len(err.encode()) != elen:
                self.errors.append("step %s: output garbled (got %d/%d bytes, "
                                   "guest sent %d/%d)" % (name, len(out.encode()),
                                                          len(err.encode()), olen, elen))
            self.steps[name] = StepResult(name, out, err, rc, float(end.group(4)))

    def describe(self):
        lines = ["qemu: %s" % " ".join(shlex.quote(a) for a in self.argv),
                 "elapsed %.1f s, qemu exit %s%s, guest %s" % (
                     self.elapsed, self.qemu_rc, ", KILLED AT TIMEOUT" if self.timed_out else "",
                     "finished" if self.done else "DID NOT FINISH"),
                 "guest: %s" % self.header, "logs: %s" % self.run_dir]
        lines += ["harness: " + e for e in self.errors]
        return "\n".join(lines)


class QMP:
    """A QEMU Machine Protocol client on a unix socket: cmd() sends one
    command and returns its "return" (events in between are skipped)."""

    def __init__(self, path, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.f = self.sock.makefile("rwb")
        self.lock = threading.Lock()
        self._read()                                  # the greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        line = self.f.readline()
        if not line:
            raise RuntimeError("QMP connection closed")
        return json.loads(line)

    def cmd(self, name, **args):
        with self.lock:
            msg = {"execute": name}
            if args:
                msg["arguments"] = args
            self.f.write(json.dumps(msg).encode() + b"\n")
            self.f.flush()
            while True:
                r = self._read()
                if "return" in r:
                    return r["return"]
                if "error" in r:
                    raise RuntimeError("QMP %s: %s" % (name, r["error"].get("desc")))

    def close(self):
        for x in (self.f, self.sock):
            try:
                x.close()
            except OSError:
                pass


def connect_unix(path, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Machine:
    """One guest's QEMU process, or its successor after a live migration.
    Both write the console to one file (and the results port appends to one
    file), so a migrated guest reads as one boot."""

    def __init__(self, argv_of, console_file, echo):
        self.argv_of, self.con, self.echo = argv_of, console_file, echo
        self.lock = threading.Lock()
        self.procs, self.pumps = [], []
        self.current = None

    def start(self, control=None, incoming=None):
        argv = self.argv_of(control) + (["-incoming", incoming] if incoming else [])
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)

        def pump():
            for chunk in iter(lambda: proc.stdout.read1(4096), b""):
                self.write(chunk)
        th = threading.Thread(target=pump, daemon=True)
        th.start()
        self.procs.append(proc)
        self.pumps.append(th)
        if self.current is None:
            self.current = proc
        return argv, proc

    def write(self, data):
        with self.lock:
            self.con.write(data)
            self.con.flush()
            if self.echo:
                sys.stderr.write(data.decode(errors="replace"))

    def note(self, msg):
        """A line of the harness's own in the console ("[lab host] ...")."""
        self.write(("\n[lab host %s] %s\n" % (time.strftime("%H:%M:%S"), msg)).encode())

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()


class HostControl:
    """What a guest step asks the harness to do to its QEMU, through the
    `host` command (HOST_HELPER): a line on the third serial port (ttyS2,
    a unix socket here), answered with one line, "ok ..." or "error ...".

      pause SECS     the VM stopped (QMP stop) for SECS host seconds, then
                     continued (cont); answered when it runs again
      wakeup SECS    answered at once; then, once the guest has entered S3
                     (the QMP status "suspended"), SECS seconds later
                     system_wakeup (needs -global PIIX4_PM.disable_s3=0)
      migrate        a live migration to a second QEMU on this host, started
                     with the same command line and -incoming on a unix
                     socket; answered by the destination once it runs, with
                     QEMU's total time and downtime and the host's time for
                     the whole request; the source then quits
      ping           answered "ok"

    Every request and what came of it is noted in the console."""

    def __init__(self, machine, ctl_dir):
        self.m, self.ctl_dir = machine, ctl_dir
        self.qmp, self.req = None, None
        self.gen = 0
        self.error = None

    def run(self, control):
        try:
            self.qmp = QMP(os.path.join(control, "qmp.sock"))
            self.req = connect_unix(os.path.join(control, "req.sock"))
            buf = b""
            while True:
                chunk = self.req.recv(4096)
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    line = line.decode(errors="replace").strip()
                    if line:
                        self.handle(line)
        except Exception as e:  # noqa: BLE001 - a dead guest ends this thread
            if self.m.current is not None and self.m.current.poll() is None:
                self.error = "%s: %s" % (type(e).__name__, e)
                self.m.note("host control failed: %s" % self.error)

    def reply(self, text):
        self.m.note("-> %s" % text)
        self.req.sendall(text.encode() + b"\n")

    def handle(self, line):
        self.m.note("guest asks: %s" % line)
        w = line.split()
        try:
            if w[0] == "ping":
                self.reply("ok")
            elif w[0] == "pause" and len(w) == 2:
                secs = float(w[1])
                t0 = time.monotonic()
                self.qmp.cmd("stop")
                time.sleep(secs)
                self.qmp.cmd("cont")
                self.reply("ok paused_s=%.3f" % (time.monotonic() - t0))
            elif w[0] == "wakeup" and len(w) == 2:
                secs = float(w[1])
                self.reply("ok")
                threading.Thread(target=self._wake, args=(secs,), daemon=True).start()
            elif w[0] == "migrate" and len(w) == 1:
                self._migrate()
            else:
                self.reply("error unknown request: %s" % line)
        except Exception as e:  # noqa: BLE001 - said to the guest, which fails its step
            self.reply("error %s: %s" % (type(e).__name__, e))

    def _wake(self, secs):
        try:
            deadline = time.monotonic() + 60
            while self.qmp.cmd("query-status")["status"] != "suspended":
                if time.monotonic() > deadline:
                    raise RuntimeError("the guest did not suspend in 60 s")
                time.sleep(0.05)
            self.m.note("guest suspended; waking it in %.1f s" % secs)
            time.sleep(secs)
            self.qmp.cmd("system_wakeup")
            self.m.note("system_wakeup sent")
        except Exception as e:  # noqa: BLE001
            self.error = "wakeup: %s: %s" % (type(e).__name__, e)
            self.m.note(self.error)

    def _migrate(self):
        t_req = time.monotonic()
        self.gen += 1
        dest_ctl = os.path.join(self.ctl_dir, "m%d" % self.gen)
        os.mkdir(dest_ctl)
        mig = "unix:%s/mig.sock" % dest_ctl
        argv, dest = self.m.start(control=dest_ctl, incoming=mig)
        self.m.note("destination QEMU started: %s" % " ".join(shlex.quote(a) for a in argv))
        dqmp = QMP(os.path.join(dest_ctl, "qmp.sock"))
        dreq = connect_unix(os.path.join(dest_ctl, "req.sock"))
        self.qmp.cmd("migrate-set-parameters", **{"max-bandwidth": 8 << 30, "downtime-limit": 300})
        t0 = time.monotonic()
        self.qmp.cmd("migrate", uri=mig)
        while True:
            st = self.qmp.cmd("query-migrate")
            if st.get("status") in ("completed", "failed", "cancelled"):
                break
            if time.monotonic() - t0 > 120:
                raise RuntimeError("migration not done in 120 s: %s" % st)
            time.sleep(0.05)
        if st["status"] != "completed":
            dest.kill()
            raise RuntimeError("migration %s: %s" % (st["status"], st.get("error-desc", "")))
        while dqmp.cmd("query-status")["status"] != "running":
            if time.monotonic() - t0 > 120:
                raise RuntimeError("the destination does not run")
            time.sleep(0.05)
        old_qmp, old_req = self.qmp, self.req
        self.m.current = dest
        self.qmp, self.req = dqmp, dreq
        try:
            old_qmp.cmd("quit")
        except Exception:  # noqa: BLE001 - it may close before answering
            pass
        old_qmp.close()
        old_req.close()
        # request_s: the host's time from the request to this answer (the
        # destination's start included), to set beside the guest's clocks
        self.reply("ok migrated total_ms=%s downtime_ms=%s ram_mb=%d request_s=%.3f" % (
            st.get("total-time"), st.get("downtime"),
            st.get("ram", {}).get("transferred", 0) >> 20, time.monotonic() - t_req))


def boot(tools, img, smp=2, cpu="max", append="", mem="512M", timeout=90,
         run_dir=None, label="boot", echo=False, qemu_args=(), host_control=False):
    """Boots one guest and waits for it to power off, killing it after
    `timeout` seconds.  The console (ttyS0) and the results (ttyS1) are kept
    in run_dir.  echo=True copies the console to stderr as it comes.
    qemu_args: more QEMU arguments.  host_control: the guest's `host`
    requests are served (HostControl), a live migration among them."""
    run_dir = Path(run_dir or tempfile.mkdtemp(prefix="lab-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    console_path, results_path = run_dir / "console.log", run_dir / "results.log"
    for p in (console_path, results_path):
        if p.exists():
            p.unlink()
    # unix socket paths must be short: not under run_dir
    ctl_dir = tempfile.mkdtemp(prefix="lab-ctl-") if host_control else None

    def argv_of(control):
        return qemu_argv(tools, img, smp, cpu, append, mem, results=results_path,
                         extra=qemu_args, control=control)
    argv = argv_of(ctl_dir)
    (run_dir / "argv").write_text(" ".join(shlex.quote(a) for a in argv) + "\n")
    t0 = time.monotonic()
    timed_out = False
    ctl = None
    with open(console_path, "wb") as con:
        m = Machine(argv_of, con, echo)
        m.start(control=ctl_dir)
        if host_control:
            ctl = HostControl(m, ctl_dir)
            threading.Thread(target=ctl.run, args=(ctl_dir,), daemon=True).start()
        try:
            while True:
                p = m.current
                left = t0 + timeout - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                try:
                    p.wait(timeout=min(left, 0.5))
                except subprocess.TimeoutExpired:
                    continue
                if p is m.current:        # not a migration's source
                    break
        except subprocess.TimeoutExpired:
            timed_out = True
        m.kill_all()
        for th in m.pumps:
            th.join(5)
        proc = m.current
    if ctl_dir:
        shutil.rmtree(ctl_dir, ignore_errors=True)
    elapsed = time.monotonic() - t0
    console = strip_terminal_codes(console_path.read_text(errors="replace"))
    if timed_out:
        console += "\n[lab: QEMU killed after %d s hard timeout]\n" % timeout
    results = results_path.read_text(errors="replace") if results_path.exists() else ""
    r = BootResult(argv, console, results, elapsed, timed_out, proc.returncode, run_dir)
    if ctl and ctl.error:
        r.errors.append("host control: " + ctl.error)
    log("%s: %.1f s%s, %d steps" % (label, elapsed, " TIMEOUT" if timed_out else "",
                                     len(r.steps)))
    return r


# ------------------------------------------------------------ scenarios --

class Scenario:
    """One scenarios/*.py file.  See README.md for the variables it sets."""

    def __init__(self, path):
        self.path = Path(path)
        self.name = self.path.stem
        ns = {"__file__": str(self.path), "__name__": "lab_scenario_" + self.name}
        src = self.path.read_text()
        exec(_compile_scenario(src, self.path), ns)
        self.ns = ns
        self.doc = (ns.get("__doc__") or "").strip()
        if self.doc.startswith(self.name + ":"):
            self.doc = self.doc[len(self.name) + 1:].strip()
        self.arch = ns.get("ARCH", arm64.HOST_ARCH)
        if self.arch not in (arm64.HOST_ARCH, arm64.ARCH):
            raise ValueError("%s: ARCH must be %r or %r" % (self.path, arm64.HOST_ARCH, arm64.ARCH))
        # device-tree properties added to QEMU's own tree: [(node, property)]
        self.dt_props = tuple(tuple(p) for p in ns.get("DT_PROPS", ()))
        if self.dt_props and self.arch != arm64.ARCH:
            raise ValueError("%s: DT_PROPS needs ARCH = %r" % (self.path, arm64.ARCH))
        self.smp = int(ns.get("SMP", 2))
        self.cpu = ns.get("CPU", "max")
        self.append = ns.get("APPEND", "")
        self.mem = ns.get("MEM", "512M")
        self.qemu_args = tuple(ns.get("QEMU_ARGS", ()))
        self.host_control = bool(ns.get("HOST_CONTROL", False))
        self.timeout = int(ns.get("TIMEOUT", DEFAULT_SCENARIO_TIMEOUT))
        self.alone = bool(ns.get("ALONE", False))
        self.bench = bool(ns.get("BENCH", False))
        self.programs = dict(ns.get("PROGRAMS", {}))
        self.files = dict(ns.get("FILES", {}))
        self.steps = []
        for s in ns.get("STEPS", []):
            name, cmd = s[0], s[1]
            limit = int(s[2]) if len(s) > 2 else STEP_TIMEOUT
            self.steps.append((name, cmd, limit))
        names = [s[0] for s in self.steps]
        if len(set(names)) != len(names) or not names:
            raise ValueError("%s: STEPS must be non-empty with unique names" % self.path)
        self.check = ns.get("check")
        if not callable(self.check):
            raise ValueError("%s: no check(r) function" % self.path)
        self.needs_clockdoctor = bool(ns.get(
            "NEEDS_CLOCKDOCTOR", any(re.search(r"\bclockdoctor\b", c) for _, c, _ in self.steps)))

    def guest_key(self):
        """Scenarios with the same key can share one boot."""
        key = (self.arch, self.dt_props, self.smp, self.cpu, " ".join(self.append.split()), self.mem,
               self.qemu_args, self.host_control)
        return key + ((self.name,) if self.alone else ())

    def __repr__(self):
        return "<scenario %s>" % self.name


def _compile_scenario(src, path):
    """Compiles a scenario with pytest's assertion rewriting when pytest is
    there, so a failing `assert a == b` in check() shows both sides."""
    import ast
    tree = ast.parse(src, str(path))
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
        rewrite_asserts(tree, src.encode(), str(path))
    except Exception:
        tree = ast.parse(src, str(path))
    return compile(tree, str(path), "exec")


def load_scenarios(directory=SCENARIO_DIR, bench=False):
    """The scenarios; those with BENCH = True (benchmarks: `make bench-lab`,
    never `make lab`) only with bench=True."""
    return [s for s in (Scenario(p) for p in sorted(Path(directory).glob("*.py")))
            if bench or not s.bench]


class ScenarioResult:
    """What check(r) gets: r["step"] is that step's StepResult; r.console is
    the whole guest console; r.boot the BootResult.  Step names are the
    scenario's own (the harness prefixes them with the scenario's name in
    the guest so that scenarios sharing a boot never collide)."""

    def __init__(self, scenario, boot_result):
        self.scenario, self.boot = scenario, boot_result
        self.console = boot_result.console

    def __getitem__(self, step):
        full = "%s/%s" % (self.scenario.name, step)
        if full not in self.boot.steps:
            raise AssertionError("step %s did not report back (guest %s)" % (
                step, "finished" if self.boot.done else "did not finish"))
        return self.boot.steps[full]

    def __contains__(self, step):
        return "%s/%s" % (self.scenario.name, step) in self.boot.steps


def verify(scenario, boot_result):
    """Runs the scenario's check; on any failure raises AssertionError whose
    message holds the reason, every step's output and the whole console."""
    r = ScenarioResult(scenario, boot_result)
    try:
        missing = [n for n, _, _ in scenario.steps if n not in r]
        if missing and not boot_result.done:
            raise AssertionError("the guest did not finish; steps missing: %s"
                                 % ", ".join(missing))
        scenario.check(r)
    except Exception as e:  # noqa: BLE001 - every failure must show the console
        where = ""
        for fr in traceback.extract_tb(e.__traceback__):
            if fr.filename == str(scenario.path):
                where = "%s:%d: %s\n" % (Path(fr.filename).name, fr.lineno, fr.line)
        reason = "scenario %s failed\n%s%s: %s" % (scenario.name, where, type(e).__name__, e)
        # The reason comes first and again last: a CI log viewer that shows
        # only one end of a long failure still shows why.
        raise AssertionError("%s\n\n%s\n\n%s\n\n%s" % (
            reason, boot_result.describe(), format_outputs(scenario, boot_result), reason)) from None


def console_part(scenario, boot_result, tail=60):
    """The console from this scenario's first step to its last (the boot and
    the other scenarios of the same guest are in console.log), or, when the
    guest did not finish, its last `tail` lines: where it stopped."""
    lines = boot_result.console.rstrip("\n").split("\n")
    mine = [i for i, x in enumerate(lines)
            if re.match(r"=====(BEGIN|END) %s/" % re.escape(scenario.name), x)]
    if not boot_result.done or not mine:
        return "\n".join(lines[-tail:])
    return "\n".join(lines[mine[0]:mine[-1] + 1])


def format_outputs(scenario, boot_result):
    out = []
    for name, cmd, _ in scenario.steps:
        s = boot_result.steps.get("%s/%s" % (scenario.name, name))
        out.append("----- step %s: %s -> %s" % (
            name, cmd, "rc=%d in %.2f s" % (s.rc, s.secs) if s else "NO RESULT"))
        if s:
            out.append(s.stdout.rstrip("\n"))
            if s.stderr.strip():
                out.append("----- stderr of %s" % name)
                out.append(s.stderr.rstrip("\n"))
    out.append("===== guest console (%s/console.log), %s =====" % (
        boot_result.run_dir, "this scenario's part" if boot_result.done else "its end"))
    out.append(console_part(scenario, boot_result))
    out.append("===== end of guest console =====")
    return "\n".join(out)


class Group:
    """Scenarios that share one boot, in name order.  Scenarios sharing a
    boot must leave the guest as they found it (a clocksource switched back,
    a sysctl restored)."""

    def __init__(self, scenarios):
        self.scenarios = sorted(scenarios, key=lambda s: s.name)
        s0 = self.scenarios[0]
        self.smp, self.cpu, self.append, self.mem = s0.smp, s0.cpu, s0.append, s0.mem
        self.qemu_args, self.host_control = s0.qemu_args, s0.host_control
        self.arch, self.dt_props = s0.arch, s0.dt_props
        self.label = "+".join(s.name for s in self.scenarios)
        boot_s = arm64.BOOT_TIMEOUT if self.arch == arm64.ARCH else BOOT_TIMEOUT
        self.timeout = (boot_s + sum(s.timeout for s in self.scenarios)) * timeout_scale()

    def steps(self):
        return [("%s/%s" % (s.name, n), c, int(lim * timeout_scale()))
                for s in self.scenarios for n, c, lim in s.steps]

    def programs(self):
        p = {}
        for s in self.scenarios:
            p.update(s.programs)
        return p

    def files(self):
        f = {}
        for s in self.scenarios:
            f.update(s.files)
        return f


def group_scenarios(scenarios):
    groups = {}
    for s in scenarios:
        groups.setdefault(s.guest_key(), []).append(s)
    return [Group(v) for v in groups.values()]


def never_started(r):
    """A boot killed at its timeout before the guest's init wrote its first
    line: the kernel or the firmware stalled, no scenario step ran."""
    return r.timed_out and r.header is None and not r.steps


class Lab:
    """Boots the groups of the given scenarios in the background and hands
    each scenario its boot's result when it is ready.

    At most `jobs` guests (LAB_JOBS, default 2) run at once, and only while
    their vCPUs fit in the host's CPUs (LAB_CPUS, default all of them): each
    TCG vCPU is a busy host thread, and a guest whose vCPUs are descheduled
    measures clock costs with host noise in them.  On a 2-CPU machine that
    means one smp=2 guest at a time."""

    def __init__(self, tools, scenarios, jobs=None, clockdoctor=None, cpus=None):
        # tools: one guest's (find_tools), or {arch: tools}; clockdoctor:
        # a path, or {arch: path}
        self.tools = {tools.get("arch", arm64.HOST_ARCH): tools} if "qemu" in tools else dict(tools)
        self.clockdoctor = clockdoctor if isinstance(clockdoctor, dict) else {arm64.HOST_ARCH: clockdoctor}
        if jobs is None:
            jobs = int(os.environ.get("LAB_JOBS", "2"))
        if cpus is None:
            cpus = int(os.environ.get("LAB_CPUS", len(os.sched_getaffinity(0))))
        self.cpus, self.cpus_used = max(1, cpus), 0
        self.cond = threading.Condition()
        self.groups = group_scenarios(scenarios)
        self.group_of = {s.name: g for g in self.groups for s in g.scenarios}
        self.pool = concurrent.futures.ThreadPoolExecutor(max(1, jobs))
        self.futures = {}
        self.t0 = time.monotonic()
        # what a boot is made with: a test of the harness puts fakes here
        self.boot_fn, self.initramfs_fn = boot, build_initramfs

    def start(self):
        # Longest first, so that parallel workers end at about the same time.
        for g in sorted(self.groups, key=lambda g: -len(g.steps())):
            self.futures[g.label] = self.pool.submit(self._run_budgeted, g)
        return self

    def _run_budgeted(self, g):
        need = min(g.smp, self.cpus)
        with self.cond:
            self.cond.wait_for(lambda: self.cpus_used + need <= self.cpus)
            self.cpus_used += need
        try:
            return self._run(g)
        finally:
            with self.cond:
                self.cpus_used -= need
                self.cond.notify_all()

    def _run(self, g):
        need = any(s.needs_clockdoctor for s in g.scenarios)
        tools = self.tools[g.arch]
        img = self.initramfs_fn(tools, g.steps(), g.programs(),
                                self.clockdoctor.get(g.arch) if need else None, files=g.files())
        run_dir = cache_dir() / "runs" / re.sub(r"[^A-Za-z0-9_.+-]", "_", g.label)[:120]
        qemu_args = g.qemu_args
        if g.dt_props:
            qemu_args += ("-dtb", str(arm64.erratum_dtb(tools, g.cpu, g.smp, g.mem, g.dt_props,
                                                        cache_dir())))
        log("booting %s (%s smp=%d cpu=%s append=%r%s)" % (
            g.label, g.arch, g.smp, g.cpu, g.append, " " + " ".join(qemu_args) if qemu_args else ""))
        r = self.boot_fn(tools, img, g.smp, g.cpu, g.append, g.mem, g.timeout,
                         run_dir=run_dir, label=g.label, qemu_args=qemu_args,
                         host_control=g.host_control)
        if never_started(r):
            # The guest's kernel never reached the lab's init (a TCG boot
            # once stalled at the firmware's "Probing EDD" for 130 s on a
            # busy host): nothing of the scenarios ran, so it says nothing
            # of them.  Once more; a second stall is reported as it is.
            log("%s: the guest never reached its init in %.0f s; booting again" % (g.label, r.elapsed))
            r = self.boot_fn(tools, img, g.smp, g.cpu, g.append, g.mem, g.timeout,
                             run_dir=run_dir, label=g.label, qemu_args=qemu_args,
                             host_control=g.host_control)
        return r

    def result(self, scenario):
        return self.futures[self.group_of[scenario.name].label].result()

    def shutdown(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------ CLI --

def _cli_boot(args, tools):
    steps = [("cmd%d" % i, c, STEP_TIMEOUT) for i, c in enumerate(args.cmd or [])]
    cd = clockdoctor_path(args.arch)
    img = build_initramfs(tools, steps, clockdoctor=cd if cd.exists() else None,
                          shell=args.shell)
    if not cd.exists():
        log("note: %s not found, the guest has no clockdoctor" % cd)
    extra = ()
    if args.erratum:
        extra = ("-dtb", str(arm64.erratum_dtb(tools, args.cpu, args.smp, args.mem,
                                               [("/timer", e) for e in args.erratum], cache_dir())))
    if args.shell:
        argv = qemu_argv(tools, img, args.smp, args.cpu, args.append or "", args.mem,
                         interactive=True, extra=extra)
        log("interactive guest; quit with 'exit' (or Ctrl-A X)")
        log(" ".join(shlex.quote(a) for a in argv))
        return subprocess.call(argv)
    r = boot(tools, img, args.smp, args.cpu, args.append or "", args.mem, args.timeout,
             run_dir=args.run_dir or cache_dir() / "runs" / "boot", label="boot", echo=not args.quiet,
             qemu_args=extra)
    print(r.describe())
    for name, s in r.steps.items():
        print("----- %s rc=%d\n%s" % (name, s.rc, s.stdout), end="")
        if s.stderr:
            print("----- stderr\n%s" % s.stderr, end="")
    return 0 if r.done and not r.timed_out else 1


def _cli_run(args):
    scen = load_scenarios(bench=bool(args.names))     # a benchmark runs when named
    if args.names:
        scen = [s for s in scen if s.name in args.names]
        unknown = set(args.names) - {s.name for s in scen}
        if unknown:
            sys.exit("unknown scenario(s): %s" % ", ".join(sorted(unknown)))
    tools, cds = {}, {}
    for arch in sorted({s.arch for s in scen}):
        try:
            tools[arch] = find_tools(arch)
        except Missing as e:
            sys.stderr.write("lab: SKIPPING the %s scenarios: %s\n" % (arch, e))
        cds[arch] = clockdoctor_path(arch)
    if not tools:
        return 77
    scen = [s for s in scen if s.arch in tools]
    lab = Lab(tools, scen, jobs=args.jobs,
              clockdoctor={a: cd for a, cd in cds.items() if cd.exists()}).start()
    failed = 0
    for s in scen:
        cd = cds[s.arch]
        if s.needs_clockdoctor and not cd.exists():
            print("FAIL %s: clockdoctor binary missing at %s" % (s.name, cd))
            failed += 1
            continue
        try:
            verify(s, lab.result(s))
            print("PASS %s" % s.name)
        except AssertionError as e:
            failed += 1
            print("FAIL %s\n%s" % (s.name, e))
    lab.shutdown()
    print("%d scenario(s), %d failed, %.1f s" % (len(scen), failed, time.monotonic() - lab.t0))
    return 1 if failed else 0


def main(argv=None):
    sys.modules.setdefault("lab", sys.modules[__name__])
    ap = argparse.ArgumentParser(
        description="clockdoctor's QEMU lab: boot a Debian kernel under TCG with "
                    "busybox and clockdoctor in an initramfs.",
        epilog="examples:\n"
               "  lab.py boot --smp 2 --shell                  interactive guest on hpet\n"
               "  lab.py boot --smp 2 --append clocksource=acpi_pm --shell\n"
               "  lab.py boot --smp 1 -c 'clockdoctor check'   run commands, print results\n"
               "  lab.py run smp2-hpet non-root                 run scenarios without pytest\n"
               "  lab.py list                                   the scenarios and their boots",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("boot", help="boot one guest")
    b.add_argument("--arch", default=arm64.HOST_ARCH, choices=(arm64.HOST_ARCH, arm64.ARCH))
    b.add_argument("--erratum", action="append",
                   help="arm64: a timer erratum property for /timer (%s)" % ", ".join(arm64.ERRATA))
    b.add_argument("--smp", type=int, default=2)
    b.add_argument("--cpu", default="max")
    b.add_argument("--mem", default="512M")
    b.add_argument("--append", default="", help="extra kernel command line")
    b.add_argument("-c", "--cmd", action="append", help="a command to run (repeatable)")
    b.add_argument("--shell", action="store_true",
                   help="interactive: console on this terminal (-serial mon:stdio)")
    b.add_argument("--timeout", type=int, default=120)
    b.add_argument("--run-dir", help="where to keep console.log and results.log")
    b.add_argument("-q", "--quiet", action="store_true", help="do not echo the console")
    r = sub.add_parser("run", help="run scenarios (all, or the ones named)")
    r.add_argument("names", nargs="*")
    r.add_argument("-j", "--jobs", type=int)
    sub.add_parser("list", help="list scenarios and which boot each shares")
    args = ap.parse_args(argv)
    if args.what == "list":
        for g in group_scenarios(load_scenarios(bench=True)):
            print("boot %s%s smp=%d cpu=%s append=%r%s%s timeout=%ds" % (
                g.arch, " dt=%s" % ",".join(p for _, p in g.dt_props) if g.dt_props else "",
                g.smp, g.cpu, g.append, " qemu_args=%r" % (g.qemu_args,) if g.qemu_args else "",
                " host-control" if g.host_control else "", g.timeout))
            for s in g.scenarios:
                print("  %-20s %s%s" % (s.name, "(benchmark, run when named) " if s.bench else "",
                                        s.doc.splitlines()[0] if s.doc else ""))
        return 0
    if args.what == "run":
        return _cli_run(args)
    try:
        tools = find_tools(args.arch)
    except Missing as e:
        sys.stderr.write("lab: %s\n" % e)
        return 77
    return _cli_boot(args, tools)


if __name__ == "__main__":
    sys.exit(main())
