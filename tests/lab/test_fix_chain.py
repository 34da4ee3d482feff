# SPDX-License-Identifier: MIT
"""fix's plan, carried into a real boot: `clockdoctor fix --json` in the
two-vCPU guest on hpet says which kernel parameter to add; a second guest is
booted with exactly that parameter on its command line, and there
`clockdoctor check` finds time cheap: on tsc, no clock id a system call, and
once the clock is marked synchronized (ntp-synced stands in for chronyd,
which a guest without a network cannot run) status ok, exit 0.

Two boots one after the other, which a scenario file cannot express (its
boot's command line is fixed before anything runs), so this is a test of
its own beside test_lab.py, with the same helpers, the same skip rule
(LAB_REQUIRE=1 makes a missing tool a failure) and the same failure
message: the step outputs and the whole console."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab  # noqa: E402

SMP = 2


def _tools():
    try:
        return lab.find_tools()
    except lab.Missing as e:
        sys.__stderr__.write("\n!!! LAB SKIPPED (fix chain): %s\n" % e)
        if os.environ.get("LAB_REQUIRE") == "1":
            pytest.fail("LAB_REQUIRE=1 but " + str(e), pytrace=False)
        pytest.skip(str(e))


def _boot(tools, name, steps, append="", programs=None):
    cd = lab.clockdoctor_path()
    if not cd.is_file():
        pytest.fail("clockdoctor binary missing at %s" % cd, pytrace=False)
    steps = [(n, c, int(lim * lab.timeout_scale())) for n, c, lim in steps]
    img = lab.build_initramfs(tools, steps, programs, cd)
    timeout = (lab.BOOT_TIMEOUT + sum(s[2] for s in steps)) * lab.timeout_scale()
    lab.log("booting %s (smp=%d append=%r)" % (name, SMP, append))
    return lab.boot(tools, img, SMP, "max", append, "512M", timeout,
                    run_dir=lab.cache_dir() / "runs" / name, label=name)


def _explain(boot, why):
    out = [why, boot.describe()]
    for n, s in boot.steps.items():
        out.append("----- step %s rc=%d\n%s\n----- stderr\n%s" % (n, s.rc, s.stdout, s.stderr))
    out.append("===== guest console =====\n" + boot.console)
    return "\n".join(out)


def _step(boot, name):
    if name not in boot.steps:
        pytest.fail(_explain(boot, "step %s did not report back" % name), pytrace=False)
    return boot.steps[name]


def test_plan_applied_to_a_boot():
    tools = _tools()
    # fix plans a parameter that trusts the TSC only on a sound verdict of
    # the boot (`clockdoctor tsc` saves it): this guest stands in for a
    # machine whose measurement said so, and the chain checks that the
    # parameter planned then does what it says.
    verdict = ("mkdir -p /run/clockdoctor && printf 'boot_id=%s\\nverdict=sound\\ncounter_hz=0\\n"
               "clocksource=hpet\\ntime=0\\n' \"$(cat /proc/sys/kernel/random/boot_id)\" "
               "> /run/clockdoctor/tsc-verdict")
    first = _boot(tools, "fix-chain-plan", [("verdict", verdict, 10), ("fix", "clockdoctor fix --json", 45)])
    fix = _step(first, "fix")
    try:
        plan = fix.json["plan"]
        assert fix.json["status"] == "critical"
        assert plan["switch"] is None
        added = [p["token"] for p in plan["params"] if p["action"] == "add"]
        assert added and not [p for p in plan["params"] if p["action"] == "remove"]
    except AssertionError as e:
        pytest.fail(_explain(first, "the plan in the hpet guest: %s" % e), pytrace=False)
    append = " ".join(added)
    lab.log("fix planned %r: booting a guest with it" % append)

    second = _boot(tools, "fix-chain-booted", [
        ("cmdline", "cat /proc/cmdline", 10),
        ("wait", "wait-clocksource tsc 20", 30),
        ("check-unsynced", "clockdoctor check --json", 45),
        ("ntp", "ntp-synced", 10),
        ("check", "clockdoctor check --json", 45),
        ("fix", "clockdoctor fix --json", 45),
    ], append=append, programs={"/usr/local/bin/ntp-synced": lab.GUEST_DIR / "ntp-synced.c"})
    try:
        assert _step(second, "cmdline").stdout.split()[-len(added):] == added
        assert _step(second, "wait").stdout == "tsc\n"
        before = _step(second, "check-unsynced")
        assert before.clocksource == "tsc"
        assert before.syscall_ids == set()
        serious = {f["code"] for f in before.findings() if f["severity"] != "info"}
        # The TSC fix is in force and nothing disciplines the clock yet:
        # that, and only that, is worth a warning.
        assert serious <= {"ntp-unsynchronized"}, serious
        assert _step(second, "ntp").rc == 0
        check = _step(second, "check")
        lab.log("check after the plan: %s, %s, CLOCK_MONOTONIC %.0f ns" % (
            check.json["status"], check.clocksource,
            check.json["measurements"]["CLOCK_MONOTONIC"]["ns_per_call"]))
        assert (check.json["status"], check.rc) == ("ok", 0)
        assert check.syscall_ids == set()
        again = _step(second, "fix").json
        assert again["plan"]["nothing_to_do"] is True
        assert again["plan"]["params"] == []
    except (AssertionError, KeyError, ValueError) as e:
        pytest.fail(_explain(second, "the guest booted with %r: %s" % (append, e)), pytrace=False)
