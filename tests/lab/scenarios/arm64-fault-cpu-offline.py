# SPDX-License-Identifier: MIT
"""arm64-fault-cpu-offline: CPU 1 of the arm64 guest taken offline for 2 s
and brought back while the library (fcprobe on CPU 0, `clockdoctor
accuracy`) and the accelerator (forced) read the time; then `clockdoctor
tsc` with CPU 1 offline (one CPU: nothing to compare, unknown) and online
again.  Asserted: nothing goes backwards, every read within the bound; the
figures printed."""
from arm64_lab import ARCH, CPU, FAULT_CLOCKSOURCE, FILES, SMP, fault_programs  # noqa: F401
from fault_lab import CPU1_OFFLINE_FAULT, CPU1_ONLINE, check_common, workload

HOST_CONTROL = True
PROGRAMS = fault_programs()
TIMEOUT = 150
C1 = CPU1_ONLINE
STEPS = workload("arm64-fault-cpu-offline", 8, 2, CPU1_OFFLINE_FAULT, limit=90,
                 clocksource=FAULT_CLOCKSOURCE) + [
    ("tsc-offline", "echo 0 > %s; CLOCKDOCTOR_STATE_DIR=/tmp/tsc-off timeout 60 clockdoctor tsc --json -d 0.3; "
                    "echo \"rc=$?\" >&2; echo 1 > %s" % (C1, C1), 90),
    ("restore", "echo 1 > %s; cat %s" % (C1, C1)),
]


def check(r):
    f = check_common(r, "arm64-fault-cpu-offline", clocksource=FAULT_CLOCKSOURCE)
    # the accelerator served from the counter (forced): a bound of its own
    assert all(v["bound_ns"] > 0 for v in f.inc.values()), f.inc
    assert "offline" in f.marks and "online" in f.marks, f.fault.stdout
    assert r["restore"].stdout == "1\n"
    off = r["tsc-offline"]
    print("arm64-fault-cpu-offline tsc with CPU 1 offline: %s, sync %s" % (
        off.json["summary"], off.json["sync"]["status"]))
    assert off.json["sync"]["cpus_online"] == 1, off.json["sync"]
    assert off.json["verdict"] == "unknown", off.json["summary"]
