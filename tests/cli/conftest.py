"""Shared helpers for the command-line tests: run clockdoctor as a user would."""
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
