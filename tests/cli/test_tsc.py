# SPDX-License-Identifier: MIT
"""`clockdoctor tsc` as a user runs it: the report's shape, one CPU under taskset, usage, the
documentation, and `check --deep`.

Nothing here asserts how fast or how quiet the machine is: a busy machine may measure a wider
error bar or fewer rounds, never a different shape.  The verdict itself is whatever this machine
deserves; only its consistency with the exit status and the tests is checked.
"""
import json
import os
import platform
import re
import shutil
import subprocess

import pytest

from conftest import BINARY, ROOT, FIXTURES, codes

VERDICT_RC = {"sound": 0, "unknown": 1, "unsound": 2}
SOURCES = {"measured", "kernel-refined", "kernel-detected", "kernel-hypervisor", "cpuid-0x15",
           "cpuid-0x16", "hypervisor-leaf", "perf-mmap", "cntfrq"}
TESTS = ["flags", "frequency", "sync", "drift"]
X86 = platform.machine() in ("x86_64", "i686", "i386")


def online_cpus():
    return os.cpu_count() or 1


def check_consistent(doc, rc):
    assert doc["verdict"] in VERDICT_RC
    assert rc == VERDICT_RC[doc["verdict"]] == doc["exit_status"]
    statuses = {t["name"]: t["status"] for t in doc["tests"]}
    assert list(statuses) == TESTS
    assert set(statuses.values()) <= {"pass", "fail", "untested"}
    if doc["verdict"] == "unsound":
        assert "fail" in statuses.values()
    elif doc["verdict"] == "sound":
        assert set(statuses.values()) == {"pass"}
    else:
        assert "fail" not in statuses.values()
    if doc["verdict"] != "sound":
        assert doc["reasons"], "a verdict other than sound says why"


def test_json_shape(cd):
    r = cd("tsc", "--json", "-d", "0.2", "--quick")
    doc = r.json()
    check_consistent(doc, r.rc)
    assert doc["command"] == "tsc"
    assert "Measuring the TSC" in r.err          # the start-up line
    assert {s["source"] for s in doc["frequency"]["sources"]} == SOURCES
    for s in doc["frequency"]["sources"]:
        assert s["hz"] is None or s["hz"] > 0
        assert isinstance(s["note"], str)
        # every source absent says why
        assert s["hz"] is not None or s["note"], s
    c = doc["counter"]
    assert c["kind"] in ("x86-tsc", "arm64-cntvct", "none")
    if X86:
        assert c["name"] == "TSC"
        assert set(doc["flags"]) >= {"tsc", "constant_tsc", "nonstop_tsc", "rdtscp",
                                     "tsc_known_freq", "tsc_adjust", "hypervisor_tsc_khz"}
    if c["readable"]:
        f = doc["frequency"]
        assert f["measured_hz"] > 1e6 and f["error_ppm"] >= 0 and f["interval_s"] >= 0.19
    sync = doc["sync"]
    assert sync["mode"] == "quick"
    assert sync["cpus_allowed"] >= 1
    for p in sync["pairs"]:
        assert p["cpu_a"] != p["cpu_b"]
        if p["error"] is None:
            assert p["rounds"] >= 1
            assert p["max_backward_cycles"] >= 0
            # the bounds hold the estimate, or a warp explains why they cross
            if p["offset_cycles"] is not None:
                assert p["offset_min_cycles"] <= p["offset_cycles"] <= p["offset_max_cycles"]
            else:
                assert p["max_backward_cycles"] > 0
    d = doc["drift"]
    assert set(d) == {"reference_hz", "reference_source", "vs_monotonic_raw_ppm",
                      "vs_monotonic_ppm", "error_ppm"}
    print(f"\ntsc: {doc['summary']}")


