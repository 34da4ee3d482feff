# SPDX-License-Identifier: MIT
"""The check and snapshot commands as a user runs them: the live machine, bad input, usage."""
import json
import os
import pathlib
import shutil
import time

import pytest

from conftest import CS, FIXTURES, as_user, codes, live_clocksource, make_root, on_a_terminal

HIGH_RES = ["CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME",
            "CLOCK_TAI", "gettimeofday"]
ALL_CLOCKS = HIGH_RES + ["CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE", "time"]


# ---- the live machine ----

def test_live_check_measures_every_clock(cd):
    t0 = time.monotonic()
    r = cd("check", "--json")
    elapsed = time.monotonic() - t0
    doc = r.json()
    assert doc["source"] == "live" and doc["measured"] is True
    assert set(doc["measurements"]) == set(ALL_CLOCKS)
    for name in ALL_CLOCKS:
        m = doc["measurements"][name]
        assert m["measured"] is True, name
        assert m["ns_per_call"] > 0 and m["syscall_ns"] > 0
        assert isinstance(m["syscall"], bool)
    # The coarse clocks never touch the clocksource: never a system call.
    for name in ["CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE", "time"]:
        assert doc["measurements"][name]["syscall"] is False, name
    assert r.rc == {"ok": 0, "warning": 1, "critical": 2}[doc["status"]]
    print(f"\nlive check: {elapsed:.2f} s, status {doc['status']}, "
          f"clocksource {doc['clocksource']['current']}")


@pytest.mark.skipif(live_clocksource() not in ("tsc", "kvm-clock", "arch_sys_counter"),
                    reason="this machine's clocksource is not one the vDSO reads")
def test_live_fast_clocksource_has_no_syscalls(cd):
    doc = cd("check", "--json").json()
    for name in HIGH_RES:
        assert doc["measurements"][name]["syscall"] is False, (name, doc["measurements"][name])
    assert "vdso-fallback" not in codes(doc)
    assert "slow-clocksource" not in codes(doc)


def test_live_text_starts_with_verdict(cd):
    r = cd("check", "--color", "never")
    first = r.out.splitlines()[0]
    assert first.split(":")[0] in ("OK", "WARNING", "CRITICAL", "UNKNOWN")
    assert "CLOCK_MONOTONIC" in r.out and "syscall ns" in r.out
    assert "\033[" not in r.out


def test_color_always(cd):
    r = cd("check", "--no-measure", "--color", "always")
    assert "\033[" in r.out


@pytest.mark.parametrize("env, colour", [
    ({"TERM": "xterm"}, True),
    ({"TERM": "xterm", "NO_COLOR": ""}, True),      # empty: unset, as no-color.org says
    ({"TERM": "xterm", "NO_COLOR": "1"}, False),
    ({"TERM": "dumb"}, False),
    ({}, False),                                      # no TERM: nothing known to take escapes
])
def test_color_auto_on_a_terminal(env, colour):
    """--color auto colours a terminal's text, except where TERM is dumb or
    unset or NO_COLOR is set; a pipe never (test_live_text_starts_with_verdict
    has --color never, test_no_colour_in_a_pipe auto)."""
    root = str(FIXTURES / "qemu-tcg-smp2-hpet")
    p, out = on_a_terminal(["check", "--root", root],
                           env=dict(env, PATH=os.environ.get("PATH", "/usr/bin:/bin")))
    assert p.returncode in (0, 1, 2, 3)
    assert out.startswith(b"\033[") == colour, out[:80]
    assert (b"\033[" in out) == colour


def test_no_colour_in_a_pipe(cd):
    r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), env={"TERM": "xterm"})
    assert "\033[" not in r.out


def test_no_measure(cd):
    doc = cd("check", "--json", "--no-measure").json()
    assert doc["measured"] is False and doc["measurements"] is None


# ---- usage ----

@pytest.mark.parametrize("args", [["check", "--bogus"], ["check", "extra"], ["nosuchcommand"],
                                  ["check", "--color", "purple"], [],
                                  ["check", "--root", "/nonexistent/folder"],
                                  ["snapshot"], ["snapshot", "a", "b"]])
def test_usage_errors(cd, args):
    r = cd(*args)
    assert r.rc == 3, (args, r.out, r.err)
    assert r.err.strip() != ""
    assert "Traceback" not in r.err and "Sanitizer" not in r.err


def test_help_and_version(cd):
    assert cd("--help").rc == 0
    r = cd("check", "--help")
    assert r.rc == 0 and "examples:" in r.out
    v = cd("--version")
    assert v.rc == 0 and v.out.startswith("clockdoctor ")


