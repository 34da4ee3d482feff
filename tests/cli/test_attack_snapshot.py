# SPDX-License-Identifier: MIT
"""`snapshot` as an unlucky operator types it: `snapshot --force --root
SNAP /` (DIR and --root swapped in mind) would copy another machine's
/etc/os-release over this one's, and close "/" to every other user.  Run in
a chroot (a private mount namespace with its own /proc), never on this
machine's root."""
import os
import shutil
import subprocess

import pytest

from conftest import BINARY, FIXTURES


def chroot_with_clockdoctor(top):
    """A folder holding the binary and the libraries it loads, an
    /etc/os-release linked as Debian links it, and a snapshot at /snap."""
    libs = subprocess.run(["ldd", BINARY], capture_output=True, text=True, check=True).stdout
    for word in libs.split():
        if word.startswith("/") and os.path.exists(word):
            dest = top / word.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(word, dest)
    shutil.copy(BINARY, top / "clockdoctor")
    (top / "usr/lib").mkdir(parents=True, exist_ok=True)
    (top / "usr/lib/os-release").write_text("ID=debian\n")
    (top / "etc").mkdir()
    (top / "etc/os-release").symlink_to("../usr/lib/os-release")
    (top / "proc").mkdir()
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", top / "snap")
    (top / "snap/etc").mkdir(exist_ok=True)
    (top / "snap/etc/os-release").write_text("ID=another-machine\n")
    os.chmod(top, 0o755)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"),
                    reason="needs root, unshare and chroot")
def test_snapshot_refuses_this_machines_root(tmp_path):
    top = tmp_path / "machine"
    top.mkdir()
    chroot_with_clockdoctor(top)
    script = 'mount -t proc proc "$1/proc" && exec chroot "$1" /clockdoctor snapshot --force --root /snap /'
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(top)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "this machine's root folder" in p.stderr
    assert os.readlink(top / "etc/os-release") == "../usr/lib/os-release"
    assert os.stat(top).st_mode & 0o777 == 0o755
    assert not (top / "dmesg.txt").exists()


def test_force_keeps_the_mode_of_a_folder_in_use(cd, tmp_path):
    """--force into a folder that already holds other things (a shared
    reports folder; /etc typed by mistake): the private files are 0600, but
    the folder's mode, which others rely on, is left as it was."""
    d = tmp_path / "reports"
    d.mkdir()
    d.chmod(0o755)
    (d / "other-report.txt").write_text("someone else's\n")
    r = cd("snapshot", "--force", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), str(d))
    assert r.rc == 0, r.err
    assert os.stat(d / "dmesg.txt").st_mode & 0o777 == 0o600
    assert os.stat(d).st_mode & 0o777 == 0o755
