/* SPDX-License-Identifier: MIT */
/*
 * test_hypervisor.c: cd_hypervisor_decide on facts built by hand, one source
 * at a time and in conflict, and on the fixtures' own files; the signature
 * table and the names.
 */
#include "diagnose/rules.h"
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

/* Facts are large: one static copy, zeroed for each case. */
static struct cd_facts facts;

static struct cd_facts *blank(void)
{
	memset(&facts, 0, sizeof(facts));
	return &facts;
}

static void set_sig(struct cd_facts *f, const char *sig)
{
	f->cpuid.have = true;
	snprintf(f->cpuid.hv_signature, sizeof(f->cpuid.hv_signature), "%s", sig);
}

static void set_dmi(struct cd_facts *f, const char *vendor, const char *product)
{
	snprintf(f->hv.dmi_sys_vendor, sizeof(f->hv.dmi_sys_vendor), "%s", vendor);
	snprintf(f->hv.dmi_product_name, sizeof(f->hv.dmi_product_name), "%s", product);
}

static void set_cs(struct cd_facts *f, const char *current, const char *avail1, const char *avail2)
{
	const char *av[] = { avail1, avail2 };
	f->cs.have_current = true;
	snprintf(f->cs.current, sizeof(f->cs.current), "%s", current);
	f->cs.have_available = true;
	for (int i = 0; i < 2; i++)
		if (av[i])
			snprintf(f->cs.available[f->cs.n_available++], CD_NAME_MAX, "%s", av[i]);
}

static void add_klog(struct cd_facts *f, enum cd_event_kind kind, const char *name)
{
	struct cd_event *e = &f->klog.events[f->klog.n_events++];
	e->kind = kind;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static void set_cpuinfo(struct cd_facts *f, bool hypervisor_flag)
{
	f->cpu.have_cpuinfo = true;
	f->cpu.count = 1;
	f->cpu.flags = f->cpu.flags_all = CD_CPU_TSC | (hypervisor_flag ? CD_CPU_HYPERVISOR : 0);
}

static void parse_cpuid(struct cd_facts *f, const char *text)
{
	CHECK(cd_parse_cpuid_txt(text, strlen(text), &f->cpuid) > 0);
}

#define DECIDED(f, kind_, from_) do { \
	cd_hypervisor_decide(f); \
	CHECK_STR(cd_hv_name((f)->hv.kind), cd_hv_name(kind_)); \
	CHECK_STR((f)->hv.from, from_); \
} while (0)

