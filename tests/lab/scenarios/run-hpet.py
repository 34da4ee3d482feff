# SPDX-License-Identifier: MIT
"""run-hpet: the accelerator (`clockdoctor run`, libfastclock-preload.so) in a
two-vCPU guest on hpet, where every clock_gettime is a system call.

The guest's CPU has the invariant-TSC bit (forced on under TCG, as
fastclock_lab.INVTSC_CPU does) and the kernel is told tsc=unstable, so it
runs on hpet; "verified" is simulated by a verdict file written by hand with
the guest's boot id and the frequency `clockdoctor tsc` measures, named by
FASTCLOCK_VERDICT (never the real /run/clockdoctor, which other scenarios of
this boot read).  Shown here:

  - no verdict, an unsound one: `run` says why, and the program runs on the
    kernel's clock (every call reaches libc: the spy counts them);
  - with the sound verdict: a clock-heavy C program several times faster
    under TCG (7.5-11x in our runs; see check()), no call handed on to libc; the inconsistency test on
    both vCPUs; errors (EFAULT, EINVAL) the kernel's own, as without it;
  - python3 reads the time correctly under it (against file times and
    /proc/uptime, which the kernel keeps);
  - a `date -s` step while an accelerated program runs shows in its
    CLOCK_REALTIME within 1 ms of reads (FC_STEP_CHECK_NS).
run-noninvariant shows FASTCLOCK=force falling back on a CPU without the bit."""
import os

from lab import REPO, clockdoctor_path

SMP = 2
CPU = "max,+invtsc,x-force-features=on"   # = fastclock_lab.INVTSC_CPU: one boot with its scenarios
APPEND = "tsc=unstable"
TIMEOUT = 240

# The accelerator and the library beside the binary under test (CLOCKDOCTOR).
B = clockdoctor_path().resolve().parent
PROGS = REPO / "tests" / "progs"
PY_BIN = os.path.realpath("/usr/bin/python3")      # /usr/bin/python3.11
PY_NAME = os.path.basename(PY_BIN)


def flat(text):
    """Text with its line breaks as spaces: `run` wraps its notice to 80 columns."""
    return " ".join(text.split())


def _dyn(name, **kw):
    spec = {"src": str(PROGS / (name + ".c")), "dynamic": True,
            "cflags": ["-std=c11", "-D_GNU_SOURCE", "-I", str(REPO / "include")], "link": ["-ldl", "-lpthread"]}
    spec.update(kw)
    return spec


PROGRAMS = {
    "/usr/local/bin/clockloop": _dyn("clockloop"),
    "/usr/local/bin/clockerrs": _dyn("clockerrs"),
    "/usr/local/bin/stepwatch": _dyn("stepwatch"),
    "/usr/local/bin/inconsistency": _dyn("inconsistency"),
}
FILES = {
    "/usr/local/lib/libfastclock-preload.so": str(B / "libfastclock-preload.so"),
    "/usr/local/lib/libcdspy.so": str(B / "progs" / "libcdspy.so"),
    # Debian's python3 with the one part of its library it needs to start
    "/usr/bin/python3": PY_BIN,
    "/usr/lib/%s/encodings" % PY_NAME: "/usr/lib/%s/encodings" % PY_NAME,
}

SPY = "LD_PRELOAD=/usr/local/lib/libcdspy.so"
# the spy after the accelerator: it counts the calls handed on to libc
BOTH = "LD_PRELOAD='/usr/local/lib/libfastclock-preload.so /usr/local/lib/libcdspy.so'"
WAYS = "monotonic realtime raw boottime tai gettimeofday timespec_get coarse"
SOUND = "FASTCLOCK_VERDICT=/tmp/verdict-sound"
# A verdict as `clockdoctor tsc` writes it, with this boot's id and the
# frequency it measures (its JSON), but the verdict chosen by the test.
VERDICTS = r"""
hz=$(CLOCKDOCTOR_STATE_DIR=/tmp/tsc-state clockdoctor tsc --json -d 0.2 --quick 2>/dev/null |
     sed -n 's/.*"measured_hz": *\([0-9][0-9]*\).*/\1/p' | head -n 1)
for v in sound unsound; do
  printf 'boot_id=%s\nverdict=%s\ncounter_hz=%s\nclocksource=hpet\ntime=%s\n' \
    "$(cat /proc/sys/kernel/random/boot_id)" $v "${hz:-0}" "$(date +%s)" > /tmp/verdict-$v
  chmod 644 /tmp/verdict-$v
done
cat /tmp/verdict-sound
"""
ERR_CASES = "ok badid null kernelptr page0 tz tvbad tsgbase"
PY = ("import time, os\n"
      "f = open('/tmp/py-stamp', 'w'); f.close()\n"
      "rt = time.time(); m = os.stat('/tmp/py-stamp').st_mtime\n"
      "bt = time.clock_gettime(time.CLOCK_BOOTTIME); up = float(open('/proc/uptime').read().split()[0])\n"
      "mono = [time.monotonic() for i in range(1000)]\n"
      "print('rt_minus_mtime=%.6f boottime_minus_uptime=%.6f mono_sorted=%s' % "
      "(rt - m, bt - up, mono == sorted(mono)))\n")

