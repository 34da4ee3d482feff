# SPDX-License-Identifier: MIT
"""check --root on every snapshot: the status, the codes and the numbers in the evidence.

Each fixture is a real machine (QEMU guests booted here) or one rebuilt from a real
case's log; tests/fixtures/README.md says where each comes from.  Every fixture's
expected.json is asserted by test_corpus.py; the tests here check finer details.
"""
import re

import pytest

from conftest import FIXTURES, codes

EXIT = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}


def check_root(cd, name, *extra):
    r = cd("check", "--json", "--root", str(FIXTURES / name), *extra)
    doc = r.json()
    assert r.rc == EXIT[doc["status"]], r.err
    assert doc["source"] == "snapshot"
    assert doc["measured"] is False and doc["measurements"] is None
    return doc


def evidence_text(finding):
    return "\n".join(finding["evidence"])


def test_virtualbox_smp_acpi_pm(cd):
    doc = check_root(cd, "virtualbox-debian7-smp8-acpi_pm-3.2")
    assert doc["status"] == "critical"
    c = codes(doc)
    assert {"slow-clocksource", "tsc-unstable-sync", "fix-needs-newer-kernel"} <= set(c)
    assert c["slow-clocksource"]["severity"] == "critical"
    sync = c["tsc-unstable-sync"]
    assert "66930 cycles" in sync["title"] and "CPU#0" in sync["title"] and "CPU#1" in sync["title"]
    assert "check_tsc_sync_source failed" in evidence_text(sync)
    # A measured warp between the vCPUs: the kernel was right, and no
    # parameter (nor a kernel that honours one) is the fix; VirtualBox's
    # settings are.  The newer kernel this 32-bit one needs is for its vDSO.
    assert "Do not add tsc=reliable" in sync["fix"]["lasting"]
    assert all("add tsc=reliable" not in (f["fix"]["lasting"] or "").lower().replace("do not add", "")
               for f in doc["findings"])
    newer = c["fix-needs-newer-kernel"]
    assert "vDSO has no clock_gettime" in newer["title"]
    assert "wheezy-backports" in newer["fix"]["lasting"]
    # VirtualBox's own settings (paravirt provider, TSC mode) are offered.
    assert "VBoxManage" in c["slow-clocksource"]["fix"]["hypervisor"]
    assert "MaybeUseOffsettedHostTSC" in c["slow-clocksource"]["fix"]["hypervisor"]
    assert doc["hypervisor"]["name"] == "virtualbox"
    assert doc["clocksource"] == {"current": "acpi_pm", "available": ["acpi_pm"]}


def test_watchdog_acpi_pm(cd):
    doc = check_root(cd, "server-watchdog-tsc-to-acpi_pm")
    assert doc["status"] == "critical"
    c = codes(doc)
    assert {"slow-clocksource", "tsc-unstable-watchdog"} <= set(c)
    wd = c["tsc-unstable-watchdog"]
    assert "3007 s" in wd["title"] and "acpi_pm" in wd["title"]
    ev = evidence_text(wd)
    # acpi_pm advanced 1940462 ticks of 3.579545 MHz: the watchdog's interval.
    assert "542.1 ms" in ev
    assert "Switched to clocksource acpi_pm" in ev
    # Kernel unknown: tsc=reliable is the parameter that works everywhere.
    assert "tsc=reliable" in wd["fix"]["lasting"] or "tsc=nowatchdog" in wd["fix"]["lasting"]


def test_qemu_smp2_hpet(cd):
    doc = check_root(cd, "qemu-tcg-smp2-hpet")
    assert doc["status"] == "critical"
    c = codes(doc)
    assert {"slow-clocksource", "tsc-unstable-sync", "tsc-not-invariant"} <= set(c)
    assert "TSCs unsynchronized" in c["tsc-unstable-sync"]["title"]
    # The kernel's reason: a non-Intel CPU without constant_tsc, more than one CPU.
    assert "no constant_tsc" in evidence_text(c["tsc-unstable-sync"])
    assert c["tsc-not-invariant"]["severity"] == "warning"
    assert "since Linux 4.7" in evidence_text(c["slow-clocksource"])
    assert "tsc=reliable" in c["slow-clocksource"]["fix"]["lasting"]
    lasting = c["slow-clocksource"]["fix"]["lasting"]
    assert "update-grub" in lasting  # a Debian kernel
    # one drop-in file per parameter, in a folder that may not exist yet
    assert "$ mkdir -p /etc/default/grub.d" in lasting
    assert "> /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg" in lasting
    assert doc["hypervisor"]["name"] == "qemu-tcg"
    assert doc["cpu"]["invariant_tsc"] is False


