# SPDX-License-Identifier: MIT
"""runtime-switch: one vCPU on tsc; switch to acpi_pm through sysfs, then back.
The verdict must follow the switch: ok, critical, ok."""
SMP = 1
TIMEOUT = 120

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
STEPS = [
    ("wait", "wait-clocksource tsc 20"),
    ("check-tsc", "clockdoctor check --json"),
    ("to-acpi_pm", "echo acpi_pm > %s && cat %s" % (CUR, CUR)),
    ("check-acpi_pm", "clockdoctor check --json"),
    ("to-tsc", "echo tsc > %s && cat %s" % (CUR, CUR)),
    ("check-back", "clockdoctor check --json"),
]


def check(r):
    assert r["to-acpi_pm"].stdout == "acpi_pm\n"
    assert r["to-tsc"].stdout == "tsc\n"
    for step in ("check-tsc", "check-back"):
        c = r[step]
        assert (step, c.clocksource, c.json["status"], c.rc) == (step, "tsc", "ok", 0)
        assert c.syscall_ids == set(), step
    c = r["check-acpi_pm"]
    assert (c.clocksource, c.json["status"], c.rc) == ("acpi_pm", "critical", 2)
    assert {"slow-clocksource", "vdso-fallback"} <= c.codes
