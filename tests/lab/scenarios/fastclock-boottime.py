# SPDX-License-Identifier: MIT
"""fastclock-boottime: fc_gettime(CLOCK_BOOTTIME) is within the error bound
fc_info reports.  Two vCPUs with the invariant-TSC bit, kernel and library on
tsc; fcprobe follows for 2 s.  The guest never slept, so BOOTTIME -
MONOTONIC is 0 in the kernel; the library's BOOTTIME is its MONOTONIC plus an
offset it brackets between two kernel reads."""
from fastclock_lab import CPU, PROGRAMS, SMP, followed  # noqa: F401
from lab import WAIT_TSC

TIMEOUT = 30
STEPS = [WAIT_TSC, ("follow", "taskset 1 fcprobe follow 2 -i 250", 20)]


def check(r):
    fo = followed(r, ("mono", "boot"))
    assert fo.start["source"] == "counter"
    s = fo.summary
    assert s["boot"]["back"] == 0
    assert s["mono"]["excess_max"] <= 0, fo.table(("mono", "boot"))
    assert s["boot"]["excess_max"] <= 0, (
        "BOOTTIME off by %d ns, bound at most %d ns" % (s["boot"]["err_max"], s["bound_max"]),
        fo.table(("mono", "boot")))
