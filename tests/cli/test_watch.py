# SPDX-License-Identifier: MIT
"""clockdoctor watch as a user runs it, against a fake sysfs tree
(CLOCKDOCTOR_SYSFS) and a kernel log file it follows instead of /dev/kmsg
(CLOCKDOCTOR_KMSG): a switch reported within the interval, the watchdog's
report with its numbers, the textfile, the hook's environment, a missing
current_clocksource, a cleared log, SIGTERM and SIGINT, and its CPU use.
This machine's clocksource is never touched; /dev/kmsg is only read."""
import json
import os
import pathlib
import queue
import signal
import subprocess
import threading
import time

import pytest

from conftest import BINARY, STRAY_ARGS, as_user, check_help, default_signals, live_clocksource, refused


WATCHDOG = [
    "4,567,3007005852,-;clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as "
    "unstable because the skew is too large:",
    "4,568,3007005860,-;clocksource:                       'hpet' wd_nsec: 511989875 wd_now: "
    "5d4e0a5b wd_last: 5ce1f5d9 mask: ffffffff",
    "4,569,3007005870,-;clocksource:                       'tsc' cs_nsec: 512000468 cs_now: "
    "6a1f6e0d3bc cs_last: 6a1c6b4c05e mask: ffffffffffffffff",
    "4,570,3007005875,-;clocksource:                       Clocksource 'tsc' skewed 10593 ns (0 ms) "
    "over watchdog 'hpet' interval of 511989875 ns (511 ms)",
    "4,571,3007005880,-;clocksource:                       'tsc' is current clocksource.",
]


