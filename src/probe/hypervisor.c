/* SPDX-License-Identifier: MIT */
/*
 * hypervisor.c: which hypervisor, if any, this machine runs under.
 *
 * The guest's clocksource, and so the fix, depends on the hypervisor, and
 * several sources can tell it, none of them always present: CPUID (absent in
 * most snapshots), /sys/hypervisor/type (Xen only), DMI strings (absent in
 * containers, and ambiguous for QEMU, which both KVM and pure emulation
 * use), the kernel's "Hypervisor detected:" line (gone once the ring buffer
 * wraps), a paravirtual clocksource, and the cpuinfo "hypervisor" flag, which
 * says only that there is one.  They are asked from the most trusted down;
 * the first that names a hypervisor decides, and f->hv.from says which
 * (the kernel release names one only for WSL2's own kernel).  An
 * answer that only says "some hypervisor" (the flag, QEMU's DMI strings, an
 * unlisted CPUID signature) waits until every naming source has been heard.
 * Bare metal is concluded only from positive evidence: CPUID leaf 1 or a
 * cpuinfo that lacks the hypervisor flag, else, when no source saw a
 * hypervisor, the signs platform.c reads (the paravirt banner's "bare
 * hardware", a hardware maker's DMI, a board's device tree, a clocksource
 * only real hardware has).
 */
#include "probe/probe.h"
#include "probe/span.h"
#include "util/table.h"
#include "util/printable.h"

#include <stdio.h>
#include <string.h>

static const struct {
	enum cd_hv kind;
	const char *name, *display;
} kinds[] = {
	{ CD_HV_UNKNOWN, "unknown", "unknown" },
	{ CD_HV_NONE, "none", "bare metal" },
	{ CD_HV_KVM, "kvm", "KVM" },
	{ CD_HV_VMWARE, "vmware", "VMware" },
	{ CD_HV_VIRTUALBOX, "virtualbox", "VirtualBox" },
	{ CD_HV_XEN, "xen", "Xen" },
	{ CD_HV_HYPERV, "hyperv", "Hyper-V" },
	{ CD_HV_QEMU_TCG, "qemu-tcg", "QEMU TCG (emulation)" },
	{ CD_HV_BHYVE, "bhyve", "bhyve" },
	{ CD_HV_ACRN, "acrn", "ACRN" },
	{ CD_HV_OTHER, "other", "a hypervisor of unknown kind" },
};

/* CPUID 0x40000000 EBX, ECX, EDX, trailing NULs dropped.  The last few are
 * not in enum cd_hv but are worth a name for people. */
static const struct {
	const char *sig;
	enum cd_hv kind;
	const char *display; /* NULL: cd_hv_display(kind) */
} signatures[] = {
	{ "KVMKVMKVM", CD_HV_KVM, NULL },
	{ "Linux KVM Hv", CD_HV_KVM, NULL },   /* KVM's own Hyper-V interface */
	{ "VMwareVMware", CD_HV_VMWARE, NULL },
	{ "VBoxVBoxVBox", CD_HV_VIRTUALBOX, NULL },
	{ "Microsoft Hv", CD_HV_HYPERV, NULL },
	{ "XenVMMXenVMM", CD_HV_XEN, NULL },
	{ "TCGTCGTCGTCG", CD_HV_QEMU_TCG, NULL },
	{ "bhyve bhyve ", CD_HV_BHYVE, NULL },
	{ "ACRNACRNACRN", CD_HV_ACRN, NULL },
	{ " lrpepyh  vr", CD_HV_OTHER, "Parallels" },
	{ "Jailhouse", CD_HV_OTHER, "Jailhouse" },
	{ "QNXQVMBSQG", CD_HV_OTHER, "QNX hypervisor" },
};

/* The strings in struct cd_facts come from files and other parsers: read
 * them within their arrays, whether terminated or not, and ignore the
 * surrounding whitespace a sysfs file may keep. */
static struct cd_span field(const char *s, size_t cap)
{
	struct cd_span f = { s, strnlen(s, cap) };
	while (f.n > 0 && (f.p[0] == ' ' || f.p[0] == '\t'))
		f.p++, f.n--;
	while (f.n > 0 && (f.p[f.n - 1] == ' ' || f.p[f.n - 1] == '\t' ||
	                   f.p[f.n - 1] == '\n' || f.p[f.n - 1] == '\r'))
		f.n--;
	return f;
}

#define FIELD(arr) field((arr), sizeof(arr))

static void copy_span(char *dst, size_t cap, struct cd_span s)
{
	cd_printable_copy(dst, cap, s.p, s.n);
}

