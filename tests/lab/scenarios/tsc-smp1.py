# SPDX-License-Identifier: MIT
"""tsc-smp1: `clockdoctor tsc` with one vCPU.  With one CPU there is nothing to
compare: the verdict must not rest on a cross-CPU test but say that one CPU
means no cross-CPU test (and the emulated CPU still lacks constant_tsc)."""

SMP = 1
STEPS = [
    ("wait", "wait-clocksource tsc 20"),
    ("tsc", "clockdoctor tsc --json -d 0.5", 60),
    ("text", "clockdoctor tsc -d 0.2", 60),
]
TIMEOUT = 90


def check(r):
    c = r["tsc"]
    j = c.json
    assert j["verdict"] != "sound"
    assert c.rc == j["exit_status"] in (1, 2)
    assert j["sync"]["cpus_online"] == 1 and j["sync"]["pairs"] == []
    sync = next(t for t in j["tests"] if t["name"] == "sync")
    assert sync["status"] == "untested"
    assert sync["detail"].startswith("one CPU: no cross-CPU test")
    flags = next(t for t in j["tests"] if t["name"] == "flags")
    assert flags["status"] == "fail" and "constant_tsc" in flags["detail"]
    assert j["counter"]["clocksource"] in ("tsc", "tsc-early")
    # The text says it too, and fits 80 columns.
    text = r["text"].stdout
    assert "one CPU: no cross-CPU test" in " ".join(text.split())
    assert all(len(line) <= 80 for line in text.splitlines())
