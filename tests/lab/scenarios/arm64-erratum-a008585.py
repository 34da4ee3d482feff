# SPDX-License-Identifier: MIT
"""arm64-erratum-a008585: the arm64 guest with Freescale's A-008585 erratum
switched on in its device tree (`fsl,erratum-a008585` on /timer).  The
kernel applies its workaround ("Enabling global workaround for Freescale
erratum a005858"), takes arch_sys_counter out of the vDSO and traps
user-space reads of cntvct_el0 ("Trapping CNTVCT access"), emulating each.

Asserted: the kernel's log line first; check critical (vdso-fallback, every
high-resolution clock a system call); tsc unsound, naming the erratum;
bench's short run, the counter's cost beside the system call's; run's
decision; and the full `bench -d 1` and `accuracy -d 2`, each bounded by
the guest's `timeout`."""
from arm64_lab import (ARCH, BENCH_ERRATUM, CHECK, CPU, ERRATUM_LOG, FILES, PROGRAMS, RUN,  # noqa: F401
                       SMP, TIMED_OUT, TSC, check_trapping_erratum, timed)

PROP = "fsl,erratum-a008585"
DT_PROPS = [("/timer", PROP)]
TIMEOUT = 420
STEPS = [ERRATUM_LOG, CHECK, TSC, BENCH_ERRATUM, RUN,
         ("bench-full", timed("clockdoctor bench -d 1 --json", 30), 45),
         ("accuracy", timed("clockdoctor accuracy -d 2 --json", 30), 45)]


def check(r):
    name = "arm64-erratum-a008585"
    check_trapping_erratum(r, name, PROP)
    full, acc = r["bench-full"], r["accuracy"]
    print("%s bench -d 1: exit %d in %.1f s; accuracy -d 2: exit %d in %.1f s" % (
        name, full.rc, full.secs, acc.rc, acc.secs))
    # arm64-lib: today both run past their limit (TIMED_OUT: every read of
    # the trapped counter a trap, and the library's start reads it); once
    # the library measures a user-space read at start and serves from the
    # kernel's clock here, both end in time: assert rc 0 then.
    assert full.rc in (0,) + TIMED_OUT and acc.rc in (0, 1) + TIMED_OUT, (full.stderr, acc.stderr)
