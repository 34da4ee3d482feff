# SPDX-License-Identifier: MIT
"""The fleet path end to end, with the real components: Debian's
prometheus-node-exporter reads the textfiles `check --prometheus-file` and
`watch --prometheus-file` write, a real `prometheus` scrapes it with the
shipped rules (contrib/prometheus/clockdoctor.rules.yml) loaded, and the
test asks Prometheus' HTTP API whether the alerts fire for a critical
machine and clear when it is healthy again.

The critical machine is a snapshot (check --root tests/fixtures/
qemu-tcg-smp2-hpet: the kernel refused the TSC and runs on hpet) and a
fake sysfs for watch (CLOCKDOCTOR_SYSFS) whose clocksource is hpet; the
healthy one is qemu-tcg-smp1-tsc and the fake switched back to tsc.  This
machine's clocksource is never touched.

Loopback only, on ports picked free (never 9090/9100, where the packages'
own services may listen), every process started and stopped here, the
whole bounded (well under 90 s).  The binaries missing is a skip, except
under CI=true or LAB_REQUIRE=1 (.ci/run), where it is a failure."""
import json
import os
import re
import shlex
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import BINARY, FIXTURES, ROOT, make_env, need_tool

RULES = ROOT / "contrib" / "prometheus" / "clockdoctor.rules.yml"
CS = "devices/system/clocksource/clocksource0"
FIRE_S = 45      # at most, from the textfile written to the alert firing
CLEAR_S = 30     # at most, from the healthy textfile to the alert gone


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Procs:
    """Processes this test started: each stopped (SIGTERM, then SIGKILL) at
    the end, whatever happened."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []

    def start(self, name, argv, env=None):
        log = open(self.tmp / (name + ".log"), "w")
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=e, cwd=self.tmp)
        self.procs.append((name, p, log))
        return p

    def log(self, name):
        return (self.tmp / (name + ".log")).read_text(errors="replace")[-3000:]

    def stop(self):
        for name, p, log in self.procs:
            if p.poll() is None:
                p.terminate()
        for name, p, log in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
            log.close()


def wait_for(what, fn, timeout, procs):
    """Call fn every 0.2 s until it returns something true; that, and the
    seconds it took."""
    t0 = time.monotonic()
    while True:
        try:
            got = fn()
        except (OSError, ValueError):
            got = None
        if got:
            return got, time.monotonic() - t0
        for name, p, _ in procs.procs:
            if p.poll() is not None:
                pytest.fail("%s exited (%s) while waiting for %s:\n%s" % (name, p.returncode, what,
                                                                         procs.log(name)))
        if time.monotonic() - t0 > timeout:
            pytest.fail("no %s within %d s; logs:\n%s" % (what, timeout, "\n".join(
                "--- %s\n%s" % (n, procs.log(n)) for n, _, _ in procs.procs)))
        time.sleep(0.2)


def test_alerts_fire_and_clear(tmp_path, capsys):
    untested = "the Prometheus path NOT tested"
    node_exporter = need_tool("/usr/bin/prometheus-node-exporter", "prometheus-node-exporter", untested)
    prometheus = need_tool("prometheus", "prometheus", untested)
    start = time.monotonic()
    textfiles = tmp_path / "textfile_collector"
    textfiles.mkdir()
    sysfs = tmp_path / "sys"
    (sysfs / CS).mkdir(parents=True)
    current = sysfs / CS / "current_clocksource"
    current.write_text("hpet\n")
    (sysfs / CS / "available_clocksource").write_text("hpet acpi_pm \n")
    (tmp_path / "kmsg").write_text("")

    node_port, prom_port = free_port(), free_port()
    assert {node_port, prom_port}.isdisjoint({9090, 9100})
    target = "127.0.0.1:%d" % node_port
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "rule_files:\n  - %s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['%s']\n"
        % (json.dumps(str(RULES)), target))
    procs = Procs(tmp_path)
    try:
        # The critical machine's files first: the alert can only fire once
        # they are scraped, which is the time measured.
        check = subprocess.run([BINARY, "check", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"),
                                "--prometheus-file", str(textfiles / "clockdoctor.prom")],
                               capture_output=True, text=True, timeout=60)
        assert check.returncode == 2, check.stderr
        t_written = time.monotonic()
        procs.start("watch", [BINARY, "watch", "-q", "-i", "0.2", "--prometheus-file", str(textfiles / "clockdoctor-watch.prom")],
                    env={"CLOCKDOCTOR_SYSFS": str(sysfs), "CLOCKDOCTOR_KMSG": str(tmp_path / "kmsg")})
        wait_for("watch's textfile", (textfiles / "clockdoctor-watch.prom").exists, 20, procs)
        # Only the collectors the rules read: the textfiles, and the time
        # collector's node_time_clocksource_current_info (this machine's).
        procs.start("node_exporter", [node_exporter, "--web.listen-address=" + target,
                                      "--collector.disable-defaults", "--collector.textfile",
                                      "--collector.textfile.directory=" + str(textfiles),
                                      "--collector.time"])
        procs.start("prometheus", [prometheus, "--config.file=" + str(tmp_path / "prometheus.yml"),
                                   "--storage.tsdb.path=" + str(tmp_path / "data"),
                                   "--web.listen-address=127.0.0.1:%d" % prom_port,
                                   "--log.level=warn"])
        api = "http://127.0.0.1:%d/api/v1/" % prom_port

        # node_exporter serves both files, parsed (no scrape error).
        metrics, _ = wait_for("node_exporter's metrics", lambda: get("http://%s/metrics" % target), 20, procs)
        assert "node_textfile_scrape_error 0" in metrics
        assert 'clockdoctor_finding_info{code="slow-clocksource",severity="critical"} 1' in metrics
        assert "clockdoctor_watch_clocksource_vdso 0" in metrics
        assert "node_time_clocksource_current_info{" in metrics

        def rules_loaded():
            groups = json.loads(get(api + "rules"))["data"]["groups"]
            return [r["name"] for g in groups for r in g["rules"]]
        names, _ = wait_for("the rules loaded", rules_loaded, 30, procs)
        assert {"ClockdoctorCritical", "ClockdoctorTimeCallsBecameSyscalls"} <= set(names)
        t_ready = time.monotonic() - start

        def alerts(state="firing"):
            data = json.loads(get(api + "alerts"))["data"]["alerts"]
            return [a for a in data if a["state"] == state and a["labels"]["alertname"].startswith("Clockdoctor")]

        def firing():
            got = {a["labels"]["alertname"]: a for a in alerts()}
            want = {"ClockdoctorCritical", "ClockdoctorTimeCallsBecameSyscalls"}
            return got if want <= set(got) else None
        got, t_fire = wait_for("the alerts firing", firing, FIRE_S, procs)
        t_fire_written = time.monotonic() - t_written
        crit = got["ClockdoctorCritical"]
        assert crit["labels"]["code"] == "slow-clocksource"
        assert crit["labels"]["severity"] == "critical" and crit["labels"]["instance"] == target
        assert crit["annotations"]["summary"] == "slow-clocksource on %s (clockdoctor check: critical)" % target
        # The warnings of the same snapshot, one alert each.
        warn = {a["labels"]["code"] for a in alerts() if a["labels"]["alertname"] == "ClockdoctorWarning"}
        assert "tsc-unstable-sync" in warn
        # watch's fake clocksource made time calls system calls (its alert has
        # no clocksource label; one with it would be node_exporter's view of
        # this machine's own clocksource, joined with the snapshot's table).
        slow = [a for a in alerts() if a["labels"]["alertname"] == "ClockdoctorTimeCallsBecameSyscalls"]
        assert any("clocksource" not in a["labels"] and a["labels"]["instance"] == target for a in slow), slow

        # The machine healthy again: check on the healthy snapshot, watch's
        # clocksource back to tsc.
        t0 = time.monotonic()
        healthy = subprocess.run([BINARY, "check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"),
                                  "--prometheus-file", str(textfiles / "clockdoctor.prom")],
                                 capture_output=True, text=True, timeout=60)
        assert healthy.returncode in (0, 1), healthy.stdout + healthy.stderr
        current.write_text("tsc\n")

        def left():
            """The alerts still active, but node_exporter's view of this
            machine's own clocksource (a CI host on hpet is slow indeed)."""
            return {a["labels"]["alertname"] for a in alerts("firing") + alerts("pending")
                    if "clocksource" not in a["labels"]}

        def cleared():
            return not left() & {"ClockdoctorCritical", "ClockdoctorWarning", "ClockdoctorTimeCallsBecameSyscalls"}
        _, t_clear = wait_for("the alerts cleared", cleared, CLEAR_S, procs)
        t_clear = time.monotonic() - t0
        # What is left is true: watch saw the switch back to tsc, a change.
        assert left() <= {"ClockdoctorClocksourceChanged"}, left()
        total = time.monotonic() - start
        with capsys.disabled():
            print("\ne2e prometheus: rules loaded %.1f s after start; the alerts fired %.1f s after the "
                  "critical textfiles were written (%.1f s after the rules were loaded), cleared %.1f s "
                  "after the healthy textfile; %.1f s in all" % (t_ready, t_fire_written, t_fire, t_clear, total))
        assert total < 90
    finally:
        procs.stop()


