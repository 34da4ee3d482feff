# SPDX-License-Identifier: MIT
"""watch --exec as a user runs it: the hook runs whatever the size of the
environment watch inherits (600 variables and more), and when watch ends,
nothing the hook started in the background is left running (its shell
leads a process group of its own, ended whole)."""
import os
import time

from test_watch import Watch, fake  # noqa: F401  (the fixture)

EVENT = "4,572,3007005900,-;tsc: Marking TSC unstable due to clocksource watchdog"


def with_marker(marker):
    """The processes with marker among their argv (/proc/PID/cmdline)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if marker.encode() in argv:
                found.append(int(pid))
    return found


def wait_for(cond, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def started(fake, tmp_path, hook, env=None):  # noqa: F811
    """watch with hook, once it follows the log (its textfile written)."""
    w = Watch(["-i", "0.2", "--json", "--prometheus-file", str(fake.prom), "-e", hook], env or fake.env, tmp_path)
    assert wait_for(fake.prom.exists)
    return w


def test_hook_runs_with_600_variables(fake, tmp_path):  # noqa: F811
    out = tmp_path / "hook.out"
    env = dict(fake.env, **{f"CD_FILLER_{i}": "x" * 20 for i in range(600)})
    w = started(fake, tmp_path, f'echo "$CLOCKDOCTOR_EVENT $CD_FILLER_599" > {out}', env)
    try:
        fake.write_log([EVENT])
        _, e = w.event()
        assert e["event"] == "tsc-unstable"
        assert wait_for(lambda: out.exists() and out.read_text().strip())
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert out.read_text() == "tsc-unstable " + "x" * 20 + "\n"
    assert "too large" not in err


def test_nothing_the_hook_started_survives_watch(fake, tmp_path):  # noqa: F811
    marker = f"0.000{os.getpid()}7"   # GNU sleep adds up its arguments
    hook = (f"sleep 300 {marker} & sleep 300 {marker} & (trap '' TERM; sleep 300 {marker}) & wait")
    w = started(fake, tmp_path, hook)
    try:
        fake.write_log([EVENT])
        w.event()
        assert wait_for(lambda: len(with_marker(marker)) == 3)
    finally:
        rc, err = w.stop()
    assert rc == 0, err
    assert with_marker(marker) == []
    assert "still running at the end: ended" in err
