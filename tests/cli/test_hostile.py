# SPDX-License-Identifier: MIT
"""Every string that comes from a machine or a snapshot, made hostile: a
snapshot whose every field holds terminal escapes (OSC title, CSI clear
screen), BEL, other C0 and C1 controls (raw and UTF-8 encoded) and invalid
UTF-8.  In text mode no control byte may reach stdout or stderr; JSON stays
valid JSON (and carries no control byte either once decoded)."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import BINARY, FIXTURES

# OSC window title ended by BEL, CSI clear screen, a C0 (SOH, BS, CR, VT, FF),
# DEL, a raw C1 CSI (0x9b), a UTF-8 encoded C1 CSI (U+009B), invalid UTF-8.
EVIL = (b"\x1b]0;PWNED\x07\x1b[2J\x01\x08\r\x0b\x0c\x7f\x9b31m\xc2\x9b1m"
        b"\xff\xfe\xc3")
CS = "sys/devices/system/clocksource/clocksource0"

# What a terminal may receive: printable ASCII and the newline (and, from a
# few reports, UTF-8 text of our own; none is written by these commands).
CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f-\x9f]|\xc2[\x80-\x9f]")


def hostile_snapshot(root):
    """The hpet guest's snapshot with every field poisoned: the values still
    parse (hpet stays the clocksource name the kernel logged), the strings
    around them carry the attack."""
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    w = lambda rel, data: (root / rel).parent.mkdir(parents=True, exist_ok=True) or \
        (root / rel).write_bytes(data)
    w(f"{CS}/current_clocksource", b"hpet" + EVIL + b"\n")
    w(f"{CS}/available_clocksource", b"hpet acpi_pm" + EVIL + b" tsc\n")
    w("proc/sys/kernel/osrelease", b"6.1.0" + EVIL + b"-56-amd64\n")
    w("proc/cmdline", b"console=ttyS0 " + EVIL + b" clocksource=hpet" + EVIL + b"\n")
    w("proc/uptime", b"12.5" + EVIL + b" 3.0\n")
    w("sys/hypervisor/type", b"xen" + EVIL + b"\n")
    w("sys/class/dmi/id/sys_vendor", b"QEMU" + EVIL + b"\n")
    w("sys/class/dmi/id/product_name", b"Standard PC" + EVIL + b"\n")
    w("etc/os-release", b'ID=debian' + EVIL + b'\nPRETTY_NAME="Debian' + EVIL + b'"\n'
      b'ID_LIKE="debian' + EVIL + b'"\n')
    cpuinfo = (root / "proc/cpuinfo").read_bytes()
    cpuinfo = cpuinfo.replace(b"AuthenticAMD", b"AuthenticAMD" + EVIL)
    cpuinfo = cpuinfo.replace(b"model name\t: QEMU", b"model name\t: QEMU" + EVIL)
    cpuinfo = cpuinfo.replace(b"flags\t\t: fpu", b"flags\t\t: fpu " + EVIL + b" ")
    (root / "proc/cpuinfo").write_bytes(cpuinfo)
    dmesg = (root / "dmesg.txt").read_bytes()
    dmesg = dmesg.replace(b"Linux version 6.1.0-56-amd64", b"Linux version 6.1.0" + EVIL)
    dmesg = dmesg.replace(b"Command line: console=ttyS0", b"Command line: console=ttyS0" + EVIL)
    dmesg += (b"[    2.000000] Hypervisor detected: KVM" + EVIL + b"\n"
              b"[    2.100000] clocksource: Switched to clocksource hpet" + EVIL + b"\n"
              b"[    2.200000] tsc: Marking TSC unstable due to " + EVIL + b"\n"
              b"[    2.300000] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc"
              + EVIL + b"' as unstable because the skew is too large:\n"
              b"[    2.300001] clocksource:   'hpet" + EVIL + b"' wd_nsec: 500 wd_now: 1 wd_last: 0 mask: ffffffff\n"
              b"[    2.400000] tsc: Detected 2596.116 MHz processor" + EVIL + b"\n"
              b"[    2.500000] " + EVIL + b"\n")
    (root / "dmesg.txt").write_bytes(dmesg)
    return root


def run_bytes(*args):
    p = subprocess.run([BINARY, *args], capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def evil_root(tmp_path):
    return hostile_snapshot(tmp_path / "evil")


@pytest.mark.parametrize("args,shown", [(["check"], b"6.1.0?]0;PWNED?"),
                                        (["check", "--color", "never"], b"AuthenticAMD?]0;PWNED?"),
                                        (["fix"], b"clocksource=hpet?]0;PWNED?"),
                                        (["check", "--prometheus"], b"clockdoctor_status 1")])
def test_text_has_no_control_byte(evil_root, args, shown):
    rc, out, err = run_bytes(*args, "--root", str(evil_root))
    assert rc in (0, 1, 2, 3), err
    assert out, "nothing written"
    for name, data in (("stdout", out), ("stderr", err)):
        m = CONTROL.search(data)
        assert m is None, f"{name}: control byte {m.group()!r} near {data[max(0, m.start() - 60):m.end() + 20]!r}"
    # the poison was read, and is shown in a safe form
    assert shown in out


@pytest.mark.parametrize("args", [["check", "--json"], ["fix", "--json"]])
def test_json_stays_json(evil_root, args):
    rc, out, err = run_bytes(*args, "--root", str(evil_root))
    assert rc in (0, 1, 2, 3), err
    doc = json.loads(out.decode("utf-8"))          # strict UTF-8, strict JSON
    text = json.dumps(doc, ensure_ascii=False)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", json.dumps(doc, ensure_ascii=False)
                         .replace("\\n", "").replace("\\t", "")), "a control character in a JSON string"
    assert CONTROL.search(err) is None
    assert text


def test_colour_is_ours_only(evil_root):
    """--color always: the only escapes are the colours, SGR sequences."""
    rc, out, _ = run_bytes("check", "--color", "always", "--root", str(evil_root))
    stripped = re.sub(rb"\x1b\[[0-9;]*m", b"", out)
    assert CONTROL.search(stripped) is None


def test_watch_lines_from_a_hostile_log(tmp_path):
    """watch prints the kernel's lines under each event: a record with
    escapes (any process may write to /dev/kmsg) reaches the terminal safe."""
    d = tmp_path / "sys" / "devices/system/clocksource/clocksource0"
    d.mkdir(parents=True)
    (d / "current_clocksource").write_text("tsc\n")
    (d / "available_clocksource").write_text("tsc hpet \n")
    log = tmp_path / "kmsg"
    log.write_bytes(b"6,1,1000,-;clocksource: Switched to clocksource hpet" + EVIL + b"\n"
                    b"4,2,2000,-;tsc: Marking TSC unstable due to " + EVIL + b"\n")
    env = {"CLOCKDOCTOR_SYSFS": str(tmp_path / "sys"), "CLOCKDOCTOR_KMSG": str(log), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([BINARY, "watch", "--history", "-d", "0.3", "-i", "0.1"], capture_output=True,
                       env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert b"tsc-unstable" in p.stdout and b"?]0;PWNED?" in p.stdout
    for data in (p.stdout, p.stderr):
        assert CONTROL.search(data) is None


HOSTILE_COMM = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None)
libc.prctl(15, b"\x1b]0;PWNED\x07\x1b[2J", 0, 0, 0)      # PR_SET_NAME
ts = (ctypes.c_long * 2)()
sys.stdout.write("ready\n"); sys.stdout.flush()
end = time.time() + float(sys.argv[1])
while time.time() < end:
    libc.syscall(228, 1, ts)                            # clock_gettime, forced
"""


