# SPDX-License-Identifier: MIT
"""make install puts everything under DESTDIR at the install's paths, as
packagers expect, and make uninstall takes exactly that back."""
import os
import re
import shutil
import subprocess

from conftest import ROOT, make_env

SUBCOMMANDS = ("check", "snapshot", "bench", "tsc", "top", "fix", "watch", "run", "accuracy")


def uncommented(man):
    """A man page less its leading comment lines (the SPDX line)."""
    return "".join(l for l in man.splitlines(keepends=True) if not l.startswith('.\\"'))


def make(*args, timeout=300):
    return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=ROOT, check=True,
                          capture_output=True, text=True, timeout=timeout, env=make_env())


def files_under(d):
    """Every file and symlink under d, relative (folders left out)."""
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_symlink() or not p.is_dir())


def installed(tmp_path, *args):
    dest = tmp_path / "pkg"
    make("install", "SANITIZE=", "PREFIX=/usr", "DESTDIR=%s" % dest, *args)
    return dest


def version_fields(binary):
    """clockdoctor --version: its first line, and the "key: value" lines after."""
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    first, *rest = out.stdout.splitlines()
    return first, dict(l.split(": ", 1) for l in rest)


def test_version_is_the_makefiles():
    """The first line is the version alone, for scripts; then the build's
    revision (git describe in a git tree), date (SOURCE_DATE_EPOCH's when set,
    for a reproducible build), compiler and the features compiled in."""
    version = make("version").stdout.strip()
    assert version.count(".") == 2, version
    binary = ROOT / "build/clockdoctor"
    try:
        make("SANITIZE=", "build/clockdoctor", "SOURCE_DATE_EPOCH=%d" % (86400 * 365))
        first, fields = version_fields(binary)
        assert first == "clockdoctor %s" % version
        assert fields["built"] == "1971-01-01"
    finally:
        make("SANITIZE=", "build/clockdoctor")  # today's date again
    first, fields = version_fields(binary)
    assert first == "clockdoctor %s" % version
    assert set(fields) == {"revision", "built", "compiler", "features"}, fields
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", fields["built"])
    describe = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                              capture_output=True, text=True)
    if describe.returncode == 0 and (ROOT / ".git").exists():
        assert fields["revision"] == describe.stdout.strip()
    else:
        assert fields["revision"] == "unknown"
    assert re.match(r"(gcc|clang) \d", fields["compiler"]), fields["compiler"]
    assert re.search(r"\bcounter=(tsc|cntvct_el0|none)\b", fields["features"]), fields["features"]


def test_make_install_destdir(tmp_path):
    dest = installed(tmp_path)
    version = make("version").stdout.strip()
    usr = dest / "usr"
    binary = usr / "bin/clockdoctor"
    assert binary.exists() and os.access(binary, os.X_OK)
    assert version_fields(binary)[0] == "clockdoctor %s" % version
    assert (usr / "lib/libfastclock-preload.so").exists()
    assert (usr / "lib/systemd/system/clockdoctor-watch.service").exists()
    assert (usr / "lib/systemd/system/clockdoctor-tsc.service").exists()
    assert (usr / "share/clockdoctor/prometheus/clockdoctor.rules.yml").exists()
    assert (usr / "share/clockdoctor/grafana/clockdoctor.json").exists()
    # one man page a subcommand, as git and perf have, each with the version
    man1 = usr / "share/man/man1"
    for page in ["clockdoctor.1"] + ["clockdoctor-%s.1" % s for s in SUBCOMMANDS]:
        text = (man1 / page).read_text()
        assert uncommented(text).startswith(".TH CLOCKDOCTOR"), page
        assert '"clockdoctor %s"' % version in uncommented(text).splitlines()[0], page
    # nothing installed is a template: no @NAME@, no make variable $(NAME)
    for f in files_under(dest):
        p = dest / f
        if p.is_symlink() or f.endswith((".a", ".so")) or ".so." in f or f.endswith("bin/clockdoctor"):
            continue
        text = p.read_text()
        assert not re.search(r"\$\([A-Z_]+\)|@[A-Z_]+@", text), f
    # the accelerator's path as installed, in the page that names it
    assert "/usr/lib/libfastclock-preload.so" in (man1 / "clockdoctor-run.1").read_text().replace("\\-", "-")
    # shell completion where bash-completion and zsh look
    assert (dest / "usr/share/bash-completion/completions/clockdoctor").is_file()
    assert (dest / "usr/share/zsh/site-functions/_clockdoctor").is_file()
    # nothing outside DESTDIR
    assert not any(p.name == "clockdoctor" for p in (tmp_path).iterdir())


def test_uninstall_removes_exactly_what_install_wrote(tmp_path):
    dest = tmp_path / "pkg"
    # a file of someone else's in a folder install shares: it stays
    (dest / "usr/bin").mkdir(parents=True)
    (dest / "usr/bin/other").write_text("x")
    before = files_under(dest)
    make("install", "SANITIZE=", "PREFIX=/usr", "DESTDIR=%s" % dest)
    assert len(files_under(dest)) > 30
    make("uninstall", "SANITIZE=", "PREFIX=/usr", "DESTDIR=%s" % dest)
    assert files_under(dest) == before
    # and the folders of this project's own are gone
    assert not (dest / "usr/share/clockdoctor").exists()
    assert not (dest / "usr/share/doc/clockdoctor").exists()


