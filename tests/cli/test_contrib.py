"""contrib/ checked by the tools that will read it: the systemd unit by
`systemd-analyze verify` (Debian's systemd), the alerting rules by
`promtool check rules` and their own unit tests by `promtool test rules`
(Debian's prometheus).  A missing tool fails under CI (CI=true) or
LAB_REQUIRE=1, and skips loudly otherwise."""
import os
import shutil
import subprocess

import pytest

from conftest import BINARY, ROOT, need_tool

CONTRIB = ROOT / "contrib"
UNIT = CONTRIB / "clockdoctor-watch.service"
CHECK_UNIT = CONTRIB / "clockdoctor-check.service.in"
CHECK_TIMER = CONTRIB / "clockdoctor-check.timer"
TEXTFILE_DIR = "/var/lib/node_exporter/textfile_collector"
RULES = CONTRIB / "prometheus" / "clockdoctor.rules.yml"
RULES_TEST = CONTRIB / "prometheus" / "clockdoctor.rules.test.yml"


def need(tool, package):
    return need_tool(tool, package, "contrib/ NOT checked")


def unit_root(tmp_path, units):
    """A root for `systemd-analyze verify --root`: the system's own units
    (sysinit.target and the rest that a service pulls in), the units (name:
    text) under /etc/systemd/system, and the commands they run at the paths
    they name (the freshly built clockdoctor for /usr/local/bin/clockdoctor),
    so that the check of ExecStart= is real, not waived."""
    root = tmp_path / "root"
    for d in ("usr/lib/systemd", "etc/systemd/system", "usr/local/bin", "bin"):
        (root / d).mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    shutil.copy2(BINARY, root / "usr/local/bin/clockdoctor")
    shutil.copy2(shutil.which("mkdir"), root / "bin/mkdir")
    for name, text in units.items():
        (root / "etc/systemd/system" / name).write_text(text)
    man = tmp_path / "man" / "man1"
    man.mkdir(parents=True)
    shutil.copy2(ROOT / "docs/clockdoctor.1", man / "clockdoctor.1")
    return root


def verify(tmp_path, unit_text, units=None):
    """systemd-analyze verify on the watch unit (unit_text), or on units
    (name: text)."""
    tool = need("systemd-analyze", "systemd")
    units = units or {UNIT.name: unit_text}
    root = unit_root(tmp_path, units)
    # MANPATH: Documentation=man:clockdoctor(1) is checked against this
    # tree's man page, as `make install` would put it.
    env = dict(os.environ, MANPATH=str(tmp_path / "man"), SYSTEMD_LOG_COLOR="0")
    p = subprocess.run([tool, "verify", "--root=%s" % root] + ["/etc/systemd/system/" + n for n in units],
                       capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, (p.stdout + p.stderr).strip()


def test_unit_verifies(tmp_path):
    rc, out = verify(tmp_path, UNIT.read_text())
    # Not only the exit status: verify says "Unknown key ..." and still
    # exits 0, so any word from it is a failure.
    assert (rc, out) == (0, "")


@pytest.mark.parametrize("change, words", [
    (("ProtectSystem=strict", "ProtectSystm=strict"), "Unknown key"),
    (("DeviceAllow=/dev/kmsg r", "DeviceAllow=kmsg r"), "Invalid device node path"),
    (("ExecStart=/usr/local/bin/clockdoctor", "ExecStart=/usr/local/bin/clockdoctorx"),
     "is not executable"),
])
def test_verify_catches_mistakes(tmp_path, change, words):
    """The check above is strict: each of these mistakes makes it fail."""
    text = UNIT.read_text()
    assert change[0] in text
    rc, out = verify(tmp_path, text.replace(change[0], change[1], 1))
    assert words in out, out


def installed(path, bindir="/usr/local/bin"):
    """A .in unit as installed: @BINDIR@ replaced by the command's folder."""
    return path.read_text().replace("@BINDIR@", bindir)


def test_check_timer_and_service_verify(tmp_path):
    assert "@BINDIR@/clockdoctor check " in CHECK_UNIT.read_text()
    rc, out = verify(tmp_path, None, {"clockdoctor-check.service": installed(CHECK_UNIT),
                                      CHECK_TIMER.name: CHECK_TIMER.read_text()})
    assert (rc, out) == (0, "")
    # And a mistake in either is caught.
    rc, out = verify(tmp_path / "bad", None, {
        "clockdoctor-check.service": installed(CHECK_UNIT).replace("SuccessExitStatus=", "SuccesExitStatus="),
        CHECK_TIMER.name: CHECK_TIMER.read_text()})
    assert "Unknown key" in out, out


def test_check_service_command_writes_the_textfile(tmp_path):
    """The service's ExecStart= as written, run with the built command and a
    temporary folder for node_exporter's: the textfile appears whole, with
    the run's time and the version, and the exit status is one the unit
    counts as success on this machine (0, 1 or 2)."""
    import re
    import shlex
    import time
    line = next(l for l in installed(CHECK_UNIT, os.path.dirname(BINARY)).splitlines()
                if l.startswith("ExecStart="))
    assert TEXTFILE_DIR in line
    argv = shlex.split(line[len("ExecStart="):].replace(TEXTFILE_DIR, str(tmp_path)))
    assert "SuccessExitStatus=1 2\n" in CHECK_UNIT.read_text()
    before = time.time()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1, 2), p.stderr
    assert p.stdout.splitlines()[0].split(":")[0] in ("OK", "WARNING", "CRITICAL")  # the journal's text
    assert [f.name for f in tmp_path.iterdir()] == ["clockdoctor.prom"]
    text = (tmp_path / "clockdoctor.prom").read_text()
    last_run = float(re.search(r"^clockdoctor_check_last_run_timestamp_seconds (\S+)$", text, re.M).group(1))
    assert before - 1 <= last_run <= time.time()
    assert re.search(r'^clockdoctor_build_info\{version="[0-9.]+"\} 1$', text, re.M)
    assert "clockdoctor_status %d\n" % p.returncode in text


