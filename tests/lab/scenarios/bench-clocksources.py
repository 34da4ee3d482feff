# SPDX-License-Identifier: MIT
"""bench-clocksources: two vCPUs on hpet (acpi_pm available): `bench
--clocksources all` switches to each, measures it, and switches back.  Both
must be measured, every high-resolution call a system call on both, their
ratio shown, and the guest on hpet again afterwards, with no record left."""
SMP = 2
TIMEOUT = 150

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
STEPS = [
    ("bench", "clockdoctor bench --clocksources all --json", 90),
    ("after", "cat %s; ls /run/clockdoctor" % CUR),
    # The text report, for docs/bench_example.txt (and proof it works too).
    ("text", "clockdoctor bench --clocksources all -c monotonic,gettimeofday,monotonic_coarse -t 2",
     90),
    ("after-text", "cat %s" % CUR),
    # Whatever happened above, the boot's next scenarios find it on hpet.
    ("cleanup", "echo hpet > %s" % CUR),
]


def check(r):
    b = r["bench"]
    assert b.rc == 0, b.stderr
    j = b.json
    assert [run["clocksource"] for run in j["runs"]] == ["hpet", "acpi_pm"]
    assert [run["switched"] for run in j["runs"]] == [False, True]
    cs = j["clocksources"]
    assert (cs["original"], cs["restored"], cs["error"]) == ("hpet", True, None)
    for run in j["runs"]:
        assert run["interrupted"] is False
        for w in run["ways"]:
            assert w["measured"] is True, (run["clocksource"], w["name"])
            assert w["syscall"] is True, (run["clocksource"], w["name"], w["ratio"])
            assert w["backward"]["count"] == 0
    for way in ("CLOCK_MONOTONIC", "CLOCK_REALTIME", "gettimeofday"):
        rows = {x["clocksource"]: x for x in cs["comparison"] if x["way"] == way}
        assert set(rows) == {"hpet", "acpi_pm"}, way
        assert min(x["x_fastest"] for x in rows.values()) == 1, way
        assert all(x["x_fastest"] >= 1 and x["syscall"] for x in rows.values()), way
    assert j["backward_steps"] == 0
    a = r["after"]
    assert a.stdout == "hpet\n", a.stdout + a.stderr  # and /run/clockdoctor is empty
    t = r["text"]
    assert t.rc == 0, t.stderr
    assert "Clocksources compared" in t.stdout
    assert "Switched back to clocksource hpet." in t.stdout
    assert r["after-text"].stdout == "hpet\n"
