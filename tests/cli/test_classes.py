# SPDX-License-Identifier: MIT
"""The classes of error seen on machines the tool had never seen, each made to fire and kept quiet.

Each test builds a small snapshot in a temporary folder (the layout `check --root` reads) from
kernel log lines in the kernel's own wording, and asserts what `check` and `fix` conclude.
"""
import json

from conftest import CS, FIXTURES, codes, make_root


def check(cd, root):
    r = cd("check", "--json", "--root", str(root))
    doc = r.json()
    assert r.rc == {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}[doc["status"]], r.err
    return doc


def plan_params(cd, root):
    r = cd("fix", "--json", "--root", str(root))
    return [(p["action"], p["token"]) for p in json.loads(r.out)["plan"]["params"]]


def evidence(finding):
    return "\n".join(finding["evidence"])


def all_fix_text(doc):
    return "\n".join(v or "" for f in doc["findings"] for v in f["fix"].values())


BARE_CPUINFO = ("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM)2 Duo CPU "
                "T7500  @ 2.20GHz\ncpu MHz\t\t: 2194.000\nflags\t\t: fpu tsc constant_tsc rdtscp\n\n"
                "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM)2 Duo CPU "
                "T7500  @ 2.20GHz\ncpu MHz\t\t: 2194.000\nflags\t\t: fpu tsc constant_tsc rdtscp\n\n")

# ---- 1. conclusions from the log when sysfs is missing ----

ACPI_OFF_LOG = (
    "[    0.000000] Linux version 5.10.0-20-amd64 (debian-kernel@lists.debian.org) (gcc-10) #1 SMP\n"
    "[    0.000000] Command line: BOOT_IMAGE=/boot/vmlinuz-5.10.0-20-amd64 root=/dev/sda1 ro acpi=off\n"
    "[    0.000000] tsc: Fast TSC calibration failed\n"
    "[    0.000000] tsc: Unable to calibrate against PIT\n"
    "[    0.000000] tsc: No reference (HPET/PMTIMER) available\n"
    "[    0.004000] tsc: Marking TSC unstable due to could not calculate TSC khz\n")


def test_log_alone_leaves_only_tick_based_clocksources(cd, tmp_path):
    root = make_root(tmp_path, {"dmesg.txt": ACPI_OFF_LOG, "proc/cpuinfo": BARE_CPUINFO})
    doc = check(cd, root)
    assert doc["status"] == "critical"
    assert "jiffies" in doc["verdict"]
    slow = codes(doc)["slow-clocksource"]
    assert slow["severity"] == "critical" and "tick-based" in slow["title"]
    ev = evidence(slow)
    assert "could not calculate TSC khz" in ev and "acpi=off" in ev
    assert "Remove acpi=off" in slow["fix"]["lasting"]
    assert ("remove", "acpi=off") in plan_params(cd, root)


def test_log_switch_line_gives_the_clocksource(cd, tmp_path):
    log = ACPI_OFF_LOG + "[    0.300000] clocksource: Switched to clocksource refined-jiffies\n"
    root = make_root(tmp_path, {"dmesg.txt": log, "proc/cpuinfo": BARE_CPUINFO})
    doc = check(cd, root)
    assert doc["clocksource"]["current"] == "refined-jiffies"
    assert doc["clocksource"]["from"] == "kernel log"
    slow = codes(doc)["slow-clocksource"]
    assert slow["severity"] == "critical"
    assert "kernel log [0.300000]: clocksource: Switched to clocksource refined-jiffies" in evidence(slow)
    assert "Remove acpi=off" in slow["fix"]["lasting"]


def test_old_switch_wording_and_watchdog_without_sysfs(cd, tmp_path):
    # 2.6/3.x wording; the last switch is the one in force.
    log = ("[    1.0] Switching to clocksource tsc\n"
           "[ 3007.0] Clocksource tsc unstable (delta = -8589933176 ns)\n"
           "[ 3007.1] Switching to clocksource hpet\n")
    doc = check(cd, make_root(tmp_path, {"dmesg.txt": log}))
    assert doc["clocksource"] == {"current": "hpet", "from": "kernel log", "available": None}
    c = codes(doc)
    assert "slow-clocksource" in c and "tsc-unstable-watchdog" in c