STEPS = [
    ("verdicts", VERDICTS, 60),
    ("plain", "clockloop -n 20000 -b 7 %s" % WAYS, 60),
    ("missing", "FASTCLOCK_VERDICT=/tmp/none %s clockdoctor run -- clockloop -n 2000 -b 1 monotonic" % SPY, 60),
    ("unsound", "FASTCLOCK_VERDICT=/tmp/verdict-unsound %s clockdoctor run -- clockloop -n 2000 -b 1 monotonic"
     % SPY, 60),
    # the program as `run` starts it: timed without the spy
    ("accelerated", "%s FASTCLOCK_INFO=1 clockdoctor run -- clockloop -n 20000 -b 7 %s" % (SOUND, WAYS), 90),
    # the same preload with the spy behind it: what it hands on to libc
    ("served", "%s FASTCLOCK_INFO=1 %s clockloop -n 3000 -b 3 %s" % (SOUND, BOTH, WAYS), 90),
    # -x 100 -m 1000000: under TCG the emulated hpet and the TSC jitter against
    # each other by tens to hundreds of us (53 us beyond a 10 us bound in one CI
    # run, 3.9 ms beyond a 2.8 ms bound in a loaded one), which the library's
    # bound (an estimate) does not cover: here the test holds never-backwards
    # strictly and the error to twice the bound or 1 ms; on real clocks
    # (tests/cli/test_run.py) it holds the error to the bound
    ("inconsistency", "%s clockdoctor run -q -- inconsistency -t 0.4 -T 2 -x 100 -m 1000000" % SOUND, 120),
    ("errors", "for c in %s; do a=$(clockerrs $c 2>&1); ra=$?; b=$(%s clockdoctor run -q -- clockerrs $c 2>&1); "
     "rb=$?; echo \"$c $a rc=$ra / $b rc=$rb\"; done" % (ERR_CASES, SOUND), 60),
    ("python", "%s FASTCLOCK_INFO=1 PYTHONHOME=/usr clockdoctor run -- python3 -S -c \"%s\""
     % (SOUND, PY.replace('"', '\\"')), 90),
    ("date-step", "rm -f /tmp/sw.ready; %s clockdoctor run -- stepwatch 4 /tmp/sw.ready > /tmp/sw.out & P=$!; "
     "n=0; until [ -e /tmp/sw.ready ] || [ $n -gt 200 ]; do sleep 0.05; n=$((n+1)); done; "
     "sleep 0.5; date -s @$(( $(date +%%s) + 100 )) >/dev/null; sleep 1; "
     "date -s @$(( $(date +%%s) - 100 )) >/dev/null; wait $P; cat /tmp/sw.out" % SOUND, 60),
]


def loop(out):
    """clockloop's lines: {way: (ns a call, calls handed on)}."""
    r = {}
    for line in out.splitlines():
        w, ns, passed = line.split()
        r[w] = (float(ns), int(passed))
    return r