enum cd_hv cd_hv_from_signature(const char *sig)
{
	if (!sig || !sig[0])
		return CD_HV_UNKNOWN;
	for (size_t i = 0; i < CD_ARRAY_LEN(signatures); i++)
		if (strcmp(sig, signatures[i].sig) == 0)
			return signatures[i].kind;
	return CD_HV_OTHER;
}

const char *cd_hv_name(enum cd_hv kind)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(kinds); i++)
		if (kinds[i].kind == kind)
			return kinds[i].name;
	return "unknown";
}

const char *cd_hv_display(enum cd_hv kind)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(kinds); i++)
		if (kinds[i].kind == kind)
			return kinds[i].display;
	return "unknown";
}

/* The paravirtual clocksources exist only under their hypervisor. */
static const struct cd_word clocksource_kinds[] = {
	{ "kvm-clock", false, CD_HV_KVM },
	{ "xen", false, CD_HV_XEN },
	{ "hyperv_clocksource", true, CD_HV_HYPERV },
};

static enum cd_hv kind_of_clocksource(struct cd_span name)
{
	return (enum cd_hv)cd_span_lookup(name, clocksource_kinds, CD_ARRAY_LEN(clocksource_kinds), CD_HV_UNKNOWN);
}

static enum cd_hv clocksource_kind(const struct cd_clocksource *cs)
{
	enum cd_hv k = CD_HV_UNKNOWN;
	int n = cs->n_available < 0 ? 0 : cs->n_available;
	if (n > CD_MAX_CLOCKSOURCES)
		n = CD_MAX_CLOCKSOURCES;
	if (cs->have_current)
		k = kind_of_clocksource(FIELD(cs->current));
	for (int i = 0; cs->have_available && i < n && k == CD_HV_UNKNOWN; i++)
		k = kind_of_clocksource(FIELD(cs->available[i]));
	return k;
}

/* The log's DMI line, "VENDOR PRODUCT/BOARD, BIOS ...", split where a
 * known vendor ends; vendor empty when none is known. */
static void dmi_from_line(const char *line, struct cd_span *vendor, struct cd_span *product)
{
	static const char *const vendors[] = {
		"innotek GmbH", "VMware, Inc.", "Microsoft Corporation", "Xen", "Amazon EC2",
		"Google", "QEMU", "Red Hat", "Parallels Software International Inc.", "Parallels International GmbH.",
	};
	struct cd_span s = field(line, CD_LINE_MAX / 2);
	*vendor = (struct cd_span){ s.p, 0 };
	*product = (struct cd_span){ s.p, 0 };
	for (size_t i = 0; i < CD_ARRAY_LEN(vendors); i++) {
		size_t n = strlen(vendors[i]);
		if (s.n > n && memcmp(s.p, vendors[i], n) == 0 && s.p[n] == ' ') {
			*vendor = (struct cd_span){ s.p, n };
			product->p = s.p + n + 1;
			product->n = strcspn(product->p, "/,");
			if (product->n > s.n - n - 1)
				product->n = s.n - n - 1;
			return;
		}
	}
}

/* DMI as firmware writes it (sysfs, else the kernel log's DMI line).
 * QEMU's "QEMU" is KVM or pure emulation (TCG): only kvm-clock tells them
 * apart here, so without it *qemu is set and the answer is left to the
 * sources below.  A product with no kind of its own (Parallels) is
 * CD_HV_OTHER with its name in *other. */
static enum cd_hv dmi_kind(const struct cd_facts *f, bool *qemu, const char **other)
{
	struct cd_span vendor = FIELD(f->hv.dmi_sys_vendor), product = FIELD(f->hv.dmi_product_name);
	enum cd_hv cs = clocksource_kind(&f->cs);

	if (!vendor.n && !product.n)
		dmi_from_line(f->hv.klog_dmi, &vendor, &product);