def test_a_tsc_marked_unstable_after_the_switch_is_not_current(cd, tmp_path):
    # A grepped log: the switch to the TSC, then its rejection, not what came after.
    log = ("[    0.412345] clocksource: Switched to clocksource tsc-early\n"
           "[   50.000123] tsc: Marking TSC unstable due to clocksource watchdog\n")
    doc = check(cd, make_root(tmp_path, {"dmesg.txt": log, "proc/cpuinfo": BARE_CPUINFO}))
    assert doc["clocksource"]["current"] is None
    assert "tsc-unstable-watchdog" in codes(doc)
    assert "read by the vDSO" not in doc["verdict"]


def test_a_watchdog_report_after_the_switch_to_tsc_means_the_tsc_is_left(cd, tmp_path):
    # A journal cut after the watchdog's report, before its watchdog line and
    # the switch: the kernel left the TSC all the same.
    log = ("Dec 24 21:07:07 kernel: clocksource: Switched to clocksource tsc\n"
           "Dec 24 21:47:28 kernel: clocksource: timekeeping watchdog on CPU12: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
           "Dec 24 21:47:28 kernel: clocksource:                       'tsc' cs_nsec: 503646106 cs_now: 74ca94f19b5 cs_last: 74c466e112f mask: ffffffffffffffff\n")
    doc = check(cd, make_root(tmp_path / "a", {"dmesg.txt": log}))
    assert doc["clocksource"]["current"] is None
    wd = codes(doc)["tsc-unstable-watchdog"]
    assert "cs_nsec: 503646106" in evidence(wd)
    assert "does not slow time calls" not in wd["fix"]["now"]
    # A report about another clocksource leaves the switch to the TSC in force.
    other = log.replace("'tsc' as unstable", "'hpet' as unstable").replace("'tsc' cs_nsec", "'hpet' cs_nsec")
    doc = check(cd, make_root(tmp_path / "b", {"dmesg.txt": other}))
    assert doc["clocksource"]["current"] == "tsc"


def test_watchdog_report_names_the_clocksource_it_left(cd, tmp_path):
    # A grepped log: the watchdog's report, no switch line. The kernel goes to the watchdog.
    log = ("[ 3007.005852] clocksource: timekeeping watchdog on CPU3: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
           "[ 3007.005855] clocksource:                       'hpet' wd_nsec: 503484590 wd_now: 5a5f1c2b wd_last: 5904ab12 mask: ffffffff\n"
           "[ 3007.005857] clocksource:                       'tsc' cs_nsec: 503993664 cs_now: 4f1e3c2a1b cs_last: 4e9a8b7c6d mask: ffffffffffffffff\n")
    doc = check(cd, make_root(tmp_path / "a", {"dmesg.txt": log}))
    assert doc["clocksource"]["current"] == "hpet" and doc["clocksource"]["from"] == "kernel log"
    slow = codes(doc)["slow-clocksource"]
    assert "the watchdog that demoted the TSC" in evidence(slow)
    # RHEL 6's old line names no watchdog, and RHEL 6 does not fail over: nothing inferred.
    old = "[2423265.1] Clocksource tsc unstable (delta = -8589933176 ns).  Enable clocksource failover by adding clocksource_failover kernel parameter.\n"
    doc = check(cd, make_root(tmp_path / "b", {"dmesg.txt": old}))
    assert doc["clocksource"]["current"] is None


def test_tick_based_stays_quiet_in_a_guest_or_with_sysfs(cd, tmp_path):
    # A KVM guest has kvm-clock besides: nothing is concluded without a switch line.
    guest = make_root(tmp_path / "guest", {
        "dmesg.txt": "[    0.000000] Hypervisor detected: KVM\n" + ACPI_OFF_LOG})
    doc = check(cd, guest)
    assert "slow-clocksource" not in codes(doc)
    assert doc["clocksource"]["current"] is None
    # sysfs wins over an older switch line in the log.
    host = make_root(tmp_path / "host", {
        "dmesg.txt": "[    0.5] clocksource: Switched to clocksource hpet\n"
                     "[    2.0] clocksource: Switched to clocksource tsc\n"
                     "[    9.0] clocksource: Switched to clocksource hpet\n"}, current="tsc\n")
    doc = check(cd, host)
    assert doc["clocksource"] == {"current": "tsc", "available": None}
    assert doc["status"] == "ok"


