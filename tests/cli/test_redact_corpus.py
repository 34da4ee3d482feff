# SPDX-License-Identifier: MIT
"""A corpus of planted identifiers, each in the place a real machine keeps
it: `snapshot --redact --root` leaves none of them in any file it writes,
and the redacted snapshot's diagnosis is the one of the original."""
import shutil

from conftest import FIXTURES

HOST, DOMAIN = "pi-kitchen", "home.example.org"
PLANTED = {
    # /proc/cpuinfo: a Raspberry Pi's SoC serial
    "pi serial": "100000003a1c8d5e",
    # the command line: LUKS, disks by id, root and resume by UUID, NFS root
    "luks uuid": "5d3c1b2a-9e8f-4a7b-8c6d-1e2f3a4b5c6d",
    "root uuid": "7e6d5c4b-3a29-4817-9605-f4e3d2c1b0a9",
    "resume partuuid": "0a1b2c3d-02",
    "disk model": "Samsung_SSD_970_EVO_1TB",
    "disk serial": "S467NX0M123456A",
    "wwn": "0x5002538e40a1b2c3",
    "nfs user": "carolnfs",
    "nfs server": "192.168.178.9",
    # the kernel log
    "host": HOST,
    "domain": DOMAIN,
    "ipv4": "192.168.178.23",
    "ipv6": "2001:db8:1::23",
    "mac colons": "b8:27:eb:4a:5b:6c",
    "mac dashes": "02-42-ac-11-00-02",
    "mac cisco": "0012.7f57.ac80",
    "martian src mac": "52 54 00 12 34 56",
    "home user": "alicehome",
    "home user 2": "zoe-quinn",
    "usb serial": "4C530001230825105045",
    "fs uuid": "3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9",
    "machine id": "0123456789abcdef0123456789abcdef",
    "builder": "builder@build7",
    # DMI: never copied
    "product serial": "VMware-56 4d 1a 2b",
    "product uuid": "4c4c4544-0042-3510-8052-b4c04f4b4e32",
    "board serial": ".7XYZ123.CN1296",
    "chassis serial": "7XYZ123",
}
P = PLANTED

LOG = f"""\
[    0.000000] Linux version 6.1.0-56-amd64 ({P['builder']}.{DOMAIN}) (gcc-12) #1 SMP
[    2.000000] systemd[1]: Hostname set to <{HOST}.{DOMAIN}>.
[    2.100000] smsc95xx 1-1.1:1.0 eth0: register 'smsc95xx' at usb-3f980000.usb-1.1, smsc95xx USB 2.0 Ethernet, {P['mac colons']}
[    2.200000] usb 1-1.3: SerialNumber: {P['usb serial']}
[    2.300000] EXT4-fs (mmcblk0p2): mounted filesystem {P['fs uuid']} with ordered data mode
[    2.400000] IPv6: eth0: {P['ipv6']} dad ok, from {P['ipv4']}
[    2.500000] docker0: port 1(veth1) entered forwarding state, peer {P['mac dashes']}
[    2.600000] lldp: neighbour {P['mac cisco']} on eth0
[    2.700000] IPv4: martian source 10.0.0.5 from {P['ipv4']}, on dev eth0
[    2.700001] ll header: 00000000: ff ff ff ff ff ff {P['martian src mac']} 08 00        ......RT..4V..
[    2.800000] audit: type=1400 audit(1700000000.000:1): apparmor="DENIED" operation="open" profile="snap.firefox.firefox" name="/home/{P['home user']}/.mozilla/firefox/profiles.ini" pid=1234 comm="firefox"
[    2.900000] audit: type=1400 audit(1700000000.000:2): apparmor="DENIED" operation="mknod" name="/home/{P['home user 2']}/Downloads/x.part" pid=1235
[    3.000000] systemd-journald[120]: File /var/log/journal/{P['machine id']}/system.journal corrupted or uncleanly shut down, renaming and replacing.
[    3.100000] nfs: server {HOST}.{DOMAIN} not responding
"""

