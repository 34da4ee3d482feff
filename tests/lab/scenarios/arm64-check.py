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
        j["status"], c.clocksource, j["hypervisor"]["display"], sorted(c.syscall_ids)))
    assert c.clocksource == "arch_sys_counter"
    assert j["measured"] is True
    assert c.syscall_ids == set()
    for cid in HIGH_RES:
        assert j["measurements"][cid]["syscall"] is False, cid
    assert not c.findings("critical"), c.findings("critical")
    assert j["status"] == "ok", c.findings()
    assert j["cpu"]["arch"] == "aarch64"
    # the platform: QEMU's virt board from the device tree, not bare metal
    hv = j["hypervisor"]
    assert hv["machine_model"] == "linux,dummy-virt", hv
    assert hv["from"] == "device tree" and "QEMU" in hv["display"], hv
    assert c.finding  # every finding code is known to the JSON reader