class Watch:
    """A running `clockdoctor watch`, its stdout lines queued as they come."""

    def __init__(self, args, env, tmp):
        self.tmp = tmp
        e = dict(os.environ)
        e.update(env)
        self.p = subprocess.Popen(preexec_fn=default_signals, args=[BINARY, "watch", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=e)
        self.lines = queue.Queue()
        self.t = threading.Thread(target=self._pump, daemon=True)
        self.t.start()

    def _pump(self):
        for line in self.p.stdout:
            self.lines.put((time.monotonic(), line))

    def next(self, timeout=5.0):
        """The next line and when it came."""
        return self.lines.get(timeout=timeout)

    def event(self, timeout=5.0):
        t, line = self.next(timeout)
        return t, json.loads(line)

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        rc = self.p.wait(timeout=10)
        self.t.join(5)
        return rc, self.p.stderr.read()


@pytest.fixture
def fake(tmp_path, fake_sysfs):
    sysfs = fake_sysfs("tsc\n", "tsc hpet acpi_pm \n")
    kmsg = tmp_path / "kmsg"
    kmsg.write_text("0,1,1,-;Linux version 6.1.0 (old history, skipped at start; it is longer "
                    "than any line a test writes, so that clearing the log shows as a shrink)\n")

    class Fake:
        current = sysfs.current
        log = kmsg
        prom = tmp_path / "textfile" / "clockdoctor-watch.prom"
        env = {"CLOCKDOCTOR_SYSFS": str(sysfs.sysfs), "CLOCKDOCTOR_KMSG": str(kmsg)}

        def write_log(self, lines, mode="a"):
            with open(self.log, mode) as f:
                f.write("".join(line + "\n" for line in lines))

    Fake.prom.parent.mkdir()
    return Fake()


def textfile(path):
    """The samples of a textfile: {name{labels}: value}."""
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


# ---- help and bad input ----

def test_help(cd):
    check_help(cd, "watch", ("-i, --interval SECONDS", "--json", "--prometheus-file PATH", "--exec CMD",
                             "--history", "--syscalls SECONDS", "-d, --duration SECONDS", "--quiet",
                             "exit status:"))


@pytest.mark.parametrize("args, words", [(["-i", v], "-i takes seconds") for v in ("0", "x", "nan")] + [
    (["-d", "-1"], "-d takes seconds"),
    (["--quiet"], "would report nothing"),
    (["--prometheus-file", "/tmp/"], "takes a file name"),
    (["-e", ""], "takes a command"),
    (["--syscalls", "1", "--prometheus-file", "/tmp/x.prom"], "--syscalls takes seconds"),
    (["--syscalls", "60"], "give one"),
] + STRAY_ARGS)
def test_usage_errors(cd, args, words):
    refused(cd("watch", *args), words)


# ---- events ----

def test_switch_watchdog_textfile_hook(fake, tmp_path):
    hook_log = tmp_path / "hook.log"
    hook = ('printf "%s|%s|%s|%s|%s\\n" "$CLOCKDOCTOR_EVENT" "$CLOCKDOCTOR_FROM" "$CLOCKDOCTOR_TO" '
            '"$CLOCKDOCTOR_WD_NSEC" "$CLOCKDOCTOR_CS_NSEC" >> ' + str(hook_log))
    w = Watch(["-i", "0.2", "--json", "--prometheus-file", str(fake.prom), "-e", hook], fake.env, tmp_path)
    try:
        time.sleep(0.5)
        first = textfile(fake.prom)
        assert first["clockdoctor_watch_clocksource_vdso"] == 1  # tsc
        # Which clocksource is node_exporter's to say (node_time_clocksource_current_info).
        assert not [k for k in first if "current_info" in k]
        # A switch by hand: reported within the interval (0.2 s, with slack).
        t0 = time.monotonic()
        fake.current.write_text("hpet\n")
        t, e = w.event()
        assert (e["event"], e["source"], e["from"], e["to"]) == ("clocksource-changed", "sysfs", "tsc", "hpet")
        assert t - t0 < 0.2 + 0.5
        assert e["time"].endswith("Z") and e["unix_time"] > 1.6e9
        # The watchdog's report, in the kernel's format: one event, its numbers.
        fake.write_log(WATCHDOG)
        _, e = w.event()
        assert e["event"] == "watchdog-skew"
        assert (e["clocksource"], e["watchdog"], e["cpu"]) == ("tsc", "hpet", 1)
        assert (e["wd_nsec"], e["cs_nsec"], e["skew_ns"]) == (511989875, 512000468, 10593)
        assert e["wd_cycles"] == 0x5d4e0a5b - 0x5ce1f5d9
        assert e["from_kernel"] is True and e["facility"] == 0 and e["level"] == 4
        assert e["uptime"] == pytest.approx(3007.005852)
        assert e["raw"].startswith("clocksource: timekeeping watchdog on CPU1:")
        assert e["raw"].count("\n") == 4
        fake.write_log(["4,572,3007005900,-;tsc: Marking TSC unstable due to clocksource watchdog"])
        _, e = w.event()
        assert (e["event"], e["reason"]) == ("tsc-unstable", "clocksource watchdog")
        time.sleep(0.5)
        m = textfile(fake.prom)
        assert m["clockdoctor_watch_clocksource_changes_total"] == 1
        assert m['clockdoctor_watch_events_total{event="watchdog-skew"}'] == 1
        assert m['clockdoctor_watch_events_total{event="tsc-unstable"}'] == 1
        assert m["clockdoctor_watch_clocksource_vdso"] == 0
        assert m["clockdoctor_watch_kernel_log_readable"] == 1
        assert not [p for p in fake.prom.parent.iterdir() if p.name != fake.prom.name]  # no temp left
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    hooks = hook_log.read_text().splitlines()
    assert "clocksource-changed|tsc|hpet||" in hooks
    assert "watchdog-skew|||511989875|512000468" in hooks
    assert "tsc-unstable||||" in hooks


def test_text_lines_and_history(fake, tmp_path):
    """Text: one line an event, the kernel's own lines below it; --history
    reports what the log held before."""
    fake.write_log(["6,2,2000000,-;clocksource: Switched to clocksource hpet"])
    w = Watch(["-i", "0.2", "--history"], fake.env, tmp_path)
    try:
        _, line = w.next()
        assert " clocksource-switched source=kmsg clocksource=hpet " in line
        _, line = w.next()
        assert line == "    | clocksource: Switched to clocksource hpet\n"
    finally:
        rc, err = w.stop(signal.SIGINT)
    assert rc == 0
    assert "Watching" in err.split()  # the banner (wrapped at 80 columns: the path may start a line)


def test_history_is_stamped_when_it_happened(fake, tmp_path):
    """--history: an event the log held at start is stamped with the time it
    happened (the boot time plus its timestamp); one logged while watching,
    with the time it was read."""
    fake.write_log(["6,2,2000000,-;clocksource: Switched to clocksource hpet"])
    boot = time.time() - time.monotonic()        # REALTIME - MONOTONIC, as watch takes it
    w = Watch(["-i", "0.2", "--json", "--history"], fake.env, tmp_path)
    try:
        _, e = w.event()
        assert (e["event"], e["uptime"]) == ("clocksource-switched", 2.0)
        assert e["unix_time"] == pytest.approx(boot + 2.0, abs=0.5)
        time.sleep(0.3)
        fake.write_log(["6,3,2500000,-;clocksource: Switched to clocksource acpi_pm"])
        _, e = w.event()
        assert e["clocksource"] == "acpi_pm"
        assert e["unix_time"] == pytest.approx(time.time(), abs=3)
    finally:
        rc, err = w.stop()
    assert rc == 0, err


def test_survives_missing_clocksource_and_cleared_log(fake, tmp_path):
    w = Watch(["-i", "0.1", "--json", "--prometheus-file", str(fake.prom)], fake.env, tmp_path)
    try:
        time.sleep(0.3)
        fake.current.unlink()
        _, e = w.event()
        assert e["event"] == "clocksource-unreadable"
        assert "No such file or directory" in e["error"]
        time.sleep(0.4)                                  # said once, not every interval
        assert w.lines.empty()
        assert textfile(fake.prom)["clockdoctor_watch_clocksource_readable"] == 0
        fake.current.write_text("acpi_pm\n")
        _, e = w.event()
        assert (e["event"], e["from"], e["to"]) == ("clocksource-changed", "tsc", "acpi_pm")
        # The log cleared (shorter than before): followed from its start again.
        fake.write_log(["6,1,1,-;clocksource: Switched to clocksource acpi_pm"], mode="w")
        _, e = w.event()
        assert (e["event"], e["clocksource"]) == ("clocksource-switched", "acpi_pm")
        # Rotated (another file under the name): the same.
        os.rename(fake.log, str(fake.log) + ".1")
        fake.write_log(["6,1,1,-;clocksource: Switched to clocksource hpet"], mode="w")
        _, e = w.event()
        assert (e["event"], e["clocksource"]) == ("clocksource-switched", "hpet")
    finally:
        rc, err = w.stop()
    assert rc == 0, err


def test_kernel_log_unreadable_says_so_once(fake, tmp_path):
    env = dict(fake.env, CLOCKDOCTOR_KMSG=str(tmp_path / "no-such-log"))
    w = Watch(["-i", "0.1", "--json"], env, tmp_path)
    try:
        time.sleep(0.3)
        fake.current.write_text("hpet\n")
        _, e = w.event()
        assert e["event"] == "clocksource-changed"
    finally:
        rc, err = w.stop()
    assert rc == 0
    assert err.count("cannot read the kernel log") == 1
    assert "Watching current_clocksource only" in " ".join(err.split())


def test_dev_kmsg_refused_to_a_user():
    """The real /dev/kmsg, as nobody: where kernel.dmesg_restrict is 1 the
    kernel refuses, and watch says why once and carries on."""
    restrict = pathlib.Path("/proc/sys/kernel/dmesg_restrict").read_text().strip()
    if os.geteuid() != 0 or restrict != "1":
        pytest.skip("needs root (to become nobody) and kernel.dmesg_restrict=1, which is %s" % restrict)
    p = subprocess.run(as_user([BINARY, "watch", "-d", "0.5"]), capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0, p.stderr
    assert "kernel.dmesg_restrict is 1 and this process lacks CAP_SYSLOG" in p.stderr
    assert p.stderr.count("cannot read the kernel log") == 1


def test_duration_and_negligible_cpu(fake, tmp_path):
    """-d ends it with 0; over 3 s at the default interval it uses next to no
    CPU (it sleeps in poll)."""
    t0 = time.monotonic()
    p = subprocess.Popen(preexec_fn=default_signals, args=[BINARY, "watch", "-d", "3", "--prometheus-file", str(fake.prom)],
                         env=dict(os.environ, **fake.env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.5)
    stat = pathlib.Path("/proc/%d/stat" % p.pid).read_text()
    ticks = sum(int(x) for x in stat[stat.rindex(")") + 2:].split()[11:13])
    rc = p.wait(timeout=10)
    took = time.monotonic() - t0
    assert rc == 0
    assert 2.9 < took < 6
    assert ticks / os.sysconf("SC_CLK_TCK") < 0.1     # under 4% of a CPU over 2.5 s


def test_real_kmsg_read_only(cd, tmp_path):
    """On this machine, as root: /dev/kmsg and the real current_clocksource
    are read (never written) for half a second."""
    if os.geteuid() != 0:
        pytest.skip("reading /dev/kmsg needs root here")
    prom = tmp_path / "w.prom"
    before = live_clocksource()
    r = cd("watch", "-d", "0.5", "--prometheus-file", str(prom))
    assert r.rc == 0, r.err
    assert "and the kernel log /dev/kmsg" in r.err
    assert textfile(prom)["clockdoctor_watch_kernel_log_readable"] == 1
    assert live_clocksource() == before


def test_textfile_unwritable_is_reported(fake, tmp_path, cd):
    r = cd("watch", "-d", "0.3", "--prometheus-file", str(tmp_path / "missing-dir" / "x.prom"), env=fake.env)
    assert r.rc == 3
    assert "cannot write" in r.err


def test_syscalls_names_the_programs_it_cannot_count(tmp_path):
    # --syscalls counts with the syscall tracepoints, which ignore 32-bit and x32
    # tasks (kernel/trace/trace_syscalls.c): a running one is named, not read as 0.
    from conftest import start_elf32_pause
    if os.geteuid() != 0:
        pytest.skip("--syscalls traces: root only")
    p = start_elf32_pause(tmp_path)
    try:
        r = subprocess.run([BINARY, "watch", "--syscalls", "2", "--prometheus-file", str(tmp_path / "x.prom"),
                            "-d", "1.5"], capture_output=True, text=True, timeout=30)
    finally:
        p.kill()
        p.wait()
    if "cannot count time system calls" in r.stderr:
        pytest.skip("no syscall tracepoints here: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    assert "32-bit or x32 program" in r.stderr and "%d pause32" % p.pid in r.stderr


def test_textfile_name_node_exporter_never_reads(cd, tmp_path):
    """watch says at start, as check does, when node_exporter will never read
    its textfile (not *.prom), and still keeps it."""
    prom = tmp_path / "watch.txt"
    r = cd("watch", "-d", "0.2", "--prometheus-file", str(prom), env={"CLOCKDOCTOR_KMSG": str(tmp_path / "none")})
    assert r.rc == 0, r.err
    assert prom.exists()
    assert ("clockdoctor watch: warning: node_exporter's textfile collector reads only files named *.prom "
            "(and not hidden): it will never read %s" % prom) in " ".join(r.err.split())
