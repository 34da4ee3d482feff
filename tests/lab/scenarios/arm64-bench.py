# SPDX-License-Identifier: MIT
"""arm64-bench: `clockdoctor bench -d 1` in the healthy arm64 guest ends in
its bounded time, every way measured, the clocks in the vDSO."""
from arm64_lab import ARCH, BENCH, CPU, SMP, bench_ways  # noqa: F401

TIMEOUT = 200
STEPS = [BENCH]


def check(r):
    b = r["bench"]
    assert b.rc == 0, b.stderr
    ways = bench_ways(b)
    print("arm64-bench: %s" % sorted(ways))
