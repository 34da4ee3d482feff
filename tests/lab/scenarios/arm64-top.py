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
    import json
    lines = t.stdout.splitlines()
    kv = dict(x.split(" ", 1) for x in lines if not x.startswith("{") and not x.startswith("nobpf "))
    pid = int(kv["pid"])
    n = int(kv["calls"].split()[0].split("=")[1])
    assert kv["top_rc"] == "0" and kv["topnb_rc"] == "0", t.stderr
    for name, prefix, exact in (("BPF counts", "", True), ("--no-bpf", "nobpf ", False)):
        docs = [json.loads(x[len(prefix):]) for x in lines if x.startswith(prefix + "{")]
        assert len(docs) == 1, lines
        procs = {p["pid"]: p for p in docs[0]["processes"]}
        seen = procs.get(pid, {}).get("calls", 0)
        print("arm64-top (%s): %d clock_gettime system calls made, top counted %d, on %s" % (
            name, n, seen, procs.get(pid, {}).get("clock_ids_per_s")))
        assert docs[0]["processes_exact"] is exact, docs[0]
        assert abs(seen - n) <= 0.05 * n, (name, n, procs)
        assert procs[pid]["syscalls_per_s"]["clock_gettime"] > 0, procs[pid]
        assert procs[pid]["clock_ids_per_s"].get("MONOTONIC", 0) > 0, procs[pid]
