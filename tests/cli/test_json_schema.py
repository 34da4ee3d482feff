# SPDX-License-Identifier: MIT
"""Every command's JSON against the schema docs/json.md gives for it (JSON
Schema, checked with python3-jsonschema), the envelope first and the same
in all: tool, version, command, schema_version, exit_status (the process's
own, or null in the lines of a stream).  Nothing asserts a speed; nothing
switches this machine's clocksource: fix and bench switch fake trees."""
import json
import os
import pathlib
import re
import subprocess

import pytest

from conftest import BINARY, FIXTURES, ROOT, plant_verdict

try:
    import jsonschema
except ImportError:                                   # .ci/run installs it
    jsonschema = None

ENVELOPE = ["tool", "version", "command", "schema_version", "exit_status"]
CS = "devices/system/clocksource/clocksource0"


def schemas():
    """{command: schema} from the ```json blocks under docs/json.md's
    "### COMMAND" headings."""
    text = (ROOT / "docs/json.md").read_text()
    found = {}
    for m in re.finditer(r"^### (\w+)[^\n]*\n\n```json\n(.*?)\n```", text, re.S | re.M):
        found[m.group(1)] = json.loads(m.group(2))
    return found


SCHEMAS = schemas()


def test_every_command_has_a_schema():
    assert set(SCHEMAS) == {"check", "tsc", "bench", "accuracy", "fix", "top", "watch"}
    for name, s in SCHEMAS.items():
        assert s["title"] == f"clockdoctor {name} --json"
        assert s["required"][:5] == ENVELOPE


def objects(stdout, stream):
    if stream:
        return [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [json.loads(stdout)]


def check_against(command, args, env=None, stream=False, rcs=(0, 1, 2), timeout=120):
    if jsonschema is None:
        pytest.fail("python3-jsonschema is needed (apt-get install python3-jsonschema; .ci/run does)")
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([BINARY, command, *args], capture_output=True, text=True, env=e,
                       timeout=timeout)
    assert p.returncode in rcs, (args, p.returncode, p.stderr)
    docs = objects(p.stdout, stream)
    assert docs, p.stderr
    for doc in docs:
        jsonschema.validate(doc, SCHEMAS[command])
        assert list(doc)[:5] == ENVELOPE                 # the envelope opens every object
        assert doc["command"] == command
        assert doc["exit_status"] == (None if stream else p.returncode)
    return docs


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_check_and_fix_on_every_fixture(fixture):
    check_against("check", ["--json", "--root", str(FIXTURES / fixture)], rcs=(0, 1, 2, 3))
    check_against("fix", ["--json", "--root", str(FIXTURES / fixture)], rcs=(0, 1))


def test_check_live():
    check_against("check", ["--json"], rcs=(0, 1, 2, 3))
    check_against("check", ["--json", "--no-measure"], rcs=(0, 1, 2, 3))


def test_fix_persist_and_undo(tmp_path):
    root = tmp_path / "root"
    import shutil
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    (root / "etc/default").mkdir(parents=True)
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
    (root / "etc/os-release").write_text("ID=debian\n")
    plant_verdict(root, "sound")  # the TSC measured sound on its boot: tsc=reliable is persisted
    r = str(root)
    for args in (["--persist", "--dry-run"], ["--persist"], ["--persist"], ["--undo", "--dry-run"],
                 ["--undo"], ["--undo"]):
        check_against("fix", ["--json", "--root", r, *args], rcs=(0,))


def fake_sysfs(tmp_path, current, available):
    d = tmp_path / "sys" / CS
    d.mkdir(parents=True)
    (d / "current_clocksource").write_text(current + "\n")
    (d / "available_clocksource").write_text(available + " \n")
    return {"CLOCKDOCTOR_SYSFS": str(tmp_path / "sys"), "CLOCKDOCTOR_STATE_DIR": str(tmp_path / "state")}


def test_fix_apply_on_a_fake_tree(tmp_path):
    env = fake_sysfs(tmp_path, "acpi_pm", "hpet acpi_pm")
    [doc] = check_against("fix", ["--json", "--apply", "--min-gain", "50"], env=env, rcs=(0, 1))
    assert doc["apply"] is not None


def test_tsc():
    check_against("tsc", ["--json", "-d", "0.1", "--quick"])


def test_bench(tmp_path):
    check_against("bench", ["--json", "-c", "monotonic,fc_now_ns,monotonic/syscall", "-d", "0.4",
                            "-t", "2"], rcs=(0,))
    check_against("bench", ["--json", "--targets", "-c", "fc_now_ns", "-d", "0.3"], rcs=(0,))
    env = fake_sysfs(tmp_path, "tsc", "tsc hpet")
    [doc] = check_against("bench", ["--json", "--clocksources", "all", "-c", "monotonic", "-d", "0.3"],
                          env=env, rcs=(0,))
    assert doc["clocksources"] is not None


def test_accuracy():
    check_against("accuracy", ["--json", "-d", "0.3", "-t", "1"], rcs=(0, 1))


def test_watch(tmp_path):
    env = fake_sysfs(tmp_path, "tsc", "tsc hpet")
    log = tmp_path / "kmsg"
    log.write_text("6,2,2000000,-;clocksource: Switched to clocksource hpet\n"
                   "4,3,3000000,-;tsc: Marking TSC unstable due to clocksource watchdog\n")
    env["CLOCKDOCTOR_KMSG"] = str(log)
    docs = check_against("watch", ["--json", "--history", "-d", "0.3", "-i", "0.1"], env=env,
                         stream=True, rcs=(0,))
    assert [d["event"] for d in docs] == ["clocksource-switched", "tsc-unstable"]


def test_top():
    if os.geteuid() != 0 or subprocess.run([BINARY, "top", "0.1", "1"], capture_output=True,
                                           timeout=60).returncode != 0:
        msg = "top cannot trace here (not root, or no tracefs)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    docs = check_against("top", ["--json", "-i", "0.2", "2"], stream=True, rcs=(0,))
    assert [d["report"] for d in docs] == [1, 2] and all(d["interval"] == 0.2 for d in docs)
    docs = check_against("top", ["--json", "-p", str(os.getpid()), "0.2", "1"], stream=True, rcs=(0,))
    assert docs[0]["total"]["pid"] == os.getpid() and "every_process" in docs[0]
