# SPDX-License-Identifier: MIT
"""report-hpet: two vCPUs on hpet (acpi_pm available): `clockdoctor report`
measures the guest, bench on each clocksource (switched and put back) and
top tracing: a valid page under 1 MB with every figure drawn, one cost chart
a clocksource, the critical verdict, and the guest on hpet again."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cli"))
from pagecheck import check_page, embedded  # noqa: E402

SMP = 2
TIMEOUT = 200

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
STEPS = [
    ("report", "clockdoctor report -d 0.3 --clocksources all --top 2", 150),
    # no restore record left in the state folder (fix's lock file may be
    # there, from a fix run earlier in the same guest)
    ("after", "cat %s; ls /run/clockdoctor | grep -vx fix.lock; true" % CUR),
    ("cleanup", "echo hpet > %s" % CUR),
]


def check(r):
    rep = r["report"]
    assert rep.rc == 2, rep.stderr
    page = rep.stdout
    check_page(page, ["cost", "latency", "tsc-freq", "warp", "accuracy", "top"])
    assert 'data-status="critical"' in page
    assert 'data-code="slow-clocksource"' in page
    assert 'id="cost-0"' in page and 'id="cost-1"' in page
    data = embedded(page)
    assert [run["clocksource"] for run in data["data-bench"]["runs"]] == ["hpet", "acpi_pm"]
    assert data["data-bench"]["clocksources"]["restored"] is True
    assert data["data-top"], "top traced nothing"
    assert r["after"].stdout == "hpet\n", r["after"].stdout + r["after"].stderr
