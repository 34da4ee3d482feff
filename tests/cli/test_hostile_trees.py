# SPDX-License-Identifier: MIT
"""Trees that try to lead clockdoctor out of the root it was given.

A seeded generator makes many trees from copies of the fixture snapshots
and plants in each: links (absolute and relative, `..` chains) to a secret
file beside the tree and to devices, FIFOs, folders where files belong,
huge sparse and binary files, loops of links.  `check --root` (text and
JSON), `snapshot --root` and `snapshot --redact --root` run over each, half
of them with openat2 and half with the walk that replaces it
(CLOCKDOCTOR_BENEATH_WALK=1): the secret never appears in any output or
written file, nothing is written outside the destination, every run ends
within its timeout with an exit status the command documents.

Then one test for each way out that was found: a snapshot folder of
another user's or with links planted in it, proc/cmdline linked to
/etc/shadow, a relative link out from current_clocksource, a private file
copied by --redact, the kernel log's mode, an over-long --root."""
import json
import os
import pathlib
import random
import shutil
import stat
import subprocess

import pytest

from conftest import BINARY, CS, FIXTURES, refused

SEED = 20
TREES = 64
TIMEOUT = 30

# Every path the commands read under a root.
READ_PATHS = [
    f"sys/{CS}/current_clocksource", f"sys/{CS}/available_clocksource",
    "proc/cpuinfo", "proc/cmdline", "proc/uptime", "proc/sys/kernel/osrelease",
    "proc/sys/kernel/arch", "proc/sys/kernel/hostname", "proc/sys/kernel/domainname",
    "sys/hypervisor/type", "sys/class/dmi/id/sys_vendor", "sys/class/dmi/id/product_name",
    "etc/os-release", "usr/lib/os-release", "etc/lsb-release", "etc/redhat-release",
    "etc/SuSE-release", "etc/debian_version", "etc/hostname",
    "cpuid.txt", "adjtimex.txt", "dmesg.txt",
]
# Folders on those paths, for a link or a loop in place of one.
READ_DIRS = sorted({os.path.dirname(p) for p in READ_PATHS if "/" in p} |
                   {p.split("/")[0] for p in READ_PATHS if "/" in p})

EXIT_CHECK = {0, 1, 2, 3}
EXIT_SNAPSHOT = {0, 2, 3}


def secret_folder(base, token):
    """Files outside every tree, each of which a leak would show: shaped as
    the files the commands parse, so that a followed link would be read
    and reported, not ignored."""
    d = base / "secret"
    d.mkdir()
    texts = {
        "secret": f"{token}\n",
        "current_clocksource": f"{token}\n",
        "cmdline": f"clocksource={token} {token}\n",
        "os-release": f'ID={token}\nPRETTY_NAME="{token}"\n',
        "osrelease": f"6.1.0-{token}\n",
        "dmesg.txt": f"[    0.000000] Linux version 6.1.0-{token}\n"
                     f"[    0.000000] Command line: {token}\n"
                     f"[    1.000000] clocksource: Switched to clocksource {token}\n",
        "cpuinfo": f"processor\t: 0\nvendor_id\t: {token}\nmodel name\t: {token}\nflags\t\t: tsc\n",
    }
    for name, text in texts.items():
        (d / name).write_text(text)
        (d / name).chmod(0o640)
    return d


def fixture_names():
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


FILE_KINDS = ["abs", "rel", "dev", "devrel", "fifo", "dir", "huge", "binary", "loop", "dotdot", "secretdir"]
DIR_KINDS = ["dirlink", "selfdir"]


def through_link(tree, d):
    """Whether a folder above d (within tree) is a link: a test writing
    there would itself go where the link leads."""
    while d != tree:
        if d.is_symlink():
            return True
        d = d.parent
    return False


def clear(p):
    """Nothing at p (whatever was there removed, never followed), and the
    folders above it made."""
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.is_symlink() or p.is_file() or p.is_fifo():
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)


