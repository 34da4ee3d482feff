# SPDX-License-Identifier: MIT
"""The packages as an operator gets them.  `make deb` builds clockdoctor,
libfastclock0 and libfastclock-dev from a copy of the tree; they install
with dpkg into an empty root that holds only what they depend on (the C
library's files and /bin/sh for the maintainer scripts, copied from this
machine), work there at their installed paths (inside a chroot of that root,
with /proc, /sys and /dev bound in a mount namespace of the test's own), and
a purge leaves nothing of theirs behind.  lintian reports no error nor
warning.  `make rpm` builds the same files into RPMs, and rpmlint reports
no error nor warning but those packaging/clockdoctor.rpmlintrc filters.

Run by `make package-test` (part of `make test`), once: the packages are
built without sanitizers whatever the suite's build.  A missing tool fails
under CI (CI=true or LAB_REQUIRE=1) and skips loudly otherwise."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/cli"))
from conftest import make_env as plain_make_env, need_tool  # noqa: E402  (tests/cli's helpers)


def make_env(**extra):
    return dict(plain_make_env(), **extra)


PACKAGES = ("clockdoctor", "libfastclock0", "libfastclock-dev")


def need(tool, package):
    return need_tool(tool, package, "the packages are NOT checked")


def make(*args, timeout=300, **env):
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout, env=make_env(**env))
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


VERSION = subprocess.run(["make", "-s", "--no-print-directory", "version"], cwd=ROOT, capture_output=True,
                         text=True, env=make_env()).stdout.strip()


def as_root(args):
    """args with the privileges dpkg and chroot need: as they are for root,
    else as root of a user namespace of its own."""
    if os.geteuid() == 0:
        return ["unshare", "--mount", "--propagation", "private", *args]
    return ["unshare", "--map-root-user", "--mount", "--propagation", "private", *args]


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    need("dpkg-buildpackage", "dpkg-dev")
    need("dh", "debhelper")
    out = tmp_path_factory.mktemp("deb")
    # the unit tests run in `make test` already: nocheck
    make("deb", "PKG_DIR=%s" % out, timeout=900, DEB_BUILD_OPTIONS="nocheck parallel=2")
    found = {p.name.split("_")[0]: p for p in out.glob("*.deb")}
    for name in PACKAGES:
        assert found.get(name), (name, sorted(found))
        assert found[name].name == "%s_%s_%s.deb" % (
            name, VERSION, subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                          text=True).stdout.strip())
    return out, {n: found[n] for n in PACKAGES}


def test_versions_are_the_makefiles():
    changelog = (ROOT / "debian/changelog").read_text().splitlines()[0]
    assert changelog.startswith("clockdoctor (%s) " % VERSION), changelog
    spec = (ROOT / "packaging/clockdoctor.spec.in").read_text()
    assert re.search(r"^Version:\s+@VERSION@$", spec, re.M)


def libs_of(path):
    """The shared objects path loads, as the loader finds them here."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    libs = set()
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.add(m.group(1))
    return libs


def files_of(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_symlink() or not p.is_dir())


def empty_root(root, binaries):
    """A root with the C library's files (for binaries) and /bin/sh, and an
    empty dpkg database."""
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "bin", "proc", "sys",
              "dev", "tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("")
    (root / "var/lib/dpkg/available").write_text("")
    sh = os.path.realpath("/bin/sh")
    shutil.copy2(sh, root / "bin/sh")
    for lib in set().union(*(libs_of(b) for b in binaries + [sh])):
        dest = root / lib.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), dest)


def dpkg(root, *args):
    """dpkg on root; it runs the maintainer scripts chrooted in it, so /dev
    is bound there too (their >/dev/null would write a file)."""
    return in_root(root, "dpkg --root=%s %s" % (root, " ".join(args)))


def in_root(root, script, env=None):
    """Runs script (sh) on this machine with /proc, /sys and /dev bound into
    root, in a mount namespace that ends with it; script chroots."""
    binds = " && ".join("mount --bind /%s %s/%s" % (d, root, d) for d in ("proc", "sys", "dev"))
    return subprocess.run(as_root(["sh", "-c", "%s && %s" % (binds, script)]), capture_output=True, text=True,
                          timeout=300, env=env)


def chroot(root, *args, env=""):
    return in_root(root, "exec chroot %s /usr/bin/env -i PATH=/usr/bin:/bin %s %s" % (
        root, env, " ".join("'%s'" % a for a in args)))


