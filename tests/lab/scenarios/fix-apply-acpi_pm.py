# SPDX-License-Identifier: MIT
"""fix-apply-acpi_pm: two vCPUs booted with clocksource=acpi_pm, hpet listed
(the TSC refused).  check ranks hpet above acpi_pm, as on hardware, so the
plan switches to it.  Under QEMU's emulation both are system calls of about
the same cost (measured 749 -> 871 ns, 1152 -> 1334 ns, and once, on a
loaded host, 1552 -> 961 ns), so with --min-gain 90 (no switch between two
system-call clocksources saves 90%) the switch is real, measured, and
switched back by fix itself, and said; check agrees (acpi_pm still).  A
switch to a clocksource that is not listed switches nothing."""
SMP = 2
APPEND = "clocksource=acpi_pm"
TIMEOUT = 90

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
STEPS = [
    ("apply", "clockdoctor fix --apply --min-gain 90 --json"),
    ("after", "cat %s; ls -A /run/clockdoctor" % CUR),
    ("check", "clockdoctor check --json"),
    ("unlisted", "clockdoctor fix --apply --to tsc; echo rc=$?; cat %s" % CUR),
    ("restore", "echo acpi_pm > %s; cat %s" % (CUR, CUR)),
]


def check(r):
    a = r["apply"]
    j = a.json
    x = j["apply"]
    print("fix --apply: %s -> %s: CLOCK_MONOTONIC %.0f ns -> %.0f ns (gain %.2f): %s" % (
        x["from"], x["to"], x["before"]["ns_per_call"], x["after"]["ns_per_call"], x["gain"], x["outcome"]))
    assert (j["plan"]["switch"]["from"], j["plan"]["switch"]["to"]) == ("acpi_pm", "hpet")
    assert (x["outcome"], x["from"], x["to"], x["seen"], x["now"]) == \
        ("not-cheaper", "acpi_pm", "hpet", "hpet", "acpi_pm")
    assert a.rc == 1
    assert x["gain"] < 0.9
    assert "at least 90% cheaper needed" in x["message"]
    assert "switched back to acpi_pm" in x["message"]
    assert x["before"]["syscall"] is True and x["after"]["syscall"] is True
    assert r["after"].stdout == "acpi_pm\n"          # and no record left behind
    c = r["check"]
    assert c.clocksource == "acpi_pm"
    u = r["unlisted"]
    assert "rc=3" in u.stdout and u.stdout.endswith("acpi_pm\n")
    assert "not an available clocksource" in u.stderr
