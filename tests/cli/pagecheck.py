# SPDX-License-Identifier: MIT
"""What a program checks of a page `clockdoctor report` wrote: parsed
strictly (every element closed in order, ids unique, each <svg> well-formed
XML), under 1 MB, no URL and nothing to fetch or run, the verdict, findings
and figures in that order, and each chart asked for drawn with its data in
its marks.  Shared by tests/cli/test_report.py and the lab's report-hpet
scenario; plain Python, no pytest."""
import html.parser
import json
import re
import xml.etree.ElementTree as ET

MAX_BYTES = 1 << 20
VOID = {"meta", "br", "link", "img", "input", "hr", "col", "area", "base", "embed", "source", "track", "wbr"}
LIVE_CHARTS = ("cost", "latency", "tsc-freq", "warp", "accuracy")
ALL_CHARTS = LIVE_CHARTS + ("top",)


# ---- the checks a program makes ----

class StrictParser(html.parser.HTMLParser):
    """Every element closed in order, no stray end tag, ids unique, and the
    elements, attributes and text collected for the checks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.elements = [], [], set(), []
        self.decl = None

    def handle_decl(self, decl):
        self.decl = decl

    def handle_starttag(self, tag, attrs):
        self._element(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._element(tag, attrs)

    def _element(self, tag, attrs):
        a = dict(attrs)
        if len(a) != len(attrs):
            self.errors.append("duplicate attribute in <%s>" % tag)
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append("duplicate id %r" % a["id"])
            self.ids.add(a["id"])
        self.elements.append((tag, a, list(self.stack)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes %r" % (tag, self.stack[-1:]))
            return
        self.stack.pop()


def svgs(page):
    return re.findall(r"<svg\b.*?</svg>", page, re.S)


def check_page(page, charts=(), empty_ok=ALL_CHARTS):
    """A page as a program reads it; charts: the figures that must be drawn
    with data.  Returns the parser (elements) for more checks."""
    raw = page.encode()
    assert len(raw) < MAX_BYTES, "page of %d bytes" % len(raw)
    raw.decode("utf-8")  # valid UTF-8 throughout
    p = StrictParser()
    p.feed(page)
    p.close()
    assert p.decl and p.decl.lower() == "doctype html"
    assert not p.errors, p.errors[:5]
    assert not p.stack, "left open: %s" % p.stack
    for s in svgs(page):
        ET.fromstring(s)  # well-formed XML, or it raises
    # no URL, no way to fetch or run anything
    for tag, a, _ in p.elements:
        assert tag not in ("img", "iframe", "link", "object", "embed", "base", "a", "form", "image", "use"), tag
        for k, v in a.items():
            assert not k.startswith("on"), (tag, k)
            assert k not in ("src", "href", "srcset", "xlink:href", "action", "style"), (tag, k)
    # The markup: the page without its text (a fix may tell of an apt source
    # "deb http://...": words to read, not a link) or its data.
    markup = re.sub(r"<script type=\"application/json\".*?</script>", "", page, flags=re.S)
    markup = re.sub(r">[^<]*<", "><", markup)
    # data-* values are data (a finding's code, a process's name), never fetched
    markup = re.sub(r' data-[a-z-]+="[^"]*"', "", markup)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    for bad in ("http:", "https:", "url(", "@import", "javascript:", "//"):
        assert bad not in markup.lower(), bad
        assert bad not in style.lower(), bad
    scripts = [a for t, a, _ in p.elements if t == "script"]
    assert all(a.get("type") == "application/json" for a in scripts), scripts
    # the verdict first, then findings, then figures
    order = [page.find('id="verdict"'), page.find('id="findings"'), page.find('id="figures"')]
    assert -1 not in order and order == sorted(order), order
    # every figure there; those asked for drawn, with data in their marks
    figs = {a["data-chart"]: a for t, a, _ in p.elements if t == "figure"}
    assert set(ALL_CHARTS) <= set(figs), sorted(figs)
    for c in charts:
        assert "data-empty" not in figs[c], "chart %s is empty: %s" % (c, figs[c])
        marks = [(t, a) for t, a, stack in p.elements if "mark" in a.get("class", "").split()
                 and "figure" in stack and _in_figure(p.elements, c, a)]
        assert marks, "chart %s has no marks" % c
        for t, a in marks:
            assert any(k.startswith("data-") for k in a), (c, t, a)
    for c in set(ALL_CHARTS) - set(charts) - set(empty_ok):
        assert "data-empty" not in figs[c], c
    return p


def _in_figure(elements, chart, attrs):
    """Whether the element with attrs lies inside the figure of chart."""
    inside = False
    for t, a, stack in elements:
        if t == "figure":
            inside = a.get("data-chart") == chart
        if a is attrs:
            return inside
    return False


def embedded(page):
    """The JSON the page carries, by id."""
    out = {}
    for m in re.finditer(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S):
        out[m.group(1)] = json.loads(m.group(2))
    return out
