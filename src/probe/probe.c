/* SPDX-License-Identifier: MIT */
/*
 * probe.c: gathers every fact from a root directory ("/" for this machine, or
 * a snapshot), calling each parser on the text it finds.
 *
 * Only three facts differ between the live machine and a snapshot: CPUID (the
 * instruction here, cpuid.txt there), the kernel log (the ring buffer or the
 * journal here, dmesg.txt there) and NTP (adjtimex here, adjtimex.txt there).
 * Everything else is a file under the root, which is what makes `--root`
 * and `snapshot` the same code path.
 */
#include "probe/probe.h"
#include "util/beneath.h"
#include "util/fsread.h"
#include "util/lines.h"
#include "util/printable.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define CS_DIR "/sys/devices/system/clocksource/clocksource0/"

void cd_note_unknown(struct cd_facts *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	CD_LINES_VADD(f->unknown, f->n_unknown, fmt, ap);
	va_end(ap);
}

static const char *err_word(int err)
{
	switch (-err) {
	case ENOENT: return "missing";
	case EACCES: case EPERM: return "permission denied";
	case EISDIR: return "is a folder";
	/* what util/beneath.h refuses is said as such */
	default: return cd_beneath_strerror(err);
	}
}

/* A read whose failure has no note of its own: a file the tree holds but
 * that was refused (a link out, a loop, a device) is noted, so that the
 * output says why the fact is missing. */
static bool refused(int err)
{
	return err == -EXDEV || err == -ELOOP || err == -EINVAL;
}

static int read_small(struct cd_facts *f, const char *path, char *buf, size_t cap)
{
	int rc = cd_read_small(f->root, path, buf, cap);
	if (rc < 0 && refused(rc))
		cd_note_unknown(f, "%s: %s", path, err_word(rc));
	return rc;
}

static char *read_file(struct cd_facts *f, const char *path, size_t max, size_t *len)
{
	int err, trunc;
	char *text = cd_read_file(f->root, path, max, len, &err, &trunc);
	if (!text && refused(err))
		cd_note_unknown(f, "%s: %s", path, err_word(err));
	return text;
}

static void probe_clocksource(struct cd_facts *f)
{
	char buf[1024];
	int rc = cd_read_small(f->root, CS_DIR "current_clocksource", buf, sizeof buf);
	if (rc < 0)
		cd_note_unknown(f, "current clocksource: %s", err_word(rc));
	else if (cd_parse_clocksource_current(buf, &f->cs) < 0)
		cd_note_unknown(f, "current clocksource: unreadable contents");
	rc = cd_read_small(f->root, CS_DIR "available_clocksource", buf, sizeof buf);
	if (rc < 0)
		cd_note_unknown(f, "available clocksources: %s", err_word(rc));
	else if (cd_parse_clocksource_list(buf, &f->cs) < 0)
		cd_note_unknown(f, "available clocksources: unreadable contents");
}

static void probe_cpu(struct cd_facts *f)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(f->root, "/proc/cpuinfo", 4u << 20, &len, &err, &trunc);
	if (!text) {
		cd_note_unknown(f, "cpuinfo: %s", err_word(err));
	} else {
		if (cd_parse_cpuinfo(text, len, &f->cpu) < 0)
			cd_note_unknown(f, "cpuinfo: no processor listed");
		free(text);
	}
	if (f->live) {
		struct utsname u;
		if (uname(&u) == 0)
			snprintf(f->cpu.arch, sizeof f->cpu.arch, "%.*s", (int)sizeof f->cpu.arch - 1, u.machine);
		cd_cpuid_live(&f->cpuid);
	} else {
		text = cd_read_file(f->root, "/cpuid.txt", 1u << 20, &len, &err, &trunc);
		if (!text && refused(err)) {
			cd_note_unknown(f, "CPUID: cpuid.txt: %s", err_word(err));
		} else if (text) {
			if (cd_parse_cpuid_txt(text, len, &f->cpuid) < 0)
				cd_note_unknown(f, "cpuid.txt: no leaf readable");
			else
				cd_cpuid_derive(&f->cpuid);
			free(text);
		} else {
			cd_note_unknown(f, "CPUID: no cpuid.txt in the snapshot");
		}
	}
}

