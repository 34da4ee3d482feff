# SPDX-License-Identifier: MIT
"""clockdoctor report: pages from every snapshot in tests/fixtures, from a
short live run, from the commands' JSON files (--from) and from a hostile
snapshot, each checked as a program reads it (strict parsing: the HTML
nested and closed, each <svg> well-formed XML; under 1 MB; no URL; the
verdict, each finding and each chart with its data points in the DOM; the
embedded JSON readable) and as a person sees it: headless Chromium loads the
page with no console error and no network request, and its screenshot has
every chart drawn (not blank, each chart's region holding ink).

The checks are themselves tested: a page with a chart removed or emptied
must fail them (test_checks_catch_a_missing_or_empty_chart).  Chromium
missing is a loud skip, and a failure under CI (CI=true or LAB_REQUIRE=1)."""
import html
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

import pngread
from pagecheck import ALL_CHARTS, LIVE_CHARTS, check_page, embedded, svgs
from conftest import BINARY, FIXTURES, need_tool, refused, check_help, STRAY_ARGS

def check_findings(page, doc):
    """The verdict and each finding of check's JSON are on the page, as text."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    text = re.sub(r"\s+", " ", text)
    if doc.get("verdict"):
        assert re.sub(r"\s+", " ", doc["verdict"])[:60] in text
    for f in doc["findings"]:
        assert 'data-code="%s"' % f["code"] in page
        assert re.sub(r"\s+", " ", f["title"])[:60] in text
        for e in f["evidence"]:
            assert re.sub(r"\s+", " ", e)[:50] in text


# ---- what a person sees: Chromium ----

def chromium():
    return need_tool("chromium", "chromium", "the report's pages as a browser renders them")


def browse(path, width, height, shot):
    """Chromium loads path: the DOM it built, and a screenshot.  No console
    error, and no request but Chromium's own (its update and account
    services, refused by the resolver anyway)."""
    net = shot + ".netlog.json"
    with tempfile.TemporaryDirectory(prefix="cd-chromium-") as profile:
        p = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
             "--user-data-dir=" + profile, '--host-resolver-rules=MAP * ~NOTFOUND',
             "--enable-logging=stderr", "--v=0", "--log-net-log=" + net,
             "--window-size=%d,%d" % (width, height), "--screenshot=" + shot, "--dump-dom",
             "file://" + os.path.abspath(path)],
            capture_output=True, text=True, timeout=120, errors="replace")
    assert p.returncode == 0, p.stderr[-2000:]
    bad = [l for l in p.stderr.splitlines() if "Uncaught" in l or "ERROR:CONSOLE" in l or ":CONSOLE" in l]
    assert not bad, bad
    with open(net, errors="replace") as f:
        urls = set(re.findall(r'"url":"([^"]*)"', f.read()))
    own = re.compile(r"^(https?://)?[^/]*(google|googleapis|gvt1|gstatic)\.com|~notfound")
    assert not [u for u in urls if not u.startswith(("file:", "data:", "chrome")) and not own.search(u)], urls
    assert "</html>" in p.stdout
    return p.stdout


def ink(img, x0, y0, x1, y1):
    """Pixels unlike the background (the top-left pixel) in a region, and
    the colours there."""
    w, h, ch, rows = img
    bg = bytes(rows[0][0:3])
    n = 0
    for y in range(max(0, y0), min(h, y1), 2):
        r = rows[y]
        for x in range(max(0, x0), min(w, x1), 2):
            if bytes(r[x * ch:x * ch + 3]) != bg:
                n += 1
    return n, pngread.distinct_colours(img, x0, y0, x1, y1, 3)


def chart_sheet(page, out_dir):
    """Every chart of the page on a sheet of its own, each at a known place
    under the page's style sheet: its region in a screenshot is then known.
    Returns the sheet's path, its size and [(id, chart, y0, y1, width)]."""
    style = re.search(r"<style>.*?</style>", page, re.S).group(0)
    boxes, parts, y = [], [], 0
    for s in svgs(page):
        m = re.match(r'<svg class="chart" id="([^"]+)" viewBox="0 0 (\d+) (\d+)"', s)
        assert m, s[:200]
        sid, w, h = m.group(1), int(m.group(2)), int(m.group(3))
        parts.append('<div class="box" id="box-%s" style="position:absolute;left:0;top:%dpx;width:%dpx;height:%dpx">%s</div>'
                     % (sid, y, w, h, s))
        boxes.append((sid, y, y + h, w))
        y += h + 10
    sheet = os.path.join(out_dir, "sheet.html")
    with open(sheet, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8">%s</head><body style="margin:0;max-width:none">%s'
                '</body></html>' % (style, "".join(parts)))
    return sheet, max((b[3] for b in boxes), default=100), y + 10, boxes


