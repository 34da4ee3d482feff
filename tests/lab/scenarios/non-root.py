# SPDX-License-Identifier: MIT
"""non-root: two vCPUs on hpet, kernel.dmesg_restrict=1, check run as an
unprivileged user (uid 1000).  Without the kernel log it must still diagnose
from sysfs and its own measurements, and say why the log was not read."""
SMP = 2

STEPS = [
    ("restrict", "cat /proc/sys/kernel/dmesg_restrict > /tmp/dmesg_restrict.old; "
                 "echo 1 > /proc/sys/kernel/dmesg_restrict"),
    ("whoami", "as-user id -u"),
    ("check", "as-user clockdoctor check --json"),
    # Scenarios sharing this boot run after this one: leave the guest as found.
    ("restore", "cat /tmp/dmesg_restrict.old > /proc/sys/kernel/dmesg_restrict"),
]


def check(r):
    assert r["whoami"].stdout == "1000\n"
    c = r["check"]
    j = c.json
    assert c.rc == 2
    assert j["status"] == "critical"
    assert j["clocksource"]["current"] == "hpet"
    assert {"slow-clocksource", "vdso-fallback"} <= c.codes
    # The clocksource comes from sysfs, which needs no privilege.
    assert any("hpet" in e for e in c.finding("slow-clocksource")["evidence"])
    assert j["measurements"]["CLOCK_MONOTONIC"]["syscall"] is True
    log = j["kernel_log"]
    assert log["readable"] is False
    assert "dmesg_restrict" in (log.get("note") or "")
