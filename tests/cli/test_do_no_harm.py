# SPDX-License-Identifier: MIT
"""First, do no harm: advice that switches a kernel check of the TSC off (tsc=reliable,
tsc=nowatchdog, nowatchdog) or forces the TSC against the kernel's choice (clocksource=tsc)
is given only on evidence.

Every snapshot in tests/fixtures goes through check, fix's plan and fix --persist --dry-run:
such a parameter may be advised only after the step that measures the TSC (`clockdoctor
tsc`, "only if it says sound"), or on the evidence the text names (a sound verdict of the
boot, a platform's documented guarantee).  With an unsound verdict planted in a copy, never;
with a sound one, still never where the log says the TSC is bad.  And no source file but
src/diagnose/tscgate.c writes such a parameter as advice.
"""
import json
import pathlib
import re
import shutil

import pytest

from conftest import FIXTURES, ROOT, plant_verdict

# A parameter that trusts the TSC, as a word of a text.
TRUSTING = re.compile(r"(?<![\w.-])(tsc=reliable|tsc=nowatchdog|clocksource=tsc|clock=tsc|nowatchdog)"
                      r"(?![\w-]|\.\w)")
# What says such a parameter without advising it.
NOT_ADVICE = [
    re.compile(r"Do not add tsc=reliable[^.]*"),
    re.compile(r"(tsc=reliable|tsc=nowatchdog) is already on the command line"),
    re.compile(r"The command line has tsc=\S+, which the kernel ignores"),
]
MEASURE = "$ clockdoctor tsc"
EVIDENCE = "The evidence for trusting the TSC: "
FIELDS = ("now", "lasting", "hypervisor")  # the risk says what a parameter would do

FOLDERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def harmful(text):
    """The first place text advises trusting the TSC without the measurement before it or
    the evidence named; None when it does not."""
    for pat in NOT_ADVICE:
        text = pat.sub(lambda m: "x" * len(m.group(0)), text)
    for m in TRUSTING.finditer(text):
        before = text[:m.start()]
        if MEASURE in before and "Only if it says sound" in before:
            continue
        if EVIDENCE in before:
            continue
        return text[max(0, m.start() - 120):m.end() + 40]
    return None


def check_doc(cd, root):
    r = cd("check", "--json", "--root", str(root))
    assert r.rc in (0, 1, 2, 3), r.err
    return r.json()


def advice_of(doc):
    for f in doc["findings"]:
        for k in FIELDS:
            yield f["code"], k, (f.get("fix") or {}).get(k) or ""


def test_harmful_finds_the_unguarded_forms():
    """The test's own reader: what it must catch and what it must let pass."""
    assert harmful("Add tsc=reliable to the kernel command line")
    assert harmful("booting with clocksource=tsc is the usual cure")
    assert harmful("install a kernel 3.3 or later, then add tsc=reliable.")
    assert harmful("$ grubby --update-kernel=ALL --args=tsc=nowatchdog")
    assert harmful("Add nowatchdog")
    assert not harmful("Do not add tsc=reliable, tsc=nowatchdog or clocksource=tsc here: a warp.")
    assert not harmful("First measure ...\n$ clockdoctor tsc\nOnly if it says sound, make the kernel "
                       "keep the TSC:\nAdd tsc=reliable to the kernel command line")
    assert harmful("$ clockdoctor tsc\nAdd tsc=reliable")  # measured, but not conditional
    assert not harmful("clocksource=tsc-early") and not harmful("tsc=noirqtime")


@pytest.mark.parametrize("name", FOLDERS)
def test_check_advises_no_unmeasured_trust(cd, name):
    doc = check_doc(cd, FIXTURES / name)
    for code, field, text in advice_of(doc):
        bad = harmful(text)
        assert bad is None, (name, code, field, bad)


