# SPDX-License-Identifier: MIT
"""What the server A/B scenarios share (run-redis, a test in `make lab`, and
bench-servers, the benchmark of `make bench-lab`): the four-vCPU guest on
hpet with the invariant-TSC bit, the sound verdict written by hand, the
accelerator's command line, the round that runs a plain and an accelerated
server side by side, and the arithmetic of the table.

A round runs the plain server (pinned to one vCPU, its load generator on a
second) and the accelerated one (the other two vCPUs) at the same moment, so
the host's load, which under TCG moved rounds run one after the other by up
to 1.6x, falls on both alike; the two halves of the guest swap between
rounds.  Each server's CPU time is utime + stime from /proc/PID/stat over its
load (ticks of 1/USER_HZ = 10 ms)."""
from lab import clockdoctor_path

SMP = 4
CPU = "max,+invtsc,x-force-features=on"   # as run-hpet: the bit forced on, the kernel on hpet
APPEND = "tsc=unstable"
USER_HZ = 100

B = clockdoctor_path().resolve().parent
PRELOAD = "/usr/local/lib/libfastclock-preload.so"
FILES = {
    PRELOAD: str(B / "libfastclock-preload.so"),
    "/usr/bin/redis-server": "/usr/bin/redis-server",
    "/usr/bin/redis-benchmark": "/usr/bin/redis-benchmark",
    "/usr/bin/redis-cli": "/usr/bin/redis-cli",
}

# A verdict as `clockdoctor tsc` writes it, with this boot's id and the
# frequency it measures, never the real /run/clockdoctor; and loopback up.
VERDICT = r"""
hz=$(CLOCKDOCTOR_STATE_DIR=/tmp/tsc-state clockdoctor tsc --json -d 0.2 --quick 2>/dev/null |
     sed -n 's/.*"measured_hz": *\([0-9][0-9]*\).*/\1/p' | head -n 1)
printf 'boot_id=%s\nverdict=sound\ncounter_hz=%s\nclocksource=hpet\ntime=%s\n' \
  "$(cat /proc/sys/kernel/random/boot_id)" "${hz:-0}" "$(date +%s)" > /tmp/verdict-sound
chmod 644 /tmp/verdict-sound
ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up
"""

# taskset first: `run` itself says it cannot reach a static taskset's exec
ACCEL = "env FASTCLOCK_VERDICT=/tmp/verdict-sound FASTCLOCK_INFO=1 clockdoctor run --"

# vCPU masks: server, load of the plain side; server, load of the accelerated side
HALVES = [dict(sp=1, cp=2, sa=4, ca=8), dict(sp=4, cp=8, sa=1, ca=2)]

TICKS = "$(awk '{print $14 + $15}' /proc/%s/stat)"


def flat(text):
    """Text with its line breaks as spaces: `run` wraps its notice to 80 columns."""
    return " ".join(text.split())


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def parse(out):
    """{"plain": (kv, {test: rps}), "accel": (...)} from a round's lines:
    "plain k=v ..." and redis-benchmark's "plain SET: N requests per second"."""
    runs = {"plain": ({}, {}), "accel": ({}, {})}
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind not in runs:
            continue
        kv, rps = runs[kind]
        if "requests per second" in rest:
            name, num = rest.split(":", 1)
            rps[name.strip()] = float(num.split()[0])
        else:
            kv.update(x.split("=", 1) for x in rest.split() if "=" in x)
    return runs


class Server:
    """How to start one server on a port, know it is up, load it with a
    number of requests, and stop it: shell fragments, {port} and {n} filled in."""

    def __init__(self, name, start, ready, load, stop, requests):
        self.name, self.start, self.ready, self.load, self.stop = name, start, ready, load, stop
        self.requests = requests            # requests one load makes, from N


REDIS = Server(
    "redis-server",
    start="redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --protected-mode no "
          "--loglevel warning",
    ready='[ "$(redis-cli -p {port} ping 2>/dev/null)" = PONG ]',
    load="redis-benchmark -p {port} -q -n {n} -P 16 -c 4 -t set,get,incr",
    stop="redis-cli -p {port} shutdown nosave >/dev/null 2>&1",
    requests=lambda n: 3 * n)

