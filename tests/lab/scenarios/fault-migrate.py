# SPDX-License-Identifier: MIT
"""fault-migrate: a live migration of the running guest to a second QEMU on
this host (started with the same command line and -incoming on a unix
socket; QMP migrate), the workload going on in the destination: the library
(fcprobe, `clockdoctor accuracy`) and the accelerator (`clockdoctor run --
inconsistency`).  Under TCG the guest's TSC is QEMU's tick count, migrated
with the VM: the guest does not see the downtime.  Asserted: the migration
completed (the destination answered), nothing goes backwards (the TSC
neither), every read of the library within the stated bound after the
migration, the accelerator's within its allowance."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, MIGRATE_FAULT, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       check_common, check_migrated, workload)

TIMEOUT = 60
STEPS = workload("fault-migrate", 8, 3, MIGRATE_FAULT)


def check(r):
    check_migrated(check_common(r, "fault-migrate"), "fault-migrate")
