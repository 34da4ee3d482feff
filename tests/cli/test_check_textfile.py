# SPDX-License-Identifier: MIT
"""`check --prometheus-file PATH`: node_exporter's textfile, written as the
timer's service writes it (contrib/clockdoctor-check.service.in): atomically,
beside the report on stdout, with when the check ran and when one last
reached a verdict."""
import os
import re
import time

from conftest import FIXTURES


def sample(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def test_file_and_report(cd, tmp_path):
    prom = tmp_path / "clockdoctor.prom"
    before = time.time()
    r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "--color", "never", "--prometheus-file", str(prom))
    assert r.rc == 2, r.err
    assert r.out.startswith("CRITICAL: ")          # the report still goes to stdout
    text = prom.read_text()
    assert 'clockdoctor_finding_info{code="slow-clocksource",severity="critical"} 1\n' in text
    run = sample(text, "clockdoctor_check_last_run_timestamp_seconds")
    assert before - 1 <= run <= time.time()
    assert sample(text, "clockdoctor_check_last_success_timestamp_seconds") == run
    assert oct(prom.stat().st_mode & 0o777) == "0o644"
    assert os.listdir(tmp_path) == ["clockdoctor.prom"]  # no temporary file left


def test_could_not_tell_keeps_the_last_success(cd, tmp_path):
    """A run that could not tell (status 3) says when the last verdict was:
    it keeps the last success of the file it replaces; a later verdict
    moves it to its own time."""
    prom = tmp_path / "clockdoctor.prom"
    empty = tmp_path / "empty-snapshot"
    empty.mkdir()
    prom.write_text("# an older file\nclockdoctor_check_last_success_timestamp_seconds 1767225600.250\n")
    r = cd("check", "--root", str(empty), "--prometheus-file", str(prom))
    assert r.rc == 3, r.out + r.err
    text = prom.read_text()
    assert sample(text, "clockdoctor_status") == 3
    assert sample(text, "clockdoctor_check_last_success_timestamp_seconds") == 1767225600.25
    assert sample(text, "clockdoctor_check_last_run_timestamp_seconds") > 1767225600.25
    # Without a file before, never: 0.
    prom.unlink()
    assert cd("check", "--root", str(empty), "--prometheus-file", str(prom)).rc == 3
    assert sample(prom.read_text(), "clockdoctor_check_last_success_timestamp_seconds") == 0
    # A verdict: its own time.
    assert cd("check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"), "--prometheus-file", str(prom)).rc in (0, 1)
    text = prom.read_text()
    assert (sample(text, "clockdoctor_check_last_success_timestamp_seconds")
            == sample(text, "clockdoctor_check_last_run_timestamp_seconds"))


def test_unwritable_or_bad_path(cd, tmp_path):
    r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"), "--prometheus-file", str(tmp_path / "no-dir" / "c.prom"))
    assert r.rc == 3 and "cannot write" in r.err and "no-dir" in r.err
    for bad in ("", str(tmp_path) + "/"):
        r = cd("check", "--no-measure", "--prometheus-file", bad)
        assert r.rc == 3 and "--prometheus-file takes a file name" in r.err
    # A planted symlink at the name is replaced, never written through.
    target = tmp_path / "target"
    target.write_text("keep\n")
    (tmp_path / "c.prom").symlink_to(target)
    assert cd("check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"), "--prometheus-file", str(tmp_path / "c.prom")).rc in (0, 1)
    assert target.read_text() == "keep\n"
    assert not (tmp_path / "c.prom").is_symlink()


def said(err):
    """stderr as one line (the messages are wrapped for a terminal)."""
    return " ".join(err.split())


def test_a_name_node_exporter_never_reads(cd, tmp_path):
    """node_exporter reads *.prom only, and not hidden ones: any other name is
    written as asked, with a warning; the exit status is the verdict's."""
    for name in ("clockdoctor.txt", ".clockdoctor.prom", "clockdoctor.prom.new"):
        r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"), "--prometheus-file", str(tmp_path / name))
        assert r.rc in (0, 1), r.err
        assert (tmp_path / name).exists()
        assert ("clockdoctor check: warning: node_exporter's textfile collector reads only files named *.prom "
                "(and not hidden): it will never read %s" % (tmp_path / name)) in said(r.err)
    r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp1-tsc"), "--prometheus-file", str(tmp_path / "c.prom"))
    assert "reads only files named" not in r.err
    # stdout is the report, whatever is said on stderr
    assert r.out.split(":")[0] in ("OK", "WARNING")


def test_says_whether_the_running_node_exporter_reads_it(cd, tmp_path):
    """A node_exporter running with --collector.textfile.directory=A (its
    command line, found in /proc): a file in A is said to be served, one in
    B gets a warning naming A and the flag that would fix it."""
    import socket
    import subprocess
    from conftest import need_tool
    ne = need_tool("/usr/bin/prometheus-node-exporter", "prometheus-node-exporter",
                   "check's word on node_exporter's folder NOT tested against a real one")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([ne, "--web.listen-address=127.0.0.1:%d" % port, "--collector.disable-defaults",
                          "--collector.textfile", "--collector.textfile.directory", str(a)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Popen returns once the program is exec'd: its command line is there.
        snap = str(FIXTURES / "qemu-tcg-smp1-tsc")
        r = cd("check", "--root", snap, "--prometheus-file", str(a / "c.prom"))
        assert ("metrics to %s, a folder node_exporter reads (pid %d: /proc/%d/cmdline)"
                % (a / "c.prom", p.pid, p.pid)) in said(r.err), r.err
        r = cd("check", "--root", snap, "--prometheus-file", str(b / "c.prom"))
        assert r.rc in (0, 1)
        assert ("warning: metrics to %s, but node_exporter (pid %d: /proc/%d/cmdline) reads %s: it will not "
                "serve them. Write into %s, or give node_exporter --collector.textfile.directory=%s"
                % (b / "c.prom", p.pid, p.pid, a, a, b)) in said(r.err), r.err
    finally:
        p.terminate()
        p.wait(timeout=10)
