# SPDX-License-Identifier: MIT
"""`clockdoctor snapshot` for a fleet: the NTP state travels with the
snapshot (adjtimex.txt), so `check --root` on it says what `check` said on
the machine; and `--redact` takes host names, addresses, serial numbers and
UUIDs out of what would be attached to a public bug report."""
import shutil

from conftest import FIXTURES, codes


def ntp_view(doc):
    """What check said about NTP: the facts and the finding, if any."""
    c = codes(doc)
    f = c.get("ntp-unsynchronized")
    return doc["ntp"], f and f["severity"]


def test_ntp_state_travels(cd, tmp_path):
    """Whatever this machine's NTP state is, the snapshot's check says the
    same as the live check (on the development machine: unsynchronised,
    ntp-unsynchronized as info)."""
    snap = tmp_path / "snap"
    assert cd("snapshot", str(snap)).rc == 0
    text = (snap / "adjtimex.txt").read_text()
    assert "status: " in text
    live = cd("check", "--json", "--no-measure").json()
    saved = cd("check", "--json", "--root", str(snap)).json()
    assert live["ntp"] is not None
    assert ntp_view(saved)[0]["synchronized"] == live["ntp"]["synchronized"]
    assert ntp_view(saved)[0]["status"] == live["ntp"]["status"]
    assert ntp_view(saved)[1] == ntp_view(live)[1]
    assert not [n for n in saved.get("unknown", []) if "NTP" in n]


