/* SPDX-License-Identifier: MIT */
/*
 * hostfix.c: advice for where the user stands.  On a cloud instance the
 * provider's side is the instance type.  Inside a container or a
 * sandbox the kernel, its clocksource and its command line are the host's;
 * inside the VM a desktop product runs for its containers (Docker
 * Desktop's LinuxKit VM, WSL 2) they are the product's, booted without
 * GRUB.  Then no lasting fix from inside can work (no boot configuration
 * there is the kernel's), and advice to try one would mislead: every
 * finding's lasting fix says where the fix is, on the host, and `clockdoctor
 * fix --persist` has nothing to carry out.  A switch now stays (in a
 * desktop product's VM it works until the VM restarts; in a container it
 * says whose clocksource it switches); the findings and their evidence
 * stay as they are.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "probe/probe.h"

#include <stdio.h>
#include <string.h>

/* Containers and sandboxes by name, for people (systemd's detect-virt
 * names, and the signs platform.c reads). */
static const char *container_display(const char *kind)
{
	static const struct { const char *kind, *display; } names[] = {
		{ "docker", "a Docker container" }, { "podman", "a Podman container" },
		{ "lxc", "an LXC container" }, { "lxc-libvirt", "a libvirt LXC container" },
		{ "systemd-nspawn", "a systemd-nspawn container" }, { "rkt", "an rkt container" },
		{ "openvz", "an OpenVZ container" }, { "proot", "a proot environment" },
		{ "pouch", "a Pouch container" }, { "gvisor", "a gVisor sandbox" },
		{ "wsl1", "WSL 1, which runs no Linux kernel" }, { "wsl", "WSL" },
	};
	for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
		if (strcmp(kind, names[i].kind) == 0)
			return names[i].display;
	return NULL;
}

static void host_advice(const struct cd_facts *f, struct cd_finding *x)
{
	const struct cd_hypervisor *hv = &f->hv;
	char *buf = x->fix_lasting;
	size_t cap = sizeof x->fix_lasting;
	if (strcmp(hv->container, "gvisor") == 0) {
		cd_appendf(buf, cap,
		           "This is a gVisor sandbox: its kernel (the Sentry) serves time calls itself from the "
		           "host's clock, and nothing inside changes that. The fix is on the host: run "
		           "`clockdoctor check` there.\n");
	} else if (strcmp(hv->container, "wsl1") == 0) {
		cd_appendf(buf, cap,
		           "This is WSL 1: Windows answers the time calls, there is no Linux kernel to tune. "
		           "WSL 2 runs a real Linux kernel whose vDSO reads the TSC.\n");
	} else if (hv->container[0]) {
		const char *who = container_display(hv->container);
		char named[CD_NAME_MAX + 24];
		if (!who) {
			snprintf(named, sizeof named, "a container (%s)", hv->container);
			who = named;
		}
		cd_appendf(buf, cap,
		           "This runs in %s: the kernel, its clocksource and its command line are the host's, "
		           "and no boot setting made in here reaches them. The fix is on the host%s: run "
		           "`clockdoctor check` there and apply its advice there.\n",
		           who, hv->utility_vm[0] ? " (the VM below)" : "");
	}
	if (strstr(hv->utility_vm, "Docker Desktop")) {
		cd_appendf(buf, cap,
		           "The kernel is Docker Desktop's LinuxKit VM, which the product boots without GRUB: "
		           "restart Docker Desktop (Troubleshoot > Restart, or quit and start it), which "
		           "restarts the VM with its clock set from the host. A host that slept is the usual "
		           "cause of a VM clock left behind or on a slow clocksource. Keep Docker Desktop "
		           "current.\n");
	} else if (strcmp(hv->utility_vm, CD_MICROVM) == 0) {
		cd_appendf(buf, cap,
		           "The kernel is a microVM's, booted by its monitor without GRUB (Firecracker gives "
		           "its guest its virtio devices on the kernel command line, as here): kernel "
		           "parameters go in the boot arguments the monitor is given (Firecracker's "
		           "boot-source boot_args), on the host that starts the microVM. Its clock is KVM's: "
		           "whether kvm-clock is sound depends on the host's TSC and clocksource, so run "
		           "`clockdoctor check` on the host too.\n");
	} else if (strcmp(hv->utility_vm, "WSL 2") == 0) {
		cd_appendf(buf, cap,
		           "The kernel is WSL 2's, in a Hyper-V utility VM that Windows boots without GRUB: run "
		           "`wsl --shutdown` in Windows and start WSL again, which restarts the VM with its clock "
		           "set from Windows; a Windows host that slept or hibernated is the usual cause. Kernel "
		           "parameters, if ever needed, go in kernelCommandLine in the [wsl2] section of "
		           "%%UserProfile%%\\.wslconfig (Microsoft's WSL documentation, \"Advanced settings "
		           "configuration in WSL\"), never in a GRUB file.\n");
	}
}

