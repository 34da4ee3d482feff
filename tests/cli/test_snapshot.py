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
