# SPDX-License-Identifier: MIT
"""The QEMU lab as pytest tests: one test per scenarios/*.py file.

Scenarios that want the same guest share one boot, and the boots run in the
background two at a time, started when the first lab test runs (only the
boots the selected tests need: `-k smp2-hpet` boots one guest).  See
README.md.
"""
import copy
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab  # noqa: E402

SCENARIOS = lab.load_scenarios()
BY_NAME = {s.name: s for s in SCENARIOS}
SELF_TEST = "harness-smp2"


def _loud(config, msg):
    """A skip must never pass unnoticed: straight to the terminal's stderr
    (past pytest's capture), and again in the summary (conftest.py)."""
    config.lab_skip_reason = msg
    capman = config.pluginmanager.getplugin("capturemanager")
    banner = "\n" + "!" * 72 + "\n!! LAB SKIPPED: %s\n" % msg + "!" * 72 + "\n"
    if capman is not None:
        with capman.global_and_fixture_disabled():
            sys.stderr.write(banner)
    else:
        sys.stderr.write(banner)


@pytest.fixture(scope="session")
def the_lab(request):
    wanted = set()
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if cs is not None and "scenario" in cs.params:
            wanted.add(cs.params["scenario"].name)
        if item.name.startswith("test_harness_"):
            wanted.add(SELF_TEST)
    # each guest architecture's tools (x86-64, arm64): one missing skips
    # that architecture's scenarios, loudly
    tools, missing = {}, {}
    for arch in sorted({BY_NAME[n].arch for n in wanted}):
        try:
            tools[arch] = lab.find_tools(arch)
        except lab.Missing as e:
            missing[arch] = str(e)
    if missing:
        msg = "; ".join(missing.values())
        _loud(request.config, msg)
        if os.environ.get("LAB_REQUIRE") == "1":
            pytest.fail("LAB_REQUIRE=1 but " + msg, pytrace=False)
        if not tools:
            pytest.skip(msg)
    cds = {arch: lab.clockdoctor_path(arch) for arch in tools}
    run = [BY_NAME[n] for n in sorted(wanted)
           if BY_NAME[n].arch in tools and (cds[BY_NAME[n].arch].is_file() or not BY_NAME[n].needs_clockdoctor)]
    the = lab.Lab(tools, run, clockdoctor={a: cd for a, cd in cds.items() if cd.is_file()}).start()
    the.missing = missing
    yield the
    the.shutdown()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario, the_lab):
    if scenario.arch in the_lab.missing:
        pytest.skip(the_lab.missing[scenario.arch])
    cd = lab.clockdoctor_path(scenario.arch)
    if scenario.needs_clockdoctor and not cd.is_file():
        pytest.fail("clockdoctor binary missing at %s (build it: make %s; or set %s)" % (
            cd, "arm64-build" if scenario.arch == "arm64" else "build/clockdoctor",
            "LAB_ARM64_CLOCKDOCTOR" if scenario.arch == "arm64" else "CLOCKDOCTOR"), pytrace=False)
    try:
        lab.verify(scenario, the_lab.result(scenario))
        return
    except AssertionError as e:
        msg = str(e)
    # The message already holds the failing line, the step outputs and the
    # guest console: pytest's own traceback would only add noise.
    pytest.fail(msg, pytrace=False)


def _bad_check(r):
    assert r["current"].stdout == "no-such-clocksource\n"


def test_harness_reports_failure(the_lab):
    """The lab can fail: a false assertion about a real boot must fail, and
    its message must carry the step outputs, this scenario's part of the
    guest console, and the reason at both ends."""
    good = BY_NAME[SELF_TEST]
    bad = copy.copy(good)
    bad.check = _bad_check
    boot = the_lab.result(good)
    with pytest.raises(AssertionError) as ei:
        lab.verify(bad, boot)
    msg = str(ei.value)
    assert "scenario %s failed" % SELF_TEST in msg
    assert "no-such-clocksource" in msg
    assert "===== guest console" in msg and "=====BEGIN %s/" % SELF_TEST in msg
    assert "=====LAB START" not in msg          # the boot is in console.log, not here
    reason = msg.split("\n\n")[0]
    assert "_bad_check" in reason or "AssertionError" in reason, reason
    assert msg.rstrip().endswith(reason)        # first and last
    # A guest that never reported a step (a crash, a hang) fails too.
    cut = copy.copy(boot)
    cut.steps = {}
    cut.done = False
    with pytest.raises(AssertionError, match="did not finish") as ei:
        lab.verify(good, cut)
    # ...and shows where the console stopped: its last lines
    assert boot.console.rstrip("\n").split("\n")[-1] in str(ei.value)


def test_a_stalled_boot_is_booted_again(monkeypatch, tmp_path):
    """A guest whose kernel never reached the lab's init (killed at its
    timeout with no line of ours) is booted once more; one that started and
    then failed is not (its failure is the scenario's)."""
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path))
    stalled = lab.BootResult([], "Probing EDD (edd=off to disable)... o", "", 130.0, True, -9, tmp_path)
    good = lab.BootResult([], "", "=====LAB START x=====\n=====LAB DONE=====\n", 20.0, False, 0, tmp_path)
    started = lab.BootResult([], "", "=====LAB START x=====\n", 130.0, True, -9, tmp_path)
    assert lab.never_started(stalled) and not lab.never_started(good) and not lab.never_started(started)
    for first, boots_expected in ((stalled, 2), (started, 1), (good, 1)):
        calls = []

        def fake_boot(*a, **k):
            calls.append(1)
            return first if len(calls) == 1 else good
        the = lab.Lab({"qemu": "x", "arch": lab.arm64.HOST_ARCH}, [BY_NAME[SELF_TEST]], jobs=1, cpus=2)
        the.boot_fn = fake_boot
        the.initramfs_fn = lambda *a, **k: tmp_path / "img"
        r = the._run(the.groups[0])
        assert len(calls) == boots_expected
        assert r is (good if boots_expected == 2 else first)


def test_benchmarks_run_only_when_named():
    """A BENCH scenario (bench-servers: minutes of load, figures printed) is
    no test: `make lab` (this file) never boots it; `lab.py run NAME` and
    `make bench-lab` do."""
    assert "bench-servers" not in BY_NAME
    named = {s.name: s for s in lab.load_scenarios(bench=True)}
    assert named["bench-servers"].bench and not named["run-redis"].bench
    assert set(named) - set(BY_NAME) == {s for s, x in named.items() if x.bench}