CMDLINE = (f"BOOT_IMAGE=/vmlinuz root=UUID={P['root uuid']} ro rd.luks.uuid=luks-{P['luks uuid']} "
           f"cryptdevice=/dev/disk/by-id/nvme-{P['disk model']}_{P['disk serial']}-part2:cryptroot "
           f"resume=/dev/disk/by-id/wwn-{P['wwn']}-part3 resume_offset=0 "
           f"nfsroot={P['nfs server']}:/srv/nfs/{P['nfs user']},v3 ip=dhcp resume=PARTUUID={P['resume partuuid']} "
           "console=ttyS0 quiet\n")


def planted_tree(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "qemu-tcg-smp2-hpet", src)
    with open(src / "dmesg.txt", "a") as f:
        f.write(LOG)
    (src / "proc/cmdline").write_text(CMDLINE)
    with open(src / "proc/cpuinfo", "a") as f:
        f.write(f"Hardware\t: BCM2835\nRevision\t: a02082\nSerial\t\t: {P['pi serial']}\n"
                "Model\t\t: Raspberry Pi 3 Model B Rev 1.2\n")
    (src / "proc/sys/kernel/hostname").write_text(HOST + "\n")
    dmi = src / "sys/class/dmi/id"
    dmi.mkdir(parents=True, exist_ok=True)
    for name, key in (("product_serial", "product serial"), ("product_uuid", "product uuid"),
                      ("board_serial", "board serial"), ("chassis_serial", "chassis serial")):
        (dmi / name).write_text(P[key] + "\n")
    return src


def findings(cd, root):
    doc = cd("check", "--json", "--root", str(root)).json()
    return doc["status"], doc["verdict"], [(f["code"], f["severity"], f["title"], f["evidence"])
                                           for f in doc["findings"]]


def test_no_planted_identifier_survives(cd, tmp_path):
    src = planted_tree(tmp_path)
    # Each is there to be found, in what a plain copy would keep.
    plain = tmp_path / "plain"
    assert cd("snapshot", "--root", str(src), str(plain)).rc == 0
    kept = b"".join(p.read_bytes() for p in plain.rglob("*") if p.is_file()).lower()
    for what, ident in PLANTED.items():
        if "product" not in what and "board" not in what and "chassis" not in what:
            assert ident.lower().encode() in kept, what
    public = tmp_path / "public"
    r = cd("snapshot", "--redact", "--root", str(src), str(public))
    assert r.rc == 0, r.err
    files = [p for p in public.rglob("*") if p.is_file()]
    assert files
    for p in files:
        data = p.read_bytes().lower()
        for what, ident in PLANTED.items():
            assert ident.lower().encode() not in data, (p.relative_to(public).as_posix(), what)
    for kind in ("user names", "NFS root folders", "serial numbers", "UUIDs", "MAC addresses"):
        assert kind in r.out, r.out
    text = (public / "proc/cmdline").read_text()
    assert ("root=UUID=<uuid> ro rd.luks.uuid=<uuid> cryptdevice=/dev/disk/by-id/nvme-<serial>-part2:cryptroot "
            "resume=/dev/disk/by-id/wwn-<serial>-part3") in text
    assert "nfsroot=<ipv4>:<path>,v3" in text
    assert "Serial\t\t: <serial>\n" in (public / "proc/cpuinfo").read_text()
    assert 'name="/home/<user>/.mozilla/' in (public / "dmesg.txt").read_text()
    assert "ll header: <mac>\n" in (public / "dmesg.txt").read_text()
    # The diagnosis, to its evidence, is the original's.
    assert findings(cd, public) == findings(cd, src)
    # Redacting the redacted snapshot changes nothing.
    again = tmp_path / "again"
    assert cd("snapshot", "--redact", "--root", str(public), str(again)).rc == 0
    for p in files:
        rel = p.relative_to(public)
        assert (again / rel).read_bytes() == p.read_bytes(), rel
