# SPDX-License-Identifier: MIT
"""arm64-fault-pause: the arm64 guest stopped for 5 s (QMP stop) and
continued while the library (fcprobe, `clockdoctor accuracy`) and the
accelerator (`clockdoctor run -- inconsistency`, forced) read the time, as
fault-pause does on x86.  Unlike x86's TSC under TCG, the guest's generic
timer has been seen to count the pause (its MONOTONIC advanced 6.4 s across
the 5 s stop in one run, 3.8 s in another: printed, not asserted).
Asserted: nothing goes backwards, every read within the stated bound, the
accelerator serving and within its allowance; the figures printed."""
from arm64_lab import ARCH, CPU, FAULT_CLOCKSOURCE, FILES, SMP, fault_programs  # noqa: F401
from fault_lab import check_common, workload

HOST_CONTROL = True
PROGRAMS = fault_programs()
TIMEOUT = 120
STEPS = workload("arm64-fault-pause", 8, 3, "host pause 5", limit=90, clocksource=FAULT_CLOCKSOURCE)


def check(r):
    f = check_common(r, "arm64-fault-pause", clocksource=FAULT_CLOCKSOURCE)
    # the accelerator served from the counter (forced): a bound of its own
    assert all(v["bound_ns"] > 0 for v in f.inc.values()), f.inc
    m = f.marks
    assert "ok paused_s=" in f.fault.stdout, f.fault.stdout
    print("arm64-fault-pause: the VM stopped %s s by the host; the guest's MONOTONIC advanced %.3f s across it" % (
        f.fault.stdout.split("paused_s=")[1].split()[0], (m["fault1"] - m["fault0"]) / 1e9))
