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


def test_install_library_and_build_the_example_with_pkg_config(tmp_path):
    """libfastclock as a user gets it: header, static and shared library with
    its soname, fastclock.pc, fastclock(3), the example; a program built
    with `pkg-config --cflags --libs fastclock` against the installed tree
    runs and reads the time."""
    dest = tmp_path / "pkg"
    # the plain build, as a user installs it, even when the suite runs under
    # SANITIZE=1 (an ASan library cannot link into a plain program)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SANITIZE")}
    subprocess.run(["make", "-s", "install", "SANITIZE=", "PREFIX=/usr", f"DESTDIR={dest}"], cwd=ROOT, check=True,
                   capture_output=True, timeout=300, env=env)
    usr = dest / "usr"
    assert (usr / "include/fastclock.h").exists()
    assert (usr / "lib/libfastclock.a").exists()
    real = usr / "lib/libfastclock.so.0.1.0"
    assert real.exists()
    assert os.readlink(usr / "lib/libfastclock.so.0") == "libfastclock.so.0.1.0"
    assert os.readlink(usr / "lib/libfastclock.so") == "libfastclock.so.0"
    soname = subprocess.run(["readelf", "-d", str(real)], capture_output=True, text=True).stdout
    assert "Library soname: [libfastclock.so.0]" in soname
    # only the fc_ API is exported from the shared library
    syms = subprocess.run(["nm", "-D", "--defined-only", str(real)], capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in syms.splitlines() if " T " in line}
    assert "fc_now_ns" in exported and "fc_info" in exported
    assert all(s.startswith("fc_") for s in exported), exported
    assert (usr / "share/man/man3/fastclock.3").read_text().startswith(".TH FASTCLOCK 3")
    example = usr / "share/doc/clockdoctor/examples/fastclock-example.c"
    assert example.exists()
    pc = (usr / "lib/pkgconfig/fastclock.pc").read_text()
    assert "libdir=/usr/lib" in pc
    # build the example against the installed tree, as the page says
    env = dict(os.environ, PKG_CONFIG_PATH=str(usr / "lib/pkgconfig"),
               PKG_CONFIG_SYSROOT_DIR=str(dest))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fastclock"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    exe = tmp_path / "example"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(example)] + flags, check=True, capture_output=True)
    out = subprocess.run([str(exe)], env=dict(os.environ, LD_LIBRARY_PATH=str(usr / "lib")),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("source: ")
    assert "UTC" in out.stdout
