# SPDX-License-Identifier: MIT
"""pytest hooks of the QEMU lab: say in the header which kernel and QEMU it
uses, and repeat a skip loudly at the end of the run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab  # noqa: E402


def pytest_report_header(config):
    lines = []
    for arch in ("x86_64", "arm64"):
        try:
            t = lab.find_tools(arch)
        except lab.Missing as e:
            lines.append("lab %s: WILL BE SKIPPED: %s" % (arch, e))
            continue
        lines.append("lab %s: %s, kernel %s, busybox %s, clockdoctor %s" % (
            arch, t["qemu"], t["kernel"], t["busybox"], lab.clockdoctor_path(arch)))
    return lines


def pytest_terminal_summary(terminalreporter, config):
    reason = getattr(config, "lab_skip_reason", None)
    if reason:
        terminalreporter.section("QEMU LAB SKIPPED", sep="!", red=True, bold=True)
        terminalreporter.write_line("The lab did NOT run: %s" % reason, red=True, bold=True)
        sys.stderr.write("LAB SKIPPED: %s\n" % reason)
