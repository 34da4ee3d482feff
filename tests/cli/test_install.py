"""make install puts the command and its man page under DESTDIR/PREFIX, as packagers expect."""
import os
import subprocess

from conftest import ROOT


def test_make_install_destdir(tmp_path):
    dest = tmp_path / "pkg"
    subprocess.run(["make", "-s", "install", "PREFIX=/usr", f"DESTDIR={dest}"], cwd=ROOT, check=True,
                   capture_output=True, timeout=300)
    binary = dest / "usr/bin/clockdoctor"
    man = dest / "usr/share/man/man1/clockdoctor.1"
    assert binary.exists() and os.access(binary, os.X_OK)
    assert man.read_text().startswith(".TH CLOCKDOCTOR 1")
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith("clockdoctor ")
    # nothing outside DESTDIR
    assert not any(p.name == "clockdoctor" for p in (tmp_path).iterdir())
