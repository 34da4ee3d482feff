# SPDX-License-Identifier: MIT
"""arm64-tsc: `clockdoctor tsc` in the healthy arm64 guest: the counter is
cntvct_el0, its frequency measured against CNTFRQ_EL0 (62.5 MHz on QEMU's
virt board) and the kernel's, the two vCPUs compared; sound, or unknown
when the loaded host never ran the two vCPUs at once long enough."""
from arm64_lab import ARCH, CPU, SMP, TSC  # noqa: F401

TIMEOUT = 150
STEPS = [TSC]


def check(r):
    t = r["tsc"]
    j = t.json
    print("arm64-tsc: %s (exit %d)" % (j["summary"], t.rc))
    assert t.rc in (0, 1), t.stderr
    assert j["verdict"] in ("sound", "unknown"), j["summary"]
    if j["verdict"] == "unknown":
        # never a warp: only a pair the loaded host cut short
        assert "cut short" in j["summary"] and "no warp" in j["summary"], j["summary"]
    assert j["counter"]["kind"] == "arm64-cntvct", j["counter"]
    src = {s["source"]: s for s in j["frequency"]["sources"]}
    print("arm64-tsc: measured %d Hz, cntfrq %s, the kernel's (perf mmap page) %s" % (
        j["frequency"]["measured_hz"], src["cntfrq"]["hz"], src["perf-mmap"]["hz"]))
    assert src["cntfrq"]["hz"] == 62500000, src["cntfrq"]           # QEMU's virt board
    assert src["perf-mmap"]["hz"] == src["cntfrq"]["hz"], src        # the kernel agrees
    assert abs(j["frequency"]["measured_hz"] - 62500000) < 62500000 * 1e-3, j["frequency"]
