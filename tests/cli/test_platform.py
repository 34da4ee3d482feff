# SPDX-License-Identifier: MIT
"""The platform and the clocksource, each made to fire and kept quiet: every clocksource Linux has
registered known (an unknown one reported as unknown), the platform from every line there is
(the paravirt banner, DMI, the device tree, a hardware-only clocksource), and the advice for where
the user stands (a container, a sandbox, a desktop product's VM: the fix is on the host).

Each test builds a small snapshot in a temporary folder (the layout `check --root` reads) in the
kernel's own wording.
"""
import json

import pytest

from conftest import codes, make_root

EXIT = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}
GRUB = ("GRUB_CMDLINE", "update-grub", "grubby", "grub2-mkconfig", "/etc/default/grub")


def check(cd, root):
    r = cd("check", "--json", "--root", str(root))
    doc = r.json()
    assert r.rc == EXIT[doc["status"]], r.err
    return doc


def text(cd, root):
    return cd("check", "--root", str(root)).out


def all_fix_text(doc):
    return "\n".join(v or "" for f in doc["findings"] for v in f["fix"].values())


def plan_params(cd, root):
    r = cd("fix", "--json", "--root", str(root))
    return [(p["action"], p["token"]) for p in json.loads(r.out)["plan"]["params"]]


# ---- every clocksource ----

@pytest.mark.parametrize("name", ["corefreq", "my_clock"])
def test_unknown_clocksource_is_unknown(cd, tmp_path, name):
    root = make_root(tmp_path, current=f"{name}\n", available=f"{name} hpet\n")
    doc = check(cd, root)
    assert doc["status"] == "unknown"
    assert "clocksource-unverified" in codes(doc)
    assert "not one this tool knows" in doc["verdict"]


@pytest.mark.parametrize("name", ["tsc", "arch_sys_counter", "timebase", "tod", "riscv_clocksource"])
def test_fast_clocksources_are_ok(cd, tmp_path, name):
    doc = check(cd, make_root(tmp_path, current=f"{name}\n", available=f"{name}\n"))
    assert doc["status"] == "ok"
    assert "clocksource-unverified" not in codes(doc)


@pytest.mark.parametrize("name", ["sgi_rtc", "uv_rtc", "cyclone", "scx200_hrt", "mfgpt", "numachip2",
                                  "lguest", "vmi-timer", "arch_mem_counter", "timer", "mxc_timer1",
                                  "mct-frc", "dw-apb-timer1", "hbtick"])
def test_slow_clocksources_are_slow(cd, tmp_path, name):
    doc = check(cd, make_root(tmp_path, current=f"{name}\n", available=f"{name}\n"))
    assert doc["status"] == "critical"
    assert "slow-clocksource" in codes(doc)
    assert "does not slow time calls" not in all_fix_text(doc)


def test_old_kernel_before_the_vdso_read(cd, tmp_path):
    # riscv's vDSO read the time CSR only from about 5.8
    root = make_root(tmp_path, {"proc/sys/kernel/osrelease": "5.4.0-riscv64\n"},
                     current="riscv_clocksource\n", available="riscv_clocksource\n")
    doc = check(cd, root)
    assert "slow-clocksource" in codes(doc)
    assert "5.8" in "\n".join(codes(doc)["slow-clocksource"]["evidence"])


UV_LOG = ("[  100.000000] clocksource: timekeeping watchdog on CPU118: Marking clocksource 'tsc' as "
          "unstable because the skew is too large:\n"
          "[  100.000001] tsc: Marking TSC unstable due to clocksource watchdog\n"
          "[  100.000002] clocksource: Switched to clocksource sgi_rtc\n")


def test_sgi_rtc_watchdog_is_bare_metal_and_slow(cd, tmp_path):
    doc = check(cd, make_root(tmp_path, {"dmesg.txt": UV_LOG}))
    assert doc["clocksource"]["current"] == "sgi_rtc"
    assert doc["status"] == "critical"
    assert doc["hypervisor"]["name"] == "none"
    fixes = all_fix_text(doc)
    assert "does not slow time calls" not in fixes and "on the host" not in fixes


# ---- the platform from every line ----

def log_root(tmp_path, log, **kw):
    return make_root(tmp_path, {"dmesg.txt": log}, **kw)


