# SPDX-License-Identifier: MIT
"""fastclock-timens: a child forked without exec into another time namespace
reads the namespace's clocks from its first read.  The guest's kernel and the
library are on tsc; fctimens starts the library, calls unshare(CLONE_NEWTIME)
with MONOTONIC and BOOTTIME offsets of minus the guest's uptime less 2 s
(the kernel refuses a namespace whose clocks would be negative: this is
the -300 s of a long-running host, scaled to a fresh guest), then +1000 s in
a second process, then BOOTTIME's offset alone (minus the uptime less 2 s:
MONOTONIC is the parent's, so only the BOOTTIME brackets tell) in a third, and
forks three children each: a child's first fc_now_ns(), every read over 20 ms,
its BOOTTIME and its REALTIME must be within the library's stated bound
(plus 20 us for TCG's jitter) of the kernel's, never backwards, and an
absolute clock_nanosleep until "served now + 50 ms" must return (it hung
for 300 s when the child served the parent's clock).  The parent stays on
its own clock.  The library notices the child: the page that holds its
locks is zeroed in a forked child (MADV_WIPEONFORK), the child's first read
compares the line with the kernel, and a difference of more than 0.5 ms is
another clock."""
from fastclock_lab import CPU, LIBRARY, REPO, SMP  # noqa: F401
from lab import WAIT_TSC

TIMEOUT = 40

PROGRAMS = {"/usr/local/bin/fctimens": {
    "src": "guest/fctimens.c",
    "cflags": ["-I", str(REPO / "include")],
    "link": [LIBRARY, "-lpthread"],
}}

STEPS = [
    WAIT_TSC,
    ("minus", "U=$(cut -d. -f1 /proc/uptime); fctimens -$((U - 2)) 3", 20),
    ("plus1000", "fctimens 1000 3", 20),
    ("boottime", "U=$(cut -d. -f1 /proc/uptime); fctimens -$((U - 2)) 3 boottime", 20),
]


def check(r):
    assert r["wait"].stdout == "tsc\n"
    for name in ("minus", "plus1000", "boottime"):
        s = r[name]
        print(s.stdout.strip())
        assert s.rc == 0, (name, s.stdout, s.stderr)
        lines = [ln for ln in s.stdout.splitlines() if ln.startswith("timens ")]
        assert len(lines) == 3, s.stdout
        for ln in lines:
            f = dict(kv.split("=", 1) for kv in ln.split()[1:])
            assert f["source"] == "counter", ln
            assert f["back"] == "0", ln
