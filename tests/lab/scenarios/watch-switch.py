# SPDX-License-Identifier: MIT
"""watch-switch: `clockdoctor watch` in the one-vCPU guest on tsc, in the
background, with a textfile.  The clocksource switched by hand to acpi_pm
is reported within the poll interval (1 s) and shows in the textfile; lines
written to /dev/kmsg in the kernel watchdog's exact format are reported as
one watchdog-skew event with their numbers (and, written by a process,
marked from_kernel false); the ring buffer cleared with `dmesg -c`, watch
goes on; SIGTERM ends it with 0.  Stopped while the kernel log overflows
its ring buffer, it counts the records lost (EPIPE) and reads on.  Then as
an unprivileged user with
kernel.dmesg_restrict=1: it says once that it cannot read the kernel log,
and still reports switches.  The guest is left on tsc."""
SMP = 1
TIMEOUT = 120

CUR = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
PROM = "/tmp/tf/clockdoctor-watch.prom"
# The guest's time to the microsecond (busybox date has no %N).
NOW = "adjtimex | awk '/tv_sec/ {s = $2} /tv_usec/ {u = $2} END {printf \"%d.%06d\", s, u}'"
WD = [
    "<4>clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable "
    "because the skew is too large:",
    "<4>clocksource:                       'hpet' wd_nsec: 511989875 wd_now: 5d4e0a5b "
    "wd_last: 5ce1f5d9 mask: ffffffff",
    "<4>clocksource:                       'tsc' cs_nsec: 612000468 cs_now: 6a1f6e0d3bc "
    "cs_last: 6a1c6b4c05e mask: ffffffffffffffff",
    "<4>clocksource:                       'tsc' is current clocksource.",
]
STEPS = [
    ("wait", "wait-clocksource tsc 20"),
    ("watch", """
now() { %(now)s; }
mkdir -p /tmp/tf
clockdoctor watch --json -i 1 --prometheus-file %(prom)s > /tmp/w.out 2> /tmp/w.err & W=$!
sleep 2
echo "switch $(now)"; echo acpi_pm > %(cur)s
sleep 2
echo "--- textfile after the switch"; cat %(prom)s
echo "inject $(now)"
%(inject)s
sleep 2.5
dmesg -c > /dev/null
echo "<6>clocksource: Switched to clocksource acpi_pm" > /dev/kmsg
sleep 1.5
echo tsc > %(cur)s
sleep 2
kill -TERM $W; wait $W; echo "rc=$?"
echo "--- textfile at the end"; cat %(prom)s
echo "--- stderr"; cat /tmp/w.err
echo "--- events"; cat /tmp/w.out
""" % {"now": NOW, "prom": PROM, "cur": CUR,
       "inject": "\n".join("echo \"%s\" > /dev/kmsg" % line for line in WD)}, 60),
    ("user", """
old=$(cat /proc/sys/kernel/dmesg_restrict); echo 1 > /proc/sys/kernel/dmesg_restrict
as-user clockdoctor watch --json -i 0.5 -d 4 > /tmp/u.out 2> /tmp/u.err & U=$!
sleep 1.5; echo acpi_pm > %(cur)s; sleep 1; echo tsc > %(cur)s
wait $U; echo "rc=$?"
echo $old > /proc/sys/kernel/dmesg_restrict
echo "--- stderr"; cat /tmp/u.err
echo "--- events"; cat /tmp/u.out
""" % {"cur": CUR}, 30),
    # Stopped while the kernel log overflows its ring buffer: the next read
    # gets EPIPE; watch counts the loss and goes on from the oldest record.
    ("overrun", """
mkdir -p /tmp/tf2
clockdoctor watch --json -i 1 --prometheus-file /tmp/tf2/w.prom > /tmp/o.out 2> /tmp/o.err & W=$!
sleep 1.5; kill -STOP $W
i=0; while [ $i -lt 6000 ]; do
  echo "<6>filler $i: enough text to fill the kernel's ring buffer before watch reads again" > /dev/kmsg
  i=$((i + 1))
done
kill -CONT $W; sleep 1
echo "<6>clocksource: Switched to clocksource tsc" > /dev/kmsg
sleep 1.5; kill -TERM $W; wait $W; echo "rc=$?"
grep '^clockdoctor_watch_kernel_log_lost_total' /tmp/tf2/w.prom
tail -n 1 /tmp/o.out
""", 60),
    ("left", "cat %s" % CUR),
]


