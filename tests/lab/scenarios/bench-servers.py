# SPDX-License-Identifier: MIT
"""bench-servers: what the accelerator buys a real server, in run-redis's
four-vCPU guest on hpet (every time call a system call): redis-server with
redis-benchmark, and tsserve (guest/tsserve.c: an event-loop server over
loopback that reads the clock 4 times a request), each A/B side by side
(server_ab.ab_round), against the Amdahl bound.

A benchmark (BENCH: `make bench-lab`, never `make lab`): it prints a table and
asserts only that both sides ran and that the accelerator served.

  - requests/s: each load's requests over its duration (the guest's
    /proc/uptime), summed over the rounds;
  - server CPU a request: utime + stime of the server over its load, summed;
  - time calls a request: `clockdoctor top -p` counts the plain server's time
    system calls exactly (in the kernel) over a load of its own, split by
    clock id from its samples; and the accelerated server's, which should be
    only the library's own checks against the kernel;
  - ns a call: clockloop in the same guest, on the kernel's clock (hpet: a
    system call) and accelerated, best of 7 batches;
  - share of the plain server's CPU in time calls = calls a request x ns a
    call / CPU a request; the bound 1 / (1 - share); the gain, plain over
    accelerated CPU a request; and the part of the distance from the gain to
    the bound that the accelerator's own cost (its served calls, and the
    system calls it still makes) explains;
  - tsserve also times its own time calls with the counter (its stderr at
    the end), in the rounds themselves: under TCG four busy vCPUs make an
    hpet read several times dearer than clockloop's quiet one, so the bound
    uses that in-situ share, and redis's calls are priced at tsserve's
    in-situ cost a call (marked *).

LAB_BENCH_SCALE (default 1) multiplies the requests; LAB_BENCH_ROUNDS (default
4) sets the rounds; LAB_BENCH_OUT names a file for the table."""
import json
import os
from pathlib import Path

from lab import REPO
from server_ab import (APPEND, COSTS, CPU, FILES, HALVES, REDIS, SMP, TSSERVE, TSSERVE_P16,  # noqa: F401
                       TSSERVE_PROGRAM, USER_HZ, VERDICT, ab_round, amdahl, calls_split, costs, count_step,
                       flat, parse, time_ns)

BENCH = True
ALONE = True

SCALE = float(os.environ.get("LAB_BENCH_SCALE", "1") or 1)
ROUNDS = int(os.environ.get("LAB_BENCH_ROUNDS", "4") or 4)
N = {"redis-server": int(20000 * SCALE), "tsserve": int(20000 * SCALE), "tsserve-p16": int(60000 * SCALE)}
SERVERS = (REDIS, TSSERVE, TSSERVE_P16)

PROGS = REPO / "tests" / "progs"
PROGRAMS = dict(TSSERVE_PROGRAM)
PROGRAMS["/usr/local/bin/clockloop"] = {
    "src": str(PROGS / "clockloop.c"), "dynamic": True,
    "cflags": ["-std=c11", "-D_GNU_SOURCE", "-I", str(REPO / "include")], "link": ["-ldl"]}
FILES = dict(FILES)

STEPS = [("verdict", VERDICT, 60), ("costs", COSTS, 240)]
for i in range(ROUNDS):
    for s in SERVERS:
        STEPS.append(("%s-%d" % (s.name, i), ab_round(s, HALVES[i % 2], N[s.name]), 400))
for s in SERVERS:
    STEPS.append(("count-%s" % s.name, count_step(s, N[s.name]), 400))
    STEPS.append(("count-%s-accel" % s.name, count_step(s, N[s.name], accel=True), 400))
TIMEOUT = sum(x[2] for x in STEPS)


def top_line(out):
    lines = [x for x in out.splitlines() if x.startswith("{")]
    assert lines, out
    return json.loads(lines[-1])


def count_requests(out):
    return int(out.split("count requests=")[1].split()[0])


def row(r, s, cost):
    """One server's figures from its rounds and counts."""
    tot = {k: dict(req=0, secs=0.0, ticks=0, sreq=0, tticks=0) for k in ("plain", "accel")}
    gains = []
    for i in range(ROUNDS):
        st = r["%s-%d" % (s.name, i)]
        assert st.rc == 0, (st.stdout, st.stderr)
        runs = parse(st.stdout)
        assert "fastclock-preload[" in flat(st.stderr) and "serving" in flat(st.stderr), st.stderr
        for k in ("plain", "accel"):
            kv = runs[k][0]
            assert kv.get("load_rc") == "0", (s.name, i, k, st.stdout)
            t = tot[k]
            t["req"] += s.requests(N[s.name])
            t["secs"] += float(kv["secs"])
            t["ticks"] += int(kv["server_ticks"])
            if "time_call_ticks" in kv:        # tsserve times its own time calls
                t["sreq"] += int(kv["server_requests"])
                t["tticks"] += int(kv["time_call_ticks"])
        gains.append(int(runs["plain"][0]["server_ticks"]) / max(1, int(runs["accel"][0]["server_ticks"])))
    cpu = {k: tot[k]["ticks"] * 1e9 / USER_HZ / tot[k]["req"] for k in tot}
    rps = {k: tot[k]["req"] / tot[k]["secs"] for k in tot}
    c = r["count-%s" % s.name]
    assert c.rc == 0, (c.stdout, c.stderr)
    top = top_line(c.stdout)
    per_req = {w: n / count_requests(c.stdout) for w, n in calls_split(top).items()}
    ca = r["count-%s-accel" % s.name]
    assert ca.rc == 0, (ca.stdout, ca.stderr)
    top_a = top_line(ca.stdout)
    left = sum(calls_split(top_a).values()) / count_requests(ca.stdout)
    # share from top's count x clockloop's ns a call; the accelerator's own
    # cost: its served calls, and the system calls it still makes (its checks
    # against the kernel: top's count of the accelerated server)
    by_top = amdahl(cpu["plain"], cpu["accel"], time_ns(per_req, cost["plain"]),
                    time_ns(per_req, cost["accel"], skip=("time",)) + left * cost["plain"]["monotonic"])
    w = dict(name=s.name, rps=rps, cpu=cpu, per_req=per_req, left=left, by_top=by_top, a=by_top,
             gains=gains, ids=top["processes"][0].get("clock_ids_per_s", {}) if top["processes"] else {},
             ids_left=top_a["processes"][0].get("clock_ids_per_s", {}) if top_a["processes"] else {})
    if tot["plain"]["sreq"] and tot["accel"]["sreq"]:
        # measured in the server itself: the counter's ticks inside its time
        # calls, in the same time as its CPU time (a host's load included)
        ns = {k: tot[k]["tticks"] * 1e9 / cost["hz"] / tot[k]["sreq"] for k in tot}
        w["in_server_ns"] = ns
        w["a"] = amdahl(cpu["plain"], cpu["accel"], ns["plain"], ns["accel"])
    return w