# ---- 2. 32-bit kernels and 32-bit programs ----

I386_LOG = (
    "[    0.000000] Linux version 2.6.24-19-generic (buildd@palmer) (gcc version 4.2.3) #1 SMP\n"
    "[    0.000000] 3200MB HIGHMEM available.\n"
    "[    0.000000] 896MB LOWMEM available.\n"
    "[   15.069155] Compat vDSO mapped to ffffe000.\n")


def test_i386_kernel_has_no_vdso_time(cd, tmp_path):
    root = make_root(tmp_path, {"dmesg.txt": I386_LOG},
                     current="hpet\n", available="hpet acpi_pm\n")
    doc = check(cd, root)
    assert doc["status"] == "critical"
    slow = codes(doc)["slow-clocksource"]
    # Before: "the vDSO reads hpet itself on this kernel" (a warning).
    assert "vDSO reads hpet itself" not in slow["title"]
    assert "32-bit kernel's vDSO has no clock_gettime" in slow["title"]
    assert slow["severity"] == "critical"
    ev = evidence(slow)
    assert "7a59ed415f5b" in ev and "3200MB HIGHMEM available." in ev


def test_i386_kernel_on_kvm_clock_from_a_backtrace(cd, tmp_path):
    # No release, no sysfs: a backtrace through entry_32.S says 32-bit, and
    # no 32-bit kernel reads kvm-clock in its vDSO.
    log = ("[    3.225961][    T1] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.12.0-1 04/01/2014\n"
           "[ 3.256402][ T1] ret_from_fork (arch/x86/entry/entry_32.S:772) \n"
           "[    3.518469][    T1] clocksource: Switched to clocksource kvm-clock\n")
    doc = check(cd, make_root(tmp_path / "a", {"dmesg.txt": log}))
    slow = codes(doc)["slow-clocksource"]
    assert slow["severity"] == "critical" and doc["hypervisor"]["name"] == "kvm"
    assert "entry_32.S" in evidence(slow) and "64-bit x86 kernel" in slow["fix"]["lasting"]
    # The same on a 64-bit kernel is a kvm-clock guest like any other.
    doc = check(cd, make_root(tmp_path / "b", {"dmesg.txt": log.replace("entry_32.S", "entry_64.S")}))
    assert "slow-clocksource" not in codes(doc)


def test_i386_kernel_on_tsc_is_told_once(cd, tmp_path):
    root = make_root(tmp_path, {"dmesg.txt": I386_LOG,
                                "proc/sys/kernel/osrelease": "2.6.24-19-generic\n",
                                "etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=8.04\n"
                                                   "DISTRIB_CODENAME=hardy\n"}, current="tsc\n")
    doc = check(cd, root)
    c = codes(doc)
    assert "slow-clocksource" not in c   # the clocksource is not the cause
    newer = c["fix-needs-newer-kernel"]
    assert newer["severity"] == "warning" and "even on tsc" in newer["title"]
    assert doc["status"] == "warning"
    assert "read by the vDSO" not in doc["verdict"]


def test_64bit_kernel_and_uname_arch_stay_quiet(cd, tmp_path):
    # The same old kernel, 64-bit: the vDSO reads hpet itself (slow, no system call).
    root = make_root(tmp_path / "a", {"proc/sys/kernel/osrelease": "2.6.32-5-amd64\n"},
                     current="hpet\n")
    slow = codes(check(cd, root))["slow-clocksource"]
    assert "vDSO reads hpet itself" in slow["title"] and slow["severity"] == "warning"
    # uname says i686, but the kernel is 4.19: the 32-bit vDSO has had clock_gettime since 3.15.
    root = make_root(tmp_path / "b", {"proc/sys/kernel/osrelease": "4.19.0-20-686-pae\n",
                                      "proc/sys/kernel/arch": "i686\n"}, current="tsc\n")
    doc = check(cd, root)
    assert doc["status"] == "ok" and "fix-needs-newer-kernel" not in codes(doc)
    assert doc["cpu"]["arch"] == "i686"


