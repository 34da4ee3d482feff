# SPDX-License-Identifier: MIT
"""harness-smp2: self-test of the lab itself, with busybox only (no clockdoctor).

Two vCPUs of `-cpu max` under TCG: the kernel finds the TSCs unsynchronized
and runs on hpet.  Also proves the plumbing: exit codes, stdout and stderr kept
apart, JSON parsing, the unprivileged user, the kernel log.
"""
SMP = 2

CS = "/sys/devices/system/clocksource/clocksource0"
STEPS = [
    ("current", "cat %s/current_clocksource" % CS),
    ("available", "cat %s/available_clocksource" % CS),
    ("dmesg", "dmesg | grep -i -e tsc -e clocksource"),
    ("user", "as-user id -u; as-user cat /proc/sys/kernel/dmesg_restrict"),
    ("plumbing", "echo out; echo err >&2; printf 'no newline'; exit 3"),
    # A step's time limit (the third field) kills its children too.
    ("limit", "echo started; sleep 60 & sleep 60", 2),
    ("json", """echo '{"tool": "busybox", "list": [1, 2.5, null, "\\u00e9"]}'"""),
]


def check(r):
    assert r["current"].stdout == "hpet\n"
    assert set(r["available"].stdout.split()) >= {"hpet", "acpi_pm"}
    assert "tsc" not in r["available"].stdout.split()
    assert "Marking TSC unstable due to TSCs unsynchronized" in r["dmesg"].stdout
    assert r["user"].rc == 0
    assert r["user"].stdout.split()[0] == "1000"
    p = r["plumbing"]
    assert (p.rc, p.stdout, p.stderr) == (3, "out\nno newline", "err\n")
    lim = r["limit"]
    assert (lim.rc, lim.stdout) == (124, "started\n")
    assert "time limit of 2 s reached" in lim.stderr
    assert lim.secs < 15
    assert r["json"].json == {"tool": "busybox", "list": [1, 2.5, None, "\u00e9"]}
