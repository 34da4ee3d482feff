/* SPDX-License-Identifier: MIT */
/*
 * platform.c: the signs of a platform that name no hypervisor, for
 * hypervisor.c's decision and for the advice: bare metal said in so many
 * words (the x86 paravirt banner "on bare hardware", firmware written by a
 * hardware maker, a board's device tree, a clocksource only real hardware
 * has), the QEMU virt board, the architecture when nothing but the kernel
 * log tells it, and where the user stands when it is not a machine they
 * manage (a container, a sandbox, a desktop product's VM).
 */
#include "probe/probe.h"
#include "probe/span.h"
#include "util/table.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

static struct cd_span trimmed(const char *s, size_t cap)
{
	struct cd_span f = { s, strnlen(s, cap) };
	while (f.n > 0 && (f.p[0] == ' ' || f.p[0] == '\t'))
		f.p++, f.n--;
	while (f.n > 0 && strchr(" \t\r\n", f.p[f.n - 1]))
		f.n--;
	return f;
}

#define TRIMMED(arr) trimmed((arr), sizeof(arr))

/* DMI vendors (sys_vendor, or the log's "DMI: VENDOR PRODUCT/BOARD")
 * that only real hardware writes: hardware makers, and the placeholders
 * their OEM boards leave ("To Be Filled By O.E.M.", "System
 * manufacturer").  Hypervisors write their own (hypervisor.c); makers
 * that also name a cloud's or a hypervisor's VMs (Microsoft, Google,
 * Amazon) are not here. */
static const char *const hardware_makers[] = {
	"LENOVO", "Lenovo", "Dell Inc.", "Dell Computer Corporation", "Hewlett-Packard", "HP", "HPE",
	"ASUSTeK COMPUTER INC.", "ASUSTeK Computer INC.", "ASUS", "Gigabyte Technology Co., Ltd.", "GIGABYTE",
	"Micro-Star International Co., Ltd.", "MSI", "Supermicro", "ASRock", "Apple Inc.", "Apple Computer, Inc.",
	"Acer", "Framework", "Intel Corporation", "TOSHIBA", "SAMSUNG ELECTRONICS CO., LTD.",
	"Sony Corporation", "FUJITSU", "FUJITSU SIEMENS", "IBM", "Quanta", "Inspur", "Huawei",
	"Cisco Systems Inc", "SGI.COM", "Silicon Graphics International Corp.", "Razer", "System76",
	"Notebook", "CLEVO", "Tyan", "Wistron", "Foxconn", "Sugon", "Ampere(R)", "WIWYNN",
	"To Be Filled By O.E.M.", "System manufacturer",
};

/* The maker whose name starts s and ends at its end or a blank. */
static const char *maker_of(struct cd_span s)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(hardware_makers); i++) {
		size_t n = strlen(hardware_makers[i]);
		if (s.n >= n && memcmp(s.p, hardware_makers[i], n) == 0 && (s.n == n || s.p[n] == ' '))
			return hardware_makers[i];
	}
	return NULL;
}

const char *cd_platform_hardware_maker(const struct cd_facts *f)
{
	struct cd_span vendor = TRIMMED(f->hv.dmi_sys_vendor);
	if (vendor.n)
		return maker_of(vendor);
	return maker_of(TRIMMED(f->hv.klog_dmi));
}

/* Device tree models of virtual boards; the kernel prints the compatible
 * string when the tree has no model ("linux,dummy-virt": QEMU's virt board,
 * also used by crosvm and Firecracker on arm64). */
static const struct cd_word virtual_models[] = {
	{ "linux,dummy-virt", false, 1 }, { "QEMU", true, 1 }, { "KVM", true, 1 },
	{ "Firecracker", true, 1 }, { "crosvm", true, 1 },
};

/* Boards and SoC families, by the model their device tree gives. */
static const char *const board_words[] = {
	"Raspberry Pi", "Pine64", "PINE64", "Pinebook", "Hardkernel", "ODROID", "Rockchip", "Radxa",
	"Allwinner", "Xunlong", "Orange Pi", "Banana Pi", "LeMaker", "Cubietech", "Cubietruck",
	"BeagleBone", "TI AM335x", "Texas Instruments", "NVIDIA Jetson", "Jetson", "Khadas", "Libre Computer",
	"FriendlyElec", "FriendlyARM", "NanoPi", "Freescale", "NXP", "i.MX", "Amlogic", "Samsung", "Exynos",
	"Qualcomm", "Marvell", "Turris", "SolidRun", "Broadcom", "MediaTek", "Toradex", "Apple ",
	"Ampere", "HiSilicon", "StarFive", "SiFive", "Sipeed", "Milk-V", "T-HEAD", "Microchip",
};

