# SPDX-License-Identifier: MIT
"""fix --persist and --undo as a transaction, attacked on scratch copies of a
snapshot (never this machine's boot configuration): killed with SIGKILL at
each system call they make (strace's fault injection), run two at a time, on
trees whose folders link out of them, with records fix did not write, on a
read-only tree, and under a later GRUB drop-in that overrides theirs.  After
each, --undo (or nothing) must leave the tree byte for byte as it was: every
path's name, type, mode, content and link target.  Nothing here asserts a
speed."""
import os
import re
import shutil
import stat
import subprocess
import threading

import pytest

from conftest import BINARY, FIXTURES, plant_verdict
from test_fix import DEBIAN, GRUB, RECORD, grub_sees

DROPIN = "etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"
STRACE = shutil.which("strace")
# Under AddressSanitizer the runtime makes system calls of its own (its
# allocator's mmaps, at moments that vary from run to run), so "the nth call
# of this name" is not the same point in two runs: the kills are made on the
# plain build, which `make test` runs first.
SANITIZED = "asan" in subprocess.run([BINARY, "--version"], capture_output=True, text=True).stdout.split()
HUGE = 64 << 20      # a file larger is compared by its size and ends


def walk(root):
    """{relative path: (type, mode, content or link target)} for root and
    everything under it, no link followed."""
    out = {}
    for d, dirs, files in os.walk(root, followlinks=False):
        for name in [""] + dirs + files if d == str(root) else dirs + files:
            p = os.path.join(d, name) if name else d
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    if st.st_size <= HUGE:
                        data = f.read()
                    else:                # a planted sparse giant: its size and ends
                        data = (st.st_size, f.read(1 << 20), os.pread(f.fileno(), 1 << 20, st.st_size - (1 << 20)))
                out[rel] = ("file", stat.S_IMODE(st.st_mode), data)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
            else:
                out[rel] = ("other", stat.S_IMODE(st.st_mode), None)
    return out