@pytest.mark.parametrize("name", FOLDERS)
def test_fix_plans_no_unmeasured_trust(cd, name):
    """fix's plan, and what --persist --dry-run would write: a parameter that trusts the TSC
    only where the finding it comes from names its evidence."""
    root = str(FIXTURES / name)
    doc = check_doc(cd, root)
    lasting = {f["code"]: (f.get("fix") or {}).get("lasting") or "" for f in doc["findings"]}
    for args in (("fix", "--root", root, "--json"),
                 ("fix", "--root", root, "--persist", "--dry-run", "--json")):
        r = cd(*args)
        out = r.json()
        for p in out["plan"]["params"]:
            if p["action"] == "add" and TRUSTING.search(p["token"]):
                assert all(EVIDENCE in lasting[c] for c in p["findings"]), (name, args, p)
        if not any(p["action"] == "add" and TRUSTING.search(p["token"]) for p in out["plan"]["params"]):
            steps = json.dumps(out["plan"].get("persist_steps") or "")
            assert not TRUSTING.search(steps.replace("clocksource=tsc-", "")), (name, steps[:300])


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Every fixture, copied, to plant verdicts in."""
    base = tmp_path_factory.mktemp("fixtures")
    for name in FOLDERS:
        shutil.copytree(FIXTURES / name, base / name, symlinks=True)
    return base


def lacks_trust(name):
    with open(FIXTURES / name / "expected.json", encoding="utf-8") as f:
        return "Add tsc=" in json.load(f).get("advice_lacks", [])


@pytest.mark.parametrize("name", FOLDERS)
def test_verdicts_of_the_boot(cd, copies, name):
    """Unsound on the snapshot's boot: no parameter that trusts the TSC, in any form.  Sound:
    outright advice says its evidence, and a log that says the TSC is bad still wins."""
    root = copies / name
    plant_verdict(root, "unsound")
    for code, field, text in advice_of(check_doc(cd, root)):
        for pat in NOT_ADVICE:
            text = pat.sub("", text)
        assert not TRUSTING.search(text), (name, code, field, text[:300])
    plan = cd("fix", "--root", str(root), "--json").json()["plan"]
    assert not any(TRUSTING.search(p["token"]) for p in plan["params"] if p["action"] == "add"), name

    plant_verdict(root, "sound")
    doc = check_doc(cd, root)
    for code, field, text in advice_of(doc):
        assert harmful(text) is None, (name, code, field, harmful(text))
        if lacks_trust(name):
            assert "Add tsc=" not in text and "Add clocksource=tsc" not in text, (name, code, field)


# ---- no path around the gate ----

SRC = ROOT / "src"
GATE = SRC / "diagnose" / "tscgate.c"
# Sentences that name such a parameter without advising it: what it would do (risk), that it
# is on the command line already, that it cannot help, that it must not be added.
DESCRIPTIVE = re.compile(
    r"^\"?(With tsc=|tsc=reliable is (on|in force|already)|tsc=reliable cannot help|"
    r"platform code\), not for tsc=reliable|Do not add tsc=reliable|clocksource=tsc only changes|"
    r"forcing the kernel to trust it \(tsc=reliable\))")
# Bare parameter names that are not advice where they stand, each with the reason.
BARE = {
    ("probe", "kernel.c"): "reads the command line",
    ("diagnose", "plan.c"): "tells a planned parameter that keeps the TSC from one that pins another",
    ("diagnose", "context.c"): "cd_tsc_params: which parameter, for the gate to advise",
    ("diagnose", "lastingfix.c"): "names what is already on the command line",
}


def literals(path):
    """(line number, string literal) of a C file, comments left out."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), path.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    for n, line in enumerate(text.split("\n"), 1):
        for lit in re.findall(r'"(?:[^"\\]|\\.)*"', line):
            yield n, line, lit


def test_no_source_writes_trust_around_the_gate():
    """Outside tscgate.c a literal naming such a parameter is a description, an argument to
    cd_advise_trust_tsc, or a bare name in a file that reads or classifies it."""
    wrong = []
    for path in sorted(SRC.rglob("*.[ch]")):
        if path == GATE:
            continue
        for n, line, lit in literals(path):
            if not TRUSTING.search(lit):
                continue
            bare = TRUSTING.fullmatch(lit.strip('"'))
            if bare and ("cd_advise_trust_tsc(" in line or (path.parent.name, path.name) in BARE):
                continue
            if not bare and DESCRIPTIVE.search(lit.strip()):
                continue
            wrong.append("%s:%d: %s" % (path.relative_to(ROOT), n, lit))
    assert not wrong, "advice that trusts the TSC outside the gate:\n" + "\n".join(wrong)


def test_only_the_gate_and_the_refusing_path_write_parameters():
    """The kernel command line's text is written by cd_fix_add_kernel_params: only through
    cd_act_add_params (which refuses a parameter that trusts the TSC) and the gate."""
    callers = sorted(str(p.relative_to(ROOT)) for p in SRC.rglob("*.c")
                     if "cd_fix_add_kernel_params(" in p.read_text() and p.name != "fixes.c")
    assert callers == ["src/diagnose/finding.c", "src/diagnose/tscgate.c"], callers
    finding = (SRC / "diagnose" / "finding.c").read_text()
    body = finding[finding.index("void cd_act_add_params("):]
    assert body.index("cd_param_trusts_tsc(params)") < body.index("cd_fix_add_kernel_params(")


def test_snapshot_carries_the_verdict(cd, tmp_path):
    """snapshot saves the verdict with its boot's id; check --root then advises outright, and
    says on what evidence."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", src, symlinks=True)
    plant_verdict(src, "sound")
    out = tmp_path / "out"
    assert cd("snapshot", "--root", str(src), str(out)).rc == 0
    assert (out / "run/clockdoctor/tsc-verdict").read_text() == \
        (src / "run/clockdoctor/tsc-verdict").read_text()
    lasting = {f["code"]: f["fix"]["lasting"] or "" for f in check_doc(cd, out)["findings"]}
    assert lasting["slow-clocksource"].startswith(EVIDENCE + "`clockdoctor tsc` measured the TSC sound")
    assert "Only if it says sound" not in lasting["slow-clocksource"]
