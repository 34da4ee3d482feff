# SPDX-License-Identifier: MIT
"""arm64-erratum-allwinner: the arm64 guest with Allwinner A64's "unstable
timer" erratum (`allwinner,erratum-unknown1` on /timer): the kernel's
workaround ("Enabling global workaround for Allwinner erratum UNKNOWN1")
takes the counter out of the vDSO and (Debian's 6.1) traps user-space reads
of it.  Asserted: the log line first; check
critical (vdso-fallback, every high-resolution clock a system call); tsc
unsound naming the erratum."""
from arm64_lab import ARCH, CHECK, CPU, ERRATUM_LOG, SMP, TSC, check_erratum, check_erratum_tsc  # noqa: F401

PROP = "allwinner,erratum-unknown1"
DT_PROPS = [("/timer", PROP)]
TIMEOUT = 200
STEPS = [ERRATUM_LOG, CHECK, TSC]


def check(r):
    name = "arm64-erratum-allwinner"
    trapped, _ = check_erratum(r, name, PROP)
    assert trapped, r["erratum"].stdout     # 6.1's workaround traps it too
    check_erratum_tsc(r, name, PROP)