def copy_fixture(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(FIXTURES / name, dst)
    return dst


def test_hand_made_adjtimex_print(cd, tmp_path):
    """`adjtimex --print` output saved by hand is read as ours is: an
    unsynchronised clock (STA_UNSYNC, TIME_ERROR) is ntp-unsynchronized, a
    disciplined one is not; a snapshot without the file says NTP is not
    known instead of saying nothing."""
    root = copy_fixture(tmp_path, "qemu-tcg-smp1-tsc")
    before = cd("check", "--json", "--root", str(root)).json()
    assert before["ntp"] is None and "ntp-unsynchronized" not in codes(before)
    assert "NTP: no adjtimex.txt in the snapshot" in cd("check", "--root", str(root)).out
    (root / "adjtimex.txt").write_text(
        "         mode: 0\n       offset: 0\n    frequency: 0\n     maxerror: 16000000\n"
        "     esterror: 16000000\n       status: 64\ntime_constant: 2\n    precision: 1\n"
        "    tolerance: 32768000\n         tick: 10000\n"
        "     raw time:  1795608148s 412345us = 1795608148.412345\n return value = 5\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    assert doc["ntp"]["synchronized"] is False and doc["ntp"]["state"] == 5
    assert "ntp-unsynchronized" in codes(doc)
    assert "adjtimex: state 5 (TIME_ERROR), status 0x40 (STA_UNSYNC)" in \
        codes(doc)["ntp-unsynchronized"]["evidence"]
    (root / "adjtimex.txt").write_text("       status: 8193\n")
    doc = cd("check", "--json", "--root", str(root)).json()
    assert doc["ntp"]["synchronized"] is True and "ntp-unsynchronized" not in codes(doc)


def test_bad_adjtimex_txt(cd, tmp_path):
    root = copy_fixture(tmp_path, "qemu-tcg-smp1-tsc")
    for junk in (b"status: lots\n", b"\x00\xff" * 5000, b"status: 64 return value = 5\n"):
        (root / "adjtimex.txt").write_bytes(junk)
        r = cd("check", "--root", str(root))
        assert r.rc in (0, 1), r.err
        assert "NTP: adjtimex.txt has no readable status" in r.out
        assert "ntp-unsynchronized" not in r.out
    (root / "adjtimex.txt").unlink()
    (root / "adjtimex.txt").mkdir()
    r = cd("check", "--root", str(root))
    assert r.rc in (0, 1) and "NTP: is a folder" in r.out


# ---- --redact ----

HOSTILE_LOG = """\
[    2.000000] systemd[1]: Hostname set to <db7.corp.example.com>.
[    2.100000] e1000e 0000:00:19.0 eth0: (PCI Express:2.5GT/s:Width x1) 00:1e:67:aa:bb:cc
[    2.200000] usb 1-1: SerialNumber: 4C530001230825105045
[    2.300000] EXT4-fs (sda1): mounted filesystem 3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9 with ordered data mode
[    2.400000] IPv6: eth0: fe80::21e:67ff:feaa:bbcc%eth0 2001:db8::7
[    2.500000] [UFW BLOCK] IN=eth0 OUT= MAC=00:1e:67:aa:bb:cc:52:54:00:12:34:56:08:00 SRC=203.0.113.5 DST=10.20.30.40
[    2.600000] nfs: server nas01.corp.example.com not responding; db7 \x1b]0;PWNED\x07\x1b[2J
"""
IDENTIFIERS = ["db7", "corp.example.com", "00:1e:67", "52:54:00", "4C530001230825105045", "3f1e2d4c",
               "fe80:", "2001:db8", "203.0.113.5", "10.20.30.40", "ops@", "SN-998877"]


def hostile_snapshot(tmp_path):
    """The hpet fixture with identifiers in its log, command line and DMI."""
    src = copy_fixture(tmp_path, "qemu-tcg-smp2-hpet")
    with open(src / "dmesg.txt", "a") as f:
        f.write(HOSTILE_LOG)
    cmdline = src / "proc" / "cmdline"
    cmdline.write_text(cmdline.read_text().rstrip("\n")
                       + " root=UUID=3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9 ip=10.20.30.40::10.20.30.1:255.255.255.0:db7:eth0:off\n")
    dmi = src / "sys/class/dmi/id"
    dmi.mkdir(parents=True, exist_ok=True)
    (dmi / "product_name").write_text("Standard PC for ops@corp.example.com, Serial Number: SN-998877\n")
    return src


def all_text(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes().decode("utf-8", "replace")
            for p in folder.rglob("*") if p.is_file()}


def test_redact_a_hostile_snapshot(cd, tmp_path):
    src = hostile_snapshot(tmp_path)
    dst = tmp_path / "public"
    r = cd("snapshot", "--redact", "--root", str(src), str(dst))
    assert r.rc == 0, r.err
    assert r.out.startswith("redacted: host names ")
    for kind in ("IPv4 addresses", "IPv6 addresses", "MAC addresses", "UUIDs", "serial numbers",
                 "e-mail addresses"):
        assert kind in r.out.splitlines()[0], r.out
    texts = all_text(dst)
    for name, text in texts.items():
        for ident in IDENTIFIERS:
            assert ident not in text, (name, ident)
    assert "Hostname set to <<host>>." in texts["dmesg.txt"]
    assert "ip=<ipv4>::<ipv4>:<ipv4>:<host>:eth0:off" in texts["proc/cmdline"]
    assert "REDACTED.txt" in texts
    # Files that hold no identifier are copied byte for byte.
    for same in ("proc/cpuinfo", "cpuid.txt", "etc/os-release",
                 "sys/devices/system/clocksource/clocksource0/current_clocksource"):
        if (src / same).exists():
            assert (dst / same).read_bytes() == (src / same).read_bytes(), same
    # And the diagnosis is the same, to its evidence.
    before = cd("check", "--json", "--root", str(src)).json()
    after = cd("check", "--json", "--root", str(dst)).json()
    assert (after["status"], after["verdict"]) == (before["status"], before["verdict"])
    assert [(f["code"], f["evidence"]) for f in after["findings"]] == \
        [(f["code"], f["evidence"]) for f in before["findings"]]
    assert after["kernel"]["release"] == before["kernel"]["release"]
    # The escapes in the log stay bytes in the file; the report never prints them raw.
    text = cd("check", "--root", str(dst)).out
    assert "\x1b" not in text and "\x07" not in text


def test_redact_this_machine(cd, tmp_path):
    """This machine's own snapshot: its host name and every address the
    plain snapshot holds are gone from the redacted one, whose diagnosis is
    the same."""
    import ipaddress
    import re
    import socket
    plain, public = tmp_path / "plain", tmp_path / "public"
    assert cd("snapshot", str(plain)).rc == 0
    r = cd("snapshot", "--redact", str(public))
    assert r.rc == 0, r.err
    assert r.out.startswith("redacted:")
    addresses = set()
    for text in all_text(plain).values():
        for word in re.findall(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.-])", text):
            try:
                addresses.add(str(ipaddress.IPv4Address(word)))
            except ValueError:
                pass
    host = socket.gethostname()
    words = {name: set(re.findall(r"[\w.-]+", text)) for name, text in all_text(public).items()}
    for name, ws in words.items():
        if len(host) >= 2 and host != "localhost":
            assert host not in ws, name
        assert not addresses & ws, (name, addresses & ws)
    # DMI's serial numbers and UUIDs are never saved, redacted or not.
    for folder in (plain, public):
        assert not [p for p in folder.rglob("*") if p.name in ("product_serial", "product_uuid", "board_serial",
                                                               "chassis_serial", "board_asset_tag")]
    a = cd("check", "--json", "--root", str(plain)).json()
    b = cd("check", "--json", "--root", str(public)).json()
    assert [f["code"] for f in a["findings"]] == [f["code"] for f in b["findings"]]
    assert (a["status"], a["clocksource"], a["kernel"]["release"]) == (b["status"], b["clocksource"],
                                                                      b["kernel"]["release"])


def test_snapshot_root_refusals(cd, tmp_path):
    r = cd("snapshot", "--root", str(tmp_path / "none"), str(tmp_path / "out"))
    assert r.rc == 3 and "not a folder" in r.err
    src = copy_fixture(tmp_path, "qemu-tcg-smp1-tsc")
    r = cd("snapshot", "--force", "--root", str(src), str(src))
    assert r.rc == 3 and "same folder" in r.err
    r = cd("snapshot", "--root")
    assert r.rc == 3 and "option --root needs a value" in r.err
    # Without --redact, --root copies the snapshot as it is.
    out = tmp_path / "copy"
    assert cd("snapshot", "--root", str(src), str(out)).rc == 0
    assert (out / "dmesg.txt").read_bytes() == (src / "dmesg.txt").read_bytes()
    assert not (out / "REDACTED.txt").exists()


def test_snapshot_keeps_only_inits_container_variable(cd, tmp_path):
    # the platform's signs travel (the DMI asset tag, init's container=),
    # and nothing else of init's environment, which may hold secrets
    src = tmp_path / "src"
    for rel, data in {"proc/1/environ": b"DB_PASSWORD=hunter2\0container=lxc\0HOME=/\0",
                      "sys/class/dmi/id/chassis_asset_tag": b"7783-7084-3265-9085-8269-3286-77\n",
                      "sys/devices/system/clocksource/clocksource0/current_clocksource": b"hpet\n"}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    dst = tmp_path / "snap"
    r = cd("snapshot", "--root", str(src), str(dst))
    assert r.rc == 0, r.err
    assert (dst / "proc/1/environ").read_bytes() == b"container=lxc\0"
    assert (dst / "proc/1/environ").stat().st_mode & 0o077 == 0
    assert (dst / "sys/class/dmi/id/chassis_asset_tag").read_bytes().startswith(b"7783-")
    doc = cd("check", "--json", "--root", str(dst)).json()
    assert doc["hypervisor"]["container"] == "lxc"
    # the quiet side: no container= in init's environment, no file saved
    (src / "proc/1/environ").write_bytes(b"PATH=/bin\0")
    dst2 = tmp_path / "snap2"
    assert cd("snapshot", "--root", str(src), str(dst2)).rc == 0
    assert not (dst2 / "proc/1/environ").exists()
