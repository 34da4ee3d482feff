# SPDX-License-Identifier: MIT
"""fastclock.h as a user's compiler meets it: a program that includes it
compiles with -pedantic -Werror under C99, C11 and C17 (gcc and clang) and
C++11, with nothing but what `pkg-config --cflags fastclock` gives, and links
against the static library and runs; one that calls fc_gettime() with the
feature macro fastclock(3) names, as clock_gettime(2) asks for it."""
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, make_env

# Only the header: no feature macro, no other include.
BARE = r"""
#include <fastclock.h>
int main(void)
{
    struct fc_info in;
    if (fc_info(&in) != 0 || fc_now_ns() <= 0)
        return 1;
    return fc_source_name(in.source)[0] == '\0';
}
"""

# As fastclock(3)'s SYNOPSIS says: the CLOCK_ ids need _POSIX_C_SOURCE in
# strict ISO C.
GETTIME = r"""
#define _POSIX_C_SOURCE 200809L
#include <fastclock.h>
#include <time.h>
int main(void)
{
    struct timespec ts;
    return fc_gettime(CLOCK_MONOTONIC, &ts) != 0 || fc_gettime((clockid_t)12345, &ts) >= 0;
}
"""

STRICT = ["-pedantic", "-Werror", "-Wall", "-Wextra"]


@pytest.fixture(scope="module")
def cflags():
    """What pkg-config gives for the tree's header (the .pc as built, its
    includedir pointed at include/), and the plain static library."""
    subprocess.run(["make", "-s", "--no-print-directory", "SANITIZE=", "build/fastclock.pc",
                    "build/libfastclock.a"], cwd=ROOT, check=True, capture_output=True, timeout=300,
                   env=make_env())
    pc = shutil.which("pkg-config")
    if not pc:
        pytest.fail("pkg-config is not installed (apt-get install pkg-config)")
    out = subprocess.run([pc, "--cflags", "--define-variable=includedir=%s" % (ROOT / "include"),
                          str(ROOT / "build/fastclock.pc")], capture_output=True, text=True, check=True)
    flags = out.stdout.split()
    assert flags == ["-I%s" % (ROOT / "include")], flags  # nothing else is needed
    return flags


def build_and_run(tmp_path, compiler, std, source, flags, suffix=".c"):
    src = tmp_path / ("prog%s" % suffix)
    src.write_text(source)
    exe = tmp_path / ("prog-%s-%s" % (compiler, std))
    r = subprocess.run([compiler, "-std=%s" % std, *STRICT, *flags, "-o", str(exe), str(src),
                        str(ROOT / "build/libfastclock.a"), "-lpthread"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "%s -std=%s:\n%s" % (compiler, std, r.stderr)
    run = subprocess.run([str(exe)], capture_output=True, timeout=30)
    assert run.returncode == 0, "%s -std=%s: the program exited %d" % (compiler, std, run.returncode)


@pytest.mark.parametrize("std", ["c99", "c11", "c17"])
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_iso_c(tmp_path, cflags, compiler, std):
    if compiler == "clang" and not shutil.which("clang"):
        pytest.skip("clang is not installed")
    build_and_run(tmp_path, compiler, std, BARE, cflags)
    build_and_run(tmp_path, compiler, std, GETTIME, cflags)


@pytest.mark.parametrize("std", ["c++11", "c++17"])
def test_cplusplus(tmp_path, cflags, std):
    build_and_run(tmp_path, "g++", std, BARE, cflags, suffix=".cc")
    build_and_run(tmp_path, "g++", std, GETTIME, cflags, suffix=".cc")


def man_sections(text):
    """fastclock(3)'s sections: {name: body}."""
    parts = re.split(r"^\.SH (.+)$", text, flags=re.M)
    return {parts[i].strip('"'): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_page_and_header_state_the_same_returns():
    """fastclock(3) has the sections a C library's page has, its ERRORS are
    exactly the -E values the header documents, and its ATTRIBUTES table
    names every exported function (test_fastclock_returns makes each return
    happen)."""
    header = (ROOT / "include/fastclock.h").read_text()
    page = man_sections((ROOT / "docs/fastclock.3").read_text())
    for name in ("LIBRARY", "SYNOPSIS", "DESCRIPTION", "RETURN VALUE", "ERRORS", "ATTRIBUTES", "NOTES"):
        assert name in page, name
    assert set(re.findall(r"-(E[A-Z]+)\b", header)) == set(re.findall(r"^\.B (E[A-Z]+)$", page["ERRORS"], re.M))
    exported = set(re.findall(r"^FC_API[^(]*?[ *](fc_[a-z0-9_]+)\(", header, re.M))
    for section in ("RETURN VALUE", "ATTRIBUTES"):
        named = set(re.findall(r"\b(fc_[a-z0-9_]+) ?\(", page[section].replace("\"", "").replace("\\fB", "").replace("\\fP", "")))
        assert exported <= named, (section, exported - named)
    assert "_POSIX_C_SOURCE" in page["SYNOPSIS"]
    assert "unknown" in page["RETURN VALUE"]
