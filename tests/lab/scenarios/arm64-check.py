# SPDX-License-Identifier: MIT
"""arm64-check: `clockdoctor check` in the healthy arm64 guest (QEMU virt,
`-cpu max`, two vCPUs, Debian's arm64 kernel): the kernel on
arch_sys_counter, every clock in the vDSO, measured; the platform named as
QEMU's virt board (its device tree says linux,dummy-virt), not bare metal."""
from arm64_lab import ARCH, CHECK, CPU, SMP  # noqa: F401
from lab import HIGH_RES

TIMEOUT = 150
STEPS = [CHECK]


def check(r):
    c = r["check"]
    j = c.json
    print("arm64-check: status %s, clocksource %s, platform %s, system calls %s" % (
        j["status"], c.clocksource, j.get("platform"), sorted(c.syscall_ids)))
    assert c.clocksource == "arch_sys_counter"
    assert j["measured"] is True
    assert c.syscall_ids == set()
    for cid in HIGH_RES:
        assert j["measurements"][cid]["syscall"] is False, cid
    assert not c.findings("critical"), c.findings("critical")
