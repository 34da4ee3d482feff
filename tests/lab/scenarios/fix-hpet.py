# SPDX-License-Identifier: MIT
"""fix-hpet: `clockdoctor fix` in the two-vCPU guest on hpet.  Nothing faster
is listed (the kernel dropped the TSC), so --apply switches nothing and says
why; with no measured verdict the plan carries out no parameter that switches
the kernel's check off: tsc=reliable is left out until `clockdoctor tsc`
says sound on this boot, and the hypervisor's part is printed as such.
With a sound verdict for this boot planted in the state folder, the plan's
lasting change is tsc=reliable, with its drop-in, command and risk; --persist
then --undo on the guest's own root (no update-grub in the guest: persist
says the boot configuration is not regenerated) leave every file as it was.
(test_fix_chain.py boots a guest with this plan's parameter.)"""
SMP = 2
TIMEOUT = 120

# Every path of the root file system with its mode and type, and each
# regular file's size and md5: what "as it was" compares (/proc, /sys, /dev,
# /tmp are other file systems, left out by -xdev; /tmp's own entry too, as
# the snapshots are written there; and the state folder /run/clockdoctor,
# where fix keeps the lock of its runs: /run is a tmpfs on a real system,
# emptied at boot, but a folder of the guest's root here).  One stat and a
# few md5sum processes in all (xargs): a process a file is slow under
# emulation.
SNAP = ("find / -xdev | grep -v -e '^/tmp$' -e '^/run$' -e '^/run/clockdoctor' | sort | "
        "xargs stat -c '%n %a %F %s'; "
        "find / -xdev -type f | grep -v '^/run/clockdoctor/' | sort | xargs md5sum")
# A sound verdict for this boot, as `clockdoctor tsc` saves it (root's, 0644).
VERDICT = ("mkdir -p /run/clockdoctor && printf 'boot_id=%s\\nverdict=sound\\ncounter_hz=2893000000\\n"
           "clocksource=hpet\\ntime=1795381234\\n' \"$(cat /proc/sys/kernel/random/boot_id)\" "
           "> /run/clockdoctor/tsc-verdict && chmod 0644 /run/clockdoctor/tsc-verdict")
STEPS = [
    ("unmeasured", "clockdoctor fix --json"),
    ("plan", VERDICT + " && clockdoctor fix --json"),
    ("text", "clockdoctor fix"),
    ("apply", "clockdoctor fix --apply --json"),
    ("persist", """
snap() { %(snap)s; }
snap > /tmp/before
clockdoctor fix --persist; echo "persist rc=$?"
echo "--- record"; cat /var/lib/clockdoctor/fix.record
echo "--- drop-in"; cat /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg
clockdoctor fix --undo; echo "undo rc=$?"
snap > /tmp/after
cmp /tmp/before /tmp/after && echo "tree: same" || diff /tmp/before /tmp/after
wc -l < /tmp/before
rm -f /run/clockdoctor/tsc-verdict
""" % {"snap": SNAP}, 90),
]


def check(r):
    u = r["unmeasured"]
    assert u.rc == 0, u.stderr
    assert u.json["plan"]["params"] == [], u.json["plan"]
    assert any("tsc=reliable" in n and "not until the TSC is measured" in n
               for n in u.json["plan"]["left_out"]), u.json["plan"]
    p = r["plan"]
    assert p.rc == 0, p.stderr
    j = p.json
    assert j["status"] == "critical"
    plan = j["plan"]
    assert plan["switch"] is None
    assert "no faster clocksource than hpet is listed (available: hpet acpi_pm)" in plan["no_switch_why"]
    assert [(x["token"], x["action"]) for x in plan["params"]] == [("tsc=reliable", "add")]
    assert "slow-clocksource" in plan["params"][0]["findings"]
    assert "stops checking" in plan["params"][0]["risk"]
    assert any("TCG" in h["text"] for h in plan["hypervisor"])
    assert any(s.startswith("$ update-grub") for s in plan["persist_steps"])
    t = r["text"].stdout
    assert "nothing to switch: no faster clocksource than hpet is listed" in t
    assert "only the hypervisor's owner can do" in t
    assert "to carry it out, as root: clockdoctor fix --persist" in t
    a = r["apply"]
    assert a.rc == 1
    assert a.json["apply"]["outcome"] == "not-tried"
    assert "nothing switched: no faster clocksource than hpet" in a.json["apply"]["message"]
    s = r["persist"].stdout
    # No update-grub in the guest: the drop-in is written, the record kept,
    # and fix says the boot configuration was not regenerated (exit 2).
    assert "persist rc=2" in s
    assert "update-grub is not installed" in s
    assert "\nfile /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg mode=0644 " in s
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT tsc=reliable"' in s
    assert "undo rc=0" in s
    assert "tree: same" in s