def test_32bit_programs_on_an_old_64bit_kernel(cd, tmp_path):
    root = make_root(tmp_path, {"proc/cpuinfo": BARE_CPUINFO,
                                "proc/sys/kernel/osrelease": "3.10.0-1160.el7.x86_64\n"},
                     current="tsc\n")
    doc = check(cd, root)
    assert doc["status"] == "ok"
    newer = codes(doc)["fix-needs-newer-kernel"]
    assert newer["severity"] == "info" and "32-bit programs" in newer["title"]
    assert "x32" in evidence(newer)
    # From 3.15 on, nothing is said.
    (root / "proc/sys/kernel/osrelease").write_text("3.16.0-4-amd64\n")
    assert "fix-needs-newer-kernel" not in codes(check(cd, root))
    # On kvm-clock, the compat and x32 vDSOs read the pvclock page only from about 4.5.
    (root / "sys" / CS / "current_clocksource").write_text("kvm-clock\n")
    newer = codes(check(cd, root))["fix-needs-newer-kernel"]
    assert "32-bit and x32 programs on kvm-clock" in newer["title"]
    (root / "proc/sys/kernel/osrelease").write_text("4.9.0-8-amd64\n")
    assert "fix-needs-newer-kernel" not in codes(check(cd, root))


# ---- 3. the distribution and its era ----

WARP_LOG = ("[    0.144008] TSC synchronization [CPU#0 -> CPU#1]:\n"
            "[    0.144008] Measured 66930 cycles TSC warp between CPUs, turning off TSC clock.\n"
            "[    0.144008] Marking TSC unstable due to check_tsc_sync_source failed\n")


def test_ubuntu_804_is_not_told_debian_backports(cd, tmp_path):
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "2.6.24-19-generic\n",
                                "etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=8.04\n"
                                                   "DISTRIB_CODENAME=hardy\n",
                                "dmesg.txt": I386_LOG + WARP_LOG},
                     current="acpi_pm\n", available="acpi_pm\n")
    doc = check(cd, root)
    text = all_fix_text(doc)
    assert "wheezy" not in text and "linux-image-amd64" not in text and "Debian" not in text
    newer = codes(doc)["fix-needs-newer-kernel"]["fix"]["lasting"]
    assert "Ubuntu 8.04 LTS has kernel 2.6.24" in newer
    assert "Ubuntu 16.04 LTS is the first release" in newer   # 3.15 for a 32-bit kernel
    assert "/etc/default/grub.d" not in text


def test_grub_legacy_era(cd, tmp_path):
    # Ubuntu 8.04 boots with GRUB legacy: a kernel parameter goes on menu.lst's "# kopt=" line.
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "2.6.24-19-server\n",
                                "etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=8.04\n"},
                     current="hpet\n", available="hpet tsc acpi_pm\n")
    lasting = codes(check(cd, root))["better-clocksource-available"]["fix"]["lasting"]
    assert "/boot/grub/menu.lst" in lasting and "/etc/default/grub.d" not in lasting
    # Ubuntu 18.04: the drop-in.
    (root / "etc/lsb-release").write_text("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=18.04\n")
    (root / "proc/sys/kernel/osrelease").write_text("4.4.0-21-generic\n")
    lasting = codes(check(cd, root))["better-clocksource-available"]["fix"]["lasting"]
    assert "/etc/default/grub.d/" in lasting and "menu.lst" not in lasting


def test_release_read_or_inferred(cd, tmp_path):
    # Debian 8 from os-release: its backports suite.
    root = make_root(tmp_path / "a", {"proc/sys/kernel/osrelease": "3.2.0-4-686-pae\n",
                                      "etc/os-release": 'ID=debian\nVERSION_ID="7"\n'},
                     current="tsc\n")
    lasting = codes(check(cd, root))["fix-needs-newer-kernel"]["fix"]["lasting"]
    assert "Debian 7 (wheezy), the wheezy-backports suite" in lasting
    assert "inferred" not in lasting
    # Unknown distribution: what to look for, and no distribution's package.
    root = make_root(tmp_path / "b", {"proc/sys/kernel/osrelease": "3.4.113-custom-i686\n",
                                      "proc/sys/kernel/arch": "i686\n"}, current="tsc\n")
    lasting = codes(check(cd, root))["fix-needs-newer-kernel"]["fix"]["lasting"]
    assert "a kernel of at least 3.15" in lasting
    assert "apt-get" not in lasting and "yum" not in lasting and "backports" not in lasting


