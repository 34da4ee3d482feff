# SPDX-License-Identifier: MIT
"""What the fault-* scenarios share: one guest, a workload that holds the
library and the accelerator against the kernel while a fault is inflicted,
and the figures it reports.

The guest: two vCPUs with the invariant-TSC bit (fastclock_lab.INVTSC_CPU),
the kernel on tsc, the library on the counter (kernel-uses-counter); S3
enabled (QEMU disables it by default: -global PIIX4_PM.disable_s3=0) and
the harness's hands on QEMU (HOST_CONTROL: the guest's `host pause|wakeup|
migrate` requests, lab.py HostControl).  All fault-* scenarios share this one
boot; each puts the guest back as it found it (a CPU back online, the NTP
state reset).

The workload (workload()), started together, for SECS seconds, the fault
FAULT_AT seconds in:
  - fcprobe follow (the library, statically linked, pinned to CPU 0): every
    read of MONOTONIC, REALTIME, MONOTONIC_RAW, BOOTTIME and TAI between two
    system calls of the same clock; per-interval worst error and backward
    steps, a "bad-run" line per run of reads beyond the stated bound that
    reached RUN_REPORT_NS;
  - `clockdoctor accuracy --json` (the library, two threads);
  - `clockdoctor run -- inconsistency` with FASTCLOCK=force (the
    accelerator: the kernel's vDSO is fast on tsc, so only a forced run
    serves), one process per way (WAYS) for the whole run, MONOTONIC on two
    threads: never backwards within or across threads,
    within max(2 x bound, 1 ms) of the bracketing system calls (-x 100 -m
    1000000, as run-hpet: under TCG the emulated clocks jitter).

Time to converge: for each clock, from the first read after the fault began
that was beyond the bound (and off by RUN_REPORT_NS or more) to the first
read within the bound again (fcprobe's bad-run span_to_good_ns); 0 when the
first read after the fault was already within the bound.
"""
from fastclock_lab import FC_STEP_CHECK_NS as STEP_CHECK_NS, INVTSC_CPU, PROGRAMS as FC_PROGRAMS, Follow
from lab import REPO, clockdoctor_path

SMP = 2
CPU = INVTSC_CPU
QEMU_ARGS = ("-global", "PIIX4_PM.disable_s3=0")
# The guest kernel's clocksource watchdog off for the TSC: under TCG its TSC
# and its hpet are both emulated from the host's clocks, and while the
# guest's vCPUs are busy (fcprobe, accuracy and the accelerator at once) the
# watchdog has seen them 0.6 % apart over its 0.5 s interval and dropped the
# TSC before any fault was made (a guest of this lab, 4 s after boot).  The
# faults are what is tested; the kernel leaving the counter has its own
# scenario, fault-switch, which switches it by hand as the watchdog would.
APPEND = "tsc=nowatchdog"
HOST_CONTROL = True

RUN_REPORT_NS = 20000
# the accelerator's ways, each its own inconsistency process for the whole
# run (inconsistency tries its ways one after the other): MONOTONIC on two
# threads (the cross-thread check), the others on one
WAYS = "monotonic boottime tai realtime"

B = clockdoctor_path().resolve().parent
PROGS = REPO / "tests" / "progs"


def _dyn(name):
    return {"src": str(PROGS / (name + ".c")), "dynamic": True,
            "cflags": ["-std=c11", "-D_GNU_SOURCE", "-I", str(REPO / "include")],
            "link": ["-ldl", "-lpthread"]}


PROGRAMS = dict(FC_PROGRAMS)
PROGRAMS.update({
    "/usr/local/bin/clockfault": "guest/clockfault.c",
    "/usr/local/bin/inconsistency": _dyn("inconsistency"),
    "/usr/local/bin/stepwatch": _dyn("stepwatch"),
})
FILES = {"/usr/local/lib/libfastclock-preload.so": str(B / "libfastclock-preload.so")}


def stepwatch_start(secs):
    """A shell fragment: the accelerator's REALTIME watched by stepwatch
    (tests/progs/stepwatch.c) for SECS seconds, in the background ($SW);
    returns once it reads.  stepwatch_end() waits for it and prints its
    figures for stepwatch_result()."""
    return ("rm -f /tmp/sw.ready\n"
            "FASTCLOCK=force clockdoctor run -- stepwatch %s /tmp/sw.ready > /tmp/sw.out 2>/tmp/sw.err & SW=$!\n"
            "n=0; until [ -e /tmp/sw.ready ] || [ $n -gt 100 ]; do sleep 0.05; n=$((n+1)); done\n" % secs)


