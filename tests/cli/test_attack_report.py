# SPDX-License-Identifier: MIT
"""`clockdoctor report` attacked: files sent with numbers no command writes
(1e999, values near the largest double, CPUs that are fractions or beyond
int), and the files an operator names as any program takes them (a path
with "..", a link to an absolute path), never a FIFO that would hang."""
import json
import os
import re
import stat
import subprocess

from conftest import BINARY, FIXTURES


def tsc_doc(pairs):
    """A tsc --json document holding only the warp test's pairs."""
    return {"tool": "clockdoctor", "command": "tsc", "schema_version": 1, "sync": {"pairs": pairs}}


def pair(a, b, off=10.0, unc=5.0, back=0):
    return {"cpu_a": a, "cpu_b": b, "offset_ns": off, "uncertainty_ns": unc, "backward_steps": back,
            "max_backward_ns": 0, "error": None}


def test_number_beyond_a_double_is_refused(cd, tmp_path):
    """1e999 is JSON's grammar but no double: the file is refused and said
    why, never drawn as an infinity."""
    f = tmp_path / "tsc.json"
    f.write_text(json.dumps(tsc_doc([pair(0, 1)])).replace('"offset_ns": 10.0', '"offset_ns": 1e999'))
    r = cd("report", "--from", str(f))
    assert r.rc == 3 and r.out == ""
    assert "number out of range" in r.err


def test_warp_cells_from_extreme_numbers(cd, tmp_path):
    """Offsets near the largest double (whose sum overflows), CPUs given as
    1e300, -1e300, 2.5 or 4096: every cell drawn has a colour level 0 to 4,
    and the CPUs that are no CPU are left out, not wrapped into one."""
    pairs = [pair(0, 1), pair(0, 2, off=1.7e308, unc=1.7e308), pair(1, 2, off=-1.7e308, unc=1e308),
             pair(1e300, 1), pair(0, -1e300), pair(2.5, 1), pair(0, 4096), pair(2147483648, 0)]
    f = tmp_path / "tsc.json"
    f.write_text(json.dumps(tsc_doc(pairs)))
    r = cd("report", "--from", str(f))
    assert r.rc in (0, 1, 2, 3), r.err
    cells = re.findall(r'<rect class="mark cell (h[^ "]*) [a-z]+"[^>]*data-a="(-?\d+)" data-b="(-?\d+)"', r.out)
    assert sorted((a, b) for _, a, b in cells) == [("0", "1"), ("0", "2"), ("1", "2")], cells
    assert all(re.fullmatch(r"h[0-4]", lvl) for lvl, _, _ in cells), cells
    assert not re.search(r'(?:\bx|\by|width|height)="[^"]*(?:nan|inf)', r.out)


def test_from_takes_paths_as_the_user_wrote_them(cd, tmp_path):
    """--from ../check.json and a link to an absolute path are the user's
    own files: read, as any program reads them."""
    check = cd("check", "--json", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet")).out
    (tmp_path / "check.json").write_text(check)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "linked.json").symlink_to(tmp_path / "check.json")
    for name in ("../check.json", "linked.json"):
        p = subprocess.run([BINARY, "report", "--from", name], cwd=sub, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (name, p.stderr)
        assert p.stdout.startswith("<!DOCTYPE html>")


def test_from_a_fifo_is_refused_at_once(cd, tmp_path):
    """A FIFO (or a device) named with --from is no file: refused and said
    so, never waited on."""
    fifo = tmp_path / "check.json"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        r = cd("report", "--from", path, timeout=30)
        assert r.rc == 3 and "not a regular file" in r.err, r.err


def test_page_is_private_whatever_the_umask(cd, tmp_path):
    """The page quotes the kernel log (its findings' evidence, check's
    kernel_log events), which dmesg_restrict keeps from other users and a
    snapshot saves 0600: -o writes it 0600, even under umask 000."""
    out = tmp_path / "r.html"
    old = os.umask(0)
    try:
        r = cd("report", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "-o", str(out))
    finally:
        os.umask(old)
    assert r.rc == 2, r.err
    assert "kernel log" in out.read_text()
    assert os.stat(out).st_mode & 0o777 == 0o600


def test_output_that_is_no_file_is_left_alone(cd, tmp_path):
    """-o /dev/null or -o /dev/stdout (a link to /proc/self/fd/1, whatever
    standard output is) must not become a regular file for every program
    on the machine: the same kinds of names, made in a temporary folder (a
    FIFO, links to /dev/null and to /proc/self/fd/1), are refused and left
    as they were; a link to a regular file is still replaced, not written
    through."""
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    null = tmp_path / "null.html"
    null.symlink_to("/dev/null")
    stdout = tmp_path / "stdout.html"
    stdout.symlink_to("/proc/self/fd/1")
    snap = str(FIXTURES / "qemu-tcg-smp2-hpet")
    for out in (fifo, null, stdout):
        with open(tmp_path / "captured", "w") as captured:
            p = subprocess.run([BINARY, "report", "--root", snap, "-o", str(out)], stdout=captured,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        assert p.returncode == 3, (out, p.stderr)
        assert "not a file" in p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.readlink(null) == "/dev/null" and os.readlink(stdout) == "/proc/self/fd/1"
    assert not [n for n in os.listdir(tmp_path) if ".tmp." in n]


def test_top_lines_share_one_bound(cd, tmp_path):
    """Each of top's JSON lines may hold up to the reader's bound of values,
    but 600 of them would hold 600 times it (a 16 MB file took 750 MB of
    memory): together they are bounded as one document is."""
    line = '{"command":"top","time":1,"a":[' + ",".join(["0"] * 12000) + "]}\n"
    f = tmp_path / "top.json"
    f.write_text(line * 200)
    r = cd("report", "--from", str(f))
    assert r.rc == 3 and r.out == "", r.err
    assert "values in all" in r.err


def test_top_draws_the_heaviest_process_met_late(cd, tmp_path):
    """A busy machine: 70 short-lived processes in the first interval, then
    the one that pays the most.  The chart's lines are the heaviest
    processes over the whole run (only the first 64 pids met were kept)."""
    lines = []
    for i in range(4):
        procs = [{"pid": 100 + k, "comm": "cron%d" % k, "calls": 1, "calls_per_s": 1} for k in range(70)] if i == 0 \
            else [{"pid": 9999, "comm": "heavy", "calls": 100000, "calls_per_s": 100000}]
        lines.append(json.dumps({"command": "top", "time": 10 + i, "seconds": 1,
                                 "total": {"calls_per_s": sum(p["calls_per_s"] for p in procs)}, "processes": procs}))
    f = tmp_path / "top.json"
    f.write_text("\n".join(lines) + "\n")
    r = cd("report", "--from", str(f))
    assert r.rc == 3, r.err          # no check: status unknown
    who = set(re.findall(r'data-who="([^"]*)"', r.out))
    assert "9999 heavy" in who, sorted(who)[:10]
    assert len(who) == 9             # every process, and the 8 that paid the most


def test_prometheus_file_that_is_no_file_is_left_alone(cd, tmp_path):
    """check --prometheus-file shares the atomic write: /dev/null given
    there (made here as a link to it, and a FIFO) is refused in words, and
    left as it was."""
    fifo = tmp_path / "fifo.prom"
    os.mkfifo(fifo)
    null = tmp_path / "null.prom"
    null.symlink_to("/dev/null")
    for out in (fifo, null):
        r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "--prometheus-file", str(out))
        assert r.rc == 3, r.err
        assert "not a regular file" in r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.readlink(null) == "/dev/null"
