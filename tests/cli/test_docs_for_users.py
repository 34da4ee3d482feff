# SPDX-License-Identifier: MIT
"""The documentation is written for users: no word of the project's own
history, the README's words explained, its layout picture true to the tree,
every page listed and every link leading somewhere."""
import re
import subprocess

from conftest import ROOT

DOCS = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").iterdir()
                                     if p.suffix in (".md", ".txt", ".1", ".3"))

# Words that speak of how the project was made, not of what it does: its
# issue tracker, its working sessions and their stops, who merges.
HISTORY = re.compile(r"\bissues?\b|\bsessions?\b|\bstops? \d+|\bstop #?\d+|\bthe lead\b|"
                     r"\b(?:issue|stop|PR|pull request) #\d+", re.I)


def test_no_history_in_the_docs():
    found = []
    for p in DOCS:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if HISTORY.search(line):
                found.append("%s:%d: %s" % (p.relative_to(ROOT), n, line.strip()))
    assert not found, "\n".join(found)


def readme_section(title):
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    assert m, title
    return m.group(1)


def test_two_commands():
    block = re.search(r"```\n(.*?)```", readme_section("Two commands"), re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make && ./build/clockdoctor check", "make test"]


# Each term the README uses, as the glossary names it.
TERMS = ["clocksource", "TSC", "hpet, acpi_pm", "kvm-clock, xen", "system call", "vDSO", "kernel log",
         "watchdog", "VM, vCPU, hypervisor", "TCG", "NTP, chrony", "seccomp", "node_exporter, textfile",
         "LD_PRELOAD, accelerator", "re-anchor", "snapshot", "finding"]


def test_the_glossary_explains_the_readmes_words():
    glossary = readme_section("Glossary")
    defined = re.findall(r"^- \*\*([^*]+)\*\*", glossary, re.M)
    for term in TERMS:
        assert any(d == term or d.startswith(term + " (") for d in defined), term
    # each is a sentence, not a bare word
    for entry in re.split(r"\n(?=- \*\*)", glossary.strip()):
        assert len(entry) > 60, entry
    # a word of the README that wants explaining is in the glossary
    readme = (ROOT / "README.md").read_text()
    for word in ("vDSO", "TSC", "TCG", "seccomp", "LD_PRELOAD", "re-anchor", "ring", "textfile"):
        if re.search(r"\b%s" % re.escape(word), readme.replace(glossary, "")):
            assert re.search(r"\b%s" % re.escape(word), glossary), word


def test_fleet_section_points_to_the_operators_page():
    fleet = readme_section("Fleet")
    assert "(docs/operators.md)" in fleet
    assert len([l for l in fleet.splitlines() if l.strip()]) <= 12


def test_the_layout_picture_names_every_folder():
    """The README's picture of the tree names every top-level folder, every
    layer of src/ and every kind of test."""
    block = re.search(r"```\n(.*?)```", readme_section("Layout"), re.S).group(1)
    git = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if git.returncode == 0 and git.stdout:
        tops = {f.split("/")[0] for f in git.stdout.splitlines() if "/" in f}
    else:   # a copy outside git: its folders, less what builds and tools leave
        tops = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(("build", "__"))
                and (p.name == ".ci" or not p.name.startswith("."))}
    for name in tops:
        if name == ".ci":
            assert ".ci/run" in block
        elif name == "bench":  # its two rooms named on bench/'s line
            assert re.search(r"^bench/ .*served\.c.*peers/", block, re.M), block
        else:
            assert re.search(r"(^|\s)%s/" % re.escape(name), block, re.M), name
    for layer in (p.name for p in (ROOT / "src").iterdir() if p.is_dir()):
        assert re.search(r"^\s+%s/" % layer, block, re.M), layer
    for kind in (p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert "%s/" % kind in block, kind


def test_the_index_lists_every_page_and_links_lead_somewhere():
    index = (ROOT / "docs/README.md").read_text()
    for p in (ROOT / "docs").iterdir():
        if p.suffix in (".md", ".txt") and p.name != "README.md":
            assert "](%s)" % p.name in index, p.name
    for p in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", p.read_text()):
            if "://" in target:
                continue
            assert (p.parent / target).exists(), (p.name, target)


def test_changelog_names_the_release_and_every_command():
    """CHANGELOG.md keeps Keep a Changelog's layout, has the version the
    Makefile builds, and no command a user can run is missing from it."""
    text = (ROOT / "CHANGELOG.md").read_text()
    version = re.search(r"^VERSION\s*[:?]?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "## [Unreleased]" in text and re.search(r"^## \[%s\] - \d{4}-\d\d-\d\d$" % re.escape(version),
                                                    text, re.M), version
    for sub in re.findall(r'\{ "([a-z]+)", cd_cmd_', (ROOT / "src" / "main.c").read_text()):
        assert "`%s`" % sub in text or "`clockdoctor %s" % sub in text, sub