STEPWATCH_END = """wait $SW; echo "sw_rc=$?"
echo "sw $(cat /tmp/sw.out)"
cat /tmp/sw.err >&2
"""


def stepwatch_result(f):
    """stepwatch's figures (kernel_steps, steps_seen, longest_stale_ns,
    max_diff_ns, reads, rc) from the fault step's output."""
    out = f.fault.stdout.splitlines()
    sw = dict(x.split("=") for x in [y for y in out if y.startswith("sw ")][0].split()[1:])
    sw["rc"] = [y for y in out if y.startswith("sw_rc=")][0].split("=")[1]
    return sw


CPU1_ONLINE = "/sys/devices/system/cpu/cpu1/online"
# CPU 1 offline for 2 s and back, each instant marked
CPU1_OFFLINE_FAULT = """
echo 0 > %s || exit 1
echo "offline $(fcprobe now)"
sleep 2
echo 1 > %s || exit 1
echo "online $(fcprobe now)"
""" % (CPU1_ONLINE, CPU1_ONLINE)

# A live migration (HostControl's `host migrate`), the counter (fcprobe
# counter: the TSC, cntvct_el0) and the kernel's MONOTONIC read on each side;
# first the same around a `host ping`, the guest's own cost of a request (a
# busy TCG guest takes a good part of a second to start the helpers).
MIGRATE_FAULT = """
echo "counter0 $(fcprobe counter)"
host ping || exit 1
echo "counter1 $(fcprobe counter)"
host migrate || exit 1
echo "counter2 $(fcprobe counter)"
"""


def check_migrated(f, name):
    """A migration by MIGRATE_FAULT: the destination answered; prints QEMU's
    figures, the host's time for the request, and what the guest's counter
    and MONOTONIC did across it and across the ping before it.  Asserted:
    the counter did not go backwards (the library's clocks are
    check_common's).  Returns QEMU's figures and the counter's (ticks,
    MONOTONIC ns) at each mark."""
    out = f.fault.stdout.splitlines()
    line = [x for x in out if x.startswith("ok migrated")]
    assert line, f.fault.stdout
    kv = dict(x.split("=") for x in line[0].split()[2:])
    c = [[int(v) for v in x.split()[1:]] for m in ("counter0 ", "counter1 ", "counter2 ")
         for x in out if x.startswith(m)]
    assert len(c) == 3, f.fault.stdout
    ticks, mono = c[2][0] - c[1][0], c[2][1] - c[1][1]
    print("%s: QEMU's total time %s ms, downtime %s ms, %s MiB sent; the request took the host %s s; "
          "across it the guest's MONOTONIC advanced %.3f s, its counter %d ticks (%.0f Hz on MONOTONIC); "
          "across a ping before it, %.3f s" % (
              name, kv["total_ms"], kv["downtime_ms"], kv["ram_mb"], kv["request_s"], mono / 1e9, ticks,
              ticks * 1e9 / mono if mono > 0 else 0, (c[1][1] - c[0][1]) / 1e9))
    assert c[0][0] < c[1][0] < c[2][0], c
    return kv, c


# The NTP daemon's changes (guest/clockfault.c), each marked with the
# kernel's MONOTONIC when it was made: "NAME clockfault-args pause-after".
NTP_MARK = "tr ' ' '\\n' | sed -n 's/mono_ns=//p'"
NTP_PHASES = (("step+", "step 2", 1), ("step-", "step -2", 1), ("slew", "slew 20000", 1.5),
              ("pll", "pll 100000", 1.5), ("freq", "freq 100", 0))


def ntp_fault(phases):
    """A shell fragment making each phase's change in turn (NTP_PHASES)."""
    return "".join('echo "%s $(clockfault %s | %s)"\n%s' % (
        name, args, NTP_MARK, "sleep %g\n" % pause if pause else "") for name, args, pause in phases)


