# SPDX-License-Identifier: MIT
"""arm64-erratum-hisilicon: the arm64 guest with HiSilicon's erratum
161010101 switched on in its device tree (`hisilicon,erratum-161010101` on
/timer): the kernel's workaround ("Enabling global workaround for HiSilicon
erratum 161010101") takes the counter out of the vDSO and traps user-space
reads of it.  Asserted: the log line first; check critical (vdso-fallback);
tsc unsound naming the erratum; bench's short run; run's decision."""
from arm64_lab import (ARCH, BENCH_ERRATUM, CHECK, CPU, ERRATUM_LOG, FILES, PROGRAMS, RUN,  # noqa: F401
                       SMP, TSC, check_trapping_erratum)

PROP = "hisilicon,erratum-161010101"
DT_PROPS = [("/timer", PROP)]
TIMEOUT = 300
STEPS = [ERRATUM_LOG, CHECK, TSC, BENCH_ERRATUM, RUN]


def check(r):
    name = "arm64-erratum-hisilicon"
    check_trapping_erratum(r, name, PROP)
