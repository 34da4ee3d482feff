# SPDX-License-Identifier: MIT
"""arm64-top: `clockdoctor top` in the healthy arm64 guest counts a
program's clock_gettime system calls (arm64's own system call numbers:
clock_gettime is 113 there, 228 on x86-64), exactly with its BPF counts
and by sampling with --no-bpf."""
from arm64_lab import ARCH, CPU, FILES, PROGRAMS, SMP, timed  # noqa: F401

TIMEOUT = 120
STEPS = [("top", """
%s > /tmp/top.json 2> /tmp/top.err & T=$!
%s > /tmp/topnb.json 2> /tmp/topnb.err & U=$!
sleep 1
clockfault calls 1000 3 > /tmp/calls & A=$!
echo "pid $A"; wait $A
wait $T; echo "top_rc $?"
wait $U; echo "topnb_rc $?"
echo "calls $(cat /tmp/calls)"
cat /tmp/top.err /tmp/topnb.err >&2; cat /tmp/top.json; sed 's/^/nobpf /' /tmp/topnb.json
""" % (timed("clockdoctor top --json 5 1", 60), timed("clockdoctor top --no-bpf --json 5 1", 60)), 90)]


def check(r):
    t = r["top"]
    print("arm64-top:\n%s\n%s" % (t.stdout, t.stderr))
