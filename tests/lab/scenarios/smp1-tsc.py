# SPDX-License-Identifier: MIT
"""smp1-tsc: one vCPU: the kernel keeps the TSC, the vDSO serves every clock,
and the guest's missing NTP is only worth an info (no TSC fix is in force):
status ok, exit 0."""
from lab import CHECK, WAIT_TSC, on_tsc

SMP = 1
STEPS = [WAIT_TSC, CHECK]


def check(r):
    c, j = on_tsc(r)
    assert j["status"] == "ok", [(f["code"], f["severity"]) for f in c.findings()]
    assert c.rc == 0