@pytest.mark.parametrize("log,name,source", [
    ("[    0.000000] Booting paravirtualized kernel on bare hardware\n", "none", "kernel log"),
    ("[    0.000000] Booting paravirtualized kernel on KVM\n", "kvm", "kernel log"),
    ("[    0.000000] Booting paravirtualized kernel on Xen\n", "xen", "kernel log"),
    ("[    0.000000] DMI: LENOVO 2007F2G/2007F2G, BIOS 79ETE7WW (2.27 ) 03/21/2011\n", "none", "dmi"),
    ("[    0.000000] DMI: Dell Inc. PowerEdge R640/0W23H8, BIOS 2.12.2 07/09/2021\n", "none", "dmi"),
    ("[    0.000000] OF: fdt: Machine model: linux,dummy-virt\n", "other", "device tree"),
    ("[    0.000000] Machine model: Raspberry Pi 4 Model B Rev 1.4\n", "none", "device tree"),
    # a hypervisor's sign wins over every bare-metal one
    ("[    0.000000] Hypervisor detected: KVM\n"
     "[    0.000000] Booting paravirtualized kernel on bare hardware\n", "kvm", "kernel log"),
    ("[    0.000000] DMI: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2 04/01/2014\n"
     "[    0.000000] Booting paravirtualized kernel on bare hardware\n", "other", "dmi"),
    # no sign at all: unknown
    ("[    0.000000] Machine model: Some Board Nobody Knows\n", "unknown", None),
    ("[    0.000000] DMI: Acme Widgets Model 1/Board, BIOS 1\n", "unknown", None),
])
def test_platform_signs(cd, tmp_path, log, name, source):
    doc = check(cd, log_root(tmp_path, log, current="hpet\n", available="hpet acpi_pm\n"))
    assert doc["hypervisor"]["name"] == name
    assert doc["hypervisor"]["from"] == source


def test_device_tree_model_file(cd, tmp_path):
    root = make_root(tmp_path, {"proc/device-tree/model": b"Hardkernel ODROID-N2\x00"},
                     current="arch_sys_counter\n", available="arch_sys_counter\n")
    doc = check(cd, root)
    assert doc["hypervisor"]["name"] == "none"
    assert doc["hypervisor"]["machine_model"] == "Hardkernel ODROID-N2"


def test_bare_metal_warp_gets_the_firmware_not_tsc_reliable(cd, tmp_path):
    log = ("[    0.000000] DMI: LENOVO 2007F2G/2007F2G, BIOS 79ETE7WW (2.27 ) 03/21/2011\n"
           "[    1.916801] TSC synchronization [CPU#0 -> CPU#1]:\n"
           "[    1.917311] Measured 521576 cycles TSC warp between CPUs, turning off TSC clock.\n"
           "[    1.918320] tsc: Marking TSC unstable due to check_tsc_sync_source failed\n")
    doc = check(cd, log_root(tmp_path, log))
    assert doc["hypervisor"]["name"] == "none"
    assert "tsc=reliable" not in plan_params_or_empty(cd, tmp_path)
    assert "firmware" in all_fix_text(doc)


def plan_params_or_empty(cd, root):
    return " ".join(tok for _, tok in plan_params(cd, root))


def test_arm_without_its_timer_gets_no_tsc_advice(cd, tmp_path):
    log = "    arch_timer: Unable to find a suitable frame in timer @ 0x000000002a810000\n"
    doc = check(cd, log_root(tmp_path, log, current="jiffies\n", available="jiffies\n"))
    lasting = codes(doc)["slow-clocksource"]["fix"]["lasting"]
    assert "TSC" not in lasting and "arch_timer" in lasting
    # x86 without a reason still gets the x86 hint
    doc = check(cd, make_root(tmp_path / "x86", {"dmesg.txt": "[ 0.000000] Booting paravirtualized kernel on "
                                                             "bare hardware\n"},
                              current="jiffies\n", available="jiffies\n"))
    assert "Marking TSC unstable" in codes(doc)["slow-clocksource"]["fix"]["lasting"]


# ---- where the user stands ----

def slow_root(tmp_path, files):
    return make_root(tmp_path, files, current="hpet\n", available="hpet acpi_pm\n")


