# SPDX-License-Identifier: MIT
"""arm64: what the lab needs to boot aarch64 guests, beside the x86 ones.

A scenario with ARCH = "arm64" boots Debian's arm64 kernel under
`qemu-system-aarch64 -M virt -accel tcg` with the arm64 static busybox, the
aarch64 build of this tree (build/aarch64/: `make arm64-build`, the
Makefile's own rules with the cross compiler) and helpers cross-compiled with
aarch64-linux-gnu-gcc.  A dynamically linked helper (a program LD_PRELOAD
must reach) gets the arm64 C library of libc6-dev-arm64-cross
(/usr/aarch64-linux-gnu/lib) in the guest.

What differs from an x86 guest, and why:
  - QEMU's virt board has one UART (the console, ttyAMA0): the results and
    the host-request ports are virtio serial ports (/dev/vport0p1, 0p2).
    Debian builds virtio_mmio and virtio_console as modules, so the
    initramfs carries those two and /init loads them first.
  - busybox cannot run on the host to list its applets: /init installs its
    links (`busybox --install -s`) in the guest.
  - Timer errata come from the device tree: QEMU's own tree for the same
    -smp/-cpu/-m (`-M virt,dumpdtb=`), a property added to /timer with
    fdtput, repacked with `dtc -I dtb -O dtb` (the dump is padded to 1 MiB,
    and a kernel given that blob prints nothing), passed with -dtb.

Where the Debian packages are (LAB_ARM64_ROOT: linux-image-*-arm64 and
busybox-static:arm64, each `apt-get download`ed and `dpkg-deb -x`ed into it;
.ci/run does that): boot/vmlinuz-6.*, bin/busybox, lib/modules/*/.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

ARCH = "arm64"
HOST_ARCH = "x86_64"
DEFAULT_ROOT = "/opt/clockdoctor-lab/arm64"
# the kernel modules the guest loads for its results port, in order
MODULES = ("kernel/drivers/virtio/virtio_mmio.ko", "kernel/drivers/char/virtio_console.ko")
LIBDIR = "/usr/aarch64-linux-gnu/lib"
INTERP = "ld-linux-aarch64.so.1"
CONSOLE = "ttyAMA0"
# the board's PSCI and GIC as QEMU's `virt` sets them; TCG boots it in ~20 s
MACHINE = "virt"
# the first boot messages take longer than on x86 under TCG
BOOT_TIMEOUT = 90

# The erratum properties of drivers/clocksource/arm_arch_timer.c (the
# device-tree ones: ARM64_ERRATUM_858921 is matched by the CPU's MIDR, not
# a property) and the workaround's description in the kernel's log line
# "arch_timer: Enabling global workaround for <desc>".
ERRATA = {
    "fsl,erratum-a008585": "Freescale erratum a005858",
    "hisilicon,erratum-161010101": "HiSilicon erratum 161010101",
    "allwinner,erratum-unknown1": "Allwinner erratum UNKNOWN1",
}

# /init's first lines in an arm64 guest: busybox's links, before anything
# else uses an applet by name.
INIT_APPLETS = r"""if [ ! -e /bin/mount ]; then
    /bin/busybox mkdir -p /proc && /bin/busybox mount -t proc proc /proc
    /bin/busybox --install -s
    /bin/busybox umount /proc
