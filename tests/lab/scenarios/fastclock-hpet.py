# SPDX-License-Identifier: MIT
"""fastclock-hpet: libfastclock in the plain two-vCPU TCG guest, where the
kernel refused the TSC ("TSCs unsynchronized": the emulated CPU has no
constant_tsc) and runs on hpet.  The emulated CPU has no invariant-TSC bit
either, and the library refuses such a TSC before it looks for a verdict:
source kernel, reason not-invariant, with and without a sound verdict for
this boot (the verdict is read: fc_info's verdict is 0).  On the kernel's
clock its readings are the kernel's (error 0, nothing backwards), and a read
costs at most twice what the kernel's clock_gettime costs (a system call to
hpet), pinned to CPU 0.
fcprobe warp, unpinned, shows what the two vCPUs' TSCs do (fc_now_ns reads
the kernel here, so it cannot go backwards; the raw TSC is reported)."""
from fastclock_lab import PROGRAMS, Follow, json_lines, verdict_cmd  # noqa: F401

SMP = 2
TIMEOUT = 60

STEPS = [
    # no verdict: a path that does not exist (scenarios sharing this boot may
    # have left one at /run/clockdoctor/tsc-verdict)
    ("info", "cat /sys/devices/system/clocksource/clocksource0/current_clocksource; "
             "FASTCLOCK_VERDICT=/tmp/no-verdict fcprobe info"),
    ("verdict", verdict_cmd("/tmp/v") + " && FASTCLOCK_VERDICT=/tmp/v fcprobe info"),
    ("cost", "FASTCLOCK_VERDICT=/tmp/v taskset 1 fcprobe cost -b 9", 40),
    ("warp", "fcprobe warp 1 --nopin", 20),
    ("follow", "fcprobe follow 1 -i 250", 20),
]


def check(r):
    out = r["info"].stdout.splitlines()
    assert out[0] == "hpet"
    for step in ("info", "verdict"):
        i = json_lines(r[step].stdout)[0]
        assert (i["source"], i["reason"]) == ("kernel", "not-invariant"), i
        assert "not invariant" in i["reason_text"], i
        assert i["kernel_clocksource"] == "hpet" and i["kernel_vdso_fast"] == 0, i
        assert i["error_bound_ns"] == 0 and i["counter_hz"] == 0
    assert json_lines(r["info"].stdout)[0]["verdict"] == -1
    assert json_lines(r["verdict"].stdout)[0]["verdict"] == 0     # read, but not enough
    c = r["cost"].json
    print("kernel mode, pinned to CPU %s: fc_now_ns %.0f ns, clock_gettime %.0f ns, "
          "syscall %.0f ns, ratio %.2f" % (c["cpus"], c["fc_now_ns"]["ns"], c["clock_gettime"]["ns"],
                                           c["syscall"]["ns"], c["ratio"]))
    assert c["cpus_allowed"] == 1
    assert c["after"]["source"] == "kernel"
    # the kernel's clock through the library: a system call and a little
    assert c["fc_now_ns"]["ns"] <= 3 * c["clock_gettime"]["ns"], c
    w = r["warp"].json
    print("warp unpinned, 1 s: fc_now_ns %d reads %d back; raw TSC %d reads %d back (max %d cycles), "
          "%d migrations" % (w["fc_now_ns"]["reads"], w["fc_now_ns"]["back"], w["tsc"]["reads"],
                             w["tsc"]["back"], w["tsc"]["max_back"], w["tsc"]["migrations"]))
    assert w["cpus_allowed"] == 2 and w["pinned"] is False
    assert w["fc_now_ns"]["back"] == 0 and w["fc_now_ns"]["self_back"] == 0, w
    fo = Follow(r["follow"].stdout)
    for cl in ("mono", "rt", "raw", "boot", "tai"):
        assert fo.summary[cl]["err_max"] == 0, (cl, fo.summary)
        assert fo.summary[cl]["back"] == 0, (cl, fo.summary)