	if (cd_span_is(vendor, "innotek GmbH") || cd_span_is(product, "VirtualBox"))
		return CD_HV_VIRTUALBOX;
	if (cd_span_is(vendor, "VMware, Inc.") || cd_span_starts(product, "VMware"))
		return CD_HV_VMWARE;
	if (cd_span_is(vendor, "Microsoft Corporation") && cd_span_is(product, "Virtual Machine"))
		return CD_HV_HYPERV;
	if (cd_span_is(vendor, "Xen"))
		return CD_HV_XEN;
	/* Nitro is KVM-based; the older Xen instances say so in
	 * /sys/hypervisor/type (asked before DMI) or by their clocksource. */
	if (cd_span_is(vendor, "Amazon EC2")) {
		/* bare-metal instance types are named "*.metal" (c5.metal,
		 * m7i.metal-24xl): no hypervisor beneath Linux */
		for (size_t i = 0; i + 6 <= product.n; i++)
			if (memcmp(product.p + i, ".metal", 6) == 0)
				return CD_HV_NONE;
		return cs == CD_HV_XEN ? CD_HV_XEN : CD_HV_KVM;
	}
	if (cd_span_is(vendor, "Google") || cd_span_is(product, "KVM") || cd_span_starts(product, "KVM "))
		return CD_HV_KVM;
	if (cd_span_starts(vendor, "Parallels") || cd_span_starts(product, "Parallels")) {
		*other = "Parallels";
		return CD_HV_OTHER;
	}
	/* OpenStack's libvirt driver writes its own product name over QEMU's
	 * ("OpenStack Nova", later "OpenStack Compute"; systemd's virt.c and
	 * cloud-init read it the same way): a QEMU guest, KVM or TCG. */
	if (cd_span_is(vendor, "QEMU") || cd_span_is(product, "OpenStack Nova")
	    || cd_span_is(product, "OpenStack Compute")) {
		if (cs == CD_HV_KVM)
			return CD_HV_KVM;
		*qemu = true;
	}
	return CD_HV_UNKNOWN;
}

/* Linux's x86_hyper names: "KVM", "VMware", "Xen HVM", "Xen PV",
 * "Microsoft Hyper-V", "ACRN", "Jailhouse", "Bhyve"; another name is a
 * hypervisor of another kind. */
static const struct cd_word klog_kinds[] = {
	{ "KVM", true, CD_HV_KVM }, { "VMware", true, CD_HV_VMWARE }, { "Xen", true, CD_HV_XEN },
	{ "Microsoft Hyper-V", false, CD_HV_HYPERV }, { "Hyper-V", false, CD_HV_HYPERV },
	{ "ACRN", true, CD_HV_ACRN }, { "Bhyve", false, CD_HV_BHYVE }, { "bhyve", false, CD_HV_BHYVE },
};

static enum cd_hv klog_kind(struct cd_span name)
{
	return (enum cd_hv)cd_span_lookup(name, klog_kinds, CD_ARRAY_LEN(klog_kinds),
	                                  name.n ? CD_HV_OTHER : CD_HV_UNKNOWN);
}

/* The log's first event of this kind (with a name, when named). */
static const struct cd_event *klog_first(const struct cd_klog *log, enum cd_event_kind kind, bool named)
{
	int n = log->n_events < 0 ? 0 : log->n_events;
	if (n > CD_MAX_EVENTS)
		n = CD_MAX_EVENTS;
	for (int i = 0; i < n; i++)
		if (log->events[i].kind == kind && (!named || FIELD(log->events[i].name).n))
			return &log->events[i];
	return NULL;
}

/* Leaf 1 within the maximum basic leaf: then hypervisor_bit is a fact, not
 * a default. */
static bool cpuid_leaf1_known(const struct cd_cpuid *c)
{
	const struct cd_cpuid_leaf *l0 = cd_cpuid_find(c, 0, 0);
	return c->have && l0 && l0->eax >= 1 && cd_cpuid_find(c, 1, 0);
}

static const char *signature_display(const char *sig)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(signatures); i++)
		if (strcmp(sig, signatures[i].sig) == 0)
			return signatures[i].display;
	return NULL;
}

/* WSL2 runs Microsoft's own kernel in a Hyper-V utility VM, and its
 * release says so: CONFIG_LOCALVERSION "-microsoft-standard" (4.19, 5.4,
 * 5.10) and "-microsoft-standard-WSL2" (5.10.16.3 and later), in
 * microsoft/WSL2-Linux-Kernel's config-wsl.  (WSL 1's "-Microsoft" is no
 * Linux kernel at all, and names no hypervisor.) */
bool cd_hv_wsl2_release(const char *release)
{
	return strstr(release, "-microsoft-standard") != NULL;
}

/* A hypervisor may present another's paravirtual interface: VirtualBox
 * offers KVM's and Hyper-V's (--paravirtprovider), Xen and KVM offer
 * Hyper-V's.  Then CPUID leaf 0x40000000 and the kernel's "Hypervisor
 * detected:" name the interface, and DMI, written by the hypervisor's own
 * firmware, names the product: the more specific answer, and the one the
 * fixes depend on.  CD_HV_UNKNOWN when the two do not differ. */