static void test_names(void)
{
	static const struct {
		const char *sig;
		enum cd_hv kind;
	} sigs[] = {
		{ "KVMKVMKVM", CD_HV_KVM }, { "VMwareVMware", CD_HV_VMWARE },
		{ "VBoxVBoxVBox", CD_HV_VIRTUALBOX }, { "Microsoft Hv", CD_HV_HYPERV },
		{ "XenVMMXenVMM", CD_HV_XEN }, { "TCGTCGTCGTCG", CD_HV_QEMU_TCG },
		{ "bhyve bhyve ", CD_HV_BHYVE }, { "ACRNACRNACRN", CD_HV_ACRN },
		{ "bhyve bhyve", CD_HV_OTHER }, { "FooBarBazQux", CD_HV_OTHER },
		{ "", CD_HV_UNKNOWN }, { NULL, CD_HV_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		CHECK_INT(cd_hv_from_signature(sigs[i].sig), sigs[i].kind);

	static const char *const names[] = { "unknown", "none", "kvm", "vmware", "virtualbox", "xen",
	                                     "hyperv", "qemu-tcg", "bhyve", "acrn", "other" };
	for (int k = CD_HV_UNKNOWN; k <= CD_HV_OTHER; k++) {
		CHECK_STR(cd_hv_name((enum cd_hv)k), names[k]);
		CHECK(cd_hv_display((enum cd_hv)k)[0] != '\0');
	}
	CHECK_STR(cd_hv_name((enum cd_hv)99), "unknown");
	CHECK_STR(cd_hv_display((enum cd_hv)-1), "unknown");
	CHECK_STR(cd_hv_display(CD_HV_KVM), "KVM");
	CHECK_STR(cd_hv_display(CD_HV_HYPERV), "Hyper-V");
	CHECK_STR(cd_hv_display(CD_HV_OTHER), "a hypervisor of unknown kind");
}

static void test_single_sources(void)
{
	struct cd_facts *f;

	f = blank();
	DECIDED(f, CD_HV_UNKNOWN, "");
	CHECK_STR(f->hv.display, "unknown");

	f = blank();
	set_cpuinfo(f, false);
	DECIDED(f, CD_HV_NONE, "cpuinfo flag");
	CHECK_STR(f->hv.display, "bare metal");

	f = blank();
	set_cpuinfo(f, true);
	DECIDED(f, CD_HV_OTHER, "cpuinfo flag");
	CHECK_STR(f->hv.display, "a hypervisor of unknown kind");

	/* CPUID's signature: the kind, the signature kept and the name shown
	 * (each checked where given). */
	static const struct {
		const char *sig;
		enum cd_hv kind;
		const char *kept, *display;
	} sigs[] = {
		{ "VMwareVMware", CD_HV_VMWARE, "VMwareVMware", "VMware" },
		{ "bhyve bhyve ", CD_HV_BHYVE, "bhyve bhyve ", NULL },
		{ "FooBarBazQux", CD_HV_OTHER, NULL, "hypervisor \"FooBarBazQux\"" },
		{ " lrpepyh  vr", CD_HV_OTHER, NULL, "Parallels" },
	};
	for (size_t i = 0; i < UNIT_COUNT(sigs); i++) {
		unit_case("signature \"%s\"", sigs[i].sig);
		f = blank();
		set_sig(f, sigs[i].sig);
		DECIDED(f, sigs[i].kind, "cpuid");
		if (sigs[i].kept)
			CHECK_STR(f->hv.cpuid_signature, sigs[i].kept);
		if (sigs[i].display)
			CHECK_STR(f->hv.display, sigs[i].display);
	}
	unit_case(NULL);

	/* A signature without cpuid.have is not evidence. */
	f = blank();
	snprintf(f->cpuid.hv_signature, sizeof(f->cpuid.hv_signature), "KVMKVMKVM");
	DECIDED(f, CD_HV_UNKNOWN, "");
	CHECK_STR(f->hv.cpuid_signature, "");

	f = blank();
	snprintf(f->hv.sys_hypervisor_type, sizeof(f->hv.sys_hypervisor_type), "xen\n");
	DECIDED(f, CD_HV_XEN, "sys/hypervisor/type");
}

static void test_dmi(void)
{
	struct cd_facts *f;

	/* DMI, alone or with a clocksource (current and two listed) and
	 * cpuinfo's hypervisor flag (0: not read, 1: clear, 2: set); decided
	 * from DMI unless from says otherwise, the name shown checked where
	 * given. */
	static const struct {
		const char *vendor, *product;
		enum cd_hv kind;
		const char *from, *cs[3];
		int flag;
		const char *display;
	} dmi[] = {
		{ "innotek GmbH", "VirtualBox", .kind = CD_HV_VIRTUALBOX },
		{ "Oracle Corporation", "VirtualBox", .kind = CD_HV_VIRTUALBOX },
		{ "VMware, Inc.", "VMware Virtual Platform", .kind = CD_HV_VMWARE },
		{ "VMware, Inc.", "VMware20,1", .kind = CD_HV_VMWARE },
		{ "Microsoft Corporation", "Virtual Machine", .kind = CD_HV_HYPERV },
		{ "Xen", "HVM domU", .kind = CD_HV_XEN },
		{ "Amazon EC2", "m5.large", .kind = CD_HV_KVM },
		{ "Google", "Google Compute Engine", .kind = CD_HV_KVM },
		{ "Red Hat", "KVM", .kind = CD_HV_KVM },
		/* A Surface laptop is Microsoft hardware, not Hyper-V. */
		{ "Microsoft Corporation", "Surface Pro 7", CD_HV_NONE, .from = "cpuinfo flag", .flag = 1 },
		/* A hardware maker's firmware, and no sign of a hypervisor:
		 * bare metal; with the flag set, a hypervisor all the same. */
		{ "Dell Inc.", "PowerEdge R640", .kind = CD_HV_NONE },
		{ "LENOVO", "20XW0055GE", .kind = CD_HV_NONE },
		{ "Dell Inc.", "PowerEdge R640", CD_HV_OTHER, .from = "cpuinfo flag", .flag = 2 },
		{ "Amazon EC2", "c5.metal", .kind = CD_HV_NONE },
		{ "Amazon EC2", "m7i.metal-24xl", .kind = CD_HV_NONE },
		/* QEMU's DMI is KVM only with kvm-clock; else just "QEMU". */
		{ "QEMU", "Standard PC (Q35 + ICH9, 2009)", CD_HV_KVM, .cs = { "tsc", "kvm-clock", "tsc" } },
		{ "QEMU", "Standard PC (i440FX + PIIX, 1996)", CD_HV_OTHER, .cs = { "hpet", "hpet", "acpi_pm" },
		  .flag = 2, .display = "QEMU" },
		/* OpenStack's libvirt guests name themselves in the product
		 * alone: read like QEMU's DMI, KVM with kvm-clock. */
		{ "", "OpenStack Nova", CD_HV_OTHER, .cs = { "hpet", "hpet", "acpi_pm" } },
		{ "OpenStack Foundation", "OpenStack Compute", CD_HV_KVM, .cs = { "kvm-clock", "kvm-clock", "acpi_pm" },
		  .display = "KVM" },
		{ "OpenStack Foundation", "Nova Scheduler", CD_HV_UNKNOWN, .from = "" },
	};
	for (size_t i = 0; i < UNIT_COUNT(dmi); i++) {
		unit_case("%s %s", dmi[i].vendor, dmi[i].product);
		f = blank();
		set_dmi(f, dmi[i].vendor, dmi[i].product);
		if (dmi[i].cs[0])
			set_cs(f, dmi[i].cs[0], dmi[i].cs[1], dmi[i].cs[2]);
		if (dmi[i].flag)
			set_cpuinfo(f, dmi[i].flag == 2);
		DECIDED(f, dmi[i].kind, dmi[i].from ? dmi[i].from : "dmi");
		if (dmi[i].display)
			CHECK_STR(f->hv.display, dmi[i].display);
	}
	unit_case(NULL);
}

/* The kernel log, the clocksources, CPUID's leaf 1. */
static void test_other_sources(void)
{
	struct cd_facts *f;

	/* The kernel log. */
	static const struct {
		const char *name;
		enum cd_hv kind;
	} klog[] = {
		{ "KVM", CD_HV_KVM }, { "VMware", CD_HV_VMWARE }, { "Xen HVM", CD_HV_XEN },
		{ "Xen PV", CD_HV_XEN }, { "Microsoft Hyper-V", CD_HV_HYPERV }, { "ACRN", CD_HV_ACRN },
		{ "Bhyve", CD_HV_BHYVE }, { "Jailhouse", CD_HV_OTHER },
	};
	for (size_t i = 0; i < sizeof(klog) / sizeof(klog[0]); i++) {
		f = blank();
		add_klog(f, CD_EV_CS_SWITCHED, "tsc");
		add_klog(f, CD_EV_HYPERVISOR, klog[i].name);
		add_klog(f, CD_EV_HYPERVISOR, "later one");
		DECIDED(f, klog[i].kind, "kernel log");
		CHECK_STR(f->hv.klog_detected, klog[i].name);
	}
	CHECK_STR(facts.hv.display, "Jailhouse");

	/* Paravirtual clocksources. */
	static const struct {
		const char *current;   /* listed, with other */
		const char *other;
		enum cd_hv kind;
	} pv[] = {
		{ "kvm-clock", "tsc", CD_HV_KVM },
		{ "tsc", "xen", CD_HV_XEN },
		{ "hyperv_clocksource_tsc_page", "acpi_pm", CD_HV_HYPERV },
	};
	for (size_t i = 0; i < UNIT_COUNT(pv); i++) {
		f = blank();
		set_cs(f, pv[i].current, pv[i].current, pv[i].other);
		DECIDED(f, pv[i].kind, "clocksource");
	}
	f = blank();
	set_cs(f, "tsc", "tsc", "hpet");
	set_cpuinfo(f, false);
	DECIDED(f, CD_HV_NONE, "cpuinfo flag");

	/* CPUID leaf 1 alone: the bit, or bare metal. */
	f = blank();
	parse_cpuid(f, "   0x00000000 0x00: eax=0x00000001 ebx=0x0 ecx=0x0 edx=0x0\n"
	                   "   0x00000001 0x00: eax=0x0 ebx=0x0 ecx=0x80000000 edx=0x0\n");
	DECIDED(f, CD_HV_OTHER, "cpuid");
	f = blank();
	parse_cpuid(f, "   0x00000000 0x00: eax=0x00000001 ebx=0x0 ecx=0x0 edx=0x0\n"
	                   "   0x00000001 0x00: eax=0x0 ebx=0x0 ecx=0x00000000 edx=0x0\n");
	DECIDED(f, CD_HV_NONE, "cpuid");
}

static void test_conflicts(void)
{
	struct cd_facts *f;

	/* DMI says QEMU, CPUID says KVM: KVM, from CPUID. */
	f = blank();
	set_dmi(f, "QEMU", "Standard PC (Q35 + ICH9, 2009)");
	set_sig(f, "KVMKVMKVM");
	set_cs(f, "tsc", "tsc", "hpet");
	DECIDED(f, CD_HV_KVM, "cpuid");

	/* DMI says QEMU, CPUID says TCG. */
	f = blank();
	set_dmi(f, "QEMU", "Standard PC (i440FX + PIIX, 1996)");
	set_sig(f, "TCGTCGTCGTCG");
	set_cs(f, "hpet", "hpet", "acpi_pm");
	DECIDED(f, CD_HV_QEMU_TCG, "cpuid");

	/* QEMU DMI without kvm-clock, but the kernel saw KVM. */
	f = blank();
	set_dmi(f, "QEMU", "Standard PC (Q35 + ICH9, 2009)");
	set_cs(f, "tsc", "tsc", "hpet");
	add_klog(f, CD_EV_HYPERVISOR, "KVM");
	DECIDED(f, CD_HV_KVM, "kernel log");

	/* Amazon's DMI on a Xen instance. */
	f = blank();
	set_dmi(f, "Amazon EC2", "t2.micro");
	snprintf(f->hv.sys_hypervisor_type, sizeof(f->hv.sys_hypervisor_type), "xen");
	DECIDED(f, CD_HV_XEN, "sys/hypervisor/type");
	f = blank();
	set_dmi(f, "Amazon EC2", "t2.micro");
	set_cs(f, "xen", "xen", "tsc");
	DECIDED(f, CD_HV_XEN, "dmi");

	/* Old VirtualBox: no hypervisor flag, but DMI knows. */
	f = blank();
	set_cpuinfo(f, false);
	set_dmi(f, "innotek GmbH", "VirtualBox");
	DECIDED(f, CD_HV_VIRTUALBOX, "dmi");

	/* CPUID beats the kernel log and the clocksource. */
	f = blank();
	set_sig(f, "Microsoft Hv");
	add_klog(f, CD_EV_HYPERVISOR, "KVM");
	set_cs(f, "kvm-clock", "kvm-clock", NULL);
	DECIDED(f, CD_HV_HYPERV, "cpuid");
	CHECK_STR(f->hv.klog_detected, "KVM");

	/* An unlisted signature waits for a source that names it. */
	f = blank();
	set_sig(f, "FooBarBazQux");
	set_dmi(f, "VMware, Inc.", "VMware7,1");
	DECIDED(f, CD_HV_VMWARE, "dmi");

	/* Xen behind its Hyper-V interface, through the real derive step. */
	f = blank();
	parse_cpuid(f, "   0x00000000 0x00: eax=0x0000000d ebx=0x0 ecx=0x0 edx=0x0\n"
	                   "   0x00000001 0x00: eax=0x0 ebx=0x0 ecx=0x80000000 edx=0x0\n"
	                   "   0x40000000 0x00: eax=0x40000005 ebx=0x7263694d ecx=0x666f736f edx=0x76482074\n"
	                   "   0x40000100 0x00: eax=0x40000105 ebx=0x566e6558 ecx=0x65584d4d edx=0x4d4d566e\n");
	DECIDED(f, CD_HV_XEN, "cpuid");
	CHECK_STR(f->hv.cpuid_signature, "XenVMMXenVMM");

	/* Strings that fill their arrays without a terminator. */
	f = blank();
	memset(f->hv.dmi_sys_vendor, 'A', sizeof(f->hv.dmi_sys_vendor));
	memset(f->hv.sys_hypervisor_type, 'x', sizeof(f->hv.sys_hypervisor_type));
	memset(f->cs.current, 'k', sizeof(f->cs.current));
	f->cs.have_current = true;
	f->klog.n_events = 1000; /* more than the array: clamped */
	f->klog.events[CD_MAX_EVENTS - 1].kind = CD_EV_HYPERVISOR;
	memset(f->klog.events[CD_MAX_EVENTS - 1].name, 'Z', CD_NAME_MAX);
	DECIDED(f, CD_HV_OTHER, "kernel log");
	CHECK_INT(strlen(f->hv.klog_detected), CD_NAME_MAX - 1);
}

static void add_klog_line(struct cd_facts *f, enum cd_event_kind kind, const char *line)
{
	struct cd_event *e = &f->klog.events[f->klog.n_events++];
	e->kind = kind;
	snprintf(e->line, sizeof(e->line), "%s", line);
}

/* A hypervisor that presents another's paravirtual interface: DMI, written
 * by its own firmware, names the product; the interface is kept. */
static void test_interfaces(void)
{
	struct cd_facts *f;

	/* VirtualBox with its KVM provider: CPUID and the kernel say KVM. */
	f = blank();
	set_sig(f, "KVMKVMKVM");
	add_klog(f, CD_EV_HYPERVISOR, "KVM");
	set_dmi(f, "innotek GmbH", "VirtualBox");
	set_cs(f, "kvm-clock", "kvm-clock", "tsc");
	DECIDED(f, CD_HV_VIRTUALBOX, "dmi");
	CHECK_STR(cd_hv_name(f->hv.interface), "kvm");
	CHECK_STR(f->hv.display, "VirtualBox (KVM interface)");

	/* Parallels presents KVM's leaf as well: DMI names it, not KVM. */
	f = blank();
	set_sig(f, "KVMKVMKVM");
	set_dmi(f, "Parallels Software International Inc.", "Parallels Virtual Platform");
	DECIDED(f, CD_HV_OTHER, "dmi");
	CHECK_STR(cd_hv_name(f->hv.interface), "kvm");
	CHECK_STR(f->hv.display, "Parallels (KVM interface)");
	f = blank();
	set_dmi(f, "Parallels Software International Inc.", "Parallels Virtual Platform");
	DECIDED(f, CD_HV_OTHER, "dmi");
	CHECK_STR(f->hv.display, "Parallels");
	CHECK_STR(cd_hv_name(f->hv.interface), "unknown");

	/* The same from a log alone: no sysfs, no CPUID, the kernel's
	 * "Hypervisor detected" and the log's DMI line; the interface, and the
	 * DMI line kept, checked where given. */
	static const struct {
		const char *detected, *line;
		enum cd_hv kind;
		const char *from, *interface, *kept;
	} logs[] = {
		{ "KVM", "DMI: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006", CD_HV_VIRTUALBOX, "dmi",
		  "kvm", "innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006" },
		/* ... and from a backtrace's "Hardware name:" */
		{ "Microsoft Hyper-V",
		  "CPU: 0 PID: 1 Comm: swapper Hardware name: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006",
		  CD_HV_VIRTUALBOX, "dmi", "hyperv", NULL },
		/* QEMU's DMI line with the kernel's KVM is KVM, from the log, with
		 * no interface */
		{ "KVM", "DMI: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014",
		  CD_HV_KVM, "kernel log", "unknown", NULL },
		/* A vendor the table does not know decides nothing. */
		{ "KVM", "DMI: Dell Inc. PowerEdge R640/0H28RR, BIOS 2.10.2 02/24/2021", CD_HV_KVM, "kernel log",
		  NULL, NULL },
	};
	for (size_t i = 0; i < UNIT_COUNT(logs); i++) {
		unit_case("%s", logs[i].line);
		f = blank();
		add_klog(f, CD_EV_HYPERVISOR, logs[i].detected);
		add_klog_line(f, CD_EV_DMI, logs[i].line);
		DECIDED(f, logs[i].kind, logs[i].from);
		if (logs[i].kept)
			CHECK_STR(f->hv.klog_dmi, logs[i].kept);
		if (logs[i].interface)
			CHECK_STR(cd_hv_name(f->hv.interface), logs[i].interface);
	}
	unit_case(NULL);

	/* QEMU's firmware with Hyper-V's interface: KVM with enlightenments. */
	f = blank();
	set_sig(f, "Microsoft Hv");
	set_dmi(f, "QEMU", "Standard PC (Q35 + ICH9, 2009)");
	DECIDED(f, CD_HV_KVM, "dmi");
	CHECK_STR(cd_hv_name(f->hv.interface), "hyperv");

	/* Sources that agree keep no interface. */
	f = blank();
	set_sig(f, "VBoxVBoxVBox");
	set_dmi(f, "innotek GmbH", "VirtualBox");
	DECIDED(f, CD_HV_VIRTUALBOX, "cpuid");
	CHECK_INT(f->hv.interface, CD_HV_UNKNOWN);
	/* sysfs DMI wins over the log's line */
	f = blank();
	set_dmi(f, "VMware, Inc.", "VMware7,1");
	add_klog_line(f, CD_EV_DMI, "DMI: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006");
	DECIDED(f, CD_HV_VMWARE, "dmi");
}

/* The fixture's file dir/rel up to the first of stop (NUL-terminated,
 * malloc'd), or NULL when it has none. */
static char *fixture_text(const char *dir, const char *rel, const char *stop, size_t *len)
{
	char *t = unit_read_fixture(dir, rel, len);
	if (t && stop)
		t[strcspn(t, stop)] = '\0';
	return t;
}

/* The fixtures, as cd_probe would fill the facts from them. */
static void fixture(const char *dir, enum cd_hv want, const char *from)
{
	static const char cs[] = "sys/devices/system/clocksource/clocksource0/";
	char rel[256];
	size_t len;
	char *t;
	struct cd_facts *f = blank();

	if ((t = fixture_text(dir, "proc/cpuinfo", NULL, &len)))
		cd_parse_cpuinfo(t, len, &f->cpu);
	free(t);
	if ((t = fixture_text(dir, "cpuid.txt", NULL, &len)))
		cd_parse_cpuid_txt(t, len, &f->cpuid);
	free(t);
	if ((t = fixture_text(dir, "sys/class/dmi/id/sys_vendor", "\n", &len)))
		snprintf(f->hv.dmi_sys_vendor, CD_NAME_MAX, "%s", t);
	free(t);
	if ((t = fixture_text(dir, "sys/class/dmi/id/product_name", "\n", &len)))
		snprintf(f->hv.dmi_product_name, CD_NAME_MAX, "%s", t);
	free(t);
	snprintf(rel, sizeof(rel), "%scurrent_clocksource", cs);
	if ((t = fixture_text(dir, rel, " \n", &len))) {
		f->cs.have_current = true;
		snprintf(f->cs.current, CD_NAME_MAX, "%s", t);
	}
	free(t);
	snprintf(rel, sizeof(rel), "%savailable_clocksource", cs);
	if ((t = fixture_text(dir, rel, NULL, &len))) {
		f->cs.have_available = true;
		for (char *p = strtok(t, " \n"); p && f->cs.n_available < CD_MAX_CLOCKSOURCES; p = strtok(NULL, " \n"))
			snprintf(f->cs.available[f->cs.n_available++], CD_NAME_MAX, "%s", p);
	}
	free(t);
	CHECK(f->cs.have_current);
	DECIDED(f, want, from);
}

static void test_fixtures(void)
{
	fixture("qemu-tcg-smp2-hpet", CD_HV_QEMU_TCG, "cpuid");
	fixture("qemu-tcg-smp2-acpi_pm-cmdline", CD_HV_QEMU_TCG, "cpuid");
	fixture("qemu-tcg-smp1-tsc", CD_HV_QEMU_TCG, "cpuid");
	fixture("qemu-tcg-smp2-tsc-reliable", CD_HV_QEMU_TCG, "cpuid");
	CHECK_STR(facts.hv.display, "QEMU TCG (emulation)");
	fixture("virtualbox-debian7-smp8-acpi_pm-3.2", CD_HV_VIRTUALBOX, "dmi");
	fixture("virtualbox-debian7-smp8-tsc-reliable-3.11", CD_HV_VIRTUALBOX, "dmi");
	fixture("vmware-tsc-hypervisor-reliable", CD_HV_VMWARE, "dmi");
	fixture("kvm-rhel6-kvm-clock-old-watchdog", CD_HV_KVM, "clocksource");
	fixture("kvm-kvm-clock-sysfs-only", CD_HV_KVM, "clocksource");
	fixture("server-watchdog-tsc-to-acpi_pm", CD_HV_UNKNOWN, "");
}

/* Signals found in no other hypervisor's guest: the Hyper-V host's build in
 * the kernel log, WSL2's own kernel release.  Look-alikes stay quiet. */
static void test_hyperv_signals(void)
{
	static const char *const builds[] = {
		"[    0.000000] Hyper-V Host Build:20348-10.0-1-0.1075\n",
		"[    0.000000] Hyper-V Host Build:14393-10.0-0-0.299; Vmbus version:4.0\n",
		"[    0.000000] Hyper-V: Host Build 10.0.22621.1-0-0\n",
	};
	struct cd_facts *f;
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
		f = blank();
		cd_klog_parse(builds[i], strlen(builds[i]), &f->klog);
		DECIDED(f, CD_HV_HYPERV, "kernel log");
	}
	f = blank();
	cd_parse_kernel_release("4.19.104-microsoft-standard", &f->kernel);
	snprintf(f->kernel.release, sizeof f->kernel.release, "4.19.104-microsoft-standard");
	DECIDED(f, CD_HV_HYPERV, "kernel release");
	snprintf(f->kernel.release, sizeof f->kernel.release, "5.15.90.1-microsoft-standard-WSL2");
	DECIDED(f, CD_HV_HYPERV, "kernel release");
	/* DMI outranks the release: a WSL2 kernel booted elsewhere is elsewhere. */
	set_dmi(f, "QEMU", "Standard PC (i440FX + PIIX, 1996)");
	set_cs(f, "kvm-clock", "kvm-clock", "tsc");
	DECIDED(f, CD_HV_KVM, "dmi");
	/* WSL 1 has no Linux kernel; Azure-tuned kernels run anywhere. */
	static const char *const not_wsl2[] = { "4.4.0-19041-Microsoft", "5.15.0-1034-azure", "6.1.0-13-cloud-amd64" };
	for (size_t i = 0; i < sizeof not_wsl2 / sizeof not_wsl2[0]; i++) {
		f = blank();
		snprintf(f->kernel.release, sizeof f->kernel.release, "%s", not_wsl2[i]);
		DECIDED(f, CD_HV_UNKNOWN, "");
	}
	/* A line that only mentions Hyper-V names nothing. */
	f = blank();
	const char *other = "[    1.000000] hv_vmbus: registering driver hyperv_fb\n";
	cd_klog_parse(other, strlen(other), &f->klog);
	DECIDED(f, CD_HV_UNKNOWN, "");
}

static void set_release(struct cd_facts *f, const char *release)
{
	f->kernel.have_release = true;
	snprintf(f->kernel.release, sizeof(f->kernel.release), "%s", release);
}

static void parse_log(struct cd_facts *f, const char *text)
{
	cd_klog_parse(text, strlen(text), &f->klog);
}

/* The signs that name no hypervisor (platform.c): bare metal said in so
 * many words, only when nothing saw a hypervisor; the QEMU virt board; a
 * desktop product's VM; containers; the architecture. */
static void test_platform_signs(void)
{
	struct cd_facts *f;

	/* Each log alone: what it decides, from where, and the name shown
	 * where given. */
	static const struct {
		const char *log;
		enum cd_hv kind;
		const char *from, *display;
	} logs[] = {
		/* the paravirt banner */
		{ "Booting paravirtualized kernel on bare hardware", CD_HV_NONE, "kernel log", NULL },
		{ "Booting paravirtualized kernel on KVM", CD_HV_KVM, "kernel log", NULL },
		{ "Booting paravirtualized kernel on Xen HVM", CD_HV_XEN, "kernel log", NULL },
		/* "bare hardware" in a guest whose other lines name the hypervisor */
		{ "Hypervisor detected: Microsoft Hyper-V\n[    0.000000] Booting paravirtualized kernel on bare hardware",
		  CD_HV_HYPERV, "kernel log", NULL },
		{ "DMI: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
		  "[    0.000000] Booting paravirtualized kernel on bare hardware", CD_HV_OTHER, "dmi", "QEMU" },
		/* the log's DMI line, a hardware maker's; a maker's name inside
		 * another word is none */
		{ "DMI: LENOVO 2007F2G/2007F2G, BIOS 79ETE7WW (2.27 ) 03/21/2011", CD_HV_NONE, "dmi", NULL },
		{ "DMI: To Be Filled By O.E.M. To Be Filled By O.E.M./X570 Taichi, BIOS P4.60 05/18/2023",
		  CD_HV_NONE, "dmi", NULL },
		{ "DMI: HPCloud Virtual/Box, BIOS 1.0", CD_HV_UNKNOWN, "", NULL },
		{ "Hypervisor detected: KVM\n[    0.000000] DMI: LENOVO 20XW/20XW, BIOS 1", CD_HV_KVM, "kernel log", NULL },
		/* the device tree */
		{ "OF: fdt: Machine model: linux,dummy-virt", CD_HV_OTHER, "device tree", "QEMU (virt board)" },
		{ "Machine model: Raspberry Pi 4 Model B Rev 1.4", CD_HV_NONE, "device tree", NULL },
		{ "Machine model: Some Unknown Board", CD_HV_UNKNOWN, "", NULL },
	};
	for (size_t i = 0; i < UNIT_COUNT(logs); i++) {
		char text[512];
		snprintf(text, sizeof text, "[    0.000000] %s\n", logs[i].log);
		unit_case("%s", logs[i].log);
		f = blank();
		parse_log(f, text);
		DECIDED(f, logs[i].kind, logs[i].from);
		if (logs[i].display)
			CHECK_STR(f->hv.display, logs[i].display);
	}
	f = blank();
	parse_log(f, "[    0.000000] Booting paravirtualized kernel on bare hardware\n");
	CHECK_STR(f->hv.klog_paravirt, "");
	set_cpuinfo(f, true);
	DECIDED(f, CD_HV_OTHER, "cpuinfo flag");
	CHECK_STR(f->hv.klog_paravirt, "bare hardware");
	f = blank();
	parse_log(f, "[    0.000000] DMI: LENOVO 2007F2G/2007F2G, BIOS 79ETE7WW (2.27 ) 03/21/2011\n");
	cd_hypervisor_decide(f);
	CHECK_STR(cd_platform_hardware_maker(f), "LENOVO");
	f = blank();
	snprintf(f->hv.machine_model, sizeof(f->hv.machine_model), "Hardkernel ODROID-N2");
	DECIDED(f, CD_HV_NONE, "device tree");

	/* a clocksource only real hardware has */
	f = blank();
	set_cs(f, "sgi_rtc", "sgi_rtc", "hpet");
	DECIDED(f, CD_HV_NONE, "clocksource");
	f = blank();
	set_cs(f, "hpet", "hpet", "acpi_pm");
	DECIDED(f, CD_HV_UNKNOWN, "");

	/* a desktop product's VM, and containers */
	f = blank();
	set_release(f, "6.6.12-linuxkit");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.utility_vm, "Docker Desktop's LinuxKit VM");
	DECIDED(f, CD_HV_OTHER, "kernel release");
	CHECK_STR(f->hv.display, "Docker Desktop's LinuxKit VM");
	f = blank();
	set_release(f, "5.15.153.1-microsoft-standard-WSL2");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.utility_vm, "WSL 2");
	DECIDED(f, CD_HV_HYPERV, "kernel release");
	f = blank();
	set_release(f, "4.4.0-19041-Microsoft");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.container, "wsl1");
	f = blank();
	cd_platform_where(f, true, false);
	CHECK_STR(f->hv.container, "docker");
	f = blank();
	cd_platform_where(f, false, true);
	CHECK_STR(f->hv.container, "podman");
	f = blank();
	snprintf(f->hv.container, sizeof(f->hv.container), "lxc\n");
	cd_platform_where(f, true, false);
	CHECK_STR(f->hv.container, "lxc");
	/* a hostile file keeps its first word only */
	f = blank();
	snprintf(f->hv.container, sizeof(f->hv.container), "docker\033[31m; rm -rf /");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.container, "docker");
	f = blank();
	parse_log(f, "[    0.000000] Starting gVisor...\n");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.container, "gvisor");
	f = blank();
	set_release(f, "6.1.0-18-amd64");
	cd_platform_where(f, false, false);
	CHECK_STR(f->hv.container, "");
	CHECK_STR(f->hv.utility_vm, "");

	/* the architecture */
	f = blank();
	CHECK_INT(cd_platform_is_x86(f), -1);
	parse_log(f, "    arch_timer: Unable to find a suitable frame in timer @ 0x000000002a810000\n");
	CHECK_INT(cd_platform_is_x86(f), 0);
	f = blank();
	parse_log(f, "[    0.000000] Booting paravirtualized kernel on bare hardware\n");
	CHECK_INT(cd_platform_is_x86(f), 1);
	f = blank();
	set_cs(f, "arch_sys_counter", "arch_sys_counter", NULL);
	CHECK_INT(cd_platform_is_x86(f), 0);
	f = blank();
	set_cs(f, "jiffies", "jiffies", NULL);
	CHECK_INT(cd_platform_is_x86(f), -1);
	f = blank();
	snprintf(f->cpu.arch, sizeof(f->cpu.arch), "aarch64");
	CHECK_INT(cd_platform_is_x86(f), 0);
	snprintf(f->cpu.arch, sizeof(f->cpu.arch), "i686");
	CHECK_INT(cd_platform_is_x86(f), 1);
}

