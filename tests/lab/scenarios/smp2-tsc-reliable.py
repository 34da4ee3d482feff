# SPDX-License-Identifier: MIT
"""smp2-tsc-reliable: two vCPUs with tsc=reliable: the boot-time sync check is
skipped, the kernel keeps the TSC, no clock is a system call.  With a TSC fix
in force the missing NTP becomes a warning, and it must be the only one."""
from lab import CHECK, WAIT_TSC, on_tsc

SMP = 2
APPEND = "tsc=reliable"
STEPS = [WAIT_TSC, CHECK]


def check(r):
    c, j = on_tsc(r)
    assert "tsc-reliable-set" in c.codes
    serious = [f["code"] for f in c.findings() if f["severity"] in ("warning", "critical")]
    assert set(serious) <= {"ntp-unsynchronized"}
    assert c.rc == {"ok": 0, "warning": 1}[j["status"]]