def test_rhel6_is_told_its_own_next_release(cd):
    # 2.6.32-...el6: the release is in the kernel's name.
    doc = check(cd, FIXTURES / "kvm-rhel6-kvm-clock-old-watchdog")
    lasting = codes(doc)["slow-clocksource"]["fix"]["lasting"]
    assert "Red Hat Enterprise Linux 6 has kernel 2.6.32" in lasting
    assert "Red Hat Enterprise Linux 7 is the first release" in lasting
    assert "apt-get" not in all_fix_text(doc)


def test_unknown_distribution_is_not_guessed(cd, tmp_path):
    # A kernel release that names no distribution: each way is labelled with whom it fits.
    # (The watchdog's rejection, no evidence either way: the parameter after the measurement.)
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "5.15.0-custom\n",
                                "dmesg.txt": "[    0.0] tsc: Detected 2593.992 MHz processor\n"
                                             "[ 90.0] tsc: Marking TSC unstable due to clocksource watchdog\n"},
                     current="acpi_pm\n")
    lasting = codes(check(cd, root))["slow-clocksource"]["fix"]["lasting"]
    assert "make the kernel keep the TSC:\nThe distribution is not known here. On Debian, Ubuntu" in lasting
    assert "grubby" in lasting and "another boot loader" in lasting
    # Known: only its own way.
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text("ID=rocky\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.3\"\n")
    lasting = codes(check(cd, root))["slow-clocksource"]["fix"]["lasting"]
    assert "grubby --update-kernel=ALL" in lasting and "update-grub" not in lasting
    assert "not known" not in lasting


# ---- 4. no advice that disables a check the evidence says was right ----

CORE2_LOG = ("[    0.000000] tsc: Detected 2194.000 MHz processor\n"
             "[    0.312003] TSC synchronization [CPU#0 -> CPU#1]:\n"
             "[    0.312003] Measured 3986188462 cycles TSC warp between CPUs, turning off TSC clock.\n"
             "[    0.312003] tsc: Marking TSC unstable due to check_tsc_sync_source failed\n"
             "[    0.900000] clocksource: Switched to clocksource hpet\n")


def test_large_warp_is_not_silenced(cd, tmp_path):
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "4.15.0-20-generic\n",
                                "proc/cpuinfo": BARE_CPUINFO, "dmesg.txt": CORE2_LOG},
                     current="hpet\n", available="hpet acpi_pm\n")
    doc = check(cd, root)
    assert doc["hypervisor"]["name"] == "none"
    assert all(tok not in ("tsc=reliable", "tsc=nowatchdog", "clocksource=tsc")
               for _, tok in plan_params(cd, root))
    c = codes(doc)
    for code in ("slow-clocksource", "tsc-unstable-sync"):
        lasting = c[code]["fix"]["lasting"]
        assert "Do not add tsc=reliable" in lasting and "Add tsc=reliable" not in lasting
        assert "BIOS" in lasting
        # 3986188462 cycles at 2194 MHz is 1.82 s
        assert "3986188462 cycles: 1.82 s at 2194.000 MHz" in c[code]["fix"]["risk"]
    assert "3986188462" in evidence(c["tsc-unstable-sync"])


def test_tsc_halting_in_idle_is_not_silenced(cd, tmp_path):
    log = ("[    1.0] tsc: Marking TSC unstable due to TSC halts in idle\n"
           "[    1.1] clocksource: Switched to clocksource hpet\n")
    cpuinfo = BARE_CPUINFO
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "4.19.0-20-amd64\n",
                                "proc/cpuinfo": cpuinfo, "dmesg.txt": log}, current="hpet\n")
    doc = check(cd, root)
    assert not any(tok == "tsc=reliable" for _, tok in plan_params(cd, root))
    lasting = codes(doc)["slow-clocksource"]["fix"]["lasting"]
    assert "TSC halts in idle" in lasting or "halts in idle" in lasting