def _parts(text):
    parts, key = {"": []}, ""
    for line in text.splitlines():
        if line.startswith("--- "):
            key = line[4:]
            parts[key] = []
        else:
            parts[key].append(line)
    return parts


def _metrics(lines):
    return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1]) for l in lines if l.startswith("clockdoctor_")}


def check(r):
    import json
    import re
    w = r["watch"]
    p = _parts(w.stdout)
    head = dict(re.findall(r"^(switch|inject) ([0-9.]+)$", w.stdout, re.M))
    events = [json.loads(l) for l in p["events"]]
    kinds = [e["event"] for e in events]
    print("events: %s" % kinds)
    # The switch by hand, within the poll interval.
    ch = [e for e in events if e["event"] == "clocksource-changed"]
    assert [(e["from"], e["to"]) for e in ch] == [("tsc", "acpi_pm"), ("acpi_pm", "tsc")]
    lag = ch[0]["unix_time"] - float(head["switch"])
    print("switch reported %.3f s after it was made (poll interval 1 s)" % lag)
    assert 0 <= lag <= 1.0 + 0.3
    after = _metrics(p["textfile after the switch"])
    assert after["clockdoctor_watch_clocksource_changes_total"] == 1
    assert after["clockdoctor_watch_clocksource_vdso"] == 0
    assert after["clockdoctor_watch_kernel_log_readable"] == 1
    # The watchdog's lines, written to /dev/kmsg: one event, the numbers.
    sk = [e for e in events if e["event"] == "watchdog-skew"]
    assert len(sk) == 1, kinds
    s = sk[0]
    assert (s["clocksource"], s["watchdog"], s["cpu"]) == ("tsc", "hpet", 0)
    assert (s["wd_nsec"], s["cs_nsec"], s["skew_ns"]) == (511989875, 612000468, 100010593)
    assert s["from_kernel"] is False and s["facility"] == 1 and s["level"] == 4
    assert s["raw"].count("\n") == 3
    assert s["unix_time"] - float(head["inject"]) <= 1.5
    # After `dmesg -c`: still following.
    assert any(e["event"] == "clocksource-switched" and e["clocksource"] == "acpi_pm" for e in events)
    end = _metrics(p["textfile at the end"])
    assert end["clockdoctor_watch_clocksource_changes_total"] == 2
    assert end['clockdoctor_watch_events_total{event="watchdog-skew"}'] == 1
    assert end["clockdoctor_watch_clocksource_vdso"] == 1  # back on tsc
    assert "rc=0" in w.stdout.splitlines()
    # Unprivileged, the kernel log closed to it: said once, switches still seen.
    u = _parts(r["user"].stdout)
    assert "rc=0" in u[""]
    err = "\n".join(u["stderr"])
    assert err.count("cannot read the kernel log") == 1
    assert "kernel.dmesg_restrict is 1" in err
    uev = [json.loads(l) for l in u["events"]]
    assert [(e["event"], e["to"]) for e in uev] == [("clocksource-changed", "acpi_pm"),
                                                    ("clocksource-changed", "tsc")]
    o = r["overrun"].stdout.splitlines()
    assert "rc=0" in o
    lost = [l for l in o if l.startswith("clockdoctor_watch_kernel_log_lost_total ")]
    assert lost and float(lost[0].split()[1]) >= 1, o
    last = json.loads(o[-1])
    assert (last["event"], last["clocksource"]) == ("clocksource-switched", "tsc")
    assert r["left"].stdout == "tsc\n"
