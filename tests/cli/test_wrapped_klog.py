# SPDX-License-Identifier: MIT
"""A kernel log passed on by mail or a forum, its long lines wrapped (at a blank or
inside a word), quoted ("> ") or quoted-printable: check reads the kernel's own numbers
from it and says the same as from the log itself.  And the forged case stays quiet: a
device's text that a wrap leaves unfinished is never joined into a kernel message."""
import re
import shutil

import pytest

from conftest import FIXTURES

# Real logs whose watchdog, read-back, delta, warp or reason lines are long.
CASES = [
    "laptop-framework16-zen4-journal-watchdog-skew-509us",
    "baremetal-amd-debian12-6.1-watchdog-hpet-at-boot",
    "kvm-unraid-openwrt-5.15-readback-delay-benign",
    "xen-pv-qubes-r3.1-watchdog-tsc-backwards-on-xen",
    "kvm-rhel6-kvm-clock-old-watchdog",
    "laptop-core2-ubuntu804-i386-2.6.24-warp-1.8s-hpet",
    "netbook-atom-n450-2.6.38-intel-idle-tsc-halts-deeper-than-c2",
]


def wrap(text, width, fold, quote=""):
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            cut, skip = width, 0
            if not fold and line.rfind(" ", 1, width + 1) > 0:
                cut, skip = line.rfind(" ", 1, width + 1), 1
            out.append(quote + line[:cut])
            line = line[cut + skip:]
        out.append(quote + line)
    return "\n".join(out)


def quoted_printable(text):
    out = []
    for line in text.split("\n"):
        enc = line.replace("=", "=3D")
        while len(enc) > 75:
            cut = 75
            while enc[cut - 2:cut].find("=") >= 0 and enc[cut - 3] != "=":  # never split "=XX"
                cut -= 1
            out.append(enc[:cut] + "=")
            enc = enc[cut:]
        out.append(enc)
    return "\n".join(out)


def said(doc):
    """What check says, blanks made one (a wrap may eat one of two)."""
    text = [doc["status"]]
    for f in doc["findings"]:
        text += [f["code"], f["severity"], f["title"], *f["evidence"]]
    return [re.sub(r" +", " ", t) for t in text]


def snapshot(tmp_path, name, text):
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / name, root)
    (root / "dmesg.txt").write_text(text)
    return root


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("how", ["wrapped-72-quoted", "folded-60", "folded-80", "quoted-printable"])
def test_wrapped_log_says_the_same(cd, tmp_path, name, how):
    text = (FIXTURES / name / "dmesg.txt").read_text()
    plain = cd("check", "--json", "--root", str(FIXTURES / name)).json()
    if how == "quoted-printable":
        changed = quoted_printable(text)
    else:
        width = int(how.split("-")[1])
        changed = wrap(text, width, how.startswith("folded"), "> " if how.endswith("quoted") else "")
    assert changed != text
    doc = cd("check", "--json", "--root", str(snapshot(tmp_path, name, changed))).json()
    assert said(doc) == said(plain)


READBACK = ("[ 4114.123456] clocksource: timekeeping watchdog on CPU1: wd-tsc-wd excessive read-back delay of\n"
            "246001ns vs. limit of 125000ns, wd-wd read-back delay only 27ns, attempt 3, marking\n"
            "tsc unstable.\n"
            "[ 4114.123460] tsc: Marking TSC unstable due to clocksource watchdog\n"
            "[ 4114.200000] clocksource: Switched to clocksource hpet\n")


def test_readback_numbers_from_a_cut_line(cd, tmp_path):
    """The issue's own case: the read-back line cut after "delay of"."""
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "vmware-tsc-hypervisor-reliable", root)
    (root / "dmesg.txt").write_text(READBACK)
    doc = cd("check", "--json", "--root", str(root)).json()
    text = "\n".join(said(doc))
    assert "246001 ns against a limit of 125000 ns" in text
    assert "0 ns against a limit of 0 ns" not in text


def test_forged_text_is_never_joined(cd, tmp_path):
    """A device's text cut where the kernel's reason would be: no finding."""
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "vmware-tsc-hypervisor-reliable", root)
    with open(root / "dmesg.txt", "a") as f:
        f.write("[  120.5] usb 1-1: Product: tsc: Marking TSC unstable due to clocksource\n"
                "watchdog\n"
                "[  120.6] usb 1-1: Manufacturer: clocksource: timekeeping watchdog on CPU1: wd-tsc-wd\n"
                "excessive read-back delay of 1ns vs. limit of 1ns, wd-wd read-back delay only 1ns,\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    assert doc["status"] == "ok", doc["findings"]