def check(r):
    v = r["verdicts"]
    assert v.rc == 0 and "verdict=sound" in v.stdout
    assert int(v.stdout.split("counter_hz=")[1].split()[0]) > 10**8, v.stdout   # measured by tsc
    plain = loop(r["plain"].stdout)
    # on hpet every high-resolution read is a system call: hundreds of ns at least
    assert plain["monotonic"][0] > 300, plain

    m = r["missing"]
    assert m.rc == 0, m.stderr
    assert "not accelerating clockloop: the kernel's clocksource hpet makes every time call a system call, " \
           "but there is no sound TSC verdict for this boot (/tmp/none: No such file or directory): run " \
           "`clockdoctor tsc` as root, or `clockdoctor run --verify`; running it on the kernel's clock" \
           in flat(m.stderr), m.stderr
    assert loop(m.stdout)["monotonic"][1] == 2000          # all reach libc: no accelerator
    u = r["unsound"]
    assert "`clockdoctor tsc` found the TSC unsound on this boot" in flat(u.stderr), u.stderr
    assert loop(u.stdout)["monotonic"][1] == 2000

    a = r["accelerated"]
    assert a.rc == 0, a.stderr
    assert "accelerating clockloop: the kernel's clocksource hpet makes every time call a system call, and " \
           "`clockdoctor tsc` found the TSC sound on this boot" in flat(a.stderr), a.stderr
    assert "fastclock-preload[" in flat(a.stderr) and "reason=verified" in flat(a.stderr) and "vdso=slow" in flat(a.stderr)
    fast = loop(a.stdout)
    # The clock-heavy program: each way of reading the time many times over.
    # Under TCG the counter read is itself emulated (80-200 ns served) and the
    # hpet system call costs 0.8-1.9 us with the host's load, so the ratio
    # here was 7.5-11x in our runs (docs/run.md); the figures are printed.
    # The plain and accelerated runs are two steps, seconds apart, on a shared
    # host: what is asserted is that every way got several times cheaper (at
    # least 4x for MONOTONIC, 3x for the program, 2x for each way), not the
    # figure itself, which is the benchmark's to report.  COARSE is handed on
    # to libc's vDSO (the served step counts it); 10x would be a system call.
    high = ("monotonic", "realtime", "raw", "boottime", "tai", "gettimeofday", "timespec_get")
    print("run-hpet: ns a call, kernel -> accelerated: " +
          ", ".join("%s %.0f -> %.0f" % (w, plain[w][0], fast[w][0]) for w in high + ("coarse",)))
    assert sum(plain[w][0] for w in high) >= 3 * sum(fast[w][0] for w in high), (plain, fast)
    assert plain["monotonic"][0] >= 4 * fast["monotonic"][0], (plain, fast)
    for w in high:
        assert plain[w][0] >= 2 * fast[w][0], (w, plain[w], fast[w])
    assert fast["coarse"][0] < 10 * plain["coarse"][0], (plain, fast)
    served = loop(r["served"].stdout)
    for w in ("monotonic", "realtime", "raw", "boottime", "tai", "gettimeofday", "timespec_get"):
        assert served[w][1] == 0, (w, served)                  # none handed on to libc
    assert served["coarse"][1] == 3 * 3000                   # not served: libc's vDSO

    i = r["inconsistency"]
    assert i.rc == 0, i.stdout + i.stderr
    assert len([x for x in i.stdout.splitlines() if x.endswith(" PASS")]) == 6, i.stdout

    for line in r["errors"].stdout.splitlines():
        case, rest = line.split(" ", 1)
        plain_out, fast_out = rest.split(" / ")
        assert plain_out == fast_out, line
        if case in ("null", "kernelptr", "page0"):
            assert plain_out == "-1 14 rc=0", line          # the kernel's EFAULT on hpet
    assert "badid -1 22 rc=0 / -1 22 rc=0" in r["errors"].stdout

    p = r["python"]
    assert p.rc == 0, p.stderr
    assert "accelerating python3" in flat(p.stderr) and "fastclock-preload[" in flat(p.stderr) and "serving" in flat(p.stderr)
    kv = dict(x.split("=") for x in p.stdout.split())
    assert abs(float(kv["rt_minus_mtime"])) < 0.05, kv       # a file's time is the kernel's (coarse) clock
    assert abs(float(kv["boottime_minus_uptime"])) < 0.05, kv
    assert kv["mono_sorted"] == "True"

    s = r["date-step"]
    assert s.rc == 0, s.stderr
    assert "accelerating stepwatch" in flat(s.stderr)
    kv = dict(x.split("=") for x in s.stdout.split())
    # +100 s, then back, while it ran: each step seen either between two of
    # its reads (kernel_steps) or inside one read's bracket, as one stale
    # read (steps_seen: the reader descheduled across it, as on a loaded CI
    # host, where both came so); one in all when the guest was descheduled
    # across both (the offset it samples then moved once, net)
    assert int(kv["kernel_steps"]) + int(kv["steps_seen"]) >= 1 and int(kv["kernel_steps"]) <= 2, kv
    assert int(kv["steps_seen"]) <= 2, kv                    # each seen at most once...
    assert int(kv["longest_stale_ns"]) <= 2 * 10**6, kv     # ...for at most FC_STEP_CHECK_NS (+ reads' cost)
