# SPDX-License-Identifier: MIT
"""fastclock-datestep: a step of the wall clock shows in fc_realtime_ns within
FC_STEP_CHECK_NS (1 ms) of reads.  Two vCPUs with the invariant-TSC bit, the
kernel and the library on tsc.  fcprobe follows the kernel on CPU 0 for
5.5 s.  The wall clock is stepped six times: `date -s` one hour forward,
then back, from CPU 1 (at 1.5 s and 3 s), then by fcprobe's own loop with
clock_settime(), +1 h, -1 h, +1 h, -1 h every 0.5 s from 3.5 s, which goes on
reading at once (so the reader is running across those steps; across the
`date` steps it may have been descheduled, which fcprobe reports as the gap
between its reads around the step).  The library re-reads REALTIME - MONOTONIC when
1 ms of counter time has passed since its last check, so the reads of
fc_realtime_ns (and of fc_gettime(CLOCK_TAI), which uses the same offset)
that still show the old wall clock all lie within 1 ms (+0.2 ms for the
measurement) of the first of them: each step gives at most one such run.
At least one step must show such stale reads (9 of 12 steps did in a trial
run: the library's check is due at a random instant of its millisecond), or
the test saw nothing.  REALTIME and TAI go backwards exactly three times
(the -1 h steps, as the kernel's do); MONOTONIC, RAW and BOOTTIME never, and MONOTONIC stays within
its bound throughout."""
from fastclock_lab import CPU, FC_STEP_CHECK_NS, PROGRAMS, SMP, follow_around, followed  # noqa: F401
from lab import WAIT_TSC

TIMEOUT = 45

STEPS = [
    WAIT_TSC,
    ("follow", follow_around("5.5 -i 250 -s 3.5:3600 -s 4:-3600 -s 4.5:3600 -s 5:-3600", "/tmp/fd.out", [
        ("1.5", "fwd", "taskset 2 date -s @$(( $(date +%s) + 3600 )) >/dev/null"),
        ("1.5", "back", "taskset 2 date -s @$(( $(date +%s) - 3600 )) >/dev/null"),
    ]), 30),
]

CLOCKS = ("mono", "rt", "raw", "tai")
SLACK_NS = 200000


def check(r):
    fo = followed(r, CLOCKS)
    m, s = fo.marks, fo.summary
    assert fo.start["source"] == "counter", fo.start
    assert fo.changes == [], fo.changes
    for c in ("mono", "raw", "boot"):
        assert s[c]["back"] == 0, (c, s[c])
    assert s["mono"]["excess_max"] <= 0, fo.table(CLOCKS)
    # the -1 h steps: REALTIME and TAI go back three times, by about an hour
    for c in ("rt", "tai"):
        assert s[c]["back"] == 3, (c, s[c])
        assert 3598e9 <= s[c]["back_max_ns"] <= 3601e9, (c, s[c])
    own = [x for x in fo.events if x["event"] == "step"]
    assert [(x["delta_s"], x["rc"]) for x in own] == [(3600, 0), (-3600, 0)] * 2, own
    ks = [x for x in fo.events if x["event"] == "kernel-step"]
    assert len(ks) == 6 and s["kernel_steps"] == 6, ks
    # Each step, the two `date`s and fcprobe's own four, seen by the
    # reader after it was made and with its sign.  On a slow host the shell
    # behind the `date`s falls behind fcprobe's own schedule, and the two
    # sets interleave: each cause takes the first step seen after it.
    causes = sorted([(m["fwd0"], 1), (m["back0"], -1)] + [(o["t"], 1 if o["delta_s"] > 0 else -1)
                                                        for o in own])
    free = list(ks)
    for t, sign in causes:
        k = next((k for k in free if k["t"] >= t and (k["delta_ns"] > 0) == (sign > 0)), None)
        assert k is not None, (t, sign, ks, own, m)
        free.remove(k)
    for k in ks:
        assert abs(abs(k["delta_ns"]) - 3600e9) < 1.1e9, k
    def near(x, k):
        # the kernel stepped after the reader's previous iteration (gap_ns
        # before k["t"]): a TAI read later in that iteration may see it
        return k["t"] - k["gap_ns"] <= x["t"] <= k["t"] + FC_STEP_CHECK_NS

    for c in ("rt", "tai"):
        runs = [x for x in fo.runs if x["clock"] == c]
        for x in runs:
            # a run of stale reads starts at a step, and ends within 1 ms
            assert any(near(x, k) for k in ks), (c, x, ks)
            assert x["err_max"] >= 3598e9, (c, x)
            assert x["span_bad_ns"] <= FC_STEP_CHECK_NS + SLACK_NS, (c, x)
        for k in ks:
            assert len([x for x in runs if near(x, k)]) <= 1, (c, runs)
        # apart from the steps, within the bound
        calm = [i for i in fo.intervals if i["t0"] > fo.start["t"] + 500000000 and
                not any(i["t0"] <= k["t"] + 100000000 and i["t"] >= k["t"] - 100000000 for k in ks)]
        assert len(calm) >= 6, fo.table(CLOCKS)
        assert fo.worst(calm, c) <= 0, (c, fo.table(CLOCKS))
    assert [x for x in fo.runs if x["clock"] == "rt"], "no step showed a stale read"
    for k in ks:
        st = [x for x in fo.runs if x["clock"] == "rt" and near(x, k)]
        print("kernel step %+.0f s at %.3f s, reader's gap %d us: %s" % (
            k["delta_ns"] / 1e9, k["t"] / 1e9, k["gap_ns"] // 1000,
            "%d stale REALTIME reads over %d us" % (st[0]["reads"], st[0]["span_bad_ns"] // 1000)
            if st else "no stale REALTIME read"))
