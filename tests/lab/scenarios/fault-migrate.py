# SPDX-License-Identifier: MIT
"""fault-migrate: a live migration of the running guest to a second QEMU on
this host (started with the same command line and -incoming on a unix
socket; QMP migrate), the workload going on in the destination: the library
(fcprobe, `clockdoctor accuracy`) and the accelerator (`clockdoctor run --
inconsistency`).  Under TCG the guest's TSC is QEMU's tick count, migrated
with the VM: the guest does not see the downtime.  Asserted: the migration
completed (the destination answered), nothing goes backwards, every read of
the library within the stated bound after the migration, the accelerator's
within its allowance."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       check_common, workload)

TIMEOUT = 60
STEPS = workload("fault-migrate", 8, 3, 'host migrate || exit 1')


def check(r):
    f = check_common(r, "fault-migrate")
    line = [x for x in f.fault.stdout.splitlines() if x.startswith("ok migrated")]
    assert line, f.fault.stdout
    kv = dict(x.split("=") for x in line[0].split()[2:])
    print("fault-migrate: QEMU's total time %s ms, downtime %s ms, %s MiB sent; the guest's MONOTONIC "
          "advanced %.3f s across the request" % (kv["total_ms"], kv["downtime_ms"], kv["ram_mb"],
                                                  (f.marks["fault1"] - f.marks["fault0"]) / 1e9))
