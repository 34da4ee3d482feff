# SPDX-License-Identifier: MIT
"""harness-smp1: self-test of the lab with one vCPU: the kernel keeps the TSC.

Right after boot it may still be on tsc-early; the refined calibration
switches it to tsc a second or two later (wait-clocksource waits for that).
"""
SMP = 1

CS = "/sys/devices/system/clocksource/clocksource0"
STEPS = [
    ("early", "cat %s/current_clocksource" % CS),
    ("wait", "wait-clocksource tsc 20"),
    ("available", "cat %s/available_clocksource" % CS),
]


def check(r):
    assert r["early"].stdout.strip() in ("tsc", "tsc-early")
    assert (r["wait"].rc, r["wait"].stdout) == (0, "tsc\n")
    assert set(r["available"].stdout.split()) >= {"tsc", "hpet", "acpi_pm"}
