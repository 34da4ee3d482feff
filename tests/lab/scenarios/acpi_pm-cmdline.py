# SPDX-License-Identifier: MIT
"""acpi_pm-cmdline: two vCPUs booted with clocksource=acpi_pm: the clocksource
is forced from the command line, and acpi_pm never has a vDSO mode."""
from lab import CHECK, critical_on

SMP = 2
APPEND = "clocksource=acpi_pm"
STEPS = [CHECK]


def check(r):
    c, _ = critical_on(r, "acpi_pm")
    assert "clocksource-forced" in c.codes