def fix(root, *args, env=None, timeout=60):
    p = subprocess.run([BINARY, "fix", "--root", str(root), *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return p.returncode, " ".join((p.stdout + p.stderr).split())   # as one line: the report wraps


def make_tree(path, user_file=False):
    """The hpet snapshot with a Debian GRUB configuration.  user_file: grub.d
    holds a file of the drop-in's own name (the operator's), another drop-in,
    and /var/lib exists already.  A sound TSC verdict for its boot is planted,
    as `clockdoctor tsc` saves it: without one, fix persists nothing that
    trusts the TSC (tests/cli/test_do_no_harm.py)."""
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", path, symlinks=True)
    plant_verdict(path, "sound")
    (path / "etc/default").mkdir(parents=True, exist_ok=True)
    (path / "etc/default/grub").write_text(GRUB)
    (path / "etc/os-release").write_text(DEBIAN)
    if user_file:
        (path / "etc/default/grub.d").mkdir()
        (path / DROPIN).write_text("# the operator's own\nGRUB_TIMEOUT=3\n")
        os.chmod(path / DROPIN, 0o600)
        (path / "etc/default/grub.d/10-local.cfg").write_text('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX x=1"\n')
        (path / "var/lib").mkdir(parents=True)
    return path


def copy(src, dst):
    shutil.copytree(src, dst, symlinks=True)
    return dst


# ---- killed at each system call ----

def syscalls(tmp_path, root, args):
    """Each system call `fix --root ROOT ARGS` makes, in order, as (name, nth
    of that name), and the index of its flock (where its changes begin)."""
    log = tmp_path / "strace.log"
    subprocess.run([STRACE, "-f", "-qq", "-o", str(log), BINARY, "fix", "--root", str(root), *args],
                   capture_output=True, timeout=120, check=False)
    seen, events, lock_at = {}, [], None
    for line in log.read_text().splitlines():
        m = re.match(r"^\d+\s+([a-z0-9_]+)\(", line)
        if not m:
            continue
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        if name == "flock" and lock_at is None:
            lock_at = len(events)
        events.append((name, seen[name]))
    log.unlink()
    assert lock_at is not None, "fix took no lock"
    return events, lock_at


# The calls that open, create, write, sync, rename, link, remove or lock.
CHANGING = {"open", "openat", "openat2", "creat", "write", "pwrite64", "fsync", "fdatasync", "fchmod",
            "rename", "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "mkdir",
            "mkdirat", "rmdir", "flock"}


def kill_points(events, lock_at):
    """From the lock on (where the tree can change): every call of CHANGING,
    and every fourth of the others (fstat, close, getdents: a kill there is
    a kill just before the next call); before it (the diagnosis, which only
    reads), every tenth."""
    after = [e for i, e in enumerate(events[lock_at:]) if e[0] in CHANGING or i % 4 == 0]
    return events[:lock_at:10] + after


def killed(root, args, name, nth):
    """Run fix under strace, SIGKILLed on entering its nth call of name.
    True when it was killed (a run that ends first is not)."""
    p = subprocess.run([STRACE, "-f", "-qq", "-o", os.devnull, "-e",
                        f"inject={name}:signal=KILL:when={nth}", BINARY, "fix", "--root", str(root), *args],
                       capture_output=True, timeout=60)
    return p.returncode == -9


def record_state(root):
    text = (root / RECORD).read_text()
    return re.search(r"^state (\w+)$", text, re.M).group(1)


@pytest.mark.skipif(not STRACE, reason="strace is needed (.ci/run installs it)")
@pytest.mark.skipif(SANITIZED, reason="the sanitizer's own system calls move the kill points: the plain build is killed")
@pytest.mark.parametrize("user_file", [False, True], ids=["bare", "user-file"])
def test_persist_killed_at_each_call(tmp_path, user_file):
    """SIGKILL on entering each system call of --persist, then on one copy
    --undo, and (at each call of CHANGING) on another --persist again (it
    finds the job done, or rolls the cut-short one back and starts anew)
    then --undo: the tree is the original, byte for byte, every time."""
    base = make_tree(tmp_path / "base", user_file)
    original = walk(base)
    events, lock_at = syscalls(tmp_path, copy(base, tmp_path / "probe"), ["--persist"])
    points = kill_points(events, lock_at)
    tried = 0
    for i, (name, nth) in enumerate(points):
        a = copy(base, tmp_path / f"a{i}")
        if not killed(a, ["--persist"], name, nth):
            shutil.rmtree(a)
            continue
        tried += 1
        if name in CHANGING:
            b = copy(a, tmp_path / f"b{i}")
        rc, out = fix(a, "--undo")
        assert rc == 0, (name, nth, out)
        assert walk(a) == original, (name, nth, out)
        shutil.rmtree(a)
        if name not in CHANGING:
            continue
        rc, out = fix(b, "--persist")
        assert rc == 0 and ("persist: done" in out or "persist: in-place" in out), (name, nth, out)
        assert record_state(b) == "done", (name, nth, out)
        assert "tsc=reliable" in grub_sees(b), (name, nth, out)
        rc, out = fix(b, "--undo")
        assert rc == 0 and walk(b) == original, (name, nth, out)
        shutil.rmtree(b)
    print(f"\n--persist ({'user file' if user_file else 'bare'}): {len(events)} system calls, "
          f"{len(events) - lock_at} from the lock on; killed at {tried} of them")
    assert tried >= len(points) - 3   # the last few (exit) may see it finish


@pytest.mark.skipif(not STRACE, reason="strace is needed (.ci/run installs it)")
@pytest.mark.skipif(SANITIZED, reason="the sanitizer's own system calls move the kill points: the plain build is killed")
@pytest.mark.parametrize("user_file", [False, True], ids=["bare", "user-file"])
def test_undo_killed_at_each_call(tmp_path, user_file):
    """SIGKILL on entering each system call of --undo, then --undo again:
    the original tree, byte for byte."""
    base = make_tree(tmp_path / "base", user_file)
    original = walk(base)
    rc, out = fix(base, "--persist")
    assert rc == 0, out
    events, lock_at = syscalls(tmp_path, copy(base, tmp_path / "probe"), ["--undo"])
    tried = 0
    points = kill_points(events, lock_at)
    for i, (name, nth) in enumerate(points):
        a = copy(base, tmp_path / f"a{i}")
        if killed(a, ["--undo"], name, nth):
            tried += 1
            rc, out = fix(a, "--undo")
            assert rc == 0 and walk(a) == original, (name, nth, out)
        shutil.rmtree(a)
    print(f"\n--undo ({'user file' if user_file else 'bare'}): {len(events)} system calls, {len(events) - lock_at} from the lock on; killed at "
          f"{tried} of them")
    assert tried >= len(points) - 3


# ---- two at a time ----

def race(root, first, second):
    """Two runs started together: their exit statuses and output."""
    procs = [subprocess.Popen([BINARY, "fix", "--root", str(root), *a], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for a in (first, second)]
    return [(p.wait(timeout=60), p.stdout.read()) for p in procs]


@pytest.mark.parametrize("user_file", [False, True], ids=["bare", "user-file"])
def test_two_persists_at_once(tmp_path, user_file):
    """20 trials of two --persist at once (with grub.d holding the operator's
    file of the drop-in's name, and without grub.d or /var): one writes, the
    other waits for the lock and finds the change in place; the operator's
    file is kept aside whole, and --undo puts everything back, folders too."""
    base = make_tree(tmp_path / "base", user_file)
    original = walk(base)
    for i in range(20):
        t = copy(base, tmp_path / f"t{i}")
        runs = race(t, ["--persist"], ["--persist"])
        assert all(rc == 0 for rc, _ in runs), runs
        results = sorted(re.search(r"persist: ([\w-]+)", out).group(1) for _, out in runs)
        assert results == ["done", "in-place"], runs
        assert record_state(t) == "done"
        if user_file:
            assert (t / (DROPIN + ".clockdoctor-backup")).read_bytes() == original[DROPIN][2]
        assert "tsc=reliable" in grub_sees(t)
        rc, out = fix(t, "--undo")
        assert rc == 0 and walk(t) == original, out
        shutil.rmtree(t)


def test_persist_and_undo_at_once(tmp_path):
    """--persist and --undo at once, 20 times: whichever goes first, the tree
    is either the original or the whole change (its record done), and --undo
    then returns it to the original."""
    base = make_tree(tmp_path / "base", user_file=True)
    original = walk(base)
    for i in range(20):
        t = copy(base, tmp_path / f"t{i}")
        runs = race(t, ["--persist"], ["--undo"]) if i % 2 else race(t, ["--undo"], ["--persist"])
        assert all(rc == 0 for rc, _ in runs), runs
        if (t / RECORD).exists():
            assert record_state(t) == "done" and "tsc=reliable" in grub_sees(t)
        else:
            assert walk(t) == original
        rc, out = fix(t, "--undo")
        assert rc == 0 and walk(t) == original, out
        shutil.rmtree(t)


def test_lock_busy_refuses(tmp_path):
    """A run that holds the tree's lock past the wait: the other says so and
    changes nothing."""
    import fcntl
    t = make_tree(tmp_path / "t")
    before = walk(t)
    fd = os.open(t, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        rc, out = fix(t, "--persist")
    finally:
        os.close(fd)
    assert rc == 3, out
    assert "persist: busy" in out and "another clockdoctor fix is changing" in out
    assert walk(t) == before


# ---- a tree that leads out of itself ----

@pytest.mark.parametrize("which, target", [
    ("etc/default/grub.d", "abs"), ("etc/default/grub.d", "rel"),
    ("var/lib/clockdoctor", "abs"), ("var/lib/clockdoctor", "rel"), ("var", "abs"),
])
def test_persist_refuses_links_out(tmp_path, which, target):
    """A folder of the tree linked outside it: refused with the reason,
    nothing written there or in the tree."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious\n")
    t = make_tree(tmp_path / "t")
    link = t / which
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if target == "abs" else os.path.relpath(outside, link.parent))
    before, out_before = walk(t), walk(outside)
    rc, out = fix(t, "--persist")
    assert rc == 2, out
    assert "leads out of the root folder" in out and re.search("nothing (was )?changed", out), out
    assert "removed the record" not in out
    assert walk(outside) == out_before and walk(t) == before
    rc, out = fix(t, "--undo")
    assert walk(outside) == out_before and walk(t) == before


# ---- records fix did not write ----

def forged(tmp_path, lines):
    t = make_tree(tmp_path / "t", user_file=True)
    (t / "var/lib/clockdoctor").mkdir()
    (t / RECORD).write_text("clockdoctor fix record 1\ncreated 5\nfamily debian\n" + lines)
    return t


@pytest.mark.parametrize("lines, why", [
    ("backup /etc\n", "not the backup folder fix makes"),
    ("backup /var/lib/clockdoctor/backup-5\n", "not the backup folder fix makes"),
    ("mkdir /etc\n", None),          # a folder fix may create: rmdir finds it not empty, and leaves it
    ("replaced /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg backup=/elsewhere/x mode=0644 size=1 "
     "fnv=0123456789abcdef\n", "own name"),
    ("file /etc/default/grub mode=0644 size=1 fnv=0123456789abcdef add=tsc=reliable\n",
     "not the drop-in fix writes"),
    ("file /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg mode=0644 size=35 fnv=0123456789abcdef "
     "add=tsc=reliable\n", "not the content fix writes"),
])
def test_undo_refuses_what_fix_did_not_write(tmp_path, lines, why):
    """A record line fix would never write: undo refuses the whole record,
    says why, and changes nothing (TREE/etc stays, no file comes from
    outside)."""
    t = forged(tmp_path, lines)
    before = walk(t)
    rc, out = fix(t, "--undo")
    if why is None:
        assert rc == 0, out
        assert "left the folder" in out and (t / "etc/default/grub").exists()
        return
    assert rc == 2, out
    assert "is not one fix wrote" in out and why in out, out
    assert walk(t) == before


def test_undo_checks_the_hash_of_what_it_puts_back(tmp_path):
    """The file fix set aside, changed since (or a link planted in its place):
    undo says so and changes nothing."""
    t = make_tree(tmp_path / "t", user_file=True)
    rc, out = fix(t, "--persist")
    assert rc == 0, out
    aside = t / (DROPIN + ".clockdoctor-backup")
    aside.write_text("# swapped\n")
    before = walk(t)
    rc, out = fix(t, "--undo")
    assert rc == 2, out
    assert "is not the file fix set aside" in out and "nothing undone" in out
    assert walk(t) == before
    aside.unlink()
    os.symlink("/etc/shadow", aside)
    before = walk(t)
    rc, out = fix(t, "--undo")
    assert rc == 2 and walk(t) == before, out


# ---- every failure with its reason ----

def test_read_only_tree_says_why(tmp_path):
    """A tree on a read-only mount: the reason (EROFS), nothing claimed."""
    t = make_tree(tmp_path / "t")
    before = walk(t)
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99; '
              'exec "$2" fix --root "$1" --persist')
    p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(t), BINARY], capture_output=True,
                       text=True, timeout=60)
    if p.returncode == 99 or "unshare failed" in p.stderr:
        pytest.skip("no private mount namespace here: " + p.stderr.strip())
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2, out
    assert "Read-only file system" in out and "nothing was changed" in out, out
    assert "removed the record" not in out and "undone" not in out
    assert walk(t) == before


# ---- GRUB as it assembles the command line ----

@pytest.mark.parametrize("later, overrides", [
    ('GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\n', True),
    ("export GRUB_CMDLINE_LINUX_DEFAULT='quiet'\n", True),
    ('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT splash"\n', False),
    ('GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} splash"\n', False),
    ('GRUB_CMDLINE_LINUX_DEFAULT="quiet tsc=reliable"\n', False),
    ('GRUB_CMDLINE_LINUX="console=ttyS1"\n', False),
])
def test_a_later_dropin_that_overrides(tmp_path, later, overrides):
    """99-*.cfg sets GRUB_CMDLINE_LINUX_DEFAULT after our drop-in: said, and
    nothing written, never "done"; one that keeps the variable is no
    obstacle."""
    t = make_tree(tmp_path / "t")
    (t / "etc/default/grub.d").mkdir()
    (t / "etc/default/grub.d/99-vendor.cfg").write_text(later)
    before = walk(t)
    plan = " ".join(subprocess.run([BINARY, "fix", "--root", str(t)], capture_output=True, text=True,
                                   timeout=60).stdout.split())
    rc, out = fix(t, "--persist")
    if overrides:
        assert rc == 1, out
        assert "persist: overridden" in out and "99-vendor.cfg" in out and "done" not in out
        assert "NOT EFFECTIVE" in plan
        assert walk(t) == before
    else:
        assert rc == 0 and "persist: done" in out, out
        assert "tsc=reliable" in grub_sees(t).split("|")[1] or "tsc=reliable" in grub_sees(t)


def test_removal_takes_every_occurrence(tmp_path):
    """clocksource=acpi_pm twice on GRUB's command line (the kernel takes the
    last): the drop-in removes both."""
    t = tmp_path / "t"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-acpi_pm-cmdline", t, symlinks=True)
    (t / "etc/default").mkdir(parents=True, exist_ok=True)
    (t / "etc/default/grub").write_text(
        'GRUB_CMDLINE_LINUX_DEFAULT="clocksource=acpi_pm quiet"\n'
        'GRUB_CMDLINE_LINUX="console=ttyS0 clocksource=acpi_pm"\n')
    (t / "etc/os-release").write_text(DEBIAN)
    rc, out = fix(t, "--persist")
    assert rc == 0, out
    assert "clocksource=" not in grub_sees(t)


def test_another_value_of_a_removed_parameter_is_said(tmp_path):
    """clocksource=acpi_pm to remove, and clocksource=hpet elsewhere on GRUB's
    command line: the kernel takes the last, so that one is named."""
    t = tmp_path / "t"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-acpi_pm-cmdline", t, symlinks=True)
    (t / "etc/default").mkdir(parents=True, exist_ok=True)
    (t / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet clocksource=hpet"\n'
                                         'GRUB_CMDLINE_LINUX="clocksource=acpi_pm"\n')
    (t / "etc/os-release").write_text(DEBIAN)
    rc, out = fix(t, "--persist", "--dry-run")
    assert rc == 0, out
    assert "clocksource=hpet is on GRUB's command line too: the kernel takes the last clocksource=" in out


# ---- generated hostile trees ----

# The paths fix reads and writes, and the folders on their way, for the
# generator of test_hostile_trees.
FIX_FILES = ["etc/default/grub", DROPIN, "etc/default/grub.d/.90-clockdoctor-tsc-reliable.cfg.clockdoctor-new",
             DROPIN + ".clockdoctor-backup", "etc/default/grub.d/99-vendor.cfg", RECORD,
             "var/lib/clockdoctor/.fix.record.clockdoctor-new", "etc/os-release", "etc/default/grub.d/10-a.cfg"]
FIX_DIRS = ["etc/default/grub.d", "var/lib/clockdoctor", "var/lib", "var", "var/.lib.clockdoctor-new"]


def mine(state):
    """A tree's walk without fix's own hidden names (.clockdoctor-new), which
    fix removes as what a run cut short left."""
    return {k: v for k, v in state.items() if ".clockdoctor-new" not in k}


def test_generated_hostile_trees_fix(tmp_path, monkeypatch):
    """40 trees with hostile things planted (by test_hostile_trees' generator)
    where fix reads and writes: --persist, --undo and their dry runs end
    within their timeout, never read or write outside the tree, never print
    the secret, and --persist then --undo leave the tree as it was."""
    import random
    import test_hostile_trees as hostile
    from test_hostile_trees import DIR_KINDS, FILE_KINDS, listing, plant, secret_folder
    monkeypatch.setattr(hostile, "READ_PATHS", FIX_FILES)
    monkeypatch.setattr(hostile, "READ_DIRS", FIX_DIRS)
    rng = random.Random(7)
    token = "SECRET%08x" % rng.getrandbits(32)
    secret = secret_folder(tmp_path, token)
    work = tmp_path / "work"
    work.mkdir()
    outside = listing(tmp_path, work)
    for i in range(40):
        t = make_tree(work / f"t{i}", user_file=bool(i % 2))
        kinds = sorted((rng.choice(FILE_KINDS + DIR_KINDS) for _ in range(rng.randint(1, 4))),
                       key=lambda k: k in DIR_KINDS)
        planted = [plant(rng, t, secret, 1, k) for k in kinds]
        env = dict(os.environ, CLOCKDOCTOR_BENEATH_WALK="1") if i % 4 >= 2 else None
        before = walk(t)
        for args in (["--persist", "--dry-run"], ["--undo", "--dry-run"], ["--persist"], ["--undo"]):
            rc, out = fix(t, *args, env=env, timeout=30)
            assert rc in (0, 1, 2, 3), (i, planted, args, out)
            assert token not in out, (i, planted, args, "printed the secret")
            if args == ["--undo"] and rc == 0:
                assert mine(walk(t)) == mine(before), (i, planted, out)
        assert listing(tmp_path, work) == outside, (i, planted, "something outside the trees changed")
        shutil.rmtree(t)


def test_a_trees_text_is_printed_printable(tmp_path):
    """A record, a GRUB file's name and a word of a tree's GRUB files, all
    shown to the operator: no control character reaches the terminal."""
    t = make_tree(tmp_path / "t")
    (t / "etc/default/grub.d").mkdir()
    (t / "etc/default/grub.d/99-\x1b]0;owned\x07.cfg").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
    rc, out = fix(t, "--persist")
    assert rc == 1 and "persist: overridden" in out, out
    assert "\x1b" not in out and "\x07" not in out
    (t / "var/lib/clockdoctor").mkdir(parents=True)
    (t / RECORD).write_text("clockdoctor fix record 1\n\x1b[2Jcreated 1\n")
    p = subprocess.run([BINARY, "fix", "--root", str(t), "--undo", "--dry-run"], capture_output=True,
                       timeout=60)
    assert p.returncode == 0 and b"\x1b" not in p.stdout + p.stderr