# ---- bad input: any file missing or malformed, never a crash ----

def test_empty_root_is_unknown(cd, tmp_path):
    r = cd("check", "--json", "--root", str(tmp_path))
    doc = r.json()
    assert r.rc == 3 and doc["status"] == "unknown"
    assert doc["clocksource"]["current"] is None
    assert any("current clocksource" in u for u in doc["unknown"])
    t = cd("check", "--root", str(tmp_path))
    assert t.rc == 3 and t.out.startswith("UNKNOWN")


BAD_CONTENTS = {
    "empty": b"",
    "newline": b"\n",
    "binary": bytes(range(256)) * 16,
    "nul": b"hpet\x00acpi_pm\x00",
    "long-line": b"x" * (1 << 20),
}


@pytest.mark.parametrize("kind", sorted(BAD_CONTENTS))
def test_every_file_malformed(cd, tmp_path, kind):
    data = BAD_CONTENTS[kind]
    root = make_root(tmp_path, {
        "proc/cpuinfo": data, "proc/cmdline": data, "proc/sys/kernel/osrelease": data,
        "proc/uptime": data, "dmesg.txt": data, "cpuid.txt": data,
        "sys/class/dmi/id/sys_vendor": data, "sys/class/dmi/id/product_name": data,
        "sys/hypervisor/type": data, "etc/os-release": data, "proc/sys/kernel/arch": data,
        "etc/lsb-release": data, "etc/redhat-release": data, "etc/debian_version": data,
        "etc/SuSE-release": data,
    }, current=data, available=data)
    for fmt in ([], ["--json"], ["--prometheus"]):
        r = cd("check", "--root", str(root), *fmt)
        assert r.rc in (0, 1, 2, 3), r.err
        assert "Sanitizer" not in r.err and "runtime error" not in r.err
        if fmt == ["--json"]:
            json.loads(r.out)  # always valid JSON, whatever the input bytes


def test_folders_where_files_should_be(cd, tmp_path):
    for rel in [f"sys/{CS}/current_clocksource", "proc/cpuinfo", "dmesg.txt", "cpuid.txt"]:
        (tmp_path / rel).mkdir(parents=True)
    r = cd("check", "--json", "--root", str(tmp_path))
    assert r.rc == 3 and r.json()["status"] == "unknown"


def shared_tmp():
    """A folder an unprivileged user can enter (pytest's tmp_path is private to root)."""
    import tempfile
    d = pathlib.Path(tempfile.mkdtemp(prefix="cd-cli-"))
    d.chmod(0o755)
    return d


def test_unreadable_file(tmp_path):
    import subprocess
    from conftest import BINARY
    root = shared_tmp()
    try:
        make_root(root, {"proc/cpuinfo": "processor : 0\n"}, current="hpet\n")
        (root / "sys" / CS / "current_clocksource").chmod(0)
        p = subprocess.run(as_user([BINARY, "check", "--json", "--root", str(root)]),
                           capture_output=True, text=True, timeout=60)
        doc = json.loads(p.stdout)
        assert any("current clocksource: permission denied" in u for u in doc["unknown"])
        assert doc["status"] == "unknown" and p.returncode == 3
    finally:
        shutil.rmtree(root)


def test_live_check_without_root():
    """With kernel.dmesg_restrict=1 an ordinary user cannot read the kernel log:
    check still diagnoses from the rest and says what it could not read."""
    import subprocess
    from conftest import BINARY
    try:
        restrict = pathlib.Path("/proc/sys/kernel/dmesg_restrict").read_text().strip()
    except OSError:
        pytest.skip("no /proc/sys/kernel/dmesg_restrict")
    p = subprocess.run(as_user([BINARY, "check", "--json"]), capture_output=True, text=True,
                       timeout=60)
    doc = json.loads(p.stdout)
    assert doc["measured"] is True
    assert doc["clocksource"]["current"] == live_clocksource()
    log = doc["kernel_log"]
    if restrict == "1" and log["source"] != "journal":
        assert log["source"] in ("ring", "none")
        assert log["readable"] is False
        assert "dmesg_restrict" in log["note"]
        assert any("kernel log" in u for u in doc["unknown"])


def test_enormous_and_truncated_kernel_log(cd, tmp_path):
    src = FIXTURES / "server-watchdog-tsc-to-acpi_pm"
    root = tmp_path / "snap"
    shutil.copytree(src, root)
    lines = (src / "dmesg.txt").read_text().splitlines(keepends=True)
    # Cut in the middle of the watchdog block, after a huge log of noise.
    noise = "[    1.000000] some driver said something long " + "z" * 200 + "\n"
    (root / "dmesg.txt").write_text(noise * 200000 + "".join(lines[:2]) + lines[2][:20])
    r = cd("check", "--json", "--root", str(root))
    doc = r.json()
    assert doc["status"] == "critical"
    c = codes(doc)
    assert "tsc-unstable-watchdog" in c and "slow-clocksource" in c


