# SPDX-License-Identifier: MIT
"""arm64-run: `clockdoctor run` in the healthy arm64 guest: the vDSO serves
every clock there, so run leaves the program alone and says why in one
line; the program (tests/progs/inconsistency, dynamically linked against
the arm64 C library) passes."""
from arm64_lab import ARCH, CPU, FILES, PROGRAMS, RUN, SMP  # noqa: F401

TIMEOUT = 150
STEPS = [RUN]


def check(r):
    x = r["run"]
    print("arm64-run: %s | %s" % (x.stderr.strip(), x.stdout.strip()))
    assert x.rc == 0, (x.stdout, x.stderr)
    assert x.stdout.split()[-1] == "PASS", x.stdout
    notice = " ".join(x.stderr.split())
    # one line: nothing to gain, the vDSO reads arch_sys_counter
    assert "not accelerating inconsistency: nothing to gain" in notice, notice
    assert "arch_sys_counter is read by the vDSO" in notice, notice
