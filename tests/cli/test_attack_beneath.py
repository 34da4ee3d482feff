# SPDX-License-Identifier: MIT
"""Opening beneath a root, attacked: a tree whose folders flip between a
real folder and a link out of it while clockdoctor reads (openat2 and the
forced walk), and a working folder this user cannot search, which must not
turn the kernel's openat2 off for the whole run."""
import json
import os
import shutil
import subprocess
import tempfile
import threading

import pytest

from conftest import BINARY, FIXTURES

CS = "sys/devices/system/clocksource"


def flipping_tree(base, absolute):
    """The hpet snapshot, with a secret outside it and a link beside
    clocksource0 (and proc) leading there; flip() swaps each folder and its
    link by renames until stop is set."""
    root = base / "tree"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    secret = base / "secret"
    (secret / "clocksource0").mkdir(parents=True)
    (secret / "proc").mkdir()
    for f in ("current_clocksource", "available_clocksource"):
        (secret / "clocksource0" / f).write_text("SECRETTOKEN\n")
    (secret / "proc/cmdline").write_text("SECRETTOKEN\n")
    cs = root / CS
    pairs = [(cs / "clocksource0", cs / "link0", secret / "clocksource0"), (root / "proc", root / "plink", secret / "proc")]
    for real, link, target in pairs:
        os.symlink(target if absolute else os.path.relpath(target, real.parent), link)
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            for real, link, _ in pairs:
                held = real.with_name(real.name + ".held")
                os.rename(real, held)
                os.rename(link, real)
                os.rename(real, link)
                os.rename(held, real)
    return root, stop, flip


@pytest.mark.parametrize("walk", ["0", "1"])
@pytest.mark.parametrize("absolute", [False, True])
def test_folders_swapped_for_links_while_reading(tmp_path, walk, absolute):
    root, stop, flip = flipping_tree(tmp_path, absolute)
    env = dict(os.environ, CLOCKDOCTOR_BENEATH_WALK=walk)
    t = threading.Thread(target=flip)
    t.start()
    try:
        for i in range(15):
            for args in (["check", "--json", "--root", str(root)], ["report", "--root", str(root)]):
                p = subprocess.run([BINARY, *args], capture_output=True, env=env, timeout=60)
                assert p.returncode in (0, 1, 2, 3), p.stderr
                assert b"SECRETTOKEN" not in p.stdout + p.stderr, args
            out = tmp_path / f"snap{i}"
            p = subprocess.run([BINARY, "snapshot", "--root", str(root), str(out)], capture_output=True, env=env,
                               timeout=60)
            assert p.returncode in (0, 2), p.stderr
            for dirpath, _, files in os.walk(out):
                for f in files:
                    with open(os.path.join(dirpath, f), "rb") as fh:
                        assert b"SECRETTOKEN" not in fh.read(), f
    finally:
        stop.set()
        t.join()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="acting as another user needs root")
def test_openat2_kept_from_an_unsearchable_working_folder():
    """The probe for openat2 ran on the working folder: from one this user
    may not search (EACCES) it fell back to the walk for every root, which
    refuses a folder more than 128 deep that openat2 reads.  The tree's
    clocksource0 is a link to such a folder, inside the tree."""
    base = tempfile.mkdtemp(prefix="cd-beneath-")
    try:
        os.chmod(base, 0o755)
        root = os.path.join(base, "tree")
        shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
        deep = "deep/" + "d/" * 130
        os.makedirs(os.path.join(root, deep))
        cs0 = os.path.join(root, CS, "clocksource0")
        for f in os.listdir(cs0):
            shutil.copy(os.path.join(cs0, f), os.path.join(root, deep, f))
        shutil.rmtree(cs0)
        os.symlink(os.path.relpath(os.path.join(root, deep), os.path.dirname(cs0)), cs0)
        shut = os.path.join(base, "shut")
        os.mkdir(shut)
        os.chown(shut, 65534, 65534)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
               'cd "$1" && chmod 000 . && exec "$2" check --json --root "$3"', "sh", shut, BINARY, root]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert p.returncode in (0, 1, 2), p.stderr
        doc = json.loads(p.stdout)
        assert not [u for u in doc["unknown"] if "clocksource" in u], doc["unknown"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
