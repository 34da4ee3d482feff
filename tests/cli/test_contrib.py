"""contrib/ checked by the tools that will read it: the systemd unit by
`systemd-analyze verify` (Debian's systemd), the alerting rules by
`promtool check rules` and their own unit tests by `promtool test rules`
(Debian's prometheus).  A missing tool fails under CI (CI=true) or
LAB_REQUIRE=1, and skips loudly otherwise."""
import os
import shutil
import subprocess

import pytest

from conftest import BINARY, ROOT, make_env, need_tool

CONTRIB = ROOT / "contrib"
UNIT_NAME = "clockdoctor-watch.service"
UNIT_IN = CONTRIB / (UNIT_NAME + ".in")
# every unit the build writes (from NAME.in, or NAME as it is) and make
# install installs
UNITS = sorted({p.name[:-3] if p.name.endswith(".in") else p.name
                for pattern in ("*.service.in", "*.timer.in", "*.service", "*.timer")
                for p in CONTRIB.glob(pattern)})
RULES = CONTRIB / "prometheus" / "clockdoctor.rules.yml"
RULES_TEST = CONTRIB / "prometheus" / "clockdoctor.rules.test.yml"


def need(tool, package):
    return need_tool(tool, package, "contrib/ NOT checked")


def render_units(tmp_path, bindir="/usr/local/bin"):
    """Every unit as the build writes it for an install's BINDIR (into a
    build folder of the test's own): {name: text}."""
    b = tmp_path / "render"
    subprocess.run(["make", "-s", "--no-print-directory", "B=%s" % b, "BINDIR=%s" % bindir, "units"],
                   cwd=ROOT, check=True, capture_output=True, timeout=120, env=make_env())
    units = {p.name: p.read_text() for p in (b / "contrib").iterdir()}
    assert sorted(units) == UNITS
    return units


def render_unit(tmp_path, bindir="/usr/local/bin", name=UNIT_NAME):
    return render_units(tmp_path, bindir)[name]


def unit_root(tmp_path, units, bindir, unitdir):
    """A root for `systemd-analyze verify --root`: the system's own units
    (sysinit.target and the rest that a service pulls in), the unit where it
    is installed, and the commands it runs at the paths it names (the
    freshly built clockdoctor in BINDIR), so that the check of ExecStart= is
    real, not waived."""
    root = tmp_path / "root"
    for d in ("usr/lib/systemd", bindir.lstrip("/"), unitdir.lstrip("/"), "bin"):
        (root / d).mkdir(parents=True, exist_ok=True)
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True,
                    dirs_exist_ok=True)
    shutil.copy2(BINARY, root / bindir.lstrip("/") / "clockdoctor")
    shutil.copy2(shutil.which("mkdir"), root / "bin/mkdir")
    for name, text in units.items():
        (root / unitdir.lstrip("/") / name).write_text(text)
    return root


def verify(tmp_path, unit_text, bindir="/usr/local/bin", unitdir="/etc/systemd/system", mandir=None,
           name=UNIT_NAME, others=None):
    """systemd-analyze verify of the unit installed in unitdir, beside the
    others (the units a timer starts); mandir holds the man pages as
    installed (default: this tree's) for Documentation=man:...(1)."""
    tool = need("systemd-analyze", "systemd")
    root = unit_root(tmp_path, dict(others or {}, **{name: unit_text}), bindir, unitdir)
    if mandir is None:
        mandir = tmp_path / "man"
        (mandir / "man1").mkdir(parents=True)
        for page in (ROOT / "docs").glob("*.1"):
            shutil.copy2(page, mandir / "man1" / page.name)
    env = dict(os.environ, MANPATH=str(mandir), SYSTEMD_LOG_COLOR="0")
    p = subprocess.run([tool, "verify", "--root=%s" % root, "%s/%s" % (unitdir, name)],
                       capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, (p.stdout + p.stderr).strip()


@pytest.mark.parametrize("name", UNITS)
def test_unit_verifies(tmp_path, name):
    units = render_units(tmp_path)
    rc, out = verify(tmp_path, units[name], name=name, others=units)
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
    text = render_unit(tmp_path)
    assert change[0] in text
    rc, out = verify(tmp_path, text.replace(change[0], change[1], 1))
    assert words in out, out


def test_units_take_the_install_bindir(tmp_path):
    """No install path written in the sources: the build writes BINDIR in."""
    sources = [p for p in CONTRIB.iterdir() if p.name.endswith((".service", ".timer", ".service.in", ".timer.in"))]
    assert len(sources) >= 2
    for p in sources:
        assert "/usr/local" not in p.read_text(), p.name
    units = render_units(tmp_path, "/opt/cd/bin")
    for name, text in units.items():
        if name.endswith(".service"):
            assert "ExecStart=/opt/cd/bin/clockdoctor " in text, name


def test_unit_least_privilege(tmp_path):
    text = render_unit(tmp_path)
    for line in ("CapabilityBoundingSet=CAP_SYSLOG", "NoNewPrivileges=yes", "ProtectSystem=strict",
                 "ReadWritePaths=/var/lib/node_exporter/textfile_collector", "PrivateNetwork=yes",
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
    assert "SUCCESS: 8 rules found" in p.stdout


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