def test_qemu_acpi_pm_cmdline(cd):
    doc = check_root(cd, "qemu-tcg-smp2-acpi_pm-cmdline")
    assert doc["status"] == "critical"
    c = codes(doc)
    assert "clocksource-forced" in c
    assert "clocksource=acpi_pm" in c["clocksource-forced"]["title"]
    assert "clocksource" in c["clocksource-forced"]["fix"]["lasting"]
    # hpet is listed and faster than acpi_pm: switch now.
    assert "echo hpet >" in c["better-clocksource-available"]["fix"]["now"]


@pytest.mark.parametrize("name", ["vmware-tsc-hypervisor-reliable",
                                  "qemu-tcg-smp1-tsc", "qemu-tcg-smp2-tsc-reliable"])
def test_ok_machines(cd, name):
    doc = check_root(cd, name)
    assert doc["status"] == "ok", [(f["code"], f["severity"]) for f in doc["findings"]]
    assert all(f["severity"] == "info" for f in doc["findings"])


def test_tsc_reliable_reported(cd):
    c = codes(check_root(cd, "qemu-tcg-smp2-tsc-reliable"))
    assert c["tsc-reliable-set"]["severity"] == "info"
    assert "watchdog" in c["tsc-reliable-set"]["fix"]["risk"]


def test_vmware_hypervisor_reliable(cd):
    doc = check_root(cd, "vmware-tsc-hypervisor-reliable")
    c = codes(doc)
    assert "hypervisor" in c["tsc-reliable-set"]["title"]
    assert doc["hypervisor"]["name"] == "vmware"
    freq = [e for e in doc["kernel_log"]["events"] if e["kind"] == "tsc-frequency"]
    assert freq and freq[0]["khz"] == 2394000


def test_virtualbox_after_fix_notes_32bit_vdso(cd):
    doc = check_root(cd, "virtualbox-debian7-smp8-tsc-reliable-3.11")
    c = codes(doc)
    # 3.11 on 686-pae: on tsc now, but the 32-bit vDSO has no clock_gettime before 3.15:
    # every time call is still a system call (the case saw read_tsc under clock_gettime).
    assert doc["status"] == "warning"
    assert c["fix-needs-newer-kernel"]["severity"] == "warning"
    assert "32-bit" in c["fix-needs-newer-kernel"]["title"]
    assert "slow-clocksource" not in c   # the clocksource is not the cause


def test_rhel6_kvm_clock(cd):
    doc = check_root(cd, "kvm-rhel6-kvm-clock-old-watchdog")
    assert doc["status"] == "warning"
    c = codes(doc)
    wd = c["tsc-unstable-watchdog"]
    assert "28.0 days" in wd["title"]
    assert "6824818792 ns" in evidence_text(wd)
    # clocksource_failover=acpi_pm would make time 2 us a call: we say not to.
    assert "clocksource_failover=acpi_pm" in wd["fix"]["now"]
    # kvm-clock before 3.8 has no vDSO read upstream; said with its uncertainty.
    assert c["slow-clocksource"]["severity"] == "warning"
    assert "3.8" in evidence_text(c["slow-clocksource"])
    # A TSC the watchdog rejected is never offered as the better clocksource.
    assert "better-clocksource-available" not in c
    assert not wd["fix"]["lasting"]  # nothing to change in the guest for this


def test_kvm_clock_minimal(cd):
    doc = check_root(cd, "kvm-kvm-clock-sysfs-only")
    assert doc["status"] == "ok"
    c = codes(doc)
    assert c["clocksource-unverified"]["severity"] == "info"
    assert doc["hypervisor"]["name"] == "kvm"
    assert any("cpuinfo" in u for u in doc["unknown"])


def test_snapshot_says_nothing_measured(cd):
    r = cd("check", "--root", str(FIXTURES / "qemu-tcg-smp2-hpet"), "--color", "never")
    assert r.rc == 2
    assert r.out.startswith("CRITICAL: ")
    assert "measured: nothing" in r.out


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_text_fits_80_columns(cd, name):
    r = cd("check", "--root", str(FIXTURES / name), "--color", "never")
    for line in r.out.splitlines():
        if line.lstrip().startswith("$ "):
            continue  # commands are never wrapped, so they can be copied
        assert len(line) < 80, line


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_prometheus_format(cd, name):
    r = cd("check", "--prometheus", "--root", str(FIXTURES / name))
    doc = cd("check", "--json", "--root", str(FIXTURES / name)).json()
    assert r.rc == EXIT[doc["status"]]
    sample = re.compile(r'^clockdoctor_[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? -?[0-9.e+-]+$')
    names = set()
    for line in r.out.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        assert sample.match(line), line
        names.add(line.split("{")[0].split(" ")[0])
    assert f"clockdoctor_status {EXIT[doc['status']]}" in r.out
    for f in doc["findings"]:
        assert f'clockdoctor_finding_info{{code="{f["code"]}",severity="{f["severity"]}"}} 1' in r.out
    assert not any(n.startswith("node_") for n in names)