/* init's environment names the container; nothing else of it is kept.
 * The cloud table: each provider by its DMI, Azure only with its tag. */
static void test_where_and_cloud(void)
{
	char out[CD_NAME_MAX];
	static const char lxc[] = "PATH=/bin\0container=lxc\0HOME=/";
	CHECK(cd_platform_container_from_environ(lxc, sizeof lxc - 1, out, sizeof out));
	CHECK(strcmp(out, "lxc") == 0);
	static const char none[] = "PATH=/bin\0Xcontainer=lxc\0";
	CHECK(!cd_platform_container_from_environ(none, sizeof none - 1, out, sizeof out));
	/* a block cut without its last NUL: the value ends at the cut */
	static const char cut[] = { 'c', 'o', 'n', 't', 'a', 'i', 'n', 'e', 'r', '=', 'l', 'x', 'c' };
	CHECK(cd_platform_container_from_environ(cut, sizeof cut, out, sizeof out) && strcmp(out, "lxc") == 0);
	CHECK(!cd_platform_container_from_environ("", 0, out, sizeof out));

	struct cd_facts *f = blank();
	CHECK(cd_cloud_advice(f) == NULL);
	set_dmi(f, "Google", "Google Compute Engine");
	CHECK(cd_cloud_advice(f) && strstr(cd_cloud_advice(f), "Configure NTP on a VM"));
	set_dmi(f, "Googleplex Inc.", "X");
	CHECK(cd_cloud_advice(f) == NULL);
	set_dmi(f, "Amazon EC2", "m5.large");
	CHECK(cd_cloud_advice(f) && strstr(cd_cloud_advice(f), "Nitro"));
	set_dmi(f, "Microsoft Corporation", "Virtual Machine");
	CHECK(cd_cloud_advice(f) == NULL);
	snprintf(f->hv.dmi_chassis_asset_tag, CD_NAME_MAX, "7783-7084-3265-9085-8269-3286-77");
	CHECK(cd_cloud_advice(f) && strstr(cd_cloud_advice(f), "Time sync for Linux VMs in Azure"));
	/* the log's DMI line when sysfs has none */
	f = blank();
	snprintf(f->hv.klog_dmi, sizeof f->hv.klog_dmi, "Google Google Compute Engine/Google Compute Engine");
	CHECK(cd_cloud_advice(f) && strstr(cd_cloud_advice(f), "Compute Engine"));
}

int main(void)
{
	test_names();
	test_single_sources();
	test_dmi();
	test_other_sources();
	test_conflicts();
	test_interfaces();
	test_fixtures();
	test_hyperv_signals();
	test_platform_signs();
	test_where_and_cloud();
	return unit_done("hypervisor");
}
