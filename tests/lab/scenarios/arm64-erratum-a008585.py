# SPDX-License-Identifier: MIT
"""arm64-erratum-a008585: the arm64 guest with Freescale's A-008585 erratum
switched on in its device tree (`fsl,erratum-a008585` on /timer).  The
kernel applies its workaround ("Enabling global workaround for Freescale
erratum a005858"), takes arch_sys_counter out of the vDSO and traps
user-space reads of cntvct_el0 ("Trapping CNTVCT access"), emulating each.

Asserted: the kernel's log line first; check critical (vdso-fallback, every
high-resolution clock a system call); tsc unsound, naming the erratum;
bench's short run, the counter's cost beside the system call's; run's
decision; and the full `bench -d 1` and `accuracy -d 2`, which end in
their time (each read a trap) and say so: asserted within 30 s each."""
from arm64_lab import (ACCURACY_FULL, ARCH, BENCH_ERRATUM, BENCH_FULL, CHECK, CPU, ERRATUM_LOG,  # noqa: F401
                       FILES, PROGRAMS, RUN, SMP, TSC, check_erratum_full, check_trapping_erratum)

PROP = "fsl,erratum-a008585"
DT_PROPS = [("/timer", PROP)]
TIMEOUT = 360
STEPS = [ERRATUM_LOG, CHECK, TSC, BENCH_ERRATUM, RUN, BENCH_FULL, ACCURACY_FULL]


def check(r):
    name = "arm64-erratum-a008585"
    check_trapping_erratum(r, name, PROP)
    check_erratum_full(r, name)
