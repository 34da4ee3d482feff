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


# busybox's `timeout` ends a command with SIGTERM and exits 143 (128 + 15);
# coreutils' exits 124
TIMED_OUT = (124, 143)


def timed(cmd, secs):
    """cmd under the guest's `timeout`: exit status 143 (TIMED_OUT) when it
    ran past secs (scaled by LAB_TIMEOUT_SCALE)."""
    return "timeout %d %s" % (int(secs * timeout_scale()), cmd)


def log_line(desc):
    """The kernel's own line for an erratum's workaround."""
    return "arch_timer: Enabling global workaround for %s" % desc


# The first step of an erratum guest: the kernel's log says whether it
# applied the workaround and trapped the counter for user space.
ERRATUM_LOG = ("erratum", "dmesg | grep -E 'arch_timer|clocksource: Switched'; cat %s" % CUR)


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
    """bench's JSON (one run: the current clocksource) as {way: its entry}."""
    runs = b.json["runs"]
    assert len(runs) == 1, runs
    return {w["name"]: w for w in runs[0]["ways"]}


def bench_line(name, b):
    """The figures of a bench step, one line: each way's cost and path, and
    the ratio to the same call through syscall(2)."""
    ways = bench_ways(b)
    return "%s bench (%.1f s): %s" % (name, b.json["duration_s"], ", ".join(
        "%s %s %.0f ns (x%.2f of the system call)" % (n, w["path"], w["ns_per_call"], w["ratio"] or 0)
        for n, w in ways.items() if w.get("measured")))


# An erratum guest's bench: the ways that tell the story (the kernel's clock
# through libc and through syscall(2), the counter read in user space),
# short enough on a trapped counter.
BENCH_ERRATUM = ("bench", timed("clockdoctor bench -c monotonic,monotonic/syscall,counter "
                                "-d 0.5 --json", 120), 150)


def check_erratum(r, name, prop):
    """What every erratum guest asserts: the workaround applied (its log
    line), then check: critical, vdso-fallback, every high-resolution clock a
    system call, measured.  Returns (trapped, check's JSON)."""
    from lab import critical_on
    trapped = check_erratum_applied(r, prop)
    c, j = critical_on(r, "arch_sys_counter")
    assert "vdso-fallback" in c.codes, c.codes
    f = c.finding("vdso-fallback")
    print("%s: %s, counter %s; check: %s, %s" % (
        name, arm64.ERRATA[prop], "trapped for user space" if trapped else "not trapped",
        j["status"], f.get("title") or f.get("summary")))
    # arm64-lib: check's evidence quotes the erratum's log line
    return trapped, j


def check_erratum_tsc(r, name, prop):
    """tsc on an erratum guest: unsound, naming the erratum."""
    t = r["tsc"]
    j = t.json
    print("%s tsc: %s (exit %d)" % (name, j["summary"], t.rc))
    assert t.rc == 2 and j["verdict"] == "unsound", j["summary"]
    assert arm64.ERRATA[prop] in " ".join(t.stdout.split()), j["summary"]
    # arm64-lib: the verdict says that user-space reads of the counter trap


def check_erratum_bench(r, name, trapped):
    """bench's short run: the kernel's clocks system calls (the vDSO has
    no mode for the counter), the counter read in user space; the ratio of
    a trapped read to the system call."""
    b = r["bench"]
    assert b.rc == 0, b.stderr
    ways = bench_ways(b)
    print(bench_line(name, b))
    # the call through libc reached the kernel: counted (seccomp), not
    # guessed from the timing, which a loaded TCG host blurs
    m = ways["CLOCK_MONOTONIC"]
    assert m["path"] == "kernel" and m["verdict_from"] == "seccomp" and m["kernel_calls"] > 0, m
    assert all(w["measured"] for w in ways.values()), ways
    return ways


# The fault guest (arm64-fault-*): the healthy guest with the harness's hands
# on QEMU (HOST_CONTROL), and the fault lab's probes (fault_lab.workload):
# fcprobe linked with the aarch64 libfastclock.a, stepwatch for the
# accelerator's REALTIME.  The kernel's vDSO is fast here, so the accelerator
# serves only when forced (FASTCLOCK=force, as the x86 fault scenarios do).
FAULT_CLOCKSOURCE = "arch_sys_counter"


def fault_programs():
    from fastclock_lab import fcprobe_program
    p = dict(PROGRAMS)
    p.update(fcprobe_program(str(B / "libfastclock.a")))
    p["/usr/local/bin/stepwatch"] = _dyn("stepwatch")
    return p


def check_erratum_run(r, name):
    """run on an erratum guest: the program runs (unchanged, today) and
    passes; run's one line printed."""
    x = r["run"]
    print("%s run: exit %d: %s" % (name, x.rc, " ".join(x.stderr.split())))
    assert x.rc in (0,) + TIMED_OUT, (x.stdout, x.stderr)
    if x.rc == 0:
        assert x.stdout.split()[-1] == "PASS", x.stdout
    # arm64-lib: run's one line says why it cannot help here (today it says
    # "nothing to gain: ... arch_sys_counter is read by the vDSO", which the
    # erratum made untrue: check measured every clock a system call)


def check_trapping_erratum(r, name, prop):
    """An erratum guest that traps the counter, with the steps ERRATUM_LOG,
    CHECK, TSC, BENCH_ERRATUM and RUN: each asserted as above."""
    trapped, _ = check_erratum(r, name, prop)
    assert trapped, r["erratum"].stdout
    check_erratum_tsc(r, name, prop)
    check_erratum_bench(r, name, trapped)
    check_erratum_run(r, name)
