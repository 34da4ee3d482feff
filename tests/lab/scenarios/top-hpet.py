# SPDX-License-Identifier: MIT
"""top-hpet: two vCPUs on hpet: a program calling clock_gettime(CLOCK_MONOTONIC)
through libc 2000 times a second (on hpet the vDSO falls back to the system
call) and one calling CLOCK_MONOTONIC_COARSE as often (the vDSO serves it
from its data page, even on hpet).  `clockdoctor top` must rank the first
at its rate within 5%, on MONOTONIC, and never show the second.  The guest
has no tracefs mounted: top mounts it and says so."""
from pathlib import Path

from lab import cache_dir

SMP = 2
TIMEOUT = 90

RATE = 2000
# The helper's source lives here, in the scenario, and is written into the
# lab's cache for the PROGRAMS mechanism, which compiles it into the guest.
TCALL_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* tcall RATE SECONDS mono|coarse: RATE libc clock_gettime calls a second
 * for SECONDS, paced by CLOCK_MONOTONIC_COARSE (the pacing itself must not
 * add system calls); prints how many it made and its rate. */
int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long rate = atol(argv[1]);
	double secs = atof(argv[2]);
	clockid_t id = strcmp(argv[3], "coarse") == 0 ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC;
	struct timespec t0, now, ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t0);
	long n = 0;
	double el = 0;
	while (el < secs) {
		for (long want = (long)(el * rate); n < want; n++)
			clock_gettime(id, &ts);
		struct timespec sl = { 0, 2000000 };
		nanosleep(&sl, NULL);
		clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
		el = (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
	}
	printf("%ld %.1f\n", n, n / el);
	return 0;
}
"""


def _source():
    d = cache_dir() / "top-hpet"
    d.mkdir(parents=True, exist_ok=True)
    p = d / "tcall.c"
    if not p.exists() or p.read_text() != TCALL_C:
        p.write_text(TCALL_C)
    return str(p)


PROGRAMS = {"/usr/local/bin/tcall": _source()}

STEPS = [
    ("top", """
# tracefs unmounted first: another scenario in the same guest (report --top)
# may have mounted it, and top mounting it itself is what is checked
umount /sys/kernel/tracing 2>/dev/null
tcall %(rate)d 8 mono >/tmp/mono.out & M=$!
tcall %(rate)d 8 coarse >/tmp/coarse.out & C=$!
sleep 1
clockdoctor top --json --rows 0 2 2
rc=$?
wait $M $C
echo "# $M $C $(cat /tmp/mono.out) $(cat /tmp/coarse.out)"
exit $rc
""" % {"rate": RATE}, 60),
]


def check(r):
    t = r["top"]
    assert t.rc == 0, t.stderr
    assert "mounted tracefs at /sys/kernel/tracing" in t.stderr
    assert "Tracing time system calls... Hit Ctrl-C to end." in t.stderr
    import json
    docs = [json.loads(line) for line in t.stdout.splitlines() if line.startswith("{")]
    assert len(docs) == 2, t.stdout
    a = [line for line in t.stdout.splitlines() if line.startswith("# ")][0].split()[1:]
    mono, coarse = int(a[0]), int(a[1])
    # The programs printed "calls rate": they kept their pace.
    assert abs(float(a[3]) - RATE) <= 0.02 * RATE, a
    assert abs(float(a[5]) - RATE) <= 0.02 * RATE, a
    for d in docs:
        procs = d["processes"]
        assert procs, d
        first = procs[0]
        assert first["pid"] == mono, procs          # ranked first
        assert abs(first["calls_per_s"] - RATE) <= 0.05 * RATE, first
        assert set(first["clock_ids_per_s"]) == {"MONOTONIC"}, first
        assert first["comm"] == "tcall"
        assert coarse not in {p["pid"] for p in procs}, procs
        # the exact total holds the program's calls
        assert d["total"]["calls_per_s"] >= 0.95 * RATE
        assert d["call_ns"] > 0
