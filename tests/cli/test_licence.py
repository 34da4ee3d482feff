# SPDX-License-Identifier: MIT
"""The licence: LICENSE is MIT, every source file of the tree names it in an
SPDX line near its top, and the packages' metadata say the same."""
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAG = "SPDX-License-Identifier: MIT"
# Data, not source: snapshots of machines and fuzzing seeds are kept byte for
# byte as they were taken, and these formats have no comment syntax.
DATA_PREFIXES = ("tests/fixtures/", "tests/fuzz/inputs/")
SOURCE_EXT = {".c", ".h", ".cc", ".rs", ".py", ".sh", ".1", ".3", ".yml", ".toml",
              ".map", ".timer", ".rpmlintrc"}
SOURCE_NAMES = {"Makefile", "rules", "run", "run-unit", "completion.bash"}
SOURCE_IN = (".pc.in", ".spec.in", ".service.in")


def tree_files():
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith((".git", "build"))]
            found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files]
        return found


def is_source(path):
    if path.startswith(DATA_PREFIXES):
        return False
    name = os.path.basename(path)
    return (os.path.splitext(name)[1] in SOURCE_EXT or name in SOURCE_NAMES
            or name.endswith(SOURCE_IN) or path == ".ci/run")


def test_every_source_file_has_the_spdx_line():
    missing = []
    for p in tree_files():
        f = ROOT / p
        if not is_source(p) or not f.is_file():
            continue
        if TAG not in f.read_text(errors="replace")[:400]:
            missing.append(p)
    assert not missing, "no SPDX line: " + ", ".join(missing)


def test_licence_text_and_packages_agree():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    copyright_ = (ROOT / "debian" / "copyright").read_text()
    assert "License: Expat" in copyright_ and "unspecified" not in copyright_
    spec = (ROOT / "packaging" / "clockdoctor.spec.in").read_text()
    assert "License:        MIT" in spec and "%license LICENSE" in spec