def test_install_run_purge_in_an_empty_root(debs, tmp_path):
    out, deb = debs
    need("unshare", "util-linux")
    # what the packages' binaries load, to copy into the root (their Depends: libc6)
    unpacked = tmp_path / "unpacked"
    for d in deb.values():
        subprocess.run(["dpkg-deb", "-x", str(d), str(unpacked)], check=True)
    binary = unpacked / "usr/bin/clockdoctor"
    root = tmp_path / "root"
    empty_root(root, [binary, shutil.which("env")])
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(shutil.which("env"), root / "usr/bin/env")
    before = files_of(root)

    p = dpkg(root, "--force-depends", "-i", *[str(deb[n]) for n in PACKAGES])
    assert p.returncode == 0, p.stdout + p.stderr
    q = subprocess.run(["dpkg-query", "--root=%s" % root, "-W", "-f=${Package} ${Version} ${Status}\n"],
                       capture_output=True, text=True)
    for name in PACKAGES:
        assert re.search(r"^%s %s install ok installed$" % (name, re.escape(VERSION)), q.stdout, re.M), q.stdout

    # the command at its installed path
    v = chroot(root, "/usr/bin/clockdoctor", "--version")
    assert v.returncode == 0 and v.stdout.splitlines()[0] == "clockdoctor %s" % VERSION, v.stderr
    # a package's build is no git tree, and its date is the changelog's
    assert "\nrevision: unknown\n" in v.stdout, v.stdout
    c = chroot(root, "/usr/bin/clockdoctor", "check", "--json")
    assert c.returncode in (0, 1, 2, 3), c.stderr
    doc = json.loads(c.stdout)
    assert doc["status"] in ("ok", "warning", "critical", "unknown"), doc
    # this machine's facts, read through the bound /sys, and measured
    here = pathlib.Path("/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().strip()
    assert doc["clocksource"]["current"] == here, doc
    assert doc["version"] == VERSION and doc["measurements"], doc
    # run finds the accelerator where the package put it (no other copy in
    # the root), and the program starts with it and serves its time calls
    arch = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                          text=True).stdout.strip()
    preload = "/usr/lib/%s/clockdoctor/libfastclock-preload.so" % arch
    assert [f for f in files_of(root) if f.endswith("libfastclock-preload.so")] == [preload.lstrip("/")]
    r = chroot(root, "/usr/bin/clockdoctor", "run", "--", "/bin/sh", "-c", "echo $LD_PRELOAD",
               env="FASTCLOCK=force FASTCLOCK_INFO=1")
    assert r.returncode == 0, r.stderr
    assert r.stdout == preload + "\n", r.stderr
    # run's line, then the accelerator's own from inside the program
    assert "clockdoctor run: accelerating /bin/sh" in r.stderr, r.stderr
    assert re.search(r"^fastclock-preload\[\d+\]: serving clock_gettime and gettimeofday from the counter",
                     r.stderr, re.M), r.stderr
    # the library and its development files: the example, built against the
    # root's header, .pc and libfastclock.so, runs there
    example = root / ("usr/share/doc/libfastclock-dev/examples/fastclock-example.c")
    env = dict(os.environ, PKG_CONFIG_PATH=str(root / ("usr/lib/%s/pkgconfig" % arch)),
               PKG_CONFIG_SYSROOT_DIR=str(root))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fastclock"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    exe = root / "tmp/example"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(example)] + flags, check=True, capture_output=True)
    e = chroot(root, "/tmp/example")
    assert e.returncode == 0, e.stderr
    assert e.stdout.startswith("source: "), e.stdout
    exe.unlink()
    # the man pages, the unit and the rules are where an operator looks
    for f in ("usr/share/man/man1/clockdoctor.1.gz", "usr/share/man/man1/clockdoctor-run.1.gz",
              "usr/share/man/man3/fastclock.3.gz", "usr/share/man/man3/fc_now_ns.3.gz",
              "lib/systemd/system/clockdoctor-watch.service", "lib/systemd/system/clockdoctor-tsc.service",
              "usr/share/clockdoctor/prometheus/clockdoctor.rules.yml",
              "usr/share/bash-completion/completions/clockdoctor",
              "usr/share/zsh/vendor-completions/_clockdoctor",
              "usr/share/clockdoctor/grafana/clockdoctor.json",
              "usr/lib/%s/libfastclock.so.0" % arch):
        assert (root / f).exists(), f
    assert "ExecStart=/usr/bin/clockdoctor watch" in (root / "lib/systemd/system/clockdoctor-watch.service").read_text()
    # the units write where Debian's prometheus-node-exporter reads
    assert ("--prometheus-file /var/lib/prometheus/node-exporter/clockdoctor.prom\n"
            in (root / "lib/systemd/system/clockdoctor-check.service").read_text())

    p = dpkg(root, "--purge", *PACKAGES)
    assert p.returncode == 0, p.stdout + p.stderr
    left = [f for f in files_of(root) if not f.startswith("var/lib/dpkg/")]
    assert left == [f for f in before if not f.startswith("var/lib/dpkg/")]
    # dpkg's database keeps nothing of them (info/format is dpkg's own)
    db = [f for f in files_of(root / "var/lib/dpkg/info") if f != "format"]
    assert db == [], db
    q = subprocess.run(["dpkg-query", "--root=%s" % root, "-W", "-f=${Package} ${Status}\n"],
                       capture_output=True, text=True)
    assert "installed" not in q.stdout.replace("not-installed", ""), q.stdout


