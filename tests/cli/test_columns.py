# SPDX-License-Identifier: MIT
"""Every command's text for people fits in 80 columns, on stdout and stderr,
except what is there to be copied whole: a command ("$ " first, however
indented, and the example lines of --help) and a path alone on its line.
Run on every fixture (check --root), and in short live runs of bench, tsc,
accuracy, watch and run, with every command's --help; top's table on many
clock ids is tests/unit/test_top.c's.  Nothing here changes the machine:
tsc keeps its verdict in a folder of the test's own."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BINARY, FIXTURES, default_signals

WIDTH = 80
COMMANDS = ("check", "snapshot", "bench", "tsc", "top", "fix", "watch", "run", "accuracy")


def copyable(line, in_examples):
    """A line that must stay whole: a command, or a path on its own."""
    s = line.strip()
    return s.startswith("$ ") or in_examples or (s.startswith("/") and " " not in s)


def too_wide(text):
    """The lines of text over WIDTH columns that are not to be copied whole.
    In --help, the lines after "examples:" are commands."""
    wide, in_examples = [], False
    for line in text.splitlines():
        if line.rstrip().endswith("examples:") and not line.startswith(" "):
            in_examples = True
        elif not line.startswith(" "):
            in_examples = False
        if len(line) > WIDTH and not copyable(line, in_examples):
            wide.append("%d: %s" % (len(line), line))
    return wide


def run(args, env=None, timeout=120):
    e = dict(os.environ, TERM="dumb")
    e.pop("NO_COLOR", None)
    e.update(env or {})
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, env=e,
                       errors="replace")
    return p


def assert_fits(p, what):
    wide = too_wide(p.stdout) + too_wide(p.stderr)
    assert not wide, "%s:\n%s" % (what, "\n".join(wide))


@pytest.mark.parametrize("fixture", sorted(d.name for d in FIXTURES.iterdir() if d.is_dir()))
def test_check_on_every_fixture(fixture):
    p = run(["check", "--root", str(FIXTURES / fixture)])
    assert p.returncode in (0, 1, 2, 3), p.stderr
    assert p.stdout, p.stderr
    assert_fits(p, "check --root %s" % fixture)


@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_help(command):
    p = run([command, "--help"] if command else ["--help"])
    assert p.returncode == 0, p.stderr
    assert_fits(p, "%s --help" % command)


def test_bench_short():
    p = run(["bench", "-d", "0.3"])
    assert p.returncode in (0, 1), p.stderr
    assert_fits(p, "bench -d 0.3")


def test_tsc_short(tmp_path):
    p = run(["tsc", "-d", "0.1", "--quick"], env={"CLOCKDOCTOR_STATE_DIR": str(tmp_path / "a-folder-of-the-tests")})
    assert p.returncode in (0, 1, 2), p.stderr
    assert_fits(p, "tsc -d 0.1")


def test_accuracy_short():
    p = run(["accuracy", "-d", "0.3"])
    assert p.returncode in (0, 1, 2), p.stderr
    assert_fits(p, "accuracy -d 0.3")


def test_watch_banner(tmp_path):
    """The banner names the paths it watches (here long ones, a test's own)
    and stays within the width, breaking between words."""
    cs = tmp_path / "a-rather-long-folder-name-for-the-sysfs-of-this-test" / "devices/system/clocksource/clocksource0"
    cs.mkdir(parents=True)
    (cs / "current_clocksource").write_text("tsc\n")
    (cs / "available_clocksource").write_text("tsc hpet acpi_pm\n")
    kmsg = tmp_path / "kmsg"
    kmsg.write_text("")
    env = dict(os.environ, TERM="dumb", CLOCKDOCTOR_SYSFS=str(cs.parents[3]), CLOCKDOCTOR_KMSG=str(kmsg))
    w = subprocess.Popen([BINARY, "watch"], preexec_fn=default_signals, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)
    w.send_signal(signal.SIGTERM)
    out, err = w.communicate(timeout=30)
    assert w.returncode == 0, err
    assert "Watching" in err.split() and "SIGTERM ends." in " ".join(err.split()), err
    wide = too_wide(out) + too_wide(err)
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("env", [{}, {"FASTCLOCK": "off"}, {"CLOCKDOCTOR_PRELOAD": "/nonexistent/libx.so"}])
def test_run_notice(env):
    p = run(["run", "--", "true"], env=env)
    assert p.returncode in (0, 127), p.stderr
    assert p.stderr.startswith("clockdoctor run: "), p.stderr
    assert_fits(p, "run -- true with %s" % env)