static void probe_kernel(struct cd_facts *f)
{
	char buf[1024];
	int rc = read_small(f, "/proc/sys/kernel/osrelease", buf, sizeof buf);
	if (rc >= 0) {
		cd_printable_copy(f->kernel.release, sizeof f->kernel.release, buf, (size_t)rc);
		f->kernel.have_release = true;
		cd_parse_kernel_release(buf, &f->kernel);
	} else {
		f->kernel.ver_major = f->kernel.ver_minor = f->kernel.ver_patch = -1;
	}
	rc = read_small(f, "/proc/cmdline", f->kernel.cmdline, sizeof f->kernel.cmdline);
	if (rc >= 0) {
		cd_printable(f->kernel.cmdline);
		f->kernel.have_cmdline = true;
		cd_parse_cmdline(f->kernel.cmdline, &f->kernel);
	}
	rc = read_small(f, "/proc/uptime", buf, sizeof buf);
	if (rc >= 0) {
		char *end;
		double up = strtod(buf, &end);
		if (end != buf && up >= 0 && up < 1e10) {
			f->kernel.uptime_s = up;
			f->kernel.have_uptime = true;
		}
	}
}

/* Fill the kernel release and command line from the log when the files were
 * missing: old snapshots often have only dmesg. */
static void kernel_from_log(struct cd_facts *f)
{
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_KERNEL_VERSION && !f->kernel.have_release && e->name[0]) {
			snprintf(f->kernel.release, sizeof f->kernel.release, "%s", e->name);
			f->kernel.have_release = true;
			cd_parse_kernel_release(e->name, &f->kernel);
		}
		if (e->kind == CD_EV_CMDLINE && !f->kernel.have_cmdline) {
			const char *c = strstr(e->line, "ommand line:");
			if (c) {
				snprintf(f->kernel.cmdline, sizeof f->kernel.cmdline, "%s", c + strlen("ommand line:"));
				f->kernel.have_cmdline = true;
				cd_parse_cmdline(f->kernel.cmdline, &f->kernel);
			}
		}
	}
	if (!f->kernel.have_release)
		cd_note_unknown(f, "kernel release: unknown");
	if (!f->kernel.have_cmdline)
		cd_note_unknown(f, "kernel command line: unknown");
}

static void probe_klog(struct cd_facts *f)
{
	if (f->live) {
		cd_klog_live(&f->klog);
	} else {
		size_t len;
		int err, trunc;
		char *text = cd_read_file(f->root, "/dmesg.txt", 64u << 20, &len, &err, &trunc);
		f->klog.source = CD_KLOG_FILE;
		if (!text) {
			snprintf(f->klog.why_not, sizeof f->klog.why_not, "dmesg.txt: %s", err_word(err));
		} else {
			f->klog.readable = true;
			cd_klog_parse(text, len, &f->klog);
			if (trunc)
				snprintf(f->klog.why_not, sizeof f->klog.why_not, "dmesg.txt: only the first 64 MiB read");
			free(text);
		}
	}
	if (!f->klog.readable)
		cd_note_unknown(f, "kernel log: %s", f->klog.why_not[0] ? f->klog.why_not : "not readable");
}

/* No sysfs: the clocksource in force is the last one the log says the
 * kernel switched to (see struct cd_clocksource).  A watchdog report that
 * demoted the TSC after that switch (or with no switch line: a grepped or
 * wrapped log) names it too: the watchdog is the best-rated clocksource that
 * needs no verifying (clocksource_select_watchdog()), and once the TSC is
 * demoted clocksource_select() takes the best-rated one left, which is it.
 * (RHEL 6's "unstable (delta = ...)" names no watchdog, and RHEL 6 does not
 * fail over by default: no inference from it.) */