def check_seen(page, tmp_path, charts):
    """The page in Chromium: its DOM holds what the page does (the verdict,
    every figure, the data), the screenshot is not blank, and each chart
    the page has is drawn on the sheet with ink in its region."""
    path = tmp_path / "page.html"
    path.write_text(page)
    dom = browse(str(path), 1000, 2400, str(tmp_path / "page.png"))
    assert 'id="verdict"' in dom and 'id="figures"' in dom
    for c in ALL_CHARTS:
        assert 'data-chart="%s"' % c in dom, c
    for c in charts:
        assert re.search(r'id="fig-%s" data-chart="%s">' % (c, c), dom), "chart %s not drawn in the DOM" % c
    img = pngread.decode((tmp_path / "page.png").read_bytes())
    n, colours = ink(img, 0, 0, img[0], img[1])
    assert n > 2000 and len(colours) > 8, "the page looks blank: %d pixels, %d colours" % (n, len(colours))
    sheet, w, h, boxes = chart_sheet(page, str(tmp_path))
    seen_charts = set()
    if boxes:
        browse(sheet, max(w, 400), min(h, 16000), str(tmp_path / "sheet.png"))
        img = pngread.decode((tmp_path / "sheet.png").read_bytes())
        for sid, y0, y1, width in boxes:
            if y1 > img[1]:
                continue
            n, colours = ink(img, 0, y0, width, y1)
            assert n > 200 and len(colours) >= 3, "chart %s is empty on screen: %d pixels, %d colours" % (
                sid, n, len(colours))
            seen_charts.add(sid)
    for c in charts:
        assert any(s == c or s.startswith(c + "-") or (c == "accuracy" and s.startswith("acc-"))
                   for s in seen_charts), "chart %s not on the screenshot" % c


# ---- the tests ----

def report(cd, *args, timeout=120):
    r = cd("report", *args, timeout=timeout)
    return r


def traceable():
    """Whether top can trace here (root, tracefs): then the live page has top's chart."""
    return os.geteuid() == 0 and subprocess.run([BINARY, "top", "--json", "0.1", "1"], capture_output=True,
                                                timeout=60).returncode == 0