def plant(rng, tree, secret, depth_out, kind):
    """One hostile change of that kind at a random path of tree; returns
    what it was."""
    rel = rng.choice(READ_PATHS)
    if kind in DIR_KINDS:
        d = tree / rng.choice(READ_DIRS)
        if through_link(tree, d.parent):
            return "(none)"
    elif through_link(tree, (tree / rel).parent):
        return "(none)"
    p = tree / rel
    if kind in FILE_KINDS:
        clear(p)
    up = "../" * (rel.count("/") + depth_out)
    name = os.path.basename(rel)
    target = secret / name if (secret / name).exists() else secret / "secret"
    if kind == "abs":
        p.symlink_to(target)
    elif kind == "rel":
        p.symlink_to(up + os.path.relpath(target, tree.parent))
    elif kind == "dev":
        p.symlink_to(rng.choice(["/dev/zero", "/dev/urandom", "/dev/null", "/dev/tty"]))
    elif kind == "devrel":
        p.symlink_to("../" * 12 + rng.choice(["dev/zero", "dev/urandom"]))
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "dir":
        p.mkdir()
        (p / "inside").write_text("a folder where a file belongs\n")
    elif kind == "huge":
        with open(p, "wb") as f:
            f.truncate(rng.choice([1 << 30, 1 << 33]) if name != "dmesg.txt" else 80 << 20)
    elif kind == "binary":
        p.write_bytes(rng.randbytes(rng.choice([17, 4096, 70000])))
    elif kind == "loop":
        other = p.with_name(name + ".loop")
        if other.exists() or other.is_symlink():
            other.unlink()
        other.symlink_to(name)
        p.symlink_to(name + ".loop")
    elif kind == "dirlink":
        # a folder on the path replaced by a link out of the tree
        clear(d)
        d.symlink_to(secret if rng.random() < 0.5 else
                     "../" * (str(d.relative_to(tree)).count("/") + depth_out) +
                     os.path.relpath(secret, tree.parent))
    elif kind == "dotdot":
        p.symlink_to(up + "../../" + name)
    elif kind == "selfdir":
        clear(d)
        d.symlink_to(".")  # a folder that is itself: a loop on the way down
    elif kind == "secretdir":
        p.symlink_to(os.path.relpath(target, p.parent))
    return f"{kind} {rel}"


