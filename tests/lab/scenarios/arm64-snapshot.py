# SPDX-License-Identifier: MIT
"""arm64-snapshot: `clockdoctor snapshot` of the healthy arm64 guest, and
`check --root` of it on the same guest: the same clocksource."""
from arm64_lab import ARCH, CPU, SMP, timed  # noqa: F401

TIMEOUT = 120
STEPS = [("snapshot", timed("clockdoctor snapshot /tmp/a64snap", 60) + "; rc=$?; find /tmp/a64snap -type f | sort; exit $rc", 90),
         ("root-check", timed("clockdoctor check --root /tmp/a64snap --json", 60), 90)]


def check(r):
    s = r["snapshot"]
    assert s.rc == 0, s.stderr
    files = s.stdout.split()
    print("arm64-snapshot: %d files" % len(files))
    assert "/tmp/a64snap/sys/devices/system/clocksource/clocksource0/current_clocksource" in files, files
    c = r["root-check"]
    assert c.clocksource == "arch_sys_counter", c.stdout
    assert c.json["cpu"]["arch"] == "aarch64", c.json["cpu"]
    assert c.json["hypervisor"]["machine_model"] == "linux,dummy-virt", c.json["hypervisor"]