def test_only_clocksource_files(cd, tmp_path):
    root = make_root(tmp_path, current="acpi_pm\n", available="acpi_pm hpet\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    assert doc["status"] == "critical"
    c = codes(doc)
    assert "slow-clocksource" in c and "better-clocksource-available" in c


def test_arm64_snapshot(cd, tmp_path):
    root = make_root(tmp_path, {
        "proc/cpuinfo": "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes "
                        "pmull sha1 sha2 crc32 atomics\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
                        "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n",
        "proc/sys/kernel/osrelease": "6.1.0-18-arm64\n",
    }, current="arch_sys_counter\n", available="arch_sys_counter\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    assert doc["status"] == "ok"
    assert "tsc-not-invariant" not in codes(doc)


def check_booted(cd, tmp_path, current, release, log):
    """check --json of a snapshot of the clocksource, the kernel's release
    and its log, and nothing else."""
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": release, "dmesg.txt": log}, current=current)
    return cd("check", "--json", "--root", str(root)).json()


def test_arm64_erratum_takes_vdso_away(cd, tmp_path):
    doc = check_booted(cd, tmp_path, "arch_sys_counter\n", "5.10.0-arm64\n",
                       "[    0.000000] arch_timer: Enabling global workaround for ARM erratum 858921\n")
    assert doc["status"] == "critical"
    assert "slow-clocksource" in codes(doc)


def test_old_hpet_kernel_is_slow_but_not_a_syscall(cd, tmp_path):
    # Before 4.7 the vDSO read the HPET itself: no system call, still a slow device read.
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "4.4.0-21-generic\n"},
                     current="hpet\n")
    c = codes(cd("check", "--json", "--root", str(root)).json())
    assert c["slow-clocksource"]["severity"] == "warning"
    assert "vDSO reads hpet itself" in c["slow-clocksource"]["title"]
    (root / "proc/sys/kernel/osrelease").write_text("4.4.190-1\n")
    c = codes(cd("check", "--json", "--root", str(root)).json())
    assert c["slow-clocksource"]["severity"] == "critical"


def test_graviton2_erratum_keeps_vdso(cd, tmp_path):
    # ARM erratum 1418040 only turns off the compat vDSO (Neoverse-N1, Graviton2).
    doc = check_booted(cd, tmp_path, "arch_sys_counter\n", "5.10.0-arm64\n",
                       "[    0.000000] arch_timer: Enabling local workaround for ARM erratum 1418040\n")
    assert doc["status"] == "ok"


def test_tsc_reliable_comma_list_is_ignored(cd, tmp_path):
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    (root / "proc/cmdline").write_text("console=ttyS0 tsc=reliable,noirqtime\n")
    c = codes(cd("check", "--json", "--root", str(root)).json())
    assert "tsc-reliable-set" not in c
    assert "tsc=reliable,noirqtime, which the kernel ignores" in c["slow-clocksource"]["fix"]["lasting"]


def test_tsc_reliable_already_set_is_not_advised_again(cd, tmp_path):
    root = make_root(tmp_path, {
        "proc/cmdline": "ro tsc=reliable\n", "proc/sys/kernel/osrelease": "4.19.0-20-amd64\n",
        "dmesg.txt": "[ 90.1] clocksource: timekeeping watchdog on CPU1: Marking clocksource "
                     "'tsc-early' as unstable because the skew is too large:\n"
                     "[ 90.1] tsc: Marking TSC unstable due to clocksource watchdog\n",
    }, current="hpet\n", available="hpet acpi_pm\n")
    c = codes(cd("check", "--json", "--root", str(root)).json())
    lasting = c["slow-clocksource"]["fix"]["lasting"]
    assert "already on the command line" in lasting
    assert "5.4" in lasting and "Add tsc=reliable" not in lasting


