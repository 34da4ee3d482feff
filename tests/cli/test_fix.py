# SPDX-License-Identifier: MIT
"""clockdoctor fix as a user runs it: the plan from every fixture, bad input,
--persist then --undo leaving a scratch tree byte for byte as it was, and
--apply against a fake sysfs tree (CLOCKDOCTOR_SYSFS): this machine's
clocksource, boot configuration and /etc are never touched by a test.
Nothing here asserts a speed: the machine is shared and noisy."""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import BINARY, FIXTURES, STRAY_ARGS, FakeSysfs, as_user, check_help, plant_verdict, refused

GRUB = ('GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\n'
        'GRUB_CMDLINE_LINUX="console=ttyS0 clocksource=acpi_pm"\n')
RECORD = "var/lib/clockdoctor/fix.record"


def tree_state(root):
    """Every path under root with its type, mode and content: what "byte for
    byte as it was" compares."""
    out = {}
    root = pathlib.Path(root)
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        rel = str(p.relative_to(root))
        if stat.S_ISREG(st.st_mode):
            out[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes())
        elif stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", 0, os.readlink(p))
        else:
            out[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
    return out


def scratch(tmp_path, fixture, os_release=None, grub=GRUB, verdict="sound"):
    """A copy of a fixture, with /etc/default/grub and an os-release, and the
    TSC verdict `clockdoctor tsc` saved for its boot (None: none): only a
    sound one lets fix persist a parameter that trusts the TSC."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / fixture, root, symlinks=True)
    if verdict:
        plant_verdict(root, verdict)
    (root / "etc/default").mkdir(parents=True, exist_ok=True)
    if grub is not None:
        (root / "etc/default/grub").write_text(grub)
        os.chmod(root / "etc/default/grub", 0o640)
    if os_release:
        (root / "etc/os-release").write_text(os_release)
    return root


def grub_sees(root):
    """GRUB_CMDLINE_LINUX|GRUB_CMDLINE_LINUX_DEFAULT as grub-mkconfig reads
    them: /etc/default/grub, then each drop-in, by /bin/sh."""
    script = ('. "$1/etc/default/grub"; for f in "$1"/etc/default/grub.d/*.cfg; do '
              '[ -e "$f" ] && . "$f"; done; printf "%s|%s" "$GRUB_CMDLINE_LINUX" '
              '"$GRUB_CMDLINE_LINUX_DEFAULT"')
    return subprocess.run(["sh", "-c", script, "sh", str(root)], capture_output=True,
                          text=True, check=True).stdout


# ---- help and bad input ----

def test_help(cd):
    check_help(cd, "fix", ("--apply", "--persist", "--undo", "--dry-run", "--root DIR", "--to CLOCKSOURCE",
                           "--min-gain PERCENT", "--json", "exit status:"))


@pytest.mark.parametrize("args, words", [
    (["--persist", "--undo"], "do not go together"),
    (["--apply", "--undo"], "--undo takes back --persist only"),
    (["--apply", "--root", "/tmp"], "does not take --root"),
    (["--to", "hpet"], "--to goes with --apply"),
    (["--apply", "--to", "../x"], "not a clocksource name"),
    (["--root", "/nonexistent-cd"], "not a folder"),
    (["-p"], "-p is --persist now"),
    (["-t", "tsc"], "-t is --to now"),
] + [(["--min-gain", v], "--min-gain takes") for v in ("x", "100", "-1")] + STRAY_ARGS)
def test_usage_errors(cd, args, words):
    refused(cd("fix", *args), words)


# ---- the plan (dry run) ----

@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_plan_every_fixture(cd, fixture, tmp_path):
    """A plan for every snapshot, text and JSON, and nothing written into it."""
    before = tree_state(FIXTURES / fixture)
    r = cd("fix", "--root", str(FIXTURES / fixture))
    assert r.rc == 0, r.err
    assert r.out.startswith("PLAN (dry run, nothing changed): check says ")
    j = cd("fix", "--root", str(FIXTURES / fixture), "--json")
    assert j.rc == 0
    doc = j.json()
    assert doc["mode"] == "plan" and doc["dry_run"] is True and doc["exit_status"] == 0
    assert doc["status"] in ("ok", "warning", "critical", "unknown")
    for p in doc["plan"]["params"]:
        assert p["action"] in ("add", "remove") and p["findings"]
    assert tree_state(FIXTURES / fixture) == before


def test_plan_hpet_guest_measures_first(cd):
    """The hpet guest as its snapshot is, with no measured verdict: nothing
    that trusts the TSC is planned; the plan says to measure first."""
    r = cd("fix", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"))
    assert "no kernel command line change is advised" in r.out
    assert "not until the TSC is measured" in r.out
    doc = cd("fix", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "--json").json()
    assert doc["plan"]["params"] == []
    assert any(n.startswith("tsc=reliable (from slow-clocksource): not until the TSC is measured: "
                            "run `clockdoctor tsc`") for n in doc["plan"]["left_out"])


@pytest.mark.parametrize("verdict", ["unsound", "unknown"])
def test_plan_hpet_guest_not_sound(cd, tmp_path, verdict):
    """A verdict of this boot that is not sound plans nothing that trusts the TSC;
    an unsound one forbids it outright."""
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", verdict=verdict)
    doc = cd("fix", "--root", str(root), "--json").json()
    assert doc["plan"]["params"] == []
    c = cd("check", "--root", str(root), "--json").json()
    lasting = "\n".join(f["fix"]["lasting"] or "" for f in c["findings"])
    if verdict == "unsound":
        assert "Do not add tsc=reliable" in lasting and "Only if it says sound" not in lasting
    else:
        assert "Its verdict for this boot was unknown" in lasting


def test_plan_hpet_guest_verdict_of_another_boot(cd, tmp_path):
    """A sound verdict saved on another boot is no evidence for this one."""
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet")
    plant_verdict(root, "sound", of_boot="00000000-0000-0000-0000-000000000000")
    assert cd("fix", "--root", str(root), "--json").json()["plan"]["params"] == []


def test_plan_hpet_guest(cd, tmp_path):
    """The hpet guest, its TSC measured sound on its boot: nothing faster is
    listed; tsc=reliable is the lasting change, with its drop-in, its command
    and its risk; the hypervisor's part is said as such."""
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet")
    r = cd("fix", "--root", str(root))
    assert "nothing to switch: no faster clocksource than hpet is listed" in r.out
    assert "add tsc=reliable to the kernel command line" in r.out
    assert "90-clockdoctor-tsc-reliable.cfg" in r.out
    assert '    GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT tsc=reliable"' in r.out
    assert "risk of tsc=reliable:" in r.out
    assert "only the hypervisor's owner can do" in r.out
    doc = cd("fix", "--root", str(root), "--json").json()
    assert doc["plan"]["switch"] is None
    assert [p["token"] for p in doc["plan"]["params"]] == ["tsc=reliable"]
    assert "slow-clocksource" in doc["plan"]["params"][0]["findings"]
    assert any("TCG" in h["text"] for h in doc["plan"]["hypervisor"])


def test_plan_acpi_pm_forced(cd):
    doc = cd("fix", "--root", str(FIXTURES / "qemu-tcg-smp2-acpi_pm-cmdline"), "--json").json()
    assert doc["plan"]["switch"]["from"] == "acpi_pm"
    assert doc["plan"]["switch"]["to"] == "hpet"
    assert [(p["token"], p["action"]) for p in doc["plan"]["params"]] == \
        [("clocksource=acpi_pm", "remove")]


def test_plan_healthy(cd):
    r = cd("fix", "--root", str(FIXTURES / "qemu-tcg-smp2-tsc-reliable"), "--json")
    assert r.rc == 0
    assert r.json()["plan"]["nothing_to_do"] is True


# ---- --persist and --undo in a scratch tree ----

DEBIAN = 'ID=debian\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'


def test_persist_undo_byte_for_byte(cd, tmp_path):
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", DEBIAN)
    before = tree_state(root)
    assert grub_sees(root) == "console=ttyS0 clocksource=acpi_pm|quiet"

    dry = cd("fix", "--root", str(root), "--persist", "--dry-run")
    assert dry.rc == 0, dry.err
    assert tree_state(root) == before

    r = cd("fix", "--root", str(root), "--persist")
    assert r.rc == 0, r.out + r.err
    assert "persist: done" in r.out
    dropin = root / "etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"
    assert dropin.is_file() and stat.S_IMODE(dropin.stat().st_mode) == 0o644
    assert grub_sees(root) == "console=ttyS0 clocksource=acpi_pm|quiet tsc=reliable"
    record = (root / RECORD).read_text()
    assert record.startswith("clockdoctor fix record 1\n")
    assert "file /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg mode=0644" in record
    assert "add=tsc=reliable" in record
    assert "not run under --root: chroot" in r.out        # update-grub is never run here
    assert (root / "etc/default/grub").read_text() == GRUB  # the operator's file untouched

    # Run again (before the reboot): the change is in place, so it succeeds
    # and changes nothing; the plan knows the drop-in as its own.
    written = tree_state(root)
    again = cd("fix", "--root", str(root), "--persist")
    assert again.rc == 0, again.out + again.err
    assert "persist: in-place" in again.out
    assert "written by fix --persist, unchanged since" in again.out
    assert tree_state(root) == written
    plan = cd("fix", "--root", str(root))
    assert plan.rc == 0
    assert "in place already" in plan.out and "is there already" not in plan.out
    assert "to carry it out" not in plan.out               # nothing left but the reboot
    doc = cd("fix", "--root", str(root), "--json").json()
    assert doc["plan"]["persist_in_place"] is True

    # The drop-in edited since: no longer the recorded change, so it is not
    # taken for done, and a second change is refused until undo.
    dropin.write_text(dropin.read_text() + "# edited\n")
    edited = cd("fix", "--root", str(root), "--persist")
    assert edited.rc == 3
    assert "run fix --undo first" in edited.out
    dropin.write_text(dropin.read_text().replace("# edited\n", ""))

    u = cd("fix", "--root", str(root), "--undo")
    assert u.rc == 0, u.out + u.err
    assert "undo: done" in u.out
    assert tree_state(root) == before
    u2 = cd("fix", "--root", str(root), "--undo", "--json")
    assert u2.rc == 0
    assert u2.json()["undo"]["result"] == "nothing"
    assert tree_state(root) == before


def test_persist_remove_parameter(cd, tmp_path):
    """clocksource=acpi_pm forced: a drop-in that takes it off GRUB's command
    line, and undo puts the tree back."""
    root = scratch(tmp_path, "qemu-tcg-smp2-acpi_pm-cmdline", DEBIAN)
    before = tree_state(root)
    r = cd("fix", "--root", str(root), "--persist", "--json")
    assert r.rc == 0, r.out
    assert r.json()["persist"]["result"] == "done"
    assert grub_sees(root) == "console=ttyS0|quiet"
    assert cd("fix", "--root", str(root), "--undo").rc == 0
    assert tree_state(root) == before


def test_persist_keeps_a_foreign_file(cd, tmp_path):
    """A drop-in of that name that fix did not write is kept aside and put
    back by undo, contents and mode."""
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", DEBIAN)
    (root / "etc/default/grub.d").mkdir()
    mine = root / "etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"
    mine.write_text("# the operator's own\n")
    os.chmod(mine, 0o600)
    before = tree_state(root)
    r = cd("fix", "--root", str(root), "--persist")
    assert r.rc == 0, r.out
    assert (root / "etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg.clockdoctor-backup").read_text() \
        == "# the operator's own\n"
    assert cd("fix", "--root", str(root), "--undo").rc == 0
    assert tree_state(root) == before


def test_undo_refuses_a_forged_record(cd, tmp_path):
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", DEBIAN)
    (root / "var/lib/clockdoctor").mkdir(parents=True)
    (root / RECORD).write_text("clockdoctor fix record 1\ncreated 1\nfamily debian\n"
                               "file /../../etc/passwd mode=0644 size=1 fnv=0123456789abcdef add=x\n")
    before = tree_state(root)
    r = cd("fix", "--root", str(root), "--undo")
    assert r.rc == 2
    assert "is not one fix wrote" in r.out
    assert tree_state(root) == before


def test_persist_red_hat_prints_grubby(cd, tmp_path):
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", 'ID="rhel"\nID_LIKE="fedora"\n', grub=None)
    before = tree_state(root)
    r = cd("fix", "--root", str(root), "--persist")
    assert r.rc == 0, r.out
    assert "$ grubby --update-kernel=ALL --args=tsc=reliable" in r.out
    assert "is not run" in r.out
    assert tree_state(root) == before


def test_persist_unsupported_family(cd, tmp_path):
    root = scratch(tmp_path, "qemu-tcg-smp2-hpet", 'ID="opensuse-leap"\nID_LIKE="suse"\n')
    before = tree_state(root)
    r = cd("fix", "--root", str(root), "--persist")
    assert r.rc == 3
    assert "by hand" in r.out
    assert tree_state(root) == before


def test_persist_and_undo_need_root():
    for args in (["fix", "--persist"], ["fix", "--undo"]):
        p = subprocess.run(as_user([BINARY, *args]), capture_output=True, text=True, timeout=60)
        assert p.returncode == 3, p.stderr
        assert "needs root" in p.stderr


# ---- --apply against a fake sysfs tree ----

@pytest.fixture
def fake(fake_sysfs):
    """A fake sysfs on acpi_pm with hpet listed, and a state folder."""
    return fake_sysfs("acpi_pm\n", "hpet acpi_pm \n")


def test_apply_not_cheaper_switches_back(cd, fake):
    """The fake tree's clocksources are this machine's one clock: the switch
    cannot make a call 50% cheaper, so it is measured, undone and said."""
    r = cd("fix", "--apply", "--min-gain", "50", "--json", env=fake.env)
    assert r.rc == 1, r.out + r.err
    a = r.json()["apply"]
    assert (a["outcome"], a["from"], a["to"], a["seen"], a["now"]) == \
        ("not-cheaper", "acpi_pm", "hpet", "hpet", "acpi_pm")
    assert a["before"]["ns_per_call"] > 0 and a["after"]["ns_per_call"] > 0
    assert "switched back to acpi_pm" in a["message"]
    assert fake.now() == "acpi_pm"
    assert not fake.record.exists()


def test_apply_kernel_goes_back(cd, fake):
    """The kernel leaves the new clocksource while it is measured (as its
    watchdog does with a TSC it rejects): played by a thread that puts
    acpi_pm back 50 ms after hpet appears.  fix must see it, say so, and
    leave acpi_pm written explicitly."""
    stop = threading.Event()

    def kernel():
        while not stop.is_set():
            if fake.now() == "hpet":
                time.sleep(0.05)
                fake.current.write_text("acpi_pm\n")
            time.sleep(0.005)

    t = threading.Thread(target=kernel, daemon=True)
    t.start()
    try:
        r = cd("fix", "--apply", "--json", env=fake.env)
    finally:
        stop.set()
        t.join()
    assert r.rc == 1, r.out + r.err
    a = r.json()["apply"]
    assert a["outcome"] == "refused"
    assert a["seen"] == "acpi_pm"
    assert "did not stay on hpet" in a["message"]
    assert fake.now() == "acpi_pm" and not fake.record.exists()


def test_apply_dry_run_and_bad_target(cd, fake):
    r = cd("fix", "--apply", "--dry-run", env=fake.env)
    assert r.rc == 0, r.err
    assert "would switch from acpi_pm to hpet" in r.out
    assert fake.now() == "acpi_pm" and not fake.record.exists()
    r = cd("fix", "--apply", "--to", "tsc", env=fake.env)
    assert r.rc == 3
    assert "--to tsc: not an available clocksource (available: hpet acpi_pm)" in r.err
    assert fake.now() == "acpi_pm"


def test_apply_recovers_an_old_record_first(cd, fake):
    """A record left by a run killed with SIGKILL: put right before anything
    else, as bench does."""
    gone = subprocess.Popen(["true"])
    gone.wait()                         # its pid is free: the run that wrote the record is over
    fake.record.parent.mkdir(mode=0o700)
    fake.record.write_text("clockdoctor clocksource record 1\noriginal acpi_pm\npid %d\n"
                           "comm clockdoctor\n" % gone.pid)
    fake.current.write_text("hpet\n")
    r = cd("fix", "--apply", "--to", "acpi_pm", "--min-gain", "99", env=fake.env)
    assert "restored clocksource acpi_pm" in r.err
    assert r.rc == 0, r.out + r.err
    assert "nothing switched: the clocksource is acpi_pm already" in r.out
    assert not fake.record.exists()
    assert fake.now() == "acpi_pm"


def test_apply_needs_root(fake):
    """As an ordinary user, on a fake tree owned by root: refused before
    anything is measured or written."""
    base = tempfile.mkdtemp(prefix="cd-fix-")
    try:
        os.chmod(base, 0o755)
        tree = FakeSysfs(pathlib.Path(base), "acpi_pm\n", "hpet acpi_pm\n")
        for p in (base, base + "/sys", base + "/sys/devices", base + "/sys/devices/system",
                  base + "/sys/" + "devices/system/clocksource", str(tree.current.parent)):
            os.chmod(p, 0o755)
        env = dict(os.environ, CLOCKDOCTOR_SYSFS=base + "/sys", CLOCKDOCTOR_STATE_DIR=base + "/st")
        p = subprocess.run(as_user([BINARY, "fix", "--apply"]), capture_output=True, text=True,
                           timeout=60, env=env)
        if os.geteuid() == 0:
            assert p.returncode == 3, p.stdout + p.stderr
            assert "needs root" in p.stderr
        assert tree.current.read_text() == "acpi_pm\n"
        assert not os.path.exists(base + "/st")
    finally:
        shutil.rmtree(base)


def test_plan_live_json(cd):
    """The live plan (this machine is only read): valid JSON, exit 0."""
    r = cd("fix", "--json")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["mode"] == "plan"
