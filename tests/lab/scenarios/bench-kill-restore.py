# SPDX-License-Identifier: MIT
"""bench-kill-restore: two vCPUs on hpet.  `bench --clocksources all` runs in
the background and is killed with SIGKILL while it measures acpi_pm: no
handler runs, the guest stays on acpi_pm, and the record written before the
switch says so.  `bench --restore` then puts hpet back, says so, and removes
the record; a second --restore has nothing to do."""
SMP = 2
TIMEOUT = 120

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
RECORD = "/run/clockdoctor/clocksource.restore"
STEPS = [
    ("kill", """
clockdoctor bench --clocksources all --json -d 6 >/tmp/bg.out 2>/tmp/bg.err &
pid=$!
i=0
while [ "$(cat %(cur)s)" = hpet ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
echo "switched=$(cat %(cur)s)"
kill -9 $pid
wait $pid
echo "rc=$?"
echo "after=$(cat %(cur)s)"
cat %(rec)s
""" % {"cur": CUR, "rec": RECORD}, 60),
    ("restore", "clockdoctor bench --restore; echo rc=$?; echo now=$(cat %s); ls /run/clockdoctor"
     % CUR, 30),
    ("again", "clockdoctor bench --restore", 30),
    ("cleanup", "echo hpet > %s" % CUR),
]


def check(r):
    k = r["kill"]
    lines = k.stdout.splitlines()
    assert "switched=acpi_pm" in lines, k.stdout + k.stderr
    assert "rc=137" in lines                    # 128 + SIGKILL
    assert "after=acpi_pm" in lines             # nothing ran to put it back...
    assert "original hpet" in lines             # ...but the record knows
    rs = r["restore"]
    assert "restored clocksource hpet (it was acpi_pm" in rs.stdout, rs.stdout + rs.stderr
    assert "rc=0" in rs.stdout.splitlines()
    assert "now=hpet" in rs.stdout.splitlines()
    assert "clocksource.restore" not in rs.stdout   # ls: the record is gone
    a = r["again"]
    assert a.rc == 0 and "nothing to restore" in a.stdout