def test_check_timer_schedule():
    """Every 15 minutes, as the stale alert's 45 minutes (three runs) assume."""
    timer = CHECK_TIMER.read_text()
    assert "OnUnitActiveSec=15min\n" in timer and "OnBootSec=" in timer
    assert "time() - clockdoctor_check_last_run_timestamp_seconds > 2700" in RULES.read_text()


def test_unit_least_privilege():
    text = UNIT.read_text()
    for line in ("CapabilityBoundingSet=CAP_SYSLOG", "NoNewPrivileges=yes", "ProtectSystem=strict",
                 "ReadWritePaths=-/var/lib/node_exporter/textfile_collector", "PrivateNetwork=yes",
                 "DevicePolicy=closed", "DeviceAllow=/dev/kmsg r",
                 "ExecStart=/usr/local/bin/clockdoctor watch --prometheus-file "
                 "/var/lib/node_exporter/textfile_collector/clockdoctor-watch.prom"):
        assert line + "\n" in text, line
    # Either of these would hide /dev/kmsg from the service.
    assert "ProtectKernelLogs=yes" not in text and "PrivateDevices=yes" not in text


def test_rules_check():
    tool = need("promtool", "prometheus")
    p = subprocess.run([tool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS: 11 rules found" in p.stdout


def test_rules_fire_as_written():
    """promtool's own unit tests of the rules: each alert fires on the series
    it is written for, with its labels and annotations, and not otherwise."""
    tool = need("promtool", "prometheus")
    p = subprocess.run([tool, "test", "rules", RULES_TEST.name], capture_output=True, text=True,
                       timeout=60, cwd=RULES_TEST.parent)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout


def test_rules_use_metrics_that_exist(cd, tmp_path):
    """Every metric the rules name is one that check or watch writes."""
    import re
    names = set(re.findall(r"\b(clockdoctor_[a-z_]+)", RULES.read_text()))
    prom = tmp_path / "w.prom"
    env = {"CLOCKDOCTOR_KMSG": str(tmp_path / "none")}
    watch = cd("watch", "-d", "0.2", "-P", str(prom), env=env)
    assert watch.rc == 0, watch.err
    check = cd("check", "--prometheus", "--root", str(ROOT / "tests/fixtures/qemu-tcg-smp2-hpet"))
    written = prom.read_text() + check.out
    # --syscalls needs root and tracefs: its metric's name is checked in the code.
    written += (ROOT / "src/output/watchreport.c").read_text()
    for name in names:
        assert name in written, name


@pytest.mark.parametrize("fixture", ["qemu-tcg-smp2-hpet", "qemu-tcg-smp1-tsc", "kvm-kvm-clock-sysfs-only"])
def test_textfiles_pass_promtool_lint(cd, tmp_path, fixture):
    """check's and watch's textfiles as Prometheus' own linter reads them
    (names, units, HELP and TYPE), and with nothing node_exporter already
    exports: the current clocksource is node_time_clocksource_current_info."""
    tool = need("promtool", "prometheus")
    prom = tmp_path / "w.prom"
    watch = cd("watch", "-d", "0.2", "-P", str(prom), env={"CLOCKDOCTOR_KMSG": str(tmp_path / "none")})
    assert watch.rc == 0, watch.err
    check = cd("check", "--prometheus", "--root", str(ROOT / "tests/fixtures" / fixture))
    for text in (prom.read_text(), check.out):
        p = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stdout + p.stderr) == (0, ""), text
        assert "current_info" not in text
    assert 'clockdoctor_clocksource_vdso{clocksource="' in check.out