def fixture_dirs():
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def test_help_and_usage(cd):
    check_help(cd, "report", ["--root", "--from", "--top", "--clocksources", "-o"])
    for args, words in [(["-d", "0"], "-d takes seconds"), (["--top", "x"], "--top takes seconds"),
                        (["--root", "/nonexistent"], "not a folder"),
                        (["--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "--from", "x.json"], "do not go together"),
                        (["--from", "x.json", "--top", "5"], "not with --root or --from")] + STRAY_ARGS:
        refused(cd("report", *args), words)


def test_every_fixture(cd, tmp_path):
    """A page from every snapshot: valid, small, the verdict and findings of
    check --root in it, every figure saying plainly that nothing was
    measured, and the check JSON it embeds the same as check --root's."""
    for d in fixture_dirs():
        out = tmp_path / (d.name + ".html")
        r = report(cd, "--root", str(d), "-o", str(out))
        assert r.rc in (0, 1, 2, 3), (d.name, r.err)
        page = out.read_text()
        check_page(page)
        assert "Measured: nothing" in page, d.name
        assert page.count('data-empty="1"') == len(ALL_CHARTS), d.name
        doc = cd("check", "--json", "--root", str(d)).json()
        check_findings(page, doc)
        data = embedded(page)
        assert data["data-check"]["findings"] == doc["findings"], d.name
        assert data["data-check"]["status"] == doc["status"]


def test_hpet_fixture_in_chromium(cd, tmp_path):
    r = report(cd, "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"))
    assert r.rc == 2
    check_page(r.out)
    check_seen(r.out, tmp_path, ())


def test_live(cd, tmp_path):
    """A short run here: every chart of a run without root drawn with its
    data, the parts' JSON embedded and complete, in Chromium too."""
    out = tmp_path / "live.html"
    top = traceable()
    r = report(cd, "-d", "0.1", "-o", str(out), *(["--top", "1"] if top else []), timeout=180)
    assert r.rc in (0, 1, 2), r.err
    page = out.read_text()
    charts = [c for c in LIVE_CHARTS] + (["top"] if top else [])
    data = embedded(page)
    if not data["data-tsc"]["sync"]["pairs"]:
        charts.remove("warp")  # one CPU allowed: no pair to test
    check_page(page, charts)
    assert {"data-check", "data-bench", "data-tsc", "data-accuracy"} <= set(data)
    check_findings(page, data["data-check"])
    for c in data["data-accuracy"]["clocks"]:
        assert c["timeline"]["slices"] and c["histogram"]
    check_seen(page, tmp_path, charts)


def command_files(cd, tmp_path):
    """The JSON files a customer would send: each command's --json."""
    files = []
    for name, args in [("check", ["check", "--json"]), ("bench", ["bench", "--json", "-d", "0.1", "-c", "monotonic,"
                                                                 "monotonic/syscall,rdtsc,fc_now_ns"]),
                       ("tsc", ["tsc", "--json", "-d", "0.05"]), ("accuracy", ["accuracy", "--json", "-d", "0.1"])]:
        r = cd(*args, timeout=120)
        assert r.out.strip(), (name, r.err)
        f = tmp_path / (name + ".json")
        f.write_text(r.out)
        files.append(f)
    # top's lines, as `top --json` writes them (made up: tracing needs root)
    lines = [{"tool": "clockdoctor", "command": "top", "time": 1000 + i, "seconds": 1.0, "interval": 1,
              "total": {"calls_per_s": 100.0 * i, "calls": 100 * i},
              "processes": [{"pid": 42, "comm": "spin", "calls": 100 * i, "calls_per_s": 100.0 * i}]}
             for i in range(1, 6)]
    f = tmp_path / "top.json"
    f.write_text("".join(json.dumps(l) + "\n" for l in lines))
    files.append(f)
    return files


def test_from_files(cd, tmp_path):
    files = command_files(cd, tmp_path)
    args = []
    for f in files:
        args += ["--from", str(f)]
    r = report(cd, *args)
    assert r.rc in (0, 1, 2), r.err
    page = r.out
    charts = list(ALL_CHARTS)
    data = embedded(page)
    if not data["data-tsc"]["sync"]["pairs"]:
        charts.remove("warp")
    check_page(page, charts)
    assert len(data["data-top"]) == 5
    for name in ("check", "bench", "tsc", "accuracy"):
        assert data["data-" + name] == json.loads((tmp_path / (name + ".json")).read_text())
    check_seen(page, tmp_path, charts)
    # what is not JSON, not a command's, or twice the same is refused
    (tmp_path / "bad.json").write_text('{"command": "fix"}')
    (tmp_path / "junk.json").write_text("not json <script>")
    for bad, words in [("bad.json", "not the JSON of"), ("junk.json", "not JSON")]:
        r = report(cd, "--from", str(tmp_path / bad))
        assert r.rc == 3 and words in r.err and r.out == ""
    r = report(cd, "--from", str(files[0]), "--from", str(files[0]))
    assert r.rc == 3 and "a second check file" in r.err


def test_checks_catch_a_missing_or_empty_chart(cd, tmp_path):
    """The checks above fail when a chart is missing, has no marks, or is
    drawn empty: a good page, then the same page spoilt three ways."""
    files = command_files(cd, tmp_path)
    page = report(cd, *sum((["--from", str(f)] for f in files), [])).out
    charts = ["cost", "latency", "tsc-freq", "accuracy", "top"]
    check_page(page, charts)
    gone = re.sub(r'<figure class="fig" id="fig-cost".*?</figure>', "", page, flags=re.S)
    with pytest.raises(AssertionError):
        check_page(gone, charts)
    unmarked = re.sub(r'(<figure class="fig" id="fig-top".*?</figure>)',
                      lambda m: m.group(1).replace('class="mark ', 'class="'), page, flags=re.S)
    with pytest.raises(AssertionError):
        check_page(unmarked, charts)
    if shutil.which("chromium") is None and os.environ.get("CI") != "true" and os.environ.get("LAB_REQUIRE") != "1":
        return
    # drawn with nothing to see: every bar of the cost chart zero-sized
    blank = re.sub(r'(<svg class="chart" id="cost-0".*?</svg>)',
                   lambda m: re.sub(r"<(text|line|rect)\b[^>]*?(/>|>.*?</\1>)", "", m.group(1), flags=re.S),
                   page, flags=re.S)
    (tmp_path / "blank").mkdir()
    with pytest.raises(AssertionError, match="empty on screen"):
        check_seen(blank, tmp_path / "blank", ["cost"])


# Markup, script, style breakers, attribute breakers, javascript: URLs, a
# huge string and invalid UTF-8, in the strings a snapshot gives.
EVIL = (b'"><script>alert(1)</script></style><img src=x onerror=alert(2)>'
        b"'><svg onload=alert(3)> javascript:alert(4) <!-- ]]> &amp; \xff\xfe\xc3")


def hostile_snapshot(root):
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    cs = root / "sys/devices/system/clocksource/clocksource0"
    (cs / "current_clocksource").write_bytes(b"hpet" + EVIL + b"\n")
    (cs / "available_clocksource").write_bytes(b"hpet acpi_pm" + EVIL + b"\n")
    (root / "proc/sys/kernel/osrelease").write_bytes(b"6.1.0" + EVIL + b"-56-amd64\n")
    (root / "proc/cmdline").write_bytes(b"console=ttyS0 " + EVIL + b"A" * 200000 + b"\n")
    cpuinfo = (root / "proc/cpuinfo").read_bytes()
    (root / "proc/cpuinfo").write_bytes(cpuinfo.replace(b"model name\t: QEMU", b"model name\t: QEMU" + EVIL))
    dmesg = (root / "dmesg.txt").read_bytes()
    dmesg += (b"[    2.000000] Hypervisor detected: KVM" + EVIL + b"\n"
              b"[    2.100000] clocksource: Switched to clocksource hpet" + EVIL + b"\n"
              b"[    2.200000] tsc: Marking TSC unstable due to " + EVIL + b"\n"
              b"[    2.300000] " + EVIL * 1000 + b"\n")
    (root / "dmesg.txt").write_bytes(dmesg)


def test_hostile_snapshot(cd, tmp_path):
    """Nothing from the snapshot becomes markup, script or a URL: the page
    parses to the same elements as a clean one, in Python and in
    Chromium."""
    root = tmp_path / "snap"
    hostile_snapshot(root)
    r = report(cd, "--root", str(root))
    page = r.out
    p = check_page(page)
    tags = {t for t, _, _ in p.elements}
    assert "img" not in tags
    assert [a for t, a, _ in p.elements if t == "script"] == [{"type": "application/json", "id": "data-check"}]
    assert not [a for t, a, _ in p.elements if any(k.startswith("on") for k in a)]
    assert "<img" not in page and "<script>" not in page and "<svg onload" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert embedded(page)["data-check"]["clocksource"]["current"] is not None
    dom = browse(str(_write(tmp_path / "evil.html", page)), 1000, 1500, str(tmp_path / "evil.png"))
    assert "<img" not in dom and "onerror" not in dom.replace("onerror=alert", "")
    assert dom.count("<script") == 1


def _write(path, text):
    path.write_text(text)
    return path


def test_output_file_replaced_whole(cd, tmp_path):
    """-o replaces the file as a whole and never writes through a link."""
    out = tmp_path / "r.html"
    out.write_text("old")
    r = report(cd, "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "-o", str(out))
    assert r.rc == 2 and r.out == ""
    assert out.read_text().startswith("<!DOCTYPE html>")
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    report(cd, "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "-o", str(link))
    assert target.read_text() == "keep"


def test_hostile_files(cd, tmp_path):
    """Files someone sent, every string made hostile (markup, script, style
    and attribute breakers, javascript: URLs, a megabyte string, U+2028,
    bytes that are not UTF-8): the page has the elements of a clean one,
    stays under 1 MB, and Chromium runs nothing."""
    evil = '"><script>alert(1)</script></style><img src=x onerror=alert(2)>\'><svg onload=alert(3)> javascript:alert(4) \u2028'
    check = cd("check", "--json", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet")).json()
    check["verdict"] += evil
    check["clocksource"]["current"] = evil
    check["kernel"]["release"] = evil + "x" * (1 << 20)
    for f in check["findings"]:
        f["title"] += evil
        f["code"] += evil
        f["evidence"].append(evil)
        f["fix"]["now"] = "$ " + evil + "\n" + evil
    (tmp_path / "check.json").write_bytes(json.dumps(check).encode().replace(b"\\u2028", b"\xff\xfe \\u2028"))
    top = {"command": "top", "time": 5, "seconds": 1, "total": {"calls_per_s": 3},
           "processes": [{"pid": 1, "comm": evil, "calls": 3, "calls_per_s": 3}]}
    (tmp_path / "top.json").write_text(json.dumps(top) + "\n")
    r = report(cd, "--from", str(tmp_path / "check.json"), "--from", str(tmp_path / "top.json"))
    assert r.rc == 2, r.err
    page = r.out
    p = check_page(page, ["top"])
    assert not {"img", "iframe"} & {t for t, _, _ in p.elements}
    # the megabyte check.json is too large to embed, and the page says so
    assert [a["id"] for t, a, _ in p.elements if t == "script"] == ["data-top"]
    assert "too large to embed" in page
    assert "<script>alert" not in page and "<img" not in page and "<svg onload" not in page
    assert "bytes more)" in page
    assert embedded(page)["data-top"][0]["processes"][0]["comm"] == evil
    dom = browse(str(_write(tmp_path / "evil.html", page)), 1000, 1500, str(tmp_path / "evil.png"))
    assert "<img" not in dom and dom.count("<script") == 1
    # without the megabyte, the hostile check.json is embedded and reads back the same
    check["kernel"]["release"] = evil
    (tmp_path / "check.json").write_text(json.dumps(check))
    page = report(cd, "--from", str(tmp_path / "check.json")).out
    check_page(page)
    assert embedded(page)["data-check"] == check
    assert "<script>alert" not in page


def test_large_machine(cd, tmp_path):
    """The warp test of every pair of 64 CPUs (2016 pairs, as `tsc --json`
    writes them there), one pair failed: every pair a cell with its numbers,
    the failed one crossed and titled, the page under 1 MB (the tsc JSON too
    large to embed, and said so), and the matrix drawn on screen."""
    tsc = cd("tsc", "--json", "-d", "0.05", "--quick").json()
    pair = dict(tsc["sync"]["pairs"][0]) if tsc["sync"]["pairs"] else {
        "error": None, "backward_steps": 0, "offset_ns": 0, "uncertainty_ns": 100}
    pairs = []
    for a in range(64):
        for b in range(a + 1, 64):
            p = dict(pair, cpu_a=a, cpu_b=b, offset_ns=(a * 7 - b * 3) % 90 - 45.0, uncertainty_ns=40.0,
                     backward_steps=5 if (a, b) == (3, 41) else 0, max_backward_ns=120 if (a, b) == (3, 41) else 0)
            pairs.append(p)
    tsc["sync"]["pairs"] = pairs
    (tmp_path / "tsc.json").write_text(json.dumps(tsc, indent=2))
    page = report(cd, "--from", str(tmp_path / "tsc.json")).out
    check_page(page, ["warp", "tsc-freq"] if tsc["frequency"]["measured_hz"] else ["warp"])
    assert page.count('class="mark cell ') == 2016
    assert re.search(r'class="mark cell h\d fail"[^>]*data-a="3" data-b="41"[^>]*><title>CPU 3 - CPU 41: [^<]*FAILED', page)
    assert "too large to embed" in page and "data-tsc" not in embedded(page)
    check_seen(page, tmp_path, ["warp"])


def test_terminal_is_refused():
    """No page of HTML onto a terminal: a usage error, before anything is
    measured."""
    master, slave = os.openpty()
    try:
        p = subprocess.run([BINARY, "report", "-d", "0.05"], stdout=slave, stderr=subprocess.PIPE, text=True,
                           timeout=30)
    finally:
        os.close(slave)
        os.close(master)
    assert p.returncode == 3
    assert "give -o FILE" in p.stderr
