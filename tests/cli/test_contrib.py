# SPDX-License-Identifier: MIT
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
CHECK_UNIT = CONTRIB / "clockdoctor-check.service.in"
CHECK_TIMER = CONTRIB / "clockdoctor-check.timer"
TEXTFILE_DIR = "/var/lib/node_exporter/textfile_collector"
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


def test_check_timer_and_service_verify(tmp_path):
    """The timer with the service it starts (test_unit_verifies checks each
    beside the others); a mistake in the service is caught too."""
    assert "@BINDIR@/clockdoctor check " in CHECK_UNIT.read_text()
    units = render_units(tmp_path)
    bad = units["clockdoctor-check.service"].replace("SuccessExitStatus=", "SuccesExitStatus=")
    rc, out = verify(tmp_path / "bad", bad, name="clockdoctor-check.service", others=units)
    assert "Unknown key" in out, out


def test_check_service_command_writes_the_textfile(tmp_path):
    """The service's ExecStart= as written, run with the built command and a
    temporary folder for node_exporter's: the textfile appears whole, with
    the run's time and the version, and the exit status is one the unit
    counts as success on this machine (0, 1 or 2)."""
    import re
    import shlex
    import time
    unit = render_units(tmp_path / "render", os.path.dirname(BINARY))["clockdoctor-check.service"]
    out_dir = tmp_path / "textfiles"
    out_dir.mkdir()
    line = next(l for l in unit.splitlines() if l.startswith("ExecStart="))
    assert TEXTFILE_DIR in line
    argv = shlex.split(line[len("ExecStart="):].replace(TEXTFILE_DIR, str(out_dir)))
    assert "SuccessExitStatus=1 2\n" in CHECK_UNIT.read_text()
    before = time.time()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1, 2), p.stderr
    assert p.stdout.splitlines()[0].split(":")[0] in ("OK", "WARNING", "CRITICAL")  # the journal's text
    assert [f.name for f in out_dir.iterdir()] == ["clockdoctor.prom"]
    text = (out_dir / "clockdoctor.prom").read_text()
    last_run = float(re.search(r"^clockdoctor_check_last_run_timestamp_seconds (\S+)$", text, re.M).group(1))
    assert before - 1 <= last_run <= time.time()
    assert re.search(r'^clockdoctor_build_info\{version="[0-9.]+",revision="[^"]*",compiler="[^"]+"\} 1$',
                     text, re.M)
    # The journal says where the file went and whether node_exporter reads it.
    assert "clockdoctor check: " in p.stderr and str(out_dir / "clockdoctor.prom") in p.stderr
    assert "clockdoctor_status %d\n" % p.returncode in text


def test_check_timer_schedule():
    """Every 15 minutes, as the stale alert's 45 minutes (three runs) assume."""
    timer = CHECK_TIMER.read_text()
    assert "OnUnitActiveSec=15min\n" in timer and "OnBootSec=" in timer
    assert "time() - clockdoctor_check_last_run_timestamp_seconds > 2700" in RULES.read_text()


def test_unit_least_privilege(tmp_path):
    text = render_unit(tmp_path)
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
    assert "SUCCESS: 13 rules found" in p.stdout


def test_rules_fire_as_written():
    """promtool's own unit tests of the rules: each alert fires on the series
    it is written for, with its labels and annotations, and not otherwise."""
    tool = need("promtool", "prometheus")
    p = subprocess.run([tool, "test", "rules", RULES_TEST.name], capture_output=True, text=True,
                       timeout=60, cwd=RULES_TEST.parent)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout


