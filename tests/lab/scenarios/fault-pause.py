# SPDX-License-Identifier: MIT
"""fault-pause: the VM stopped for 5 s (QMP stop) and continued (cont) while
the library (fcprobe, `clockdoctor accuracy`) and the accelerator (`clockdoctor
run -- inconsistency`) read the time.  Under TCG the guest's TSC and hpet
stop with the VM (QEMU stops its tick count while stopped): the guest's
MONOTONIC and BOOTTIME do not see the pause, REALTIME falls 5 s behind the
host's (nothing in this guest corrects it).  Asserted: nothing goes
backwards, every read within the stated bound throughout (no read is owed to
the pause), and the guest's MONOTONIC advanced by far less than the host's
5 s across the pause (else the TSC saw the pause and the test would say
nothing about a pause the guest cannot see)."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       check_common, workload)

TIMEOUT = 60
STEPS = workload("fault-pause", 8, 3, 'host pause 5')


def check(r):
    f = check_common(r, "fault-pause")
    m = f.marks
    assert "ok paused_s=" in f.fault.stdout, f.fault.stdout
    print("fault-pause: the VM stopped %s s by the host; the guest's MONOTONIC advanced %.3f s across it" % (
        f.fault.stdout.split("paused_s=")[1].split()[0], (m["fault1"] - m["fault0"]) / 1e9))
    assert m["fault1"] - m["fault0"] < 2e9, m