# ---- Debian as installed ----
DEBIAN_UNIT = "/lib/systemd/system/prometheus-node-exporter.service"
NEVER_S = 45     # at most, from Prometheus up to the never-reported alert firing


def unit_values(path, key):
    """Every value of key= in a systemd unit file."""
    return [l.split("=", 1)[1].strip() for l in open(path).read().splitlines() if l.startswith(key + "=")]


def env_file(path):
    """KEY=VALUE lines of an EnvironmentFile= (quotes removed), as systemd reads them."""
    env = {}
    for l in open(path).read().splitlines():
        l = l.strip()
        if l and not l.startswith(("#", ";")) and "=" in l:
            k, v = l.split("=", 1)
            env[k.strip()] = " ".join(shlex.split(v)) if v.strip() else ""
    return env


def debian_exec_start():
    """Debian's prometheus-node-exporter.service's ExecStart=, its $ARGS from
    its EnvironmentFile= (the package's defaults file, as installed): argv,
    and the unit's User=."""
    env = {}
    for f in unit_values(DEBIAN_UNIT, "EnvironmentFile"):
        f = f.lstrip("-")
        if os.path.exists(f):
            env.update(env_file(f))
    argv = []
    for word in shlex.split(unit_values(DEBIAN_UNIT, "ExecStart")[-1]):
        if word.startswith("$") and not word.startswith("${"):
            argv += env.get(word[1:], "").split()
        else:
            argv.append(word)
    users = unit_values(DEBIAN_UNIT, "User")
    return argv, users[-1] if users else None