def listing(folder, skip):
    """Every path under folder but skip, with what identifies its contents."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if p.startswith(str(skip)):
                continue
            st = os.lstat(p)
            out[p] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def all_written(folder):
    data = b""
    for dirpath, _, filenames in os.walk(folder):
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p) and stat.S_ISREG(os.lstat(p).st_mode):
                with open(p, "rb") as f:
                    data += f.read(8 << 20)
    return data


def run(args, env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([BINARY, *args], capture_output=True, timeout=TIMEOUT, env=e)


def test_generated_hostile_trees(tmp_path):
    rng = random.Random(SEED)
    token = "SECRET%08x" % rng.getrandbits(32)
    secret = secret_folder(tmp_path, token)
    names = fixture_names()
    secret_names = sorted(os.listdir(secret))
    work = tmp_path / "work"
    work.mkdir()
    for i in range(TREES):
        tree = work / f"tree{i}"
        fixture = rng.choice(names)
        shutil.copytree(FIXTURES / fixture, tree, symlinks=True)
        # the folders last: the files are planted through no link
        kinds = sorted((rng.choice(FILE_KINDS + DIR_KINDS) for _ in range(rng.randint(3, 9))),
                       key=lambda k: k in DIR_KINDS)
        planted = [plant(rng, tree, secret, 1, k) for k in kinds]
        env = {"CLOCKDOCTOR_BENEATH_WALK": "1"} if i % 2 else {}
        what = f"tree {i} ({fixture}, {'walk' if i % 2 else 'openat2'}): {planted}"
        (work / f"out{i}").mkdir(mode=0o700)
        before = listing(tmp_path, work / f"out{i}")
        runs = [
            (["check", "--root", str(tree)], EXIT_CHECK),
            (["check", "--json", "--root", str(tree)], EXIT_CHECK),
            (["snapshot", "--root", str(tree), str(work / f"out{i}" / "plain")], EXIT_SNAPSHOT),
            (["snapshot", "--redact", "--root", str(tree), str(work / f"out{i}" / "redacted")], EXIT_SNAPSHOT),
        ]
        for args, codes in runs:
            r = run(args, env)
            assert r.returncode in codes, f"{what}: {args} exit {r.returncode}: {r.stderr[-2000:]!r}"
            assert token.encode() not in r.stdout + r.stderr, f"{what}: {args} printed the secret"
            if "--json" in args:
                json.loads(r.stdout)
        written = all_written(work / f"out{i}")
        assert token.encode() not in written, f"{what}: the secret was copied"
        after = listing(tmp_path, work / f"out{i}")
        assert before == after, f"{what}: something outside the destination changed"
        assert sorted(os.listdir(secret)) == secret_names
        for n in secret_names:
            assert token in (secret / n).read_text()
        shutil.rmtree(tree)
        shutil.rmtree(work / f"out{i}")


# ---- each way out that was found ----

@pytest.fixture
def victim(tmp_path):
    """A root-owned file elsewhere, which no run may write."""
    v = tmp_path / "victim"
    v.write_text("precious\n")
    v.chmod(0o644)
    return v


def snapshot_files():
    return ["dmesg.txt", "cpuid.txt", "adjtimex.txt", "proc", "sys", "etc"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_snapshot_refuses_another_users_folder(cd, tmp_path, victim):
    d = tmp_path / "theirs"
    d.mkdir()
    os.chown(d, 65534, 65534)
    r = cd("snapshot", str(d))
    refused(r, "belongs to another user")
    assert os.listdir(d) == []
    assert victim.read_text() == "precious\n"


def test_snapshot_refuses_a_folder_others_may_write(cd, tmp_path, victim):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    refused(cd("snapshot", str(d)), "other users may write in it")
    d.chmod(0o1777)  # sticky: others still create names in it
    refused(cd("snapshot", str(d)), "other users may write in it")
    assert os.listdir(d) == []


def test_snapshot_never_writes_through_planted_links(cd, tmp_path, victim):
    """Links at every name a snapshot writes (as another user would plant
    them after an emptiness check): not empty, refused; with --force each
    link is replaced by the file, its target untouched."""
    d = tmp_path / "snap"
    d.mkdir(mode=0o700)
    for name in ["dmesg.txt", "cpuid.txt", "adjtimex.txt", "REDACTED.txt"]:
        (d / name).symlink_to(victim)
    (d / "proc").symlink_to(tmp_path)  # a folder on the way: never gone through
    refused(cd("snapshot", str(d)), "not empty")
    r = cd("snapshot", "--force", "--redact", str(d))
    assert r.rc in (0, 2), r.err
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "cmdline").exists() and not (tmp_path / "cpuinfo").exists()
    for name in ["cpuid.txt", "adjtimex.txt", "REDACTED.txt"]:
        assert (d / name).is_file() and not (d / name).is_symlink(), name
    # proc could not be made through the link: said, and nothing written there
    assert "proc" in r.err


def test_snapshot_refuses_a_link_as_its_folder(cd, tmp_path, victim):
    d = tmp_path / "snap"
    d.symlink_to(tmp_path / "elsewhere")
    r = cd("snapshot", str(d))
    assert r.rc == 3 and "symbolic link" in r.err
    assert not (tmp_path / "elsewhere").exists()


def test_snapshot_folder_and_kernel_log_private(cd, tmp_path):
    d = tmp_path / "snap"
    r = cd("snapshot", str(d))
    assert r.rc in (0, 2), r.err
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    if (d / "dmesg.txt").exists():
        assert stat.S_IMODE((d / "dmesg.txt").stat().st_mode) == 0o600
    # an existing empty folder of ours, open to others: the log saved in it
    # closes it to them
    e = tmp_path / "mine"
    e.mkdir()
    e.chmod(0o755)
    r = cd("snapshot", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), str(e))
    assert r.rc == 0, r.err
    assert stat.S_IMODE((e / "dmesg.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE(e.stat().st_mode) & 0o007 == 0


def copy_fixture(tmp_path, name="qemu-tcg-smp2-hpet"):
    dst = tmp_path / "tree"
    shutil.copytree(FIXTURES / name, dst)
    return dst


def test_cmdline_linked_to_shadow_is_refused(cd, tmp_path):
    tree = copy_fixture(tmp_path)
    token = "SHADOWSECRET"
    (tmp_path / "shadow").write_text(f"root:{token}:19000:0:99999:7:::\n")
    (tmp_path / "shadow").chmod(0o640)
    for target in ["/etc/shadow", str(tmp_path / "shadow")]:
        (tree / "proc/cmdline").unlink()
        (tree / "proc/cmdline").symlink_to(target)
        for args in (["check", "--json", "--root", str(tree)], ["check", "--root", str(tree)]):
            r = cd(*args)
            assert r.rc in EXIT_CHECK
            assert token not in r.out + r.err and "root:" not in r.out
            assert "/proc/cmdline: a link that leads out of the root, refused" in r.out
        doc = cd("check", "--json", "--root", str(tree)).json()
        assert "root:" not in json.dumps(doc["kernel"])
        out = tmp_path / ("out" + str(len(target)))
        r = cd("snapshot", "--redact", "--root", str(tree), str(out))
        assert r.rc == 0, r.err
        assert "/proc/cmdline (a link that leads out of the root, refused)" in r.err
        assert not (out / "proc/cmdline").exists()
        assert token.encode() not in all_written(out)


def test_relative_link_out_from_current_clocksource(cd, tmp_path):
    tree = copy_fixture(tmp_path)
    (tmp_path / "secret").write_text("tsc RELSECRET\n")
    cur = tree / "sys" / CS / "current_clocksource"
    cur.unlink()
    cur.symlink_to("../" * 6 + "secret")  # 5 folders deep in the tree, and the tree itself
    assert cur.read_text() == "tsc RELSECRET\n"  # it does lead out
    for env in ({}, {"CLOCKDOCTOR_BENEATH_WALK": "1"}):
        for args in (["check", "--root", str(tree)], ["check", "--json", "--root", str(tree)]):
            r = cd(*args, env=env)
            assert r.rc in EXIT_CHECK
            assert "RELSECRET" not in r.out + r.err
            assert "current clocksource: a link that leads out of the root, refused" in r.out


def test_redact_keeps_a_private_file_private(cd, tmp_path):
    tree = copy_fixture(tmp_path)
    (tree / "proc/cmdline").chmod(0o640)
    (tmp_path / "private").write_text("PRIVATESECRET\n")
    (tmp_path / "private").chmod(0o640)
    (tree / "etc").mkdir(exist_ok=True)
    (tree / "etc/os-release").symlink_to(tmp_path / "private")
    out = tmp_path / "public"
    r = cd("snapshot", "--redact", "--root", str(tree), str(out))
    assert r.rc == 0, r.err
    assert stat.S_IMODE((out / "proc/cmdline").stat().st_mode) == 0o600
    assert stat.S_IMODE((out / "dmesg.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE((out / "proc/cpuinfo").stat().st_mode) == 0o644
    assert not (out / "etc/os-release").exists()
    assert b"PRIVATESECRET" not in all_written(out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o700


def test_over_long_root(cd, tmp_path):
    """A root of 600 bytes (over the 511 once kept) is diagnosed whole,
    never cut to the name of another folder; one longer than a path may be
    is refused, with the reason."""
    deep = tmp_path
    while len(str(deep)) < 600:
        deep = deep / ("d" * 60)
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", deep)
    # the folder the first 511 bytes name: a decoy a cut would diagnose
    decoy = pathlib.Path(str(deep)[:511])
    shutil.copytree(FIXTURES / "qemu-tcg-smp1-tsc", decoy, dirs_exist_ok=True)
    doc = cd("check", "--json", "--root", str(deep)).json()
    assert doc["root"] == str(deep)
    assert doc["clocksource"]["current"] == "hpet"
    out = tmp_path / "copy"
    assert cd("snapshot", "--root", str(deep), str(out)).rc == 0
    assert (out / "dmesg.txt").read_bytes() == (deep / "dmesg.txt").read_bytes()
    huge = "/" + "x" * 5000
    refused(cd("check", "--root", huge), "more than the 4095")
    refused(cd("check", "--json", "--root", huge), "more than the 4095")
    refused(cd("snapshot", "--root", huge, str(tmp_path / "o")), "more than the 4095")
    refused(cd("snapshot", str(tmp_path / ("y" * 300) / ("y" * 300) / ("y" * 4000))), "more than the 4095")
    assert not (tmp_path / "o").exists()
