# SPDX-License-Identifier: MIT
"""fault-suspend: the guest suspended to RAM (S3: `echo mem >
/sys/power/state`) and woken 3 s later by the harness (QMP system_wakeup)
while the library (fcprobe, `clockdoctor accuracy`) and the accelerator
(`clockdoctor run -- inconsistency`) read the time.  Asserted: nothing goes
backwards; the guest really slept (the kernel's BOOTTIME - MONOTONIC grew by
the time asleep, as its log says); the library's MONOTONIC and BOOTTIME are
within the stated bound of the kernel's at every read after the resume (no
read is owed to the resume: time to converge 0), the accelerator's within
its allowance (max(2 x bound, 1 ms))."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       check_common, workload)

TIMEOUT = 60
STEPS = workload("fault-suspend", 8, 2, """
slept() { clockfault state | awk -F'boot_minus_mono_ns=' '{ v = $2 + 0; print v < 0 ? 0 : v }'; }
echo "slept0 $(slept)"
host wakeup 3 || exit 1
echo mem > /sys/power/state || exit 1
echo "slept1 $(slept)"
""")


def check(r):
    f = check_common(r, "fault-suspend")
    slept = f.marks["slept1"] - f.marks["slept0"]
    print("fault-suspend: asleep %.3f s by the kernel's BOOTTIME - MONOTONIC" % (slept / 1e9))
    assert slept >= 1e9, f.marks
    assert "PM: suspend entry (deep)" in r.console and "PM: suspend exit" in r.console, r.console[-3000:]
