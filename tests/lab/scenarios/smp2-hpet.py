"""smp2-hpet: two vCPUs, default command line: the kernel rejected the TSC
("TSCs unsynchronized") and runs on hpet, which the vDSO cannot read, so every
high-resolution clock is a system call.  check must say critical, and why."""
from lab import HIGH_RES, COARSE

SMP = 2
STEPS = [("check", "clockdoctor check --json")]


def check(r):
    c = r["check"]
    j = c.json
    assert c.rc == 2
    assert j["status"] == "critical"
    assert j["clocksource"]["current"] == "hpet"
    assert {"slow-clocksource", "tsc-unstable-sync", "vdso-fallback"} <= c.codes
    assert j["measured"] is True
    assert j["hypervisor"]["name"] == "qemu-tcg"
    assert j["kernel_log"]["readable"] is True      # root reads the ring buffer
    for cid in HIGH_RES:
        assert j["measurements"][cid]["syscall"] is True, cid
        # decided exactly: a seccomp filter saw every probe call reach the kernel
        assert j["measurements"][cid]["verdict_from"] == "seccomp", cid
        assert j["measurements"][cid]["kernel_calls"] == j["measurements"][cid]["calls_probed"], cid
    assert j["measurements"]["gettimeofday"]["syscall"] is True
    for cid in COARSE:
        assert j["measurements"][cid]["syscall"] is False, cid
        assert j["measurements"][cid]["kernel_calls"] == 0, cid