@pytest.mark.parametrize("files,says", [
    ({"run/systemd/container": "docker\n"}, "a Docker container"),
    ({".dockerenv": ""}, "a Docker container"),
    ({"run/.containerenv": ""}, "a Podman container"),
    ({"run/systemd/container": "lxc\n"}, "an LXC container"),
    ({"dmesg.txt": "[    0.000000] Starting gVisor...\n"}, "gVisor"),
    ({"proc/sys/kernel/osrelease": "6.6.12-linuxkit\n"}, "restart Docker Desktop"),
    ({"proc/sys/kernel/osrelease": "5.15.153.1-microsoft-standard-WSL2\n"}, "wsl --shutdown"),
])
def test_container_fix_is_on_the_host(cd, tmp_path, files, says):
    root = slow_root(tmp_path, files)
    doc = check(cd, root)
    assert "slow-clocksource" in codes(doc)
    fixes = all_fix_text(doc)
    assert says in fixes
    for word in GRUB:
        assert word not in fixes, word
    assert plan_params(cd, root) == []


def test_docker_desktop_names_the_vm(cd, tmp_path):
    root = slow_root(tmp_path, {"proc/sys/kernel/osrelease": "6.6.12-linuxkit\n",
                                "run/systemd/container": "docker\n"})
    doc = check(cd, root)
    assert doc["hypervisor"]["utility_vm"] == "Docker Desktop's LinuxKit VM"
    assert doc["hypervisor"]["container"] == "docker"
    assert "inside a container: docker" in text(cd, root)


def test_a_machine_keeps_its_boot_advice(cd, tmp_path):
    # the quiet side: no container sign, the lasting fix is the machine's own
    root = slow_root(tmp_path, {"proc/sys/kernel/osrelease": "6.1.0-18-amd64\n",
                                "dmesg.txt": "[    0.000000] DMI: LENOVO 20XW/20XW, BIOS 1\n"})
    doc = check(cd, root)
    assert doc["hypervisor"]["container"] is None and doc["hypervisor"]["utility_vm"] is None
    assert "on the host" not in all_fix_text(doc)


def test_hostile_container_file(cd, tmp_path):
    root = slow_root(tmp_path, {"run/systemd/container": "docker\x1b[31m$(reboot)\n"})
    out = text(cd, root)
    assert "\x1b" not in out and "$(reboot)" not in out
    assert check(cd, root)["hypervisor"]["container"] == "docker"


def hypervisor_fix(doc):
    return "\n".join(f["fix"].get("hypervisor") or "" for f in doc["findings"])


def cloud_log(dmi):
    return (f"[    0.000000] DMI: {dmi}\n"
            "[    0.000000] Hypervisor detected: KVM\n"
            "[    0.000000] clocksource: Switched to clocksource hpet\n")


@pytest.mark.parametrize("dmi,says", [
    ("Amazon EC2 t3.micro/, BIOS 1.0 10/16/2017", ("instance type", "ec2-nitro-instances")),
    ("Google Google Compute Engine/Google Compute Engine, BIOS Google 01/01/2011",
     ("Configure NTP on a VM", "Compute Engine")),
])
def test_cloud_names_the_providers_fix(cd, tmp_path, dmi, says):
    log = cloud_log(dmi)
    doc = check(cd, log_root(tmp_path, log, current="hpet\n", available="kvm-clock hpet acpi_pm\n"))
    assert doc["hypervisor"]["name"] == "kvm"
    hv = hypervisor_fix(doc)
    assert all(s in hv for s in says)
    assert "Azure" not in hv
    # the quiet side: another KVM guest gets no cloud's text
    doc = check(cd, log_root(tmp_path / "kvm", cloud_log("QEMU Standard PC (i440FX + PIIX, 1996)/"),
                             current="hpet\n", available="kvm-clock hpet acpi_pm\n"))
    hv = hypervisor_fix(doc)
    assert hv and not any(s in hv for s in says)


AZURE_TAG = "7783-7084-3265-9085-8269-3286-77\n"


