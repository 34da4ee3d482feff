# SPDX-License-Identifier: MIT
"""What the fastclock-* scenarios share: the guest program fcprobe (guest/fcprobe.c
linked with build/libfastclock.a), the CPU model that lets the library use the
TSC at all, and the parsing of fcprobe's JSON lines.

Why a CPU option: QEMU's TCG CPU has no invariant-TSC bit (CPUID 0x80000007
EDX[8]; the kernel then sets neither constant_tsc nor nonstop_tsc), and
libfastclock refuses a TSC that is not invariant before anything else, verdict
or FASTCLOCK=force included.  TCG's TSC is in fact the host's (QEMU reads the
host's counter for the guest's rdtsc), so it runs at a constant rate;
`x-force-features=on` keeps the `+invtsc` that TCG would otherwise filter out
(QEMU warns "TCG doesn't support requested feature", and the guest sees the
bit).  With the bit the kernel also finds two vCPUs' TSCs synchronized and
stays on tsc.  The scenarios that use the default CPU (fastclock-hpet) show the
library's refusal instead.

The environment variable LAB_FASTCLOCK_LIB replaces build/libfastclock.a (to
try a patched library in the guests).
"""
import json
import os

from lab import REPO

INVTSC_CPU = "max,+invtsc,x-force-features=on"
# The guest of the scenarios that run the library on the counter: two vCPUs
# with that bit (a scenario that imports SMP and CPU boots it).
SMP = 2
CPU = INVTSC_CPU

FC_STEP_CHECK_NS = 1000000      # include/fastclock.h
MAX_INTERVAL_NS = 250000000     # lib/fastclock.c: the longest re-anchor period
CHECK_NS = 1000000000           # lib/fastclock.c: current_clocksource re-read period

LIBRARY = os.environ.get("LAB_FASTCLOCK_LIB") or str(REPO / "build" / "libfastclock.a")

def fcprobe_program(library=LIBRARY):
    """fcprobe linked with a libfastclock.a (an arm64 guest's: the aarch64
    build's)."""
    return {"/usr/local/bin/fcprobe": {
        "src": "guest/fcprobe.c",
        "cflags": ["-I", str(REPO / "include")],
        "link": [library, "-lpthread"],
    }}


PROGRAMS = fcprobe_program()

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
# A sound verdict for this boot, as `clockdoctor tsc` would leave it (no
# counter_hz: the library measures the frequency).  Root owns it, mode 0644.
WRITE_VERDICT = ("printf 'boot_id=%%s\\nverdict=%s\\n%s' \"$(cat /proc/sys/kernel/random/boot_id)\""
                 " > %s && chmod %s %s")


def verdict_cmd(path, verdict="sound", extra="", mode="644"):
    return WRITE_VERDICT % (verdict, extra, path, mode, path)


class Follow:
    """fcprobe follow's output: .start, .intervals (in order), .changes,
    .runs (bad runs reported), .events (every event line, in order),
    .summary, and .marks: lines "NAME NS" the step script printed (kernel
    MONOTONIC instants, from `fcprobe now`)."""

    def __init__(self, text):
        self.start, self.summary = None, None
        self.intervals, self.changes, self.runs, self.events = [], [], [], []
        self.marks = {}
        for line in text.splitlines():
            if not line.startswith("{"):
                w = line.split()
                if len(w) == 2 and w[1].isdigit():
                    self.marks[w[0]] = int(w[1])
                continue
            d = json.loads(line)
            ev = d.get("event")
            if ev:
                self.events.append(d)
            if ev == "start":
                self.start = d
            elif ev == "change":
                self.changes.append(d)
            elif ev == "bad-run":
                self.runs.append(d)
            elif ev:
                pass
            elif d.get("summary"):
                self.summary = d
            else:
                self.intervals.append(d)
        assert self.start and self.summary and self.intervals, text[-3000:]

    def between(self, t0, t1):
        """The intervals that lie wholly in [t0, t1] (kernel MONOTONIC ns)."""
        return [i for i in self.intervals if i["t0"] >= t0 and i["t"] <= t1]

    def containing(self, t):
        return [i for i in self.intervals if i["t0"] <= t <= i["t"]]

    def worst(self, ivs, clock, key="excess"):
        return max((i[clock][key] for i in ivs), default=None)

    def table(self, clocks=("mono", "rt", "raw", "boot", "tai")):
        """One line per interval, for a failure message or -s output."""
        out = []
        for i in self.intervals:
            out.append("t=%.3f %s/%s bound %d..%d | " % (i["t"] / 1e9, i["source"], i["reason"],
                                                       i["bound_min"], i["bound_max"]) +
                       " ".join("%s err %d (%+d) excess %d back %d" % (
                           c, i[c]["err"], i[c]["err_signed"], i[c]["excess"], i[c]["back"])
                           for c in clocks))
        return "\n".join(out)


def follow_around(args, out, events, after=""):
    """The script of a follow step that changes something while the library
    is followed: `fcprobe follow ARGS` on CPU 0 in the background (its lines
    in the file OUT); for each (pause, mark, command) of events, a sleep of
    pause seconds, then command between the kernel instants MARK0 and MARK1
    (Follow.marks); then the wait for fcprobe, after, fcprobe's lines, and
    its exit status."""
    lines = ["taskset 1 fcprobe follow %s > %s & P=$!" % (args, out)]
    for pause, mark, command in events:
        lines += ["sleep %s" % pause, 'echo "%s0 $(fcprobe now)"; %s; echo "%s1 $(fcprobe now)"' % (mark, command, mark)]
    lines += ["wait $P; rc=$?"] + ([after] if after else []) + ["cat %s" % out, "exit $rc"]
    return "\n" + "\n".join(lines) + "\n"


def followed(r, clocks):
    """The follow step's Follow, after what a scenario that follows the
    library on tsc asserts first: the kernel was on tsc (the wait step) and
    fcprobe exited 0.  Prints the table of clocks."""
    assert r["wait"].stdout == "tsc\n"
    f = r["follow"]
    assert f.rc == 0, f.stderr
    fo = Follow(f.stdout)
    print(fo.table(clocks))
    return fo


def json_lines(text):
    return [json.loads(x) for x in text.splitlines() if x.startswith("{")]
