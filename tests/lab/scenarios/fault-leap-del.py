# SPDX-License-Identifier: MIT
"""fault-leap-del: a leap second deleted.  REALTIME is set to 23:59:55 UTC
of 2027-06-30 and STA_DEL announced with adjtimex; the kernel skips 23:59:59
(REALTIME + 1 s at 23:59:59; the TAI offset - 1).  The library and the
accelerator read through it, as in fault-leap-ins.  Asserted: one REALTIME
step of +1 s; the library's REALTIME the kernel's around it, TAI never
backwards and within the bound; MONOTONIC untouched."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       Figures, check_leap, leap_steps)

TIMEOUT = 60
STEPS = leap_steps("fault-leap-del", "del")


def check(r):
    check_leap(r, "fault-leap-del", +1)