fi
"""

# ...and once /dev is mounted: the virtio serial ports.
INIT_PORTS = r"""for m in /lib/modules/lab/*.ko; do insmod $m 2>/dev/null; done
n=0; while [ ! -c /dev/vport0p1 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
export LAB_RESULTS=/dev/vport0p1 LAB_HOSTPORT=/dev/vport0p2
"""


def root():
    return Path(os.environ.get("LAB_ARM64_ROOT") or DEFAULT_ROOT)


def _newest(paths):
    def key(p):
        return [int(n) for n in re.findall(r"\d+", p.name)]
    paths = sorted((p for p in paths if os.access(p, os.R_OK)), key=key)
    return paths[-1] if paths else None


def find_tools(elf_is_static, Missing):
    """The arm64 guest's tools, or raises Missing naming each that is absent
    and how to get it.  elf_is_static and Missing come from lab.py."""
    r = root()
    qemu = shutil.which(os.environ.get("LAB_ARM64_QEMU", "qemu-system-aarch64"))
    kernel = os.environ.get("LAB_ARM64_KERNEL") or _newest((r / "boot").glob("vmlinuz-6.*"))
    busybox = os.environ.get("LAB_ARM64_BUSYBOX") or r / "bin" / "busybox"
    cc = shutil.which(os.environ.get("LAB_ARM64_CC", "aarch64-linux-gnu-gcc"))
    mods = []
    if kernel:
        ver = Path(kernel).name.split("vmlinuz-", 1)[-1]
        mods = [r / "lib" / "modules" / ver / m for m in MODULES]
    missing = []
    if not qemu:
        missing.append("qemu-system-aarch64 (apt-get install qemu-system-arm)")
    if not kernel or not Path(kernel).is_file():
        missing.append("Debian's arm64 kernel in %s/boot (apt-get download linux-image-6.*-arm64:arm64; "
                       "dpkg-deb -x it there; or set LAB_ARM64_ROOT, LAB_ARM64_KERNEL)" % r)
    elif not all(m.is_file() for m in mods):
        missing.append("the kernel's modules %s" % ", ".join(str(m) for m in mods if not m.is_file()))
    if not Path(busybox).is_file() or not elf_is_static(busybox):
        missing.append("a static arm64 busybox at %s (apt-get download busybox-static:arm64; "
                       "dpkg-deb -x it into %s)" % (busybox, r))
    if not cc:
        missing.append("aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)")
    elif not Path(LIBDIR, INTERP).is_file():
        missing.append("the arm64 C library in %s (apt-get install libc6-dev-arm64-cross)" % LIBDIR)
    for t in ("dtc", "fdtput"):
        if not shutil.which(t):
            missing.append("%s (apt-get install device-tree-compiler)" % t)
    if missing:
        raise Missing("arm64 guests cannot run, missing: " + "; ".join(missing))
    return {"arch": ARCH, "qemu": qemu, "kernel": str(kernel), "busybox": str(busybox), "cc": cc,
            "modules": [str(m) for m in mods], "libdir": LIBDIR}


def needed(binary):
    """The DT_NEEDED names of an ELF file (readelf reads any architecture's)."""
    p = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)


def libraries(binary, libdir=LIBDIR):
    """Every arm64 library a dynamically linked aarch64 ELF needs, found in
    libdir, with the dynamic loader: [(guest path, host path)].  They go
    to /lib (the loader's default path), the loader also where the
    binaries' PT_INTERP names it."""
    out, todo, seen = [], list(needed(binary)), set()
    if not todo:
        return out
    todo.append(INTERP)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        host = Path(libdir) / name
        if not host.is_file():
            raise RuntimeError("%s needs %s, not in %s" % (binary, name, libdir))
        out.append(("/lib/" + name, str(host.resolve())))
        todo.extend(needed(host))
    out.append(("/lib/aarch64-linux-gnu/" + INTERP, str((Path(libdir) / INTERP).resolve())))
    return out


def qemu_machine(tools, cpu, smp, mem):
    return [tools["qemu"], "-M", MACHINE, "-accel", "tcg", "-cpu", cpu, "-smp", str(smp), "-m", mem]


def port_args(results=None, control=None):
    """The virtio serial ports: results (port 1, a file) and the host
    requests (port 2, a unix socket); the console stays on the UART."""
    argv = ["-device", "virtio-serial-device"]
    if results:
        argv += ["-chardev", "file,id=results,path=%s,append=on" % results,
                 "-device", "virtserialport,chardev=results,nr=1"]
    if control:
        argv += ["-chardev", "socket,id=hostreq,path=%s/req.sock,server=on,wait=off" % control,
                 "-device", "virtserialport,chardev=hostreq,nr=2"]
    return argv


def erratum_dtb(tools, cpu, smp, mem, props, out_dir):
    """QEMU's device tree for this machine with each (node, property) of
    props added as an empty property, repacked; returns its path (cached
    by the arguments)."""
    name = "virt-%s-%d-%s-%s.dtb" % (re.sub(r"[^A-Za-z0-9]+", "_", cpu), smp, mem,
                                     "-".join(re.sub(r"[^A-Za-z0-9]+", "_", p) for _, p in props))
    out = Path(out_dir) / name
    if out.exists():
        return out
    raw = out.with_suffix(".raw%d" % os.getpid())
    tmp = out.with_suffix(".tmp%d" % os.getpid())
    argv = qemu_machine(tools, cpu, smp, mem)
    argv[argv.index(MACHINE)] = "%s,dumpdtb=%s" % (MACHINE, raw)
    subprocess.run(argv + ["-nographic", "-nic", "none"], check=True, capture_output=True, timeout=120)
    for node, prop in props:
        # no value: an empty property, as the kernel's of_property_read_bool wants
        subprocess.run(["fdtput", str(raw), node, prop], check=True, capture_output=True)
    subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dtb", "-o", str(tmp), str(raw)],
                   check=True, capture_output=True)
    raw.unlink()
    os.replace(tmp, out)
    return out