static void clocksource_from_log(struct cd_facts *f)
{
	if (f->cs.have_current)
		return;
	int pick = -1;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if ((e->kind == CD_EV_CS_SWITCHED && e->name[0]) ||
		    (e->kind == CD_EV_WATCHDOG_SKEW && strncmp(e->name, "tsc", 3) == 0 && e->name2[0]))
			pick = i;
	}
	/* No switch line at all, but the ARM architected timer registered:
	 * rated 400 (drivers/clocksource/arm_arch_timer.c), above the SoC
	 * timers an arm or arm64 kernel registers beside it (bcm2835's "timer"
	 * is 300), it is the one the kernel selects (a log cut before its
	 * switch line, as early boot logs are). */
	for (int i = 0; pick < 0 && i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_CS_REGISTERED &&
		    strcmp(f->klog.events[i].name, "arch_sys_counter") == 0)
			pick = i;
	/* Nor that: a workaround of the architected timer's errata, or its
	 * trapping of user-space counter reads, is printed by the same driver
	 * as it sets up the counter it then registers as arch_sys_counter
	 * (arch_timer_enable_workaround, arch_counter_set_user_access): a
	 * secondary CPU's lines, logged without the boot CPU's. */
	bool arch_timer = false;
	for (int i = 0; pick < 0 && i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_ARCH_TIMER_WORKAROUND || f->klog.events[i].kind == CD_EV_ARCH_TIMER_TRAP)
			pick = i, arch_timer = true;
	if (pick < 0)
		return;
	const struct cd_event *e = &f->klog.events[pick];
	if (arch_timer) {
		snprintf(f->cs.current, sizeof f->cs.current, "arch_sys_counter");
		f->cs.have_current = true;
		f->cs.from_log = true;
		f->cs.log_event = pick;
		return;
	}
	/* A switch to the TSC that the kernel marked unstable after it (or
	 * whose watchdog report, cut before its watchdog's line, demoted it):
	 * the kernel has left it, and the line saying for what is not here. */
	for (int i = pick + 1; e->kind == CD_EV_CS_SWITCHED && strncmp(e->name, "tsc", 3) == 0 &&
	                       i < f->klog.n_events; i++) {
		const struct cd_event *later = &f->klog.events[i];
		if (later->kind == CD_EV_TSC_UNSTABLE ||
		    (later->kind == CD_EV_WATCHDOG_SKEW && strncmp(later->name, "tsc", 3) == 0))
			return;
	}
	snprintf(f->cs.current, sizeof f->cs.current, "%s", e->kind == CD_EV_WATCHDOG_SKEW ? e->name2 : e->name);
	f->cs.have_current = true;
	f->cs.from_log = true;
	f->cs.log_event = pick;
}

/* A snapshot's architecture: /proc/sys/kernel/arch (uname's machine), which
 * says what the kernel is; cpuinfo only says what the CPU can be (a 32-bit
 * kernel lists an x86-64 CPU's flags all the same). */
static void probe_arch(struct cd_facts *f)
{
	char buf[64];
	if (f->live)
		return;
	/* A machine name is letters, digits and '_' (x86_64, i686, aarch64):
	 * anything else is no answer, and never reaches a terminal. */
	if (read_small(f, "/proc/sys/kernel/arch", buf, sizeof buf) < 0)
		return;
	size_t n = strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (n > 0 && n < sizeof f->cpu.arch && strchr(" \t\r\n", buf[n]))
		snprintf(f->cpu.arch, sizeof f->cpu.arch, "%.*s", (int)n, buf);
}

static void probe_os(struct cd_facts *f)
{
	size_t len;
	char *text = read_file(f, "/etc/os-release", 65536, &len);
	if (!text)
		text = read_file(f, "/usr/lib/os-release", 65536, &len);
	if (text) {
		cd_parse_os_release(text, &f->os);
		free(text);
	}
	static const char *const legacy[] = { "/etc/lsb-release", "/etc/redhat-release", "/etc/SuSE-release",
	                                      "/etc/debian_version" };
	for (size_t i = 0; i < sizeof legacy / sizeof legacy[0] && f->os.family == CD_OS_UNKNOWN; i++) {
		text = read_file(f, legacy[i], 65536, &len);
		if (text) {
			cd_parse_os_legacy(legacy[i], text, &f->os);
			free(text);
		}
	}
	if (f->kernel.have_release)
		cd_os_guess_from_release(f->kernel.release, &f->os);
}