def test_top_shows_a_hostile_process_name_safely():
    """A process may name itself with escapes (prctl PR_SET_NAME): top's
    table shows it safe."""
    import os
    if os.geteuid() != 0 or subprocess.run([BINARY, "top", "0.1", "1"], capture_output=True,
                                           timeout=60).returncode != 0:
        pytest.skip("top cannot trace here (not root, or no tracefs)")
    import sys
    p = subprocess.Popen([sys.executable, "-c", HOSTILE_COMM, "3"], stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"ready\n"
        r = subprocess.run([BINARY, "top", "-p", str(p.pid), "1", "1"], capture_output=True, timeout=60)
    finally:
        p.wait(timeout=30)
    assert r.returncode == 0, r.stderr
    assert b"?]0;PWNED?" in r.stdout
    for data in (r.stdout, r.stderr):
        assert CONTROL.search(data) is None


def test_run_names_a_hostile_interpreter_safely(tmp_path):
    """run says why it cannot accelerate a script, naming its #! interpreter,
    which is read from the script: safe for the terminal."""
    script = tmp_path / "evil.sh"
    script.write_bytes(b"#!/bin/" + EVIL + b"sh\necho hi\n")
    script.chmod(0o755)
    p = subprocess.run([BINARY, "run", str(script)], capture_output=True, timeout=60)
    assert b"?]0;PWNED?" in p.stderr
    assert CONTROL.search(p.stderr) is None
