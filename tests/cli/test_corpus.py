# SPDX-License-Identifier: MIT
"""Every snapshot in tests/fixtures against the diagnosis its expected.json says is right.

Each folder holds what a real case showed (tests/fixtures/README.md names its source) and an
expected.json written from what the case's thread concluded, not from what the tool says:

  status        "ok" | "warning" | "critical" | "unknown", or a list of the acceptable ones
  fire          codes that must be among the findings
  quiet         codes that must not be among them
  quote         {code: [text, ...]}: each text verbatim in that finding's title or evidence
                (the kernel's own numbers, as the kernel printed them)
  said_lacks    {code: [text, ...]}: no text in that finding's title or evidence (a
                figure the kernel never printed)
  advice_has    {code: [text, ...]}: each text in that finding's fix (now, lasting,
                hypervisor, risk)
  advice_lacks  [text, ...]: in no finding's fix at all (advice that would be wrong or unsafe)
  hypervisor    the hypervisor's name in the JSON (hypervisor.name)
  clocksource   the current clocksource in the JSON
  known_wrong   one line: what the tool gets wrong today and which class of error it is.
                The case then runs as a strict xfail: it fails loudly once the tool is
                right, and the mark must come off.
"""
import json

import pytest

from conftest import FIXTURES, codes

EXIT = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}
KEYS = {"source", "status", "fire", "quiet", "quote", "said_lacks", "advice_has", "advice_lacks",
        "hypervisor", "clocksource", "known_wrong"}


def load(folder):
    with open(folder / "expected.json", encoding="utf-8") as f:
        exp = json.load(f)
    unknown = set(exp) - KEYS
    assert not unknown, f"{folder.name}/expected.json: unknown keys {sorted(unknown)}"
    return exp


def cases():
    out = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        if not (folder / "expected.json").exists():
            continue
        wrong = load(folder).get("known_wrong")
        marks = [pytest.mark.xfail(strict=True, reason=wrong)] if wrong else []
        out.append(pytest.param(folder.name, marks=marks, id=folder.name))
    return out


def said(finding):
    return finding["title"] + "\n" + "\n".join(finding["evidence"])


def fix_text(finding):
    fix = finding.get("fix") or {}
    return "\n".join(v for v in fix.values() if isinstance(v, str))


def test_every_fixture_has_expected():
    missing = [p.name for p in FIXTURES.iterdir()
               if p.is_dir() and not (p / "expected.json").exists()]
    assert not missing, f"fixtures without expected.json: {missing}"


def test_expected_files_are_well_formed():
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        exp = load(folder)
        status = exp["status"]
        for s in status if isinstance(status, list) else [status]:
            assert s in EXIT, (folder.name, s)
        assert exp["source"], folder.name
        assert not set(exp.get("fire", [])) & set(exp.get("quiet", [])), folder.name
        for code in (list(exp.get("quote", {})) + list(exp.get("said_lacks", {}))
                     + list(exp.get("advice_has", {}))):
            assert code in exp.get("fire", []), (folder.name, code, "quoted but not in fire")
        if "known_wrong" in exp:
            assert exp["known_wrong"].strip() and "\n" not in exp["known_wrong"], folder.name


@pytest.mark.parametrize("name", cases())
def test_case(cd, name):
    exp = load(FIXTURES / name)
    r = cd("check", "--json", "--root", str(FIXTURES / name))
    doc = r.json()
    assert r.rc == EXIT[doc["status"]], r.err
    found = codes(doc)
    seen = sorted((f["code"], f["severity"]) for f in doc["findings"])

    want = exp["status"]
    assert doc["status"] in (want if isinstance(want, list) else [want]), seen
    for code in exp.get("fire", []):
        assert code in found, (code, seen)
    for code in exp.get("quiet", []):
        assert code not in found, (code, seen)
    for code, texts in exp.get("quote", {}).items():
        for t in texts:
            assert t in said(found[code]), (code, t, said(found[code]))
    for code, texts in exp.get("said_lacks", {}).items():
        for t in texts:
            assert t not in said(found[code]), (code, t, said(found[code]))
    for code, texts in exp.get("advice_has", {}).items():
        advice = fix_text(found[code])
        for t in texts:
            assert t in advice, (code, t, advice)
    for t in exp.get("advice_lacks", []):
        for f in doc["findings"]:
            assert t not in fix_text(f), (f["code"], t)
    if "hypervisor" in exp:
        assert doc["hypervisor"]["name"] == exp["hypervisor"]
    if "clocksource" in exp:
        assert (doc["clocksource"] or {}).get("current") == exp["clocksource"]