bool cd_platform_virtual_board(const struct cd_facts *f)
{
	struct cd_span m = TRIMMED(f->hv.machine_model);
	return m.n && cd_span_lookup(m, virtual_models, CD_ARRAY_LEN(virtual_models), 0);
}

bool cd_platform_board(const struct cd_facts *f)
{
	struct cd_span m = TRIMMED(f->hv.machine_model);
	if (!m.n || cd_platform_virtual_board(f))
		return false;
	for (size_t i = 0; i < CD_ARRAY_LEN(board_words); i++) {
		size_t n = strlen(board_words[i]);
		for (size_t at = 0; at + n <= m.n; at++)
			if (memcmp(m.p + at, board_words[i], n) == 0)
				return true;
	}
	return false;
}

/* Clocksources that only real machines register: the SGI UV hub's RTC,
 * IBM Summit's cyclone, NumaScale's NumaChip. */
static const char *const hardware_clocksources[] = { "sgi_rtc", "uv_rtc", "cyclone", "numachip2" };

const char *cd_platform_hardware_clocksource(const struct cd_facts *f)
{
	const struct cd_clocksource *cs = &f->cs;
	int n = cs->have_available ? cs->n_available : 0;
	if (n < 0)
		n = 0;
	if (n > CD_MAX_CLOCKSOURCES)
		n = CD_MAX_CLOCKSOURCES;
	for (size_t k = 0; k < CD_ARRAY_LEN(hardware_clocksources); k++) {
		struct cd_span want = { hardware_clocksources[k], strlen(hardware_clocksources[k]) };
		if (cs->have_current && cd_span_is(TRIMMED(cs->current), want.p))
			return want.p;
		for (int i = 0; i < n; i++)
			if (cd_span_is(TRIMMED(cs->available[i]), want.p))
				return want.p;
		for (int i = 0; i < f->klog.n_events && i < CD_MAX_EVENTS; i++) {
			const struct cd_event *e = &f->klog.events[i];
			if ((e->kind == CD_EV_CS_SWITCHED || e->kind == CD_EV_CS_REGISTERED) &&
			    strcmp(e->name, want.p) == 0)
				return want.p;
		}
	}
	return NULL;
}

/* The table's architecture for a clocksource name: NULL when the table does
 * not say (jiffies, refined-jiffies, unknown names). */
static const char *arch_of_clocksource(const char *name)
{
	const struct fc_cs_fact *cs = fc_cs_fact(name);
	return cs ? cs->arch : NULL;
}

static bool x86_arch(const char *arch)
{
	static const char *const x86[] = { "x86_64", "i686", "i586", "i486", "i386", "x86" };
	for (size_t i = 0; i < CD_ARRAY_LEN(x86); i++)
		if (strcmp(arch, x86[i]) == 0)
			return true;
	return false;
}

int cd_platform_is_x86(const struct cd_facts *f)
{
	if (f->cpu.arch[0])
		return x86_arch(f->cpu.arch);
	/* cpuinfo's vendor_id is x86's own field (GenuineIntel, AuthenticAMD,
	 * ...); CPUID leaves exist only there. */
	if (f->cpuid.have)
		return 1;
	if (f->cpu.have_cpuinfo && f->cpu.vendor[0])
		return strncmp(f->cpu.vendor, "Genuine", 7) == 0 || strncmp(f->cpu.vendor, "Authentic", 9) == 0 ||
		       strncmp(f->cpu.vendor, "Centaur", 7) == 0 || strncmp(f->cpu.vendor, "Hygon", 5) == 0 ||
		       strncmp(f->cpu.vendor, "  Shanghai", 10) == 0 || strncmp(f->cpu.vendor, "Cyrix", 5) == 0;
	/* The kernel log: lines only one kind of kernel prints. */
	for (int i = 0; i < f->klog.n_events && i < CD_MAX_EVENTS; i++) {
		const struct cd_event *e = &f->klog.events[i];
		switch (e->kind) {
		case CD_EV_ARM_TIMER:
		case CD_EV_ARCH_TIMER_WORKAROUND:
		case CD_EV_ARCH_TIMER_TRAP:
			return 0;
		case CD_EV_PARAVIRT_BOOT:
		case CD_EV_TSC_SYNC_HEADER:
		case CD_EV_TSC_WARP:
		case CD_EV_TSC_FREQ:
		case CD_EV_X86_32BIT:
		case CD_EV_TSC_UNSTABLE:
			return 1;
		case CD_EV_CS_SWITCHED:
		case CD_EV_CS_REGISTERED: {
			const char *a = arch_of_clocksource(e->name);
			if (a)
				return strcmp(a, "x86") == 0;
			break;
		}
		default:
			break;
		}
	}
	/* The clocksources listed, by the table's architecture. */
	const char *a = f->cs.have_current ? arch_of_clocksource(f->cs.current) : NULL;
	for (int i = 0; !a && f->cs.have_available && i < f->cs.n_available && i < CD_MAX_CLOCKSOURCES; i++)
		a = arch_of_clocksource(f->cs.available[i]);
	if (a)
		return strcmp(a, "x86") == 0;
	return -1;
}