def test_xen_guest(cd, tmp_path):
    root = make_root(tmp_path, {
        "sys/hypervisor/type": "xen\n",
        "proc/sys/kernel/osrelease": "5.10.0-26-cloud-amd64\n",
        "proc/cpuinfo": "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n"
                        "flags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp hypervisor\n\n",
        "dmesg.txt": "[    0.000000] Hypervisor detected: Xen HVM\n"
                     "[    0.500000] xen: VDSO_CLOCKMODE_PVCLOCK not supported\n",
    }, current="xen\n", available="xen tsc hpet acpi_pm\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    c = codes(doc)
    assert doc["status"] == "critical"
    assert {"xen-clocksource", "slow-clocksource"} <= set(c)
    assert "echo tsc >" in c["xen-clocksource"]["fix"]["now"]
    assert "clocksource=tsc" in c["xen-clocksource"]["fix"]["lasting"]
    assert doc["hypervisor"]["name"] == "xen"


def test_redhat_lasting_fix_uses_grubby(cd, tmp_path):
    root = tmp_path / "snap"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", root)
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text('NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n')
    c = codes(cd("check", "--json", "--root", str(root)).json())
    assert "$ grubby --update-kernel=ALL --args=tsc=reliable\n" in c["slow-clocksource"]["fix"]["lasting"]


def test_forced_notsc(cd, tmp_path):
    root = make_root(tmp_path, {"proc/cmdline": "ro quiet notsc\n",
                                "proc/sys/kernel/osrelease": "6.1.0-1-amd64\n"},
                     current="hpet\n", available="hpet acpi_pm\n")
    c = codes(cd("check", "--json", "--root", str(root)).json())
    assert c["clocksource-forced"]["severity"] == "warning"
    assert "notsc" in c["clocksource-forced"]["fix"]["lasting"]


# ---- snapshot ----

def test_snapshot_round_trip(cd, tmp_path):
    snap = tmp_path / "snap"
    r = cd("snapshot", str(snap))
    assert r.rc == 0, r.err
    assert (snap / "sys" / CS / "current_clocksource").exists()
    assert (snap / "proc/cpuinfo").exists()
    live = cd("check", "--json", "--no-measure").json()
    saved = cd("check", "--json", "--root", str(snap)).json()
    assert saved["source"] == "snapshot"
    assert saved["clocksource"] == live["clocksource"]
    assert saved["cpu"]["flags"] == live["cpu"]["flags"]
    assert saved["kernel"]["release"] == live["kernel"]["release"]
    if (snap / "cpuid.txt").exists():
        assert saved["cpu"]["invariant_tsc"] == live["cpu"]["invariant_tsc"]
        assert saved["hypervisor"]["name"] == live["hypervisor"]["name"]
    # A second snapshot into the same folder is refused without --force.
    again = cd("snapshot", str(snap))
    assert again.rc == 3 and "not empty" in again.err
    assert cd("snapshot", "--force", str(snap)).rc == 0


@pytest.mark.parametrize("content", [b"", b"something\n"])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_snapshot_into_a_file_is_one_refusal(cd, tmp_path, content, force):
    """A regular file where the folder should be: one clear line, nothing
    written, the usage status; never "is not empty" for an empty file, nor a
    "Not a directory" a file and a "diagnose it with" after them."""
    f = tmp_path / "notadir"
    f.write_bytes(content)
    r = cd("snapshot", *force, str(f))
    assert r.rc == 3
    assert r.out == ""
    assert r.err.count("\n") == 1 and "is not a folder" in r.err, r.err
    assert f.read_bytes() == content


def test_snapshot_unwritable():
    import subprocess
    from conftest import BINARY
    ro = shared_tmp()
    try:
        ro.chmod(0o555)
        p = subprocess.run(as_user([BINARY, "snapshot", str(ro / "snap")]), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 3 and "cannot create" in p.stderr
    finally:
        ro.chmod(0o755)
        shutil.rmtree(ro)


def test_tsc_rejected_for_cpufreq_is_explained(cd, tmp_path):
    c = codes(check_booted(cd, tmp_path, "hpet\n", "5.10.0-1-amd64\n",
                           "[   12.5] tsc: Marking TSC unstable due to cpufreq changes on SMP\n"))
    lasting = c["slow-clocksource"]["fix"]["lasting"]
    assert "because of cpufreq changes on SMP" in lasting and "constant_tsc" in lasting
    assert "tsc=reliable" not in lasting



def test_tsc_adjust_firmware_is_reported(cd, tmp_path):
    doc = check_booted(cd, tmp_path, "tsc\n", "6.1.0-1-amd64\n",
                       "[    0.000000] [Firmware Bug]: TSC ADJUST differs: CPU0 45960 --> 78394. Restoring\n"
                       "[    1.000000] TSC ADJUST: CPU1: -5000 force to 0\n")
    c = codes(doc)
    assert doc["status"] == "ok"
    x = c["tsc-adjust-firmware"]
    assert x["severity"] == "info"
    assert len([e for e in x["evidence"] if "TSC ADJUST" in e]) == 2
