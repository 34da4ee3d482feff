# SPDX-License-Identifier: MIT
"""fault-leap-ins: a leap second inserted.  REALTIME is set to 23:59:55 UTC
of 2026-12-31 and STA_INS announced with adjtimex (guest/clockfault.c, as an
NTP daemon does on the last day of a month); the kernel then repeats the
second 23:59:59 (REALTIME back by 1 s at midnight; the TAI offset + 1).
The library (fcprobe, `clockdoctor accuracy`) and the accelerator
(`clockdoctor run -- inconsistency`; MONOTONIC, BOOTTIME and TAI: its
REALTIME way would count the leap's backward step) read through it.
Asserted: the kernel inserted the leap (one REALTIME step of -1 s seen by
fcprobe, TAI offset 1 after); the library's REALTIME is the kernel's around
it (every read within the bound: nothing stale across the leap), its TAI
never backwards and within the bound; MONOTONIC untouched."""
from fault_lab import (APPEND, CPU, FILES, HOST_CONTROL, PROGRAMS, QEMU_ARGS, SMP,  # noqa: F401
                       Figures, check_leap, leap_steps)

TIMEOUT = 60
STEPS = leap_steps("fault-leap-ins", "ins")


def check(r):
    check_leap(r, "fault-leap-ins", -1)
