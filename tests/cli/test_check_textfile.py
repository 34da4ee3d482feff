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