def test_watchdog_on_bare_metal_without_nonstop_tsc(cd, tmp_path):
    # The TSC measured less than the watchdog: it stopped while the CPU slept.
    log = ("[ 3600.1] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
           "[ 3600.1] clocksource:                       'hpet' wd_nsec: 503484590 wd_now: 5a5f1c2b wd_last: 5904ab12 mask: ffffffff\n"
           "[ 3600.1] clocksource:                       'tsc' cs_nsec: 403484590 cs_now: 4f1e3c2a1b cs_last: 4e9a8b7c6d mask: ffffffffffffffff\n"
           "[ 3600.1] tsc: Marking TSC unstable due to clocksource watchdog\n"
           "[ 3600.2] clocksource: Switched to clocksource hpet\n")
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "5.10.0-20-amd64\n",
                                "proc/cpuinfo": BARE_CPUINFO, "dmesg.txt": log}, current="hpet\n")
    doc = check(cd, root)
    assert plan_params(cd, root) == []
    wd = codes(doc)["tsc-unstable-watchdog"]
    assert "C-states" in wd["fix"]["lasting"] and "100.0 ms behind" in wd["fix"]["lasting"]


def test_small_warp_in_a_vm_is_not_silenced(cd, tmp_path):
    # A VirtualBox guest, 66930 cycles (about 25 us): a measured warp all the same, whose
    # cure is VirtualBox's settings, not a parameter that silences the kernel's test.
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "4.19.0-20-amd64\n",
                                "sys/class/dmi/id/sys_vendor": "innotek GmbH\n",
                                "sys/class/dmi/id/product_name": "VirtualBox\n",
                                "dmesg.txt": "[    0.0] tsc: Detected 2593.992 MHz processor\n" + WARP_LOG},
                     current="acpi_pm\n", available="acpi_pm\n")
    doc = check(cd, root)
    assert ("add", "tsc=reliable") not in plan_params(cd, root)
    assert "Do not add tsc=reliable" in all_fix_text(doc) and "VBoxManage" in all_fix_text(doc)


# ---- 5. the hypervisor from every signal ----

def test_virtualbox_with_its_kvm_interface(cd, tmp_path):
    log = ("[    0.000000] DMI: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006\n"
           "[    0.000000] Hypervisor detected: KVM\n"
           "[    0.000000] kvm-clock: Using msrs 4b564d01 and 4b564d00\n"
           + WARP_LOG)
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "4.19.0-20-amd64\n", "dmesg.txt": log},
                     current="acpi_pm\n", available="acpi_pm\n")
    doc = check(cd, root)
    hv = doc["hypervisor"]
    assert hv["name"] == "virtualbox" and hv["from"] == "dmi" and hv["interface"] == "kvm"
    assert hv["kernel_log"] == "KVM"
    text = all_fix_text(doc)
    assert "VBoxManage" in text and "libvirt" not in text and "invtsc" not in text
    assert "--paravirtprovider kvm" not in text   # already in force


def test_plain_kvm_guest_stays_kvm(cd, tmp_path):
    log = ("[    0.000000] DMI: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
           "[    0.000000] Hypervisor detected: KVM\n")
    root = make_root(tmp_path, {"dmesg.txt": log}, current="kvm-clock\n")
    hv = check(cd, root)["hypervisor"]
    assert hv["name"] == "kvm" and "interface" not in hv


# ---- 6. evidence that quotes the kernel ----

