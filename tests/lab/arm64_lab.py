# SPDX-License-Identifier: MIT
"""What the arm64-* scenarios share: the guest (ARCH = "arm64": QEMU's virt
board, `-cpu max`, two vCPUs, Debian's arm64 kernel; lab.py and arm64.py),
the aarch64 build's programs, and the steps every guest runs.

The healthy guest runs on arch_sys_counter with every clock in the vDSO.
An erratum guest (ERRATUM: one of arm64.ERRATA) gets the property on its
device tree's /timer node: the kernel then takes the counter out of the vDSO
(vdso_clock_mode NONE: every clock_gettime a system call) and, for the
Freescale and HiSilicon errata, traps user-space reads of cntvct_el0
("Trapping CNTVCT access"), which the kernel then emulates: under TCG each
such read costs a trap and an emulation.

Every command runs under `timeout` in the guest (timed()), so a hang fails
its step fast with exit status 124 instead of eating the boot's time.
"""
import arm64
from lab import REPO, clockdoctor_path, timeout_scale

ARCH = arm64.ARCH
SMP = 2
CPU = "max"

B = clockdoctor_path(ARCH).resolve().parent          # build/aarch64
PROGS = REPO / "tests" / "progs"
CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"


def _dyn(name):
    return {"src": str(PROGS / (name + ".c")), "dynamic": True,
            "cflags": ["-std=c11", "-D_GNU_SOURCE", "-I", str(REPO / "include")],
            "link": ["-ldl", "-lpthread"]}


# The accelerator's test program (dynamic: LD_PRELOAD must reach it) and the
# guest helper that makes time system calls for `top`.
PROGRAMS = {
    "/usr/local/bin/inconsistency": _dyn("inconsistency"),
    "/usr/local/bin/clockfault": "guest/clockfault.c",
}
FILES = {"/usr/local/lib/libfastclock-preload.so": str(B / "libfastclock-preload.so")}


def timed(cmd, secs):
    """cmd under the guest's `timeout`: exit status 124 when it ran past
    secs (scaled by LAB_TIMEOUT_SCALE)."""
    return "timeout %d %s" % (int(secs * timeout_scale()), cmd)


def log_line(desc):
    """The kernel's own line for an erratum's workaround."""
    return "arch_timer: Enabling global workaround for %s" % desc


def erratum_steps(prop):
    """The first step of an erratum guest: the kernel's log says it applied
    the workaround (and whether it traps the counter for user space)."""
    return [("erratum", "dmesg | grep -E 'arch_timer|clocksource: Switched'; cat %s" % CUR)]


def check_erratum_applied(r, prop):
    """The kernel took the erratum: its own log line, before anything else is
    believed of the guest.  Returns whether it traps user-space cntvct reads."""
    out = r["erratum"].stdout
    line = log_line(arm64.ERRATA[prop])
    assert line in out, "the guest kernel did not apply %s: no %r in its log:\n%s" % (prop, line, out)
    assert out.rstrip().endswith("arch_sys_counter"), out
    return "Trapping CNTVCT access" in out


# The commands of every guest, each bounded.  bench and accuracy run long
# on a trapped counter (each read a trap); their limits say how long is too long.
CHECK = ("check", timed("clockdoctor check --json", 90), 120)
TSC = ("tsc", "CLOCKDOCTOR_STATE_DIR=/tmp/tsc-state " + timed("clockdoctor tsc --json -d 0.3", 90), 120)
BENCH = ("bench", timed("clockdoctor bench -d 1 --json", 150), 180)
ACCURACY = ("accuracy", timed("clockdoctor accuracy -d 2 --json", 150), 180)
RUN = ("run", timed("clockdoctor run -- inconsistency -t 1 -x 100 -m 1000000 monotonic", 120), 150)


def bench_ways(b):
    """bench's JSON as {way: its entry}."""
    return {w["name"]: w for w in b.json["ways"]}
