# SPDX-License-Identifier: MIT
"""arm64-bench: `clockdoctor bench -d 1` in the healthy arm64 guest ends in
its bounded time, every way measured, the clocks in the vDSO."""
from arm64_lab import ARCH, BENCH, CPU, SMP, bench_line, bench_ways  # noqa: F401
from lab import HIGH_RES

TIMEOUT = 200
STEPS = [BENCH]


def check(r):
    b = r["bench"]
    assert b.rc == 0, b.stderr
    ways = bench_ways(b)
    print(bench_line("arm64-bench", b))
    assert all(w["measured"] for w in ways.values()), [n for n, w in ways.items() if not w["measured"]]
    for cid in HIGH_RES:
        assert ways[cid]["path"] == "vDSO", ways[cid]
        assert ways[cid + "/syscall"]["path"] == "kernel", ways[cid + "/syscall"]
    # the generic timer's ways: the counter read in user space, by the CPU
    assert ways["cntvct_el0"]["path"] == "CPU" and ways["isb;cntvct_el0"]["path"] == "CPU"
    assert b.json["timer"]["name"] == "isb;cntvct_el0" and b.json["timer"]["counter_hz"] > 0, b.json["timer"]
    assert ways["fc_now_ns"]["path"] == "CPU", ways["fc_now_ns"]