TSSERVE = Server(
    "tsserve",
    start="tsserve server {port}",
    ready="tsserve client {port} 1 1 1 >/dev/null 2>&1",
    load="tsserve client {port} 4 1 {n}",
    stop="false",
    requests=lambda n: n)
# the same server with 16 requests in flight on each connection, sent
# together (a pipelining client): its system calls a request are fewer
TSSERVE_P16 = Server(
    "tsserve-p16",
    start=TSSERVE.start, ready=TSSERVE.ready,
    load="tsserve client {port} 4 16 {n}",
    stop="false",
    requests=lambda n: n)

TSSERVE_PROGRAM = {"/usr/local/bin/tsserve": {"src": "guest/tsserve.c", "dynamic": True}}


def _up(server, pid_var, port):
    r = server.ready.replace("{port}", str(port))
    return ('n=0; until %s || [ $n -gt 150 ]; do sleep 0.1; n=$((n+1)); done\n'
            'kill -0 $%s || { echo "%s on %d did not start" >&2; exit 1; }\n' % (r, pid_var, server.name, port))


def _down(server, pid_var, port):
    s = server.stop.replace("{port}", str(port))
    return "%s || kill $%s; wait $%s\n" % (s, pid_var, pid_var)


def ab_round(server, half, n, ports=(7001, 7002)):
    """One round: both servers started, then each loaded with n (its load's
    unit) at the same moment from its own vCPU.  Prints "plain
    server_ticks=T secs=S" and the same for "accel", and the loads' own
    output lines prefixed with plain/accel."""
    pp, pa = ports
    h = dict(half)
    sh = ["taskset %d %s >/tmp/srv-plain.log 2>&1 &\nP=$!\n" % (h["sp"], server.start.replace("{port}", str(pp))),
          "taskset %d %s %s >/tmp/srv-accel.log 2>&1 &\nA=$!\n" % (h["sa"], ACCEL,
                                                                     server.start.replace("{port}", str(pa))),
          _up(server, "P", pp), _up(server, "A", pa),
          "cp=%s; ca=%s\n" % (TICKS % "$P", TICKS % "$A")]
    for kind, mask, port in (("plain", h["cp"], pp), ("accel", h["ca"], pa)):
        load = server.load.replace("{port}", str(port)).replace("{n}", str(n))
        sh.append("( s=$(cut -d' ' -f1 /proc/uptime); taskset %d timeout 300 %s >/tmp/load-%s 2>&1; "
                  "echo \"$? $s $(cut -d' ' -f1 /proc/uptime)\" >/tmp/load-%s.t ) &\nL%s=$!\n"
                  % (mask, load, kind, kind, kind))
    sh.append("wait $Lplain; wait $Laccel\n")
    for kind, var in (("plain", "P"), ("accel", "A")):
        sh.append('set -- $(cat /tmp/load-%s.t)\n'
                  'echo "%s server_ticks=$(( %s - c%s )) load_rc=$1 secs=$(awk "BEGIN{print $3 - $2}")"\n'
                  % (kind, kind, TICKS % ("$" + var), var[0].lower()))
        sh.append("tr '\\r' '\\n' </tmp/load-%s | grep -v '^$' | sed 's/^/%s /'\n" % (kind, kind))
    sh += [_down(server, "P", pp), _down(server, "A", pa),
           # tsserve's own count at its end: "plain server_requests=N time_call_ticks=T"
           "for k in plain accel; do grep '^requests=' /tmp/srv-$k.log | sed \"s/^/$k server_/\"; done\n",
           "cat /tmp/srv-plain.log /tmp/srv-accel.log >&2\n"]
    return "".join(sh)


