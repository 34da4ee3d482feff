# SPDX-License-Identifier: MIT
"""arm64-fault-ntp: REALTIME stepped by +2 s and back, then slewed
(adjtime of 20 ms) in the arm64 guest while the library (fcprobe,
`clockdoctor accuracy`) and the accelerator (forced: `inconsistency` on
MONOTONIC and BOOTTIME, stepwatch on REALTIME) read the time.  Asserted:
MONOTONIC, RAW and BOOTTIME never go backwards; the accelerator passes;
the figures printed, with how long the accelerator's REALTIME was stale
after a step."""
from arm64_lab import ARCH, CPU, FAULT_CLOCKSOURCE, FILES, SMP, fault_programs  # noqa: F401
from fault_lab import NTP_PHASES, STEPWATCH_END, check_common, ntp_fault, stepwatch_result, stepwatch_start, workload

HOST_CONTROL = True
PROGRAMS = fault_programs()
TIMEOUT = 150
STEPS = workload("arm64-fault-ntp", 10, 1, stepwatch_start(4) + ntp_fault(NTP_PHASES[:3]) + STEPWATCH_END,
                 ways="monotonic boottime", limit=90, clocksource=FAULT_CLOCKSOURCE) + [
    ("restore", "clockfault reset && sleep 2"),
]


def check(r):
    f = check_common(r, "arm64-fault-ntp", ("mono", "raw", "boot"), within_bound=(), accuracy_bound=False,
                     clocksource=FAULT_CLOCKSOURCE)
    # the accelerator served from the counter (forced): a bound of its own
    assert all(v["bound_ns"] > 0 for v in f.inc.values()), f.inc
    sw = stepwatch_result(f)
    print("arm64-fault-ntp accelerator REALTIME (stepwatch): %s" % sw)
    assert sw["rc"] == "0", sw
    assert r["restore"].rc == 0, r["restore"].stderr
