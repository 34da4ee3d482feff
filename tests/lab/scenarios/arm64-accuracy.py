# SPDX-License-Identifier: MIT
"""arm64-accuracy: `clockdoctor accuracy -d 2` in the healthy arm64 guest:
libfastclock on cntvct_el0 held against the kernel's clocks, within its own
bound, never backwards."""
from arm64_lab import ACCURACY, ARCH, CPU, SMP  # noqa: F401

TIMEOUT = 200
STEPS = [ACCURACY]


def check(r):
    a = r["accuracy"]
    j = a.json
    for c in j["clocks"]:
        print("arm64-accuracy: %s max %d ns over_bound %d backward %s" % (
            c["name"], c["max_abs_ns"], c["over_bound"], c["backward"]))
    assert a.rc == 0, a.stderr
    for c in j["clocks"]:
        assert c["over_bound"] == 0, c
        assert c["backward"]["same_thread"] + c["backward"]["across_threads"] == 0, c
