# SPDX-License-Identifier: MIT
"""smp2-hpet: two vCPUs, default command line: the kernel rejected the TSC
("TSCs unsynchronized") and runs on hpet, which the vDSO cannot read, so every
high-resolution clock is a system call.  check must say critical, and why."""
from lab import CHECK, COARSE, HIGH_RES, critical_on

SMP = 2
STEPS = [CHECK]


def check(r):
    c, j = critical_on(r, "hpet")
    assert {"slow-clocksource", "tsc-unstable-sync", "vdso-fallback"} <= c.codes
    assert j["measured"] is True
    assert j["hypervisor"]["name"] == "qemu-tcg"
    assert j["kernel_log"]["readable"] is True      # root reads the ring buffer
    for cid in HIGH_RES:
        # decided exactly: a seccomp filter saw every probe call reach the kernel
        assert j["measurements"][cid]["verdict_from"] == "seccomp", cid
        assert j["measurements"][cid]["kernel_calls"] == j["measurements"][cid]["calls_probed"], cid
    for cid in COARSE:
        assert j["measurements"][cid]["syscall"] is False, cid
        assert j["measurements"][cid]["kernel_calls"] == 0, cid