def debian_textfile_dir():
    """The folder the Debian package's units write into (debian/rules)."""
    m = re.search(r"TEXTFILEDIR=(\S+)", (ROOT / "debian" / "rules").read_text())
    return m.group(1)


def test_debian_units_as_installed(tmp_path, capsys):
    """On Debian with prometheus-node-exporter as the package installs it:
    node_exporter started as its unit starts it (ExecStart= with $ARGS
    from /etc/default/prometheus-node-exporter, as its User=; only the
    listen address is the test's own, on loopback), and clockdoctor-check
    .service's commands as the Debian package's unit has them, run as root
    as the unit runs them: node_exporter serves the file check wrote, and
    check says it does.  Both run in a mount namespace of their own where
    the textfile folder is a temporary folder: nothing is written to this
    machine's /var/lib.  Then a real Prometheus scrapes that node_exporter
    and a second one whose folder has no file (a host that should report
    and never has): ClockdoctorNeverReported fires for it alone, with the
    runbook_url the external label sets."""
    untested = "the Debian fleet path NOT tested"
    need_tool("/usr/bin/prometheus-node-exporter", "prometheus-node-exporter", untested)
    prometheus = need_tool("prometheus", "prometheus", untested)
    for tool in ("unshare", "nsenter", "setpriv", "mount"):
        need_tool(tool, "util-linux", untested)
    if not os.path.exists(DEBIAN_UNIT):
        need_tool(DEBIAN_UNIT, "prometheus-node-exporter", untested)
    if os.geteuid() != 0:
        pytest.skip("root is needed for a mount namespace and to run node_exporter as its user: " + untested)
    folder = debian_textfile_dir()
    if not os.path.isdir(folder):
        pytest.skip("%s is missing (prometheus-node-exporter makes it): %s" % (folder, untested))
    before = sorted(os.listdir(folder))

    # The check service as the Debian package installs it (its paths: debian/rules).
    b = tmp_path / "render"
    subprocess.run(["make", "-s", "--no-print-directory", "B=%s" % b, "BINDIR=%s" % os.path.dirname(BINARY),
                    "TEXTFILEDIR=%s" % folder, "units"], cwd=ROOT, check=True, capture_output=True, timeout=120,
                   env=make_env())
    unit = (b / "contrib" / "clockdoctor-check.service").read_text()
    pre = [l[len("ExecStartPre="):].lstrip("+") for l in unit.splitlines() if l.startswith("ExecStartPre=")]
    start = next(l[len("ExecStart="):] for l in unit.splitlines() if l.startswith("ExecStart="))
    assert "--prometheus-file %s/clockdoctor.prom" % folder in start

    argv, user = debian_exec_start()
    assert argv[0] == "/usr/bin/prometheus-node-exporter", argv
    textfiles = tmp_path / "textfiles"      # the namespace's view of the folder
    textfiles.mkdir(mode=0o755)
    os.chmod(textfiles, 0o755)
    empty = tmp_path / "empty"               # the host that never reported
    empty.mkdir()
    deb_port, other_port, prom_port = free_port(), free_port(), free_port()
    deb, other = "127.0.0.1:%d" % deb_port, "127.0.0.1:%d" % other_port
    drop = ["setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--"] if user else []
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    procs = Procs(tmp_path)
    try:
        ne = procs.start("node_exporter", ["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                           "sh", str(textfiles), folder] + drop + argv +
                         ["--web.listen-address=" + deb])
        metrics, _ = wait_for("Debian's node_exporter", lambda: get("http://%s/metrics" % deb), 30, procs)
        assert "clockdoctor_" not in metrics

        def in_ns(cmd):
            return subprocess.run(["nsenter", "--target", str(ne.pid), "--mount", "--"] + cmd,
                                  capture_output=True, text=True, timeout=120)
        for cmd in pre:
            r = in_ns(shlex.split(cmd))
            assert r.returncode == 0, r.stderr
        check = in_ns(shlex.split(start))
        assert check.returncode in (0, 1, 2), check.stderr
        said = " ".join(check.stderr.split())
        assert ("clockdoctor check: metrics to %s/clockdoctor.prom, a folder node_exporter reads (pid %d:"
                % (folder, ne.pid)) in said, check.stderr
        assert "warning" not in said, check.stderr
        assert [p.name for p in textfiles.iterdir()] == ["clockdoctor.prom"]

        def served():
            m = get("http://%s/metrics" % deb)
            return m if "clockdoctor_check_last_run_timestamp_seconds " in m else None
        metrics, _ = wait_for("node_exporter serving check's file", served, 20, procs)
        assert "node_textfile_scrape_error 0" in metrics
        assert "\nclockdoctor_status %d\n" % check.returncode in metrics
        assert 'clockdoctor_build_info{compiler="' in metrics
        assert sorted(os.listdir(folder)) == before     # nothing written to this machine's folder

        # Prometheus: the host with the file, and one without.
        procs.start("node_exporter_empty", ["/usr/bin/prometheus-node-exporter", "--web.listen-address=" + other,
                                            "--collector.disable-defaults", "--collector.textfile",
                                            "--collector.textfile.directory=" + str(empty)])
        # The rules as shipped, but for the hour ClockdoctorNeverReported waits.
        rules = RULES.read_text()
        fast = re.sub(r"(last_over_time\(clockdoctor_check_last_run_timestamp_seconds\[1d\]\)\n        for: )1h",
                      r"\g<1>0s", rules)
        assert fast.count("        for: 0s\n") == 1
        (tmp_path / "rules.yml").write_text(fast)
        runbooks = "https://wiki.example.com/clockdoctor/operators.md"
        (tmp_path / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "  external_labels:\n    clockdoctor_runbooks: %s\n"
            "rule_files:\n  - %s\n"
            "scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['%s', '%s']\n"
            % (runbooks, json.dumps(str(tmp_path / "rules.yml")), deb, other))
        procs.start("prometheus", [prometheus, "--config.file=" + str(tmp_path / "prometheus.yml"),
                                   "--storage.tsdb.path=" + str(tmp_path / "data"),
                                   "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"])
        api = "http://127.0.0.1:%d/api/v1/" % prom_port

        def never():
            data = json.loads(get(api + "alerts"))["data"]["alerts"]
            got = [a for a in data if a["state"] == "firing" and a["labels"]["alertname"] == "ClockdoctorNeverReported"]
            return got or None
        got, t_never = wait_for("ClockdoctorNeverReported firing", never, NEVER_S, procs)
        assert [a["labels"]["instance"] for a in got] == [other], got
        assert got[0]["annotations"]["runbook_url"] == runbooks + "#clockdoctorneverreported"
        # A host reports: the fleet-wide alert is not firing (pending at most,
        # from the first evaluation, before the first scrape).
        data = json.loads(get(api + "alerts"))["data"]["alerts"]
        assert not [a for a in data if a["labels"]["alertname"] == "ClockdoctorNoHostReports"
                    and a["state"] == "firing"]
        with capsys.disabled():
            print("\ne2e Debian: ClockdoctorNeverReported fired %.1f s after Prometheus started" % t_never)
    finally:
        procs.stop()
    assert sorted(os.listdir(folder)) == before
