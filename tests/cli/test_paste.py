# SPDX-License-Identifier: MIT
"""Every command that check and fix print for a reader to paste stays the
command it says, whatever a snapshot's kernel command line holds: a token
like clocksource=acpi_pm$(touch${IFS}PWNED) is one quoted word, never code.
Each printed command ("$ ..." lines, in text and in JSON) must split, as a
POSIX shell splits it (shlex), into exactly the intended words; and run by
/bin/sh (grubby and the other tools replaced by recorders, the paths it
writes moved into the test's folder) it must create nothing and pass the
hostile token to grubby byte for byte."""
import json
import os
import shlex
import shutil
import subprocess

import pytest

from conftest import BINARY, FIXTURES

CS_FILE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

# What a parameter value may carry: command substitution, backticks, quotes
# of both kinds, ';', a value the kernel's parser takes with its spaces
# (between double quotes), glob characters, a newline, an ESC sequence and
# UTF-8 (both made '?' where they are read).
HOSTILE = [
    b"acpi_pm$(touch${IFS}PWNED)",
    b"acpi_pm`touch${IFS}PWNED`",
    b"x;touch${IFS}PWNED;#",
    b"x'$(touch${IFS}PWNED)'",
    b"x'\"'\"'$(touch${IFS}PWNED)",
    b'"a b;touch PWNED"',
    b"x|touch${IFS}PWNED&&y",
    b"*&>PWNED",
    b"x\\'\\$(touch${IFS}PWNED)",
    b"x\n$(touch${IFS}PWNED)",
    b"x\x1b]0;t\x07$(touch${IFS}PWNED)",
    b"caf\xc3\xa9$(touch${IFS}PWNED)",
]
OSES = {"rhel": 'ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.2"\n',
        "debian": "ID=debian\nVERSION_ID=12\n",
        "unknown": "ID=plan9\n"}


def seen(raw):
    """The value as the tool reads it: every byte outside printable ASCII
    becomes '?' (util/printable.h)."""
    return "".join(chr(b) if 0x20 <= b < 0x7f else "?" for b in raw)


def tree(tmp_path, os_release, value):
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text(os_release)
    (root / "proc/cmdline").write_bytes(b"console=ttyS0 clocksource=" + value + b"\n")
    return root


def commands(text):
    """The command lines of a report: each "$ " line, without its margin."""
    return [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("$ ")]


