# SPDX-License-Identifier: MIT
"""fastclock-adjtimex: libfastclock follows an NTP frequency change.  Two vCPUs
with the invariant-TSC bit (fastclock_lab.INVTSC_CPU), the kernel on tsc, the
library on the counter (kernel-uses-counter).  fcprobe follows the kernel on
CPU 0 for 8 s (every library read between two kernel reads, system calls);
on CPU 1 `adjtimex -f 3276800` (+50 ppm) after 2 s, then `adjtimex -t 10010`
(+1000 ppm on top) 2.5 s later.  The library re-reads the NTP frequency at
every re-anchor (every 10-250 ms), so:
  - before the first change every read is within the error bound fc_info
    reports (the bound read just before and just after each batch of reads);
  - around each change a read may be off by at most that bound plus the
    change times the longest re-anchor period (the line in use when the
    kernel changed still has the old slope): 12.5 us for 50 ppm, 250 us for
    1000 ppm;
  - from 500 ms after each change (two longest re-anchor periods), every read
    is within the reported bound again, and at the end the error is under
    1 us (it tracks);
  - MONOTONIC_RAW is untouched by NTP: within its bound throughout;
  - nothing goes backwards.
The last step puts the kernel's frequency back (tick 10000, freq 0)."""
from fastclock_lab import CPU, MAX_INTERVAL_NS, PROGRAMS, SMP, follow_around, followed  # noqa: F401
from lab import WAIT_TSC

TIMEOUT = 60

STEPS = [
    WAIT_TSC,
    ("follow", follow_around("8 -i 250", "/tmp/fa.out", [
        ("2", "freq", "taskset 2 adjtimex -q -f 3276800"),
        ("2.5", "tick", "taskset 2 adjtimex -q -t 10010"),
    ], after="adjtimex -q -f 0 -t 10000"), 40),
    ("restore", "adjtimex -q -f 0 -t 10000; adjtimex | grep -E '^-[ft] '"),
]

CLOCKS = ("mono", "rt", "raw", "tai")


def check(r):
    fo = followed(r, CLOCKS)
    m = fo.marks
    assert fo.start["source"] == "counter" and fo.start["reason"] == "kernel-uses-counter", fo.start
    assert fo.changes == [], fo.changes          # on the counter throughout
    s = fo.summary
    for c in ("mono", "raw", "boot", "rt", "tai"):
        assert s[c]["back"] == 0, (c, s[c])
    # before the first change: within the bound
    before = fo.between(fo.start["t"] + 500000000, m["freq0"])
    assert len(before) >= 4, fo.table(CLOCKS)
    for c in CLOCKS:
        assert fo.worst(before, c) <= 0, (c, fo.table(CLOCKS))
    # MONOTONIC_RAW: within its bound throughout
    assert fo.summary["raw"]["excess_max"] <= 0, fo.table(CLOCKS)
    settle = 2 * MAX_INTERVAL_NS
    for name, ppm, nxt in (("freq", 50, "tick0"), ("tick", 1000, None)):
        t0, t1 = m[name + "0"], m[name + "1"]
        around = [i for i in fo.intervals if i["t"] >= t0 and i["t0"] <= t1 + settle]
        for i in around:
            allowed = i["bound_max"] + ppm * 1e-6 * MAX_INTERVAL_NS
            for c in ("mono", "rt", "tai"):
                assert i[c]["err"] <= allowed, (name, c, i[c], allowed, fo.table(CLOCKS))
        after = fo.between(t1 + settle, nxt and m[nxt] or fo.intervals[-1]["t"])
        assert after, (name, fo.table(CLOCKS))
        for c in CLOCKS:
            assert fo.worst(after, c) <= 0, (name, c, fo.table(CLOCKS))
    last = fo.intervals[-1]
    assert last["mono"]["err_last"] <= 1000, fo.table(CLOCKS)
    assert last["source"] == "counter"
    assert r["restore"].stdout.split() == ["-f", "freq.adjust:", "0", "(65536", "=", "1ppm)",
                                           "-t", "tick:", "10000", "us"], r["restore"].stdout
