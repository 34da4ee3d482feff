"""smp2-tsc-reliable: two vCPUs with tsc=reliable: the boot-time sync check is
skipped, the kernel keeps the TSC, no clock is a system call.  With a TSC fix
in force the missing NTP becomes a warning, and it must be the only one."""
SMP = 2
APPEND = "tsc=reliable"
STEPS = [
    ("wait", "wait-clocksource tsc 20"),
    ("check", "clockdoctor check --json"),
]


def check(r):
    c = r["check"]
    j = c.json
    assert j["clocksource"]["current"] in ("tsc", "tsc-early")
    assert c.syscall_ids == set()
    assert "tsc-reliable-set" in c.codes
    serious = [f["code"] for f in c.findings() if f["severity"] in ("warning", "critical")]
    assert set(serious) <= {"ntp-unsynchronized"}
    assert c.rc == {"ok": 0, "warning": 1}[j["status"]]