def pct(x):
    return "%.1f %%" % (100 * x)


def table(rows, cost):
    out = ["| server | requests/s plain | accelerated | x | server CPU a request, plain (us) | accelerated "
           "| gain (plain / accelerated CPU) | time system calls a request, plain (top) | accelerated "
           "| share of CPU in time calls: top x clockloop | in situ (timed in the server; *: its calls x "
           "the in-situ ns a call) | Amdahl bound (in situ) "
           "| gain / bound | (gain - 1) / (bound - 1) | accelerator's own cost, of the gap |",
           "| --- " * 15 + "|"]
    for w in rows:
        a, t = w["a"], w["by_top"]
        out.append("| %s | %.0f | %.0f | %.2f | %.1f | %.1f | %.3f | %.2f | %.2f | %s | %s | %.3f | %s | %s | %s |" % (
            w["name"], w["rps"]["plain"], w["rps"]["accel"], w["rps"]["accel"] / w["rps"]["plain"],
            w["cpu"]["plain"] / 1000, w["cpu"]["accel"] / 1000, a["gain"], sum(w["per_req"].values()),
            w["left"], pct(t["share"]), pct(a["share"]) + ("*" if w.get("in_situ_estimate") else ""), a["bound"],
            pct(a["reached"]), pct((a["gain"] - 1) / (a["bound"] - 1)) if a["bound"] > 1 else "-",
            "- (at the bound)" if a["own_of_rest"] is None else
            "all (gain above its costs' prediction %.3f)" % a["expect"] if a["own_of_rest"] > 1 else
            pct(a["own_of_rest"])))
    out.append("")
    for w in rows:
        a = w["a"]
        out.append("%s: calls a request %s; clock ids %s; accelerated, still system calls %s; gain per round %s; "
                   "the accelerator's own cost %s of the plain server's CPU%s, so expected gain %.3f" % (
                       w["name"], " ".join("%s=%.2f" % kv for kv in sorted(w["per_req"].items()) if kv[1]),
                       " ".join("%s=%.0f/s" % kv for kv in sorted(w["ids"].items())),
                       " ".join("%s=%.0f/s" % kv for kv in sorted(w["ids_left"].items())),
                       " ".join("%.2f" % g for g in w["gains"]), pct(a["own"]),
                       "; ns a request in time calls, timed in the server: %.0f plain, %.0f accelerated" % (
                           w["in_server_ns"]["plain"], w["in_server_ns"]["accel"]) if "in_server_ns" in w else "",
                       a["expect"]))
    out.append("ns a call (clockloop, best of 7 x 20000, a quiet guest), kernel (hpet) -> accelerated: " + ", ".join(
        "%s %.0f -> %.0f" % (k, cost["plain"][k], cost["accel"][k]) for k in cost["plain"]))
    if "in_situ" in cost:
        out.append("in situ (the rounds, timed by tsserve): %.0f ns a time system call" % cost["in_situ"])
    return "\n".join(out)


def check(r):
    assert r["verdict"].rc == 0
    cs = r["costs"]
    assert cs.rc == 0, cs.stderr
    cost = costs(cs.stdout)
    assert set(cost["plain"]) == set(cost["accel"]) and cost["plain"], cs.stdout
    rows = [row(r, s, cost) for s in SERVERS]
    # A system call's cost in the rounds themselves (four busy vCPUs: under
    # TCG an hpet read serializes on QEMU's global lock, several times
    # clockloop's cost in a quiet guest), from the servers that time their
    # own calls; a server that does not (redis) gets its calls at that cost.
    timed = [w for w in rows if "in_server_ns" in w]
    if timed:
        insitu = sum(w["in_server_ns"]["plain"] / sum(w["per_req"].values()) for w in timed) / len(timed)
        cost["in_situ"] = insitu
        for w in rows:
            if "in_server_ns" not in w:
                n = sum(w["per_req"].values())
                w["a"] = amdahl(w["cpu"]["plain"], w["cpu"]["accel"], n * insitu,
                                time_ns(w["per_req"], cost["accel"], skip=("time",)) + w["left"] * insitu)
                w["in_situ_estimate"] = True
    text = table(rows, cost)
    print("\nbench-servers (%d rounds side by side; requests a load: %s)\n%s\n" % (
        ROUNDS, ", ".join("%s %d" % (s.name, s.requests(N[s.name])) for s in SERVERS), text))
    if os.environ.get("LAB_BENCH_OUT"):
        Path(os.environ["LAB_BENCH_OUT"]).write_text(text + "\n")
