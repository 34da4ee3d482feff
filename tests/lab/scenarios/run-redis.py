# SPDX-License-Identifier: MIT
"""run-redis: a real server from Debian's packages under `clockdoctor run`, in
a four-vCPU guest on hpet: redis-server driven by redis-benchmark on loopback,
all inside the guest, on the kernel's clock and accelerated (the sound verdict
simulated by hand with the guest's boot id, on run-hpet's CPU and kernel
command line).  The server must behave the same on either clock: values,
expiry (PX), TTL, and its TIME against the guest's clock.

Throughput is measured A/B at the same moment: each round runs the plain
server (port 6379) and the accelerated one (6380) side by side, each on its
own vCPU with its own benchmark client on another, so the host's load, which
under TCG moved rounds run one after the other by up to 1.6x, falls on both
alike; the two halves of the guest swap between rounds.  The figures are
printed (docs/run.md), not asserted: a throughput assertion would fail on a
slow host, not on a wrong program.  The clients run plain, so only the
servers differ.  `make bench-lab` (bench-servers) measures the same A/B at
length, with a second server and the Amdahl bound (docs/run.md)."""
from server_ab import ACCEL, APPEND, CPU, FILES, HALVES, SMP, VERDICT, flat, median, parse  # noqa: F401

TIMEOUT = 300

# One round: both servers started (plain on PORT_P pinned to MASK_P, the
# accelerated one on PORT_A to MASK_A), their behaviour checked, then both
# benchmarked at once from the other two vCPUs; each server's CPU time
# (utime + stime, ticks) over its benchmark.  Lines: "plain k=v ...",
# "accel k=v ...", and redis-benchmark's "plain SET: N requests per second".
ROUND = r"""
taskset %(sp)s redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --protected-mode no \
    --loglevel warning >/tmp/redis-plain.log 2>&1 &
P=$!
taskset %(sa)s %(accel)s redis-server --port 6380 --bind 127.0.0.1 --save '' --appendonly no \
    --protected-mode no --loglevel warning >/tmp/redis-accel.log 2>&1 &
A=$!
for port in 6379 6380; do
  n=0; until [ "$(redis-cli -p $port ping 2>/dev/null)" = PONG ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
done
for kind in plain:6379 accel:6380; do
  k=${kind%%:*}; port=${kind#*:}
  echo "$k set=$(redis-cli -p $port set k hello EX 100) get=$(redis-cli -p $port get k)" \
       "ttl=$(redis-cli -p $port ttl k)"
  redis-cli -p $port set e v PX 2000 >/dev/null; echo "$k pttl=$(redis-cli -p $port pttl e)"
done
sleep 2.5
for kind in plain:6379 accel:6380; do
  k=${kind%%:*}; port=${kind#*:}
  echo "$k exists_after=$(redis-cli -p $port exists e)" \
       "server_time=$(redis-cli -p $port time | head -n 1) guest_time=$(date +%%s)"
done
cp=$(awk '{print $14 + $15}' /proc/$P/stat); ca=$(awk '{print $14 + $15}' /proc/$A/stat)
taskset %(cp)s timeout 120 redis-benchmark -p 6379 -q -n %(n)d -P 16 -c 4 -t set,get,incr >/tmp/bench-plain 2>&1 &
BP=$!
taskset %(ca)s timeout 120 redis-benchmark -p 6380 -q -n %(n)d -P 16 -c 4 -t set,get,incr >/tmp/bench-accel 2>&1 &
BA=$!
wait $BP; wait $BA
echo "plain server_ticks=$(( $(awk '{print $14 + $15}' /proc/$P/stat) - cp ))"
echo "accel server_ticks=$(( $(awk '{print $14 + $15}' /proc/$A/stat) - ca ))"
for k in plain accel; do tr '\r' '\n' </tmp/bench-$k | grep 'requests per second' | sed "s/^/$k /"; done
redis-cli -p 6379 shutdown nosave >/dev/null 2>&1 || kill $P
redis-cli -p 6380 shutdown nosave >/dev/null 2>&1 || kill $A
wait $P; wait $A
cat /tmp/redis-plain.log /tmp/redis-accel.log >&2
"""

ROUNDS = 4
REQUESTS = 20000
STEPS = [("verdict", VERDICT, 60)]
for i in range(ROUNDS):
    STEPS.append(("round%d" % i, ROUND % dict(HALVES[i % 2], accel=ACCEL, n=REQUESTS), 200))


def check(r):
    assert r["verdict"].rc == 0
    ratios, tick_ratios, total = [], [], {"plain": 0.0, "accel": 0.0}
    for i in range(ROUNDS):
        s = r["round%d" % i]
        assert s.rc == 0, s.stderr
        runs = parse(s.stdout)
        for kind, (kv, rps) in runs.items():
            # the same behaviour on either clock
            assert kv["set"] == "OK" and kv["get"] == "hello", (i, kind, kv)
            assert kv["ttl"] in ("100", "99"), (i, kind, kv)
            assert 0 < int(kv["pttl"]) <= 2000 and kv["exists_after"] == "0", (i, kind, kv)   # PX expiry
            assert abs(int(kv["server_time"]) - int(kv["guest_time"])) <= 2, (i, kind, kv)
            assert set(rps) == {"SET", "GET", "INCR"}, (i, kind, rps)
            total[kind] += sum(rps.values())
        assert "accelerating redis-server: the kernel's clocksource hpet makes every time call a system call" \
            in flat(s.stderr), s.stderr
        assert "fastclock-preload[" in flat(s.stderr) and "serving" in flat(s.stderr) and "reason=verified" in flat(s.stderr)
        p, a = runs["plain"], runs["accel"]
        ratios.append(sum(a[1].values()) / sum(p[1].values()))
        tick_ratios.append(int(p[0]["server_ticks"]) / max(1, int(a[0]["server_ticks"])))
    # Printed, not asserted (see the top of the file).
    print("redis A/B, %d rounds of %d requests x 3 tests, side by side: accelerated/plain requests a "
          "second per round %s (median %.2f); plain/accelerated server CPU per round %s (median %.2f); "
          "sums %.0f plain, %.0f accelerated" % (
              ROUNDS, REQUESTS, " ".join("%.2f" % x for x in ratios), median(ratios),
              " ".join("%.2f" % x for x in tick_ratios), median(tick_ratios),
              total["plain"], total["accel"]))
