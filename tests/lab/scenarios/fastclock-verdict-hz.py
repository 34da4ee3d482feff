# SPDX-License-Identifier: MIT
"""fastclock-verdict-hz: a verdict's counter_hz that is wrong does not make
the library wrong.  The guest of fastclock-verified (kernel on hpet, TSC
refused by the kernel, invariant bit present); a sound verdict for this boot
whose counter_hz is 5 % above the TSC frequency the kernel detected at
boot (a verdict taken with another counter, a bad measurement, a forged
file; 5 %, well beyond the error of the library's 1 ms measurement at start
under TCG, which was +-926 ppm in one run: the unit tests hold 1 % and
less against a quiet kernel clock).  The library checks a verdict's counter_hz against the counter's rate
measured at start (within 5 ppm beyond that measurement's own error,
fastclock(3), NOTES, The verdict file): this one disagrees, so the whole
verdict is ignored and said (reason_text "verdict ignored: ..."), and the
library serves the kernel's clock (reason unverified): every read within the
error bound fc_info reports, none backwards.  Not the kernel's boot
calibration: under TCG on a loaded host that was 0.11 % off (2297.446 MHz
against a measured 2299.998), and the wrong verdict is built from it, so it
is further off still."""
from fastclock_lab import CPU, PROGRAMS, SMP, Follow  # noqa: F401

APPEND = "tsc=unstable"
TIMEOUT = 40

STEPS = [
    ("follow", r"""
mhz=$(dmesg | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | head -n 1)
hz=$(awk "BEGIN { printf \"%.0f\", $mhz * 1e6 * 1.05 }")
echo "kernel_mhz $mhz"
printf 'boot_id=%s\nverdict=sound\ncounter_hz=%s\n' "$(cat /proc/sys/kernel/random/boot_id)" $hz > /tmp/vh
chmod 644 /tmp/vh
cat /tmp/vh
FASTCLOCK_VERDICT=/tmp/vh taskset 1 fcprobe follow 2.5 -i 250
""", 30),
]

CLOCKS = ("mono", "rt", "raw", "tai")


def check(r):
    f = r["follow"]
    assert f.rc == 0, f.stderr
    mhz = float(f.stdout.split("kernel_mhz ", 1)[1].split()[0])
    fo = Follow(f.stdout)
    print(fo.table(CLOCKS))
    info = fo.summary["info"]
    verdict_hz = float([x for x in f.stdout.splitlines() if x.startswith("counter_hz=")][0].split("=")[1])
    on_raw = fo.summary["counter_hz_on_raw"]
    print("kernel at boot: %.3f MHz; on CLOCK_MONOTONIC_RAW: %.3f MHz; verdict: %.3f MHz (%+.0f ppm); "
          "library: %.3f MHz (%+.1f ppm) from %s +-%g ppm, bound %d ns" % (
              mhz, on_raw / 1e6, verdict_hz / 1e6, (verdict_hz / on_raw - 1) * 1e6, info["counter_hz"] / 1e6,
              (info["counter_hz"] / on_raw - 1) * 1e6, info["freq_from"], info["freq_err_ppm"],
              info["error_bound_ns"]))
    assert (info["source"], info["reason"]) == ("kernel", "unverified"), info
    assert "verdict ignored: its counter_hz" in info["reason_text"], info
    for cl in ("mono", "raw", "boot", "rt", "tai"):
        assert fo.summary[cl]["back"] == 0, (cl, fo.summary[cl])
    late = [x for x in fo.intervals if x["t0"] >= fo.start["t"] + 500000000]
    assert len(late) >= 5
    # the verdict was wrong (else this proves nothing), the library is not
    assert abs(verdict_hz / on_raw - 1) > 1000e-6, (verdict_hz, on_raw)
    for cl in CLOCKS:
        assert fo.worst(late, cl) <= 0, (cl, fo.table(CLOCKS))
