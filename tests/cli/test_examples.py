# SPDX-License-Identifier: MIT
"""Every command example in the documentation runs.

Examples are taken from:
  - README.md and docs/*.md: in a fenced block, each `$ ` line; in a block
    without one, each line of a block made only of commands (a line that
    starts with clockdoctor, sudo, make, apt, dnf, systemctl, journalctl, python3, an
    environment assignment or a comment);
  - the man pages, docs/*.1 and docs/*.3: each `$ ` line and each line that
    starts a clockdoctor command, in .EX/.EE and .nf/.fi blocks;
  - `clockdoctor --help` and every command's --help (the commands are read
    from `clockdoctor --list-options`, so a new command's examples are taken
    without a word here): the lines under "examples:".
A line ending in a backslash (after `$ `, also one ending in a pipe) goes on
on the next.  A block holding a usage synopsis (`[-`) and a line of output
(`clockdoctor CMD: ...`) hold no examples.

Each runs under `bash -o pipefail -O failglob` (an unquoted `[]` that the
shell would glob is an error, as it is waiting to be one), in a folder of its
own, with `clockdoctor` on PATH the binary under test, and nothing of this
machine changed:
  - CLOCKDOCTOR_SYSFS is a fake sysfs (clocksource tsc, available tsc hpet
    acpi_pm): a clocksource switch (bench --clocksources, bench --restore)
    writes there;
  - CLOCKDOCTOR_STATE_DIR is the example's folder (tsc's verdict, bench's
    restore record);
  - CLOCKDOCTOR_KMSG is an empty file: watch follows it, not /dev/kmsg.

SUBSTITUTIONS (applied to the example's text, in this order; what they stand
for is the same command, shorter or in a scratch place):
  | in the text                              | run as                                  |
  |------------------------------------------|-----------------------------------------|
  | sudo CMD                                 | CMD (skipped unless the test runs as root) |
  | /var/lib/prometheus/node-exporter/,      | $W/textfile/ (a scratch textfile folder) |
  |   /var/lib/node_exporter/textfile_collector/ |                                      |
  | $DIR                                     | $W/textfile                             |
  | /tmp                                     | $W/tmp                                  |
  | --root tests/fixtures/NAME               | --root $W/fixtures/NAME (a copy)        |
  | --root PATH that no earlier command makes | PATH made first, a copy of a fixture    |
  | --from CMD.json that is not there         | made first: CMD --json (check on a snapshot) |
  | fix --persist / --undo without --root    | fix --root COPY --persist / --undo      |
  | redis-server /etc/redis/redis.conf       | redis-server --version (no server kept running) |
  | ./server ARGS, app.py                    | a program that exits 0, an empty script |
  | top -p PID                               | top -p $$ (a live process)              |
  | bench (default 2 s), -d N                | -d 0.2  (--calls N: at most 20000)      |
  | accuracy (default 10 s), -d N            | -d 0.3                                  |
  | tsc (default 1 s), -d N                  | -d 0.05                                 |
  | top (until Ctrl-C), INTERVAL COUNT, -d N | 0.2 2, -d 0.3, -i 0.2                   |
  | watch (until SIGTERM), -d N, -i N        | -d 0.3, -i 0.1                          |

Expected status: 0, unless the text shows another: a `$ ` example whose
output begins with OK:, WARNING:, CRITICAL: or UNKNOWN: on a snapshot
(--root, the same everywhere) must exit 0, 1, 2 or 3; and where the status
is the verdict on this machine (check 0-2, tsc 0-2, accuracy 0-1, fix's plan
0-1, "nothing can be done here"), any verdict is a result.

ALLOWED lists, each with its reason, the examples that are not run; an entry
that matches no example any more fails, so the list stays true.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import BINARY, CS, FIXTURES, ROOT, live_clocksource, need_tool, plant_verdict

# (pattern searched in the example's text, why it is not run)
ALLOWED = [
    (r"^make\b|&& \./build/clockdoctor", "builds or tests this tree: the suite runs after `make` and is `make test`"),
    (r"^(apt|dnf) install", "installs packages on this machine: tests/pkg installs them into an empty root"),
    (r"^systemctl ", "enables services on this machine: tests/cli/test_units_systemd.py runs the units "
                     "under systemd-nspawn"),
    (r"^journalctl -u clockdoctor", "reads the journal of units this machine need not run: "
                                    "tests/cli/test_units_systemd.py reads theirs"),
    (r"^python3 (-m pytest )?tests/lab", "boots a QEMU guest for minutes: `make lab`"),
    (r"clockdoctor fix --apply", "switches this machine's clocksource and keeps it only if a call got "
                                 "cheaper, which a fake sysfs cannot make happen: tests/cli/test_fix.py "
                                 "runs --apply against one, tests/lab in a guest"),
    (r"clockdoctor watch .*(-e|--exec) ", "runs its hook on this machine's events: tests/cli/test_watch.py "
                                          "runs --exec against a fake sysfs and log"),
    (r"^\./spin |perf stat|top --json 5 1 > top\.json &", "a measurement recorded with a program and a "
                                                          "tool that do not ship (./spin, perf): "
                                                          "tests/cli/test_top.py checks the counts"),
]

SNAPSHOT_FIXTURE = "qemu-tcg-smp2-hpet"

# A command: optional environment assignments, sudo, taskset, then clockdoctor.
COMMAND = re.compile(r"^(?:[A-Z_]+=\S*\s+)*(?:sudo\s+)?(?:taskset\s+-c\s+\S+\s+)?(?:\./build/)?clockdoctor(?:\s|$)")
SHELL_LINE = re.compile(r"^(?:#|make\b|apt\b|apt-get\b|dnf\b|systemctl\b|journalctl\b|python3\b|sudo\b|[A-Z_]+=)")
OUTPUT_LINE = re.compile(r"^clockdoctor [a-z]+:")


class Example:
    def __init__(self, where, text, shown=None, output=()):
        self.where, self.text, self.shown = where, text.strip(), shown
        self.output = [line for line in output if line.strip()]

    def __repr__(self):
        return "%s: %s" % (self.where, self.text)


def joined(lines):
    """(index, line) with backslash-continued lines joined."""
    out, buf, start = [], "", None
    for i, line in enumerate(lines):
        if start is None:
            start = i
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        out.append((start, buf + line))
        buf, start = "", None
    if buf:
        out.append((start, buf))
    return out


def shown_status(output_lines):
    for line in output_lines:
        if line.strip():
            m = re.match(r"(OK|WARNING|CRITICAL|UNKNOWN):", line)
            return {"OK": 0, "WARNING": 1, "CRITICAL": 2, "UNKNOWN": 3}[m.group(1)] if m else None
    return None


def block_examples(where, first_line, lines):
    """The examples of one block of lines (a fenced block, a man page's .EX)."""
    if any(line.startswith("$ ") for line in lines):
        found = []
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                text, out = line[2:], []
                for rest in lines[i + 1:]:
                    if rest.startswith("$ "):
                        break
                    if text.rstrip().endswith(("|", "\\")) and not out:
                        text = text.rstrip().rstrip("\\") + " " + rest.strip()
                        continue
                    out.append(rest)
                found.append(Example("%s:%d" % (where, first_line + i), text, shown_status(out), out))
        return found
    if any("[-" in line for line in lines):
        return []   # a usage synopsis
    useful = [(i, l) for i, l in joined(lines) if l.strip()]
    if not useful or any(OUTPUT_LINE.match(l) or not (COMMAND.match(l) or SHELL_LINE.match(l))
                         for _, l in useful):
        return []
    return [Example("%s:%d" % (where, first_line + i), l) for i, l in useful if not l.startswith("#")]


def markdown_examples(path):
    lines = path.read_text().splitlines()
    found, block, lang, start = [], None, "", 0
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            if block is None:
                block, lang, start = [], line[3:].strip(), n + 1
            else:
                if lang in ("", "sh", "shell", "console", "bash"):
                    found += block_examples(path.relative_to(ROOT), start, block)
                block = None
        elif block is not None:
            block.append(line)
    return found


def roff_plain(line):
    line = line.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\").replace("\\&", "")
    return re.sub(r"\\f[BIRP]", "", line)


def man_examples(path):
    found, block, start = [], None, 0
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if re.match(r"^\.(EX|nf)\b", line):
            block, start = [], n + 1
        elif re.match(r"^\.(EE|fi)\b", line) and block is not None:
            cmds = [l for l in block if l.startswith("$ ") or COMMAND.match(l)]
            found += [e for e in block_examples(path.relative_to(ROOT), start, block)
                      if e.text in [c[2:] if c.startswith("$ ") else c for c in cmds]]
            block = None
        elif block is not None:
            block.append(roff_plain(line))
    return found


def list_commands():
    p = subprocess.run([BINARY, "--list-options"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return list(dict.fromkeys(l.split("\t")[0] for l in p.stdout.splitlines()
                              if not l.startswith("clockdoctor\t")))


def help_examples():
    found = []
    for cmd in [None] + list_commands():
        args = [BINARY, "--help"] if cmd is None else [BINARY, cmd, "--help"]
        out = subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
        assert "\nexamples:\n" in out, cmd
        lines = out.split("\nexamples:\n", 1)[1].splitlines()
        lines = [l[2:] for l in lines if l.startswith("  ")]
        where = "clockdoctor %s--help" % (cmd + " " if cmd else "")
        found += [Example(where, l) for _, l in joined(lines)]
    return found


def all_examples():
    found = markdown_examples(ROOT / "README.md")
    for path in sorted((ROOT / "docs").glob("*.md")):
        found += markdown_examples(path)
    for path in sorted((ROOT / "docs").glob("*.[13]")):
        found += man_examples(path)
    return found + help_examples()


EXAMPLES = all_examples()


def distinct(examples):
    """One of each text (and status shown): the same example in the README,
    a man page and --help runs once, named by where it is first."""
    seen = {}
    for e in examples:
        key = (re.sub(r"\s+#.*$", "", e.text), e.shown)
        if key not in seen:
            seen[key] = e
    return list(seen.values())


def allowed(example):
    for pattern, why in ALLOWED:
        if re.search(pattern, example.text):
            return why
    return None


def shorten(cmd):
    """The substitution table's durations, in one clockdoctor command."""
    m = re.search(r"\bclockdoctor\s+(bench|accuracy|tsc|top|watch)\b", cmd)
    if not m:
        return cmd
    sub = m.group(1)
    head, tail = cmd[:m.end()], cmd[m.end():]
    # the command's own words end at a pipe, a redirection or another command
    cut = re.search(r"\s(\||>|&&|;|&|#)", tail)
    own, rest = (tail[:cut.start()], tail[cut.start():]) if cut else (tail, "")
    seconds = {"bench": "0.2", "accuracy": "0.3", "tsc": "0.05", "top": "0.3", "watch": "0.3"}[sub]
    own = re.sub(r"(\s(?:-d|--duration)[\s=])\S+", r"\g<1>" + seconds, own)
    own = re.sub(r"(\s--calls[\s=])(\d+)", lambda m: m.group(1) + str(min(int(m.group(2)), 20000)), own)
    if sub in ("top", "watch"):
        own = re.sub(r"(\s(?:-i|--interval)[\s=])\S+", r"\g<1>" + ("0.2" if sub == "top" else "0.1"), own)
    if sub == "top":
        own = re.sub(r"(\s(?:-p|--pid)[\s=])\d+", r"\1$$", own)
        own, operands = re.subn(r"\s\d+(?:\.\d+)?\s+\d+\s*$", " 0.2 2", own)
        if operands:
            return head + own + rest
    timed = re.search(r"\s(-d|--duration|--calls|--list|-l|--restore|--help)\b", own)
    if not timed and not (sub == "top" and re.search(r"\s\d", own)):
        own = " -d %s" % seconds + own
    return head + own + rest


def prepare(example, work):
    """The example's text as it runs (the substitution table) and the
    environment; makes what it reads in work."""
    cmd = example.text
    cmd = re.sub(r"\bsudo\s+", "", cmd)
    cmd = re.sub(r"/var/lib/prometheus/node-exporter/|/var/lib/node_exporter/textfile_collector/",
                 "$W/textfile/", cmd)
    cmd = re.sub(r"(?<![\w/.$])/tmp(?=/|\s|$)", "$W/tmp", cmd)
    cmd = re.sub(r"redis-server /etc/redis/redis\.conf", "redis-server --version", cmd)

    def fixture_copy(m):
        dst = work / "fixtures" / m.group(2)
        if not dst.exists():
            shutil.copytree(FIXTURES / m.group(2), dst, symlinks=True)
        return m.group(1) + "$W/fixtures/" + m.group(2)
    cmd = re.sub(r"(--root\s+)(?:\./)?tests/fixtures/([\w.-]+)", fixture_copy, cmd)
    if re.search(r"clockdoctor fix\b.*--(persist|undo)", cmd) and "--root" not in cmd:
        cmd = re.sub(r"clockdoctor fix\b", "clockdoctor fix --root $W/machine", cmd)
    cmd = shorten(cmd)
    env = dict(os.environ, W=str(work), DIR=str(work / "textfile"),
               PATH="%s:%s" % (work / "bin", os.environ.get("PATH", "/usr/bin:/bin")),
               CLOCKDOCTOR_SYSFS=str(work / "sysfs"), CLOCKDOCTOR_STATE_DIR=str(work / "state"),
               CLOCKDOCTOR_KMSG=str(work / "kmsg"))
    for d in ("bin", "tmp", "textfile", "state"):
        (work / d).mkdir(exist_ok=True)
    (work / "bin" / "clockdoctor").symlink_to(BINARY)
    cs = work / "sysfs" / CS
    cs.mkdir(parents=True)
    (cs / "current_clocksource").write_text("tsc\n")
    (cs / "available_clocksource").write_text("tsc hpet acpi_pm \n")
    (work / "kmsg").write_text("")
    server = work / "server"
    server.write_text("#!/bin/sh\nexit 0\n")
    server.chmod(0o755)
    (work / "app.py").write_text("")
    # every --root that no earlier part of the example writes: a snapshot
    for m in re.finditer(r"--root\s+(\S+)", cmd):
        path = m.group(1)
        made_before = re.search(r"clockdoctor snapshot\s+(?:-\S+\s+)*%s(\s|$)" % re.escape(path),
                                cmd[:m.start()])
        real = pathlib.Path(path.replace("$W", str(work)))
        if not real.is_absolute():
            real = work / real
        if not made_before and not real.exists():
            shutil.copytree(FIXTURES / SNAPSHOT_FIXTURE, real, symlinks=True)
            # fix --persist writes a parameter that trusts the TSC only after
            # `clockdoctor tsc` measured it sound on the boot, as the docs say
            # to run first: the copy carries that verdict.
            if re.search(r"clockdoctor fix\b.*--persist", cmd):
                plant_verdict(real, "sound")
    # every --from FILE that is not there: that command's JSON, made from a
    # snapshot (check) or a short run
    for m in re.finditer(r"--from\s+(\S+)", cmd):
        real = pathlib.Path(m.group(1).replace("$W", str(work)))
        if not real.is_absolute():
            real = work / real
        kind = re.match(r"(check|bench|tsc|accuracy|top)", real.name)
        if kind and not real.exists():
            made = {"check": ["check", "--root", str(FIXTURES / SNAPSHOT_FIXTURE)],
                    "bench": ["bench", "-d", "0.2"], "tsc": ["tsc", "-d", "0.05"],
                    "accuracy": ["accuracy", "-d", "0.3"], "top": ["top", "-d", "0.3"]}[kind.group(1)]
            out = subprocess.run([BINARY, *made, "--json"], capture_output=True, text=True, timeout=120,
                                 env=dict(os.environ, CLOCKDOCTOR_STATE_DIR=str(work / "state")))
            real.write_text(out.stdout)
    for m in re.finditer(r"--prometheus-file[\s=](\S+)", cmd):
        pathlib.Path(m.group(1).replace("$W", str(work))).parent.mkdir(parents=True, exist_ok=True)
    return cmd, env


def accepted(example, cmd):
    """The exit statuses the example may end with."""
    if example.shown is not None and "--root" in cmd:
        return {example.shown}
    m = re.search(r"\bclockdoctor\s+([a-z]+)", cmd)
    sub = m.group(1) if m else None
    if sub in ("check", "report") and example.shown is None or sub == "tsc":
        return {0, 1, 2}
    if sub == "check":
        return {example.shown} if "--root" in cmd else {0, 1, 2}
    if sub == "accuracy":
        return {0, 1}
    if sub == "fix" and not re.search(r"--(persist|undo|apply)", cmd):
        return {0, 1}
    return {0}


def test_examples_are_found():
    """The extraction finds what it should: a regression here would
    silently run nothing."""
    where = {str(e.where).split(":")[0] for e in EXAMPLES}
    assert "README.md" in where and "docs/clockdoctor-check.1" in where
    assert "clockdoctor check --help" in where and "clockdoctor --help" in where
    assert len(EXAMPLES) >= 80, len(EXAMPLES)
    texts = [e.text for e in EXAMPLES]
    assert "clockdoctor check --root tests/fixtures/qemu-tcg-smp2-hpet" in texts
    assert not any("[-" in t or OUTPUT_LINE.match(t) for t in texts)


def test_jq_filters_are_quoted():
    """A jq filter is one quoted word: `.findings[].code` unquoted is a
    glob to the shell (zsh refuses it, bash matches it against files)."""
    for e in EXAMPLES:
        for m in re.finditer(r"\bjq((?:\s+-[a-z]+)*)\s+(\S+)", e.text):
            assert m.group(2)[0] in "'\"", e


def test_package_installs_name_where_make_puts_packages():
    """An `apt install`/`dnf install` example is not run, but names the
    folder `make deb` and `make rpm` write the packages into."""
    assert "PKG_DIR := $(CURDIR)/build/pkg" in (ROOT / "Makefile").read_text()
    installs = [m.group(2) for e in EXAMPLES for m in re.finditer(r"\b(apt|dnf) install (\S+)", e.text)]
    assert installs
    for path in installs:
        assert path.startswith("./build/pkg/"), path


def test_every_allowed_entry_still_matches():
    for pattern, why in ALLOWED:
        assert any(re.search(pattern, e.text) for e in EXAMPLES), (pattern, why)


_top_probe = []


def top_cannot_trace():
    """Why top cannot trace on this machine ("" where it can), asked once."""
    if not _top_probe:
        p = subprocess.run([BINARY, "top", "-d", "0.1"], capture_output=True, text=True, timeout=30)
        _top_probe.append(p.stderr.strip() or "exit 3" if p.returncode == 3 else "")
    return _top_probe[0]


@pytest.mark.parametrize("example", distinct(EXAMPLES), ids=lambda e: "%s: %s" % (e.where, e.text[:60]))
def test_example_runs(example, tmp_path):
    why = allowed(example)
    if why:
        pytest.skip("not run: " + why)
    if re.search(r"\bsudo\b", example.text) and os.geteuid() != 0:
        pytest.skip("needs root")
    if "jq" in example.text:
        need_tool("jq", "jq", "the examples that pipe JSON into jq")
    if "redis-server" in example.text:
        need_tool("redis-server", "redis-server", "the examples that accelerate redis")
    cmd, env = prepare(example, tmp_path)
    if re.search(r"clockdoctor top\b", cmd) and top_cannot_trace():
        pytest.skip("top cannot trace here: " + top_cannot_trace())
    before = live_clocksource()
    p = subprocess.run(["bash", "-o", "pipefail", "-O", "failglob", "-c", cmd], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert live_clocksource() == before, "this machine's clocksource changed: %r" % example
    assert p.returncode in accepted(example, cmd), (
        "%r\nran as: %s\nexit %d\nstdout: %s\nstderr: %s" % (example, cmd, p.returncode, p.stdout[-2000:],
                                                            p.stderr[-2000:]))


SHOWN = [e for e in EXAMPLES if e.output and "--root" in e.text and not allowed(e)]


@pytest.mark.parametrize("example", SHOWN, ids=lambda e: "%s: %s" % (e.where, e.text[:60]))
def test_shown_output_is_what_it_prints(example, tmp_path):
    """On a snapshot the output is the same everywhere: each line the text
    shows is a line the command prints (a line ending in "..." is the start
    of one; "..." alone stands for lines left out)."""
    cmd, env = prepare(example, tmp_path)
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    printed = [line.rstrip() for line in (p.stdout + p.stderr).splitlines()]
    for line in example.output:
        line = line.rstrip()
        if line.strip() == "...":
            continue
        if line.endswith("..."):
            start = line[:-3].rstrip()
            assert any(l.startswith(start) for l in printed), (example, line)
        else:
            assert line in printed, (example, line)
