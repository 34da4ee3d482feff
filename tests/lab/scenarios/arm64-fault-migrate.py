# SPDX-License-Identifier: MIT
"""arm64-fault-migrate: a live migration of the running arm64 guest to a
second qemu-system-aarch64 on this host (the same command line: the virt
board, its virtio serial ports and chardevs, and -incoming on a unix
socket; QMP migrate) while the library (fcprobe, `clockdoctor accuracy`)
and the accelerator (`clockdoctor run -- inconsistency`, forced) read the
time, as fault-migrate does on x86.  The generic timer's count (cntvct_el0)
is read on each side of the request and printed with QEMU's downtime: under
TCG it is derived from QEMU's virtual clock, which the migration carries.
Asserted: the destination answered, nothing goes backwards (the counter
neither), every read within the stated bound, the accelerator serving and
within its allowance; the figures printed."""
from arm64_lab import ARCH, CPU, FAULT_CLOCKSOURCE, FILES, SMP, fault_programs  # noqa: F401
from fault_lab import MIGRATE_FAULT, check_common, check_migrated, workload

HOST_CONTROL = True
PROGRAMS = fault_programs()
TIMEOUT = 150
STEPS = workload("arm64-fault-migrate", 8, 3, MIGRATE_FAULT, limit=90, clocksource=FAULT_CLOCKSOURCE)


def check(r):
    f = check_common(r, "arm64-fault-migrate", clocksource=FAULT_CLOCKSOURCE)
    # the accelerator served from the counter (forced): a bound of its own
    assert all(v["bound_ns"] > 0 for v in f.inc.values()), f.inc
    check_migrated(f, "arm64-fault-migrate")