def test_all_pairs_by_default(cd):
    doc = cd("tsc", "--json", "-d", "0.1").json()
    sync = doc["sync"]
    n = sync["cpus_allowed"]
    assert sync["mode"] == "all-pairs"
    assert len(sync["pairs"]) == (n * (n - 1) // 2 if n <= 64 else n - 1)


def test_text_under_80_columns(cd):
    r = cd("tsc", "-d", "0.2")
    lines = r.out.splitlines()
    assert re.match(r"TSC (sound|unknown|unsound): ", lines[0])
    for line in lines:
        assert len(line) <= 80, line
        assert line == line.rstrip(), repr(line)
    assert "frequency" in r.out and "tests" in r.out
    assert re.search(r"^verdict: (sound|unknown|unsound) \(exit status [012]\)$", r.out, re.M)
    assert r.rc in (0, 1, 2)


@pytest.mark.skipif(not shutil.which("taskset"), reason="no taskset (util-linux)")
def test_one_cpu_allowed():
    """Under `taskset -c 0` the process may use one CPU: no cross-CPU test, said plainly."""
    p = subprocess.run(["taskset", "-c", "0", BINARY, "tsc", "--json", "-d", "0.1"],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout)
    check_consistent(doc, p.returncode)
    assert doc["verdict"] != "sound"
    assert p.returncode in (1, 2)
    assert doc["sync"]["cpus_allowed"] == 1
    assert doc["sync"]["pairs"] == []
    sync = next(t for t in doc["tests"] if t["name"] == "sync")
    assert sync["status"] == "untested"
    assert "no cross-CPU test" in sync["detail"]
    assert "one CPU" in sync["detail"]
    if online_cpus() > 1:
        assert "allowed" in sync["detail"]
    assert any("one CPU" in r for r in doc["reasons"])
    text = subprocess.run(["taskset", "-c", "0", BINARY, "tsc", "-d", "0.1"],
                          capture_output=True, text=True, timeout=120).stdout
    verdict = " ".join(line.strip() for line in text.splitlines()[:2])
    assert verdict.startswith("TSC unknown: ") or verdict.startswith("TSC unsound: ")
    assert "no cross-CPU test" in " ".join(text.split())


def test_usage_errors(cd):
    for args in (["-d", "abc"], ["-d", "0"], ["-d", "1000"], ["-d", "nan"], ["extra"],
                 ["--bogus"]):
        r = cd("tsc", *args)
        assert r.rc == 3, args
        assert r.out == "", args
        assert r.err, args


def test_help_ends_with_examples(cd):
    r = cd("tsc", "--help")
    assert r.rc == 0
    tail = r.out.rstrip().split("\n\n")[-1].splitlines()
    assert tail[0] == "examples:"
    assert all(line.startswith("  clockdoctor tsc") or line.startswith("  taskset")
               for line in tail[1:])
    assert "tsc" in cd("--help").out


def test_every_option_is_documented(cd):
    opts = set(re.findall(r"(--[a-z-]+)", cd("tsc", "--help").out)) - {"--help"}
    assert opts >= {"--json", "--duration", "--quick"}
    part = (ROOT / "docs/clockdoctor-tsc.1").read_text().replace("\\-", "-")
    md = (ROOT / "docs/tsc.md").read_text()
    for opt in opts:
        assert opt in part, opt
        assert opt in md, opt
    for word in ("OVERHEAD", "EXIT STATUS", "clockdoctor tsc"):
        assert word in part
    assert "## OVERHEAD" in md or "## Overhead" in md


def test_check_deep(cd):
    r = cd("check", "--deep", "--json")
    doc = r.json()
    assert r.rc in (0, 1, 2)
    f = codes(doc).get("tsc-unsound")
    if f:
        assert f["severity"] in ("warning", "critical")
        assert f["evidence"]
    # a snapshot is never measured: --deep adds nothing there
    snap = cd("check", "--deep", "--json", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet")).json()
    assert "tsc-unsound" not in codes(snap)


def test_without_root():
    """An ordinary user may pin its own threads: the same report, whatever perf allows."""
    if os.geteuid() != 0:
        args = [BINARY]
    else:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("root without setpriv cannot drop privileges")
        args = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", BINARY]
    p = subprocess.run(args + ["tsc", "--json", "-d", "0.1", "--quick"], capture_output=True,
                       text=True, timeout=120)
    doc = json.loads(p.stdout)
    check_consistent(doc, p.returncode)
    perf = next(s for s in doc["frequency"]["sources"] if s["source"] == "perf-mmap")
    assert perf["hz"] is not None or perf["note"]
    # A kernel log this user cannot read (dmesg_restrict) is said to be unreadable: never
    # "no frequency declared by the kernel", which the log may well declare.
    logged = next(s for s in doc["frequency"]["sources"] if s["source"] == "kernel-detected")
    if X86 and logged["note"] == "kernel log not readable":
        drift = next(t for t in doc["tests"] if t["name"] == "drift")
        assert "no frequency declared" not in drift["detail"]
        if drift["status"] == "untested" and not any(
                s["hz"] for s in doc["frequency"]["sources"] if s["source"] != "measured"):
            assert "the kernel log, which declares it, cannot be read" in drift["detail"]
        assert any(n.startswith("log unreadable: ") for n in doc["kernel_notes"])


def test_sigterm_reports_what_was_measured(tmp_path):
    """SIGTERM (a service stopped) ends a long run as Ctrl-C does: the JSON
    of what was measured, "interrupted": true, consistent with its status,
    the frequency over the time measured; the saved verdict left alone."""
    import signal
    import time
    from conftest import default_signals
    env = dict(os.environ, CLOCKDOCTOR_STATE_DIR=str(tmp_path))
    p = subprocess.Popen([BINARY, "tsc", "--json", "-d", "600"], preexec_fn=default_signals,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    doc = json.loads(out)
    assert doc["interrupted"] is True
    check_consistent(doc, p.returncode)
    assert doc["elapsed_s"] < 600
    if doc["frequency"]["interval_s"] is not None:
        assert doc["frequency"]["interval_s"] < 600
    assert "the verdict was not saved" in err
    assert not list(tmp_path.iterdir())  # nothing written where the verdict goes
