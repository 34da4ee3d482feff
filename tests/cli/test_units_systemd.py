# SPDX-License-Identifier: MIT
"""contrib's systemd units run by a real systemd: this machine's /usr
booted in a throwaway container (systemd-nspawn --volatile=yes: an empty
/etc and /var in memory, no network), where a driver unit starts the unit
under test as installed and reports what happened.  This is what
`systemd-analyze verify` cannot see: the sandbox the unit asks for must let
the command do its work (the textfile's folder writable, its seccomp
measurement nested in the unit's filter, the kernel log readable through
the syscalls the unit allows) on a machine where nothing was set up before.

The container shares this machine's kernel; it is given CAP_SYSLOG and the
syslog(2) call so that reading the kernel log can be tested, and nothing
that changes the clock.  root and systemd-nspawn (Debian's
systemd-container) are needed: without them this is a loud skip."""
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import BINARY, ROOT, need_tool

CONTRIB = ROOT / "contrib"
# make install's TEXTFILEDIR (the Makefile's default)
TEXTFILEDIR = "/var/lib/node_exporter/textfile_collector"
BOOT_S = 90          # at most, for the container to start the unit and report


def installed(name):
    """contrib's unit as installed with the command in /opt/cd (this
    machine's /usr is read-only in the container) and the textfile folder
    `make install`'s (TEXTFILEDIR's default): a .in file's @BINDIR@ and
    @TEXTFILEDIR@ replaced, or the folder a plain unit names."""
    src = CONTRIB / (name + ".in")
    if src.exists():
        return src.read_text().replace("@BINDIR@", "/opt/cd").replace("@TEXTFILEDIR@", TEXTFILEDIR)
    return (CONTRIB / name).read_text().replace("/usr/local/bin/", "/opt/cd/")


def boot(tmp_path, unit_name, unit_text, settle_s=0, also=None, then="", binds=None):
    """Boot the container with unit_text as /etc/systemd/system/unit_name
    (and the units of also, name: text) and the command at
    /opt/cd/clockdoctor; a driver unit starts the unit, waits settle_s, and
    leaves in tmp_path/out its Result= (result), whether it is active
    (active), its journal (journal) and the textfile folder's files, then
    runs the shell commands then; binds (container path: this machine's
    file) are bound read-only too.  Returns that folder; the container is
    stopped either way."""
    script = ("systemctl start {u}; sleep {s}; systemctl show -p Result --value {u} > /out/result; "
              "systemctl is-active {u} > /out/active; journalctl -u {u} --no-pager -o cat > /out/journal; "
              "cp /var/lib/node_exporter/textfile_collector/* /out/; {t}").format(u=unit_name, s=settle_s,
                                                                                  t=then or "true")
    units_in = dict(also or {}, **{unit_name: unit_text})
    nspawn = need_tool("systemd-nspawn", "systemd-container", "the units NOT run by systemd")
    if os.geteuid() != 0:
        pytest.skip("systemd-nspawn needs root")
    units, out = tmp_path / "units", tmp_path / "out"
    units.mkdir()
    out.mkdir()
    for name, text in units_in.items():
        (units / name).write_text(text)
    (units / "cdtest.service").write_text(
        "[Unit]\nDescription=start the unit under test and report\n"
        "[Service]\nType=oneshot\nExecStart=/bin/sh -c '%s; touch /out/done'\n" % script)
    shutil.copy2(BINARY, tmp_path / "clockdoctor")
    argv = [nspawn, "--quiet", "--register=no", "--keep-unit", "--directory=/", "--volatile=yes",
            "--private-network", "--capability=CAP_SYSLOG", "--system-call-filter=syslog",
            "--bind-ro=%s:/opt/cd/clockdoctor" % (tmp_path / "clockdoctor"),
            *["--bind-ro=%s:%s" % (src, dst) for dst, src in (binds or {}).items()],
            *["--bind-ro=%s:/etc/systemd/system/%s" % (units / name, name) for name in units_in],
            "--bind-ro=%s:/etc/systemd/system/cdtest.service" % (units / "cdtest.service"),
            # An empty /etc would have the first-boot wizard wait for a keyboard.
            "--bind-ro=/dev/null:/etc/systemd/system/systemd-firstboot.service",
            "--bind=%s:/out" % out, "--boot", "--", "--unit=cdtest.service"]
    with open(tmp_path / "console.log", "w") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            t0 = time.monotonic()
            while not (out / "done").exists():
                if p.poll() is not None or time.monotonic() - t0 > BOOT_S:
                    pytest.fail("the container did not report (exit %s); console:\n%s"
                                % (p.poll(), (tmp_path / "console.log").read_text(errors="replace")[-4000:]))
                time.sleep(0.2)
        finally:
            # SIGTERM: nspawn powers the container off.
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
    return out


