# SPDX-License-Identifier: MIT
"""Shared helpers for the command-line tests: run clockdoctor as a user would
(cd, interrupted), build what it reads instead of this machine's (make_root
for a snapshot, fake_sysfs for a clocksource it may switch), and the checks
every command's usage errors and help share (refused, check_help)."""
import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
BINARY = os.environ.get("CLOCKDOCTOR", str(ROOT / "build" / "clockdoctor"))


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)


# `clockdoctor tsc` run as root saves the machine's per-boot TSC verdict,
# which libfastclock and every accelerated program then trust: tests keep
# theirs in a folder of their own unless they choose one (in the
# environment, so that every way of starting the binary inherits it).
STATE_DIR = tempfile.mkdtemp(prefix="clockdoctor-cli-state-")
atexit.register(shutil.rmtree, STATE_DIR, True)
os.environ.setdefault("CLOCKDOCTOR_STATE_DIR", STATE_DIR)


def make_env():
    """The environment for `make` run from a test: the plain build, as a user
    runs it, even when the suite runs under `make SANITIZE=1 cli` (an ASan
    library cannot link into a plain program, nor be preloaded)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SANITIZE")}


def default_signals():
    """preexec_fn for a child the test will signal: the signals' default
    dispositions, whatever the test run inherited (under nohup SIGHUP comes
    in ignored, under a non-interactive `&` SIGINT and SIGQUIT do, and the
    tools rightly leave an ignored signal ignored)."""
    import signal
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def on_a_terminal(args, stream="stdout", env=None, timeout=60):
    """clockdoctor ARGS with its stdout (or stderr) on a pseudo-terminal, the
    other stream piped: the process, and the bytes written to the terminal."""
    import pty
    master, slave = pty.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    try:
        p = subprocess.run([BINARY, *args], timeout=timeout, env=env,
                           **{stream: slave, other: subprocess.PIPE})
        os.close(slave)
        slave = None
        got = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            got += chunk
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    return p, got


def interrupted(args, after=1.0, env=None):
    """clockdoctor ARGS given Ctrl-C (SIGINT) after `after` seconds: its exit
    status, stdout and stderr."""
    import signal
    import time
    p = subprocess.Popen([BINARY, *args], preexec_fn=default_signals, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(after)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    return p.returncode, out, err


def interrupted_json(args, after=1.0):
    """The JSON document clockdoctor ARGS reports when Ctrl-C ends it early:
    exit 0, "interrupted" true."""
    rc, out, err = interrupted(args, after)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["interrupted"] is True
    return doc


def run(*args, timeout=60, env=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    proc = subprocess.run([BINARY, *args], capture_output=True, text=True,
                          timeout=timeout, env=e, errors="replace")
    return Result(proc)


@pytest.fixture
def cd():
    if not os.access(BINARY, os.X_OK):
        pytest.fail(f"{BINARY} is not built: run make first")
    return run


# Arguments every command refuses alike, and what it says: appended to a
# command's own usage cases.
STRAY_ARGS = [(["extra"], "unexpected argument 'extra'"), (["--bogus"], "unknown option '--bogus'")]


def refused(r, words):
    """A usage error: exit 3, the message holding words, nothing on stdout."""
    assert r.rc == 3, r.err
    assert words in r.err
    assert r.out == ""


def check_help(cd, command, names):
    """COMMAND --help: exit 0, each of names in it, its examples, no line of
    80 columns or more; and the main --help names the command.  Returns the
    result, for more checks."""
    r = cd(command, "--help")
    assert r.rc == 0
    for name in names:
        assert name in r.out
    assert "\nexamples:\n" in r.out
    assert max(len(line) for line in r.out.splitlines()) < 80
    assert command in cd("--help").out
    return r


def need_tool(tool, package, what):
    """The path of tool (a name on PATH, or a path).  Missing, it fails the
    test under CI (CI=true) or LAB_REQUIRE=1, and skips loudly otherwise,
    saying what is then not tested."""
    path = tool if os.sep in tool else shutil.which(tool)
    if path and os.access(path, os.X_OK):
        return path
    msg = "%s is not installed (apt-get install %s): %s" % (tool, package, what)
    if os.environ.get("CI") == "true" or os.environ.get("LAB_REQUIRE") == "1":
        pytest.fail(msg, pytrace=False)
    sys.__stderr__.write("\n!!! SKIPPED: %s\n" % msg)
    pytest.skip(msg)


# Where the clocksource files are, under /sys.
CS = "devices/system/clocksource/clocksource0"


def make_root(tmp_path, files=None, current=None, available=None):
    """A snapshot folder: the clocksource files saying current and available
    (each when given), and each relative path of files written with its text
    or bytes."""
    files = dict(files or {})
    for name, text in (("current_clocksource", current), ("available_clocksource", available)):
        if text is not None:
            files[f"sys/{CS}/{name}"] = text
    for rel, data in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return tmp_path


BOOT_ID = "6a1c2b7e-0d4f-4c59-9a53-2f1e8b7c3d10"


def plant_verdict(root, verdict="sound", boot_id=BOOT_ID, of_boot=None):
    """The TSC verdict `clockdoctor tsc` saves for a boot, in a root folder as a
    snapshot carries it (run/clockdoctor/tsc-verdict beside the boot's id):
    the measured evidence that lets a finding advise trusting the TSC."""
    root = pathlib.Path(root)
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random/boot_id").write_text(boot_id + "\n")
    (root / "run/clockdoctor").mkdir(parents=True, exist_ok=True)
    (root / "run/clockdoctor/tsc-verdict").write_text(
        "boot_id=%s\nverdict=%s\ncounter_hz=2893000000\nclocksource=hpet\ntime=1795381234\n"
        % (of_boot or boot_id, verdict))


def live_clocksource():
    """This machine's clocksource, or None where /sys does not say."""
    try:
        return pathlib.Path("/sys", CS, "current_clocksource").read_text().strip()
    except OSError:
        return None


class FakeSysfs:
    """A fake sysfs tree (.sysfs) whose clocksource files (.current,
    .available) hold what the test wrote, a state folder beside it (.state,
    where a switch keeps its .record), and the environment that points
    clockdoctor at both (.env): this machine's clocksource is never touched."""

    def __init__(self, folder, current, available):
        self.sysfs = folder / "sys"
        self.state = folder / "state"
        d = self.sysfs / CS
        d.mkdir(parents=True)
        self.current = d / "current_clocksource"
        self.available = d / "available_clocksource"
        self.current.write_text(current)
        self.available.write_text(available)
        self.record = self.state / "clocksource.restore"
        self.env = {"CLOCKDOCTOR_SYSFS": str(self.sysfs), "CLOCKDOCTOR_STATE_DIR": str(self.state)}

    def now(self):
        """The clocksource the fake tree is on."""
        return self.current.read_text().strip()


@pytest.fixture
def fake_sysfs(tmp_path):
    """Makes a FakeSysfs in the test's folder:
    fake_sysfs("tsc\n", "tsc hpet acpi_pm \n")."""
    return lambda current, available: FakeSysfs(tmp_path, current, available)


def start_elf32_pause(folder):
    """Start a 32-bit (i386) program that only waits (pause() through int 0x80, in a loop);
    skip where the kernel cannot run one.  The caller kills it."""
    import struct
    import time
    if os.uname().machine != "x86_64":
        pytest.skip("an i386 program needs an x86-64 kernel")
    code = bytes([0xB8, 0x1D, 0, 0, 0, 0xCD, 0x80, 0xEB, 0xF7])   # mov eax,29; int 0x80; jmp
    base, hdr = 0x08048000, 52 + 32
    total = hdr + len(code)
    eh = (b"\x7fELF" + bytes([1, 1, 1, 0]) + b"\0" * 8 +
          struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, base + hdr, 52, 0, 0, 52, 32, 1, 40, 0, 0))
    ph = struct.pack("<IIIIIIII", 1, 0, base, base, total, total, 5, 0x1000)
    exe = pathlib.Path(folder) / "pause32"
    exe.write_bytes(eh + ph + code)
    exe.chmod(0o755)
    try:
        p = subprocess.Popen([str(exe)])
    except OSError as e:
        pytest.skip("this kernel does not run i386 programs (%s)" % e)
    time.sleep(0.2)
    if p.poll() is not None:
        pytest.skip("this kernel does not run i386 programs")
    return p


def codes(doc):
    return {f["code"]: f for f in doc["findings"]}


def as_user(args):
    """Run as an unprivileged user: as ourselves, or as nobody through setpriv when root."""
    if os.geteuid() != 0:
        return list(args)
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("root without setpriv cannot drop privileges")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", *args]