def test_new_watchdog_format_is_quoted(cd, tmp_path):
    log = ("[ 1234.567890] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
           "[ 1234.567891] clocksource:                       'hpet' wd_nsec: 503484590 wd_now: 5a5f1c2b wd_last: 5904ab12 mask: ffffffff\n"
           "[ 1234.567892] clocksource:                       'tsc' cs_nsec: 503993664 cs_now: 4f1e3c2a1b cs_last: 4e9a8b7c6d mask: ffffffffffffffff\n"
           "[ 1234.567893] clocksource:                       Clocksource 'tsc' skewed 509074 ns (0 ms) over watchdog 'hpet' interval of 503484590 ns (503 ms)\n"
           "[ 1234.567894] clocksource:                       'tsc' is current clocksource.\n"
           "[ 1234.567895] tsc: Marking TSC unstable due to clocksource watchdog\n"
           "[ 1234.567896] clocksource: Switched to clocksource hpet\n")
    root = make_root(tmp_path, {"dmesg.txt": log,
                                "proc/sys/kernel/osrelease": "6.1.0-18-amd64\n"}, current="hpet\n")
    ev = evidence(codes(check(cd, root))["tsc-unstable-watchdog"])
    assert ("Clocksource 'tsc' skewed 509074 ns (0 ms) over watchdog 'hpet' interval of "
            "503484590 ns (503 ms)") in ev
    assert "'tsc' cs_nsec: 503993664" in ev and "'hpet' wd_nsec: 503484590" in ev
    assert "a skew of 0.5 ms" in ev   # the derived figure stays, beside the quote


# ---- 7. a missing input is named as missing, never read as an answer ----

def test_unreadable_log_is_named_not_read_as_silence(cd, tmp_path):
    # hpet, TSC listed but not in use, no kernel log: the reason is unknown, and said why.
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "5.10.0-20-amd64\n"},
                     current="hpet\n", available="hpet acpi_pm\n")
    lasting = codes(check(cd, root))["slow-clocksource"]["fix"]["lasting"]
    assert "the kernel log could not be read (dmesg.txt: missing)" in lasting
    assert "does not say" not in lasting
    # With a log that holds no rejection, the log's silence is the answer.
    (root / "dmesg.txt").write_text("[    0.0] Linux version 5.10.0-20-amd64 (x@y) #1 SMP\n")
    lasting = codes(check(cd, root))["slow-clocksource"]["fix"]["lasting"]
    assert "The kernel log does not say why" in lasting


# ---- arm64: an erratum whose workaround drops the vDSO, from the log alone ----

ARM64_LOG = (
    "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]\n"
    "[    0.000000] Linux version 6.9.2-pine64-plus (builder@host) (aarch64-linux-gnu-gcc 12.2.0) #1 SMP\n"
    "{workaround}"
    "[    0.000000] arch_timer: cp15 timer(s) running at 24.00MHz (phys).\n"
    "[    0.000000] clocksource: arch_sys_counter: mask: 0xffffffffffffff max_cycles: 0x588fe9dc0, max_idle_ns: 440795202592 ns\n")


def test_arm64_erratum_that_traps_the_counter_is_a_system_call(cd, tmp_path):
    log = ARM64_LOG.format(workaround="[    0.000000] arch_timer: Enabling global workaround for Allwinner erratum UNKNOWN1\n"
                                      "[    0.000000] arch_timer: CPU0: Trapping CNTVCT access\n")
    doc = check(cd, make_root(tmp_path, {"dmesg.txt": log}))
    assert doc["clocksource"]["current"] == "arch_sys_counter"
    slow = codes(doc)["slow-clocksource"]
    assert slow["severity"] == "critical" and "Allwinner erratum UNKNOWN1" in evidence(slow)
    assert "TSC" not in slow["fix"]["lasting"]


def test_arm64_healthy_or_harmless_erratum_stays_quiet(cd, tmp_path):
    # No workaround, and ARM erratum 1418040 (only the compat vDSO): the vDSO reads the counter.
    for i, wa in enumerate(["", "[    0.000000] arch_timer: Enabling local workaround for ARM erratum 1418040\n"]):
        doc = check(cd, make_root(tmp_path / str(i), {"dmesg.txt": ARM64_LOG.format(workaround=wa)}))
        assert doc["status"] == "ok" and doc["clocksource"]["current"] == "arch_sys_counter"
        assert "slow-clocksource" not in codes(doc)
    # An x86 log's registered clocksources say nothing of the one in force.
    x86 = ("[    0.042073] clocksource: hpet: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: 133484873504 ns\n"
           "[    0.062096] clocksource: tsc-early: mask: 0xffffffffffffffff max_cycles: 0x2e09cc5255e, max_idle_ns: 440795261586 ns\n")
    doc = check(cd, make_root(tmp_path / "x86", {"dmesg.txt": x86}))
    assert doc["clocksource"]["current"] is None
