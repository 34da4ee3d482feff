# SPDX-License-Identifier: MIT
"""arm64-erratum-hisilicon: the arm64 guest with HiSilicon's erratum
161010101 switched on in its device tree (`hisilicon,erratum-161010101` on
/timer): the kernel's workaround ("Enabling global workaround for HiSilicon
erratum 161010101") takes the counter out of the vDSO and traps user-space
reads of it.  Asserted: the log line first; check critical (vdso-fallback);
tsc unsound naming the erratum and the trap; bench's short run; run's
decision; the full `bench -d 1` and `accuracy -d 2`, each within 30 s."""
from arm64_lab import (ACCURACY_FULL, ARCH, BENCH_ERRATUM, BENCH_FULL, CHECK, CPU, ERRATUM_LOG,  # noqa: F401
                       FILES, PROGRAMS, RUN, SMP, TSC, check_erratum_full, check_trapping_erratum)

PROP = "hisilicon,erratum-161010101"
DT_PROPS = [("/timer", PROP)]
TIMEOUT = 360
STEPS = [ERRATUM_LOG, CHECK, TSC, BENCH_ERRATUM, RUN, BENCH_FULL, ACCURACY_FULL]


def check(r):
    name = "arm64-erratum-hisilicon"
    check_trapping_erratum(r, name, PROP)
    check_erratum_full(r, name)