def workload(name, secs, fault_at, fault, ways=WAYS, limit=60, clocksource="tsc"):
    """The scenario's STEPS: wait for the clocksource (tsc; an arm64
    guest's arch_sys_counter), run the workload with the fault
    (a shell fragment; it may print "NAME NS" marks with `fcprobe now`),
    then one step per probe's output."""
    w = "/tmp/%s" % name
    script = """
W=%(w)s
taskset 1 fcprobe follow %(secs)s -i 250 -r %(rr)d > $W.follow 2>&1 &
( clockdoctor accuracy -d %(secs)s -t 2 --json > $W.acc 2> $W.acc.err; echo $? > $W.acc.rc ) &
for way in %(ways)s; do
  ( FASTCLOCK=force clockdoctor run -q -- inconsistency -t %(secs)s -T $([ $way = monotonic ] && echo 2 || echo 1) \
      -x 100 -m 1000000 $way > $W.inc.$way 2> $W.inc.$way.err; echo $? > $W.inc.$way.rc ) &
done
sleep %(at)s
echo "fault0 $(fcprobe now)"
%(fault)s
echo "fault1 $(fcprobe now)"
wait
""" % {"w": w, "secs": secs, "rr": RUN_REPORT_NS, "ways": ways, "at": fault_at, "fault": fault}
    return [
        ("wait", "wait-clocksource %s 20" % clocksource),
        ("fault", script, limit),
        ("follow", "cat %s.follow" % w),
        ("accuracy", "cat %s.acc; cat %s.acc.err >&2; exit $(cat %s.acc.rc)" % (w, w, w)),
        ("accel", "rc=0; for way in %s; do cat %s.inc.$way; cat %s.inc.$way.err >&2; "
                  "[ \"$(cat %s.inc.$way.rc)\" = 0 ] || rc=1; done; exit $rc" % (ways, w, w, w)),
    ]


class Figures:
    """The three probes' results of one fault scenario."""

    def __init__(self, r):
        self.fault = r["fault"]
        assert self.fault.rc == 0, (self.fault.stdout, self.fault.stderr)
        self.fo = Follow(r["follow"].stdout + "\n" + self.fault.stdout)
        self.marks = self.fo.marks
        self.acc_step = r["accuracy"]
        self.acc = r["accuracy"].json
        self.inc_step = r["accel"]
        self.inc = {}
        for line in r["accel"].stdout.splitlines():
            w = line.split()
            if len(w) >= 2 and "=" in w[1]:
                d = dict(x.split("=", 1) for x in w[1:-1])
                d = {k: int(v) for k, v in d.items()}
                d["verdict"] = w[-1]
                self.inc[w[0]] = d

    def converge_ns(self, clock, t0=None):
        """Time to converge after the fault (see the module's docstring)."""
        t0 = self.marks["fault0"] if t0 is None else t0
        spans = [x["span_to_good_ns"] for x in self.fo.runs if x["clock"] == clock and x["t"] >= t0]
        return max(spans, default=0)

    def line(self, name):
        """One line of figures: library (fcprobe, accuracy), accelerator."""
        s = self.fo.summary
        lib = " ".join("%s err %d back %d conv %.1fms" % (
            c, s[c]["err_max"], s[c]["back"], self.converge_ns(c) / 1e6)
            for c in ("mono", "rt", "raw", "boot", "tai"))
        lib += " (the kernel's own clock backwards: %s)" % " ".join(
            "%s %d" % (c, s[c]["kernel_back"]) for c in ("mono", "raw", "boot"))
        acc = self.acc["clocks"]
        # max_abs_ns is null where no bracket was narrow enough to keep (a
        # busy host: every one over the cut)
        a = " ".join("%s max %s over_bound %d back %d" % (
            c["name"], "-" if c["max_abs_ns"] is None else "%d" % c["max_abs_ns"], c["over_bound"],
            c["backward"]["same_thread"] + c["backward"]["across_threads"]) for c in acc)
        inc = " ".join("%s outside %d back %d" % (
            k, v["worst_outside_ns"], v["backwards"] + v["cross_thread_backwards"])
            for k, v in self.inc.items())
        return ("%s: bound <= %d ns | fcprobe: %s | accuracy: %s | accelerator: %s" % (
            name, s["bound_max"], lib, a, inc))


ALL_CLOCKS = ("mono", "raw", "boot", "rt", "tai")


def check_common(r, name, never_back=ALL_CLOCKS, within_bound=ALL_CLOCKS, accuracy_bound=True,
                 clocksource="tsc"):
    """What the fault scenarios assert first: the guest on its clocksource
    (tsc; an arm64 guest's arch_sys_counter), the workload
    ran; prints the figures line.  Then the guarantees: the clocks in
    never_back never went backwards in the library (fcprobe); every read
    of the clocks in within_bound (fcprobe) was within the bound the
    library stated for it, so no read needed time to converge; with
    accuracy_bound, every reading of `clockdoctor accuracy` was within its
    bound and none went backwards; every accelerated way passed
    (inconsistency: never backwards, within max(2 x bound, 1 ms)).
    Returns the Figures."""
    assert r["wait"].stdout == clocksource + "\n"
    f = Figures(r)
    print(f.line(name))
    s = f.fo.summary
    for c in never_back:
        assert s[c]["back"] == 0, (c, s[c])
    for c in within_bound:
        assert s[c]["excess_max"] <= 0, (c, s[c], [x for x in f.fo.runs if x["clock"] == c],
                                         f.fo.table())
    if accuracy_bound:
        for c in f.acc["clocks"]:
            assert c["over_bound"] == 0, c
            assert c["backward"]["same_thread"] + c["backward"]["across_threads"] == 0, c
        assert f.acc_step.rc == 0, f.acc_step.stderr
    assert f.inc_step.rc == 0 and all(v["verdict"] == "PASS" for v in f.inc.values()), (
        f.inc_step.stdout, f.inc_step.stderr)
    return f