def run_pasted(line, tmp_path):
    """line run by /bin/sh in a scratch folder, every program it names
    replaced by a recorder of its words and the system paths it writes
    moved under the folder: the words each program got."""
    work = tmp_path / "paste"
    shutil.rmtree(work, ignore_errors=True)
    (work / "bin").mkdir(parents=True)
    (work / "grub.d").mkdir()
    log = work / "argv.json"
    recorder = ("#!" + shutil.which("python3") + "\nimport json, os, sys\n"
                "with open(%r, 'a') as f: f.write(json.dumps(sys.argv[1:]) + '\\n')\n" % str(log))
    words = shlex.split(line)
    for name in {w for w in words if "/" not in w and w.replace("-", "").replace("_", "").isalnum()}:
        (work / "bin" / name).write_text(recorder)
        (work / "bin" / name).chmod(0o755)
    moved = line.replace(CS_FILE, str(work / "current_clocksource")).replace(
        "/etc/default/grub.d", str(work / "grub.d"))
    assert subprocess.run(["/bin/sh", "-n", "-c", moved]).returncode == 0, line
    p = subprocess.run(["/bin/sh", "-c", moved], cwd=work, env={"PATH": str(work / "bin")},
                       capture_output=True, timeout=30)
    assert not (work / "PWNED").exists(), line
    assert not any(work.glob("*PWNED*")), line
    return [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else [], p


def check_commands(cmds, value, tmp_path):
    want = "clocksource=" + seen(value)
    grubby = [c for c in cmds if c.startswith("grubby ")]
    for c in cmds:
        words = shlex.split(c)
        got, _ = run_pasted(c, tmp_path)
        if words[0] == "grubby":
            assert words == ["grubby", "--update-kernel=ALL", "--remove-args=" + want], c
            assert got == [words[1:]], c
        elif words[0] == "echo":
            assert words[2:] == [">", CS_FILE] or words[2] == ">", c
    return grubby


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("osname", sorted(OSES))
def test_check_commands_paste_as_printed(tmp_path, osname, value):
    root = tree(tmp_path, OSES[osname], value)
    text = subprocess.run([BINARY, "check", "--root", str(root)], capture_output=True, timeout=60)
    assert text.returncode in (0, 1, 2, 3), text.stderr
    out = text.stdout.decode("ascii")
    grubby = check_commands(commands(out), value, tmp_path)
    # The finding that reads clocksource= from the command line asks to
    # remove it: on each family the grubby line is there (Debian and the
    # unknown family name it as the Red Hat family's way).
    assert grubby, out
    doc = json.loads(subprocess.run([BINARY, "check", "--json", "--root", str(root)],
                                    capture_output=True, timeout=60).stdout)
    texts = [t for x in doc["findings"] for t in x["fix"].values() if t]
    json_cmds = [c for t in texts for c in commands(t)]
    assert sorted(set(json_cmds)) == sorted(set(commands(out))) or set(grubby) <= set(json_cmds)
    check_commands(json_cmds, value, tmp_path)


@pytest.mark.parametrize("value", HOSTILE[:6], ids=range(6))
def test_fix_plan_commands_paste_as_printed(tmp_path, value):
    root = tree(tmp_path, OSES["rhel"], value)
    for args in (["fix"], ["fix", "--json"]):
        p = subprocess.run([BINARY, *args, "--root", str(root)], capture_output=True, timeout=60)
        assert p.returncode in (0, 1, 2, 3), p.stderr
        out = p.stdout.decode("ascii")
        if "--json" in args:
            plan = json.loads(out)["plan"]
            out = "\n".join(plan["persist_steps"] or [])
            # fix itself never writes a token it cannot vouch for
            assert all(q["token"] != "clocksource=" + seen(value) for q in plan["params"])
        check_commands(commands(out), value, tmp_path)


def test_a_plain_word_stays_bare(tmp_path):
    """Quoting only where needed: an ordinary parameter reads as it did."""
    root = tree(tmp_path, OSES["rhel"], b"acpi_pm")
    out = subprocess.run([BINARY, "check", "--root", str(root)], capture_output=True, text=True,
                         timeout=60).stdout
    assert "$ grubby --update-kernel=ALL --remove-args=clocksource=acpi_pm\n" in out


def test_a_path_with_blanks_is_one_word(tmp_path):
    """fix's own steps under --root name the tree in a chroot command: a
    folder with blanks and a quote in its name is one word there."""
    root = tree(tmp_path / "a b'c", "ID=debian\nVERSION_ID=12\n", b"acpi_pm")
    out = subprocess.run([BINARY, "fix", "--json", "--root", str(root)], capture_output=True, text=True,
                         timeout=60).stdout
    steps = json.loads(out)["plan"]["persist_steps"]
    chroot = [l.split("chroot ", 1)[1] for l in steps if "chroot " in l]
    mkdir = [l[2:] for l in steps if l.startswith("$ mkdir")]
    assert chroot and mkdir, steps
    assert shlex.split(mkdir[0]) == ["mkdir", "-p", str(root) + "/etc/default/grub.d"]
    for c in chroot:
        assert shlex.split(c)[0] == str(root), c


def test_snapshot_names_its_folder_as_one_word(tmp_path):
    """snapshot's closing hint is a command too."""
    dst = tmp_path / "my snap; $(touch PWNED)"
    out = subprocess.run([BINARY, "snapshot", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), str(dst)],
                         capture_output=True, text=True, timeout=60).stdout
    hint = [l for l in out.splitlines() if l.startswith("diagnose it with: ")]
    assert hint and shlex.split(hint[0].split(": ", 1)[1]) == ["clockdoctor", "check", "--root", str(dst)]