def test_man_finds_the_library_functions(tmp_path):
    """`man fc_now_ns` finds fastclock(3): every exported fc_ function has a
    page, a .so link to it."""
    dest = installed(tmp_path)
    man3 = dest / "usr/share/man/man3"
    real = dest / ("usr/lib/libfastclock.so.%s" % make("version").stdout.strip())
    syms = subprocess.run(["nm", "-D", "--defined-only", str(real)], capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in syms.splitlines() if " T " in line}
    assert len(exported) >= 10
    for f in exported:
        assert (man3 / (f + ".3")).read_text() == ".so man3/fastclock.3\n", f
    if shutil.which("man"):
        env = dict(os.environ, MANPATH=str(dest / "usr/share/man"), MANWIDTH="80")
        p = subprocess.run(["man", "-P", "cat", "fc_now_ns"], capture_output=True, text=True, env=env,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        assert "FASTCLOCK(3)" in p.stdout and "fc_now_ns" in p.stdout


def test_installed_units_verify(tmp_path):
    """Each unit as installed names the installed command and passes
    systemd-analyze verify (skipped loudly without it, failed under CI)."""
    from test_contrib import UNITS, verify
    dest = installed(tmp_path)
    unitdir = "/usr/lib/systemd/system"
    assert sorted(os.listdir(dest / unitdir.lstrip("/"))) == UNITS
    units = {name: (dest / unitdir.lstrip("/") / name).read_text() for name in UNITS}
    for name, text in units.items():
        if name.endswith(".service"):
            assert "ExecStart=/usr/bin/clockdoctor " in text, name
        rc, out = verify(tmp_path / name, text, bindir="/usr/bin", unitdir=unitdir,
                         mandir=dest / "usr/share/man", name=name, others=units)
        assert (rc, out) == (0, ""), name


def test_run_finds_the_accelerator_in_the_installed_preloaddir(tmp_path):
    """The command compiles in where `make install` puts the accelerator:
    a command copied alone elsewhere still finds it there (a build of the
    test's own, so that the tree's build keeps its paths)."""
    prefix = tmp_path / "prefix"
    make("install", "SANITIZE=", "B=%s" % (tmp_path / "b"), "PREFIX=%s" % prefix, timeout=600)
    lib = prefix / "lib/libfastclock-preload.so"
    assert lib.exists()
    alone = tmp_path / "elsewhere" / "clockdoctor"
    alone.parent.mkdir()
    shutil.copy2(prefix / "bin/clockdoctor", alone)
    env = dict(os.environ, FASTCLOCK="force")
    env.pop("CLOCKDOCTOR_PRELOAD", None)
    p = subprocess.run([str(alone), "run", "--", "sh", "-c", "echo $LD_PRELOAD"], capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "%s\n" % os.path.realpath(lib), p.stderr


def test_install_library_and_build_the_example_with_pkg_config(tmp_path):
    """libfastclock as a user gets it: header, static and shared library with
    its soname, fastclock.pc, fastclock(3), the example; a program built
    with `pkg-config --cflags --libs fastclock` against the installed tree
    runs and reads the time."""
    dest = installed(tmp_path)
    version = make("version").stdout.strip()
    usr = dest / "usr"
    assert (usr / "include/fastclock.h").exists()
    assert (usr / "lib/libfastclock.a").exists()
    real = usr / ("lib/libfastclock.so.%s" % version)
    assert real.exists()
    assert os.readlink(usr / "lib/libfastclock.so.0") == "libfastclock.so.%s" % version
    assert os.readlink(usr / "lib/libfastclock.so") == "libfastclock.so.0"
    soname = subprocess.run(["readelf", "-d", str(real)], capture_output=True, text=True).stdout
    assert "Library soname: [libfastclock.so.0]" in soname
    # only the fc_ API is exported from the shared library
    syms = subprocess.run(["nm", "-D", "--defined-only", str(real)], capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in syms.splitlines() if " T " in line}
    assert "fc_now_ns" in exported and "fc_info" in exported
    assert all(s.startswith("fc_") for s in exported), exported
    assert uncommented((usr / "share/man/man3/fastclock.3").read_text()).startswith(".TH FASTCLOCK 3")
    example = usr / "share/doc/clockdoctor/examples/fastclock-example.c"
    assert (usr / "share/doc/clockdoctor/findings.md").exists()
    assert "share/doc/clockdoctor/examples/fastclock-example.c" in \
        (usr / "share/man/man3/fastclock.3").read_text()
    assert example.exists()
    pc = (usr / "lib/pkgconfig/fastclock.pc").read_text()
    assert "libdir=/usr/lib\n" in pc and "includedir=/usr/include\n" in pc
    assert "Version: %s\n" % version in pc
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
