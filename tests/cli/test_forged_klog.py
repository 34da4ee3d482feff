# SPDX-License-Identifier: MIT
"""A kernel message counts only where the kernel puts it: at the start of
the text after the log's prefix, with the subsystem prefix the kernel
prints it with.  The same words in a line of someone else's (a USB
device's product string, a program's log line, an audit record) make no
finding in check and no event in watch; the genuine line makes both."""
import json
import shutil

import pytest

from conftest import FIXTURES, codes
from test_watch import fake  # noqa: F401  (the fixture, for watch)
from test_watch_hook import started

GENUINE = "tsc: Marking TSC unstable due to clocksource watchdog"
FORGED = [
    "usb 1-1: Product: " + GENUINE,
    "usb 1-1: Manufacturer: Marking TSC unstable due to clocksource watchdog",
    'audit: type=1400 audit(1700000000.000:1): apparmor="DENIED" name="' + GENUINE + '"',
    "myapp[123]: " + GENUINE,
]


def tree(tmp_path, line):
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "vmware-tsc-hypervisor-reliable", root)
    with open(root / "dmesg.txt", "a") as f:
        f.write("[  120.500000] " + line + "\n")
    return root


def test_check_genuine_line_fires(cd, tmp_path):
    c = codes(cd("check", "--json", "--root", str(tree(tmp_path, GENUINE))).json())
    assert "tsc-unstable-watchdog" in c


@pytest.mark.parametrize("line", FORGED)
def test_check_forged_line_is_quiet(cd, tmp_path, line):
    r = cd("check", "--json", "--root", str(tree(tmp_path, line)))
    doc = r.json()
    assert "tsc-unstable-watchdog" not in codes(doc)
    assert doc["status"] == "ok", doc["findings"]


def test_watch_forged_line_makes_no_event(fake, tmp_path):  # noqa: F811
    w = started(fake, tmp_path, "true")
    try:
        fake.write_log(["6,900,120500000,-;" + line for line in FORGED])
        # The genuine line after them is the first event reported.
        fake.write_log(["4,901,120600000,-;" + GENUINE])
        _, e = w.event()
        assert (e["event"], e["reason"], e["uptime"]) == ("tsc-unstable", "clocksource watchdog",
                                                          pytest.approx(120.6))
        assert e["raw"] == GENUINE
    finally:
        rc, err = w.stop()
    assert rc == 0, err
