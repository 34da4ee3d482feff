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
import re

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


# The commands of every guest, each bounded by the guest's `timeout`.
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
    # the evidence quotes the kernel's own lines: the workaround, the trap,
    # and what the trap means (in vdso-fallback's or slow-clocksource's)
    evidence = [e for x in c.findings() if x["code"] in ("vdso-fallback", "slow-clocksource")
                for e in x.get("evidence") or []]
    text = "\n".join(evidence)
    assert re.search(r"kernel log \[[^\]]*\]: " + re.escape(log_line(arm64.ERRATA[prop])), text), text
    if trapped:
        assert "Trapping CNTVCT access" in text, text
        assert "user-space reads of cntvct_el0 trap into the kernel, which emulates each one" in text, text
    return trapped, j


def check_erratum_tsc(r, name, prop):
    """tsc on an erratum guest: unsound, naming the erratum."""
    t = r["tsc"]
    j = t.json
    print("%s tsc: %s (exit %d)" % (name, j["summary"], t.rc))
    assert t.rc == 2 and j["verdict"] == "unsound", j["summary"]
    assert arm64.ERRATA[prop] in " ".join(t.stdout.split()), j["summary"]
    # the verdict says that user-space reads of the counter trap, quoting
    # the kernel, and why (the erratum's direct reads can be wrong)
    assert ('user-space reads of cntvct_el0 trap into the kernel ("arch_timer: CPU0: Trapping CNTVCT '
            'access"), which works around %s: direct reads can be wrong' % arm64.ERRATA[prop]) in j["summary"], \
        j["summary"]
    print("%s tsc: counter.read_not_cheaper %s" % (name, j["counter"].get("read_not_cheaper")))


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
    # the counter read as such: an instruction the kernel traps and
    # emulates costs a good part of a system call (a ratio to it, not a
    # time: TCG's host is busy; 0.55-0.9 here, where an untrapped read
    # costs a hundredth), which bench calls trapped from 0.6 (HiSilicon's
    # workaround straddles that, so it is printed, not asserted)
    counter = {n: w for n, w in ways.items() if w["call"] == "counter"}
    print("%s bench: counter trapped: %s" % (name, {n: (w["trapped"], round(w["ratio"], 2))
                                                    for n, w in counter.items()}))
    if trapped:
        assert all(w["ratio"] >= 0.2 for w in counter.values()), counter
    return ways


def check_erratum_full(r, name):
    """The full `bench -d 1` and `accuracy -d 2` (steps bench-full and
    accuracy): each ends within its step's limit, far below what a trapped
    read would cost them unbounded, with what it measured said: a library
    call that reads the kernel's clock labelled by its counted entries,
    accuracy's cut set from fewer brackets."""
    full, acc = r["bench-full"], r["accuracy"]
    print("%s bench -d 1: exit %d in %.1f s; accuracy -d 2: exit %d in %.1f s" % (
        name, full.rc, full.secs, acc.rc, acc.secs))
    assert full.rc == 0, full.stderr
    assert acc.rc in (0, 1), acc.stderr      # 1: beyond the bound, which the lab reports
    print(bench_line(name, full))
    ways = bench_ways(full)
    for n, w in ways.items():
        if w["call"] == "libfastclock" and w["path"] != "CPU" and w["name"] != "fc_coarse_ns":
            # on the kernel's clock: a system call here, counted
            assert w["path"] == "kernel" and w["verdict_from"] == "seccomp", w
    j = acc.json
    mono, real = j["clocks"]
    print("%s accuracy: %s; source %s (%s); kernel read %.0f ns; cut from %d/%d brackets; "
          "max |diff| %s/%s ns, beyond the bound %d/%d, backward %d" % (
              name, "ok" if j["ok"] else "NOT ok", j["library"]["source"], j["library"]["reason"],
              j["kernel_read"]["ns"], mono["calibration_reads"], real["calibration_reads"],
              mono["max_abs_ns"], real["max_abs_ns"], mono["over_bound"], real["over_bound"],
              j["backward_steps"]))
    assert j["backward_steps"] == 0, j
    # each bracket is a system call that reads a trapped counter: the
    # calibration stopped in its share of the run
    assert mono["calibration_reads"] < 20001 and real["calibration_reads"] < 20001, (mono, real)


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


# run's one line on a trapped counter: the library measured a counter read
# against the kernel's clock (a system call here) and either refuses it or,
# where a trapped read still beat the system call, serves from it.
RUN_REFUSED = re.compile(r"not accelerating \S+: reading the cntvct_el0 from user space traps into the kernel "
                         r"here, so the accelerator cannot beat the kernel's clock \(a counter read costs \d+ ns")
RUN_SERVED = re.compile(r"accelerating \S+: .*a counter read costs \d+ ns, the kernel's clock \d+ ns "
                        r"\(a system call\)")


def check_erratum_run(r, name):
    """run on an erratum guest: the program passes, and run's one line
    says what the library measured of the trapped counter (never that the
    vDSO reads the clock: it falls back to the system call here)."""
    x = r["run"]
    said = " ".join(x.stderr.split())
    assert x.rc == 0, (x.stdout, x.stderr)
    assert x.stdout.split()[-1] == "PASS", x.stdout
    assert "vDSO" not in said, said
    refused = RUN_REFUSED.search(said)
    assert refused or RUN_SERVED.search(said), said
    print("%s run (%s): %s" % (name, "counter refused" if refused else "counter served", said))


# The full runs, bounded: on a trapped counter they end in their duration
# and a few seconds (the figures in check_erratum_full), far within 30 s.
BENCH_FULL = ("bench-full", timed("clockdoctor bench -d 1 --json", 30), 45)
ACCURACY_FULL = ("accuracy", timed("clockdoctor accuracy -d 2 --json", 30), 45)


def check_trapping_erratum(r, name, prop):
    """An erratum guest that traps the counter, with the steps ERRATUM_LOG,
    CHECK, TSC, BENCH_ERRATUM and RUN: each asserted as above."""
    trapped, _ = check_erratum(r, name, prop)
    assert trapped, r["erratum"].stdout
    check_erratum_tsc(r, name, prop)
    check_erratum_bench(r, name, trapped)
    check_erratum_run(r, name)