static enum cd_hv product_of_interface(const struct cd_facts *f, enum cd_hv sig, const char **from,
                                       enum cd_hv *interface, char *display, size_t cap)
{
	enum cd_hv named = sig != CD_HV_UNKNOWN && sig != CD_HV_OTHER ? sig : klog_kind(FIELD(f->hv.klog_detected));
	const char *dmi_other = NULL;
	bool qemu = false;
	enum cd_hv dmi = dmi_kind(f, &qemu, &dmi_other);
	/* Parallels presents KVM's CPUID leaf too (systemd issue 23856): its
	 * DMI names the product, the leaf only the interface. */
	if ((dmi_other || (dmi != CD_HV_UNKNOWN && dmi != CD_HV_OTHER)) && named != CD_HV_UNKNOWN &&
	    named != CD_HV_OTHER && named != dmi) {
		*from = "dmi";
		*interface = named;
		snprintf(display, cap, "%s (%s interface)", dmi_other ? dmi_other : cd_hv_display(dmi),
		         cd_hv_display(named));
		return dmi;
	}
	/* QEMU's firmware with Hyper-V's interface: KVM with Hyper-V
	 * enlightenments (hv-* CPU flags). */
	if (qemu && named == CD_HV_HYPERV) {
		*from = "dmi";
		*interface = named;
		snprintf(display, cap, "KVM (Hyper-V interface)");
		return CD_HV_KVM;
	}
	return CD_HV_UNKNOWN;
}

/* The sources that name the hypervisor, most trusted first; CD_HV_UNKNOWN
 * when none does.  *qemu: DMI says QEMU, which is KVM or TCG. */
static enum cd_hv named_by_a_source(const struct cd_facts *f, enum cd_hv sig, const char **from,
                                    char *display, size_t cap, bool *qemu)
{
	const struct cd_hypervisor *hv = &f->hv;
	const char *dmi_other = NULL;
	enum cd_hv k;
	*from = "cpuid";
	if (sig != CD_HV_UNKNOWN && sig != CD_HV_OTHER)
		return sig;
	*from = "sys/hypervisor/type";
	if (cd_span_is(FIELD(hv->sys_hypervisor_type), "xen"))
		return CD_HV_XEN;
	*from = "dmi";
	if ((k = dmi_kind(f, qemu, &dmi_other)) != CD_HV_UNKNOWN) {
		if (dmi_other)
			snprintf(display, cap, "%s", dmi_other);
		return k;
	}
	*from = "kernel log";
	if ((k = klog_kind(FIELD(hv->klog_detected))) != CD_HV_UNKNOWN) {
		if (k == CD_HV_OTHER)
			snprintf(display, cap, "%s", hv->klog_detected);
		return k;
	}
	/* The x86 paravirt banner names the backend that took over
	 * ("KVM", "Xen", "Xen HVM", "VMware hypervisor", "lguest"); "bare
	 * hardware" names none, and is heard in present_or_absent. */
	*from = "kernel log";
	if (hv->klog_paravirt[0] && !cd_span_is(FIELD(hv->klog_paravirt), "bare hardware") &&
	    (k = klog_kind(FIELD(hv->klog_paravirt))) != CD_HV_UNKNOWN) {
		if (k == CD_HV_OTHER)
			snprintf(display, cap, "%s", hv->klog_paravirt);
		return k;
	}
	*from = "kernel release";
	if (cd_hv_wsl2_release(f->kernel.release))
		return CD_HV_HYPERV;
	*from = "clocksource";
	return clocksource_kind(&f->cs);
}

/* The sources that only say there is a hypervisor, then bare metal from
 * evidence and not from silence; CD_HV_UNKNOWN when nothing says either. */
