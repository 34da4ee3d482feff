# SPDX-License-Identifier: MIT
"""run-noninvariant: `clockdoctor run` and the accelerator on a CPU without the
invariant-TSC bit (QEMU's TCG CPU as it is; two vCPUs, the kernel on hpet).
FASTCLOCK=force must fall back to the kernel's clock and say so: `run` in
its line (and it does not put the accelerator in front), the accelerator
itself in its FASTCLOCK_INFO line when preloaded by hand; a sound verdict
does not change that.  The spy, behind the accelerator, counts every call
reaching libc."""
from lab import clockdoctor_path

SMP = 2
TIMEOUT = 90

B = clockdoctor_path().resolve().parent
PROGRAMS = {
    "/usr/local/bin/clockloop": {"src": str(B.parent / "tests" / "progs" / "clockloop.c"), "dynamic": True,
                                 "cflags": ["-std=c11", "-D_GNU_SOURCE"], "link": ["-ldl"]},
}
FILES = {
    "/usr/local/lib/libfastclock-preload.so": str(B / "libfastclock-preload.so"),
    "/usr/local/lib/libcdspy.so": str(B / "progs" / "libcdspy.so"),
}
SPY = "LD_PRELOAD=/usr/local/lib/libcdspy.so"
BOTH = "LD_PRELOAD='/usr/local/lib/libfastclock-preload.so /usr/local/lib/libcdspy.so'"
VERDICT = (r"printf 'boot_id=%s\nverdict=sound\ncounter_hz=0\nclocksource=hpet\ntime=1\n' "
           r"$(cat /proc/sys/kernel/random/boot_id) > /tmp/v; chmod 644 /tmp/v")

STEPS = [
    ("run", "FASTCLOCK=force FASTCLOCK_INFO=1 FASTCLOCK_VERDICT=/tmp/none %s clockdoctor run -- "
     "clockloop -n 2000 -b 1 monotonic" % SPY, 60),
    ("preload", "FASTCLOCK=force FASTCLOCK_INFO=1 FASTCLOCK_VERDICT=/tmp/none %s clockloop -n 2000 -b 1 monotonic"
     % BOTH, 60),
    ("verdict", "%s; FASTCLOCK_VERDICT=/tmp/v %s clockdoctor run -- clockloop -n 2000 -b 1 monotonic"
     % (VERDICT, SPY), 60),
]


def flat(text):
    """Text with its line breaks as spaces: `run` wraps its notice to 80 columns."""
    return " ".join(text.split())


def check(r):
    f = r["run"]
    assert f.rc == 0, f.stderr
    assert "not accelerating clockloop: FASTCLOCK=force, but the TSC is not invariant (its rate follows the " \
           "CPU's power states), so the library falls back to the kernel's clock" in flat(f.stderr), f.stderr
    assert "fastclock-preload[" not in flat(f.stderr)                # not put in front
    assert f.stdout.split()[2] == "2000"                       # every call reached libc
    p = r["preload"]
    assert "fastclock-preload[" in flat(p.stderr) and "stepping aside" in flat(p.stderr), p.stderr
    assert "reason=not-invariant" in flat(p.stderr) and "CPUID 0x80000007 EDX[8] clear" in flat(p.stderr)
    assert p.stdout.split()[2] == "2000"
    v = r["verdict"]
    assert "the TSC is not invariant" in flat(v.stderr) and "not accelerating" in flat(v.stderr), v.stderr
    assert v.stdout.split()[2] == "2000"