def test_check_service_runs_under_its_sandbox(tmp_path):
    timer = (CONTRIB / "clockdoctor-check.timer").read_text()
    out = boot(tmp_path, "clockdoctor-check.service", installed("clockdoctor-check.service"),
               also={"clockdoctor-check.timer": timer},
               then="systemctl start clockdoctor-check.timer; "
                    "systemctl show -p ActiveState -p Triggers --value clockdoctor-check.timer > /out/timer")
    journal = (out / "journal").read_text(errors="replace")
    assert (out / "result").read_text().strip() == "success", journal
    # The folder did not exist: the unit made it, and the file is whole.
    text = (out / "clockdoctor.prom").read_text()
    assert 'clockdoctor_build_info{version="' in text
    assert "clockdoctor_check_last_success_timestamp_seconds " in text
    # The journal says where the file went, and whether node_exporter
    # (this machine's, if any: its process or its unit) reads that folder.
    assert "clockdoctor check: " in journal and TEXTFILEDIR + "/clockdoctor.prom" in " ".join(journal.split())
    # The report in the journal: measured, with the seccomp verdict nested
    # in the unit's own filter, and the kernel log read from the ring
    # (syslog(2), allowed by the unit).
    assert "path: seen by a seccomp filter, exact" in journal, journal
    assert "kernel log: ring," in journal, journal
    # The timer starts, and it is this service it runs.
    assert set((out / "timer").read_text().split()) == {"clockdoctor-check.service", "active"}


def test_watch_service_runs_under_its_sandbox(tmp_path):
    out = boot(tmp_path, "clockdoctor-watch.service", installed("clockdoctor-watch.service"), settle_s=2)
    journal = (out / "journal").read_text(errors="replace")
    assert (out / "active").read_text().strip() == "active", journal
    assert "clockdoctor_watch_last_update_timestamp_seconds " in (out / "clockdoctor-watch.prom").read_text()


def test_tsc_service_saves_the_verdict_under_its_sandbox(tmp_path):
    """clockdoctor-tsc.service measures the TSC once and leaves this boot's
    verdict in /run/clockdoctor (the container's own /run), where the
    accelerator reads it; it stays active (RemainAfterExit=) for units
    ordered after it."""
    out = boot(tmp_path, "clockdoctor-tsc.service", installed("clockdoctor-tsc.service"),
               then="cp /run/clockdoctor/tsc-verdict /out/verdict")
    journal = (out / "journal").read_text(errors="replace")
    assert (out / "result").read_text().strip() == "success", journal
    assert (out / "active").read_text().strip() == "active", journal
    assert "clockdoctor tsc: " in journal and "verdict" in journal, journal
    verdict = dict(line.split("=", 1) for line in (out / "verdict").read_text().splitlines() if "=" in line)
    assert verdict.get("verdict") in ("sound", "unknown", "unsound"), verdict
    assert re.fullmatch(r"[0-9a-f-]{36}", verdict.get("boot_id", "")), verdict


def test_accelerator_under_system_service_filter(tmp_path):
    """docs/run.md's recommendation as systemd runs it: a service with
    SystemCallFilter=@system-service (kill on any other call, as Debian's
    redis-server.service has) and the accelerator in its environment,
    forced onto the counter; the program reads every served clock from
    threads, within the bound and never backwards, and the unit succeeds.
    A second unit shows the filter is real: adjtimex kills its process."""
    build = os.path.dirname(BINARY)
    preload = os.path.join(build, "libfastclock-preload.so")
    prog = os.path.join(build, "progs", "inconsistency")
    for p in (preload, prog):
        if not os.path.exists(p):
            pytest.fail("%s is not built: run make cli" % p)
    unit = ("[Unit]\nDescription=a program accelerated under @system-service\n"
            "[Service]\nType=oneshot\nSystemCallFilter=@system-service\n"
            "Environment=LD_PRELOAD=/opt/cd/libfastclock-preload.so\n"
            "Environment=FASTCLOCK=force\nEnvironment=FASTCLOCK_INFO=1\n"
            "ExecStart=/opt/cd/inconsistency -t 0.3 -T 2\n")
    probe = ("[Unit]\nDescription=adjtimex under @system-service\n"
             "[Service]\nType=oneshot\nSystemCallFilter=@system-service\n"
             "ExecStart=%s -c 'import ctypes; ctypes.CDLL(None).adjtimex(ctypes.create_string_buffer(512))'\n"
             % (shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"))
    out = boot(tmp_path, "cd-accelerated.service", unit, also={"cd-probe.service": probe},
               binds={"/opt/cd/libfastclock-preload.so": preload, "/opt/cd/inconsistency": prog},
               then="systemctl start cd-probe.service; "
                    "systemctl show -p Result --value cd-probe.service > /out/probe; "
                    "journalctl -u cd-probe.service --no-pager -o cat > /out/probe-journal")
    journal = (out / "journal").read_text(errors="replace")
    assert (out / "result").read_text().strip() == "success", journal
    assert "fastclock-preload[" in journal and "serving" in journal, journal
    lines = [x for x in journal.splitlines() if x.split(" ", 1)[0] in
             ("realtime", "monotonic", "raw", "boottime", "tai", "gettimeofday")]
    assert len(lines) == 6 and all(x.endswith(" PASS") for x in lines), journal
    if shutil.which("python3", path="/usr/bin:/bin"):  # the container has this machine's /usr only
        assert (out / "probe").read_text().strip() == "signal", (out / "probe-journal").read_text(errors="replace")