LEAP_LEAD_S = 5


def leap_steps(name, kind):
    """A leap second (kind "ins" or "del") LEAP_LEAD_S seconds after the
    workload's start, REALTIME set before it (a step the probes need not
    see); the wall clock and the NTP state put back after."""
    return [("leap", "date +%%s > /tmp/%s.rt0; clockfault leap %s %d" % (name, kind, LEAP_LEAD_S))] + \
        workload(name, 8, 0, stepwatch_start(7) + STEPWATCH_END, ways="monotonic boottime tai") + [
        ("state", "clockfault state"),
        ("restore", "clockfault reset >/dev/null && date -s @$(( $(cat /tmp/%s.rt0) + 15 )) >/dev/null && "
                    "clockfault state && sleep 1" % name),
    ]


def check_leap(r, name, sign):
    """The leap seen by the kernel once, by sign; REALTIME the kernel's around
    it, TAI continuous, MONOTONIC untouched (see fault-leap-ins)."""
    leap = dict(x.split("=") for x in r["leap"].stdout.split())
    f = check_common(r, name, ("mono", "raw", "boot", "tai"), ("mono", "raw", "boot", "tai"),
                     accuracy_bound=False)
    fo, s = f.fo, f.fo.summary
    t_leap = int(leap["leap_mono_ns"])
    assert fo.start["t"] < t_leap - 1e9 and fo.intervals[-1]["t"] > t_leap + 1e9, (fo.start, leap)
    ks = [x for x in fo.events if x["event"] == "kernel-step"]
    print("%s: kernel steps %s; leap due at %.3f s" % (
        name, [(x["t"] / 1e9, x["delta_ns"]) for x in ks], t_leap / 1e9))
    # the offset's bracket is as wide as the reader's gap across the step
    assert len(ks) == 1 and abs(ks[0]["delta_ns"] - sign * 1e9) < 2e6 + ks[0]["gap_ns"], ks
    # seen at t, by the first read after a gap of gap_ns (a reader
    # descheduled for 2.1 s on a loaded host): the step lies in that gap
    assert ks[0]["t"] - ks[0]["gap_ns"] - 0.1e9 < t_leap < ks[0]["t"] + 0.1e9, (ks, leap)
    assert s["rt"]["back"] == (1 if sign < 0 else 0), s["rt"]
    # REALTIME the kernel's around the leap: within the bound at every read,
    # but for one whose bracket held the kernel's step (the reader was
    # descheduled across it, gap_ns: its two kernel reads are a second
    # apart the wrong way, so no value can lie between them)
    for x in fo.runs:
        if x["clock"] == "rt":
            assert x["reads"] == 1 and x["t"] + x["span_to_good_ns"] == ks[0]["t"], (x, ks)
    calm = [i for i in fo.intervals if not i["t0"] <= ks[0]["t"] <= i["t"]]
    assert fo.worst(calm, "rt") <= 0, fo.table(("mono", "rt", "tai"))
    # the accelerator's REALTIME across the leap: the kernel's, never stale
    # for more than FC_STEP_CHECK_NS (+ the reads' cost)
    sw = stepwatch_result(f)
    print("%s accelerator REALTIME (stepwatch): %s" % (name, sw))
    assert sw["rc"] == "0" and int(sw["longest_stale_ns"]) <= 2 * STEP_CHECK_NS, sw
    st = dict(x.split("=") for x in r["state"].stdout.split())
    assert int(st["tai"]) == -sign, st
    a = f.acc["clocks"]
    for c in a:
        assert c["over_bound"] == 0, c                  # REALTIME the kernel's around the leap
    # fc_now_ns never back; fc_realtime_ns back once a thread at an inserted
    # leap (as the kernel's), and below the largest published value for the
    # repeated second (every read of it counts "across threads")
    assert a[0]["backward"]["same_thread"] + a[0]["backward"]["across_threads"] == 0, a[0]
    assert a[1]["name"] == "fc_realtime_ns", a[1]
    assert a[1]["backward"]["same_thread"] <= (f.acc["threads"] if sign < 0 else 0), a[1]
    if sign > 0:
        assert a[1]["backward"]["across_threads"] == 0, a[1]
    assert sorted(f.inc) == ["boottime", "monotonic", "tai"], f.inc
