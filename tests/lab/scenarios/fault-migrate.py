"""fault-migrate: a live migration of the running guest to a second QEMU on
this host (started with the same command line and -incoming on a unix
socket; QMP migrate), the workload going on in the destination: the library
(fcprobe, `clockdoctor accuracy`) and the accelerator (`clockdoctor run --
inconsistency`).  Under TCG the guest's TSC is QEMU's tick count, migrated
with the VM: the guest does not see the downtime.  Asserted: the migration
completed (the destination answered), nothing goes backwards, every read of
the library within the stated bound after the migration, the accelerator's
within its allowance."""
from fault_lab import (CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       check_common, workload)

TIMEOUT = 60
STEPS = workload("fault-migrate", 8, 3, 'host migrate || exit 1')


def check(r):
    f = check_common(r, "fault-migrate")
    assert "ok migrated" in f.fault.stdout, f.fault.stdout
