# SPDX-License-Identifier: MIT
"""One table of exit statuses for the whole command (clockdoctor(1), EXIT
STATUS), kept by every subcommand: a usage error is 3 (run: 125) with one
line and the --help hint; a report that cannot be written (stdout full or
closed) is 3; `help COMMAND` is COMMAND's help; Ctrl-C kills the commands
that stop unfinished (130 in a shell) and ends the ones that report what
they measured at their usual status.  Nothing here switches a clocksource:
fix and watch work on fake trees, bench does not switch."""
import os
import re
import signal
import subprocess

import pytest

from conftest import BINARY, FIXTURES, interrupted

HPET = str(FIXTURES / "qemu-tcg-smp2-hpet")


@pytest.fixture
def env(tmp_path, fake_sysfs):
    """A fake sysfs on tsc, a kernel log file holding one event, a state
    folder: what fix, watch and bench read instead of this machine's."""
    (tmp_path / "kmsg").write_text("6,1,2000000,-;clocksource: Switched to clocksource tsc\n")
    e = dict(os.environ)
    e.update(fake_sysfs("tsc\n", "tsc hpet \n").env)
    e["CLOCKDOCTOR_KMSG"] = str(tmp_path / "kmsg")
    return e


def traceable():
    if os.geteuid() != 0:
        return False
    return subprocess.run([BINARY, "top", "--json", "0.1", "1"], capture_output=True,
                          timeout=60).returncode == 0


# Each subcommand, run so that it has something to write, quickly.
REPORTS = {
    "check": ["check", "--root", HPET],
    "check --json": ["check", "--json", "--root", HPET],
    "snapshot": None,                      # filled with a fresh folder below
    "bench": ["bench", "-c", "monotonic", "-d", "0.1", "-s"],
    "tsc": ["tsc", "-d", "0.05", "--quick"],
    "fix": ["fix", "--root", HPET],
    "accuracy": ["accuracy", "-d", "0.2", "-t", "1"],
    "watch": ["watch", "--history", "-d", "0.3", "-i", "0.1"],
    "top": ["top", "-d", "0.3", "0.1"],
    "report": ["report", "--root", HPET],
}
COMMANDS = ["check", "snapshot", "bench", "tsc", "top", "fix", "watch", "run", "accuracy", "report"]


def args_of(name, tmp_path):
    if name == "snapshot":
        return ["snapshot", str(tmp_path / "snap")]
    if name == "top" and not traceable():
        pytest.skip("top cannot trace here (not root, or no tracefs)")
    return REPORTS[name]


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_stdout_full_is_3(name, env, tmp_path):
    args = args_of(name, tmp_path)
    with open("/dev/full", "w") as full:
        p = subprocess.run([BINARY, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=120)
    assert p.returncode == 3, (name, p.returncode, p.stderr)
    assert "cannot write" in p.stderr


@pytest.mark.parametrize("name", ["check", "tsc", "fix", "snapshot", "report"])
def test_stdout_closed_is_3(name, env, tmp_path):
    args = args_of(name, tmp_path)
    p = subprocess.run([BINARY, *args], stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == 3, (name, p.returncode, p.stderr)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_written_or_3(name):
    ok = subprocess.run([BINARY, name, "--help"], capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0 and ok.stdout.startswith("usage: clockdoctor " + name)
    # `clockdoctor help COMMAND` is the same text
    assert subprocess.run([BINARY, "help", name], capture_output=True, text=True,
                          timeout=30).stdout == ok.stdout
    with open("/dev/full", "w") as full:
        p = subprocess.run([BINARY, name, "--help"], stdout=full, stderr=subprocess.PIPE,
                           timeout=30)
    assert p.returncode == (125 if name == "run" else 3)


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("bad", ["--bogus", "-Z"])
def test_unknown_option_is_one_line_and_the_hint(name, bad):
    p = subprocess.run([BINARY, name, bad], capture_output=True, text=True, timeout=30)
    assert p.returncode == (125 if name == "run" else 3), p.stderr
    assert p.stdout == ""
    assert p.stderr == (f"clockdoctor {name}: unknown option '{bad}'\n"
                        f"(clockdoctor {name} --help shows the options)\n")


@pytest.mark.parametrize("args, now", [
    (["check", "-p"], "-P (--prometheus)"), (["check", "-n"], "--no-measure"),
    (["bench", "-n", "100"], "--calls"), (["top", "-n", "3"], "--rows"),
    (["fix", "-p"], "--persist"), (["fix", "-t", "hpet"], "--to"), (["tsc", "-q"], "--quick"),
    (["watch", "-P", "/tmp/x.prom"], "--prometheus-file"), (["watch", "-s", "60"], "--syscalls"),
])
def test_old_short_options_name_the_new_one(args, now):
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and p.stdout == ""
    assert f"-{args[1][1]} is {now} now" in p.stderr


def test_missing_value_and_stray_value():
    p = subprocess.run([BINARY, "check", "--root"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and "option --root needs a value" in p.stderr
    p = subprocess.run([BINARY, "check", "--json=yes"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and "option --json takes no value" in p.stderr
    p = subprocess.run([BINARY, "bench", "-d"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and "option -d needs a value" in p.stderr


def test_check_refuses_two_formats():
    p = subprocess.run([BINARY, "check", "--json", "--prometheus", "--root", HPET],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 3 and p.stdout == ""
    assert "--json and --prometheus do not go together" in p.stderr


def test_top_level_usage():
    for args in ([], ["nosuch"], ["help", "nosuch"]):
        p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 3, args
    p = subprocess.run([BINARY, "nosuch"], capture_output=True, text=True, timeout=30)
    assert p.stderr.count("\n") == 1


def test_run_passes_its_programs_status_through():
    assert subprocess.run([BINARY, "run", "-q", "--", "sh", "-c", "exit 7"],
                          timeout=60).returncode == 7
    assert subprocess.run([BINARY, "run", "-q", "--", "/nonexistent/prog"],
                          capture_output=True, timeout=60).returncode == 127
    assert subprocess.run([BINARY, "run"], capture_output=True, timeout=60).returncode == 125


def test_ctrl_c_ends_tsc_with_what_it_measured(env):
    """tsc, as bench and accuracy: Ctrl-C ends the measurement, the report of
    what was measured comes out with the verdict's status, and the shortened
    run's verdict is not saved for the library."""
    rc, out, err = interrupted(["tsc", "-d", "20"], after=1.5, env=env)
    assert rc in (0, 1, 2), err
    assert re.search(r"^  interrupted after \d+\.\d s: ", out, re.M), out
    assert re.search(r"^verdict: (sound|unknown|unsound) \(exit status %d\)$" % rc, out, re.M), out
    assert "the verdict was not saved" in err


def test_ctrl_c_ends_bench_with_its_report(env):
    rc, out, err = interrupted(["bench", "-c", "monotonic", "-d", "20", "-s"], after=1.5, env=env)
    assert rc == 0, err
    assert "CLOCK_MONOTONIC" in out