static void probe_hypervisor_strings(struct cd_facts *f)
{
	read_small(f, "/sys/hypervisor/type", f->hv.sys_hypervisor_type, sizeof f->hv.sys_hypervisor_type);
	read_small(f, "/sys/class/dmi/id/sys_vendor", f->hv.dmi_sys_vendor, sizeof f->hv.dmi_sys_vendor);
	read_small(f, "/sys/class/dmi/id/product_name", f->hv.dmi_product_name, sizeof f->hv.dmi_product_name);
	cd_printable(f->hv.sys_hypervisor_type);
	cd_printable(f->hv.dmi_sys_vendor);
	cd_printable(f->hv.dmi_product_name);
	read_small(f, "/sys/class/dmi/id/chassis_asset_tag", f->hv.dmi_chassis_asset_tag,
	           sizeof f->hv.dmi_chassis_asset_tag);
	cd_printable(f->hv.dmi_chassis_asset_tag);
	/* The device tree's model (a string property, NUL-terminated) */
	if (read_small(f, "/proc/device-tree/model", f->hv.machine_model, sizeof f->hv.machine_model) < 0)
		read_small(f, "/sys/firmware/devicetree/base/model", f->hv.machine_model, sizeof f->hv.machine_model);
	cd_printable(f->hv.machine_model);
	/* Where the user stands: systemd's container type, Docker's and
	 * Podman's marker files. */
	read_small(f, "/run/systemd/container", f->hv.container, sizeof f->hv.container);
	/* Without systemd inside, only init's environment says it: LXC and
	 * others set container= for the container's first process (systemd
	 * writes the file above from the same variable). */
	if (!f->hv.container[0]) {
		size_t len;
		char *env = read_file(f, "/proc/1/environ", 65536, &len);
		if (env) {
			cd_platform_container_from_environ(env, len, f->hv.container, sizeof f->hv.container);
			free(env);
		}
	}
	cd_printable(f->hv.container);
	char mark[8];
	bool dockerenv = cd_read_small(f->root, "/.dockerenv", mark, sizeof mark) >= 0;
	bool containerenv = cd_read_small(f->root, "/run/.containerenv", mark, sizeof mark) >= 0;
	cd_platform_where(f, dockerenv, containerenv);
}

static void probe_ntp_file(struct cd_facts *f)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(f->root, "/adjtimex.txt", 65536, &len, &err, &trunc);
	if (!text) {
		cd_note_unknown(f, "NTP: %s", err == -ENOENT ? "no adjtimex.txt in the snapshot"
		                                             : err_word(err));
		return;
	}
	if (cd_parse_adjtimex_txt(text, &f->ntp) < 0)
		cd_note_unknown(f, "NTP: adjtimex.txt has no readable status");
	free(text);
}

void cd_probe(const char *root, bool live, struct cd_facts *f)
{
	memset(f, 0, sizeof *f);
	f->live = live;
	/* never cut: a shorter root is another folder (the commands refuse a
	 * longer one first, cd_folder_arg) */
	if (strlen(root) >= sizeof f->root) {
		cd_note_unknown(f, "the root folder's name is too long: nothing read");
		return;
	}
	snprintf(f->root, sizeof f->root, "%s", root);
	probe_clocksource(f);
	probe_cpu(f);
	probe_kernel(f);
	probe_arch(f);
	probe_klog(f);
	kernel_from_log(f);
	clocksource_from_log(f);
	probe_os(f);
	probe_hypervisor_strings(f);
	cd_hypervisor_decide(f);
	cd_probe_saved_verdict(f);
	if (live)
		cd_ntp_live(&f->ntp);
	else
		probe_ntp_file(f);
}