def count_step(server, n, port=7003, accel=False):
    """The server alone (vCPU 0, its load on vCPU 1), with `clockdoctor top
    -p` counting its time system calls (exact, in the kernel) over a load of
    n: prints top's last JSON line, then "count requests=R"."""
    start = server.start.replace("{port}", str(port))
    load = server.load.replace("{port}", str(port)).replace("{n}", str(n))
    return ("taskset 1 %s %s >/tmp/srv-count.log 2>&1 &\nP=$!\n%s"
            "taskset 2 clockdoctor top -p $P --json -i 600 >/tmp/top.json 2>/tmp/top.err &\nT=$!\n"
            "n=0; until grep -q Tracing /tmp/top.err || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done\n"
            "sleep 0.5\n"
            "taskset 2 timeout 300 %s >/tmp/load-count 2>&1\n"
            "sleep 0.5; kill $T; wait $T\n"
            "tail -n 1 /tmp/top.json\necho \"count requests=%d\"\n%s"
            % (ACCEL if accel else "", start, _up(server, "P", port), load, server.requests(n),
               _down(server, "P", port)))


# The clock ids top names, as clockloop's ways
WAY_OF_ID = {"MONOTONIC": "monotonic", "REALTIME": "realtime", "MONOTONIC_RAW": "raw",
             "BOOTTIME": "boottime", "TAI": "tai"}
COST_WAYS = "monotonic realtime raw boottime tai gettimeofday"
COSTS = ("grep counter_hz /tmp/verdict-sound\n"
         "clockloop -n 20000 -b 7 %s | sed 's/^/plain /'\n"
         "%s clockloop -n 20000 -b 7 %s | sed 's/^/accel /'\n" % (COST_WAYS, ACCEL, COST_WAYS))


def costs(out):
    """{"plain": {way: ns}, "accel": {...}, "hz": the counter's Hz} from the
    COSTS step."""
    r = {"plain": {}, "accel": {}, "hz": float(out.split("counter_hz=")[1].split()[0])}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] in r:
            r[f[0]][f[1]] = float(f[2])
    return r


def calls_split(top):
    """{way: calls} of one process from top's JSON line (its exact total,
    split by gettimeofday and by the sampled clock ids of clock_gettime)."""
    p = top["total"]
    secs = top["seconds"]
    by = p["syscalls_per_s"]
    out = {"gettimeofday": by.get("gettimeofday", 0) * secs, "time": by.get("time", 0) * secs}
    cg = by.get("clock_gettime", 0) * secs
    procs = top.get("processes") or []
    ids = procs[0].get("clock_ids_per_s", {}) if procs else {}
    tot = sum(ids.values())
    for cid, rate in ids.items():
        w = WAY_OF_ID.get(cid, "monotonic")
        out[w] = out.get(w, 0) + (cg * rate / tot if tot else 0)
    if not tot and cg:
        out["monotonic"] = out.get("monotonic", 0) + cg
    return out


def time_ns(calls_per_req, ns_a_call, skip=()):
    """ns a request in time calls: {way: calls} x {way: ns a call}."""
    return sum(c * ns_a_call.get(w, ns_a_call["monotonic"]) for w, c in calls_per_req.items() if w not in skip)


def amdahl(cpu_plain_ns, cpu_accel_ns, time_plain_ns, time_accel_ns):
    """The figures of one server's row.  cpu_*: the server's CPU a request,
    plain and accelerated; time_plain_ns: a request's time calls on the
    kernel's clock; time_accel_ns: the accelerator's own cost a request (its
    served calls and the system calls it still makes).  Returns: share (of
    the plain server's CPU in time calls), bound (1 / (1 - share): the
    speed-up of CPU a request if time calls cost nothing), gain (measured:
    plain over accelerated CPU a request), reached (gain / bound), own (the
    accelerator's cost, as a share of the plain server's CPU), expect (1 /
    (1 - share + own): the gain if nothing but the time calls changed), and
    own_of_rest (of the distance from the gain to the bound, the part the
    accelerator's own cost explains; None when the gain is at the bound)."""
    share = time_plain_ns / cpu_plain_ns
    own = time_accel_ns / cpu_plain_ns
    bound = 1 / (1 - share) if share < 1 else float("inf")
    gain = cpu_plain_ns / cpu_accel_ns
    expect = 1 / (1 - share + own)
    rest = bound - gain
    return dict(share=share, bound=bound, gain=gain, reached=gain / bound, own=own, expect=expect,
                own_of_rest=(bound - expect) / rest if rest > 0 else None)