def test_lintian_finds_no_error_nor_warning(debs):
    out, _ = debs
    tool = need("lintian", "lintian")
    changes = list(out.glob("*.changes"))
    assert len(changes) == 1, changes
    p = subprocess.run([tool, "--pedantic", str(changes[0])], capture_output=True, text=True, timeout=300)
    tags = [line for line in p.stdout.splitlines() if re.match(r"^[EW]: ", line)]
    assert tags == [], p.stdout


@pytest.fixture(scope="module")
def rpm_build(tmp_path_factory):
    """The RPMs `make rpm` builds, by name, and the spec it wrote."""
    need("rpmbuild", "rpm")
    out = tmp_path_factory.mktemp("rpm")
    make("rpm", "PKG_DIR=%s" % out, timeout=900, RPM_FLAGS="--nodeps --nocheck")
    found = {}
    for p in (out / "rpm/RPMS").rglob("*.rpm"):
        name = subprocess.run(["rpm", "-qp", "--qf", "%{NAME}", str(p)], capture_output=True, text=True).stdout
        found[name] = p
    return found, out / "rpm/SPECS/clockdoctor.spec"


def test_rpm_holds_what_make_install_installs(rpm_build):
    found, _ = rpm_build
    rpms = {}
    for name, p in found.items():
        # rpm's own build-id links (/usr/lib/.build-id) for each executable
        # ELF file aside, the files make install writes
        files = subprocess.run(["rpm", "-qlp", str(p)], capture_output=True, text=True).stdout.split()
        rpms[name] = {f for f in files if not f.startswith("/usr/lib/.build-id")}
    assert set(rpms) == {"clockdoctor", "libfastclock", "libfastclock-devel"}, rpms
    libdir = subprocess.run(["rpm", "--eval", "%{_libdir}"], capture_output=True, text=True).stdout.strip()
    assert {"/usr/bin/clockdoctor", libdir + "/clockdoctor/libfastclock-preload.so",
            "/usr/share/man/man1/clockdoctor-check.1", "/usr/lib/systemd/system/clockdoctor-watch.service",
            "/usr/lib/systemd/system/clockdoctor-tsc.service",
            "/usr/share/clockdoctor/prometheus/clockdoctor.rules.yml",
            "/usr/share/clockdoctor/grafana/clockdoctor.json",
            "/usr/share/bash-completion/completions/clockdoctor",
            "/usr/share/zsh/site-functions/_clockdoctor"} <= rpms["clockdoctor"]
    licence = "/usr/share/licenses/libfastclock-%s" % VERSION
    assert {libdir + "/libfastclock.so.0", libdir + "/libfastclock.so." + VERSION,
            licence, licence + "/LICENSE"} == rpms["libfastclock"]
    assert "/usr/share/licenses/clockdoctor-%s/LICENSE" % VERSION in rpms["clockdoctor"]
    assert {"/usr/include/fastclock.h", libdir + "/libfastclock.so", libdir + "/libfastclock.a",
            libdir + "/pkgconfig/fastclock.pc", "/usr/share/man/man3/fastclock.3",
            "/usr/share/man/man3/fc_now_ns.3"} <= rpms["libfastclock-devel"]


def test_rpmlint_finds_no_error_nor_warning(rpm_build):
    """rpmlint on the RPMs and their spec, with packaging/clockdoctor.rpmlintrc:
    each of its filters has its reason there (and in docs/operators.md),
    and a filter that matches nothing is an error itself."""
    found, spec = rpm_build
    tool = need("rpmlint", "rpmlint")
    p = subprocess.run([tool, "-r", str(ROOT / "packaging/clockdoctor.rpmlintrc"), *map(str, found.values()),
                        str(spec)], capture_output=True, text=True, timeout=300)
    tags = [line for line in p.stdout.splitlines() if re.match(r"^\S+ [EW]: ", line)]
    assert tags == [], p.stdout + p.stderr
    assert "3 packages and 1 specfiles checked; 0 errors, 0 warnings" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 0, p.stdout + p.stderr