static enum cd_hv present_or_absent(const struct cd_facts *f, enum cd_hv sig, bool qemu, const char **from,
                                    char *display, size_t cap)
{
	*from = "cpuid";
	if (sig == CD_HV_OTHER) {
		const char *known = signature_display(f->hv.cpuid_signature);
		if (known)
			snprintf(display, cap, "%s", known);
		else
			snprintf(display, cap, "hypervisor \"%s\"", f->hv.cpuid_signature);
		return CD_HV_OTHER;
	}
	*from = "dmi";
	if (qemu) {
		snprintf(display, cap, "QEMU");
		return CD_HV_OTHER;
	}
	*from = "device tree";
	if (cd_platform_virtual_board(f)) {
		snprintf(display, cap, "QEMU (virt board)");
		return CD_HV_OTHER;
	}
	*from = "kernel release";
	if (f->hv.utility_vm[0]) {
		snprintf(display, cap, "%s", f->hv.utility_vm);
		return CD_HV_OTHER;
	}
	*from = "cpuid";
	if (cpuid_leaf1_known(&f->cpuid) && f->cpuid.hypervisor_bit)
		return CD_HV_OTHER;
	*from = "cpuinfo flag";
	if (f->cpu.have_cpuinfo && (f->cpu.flags & CD_CPU_HYPERVISOR))
		return CD_HV_OTHER;

	*from = "cpuid";
	if (cpuid_leaf1_known(&f->cpuid))
		return CD_HV_NONE;
	*from = "cpuinfo flag";
	if (f->cpu.have_cpuinfo)
		return CD_HV_NONE;
	/* Bare metal said in so many words, when nothing above saw a
	 * hypervisor: the paravirt banner (no backend took over: a guest of
	 * KVM, Xen or VMware would have named its own, and the kernel logs
	 * "Hypervisor detected" for the others from 2.6.30), firmware only a
	 * hardware maker writes, a board's device tree, a clocksource only
	 * real machines have. */
	bool detected = f->hv.klog_detected[0] != '\0';
	*from = "kernel log";
	if (!detected && cd_span_is(FIELD(f->hv.klog_paravirt), "bare hardware"))
		return CD_HV_NONE;
	*from = "dmi";
	if (!detected && cd_platform_hardware_maker(f))
		return CD_HV_NONE;
	*from = "device tree";
	if (!detected && cd_platform_board(f))
		return CD_HV_NONE;
	*from = "clocksource";
	if (!detected && cd_platform_hardware_clocksource(f))
		return CD_HV_NONE;
	*from = "";
	return CD_HV_UNKNOWN;
}

/* The decision: kind, the source in *from, and in display a name for people
 * when cd_hv_display(kind) would say less. */
static enum cd_hv decide_kind(const struct cd_facts *f, const char **from, enum cd_hv *interface,
                              char *display, size_t cap)
{
	enum cd_hv sig = f->cpuid.have ? cd_hv_from_signature(f->hv.cpuid_signature) : CD_HV_UNKNOWN;
	bool qemu = false;
	enum cd_hv k = product_of_interface(f, sig, from, interface, display, cap);
	if (k == CD_HV_UNKNOWN)
		k = named_by_a_source(f, sig, from, display, cap, &qemu);
	if (k == CD_HV_UNKNOWN)
		k = present_or_absent(f, sig, qemu, from, display, cap);
	return k;
}

void cd_hypervisor_decide(struct cd_facts *f)
{
	struct cd_hypervisor *hv = &f->hv;
	const struct cd_event *ev = klog_first(&f->klog, CD_EV_HYPERVISOR, true);
	const char *from;
	char display[CD_NAME_MAX] = "";

	/* The signature keeps its spaces ("bhyve bhyve "): no trimming. */
	memset(hv->cpuid_signature, 0, sizeof(hv->cpuid_signature));
	if (f->cpuid.have)
		memcpy(hv->cpuid_signature, f->cpuid.hv_signature,
		       strnlen(f->cpuid.hv_signature, sizeof(hv->cpuid_signature) - 1));
	memset(hv->klog_detected, 0, sizeof(hv->klog_detected));
	if (ev)
		copy_span(hv->klog_detected, sizeof(hv->klog_detected), FIELD(ev->name));
	memset(hv->klog_dmi, 0, sizeof(hv->klog_dmi));
	const struct cd_event *dmi = klog_first(&f->klog, CD_EV_DMI, false);
	if (dmi) {
		const char *dl = strstr(dmi->line, "DMI: "), *hn = strstr(dmi->line, "Hardware name: ");
		const char *s = dl ? dl + 5 : hn ? hn + 15 : dmi->line;
		copy_span(hv->klog_dmi, sizeof(hv->klog_dmi), field(s, sizeof(dmi->line) - (size_t)(s - dmi->line)));
	}
	hv->interface = CD_HV_UNKNOWN;
	const struct cd_event *pv = klog_first(&f->klog, CD_EV_PARAVIRT_BOOT, true);
	memset(hv->klog_paravirt, 0, sizeof(hv->klog_paravirt));
	if (pv)
		copy_span(hv->klog_paravirt, sizeof(hv->klog_paravirt), FIELD(pv->name));
	const struct cd_event *model = klog_first(&f->klog, CD_EV_MACHINE_MODEL, true);
	if (model && !FIELD(hv->machine_model).n)
		copy_span(hv->machine_model, sizeof(hv->machine_model), FIELD(model->name));

	hv->kind = decide_kind(f, &from, &hv->interface, display, sizeof(display));
	snprintf(hv->from, sizeof(hv->from), "%s", from);
	snprintf(hv->display, sizeof(hv->display), "%s", display[0] ? display : cd_hv_display(hv->kind));
}
