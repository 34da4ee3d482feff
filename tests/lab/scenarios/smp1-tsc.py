"""smp1-tsc: one vCPU: the kernel keeps the TSC, the vDSO serves every clock,
and the guest's missing NTP is only worth an info (no TSC fix is in force):
status ok, exit 0."""
SMP = 1
STEPS = [
    ("wait", "wait-clocksource tsc 20"),   # tsc-early becomes tsc after boot
    ("check", "clockdoctor check --json"),
]


def check(r):
    c = r["check"]
    j = c.json
    assert j["clocksource"]["current"] in ("tsc", "tsc-early")
    assert c.syscall_ids == set()
    assert j["status"] == "ok", [(f["code"], f["severity"]) for f in c.findings()]
    assert c.rc == 0