def azure_root(tmp_path, tag):
    files = {"sys/class/dmi/id/sys_vendor": "Microsoft Corporation\n",
             "sys/class/dmi/id/product_name": "Virtual Machine\n"}
    if tag is not None:
        files["sys/class/dmi/id/chassis_asset_tag"] = tag
    return make_root(tmp_path, files, current="hpet\n", available="hyperv_clocksource_tsc_page hpet acpi_pm\n")


def test_azure_by_its_asset_tag(cd, tmp_path):
    doc = check(cd, azure_root(tmp_path, AZURE_TAG))
    assert doc["hypervisor"]["name"] == "hyperv"
    hv = hypervisor_fix(doc)
    assert "Time sync for Linux VMs in Azure" in hv and "hyperv_clocksource_tsc_page" in hv


@pytest.mark.parametrize("tag", [None, "None\n", "7783-7084-3265-9085-8269-3286-78\n"])
def test_hyperv_without_azures_tag_is_no_azure(cd, tmp_path, tag):
    # the quiet side: a Hyper-V guest on a desk is Hyper-V, not Azure
    doc = check(cd, azure_root(tmp_path, tag))
    assert doc["hypervisor"]["name"] == "hyperv"
    assert "Azure" not in hypervisor_fix(doc)


@pytest.mark.parametrize("environ,says", [
    (b"PATH=/usr/bin\0container=lxc\0TERM=linux\0", "an LXC container"),
    (b"container=lxc-libvirt\0", "a libvirt LXC container"),
])
def test_container_from_inits_environment(cd, tmp_path, environ, says):
    # no systemd inside: only init's environment names the container
    root = slow_root(tmp_path, {"proc/1/environ": environ})
    doc = check(cd, root)
    assert doc["hypervisor"]["container"] == environ.split(b"container=")[1].split(b"\0")[0].decode()
    assert says in all_fix_text(doc)
    assert not any(g in all_fix_text(doc) for g in GRUB)


@pytest.mark.parametrize("environ", [b"PATH=/usr/bin\0TERM=linux\0", b"XCONTAINER=lxc\0notcontainer=lxc\0", b""])
def test_environment_without_container_is_a_machine(cd, tmp_path, environ):
    doc = check(cd, slow_root(tmp_path, {"proc/1/environ": environ}))
    assert doc["hypervisor"]["container"] is None


def test_hostile_environment_keeps_nothing_else(cd, tmp_path):
    root = slow_root(tmp_path, {"proc/1/environ": b"SECRET=hunter2\0container=lxc\x1b[31m$(reboot)\0"})
    out = text(cd, root)
    assert "hunter2" not in out and "\x1b" not in out and "$(reboot)" not in out
    assert check(cd, root)["hypervisor"]["container"] == "lxc"


FC_LOG = ("[    0.000000] Command line: console=ttyS0 reboot=k panic=1 pci=off  root=/dev/vda "
          "virtio_mmio.device=4K@0xd0000000:5\n"
          "[    0.000000] Hypervisor detected: KVM\n"
          "[    0.000000] clocksource: Switched to clocksource hpet\n")


def test_firecracker_microvm_fix_is_the_boot_args(cd, tmp_path):
    # Firecracker passes its virtio devices on the kernel command line
    doc = check(cd, log_root(tmp_path, FC_LOG, current="hpet\n", available="kvm-clock tsc hpet acpi_pm\n"))
    assert doc["hypervisor"]["utility_vm"] == "a microVM (Firecracker-style)"
    fixes = all_fix_text(doc)
    assert "boot_args" in fixes
    assert not any(g in fixes for g in GRUB)
    assert [p for p in plan_params(cd, tmp_path) if p[0] == "add"] == []


@pytest.mark.parametrize("cmdline", ["console=ttyS0 reboot=k panic=1 pci=off root=/dev/vda",
                                     "console=ttyS0 xvirtio_mmio.device=4K@0xd0000000:5"])
def test_no_virtio_mmio_on_the_command_line_is_no_microvm(cd, tmp_path, cmdline):
    log = FC_LOG.replace(FC_LOG.splitlines()[0], "[    0.000000] Command line: " + cmdline)
    doc = check(cd, log_root(tmp_path, log, current="hpet\n", available="kvm-clock tsc hpet acpi_pm\n"))
    assert doc["hypervisor"]["utility_vm"] is None
    assert "boot_args" not in all_fix_text(doc)