def written_metrics(cd, tmp_path):
    """What check and watch write (and, for what a test machine cannot make
    them write, watch's writer itself): a text to find a metric's name in."""
    prom = tmp_path / "w.prom"
    env = {"CLOCKDOCTOR_KMSG": str(tmp_path / "none")}
    watch = cd("watch", "-d", "0.2", "--prometheus-file", str(prom), env=env)
    assert watch.rc == 0, watch.err
    check = cd("check", "--prometheus", "--root", str(ROOT / "tests/fixtures/qemu-tcg-smp2-hpet"))
    written = prom.read_text() + check.out
    # --syscalls needs root and tracefs, and check --root measures nothing:
    # those names are checked in the writers' code.
    return written + "".join((ROOT / "src/output" / f).read_text() for f in ("watchreport.c", "prometheus.c"))


def test_rules_use_metrics_that_exist(cd, tmp_path):
    """Every metric the rules name is one that check or watch writes."""
    import re
    # (clockdoctor_runbooks is an external label's name, for runbook_url)
    names = set(re.findall(r"\b(clockdoctor_[a-z_]+)", RULES.read_text())) - {"clockdoctor_runbooks"}
    written = written_metrics(cd, tmp_path)
    for name in names:
        assert name in written, name


GRAFANA = CONTRIB / "grafana" / "clockdoctor.json"
# Grafana's variables, as a query would be sent
GRAFANA_VARS = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$instance": ".+"}


def dashboard_queries():
    """Every PromQL expression of the dashboard: its panels' targets, its
    annotations, and the metric of each label_values() variable."""
    import json
    import re
    d = json.loads(GRAFANA.read_text())
    exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    exprs += [a["expr"] for a in d["annotations"]["list"] if "expr" in a]
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.fullmatch(r"label_values\((.+),\s*\w+\)", q)
            assert m, q
            exprs.append(m.group(1))
    for var, value in GRAFANA_VARS.items():
        exprs = [e.replace(var, value) for e in exprs]
    assert not [e for e in exprs if "$" in e], exprs
    return exprs


