# SPDX-License-Identifier: MIT
"""fix-apply-tsc: two vCPUs with an invariant TSC (the kernel trusts it),
booted with clocksource=acpi_pm, so tsc, hpet and acpi_pm are listed.
`fix --apply` measures the TSC now (not unsound), switches to tsc, measures a
CLOCK_MONOTONIC call before and after, and keeps the switch because it got
cheaper; no restore record is left.  (On a loaded host the warp test may not
conclude: unknown, and fix goes ahead as the kernel lists tsc.)  `check` then agrees: tsc, no clock id
a system call.  The last step puts acpi_pm back."""
SMP = 2
CPU = "max,+invtsc,x-force-features=on"
APPEND = "clocksource=acpi_pm"
TIMEOUT = 90

CS = "/sys/devices/system/clocksource/clocksource0"
STEPS = [
    # tsc is registered a moment after boot, once its frequency is refined.
    ("listed", "i=0; while ! grep -qw tsc %s/available_clocksource && [ $i -lt 100 ]; do "
               "sleep 0.2; i=$((i + 1)); done; cat %s/available_clocksource" % (CS, CS)),
    ("apply", "clockdoctor fix --apply --json"),
    ("after", "cat %s/current_clocksource; ls -A /run/clockdoctor" % CS),
    ("check", "clockdoctor check --json"),
    ("restore", "echo acpi_pm > %s/current_clocksource; cat %s/current_clocksource" % (CS, CS)),
]


def check(r):
    assert r["listed"].stdout.split() == ["tsc", "hpet", "acpi_pm"]
    a = r["apply"]
    assert a.rc == 0, a.stdout + a.stderr
    j = a.json
    assert j["plan"]["switch"]["to"] == "tsc"
    x = j["apply"]
    print("fix --apply: %s -> %s: CLOCK_MONOTONIC %.0f ns -> %.0f ns (gain %.2f), TSC %s" % (
        x["from"], x["to"], x["before"]["ns_per_call"], x["after"]["ns_per_call"], x["gain"],
        x["tsc_verdict"]))
    assert (x["outcome"], x["from"], x["to"], x["seen"], x["now"]) == ("kept", "acpi_pm", "tsc", "tsc", "tsc")
    # The warp test needs both vCPUs at once: on a loaded host it may not
    # conclude (unknown), and fix then goes ahead, as the kernel lists tsc;
    # unsound would have stopped it.
    assert x["tsc_verdict"] in ("sound", "unknown")
    assert x["before"]["syscall"] is True and x["after"]["syscall"] is False
    assert x["before"]["verdict_from"] == x["after"]["verdict_from"] == "seccomp"
    assert x["gain"] >= 0.2
    assert "kept until the next reboot" in x["message"]
    # Kept: nothing will switch it back (no record in /run/clockdoctor).
    assert r["after"].stdout == "tsc\n"
    c = r["check"]
    assert c.clocksource == "tsc"
    assert c.syscall_ids == set()
    assert not {"slow-clocksource", "vdso-fallback", "better-clocksource-available"} & c.codes
    assert r["restore"].stdout == "acpi_pm\n"
