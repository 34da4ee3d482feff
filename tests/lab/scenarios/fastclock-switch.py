# SPDX-License-Identifier: MIT
"""fastclock-switch: the kernel leaves tsc at run time.  Two vCPUs with the
invariant-TSC bit, the kernel on tsc, the library on the counter
(kernel-uses-counter).  fcprobe follows on CPU 0; after 1.5 s
`echo hpet > current_clocksource` from CPU 1.  The library re-reads
current_clocksource when it re-anchors, at most every second (CHECK_NS), so
within CHECK_NS + the longest re-anchor period (1.25 s) of the switch
fc_info must say source kernel, reason kernel-left ("the kernel left tsc for
hpet"), and from then on read the kernel (error 0 once the floor left by the
counter line is passed).  No clock goes backwards across the transition.
The last step switches back to tsc."""
from fastclock_lab import (CHECK_NS, CPU, CUR, MAX_INTERVAL_NS, PROGRAMS, SMP,  # noqa: F401
                           follow_around, followed)
from lab import WAIT_TSC

TIMEOUT = 45

STEPS = [
    WAIT_TSC,
    ("follow", follow_around("4 -i 100", "/tmp/fs.out", [("1.5", "sw", "echo hpet > " + CUR)],
                             after="cat " + CUR), 30),
    ("back", "echo tsc > %s; cat %s" % (CUR, CUR)),
]

CLOCKS = ("mono", "rt", "raw", "boot", "tai")


def check(r):
    fo = followed(r, CLOCKS)
    assert "\nhpet\n" in "\n" + r["follow"].stdout
    m, s = fo.marks, fo.summary
    assert (fo.start["source"], fo.start["reason"]) == ("counter", "kernel-uses-counter")
    assert len(fo.changes) == 1, fo.changes
    ch = fo.changes[0]
    assert ch["from"] == "counter/kernel-uses-counter"
    assert (ch["source"], ch["reason"]) == ("kernel", "kernel-left"), ch
    assert "left tsc for hpet" in ch["reason_text"], ch
    delay = ch["t"] - m["sw0"]
    print("kernel-left seen %.3f s after the switch" % (delay / 1e9))
    assert 0 <= delay <= CHECK_NS + MAX_INTERVAL_NS, (delay, ch, m)
    for c in CLOCKS:
        assert s[c]["back"] == 0, (c, s[c])
    before = fo.between(fo.start["t"] + 500000000, m["sw0"])
    assert len(before) >= 5
    for c in CLOCKS:
        if c != "boot":   # see fastclock-boottime
            assert fo.worst(before, c) <= 0, (c, fo.table(CLOCKS))
    after = [i for i in fo.intervals if i["t0"] >= ch["t"] + 200000000]
    assert len(after) >= 5, fo.table(CLOCKS)
    for i in after:
        assert (i["source"], i["reason"]) == ("kernel", "kernel-left"), i
        for c in CLOCKS:
            assert i[c]["err"] == 0, (c, i)
    assert fo.summary["info"]["source"] == "kernel"
    assert r["back"].stdout == "tsc\n"