/* Cloud providers, by the DMI they write: sys_vendor (or the log's DMI
 * line) starting with vendor, and where the vendor's name alone does not
 * tell the cloud from the product (Microsoft's "Virtual Machine" is any
 * Hyper-V guest), the chassis asset tag the cloud writes to every VM
 * (Azure's, as cloud-init's Azure data source checks it).  The advice
 * names what only the provider's side changes and the provider's own
 * documentation, by its title. */
static const struct cloud {
	const char *vendor;
	const char *asset_tag;
	const char *advice;
} clouds[] = {
	{ "Amazon EC2", NULL,
	  "On EC2 the instance type decides the clock: instance types built on the Nitro System "
	  "give kvm-clock, which the vDSO reads; the older Xen-based types give xen, often a "
	  "system call; *.metal types run without a hypervisor. AWS lists which types are built "
	  "on Nitro (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-types.html"
	  "#ec2-nitro-instances): moving to one is the provider-side fix.\n" },
	{ "Google", NULL,
	  "On Compute Engine the hypervisor is Google's, KVM-based: the clocksources it offers are "
	  "kvm-clock and tsc, both read by the vDSO, so a slower one is the guest's choice, not the "
	  "platform's. Google's documentation \"Configure NTP on a VM\" has the VM take its time "
	  "only from Google's internal NTP service, never mixed with external servers; \"Configure "
	  "accurate time for Compute Engine VMs\" syncs the clock to the host's with chrony and "
	  "ptp_kvm.\n" },
	{ "Microsoft Corporation", "7783-7084-3265-9085-8269-3286-77",
	  "On Azure the hypervisor is Hyper-V: its clocksource is hyperv_clocksource_tsc_page (the "
	  "Hyper-V reference TSC page, read by the vDSO), or tsc where Hyper-V says the TSC is "
	  "invariant. Microsoft's documentation \"Time sync for Linux VMs in Azure\" describes how "
	  "a Linux VM there takes its time from the host (the VMICTimeSync integration service) or "
	  "from time servers, and how to check which it uses.\n" },
};

static bool field_is(const char *field, size_t cap, const char *want)
{
	size_t n = strnlen(field, cap), w = strlen(want);
	while (n > 0 && strchr(" \t\r\n", field[n - 1]))
		n--;
	return n == w && memcmp(field, want, w) == 0;
}

/* The vendor's name starts s and ends at its end or a blank. */
static bool vendor_starts(const char *s, const char *vendor)
{
	size_t n = strlen(vendor);
	return strncmp(s, vendor, n) == 0 && (s[n] == '\0' || s[n] == ' ' || s[n] == '\n');
}

const char *cd_cloud_advice(const struct cd_facts *f)
{
	const char *vendor = f->hv.dmi_sys_vendor[0] ? f->hv.dmi_sys_vendor : f->hv.klog_dmi;
	for (size_t i = 0; i < CD_ARRAY_LEN(clouds); i++) {
		if (!vendor_starts(vendor, clouds[i].vendor))
			continue;
		if (clouds[i].asset_tag && !field_is(f->hv.dmi_chassis_asset_tag,
		                                     sizeof f->hv.dmi_chassis_asset_tag, clouds[i].asset_tag))
			continue;
		return clouds[i].advice;
	}
	return NULL;
}

/* A cloud instance: what only the provider's side changes, said where the
 * finding already sends the user to the hypervisor. */
static void cloud_advice(const struct cd_facts *f, struct cd_finding *x)
{
	const char *advice = x->fix_hypervisor[0] ? cd_cloud_advice(f) : NULL;
	if (advice)
		cd_appendf(x->fix_hypervisor, sizeof x->fix_hypervisor, "%s", advice);
}

/* The user stands where the kernel cannot be changed. */
static bool fix_is_on_host(const struct cd_facts *f)
{
	return f->hv.container[0] || f->hv.utility_vm[0];
}

void cd_rule_where_the_fix_is(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	for (int i = 0; i < c->r->n; i++)
		cloud_advice(f, &c->r->f[i]);
	if (!fix_is_on_host(f))
		return;
	for (int i = 0; i < c->r->n; i++) {
		struct cd_finding *x = &c->r->f[i];
		bool params = x->act_add[0] || x->act_remove[0];
		if (!x->fix_lasting[0] && !params)
			continue;
		/* The risk of a parameter that is no longer advised goes with it;
		 * a switch now stays, with its risk. */
		if (params && !x->act_switch[0])
			x->risk[0] = '\0';
		x->fix_lasting[0] = '\0';
		x->act_add[0] = x->act_remove[0] = '\0';
		/* A switch now writes sysfs: read-only in most containers, and
		 * where it is writable the clocksource it switches is the host's. */
		if (x->act_switch[0] && f->hv.container[0])
			cd_appendf(x->fix_now, sizeof x->fix_now,
			           "(In a container /sys is usually read-only; where it is writable, this switches "
			           "the host's clocksource, for everything that runs on it.)\n");
		/* a desktop product's VM's hypervisor settings are the product's;
		 * a microVM's host is the user's own */
		if (f->hv.utility_vm[0] && strcmp(f->hv.utility_vm, CD_MICROVM) != 0)
			x->fix_hypervisor[0] = '\0';
		host_advice(f, x);
	}
}