/* systemd's own container names (/run/systemd/container, written from the
 * $container the container manager sets: systemd's detect-virt), others
 * as they are. */
static void container_from_file(struct cd_facts *f)
{
	struct cd_span c = TRIMMED(f->hv.container);
	size_t n = strspn(c.p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
	if (n < c.n)
		c.n = n;
	char word[CD_NAME_MAX];
	snprintf(word, sizeof word, "%.*s", (int)c.n, c.p);
	snprintf(f->hv.container, sizeof f->hv.container, "%s", word);
}

bool cd_platform_container_from_environ(const char *env, size_t len, char *out, size_t cap)
{
	/* NUL-separated NAME=value strings; only container= is kept, and
	 * nothing else of the environment (it may hold secrets) leaves here. */
	static const char key[] = "container=";
	size_t k = sizeof key - 1;
	for (size_t at = 0; at < len;) {
		size_t n = strnlen(env + at, len - at);
		if (n > k && memcmp(env + at, key, k) == 0) {
			snprintf(out, cap, "%.*s", (int)(n - k), env + at + k);
			return true;
		}
		at += n + 1;
	}
	return false;
}

/* A microVM has no DMI and no PCI: Firecracker gives its guest its
 * virtio devices on the kernel command line ("virtio_mmio.device=4K@
 * 0xd0000000:5", needing CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES), which no
 * firmware-booted machine needs. */
static bool microvm_cmdline(const char *cmdline)
{
	static const char word[] = "virtio_mmio.device=";
	for (const char *p = strstr(cmdline, word); p; p = strstr(p + 1, word))
		if (p == cmdline || p[-1] == ' ' || p[-1] == '\t')
			return true;
	return false;
}

void cd_platform_where(struct cd_facts *f, bool dockerenv, bool containerenv)
{
	struct cd_hypervisor *hv = &f->hv;
	container_from_file(f);
	if (!hv->container[0] && dockerenv)
		snprintf(hv->container, sizeof hv->container, "docker");
	if (!hv->container[0] && containerenv)
		snprintf(hv->container, sizeof hv->container, "podman");
	for (int i = 0; !hv->container[0] && i < f->klog.n_events && i < CD_MAX_EVENTS; i++)
		if (f->klog.events[i].kind == CD_EV_SANDBOX)
			snprintf(hv->container, sizeof hv->container, "%s", f->klog.events[i].name);
	/* WSL 1 runs no Linux kernel: its release ends "-Microsoft" (capital
	 * M, "4.4.0-19041-Microsoft"); WSL 2's is "-microsoft-standard". */
	const char *rel = f->kernel.release;
	size_t rn = strlen(rel);
	if (!hv->container[0] && rn > 10 && strcmp(rel + rn - 10, "-Microsoft") == 0)
		snprintf(hv->container, sizeof hv->container, "wsl1");

	hv->utility_vm[0] = '\0';
	/* Docker Desktop runs its engine in a LinuxKit VM, whose kernel
	 * release says so ("5.15.49-linuxkit", "6.6.12-linuxkit"); WSL 2 in a
	 * Hyper-V utility VM (hypervisor.c's wsl2_release). */
	if (strstr(rel, "linuxkit"))
		snprintf(hv->utility_vm, sizeof hv->utility_vm, "Docker Desktop's LinuxKit VM");
	else if (cd_hv_wsl2_release(rel))
		snprintf(hv->utility_vm, sizeof hv->utility_vm, "WSL 2");
	else if (f->kernel.have_cmdline && microvm_cmdline(f->kernel.cmdline))
		snprintf(hv->utility_vm, sizeof hv->utility_vm, CD_MICROVM);
}
