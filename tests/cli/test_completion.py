# SPDX-License-Identifier: MIT
"""Shell completion (contrib/completion): bash's and zsh's, both reading the
options from the command's own getopt tables (`clockdoctor --list-options`),
complete the commands, a command's options and an option's value."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BINARY, ROOT, need_tool

BASH = ROOT / "contrib/completion/clockdoctor.bash"
ZSH = ROOT / "contrib/completion/_clockdoctor"


def path_env(tmp_path):
    """PATH with `clockdoctor` first: the binary under test."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "clockdoctor"
    if not link.exists():
        link.symlink_to(BINARY)
    return dict(os.environ, PATH="%s:%s" % (bindir, os.environ.get("PATH", "/usr/bin:/bin")))


def bash_complete(tmp_path, line):
    """The words bash offers for `line` (its last word, possibly empty, is
    the one being completed), as `complete -F` would call the function."""
    script = ('source "$1"; read -ra COMP_WORDS <<<"$2"; [[ $2 == *" " ]] && COMP_WORDS+=("");'
              'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$2; COMP_POINT=${#2};'
              '_clockdoctor; printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", script, "bash", str(BASH), line], capture_output=True, text=True,
                       env=path_env(tmp_path), timeout=30)
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.splitlines() if w]


def test_bash_registers_the_function():
    p = subprocess.run(["bash", "-c", 'source "$1" && complete -p clockdoctor', "bash", str(BASH)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "complete -o default -F _clockdoctor clockdoctor"


def test_bash_completes_commands_options_and_values(tmp_path):
    commands = bash_complete(tmp_path, "clockdoctor ")
    assert {"check", "snapshot", "bench", "tsc", "top", "fix", "watch", "run", "accuracy", "help"} <= set(commands)
    assert bash_complete(tmp_path, "clockdoctor ch") == ["check"]
    assert bash_complete(tmp_path, "clockdoctor help wa") == ["watch"]
    assert bash_complete(tmp_path, "clockdoctor check --prom") == ["--prometheus", "--prometheus-file"]
    assert bash_complete(tmp_path, "clockdoctor --ver") == ["--version"]
    watch = bash_complete(tmp_path, "clockdoctor watch -")
    assert "--prometheus-file" in watch and "--syscalls" in watch
    # a letter kept only to point to its long option is not offered
    assert "-P" not in watch and "-s" not in watch
    assert "--list-options" not in watch
    # an option's value: nothing offered, bash's own file completion (-o default)
    assert bash_complete(tmp_path, "clockdoctor check --root ") == []
    assert bash_complete(tmp_path, "clockdoctor bench -s --cl") == ["--clocks", "--clocksources"]
    # after `--`, the program's own words: no option of clockdoctor's
    assert bash_complete(tmp_path, "clockdoctor run -- redis-server --") == []
    assert "--quiet" in bash_complete(tmp_path, "clockdoctor run --")


def test_bash_asks_only_a_program_named_clockdoctor(tmp_path):
    """The first word is run to list the options only when it is a
    clockdoctor: completing `./evil ` runs `clockdoctor`, not ./evil."""
    evil = tmp_path / "evil"
    marker = tmp_path / "ran"
    evil.write_text("#!/bin/sh\ntouch %s\n" % marker)
    evil.chmod(0o755)
    assert "check" in bash_complete(tmp_path, "%s " % evil)
    assert not marker.exists()


def zsh_complete(tmp_path, zsh, line):
    """What the zsh function hands compadd (zsh filters by the prefix itself)
    or "_files", with compadd and _files stubbed."""
    script = r'''
fpath=("$1" $fpath)
autoload -Uz _clockdoctor
compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }
_files() { print -r -- _files }
words=(${(z)2}); [[ $2 == *" " ]] && words+=("")
CURRENT=${#words}
_clockdoctor
'''
    p = subprocess.run([zsh, "-f", "-c", script, "zsh", str(ZSH.parent), line], capture_output=True,
                       text=True, env=path_env(tmp_path), timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_zsh_completes_commands_options_and_values(tmp_path):
    zsh = need_tool("zsh", "zsh", "zsh's completion")
    commands = zsh_complete(tmp_path, zsh, "clockdoctor ")
    assert {"check", "watch", "run", "help"} <= set(commands)
    opts = zsh_complete(tmp_path, zsh, "clockdoctor check --")
    assert "--prometheus-file" in opts and "--root" in opts and "--list-options" not in opts
    assert "-P" not in zsh_complete(tmp_path, zsh, "clockdoctor watch -")
    assert zsh_complete(tmp_path, zsh, "clockdoctor check --root ") == ["_files"]
    assert "watch" in zsh_complete(tmp_path, zsh, "clockdoctor help w")
    assert zsh_complete(tmp_path, zsh, "clockdoctor run -- prog --") == ["_files"]
    # zsh's own compinit accepts the file as a completion function
    p = subprocess.run([zsh, "-f", "-c", 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; '
                        'print -r -- $_comps[clockdoctor]', "zsh", str(ZSH.parent)],
                       capture_output=True, text=True, env=path_env(tmp_path), timeout=30)
    assert p.stdout.strip() == "_clockdoctor", p.stderr
