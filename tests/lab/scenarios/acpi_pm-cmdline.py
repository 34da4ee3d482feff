"""acpi_pm-cmdline: two vCPUs booted with clocksource=acpi_pm: the clocksource
is forced from the command line, and acpi_pm never has a vDSO mode."""
from lab import HIGH_RES

SMP = 2
APPEND = "clocksource=acpi_pm"
STEPS = [("check", "clockdoctor check --json")]


def check(r):
    c = r["check"]
    j = c.json
    assert c.rc == 2
    assert j["status"] == "critical"
    assert j["clocksource"]["current"] == "acpi_pm"
    assert "clocksource-forced" in c.codes
    for cid in HIGH_RES:
        assert j["measurements"][cid]["syscall"] is True, cid
    assert j["measurements"]["gettimeofday"]["syscall"] is True