def promtool_check_exprs(tool, tmp_path, exprs):
    """promtool check rules on exprs as recording rules: its output."""
    import json
    rules = tmp_path / "dashboard.rules.yml"
    rules.write_text("groups:\n  - name: dashboard\n    rules:\n" + "".join(
        "      - record: dashboard:query%d\n        expr: %s\n" % (i, json.dumps(e)) for i, e in enumerate(exprs)))
    p = subprocess.run([tool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def test_dashboard_queries_are_valid_promql(tmp_path):
    """Every query of the Grafana dashboard parses as PromQL (promtool), and
    a broken one would fail the check."""
    tool = need("promtool", "prometheus")
    exprs = dashboard_queries()
    assert len(exprs) >= 10
    rc, out = promtool_check_exprs(tool, tmp_path, exprs)
    assert rc == 0 and "SUCCESS: %d rules found" % len(exprs) in out, out
    rc, out = promtool_check_exprs(tool, tmp_path, exprs[:1] + [exprs[1] + " +"])
    assert rc != 0, out


def test_dashboard_uses_metrics_that_exist(cd, tmp_path):
    """The dashboard shows what clockdoctor writes and node_exporter's
    series the rules join it with; it has each panel the fleet needs and
    clocksource changes as annotations."""
    import json
    import re
    text = " ".join(dashboard_queries())
    written = written_metrics(cd, tmp_path)
    for name in set(re.findall(r"\b(clockdoctor_[a-z_]+)", text)):
        assert name in written, name
    rules = RULES.read_text()
    for name in set(re.findall(r"\b(node_[a-z_]+)", text)):
        assert name in rules, name
    d = json.loads(GRAFANA.read_text())
    titles = {p["title"] for p in d["panels"]}
    assert {"Verdict per host", "Time system calls a second", "Cost of one time call"} <= titles
    notes = [a for a in d["annotations"]["list"] if "expr" in a]
    assert any("clockdoctor_watch_clocksource_changes_total" in a["expr"] for a in notes)
    # one data source variable, used by every query
    assert all(t["datasource"]["uid"] == "${datasource}" for p in d["panels"] for t in p["targets"])


@pytest.mark.parametrize("fixture", ["qemu-tcg-smp2-hpet", "qemu-tcg-smp1-tsc", "kvm-kvm-clock-sysfs-only"])
def test_textfiles_pass_promtool_lint(cd, tmp_path, fixture):
    """check's and watch's textfiles as Prometheus' own linter reads them
    (names, units, HELP and TYPE), and with nothing node_exporter already
    exports: the current clocksource is node_time_clocksource_current_info."""
    tool = need("promtool", "prometheus")
    prom = tmp_path / "w.prom"
    watch = cd("watch", "-d", "0.2", "--prometheus-file", str(prom), env={"CLOCKDOCTOR_KMSG": str(tmp_path / "none")})
    assert watch.rc == 0, watch.err
    check = cd("check", "--prometheus", "--root", str(ROOT / "tests/fixtures" / fixture))
    for text in (prom.read_text(), check.out):
        p = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stdout + p.stderr) == (0, ""), text
        assert "current_info" not in text
    assert 'clockdoctor_clocksource_vdso{clocksource="' in check.out


def test_units_take_the_install_textfile_folder(tmp_path):
    """The folder node_exporter reads is chosen at install: `make install`'s
    TEXTFILEDIR (upstream's usual folder unless given), Debian's package
    the folder Debian's prometheus-node-exporter reads as shipped; every
    path of it in the units (mkdir, the sandbox's writable path, the file)
    follows."""
    rules = (ROOT / "debian" / "rules").read_text()
    assert "TEXTFILEDIR=/var/lib/prometheus/node-exporter" in rules
    for name in ("clockdoctor-check.service.in", "clockdoctor-watch.service.in"):
        src = "".join(l for l in (CONTRIB / name).read_text().splitlines(True) if not l.startswith("#"))
        assert "textfile_collector" not in src and "node-exporter" not in src, name
    b = tmp_path / "render"
    subprocess.run(["make", "-s", "--no-print-directory", "B=%s" % b, "TEXTFILEDIR=/var/lib/prometheus/node-exporter",
                    "units"], cwd=ROOT, check=True, capture_output=True, timeout=120, env=make_env())
    for name, prom in (("clockdoctor-check.service", "clockdoctor.prom"), ("clockdoctor-watch.service", "clockdoctor-watch.prom")):
        text = (b / "contrib" / name).read_text()
        for line in ("ExecStartPre=+/bin/mkdir -p /var/lib/prometheus/node-exporter",
                     "ReadWritePaths=-/var/lib/prometheus/node-exporter"):
            assert line + "\n" in text, (name, line)
        assert "--prometheus-file /var/lib/prometheus/node-exporter/%s\n" % prom in text
        body = "".join(l for l in text.splitlines(True) if not l.startswith("#"))
        assert "textfile_collector" not in body and "@TEXTFILEDIR@" not in text


def test_every_alert_has_a_runbook_in_the_docs():
    """Each alert's runbook_url points to a section of docs/operators.md
    that exists (its anchor, as a Markdown renderer makes it), under the
    base the operator sets or the installed copy."""
    import re
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
               for h in re.findall(r"^#+ (.+)$", (ROOT / "docs" / "operators.md").read_text(), re.M)}
    # each alert's block: from its "- alert:" to the next rule
    blocks = re.split(r"^      - alert: ", RULES.read_text(), flags=re.M)[1:]
    assert len(blocks) == 13
    for block in blocks:
        name = block.split("\n", 1)[0].strip()
        urls = re.findall(r"^          runbook_url: '(.*)'$", block, re.M)
        assert len(urls) == 1, name
        assert urls[0].startswith("{{ with $externalLabels.clockdoctor_runbooks }}{{ . }}{{ else }}"
                                  "file:///usr/share/doc/clockdoctor/operators.md{{ end }}#"), name
        anchor = urls[0].rsplit("#", 1)[1]
        assert anchor == name.lower() and anchor in anchors, name
