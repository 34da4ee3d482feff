# SPDX-License-Identifier: MIT
"""One meaning per option letter, one name per argument.

Every command's getopt table is read back through the hidden
`clockdoctor --list-options` (util/numarg.c): a short option must stand for
the same long option in every command that takes it, clockdoctor(1)'s
OPTION LETTERS must be exactly that table, a letter a command keeps only to
point elsewhere must say where, and an option's argument must have the same
name in every --help and man page."""
import collections
import re
import subprocess

import pytest

from conftest import BINARY, ROOT
from test_docs import man_section


def option_table():
    """(command, short, long, kind) for every option of every command."""
    p = subprocess.run([BINARY, "--list-options"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    rows = [tuple(line.split("\t")) for line in p.stdout.splitlines()]
    assert rows and all(len(r) == 4 for r in rows), p.stdout
    return rows


def commands():
    return sorted({c for c, *_ in option_table()} - {"clockdoctor"})


def test_every_command_lists_its_options():
    """The list covers the table of src/main.c, and each command's own
    --list-options is its part of the whole."""
    main = re.findall(r'^\t\{ "([a-z]+)", cd_cmd_', (ROOT / "src/main.c").read_text(), re.M)
    assert sorted(main) == commands()
    rows = option_table()
    for cmd in commands():
        p = subprocess.run([BINARY, cmd, "--list-options"], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0
        assert [tuple(line.split("\t")) for line in p.stdout.splitlines()] == [r for r in rows if r[0] == cmd]
        assert (cmd, "-h", "--help", "none") in rows
    for _, short, long, kind in rows:
        assert kind in ("none", "required", "optional", "moved")
        assert re.fullmatch(r"-[A-Za-z]", short) or (not short and long)
        assert re.fullmatch(r"--[a-z][a-z-]*", long) or (kind == "moved" and not long)
        assert long != "--list-options"   # hidden


def letters():
    """{letter: {(long, command), ...}} over the options that have a letter."""
    meaning = collections.defaultdict(set)
    for cmd, short, long, kind in option_table():
        if short and kind != "moved":
            meaning[short].add((long, cmd))
    return meaning


def test_one_meaning_per_letter():
    for short, uses in letters().items():
        assert len({long for long, _ in uses}) == 1, (short, sorted(uses))


def test_one_letter_per_long_option():
    """A long option has the same letter, or none, wherever it is."""
    by_long = collections.defaultdict(set)
    for cmd, short, long, kind in option_table():
        if long:
            by_long[long].add(short)
    for long, shorts in by_long.items():
        assert len(shorts) == 1, (long, shorts)


def test_moved_letters_name_their_option():
    """A letter a command keeps only for the old spelling is refused with
    the option meant, never taken as something else."""
    moved = [(c, s) for c, s, _, kind in option_table() if kind == "moved"]
    assert ("watch", "-P") in moved and ("watch", "-s") in moved
    for cmd, short in moved:
        p = subprocess.run([BINARY, cmd, short, "1"], capture_output=True, text=True, timeout=30)
        assert (p.returncode, p.stdout) == (125 if cmd == "run" else 3, ""), (cmd, short, p.stderr)
        assert re.search(r"%s is -?-?\S+.* now" % short, p.stderr), (cmd, short, p.stderr)


def roff_text(text):
    """A man page's roff as plain words: escapes and macro names dropped, a
    section heading as a separator."""
    text = text.replace("\\-", "-")
    text = re.sub(r"\\f[BIRP]", "", text)
    out = []
    for line in text.splitlines():
        if line.startswith(('.SH', '.\\"')):
            out.append("|")
            continue
        if line.startswith("."):
            parts = line.split(None, 1)
            line = parts[1] if len(parts) > 1 else ""
        out.append(line.replace('"', ""))
    return " ".join(out)


def test_the_letter_table_in_clockdoctor_1():
    """OPTION LETTERS in clockdoctor(1): every letter, its long option and
    the commands that take it, exactly as the getopt tables have them."""
    text = man_section((ROOT / "docs/clockdoctor.1").read_text(), "OPTION LETTERS")
    documented = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\\-([A-Za-z])\t\\-\\-([a-z\\-]+)(?: \\fI[A-Z]+\\fR)?\t(.+)", line)
        if m:
            documented["-" + m.group(1)] = ("--" + m.group(2).replace("\\-", "-"), m.group(3))
    want = {}
    for short, uses in letters().items():
        long = next(iter(uses))[0]
        cmds = sorted(c for _, c in uses)
        if cmds == ["clockdoctor"]:
            where = "clockdoctor alone"
        elif set(cmds) >= set(commands()):
            where = "every command"
        else:
            where = " ".join(cmds)
        want[short] = (long, where)
    assert documented == want


def argument_names(cmd, text, found):
    """Each `--long ARG` or `-x ARG` of text into found[long]: {(ARG, where)}."""
    short_to_long = {(c, s): lo for c, s, lo, _ in option_table() if s and lo}
    for m in re.finditer(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])[ =]([a-z]+\|[A-Z]+|[A-Z][A-Z_]*)\b", text):
        opt, arg = m.groups()
        found[short_to_long.get((cmd, opt), opt)].add((arg, cmd))


def test_one_name_per_argument():
    """An option's argument is named alike in every usage line, option list
    and man page (`--to CLOCKSOURCE`, never `--to NAME` elsewhere)."""
    found = collections.defaultdict(set)
    for cmd in commands():
        help_text = subprocess.run([BINARY, cmd, "--help"], capture_output=True, text=True,
                                   timeout=30).stdout.split("\nexamples:")[0]
        argument_names(cmd, help_text, found)
        argument_names(cmd, roff_text((ROOT / "docs" / ("clockdoctor-%s.1" % cmd)).read_text()), found)
    argument_names("clockdoctor", roff_text(man_section((ROOT / "docs/clockdoctor.1").read_text(),
                                                    "OPTION LETTERS")), found)
    for cmd in commands():
        page = ROOT / "docs" / ("%s.md" % cmd)
        if page.exists():
            argument_names(cmd, page.read_text(), found)
    required = {lo for _, _, lo, kind in option_table() if kind == "required"}
    assert required <= set(found), required - set(found)
    for opt, names in found.items():
        assert len({a for a, _ in names}) == 1, (opt, sorted(names))


@pytest.mark.parametrize("cmd", ["check", "watch", "fix", "snapshot", "top"])
def test_usage_line_and_option_list_agree(cmd):
    """Each option of the usage line is in the option list below it."""
    out = subprocess.run([BINARY, cmd, "--help"], capture_output=True, text=True, timeout=30).stdout
    usage, rest = out.split("\n\n", 1)
    for opt in set(re.findall(r"(--[a-z][a-z-]*)", usage)):
        assert re.search(r"^ +(-[A-Za-z], )?%s\b" % opt, rest, re.M), (cmd, opt)


def test_the_pages_option_tables_use_the_letters():
    """docs/COMMAND.md's option tables give each long option its letter, or
    none where it has none."""
    letter = {(c, lo): s for c, s, lo, kind in option_table() if lo}
    seen = 0
    for cmd in commands():
        page = ROOT / "docs" / ("%s.md" % cmd)
        if not page.exists():
            continue
        for m in re.finditer(r"^\| `(?:(-[A-Za-z])`?, `?)?(--[a-z][a-z-]*)[ `]", page.read_text(), re.M):
            short, long = m.groups()
            assert (cmd, long) in letter, (page.name, long)
            assert (short or "") == letter[(cmd, long)], (page.name, short, long)
            seen += 1
    assert seen >= 30, seen
