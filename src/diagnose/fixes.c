/*
 * fixes.c: fix texts for this distribution and this hypervisor (fixes.h).
 *
 * The lasting fix is always the kernel command line, written the way the
 * distribution expects: a drop-in under /etc/default/grub.d/ (sourced after
 * /etc/default/grub by grub-mkconfig since GRUB 2.02, so the operator's own
 * file stays untouched) on Debian and Ubuntu, grubby on the Red Hat family.
 */
#include "diagnose/fixes.h"

#include <stdio.h>
#include <string.h>

#define CS_FILE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

void cd_appendf(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strnlen(buf, cap);
	if (len + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

/* The drop-in's name says what it adds ("tsc=reliable" ->
 * 90-clockdoctor-tsc-reliable.cfg), so that two fixes never overwrite each
 * other and the operator can see, and remove, each one. */
void cd_fix_dropin_name(char *out, size_t cap, const char *params)
{
	int n = snprintf(out, cap, "90-clockdoctor-");
	for (const char *p = params; *p && n > 0 && (size_t)n + 5 < cap; p++)
		out[n++] = (*p == '=' || *p == ' ' || *p == ',') ? '-' : *p;
	snprintf(out + n, cap - (size_t)n, ".cfg");
}

static void debian_add(char *buf, size_t cap, const char *params)
{
	char name[96];
	cd_fix_dropin_name(name, sizeof name, params);
	cd_appendf(buf, cap,
	           "Add %s to the kernel command line with a GRUB drop-in, then "
	           "regenerate the boot configuration and reboot:\n"
	           "$ mkdir -p /etc/default/grub.d\n"
	           "$ echo 'GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT %s\"' "
	           "> /etc/default/grub.d/%s\n"
	           "$ update-grub\n"
	           "(GRUB older than 2.02 ignores grub.d: add %s to GRUB_CMDLINE_LINUX_DEFAULT "
	           "in /etc/default/grub instead.)\n",
	           params, params, name, params);
}

static void redhat_add(char *buf, size_t cap, const char *params)
{
	cd_appendf(buf, cap,
	           "Add %s to the command line of every installed kernel, then reboot:\n"
	           "$ grubby --update-kernel=ALL --args=\"%s\"\n",
	           params, params);
}

static void suse_add(char *buf, size_t cap, const char *params)
{
	cd_appendf(buf, cap,
	           "Add %s to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then "
	           "regenerate the boot configuration and reboot:\n"
	           "$ grub2-mkconfig -o /boot/grub2/grub.cfg\n",
	           params);
}

void cd_fix_add_kernel_params(char *buf, size_t cap, const struct cd_facts *f, const char *params)
{
	switch (f->os.family) {
	case CD_OS_DEBIAN:
		debian_add(buf, cap, params);
		break;
	case CD_OS_REDHAT:
		redhat_add(buf, cap, params);
		break;
	case CD_OS_SUSE:
		suse_add(buf, cap, params);
		break;
	default:
		debian_add(buf, cap, params);
		cd_appendf(buf, cap, "(On the Red Hat family instead:)\n"
		           "$ grubby --update-kernel=ALL --args=\"%s\"\n", params);
		break;
	}
}

void cd_fix_remove_kernel_param(char *buf, size_t cap, const struct cd_facts *f, const char *param)
{
	switch (f->os.family) {
	case CD_OS_REDHAT:
		cd_appendf(buf, cap,
		           "Remove %s from the command line of every installed kernel, then reboot:\n"
		           "$ grubby --update-kernel=ALL --remove-args=\"%s\"\n",
		           param, param);
		break;
	case CD_OS_SUSE:
		cd_appendf(buf, cap,
		           "Remove %s from GRUB_CMDLINE_LINUX* in /etc/default/grub, then reboot after:\n"
		           "$ grub2-mkconfig -o /boot/grub2/grub.cfg\n",
		           param);
		break;
	default:
		cd_appendf(buf, cap,
		           "Remove %s from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT "
		           "(in /etc/default/grub and /etc/default/grub.d/*.cfg), then reboot after:\n"
		           "$ update-grub\n"
		           "(Red Hat family: grubby --update-kernel=ALL --remove-args=\"%s\")\n",
		           param, param);
		break;
	}
}

void cd_fix_switch_now(char *buf, size_t cap, const char *clocksource)
{
	cd_appendf(buf, cap,
	           "Switch now, as root (lasts until the next reboot):\n"
	           "$ echo %s > " CS_FILE "\n",
	           clocksource);
}

void cd_fix_hypervisor(char *buf, size_t cap, const struct cd_facts *f)
{
	switch (f->hv.kind) {
	case CD_HV_VIRTUALBOX:
		cd_appendf(buf, cap,
		           "VirtualBox disables its fast TSC mode for guests with more than one vCPU, "
		           "so the guest's TSCs disagree and the kernel drops the TSC. On the host, "
		           "with the VM powered off, any of:\n"
		           "$ VBoxManage modifyvm \"VM\" --paravirtprovider kvm\n"
		           "(VirtualBox 5.0+: the guest gets kvm-clock, which the vDSO can read)\n"
		           "$ VBoxManage setextradata \"VM\" \"VBoxInternal/TM/TSCMode\" \"RealTSCOffset\"\n"
		           "(VirtualBox 5.0+; on 4.x the older settings: "
		           "VBoxInternal/TM/MaybeUseOffsettedHostTSC 1, VBoxInternal/TM/UseRealTSC 1, "
		           "VBoxInternal/TM/TSCVirtualized 0)\n"
		           "$ VBoxManage modifyvm \"VM\" --chipset ich9\n"
		           "(adds an HPET: about twice as fast as acpi_pm, still a system call)\n"
		           "A single vCPU also keeps the TSC, at the cost of the guest's parallelism.\n");
		break;
	case CD_HV_KVM:
		cd_appendf(buf, cap,
		           "The guest's kvm-clock and TSC are only as good as the host's. On the host: "
		           "make sure the host itself runs on tsc, and give the guest an invariant TSC "
		           "(QEMU: -cpu host,+invtsc; libvirt: <cpu mode='host-passthrough'> with "
		           "<feature policy='require' name='invtsc'/>). Note that invtsc blocks live "
		           "migration unless the TSC frequency is fixed (libvirt <timer name='tsc' "
		           "frequency='...'/>).\n");
		break;
	case CD_HV_QEMU_TCG:
		cd_appendf(buf, cap,
		           "This guest runs under QEMU's software emulation (TCG), whose CPU model has "
		           "no constant_tsc: with several vCPUs the kernel cannot trust the TSC. Use "
		           "hardware acceleration (-accel kvm -cpu host,+invtsc) or a single vCPU.\n");
		break;
	case CD_HV_XEN:
		cd_appendf(buf, cap,
		           "On Xen (and AWS Xen instance types) the xen clocksource is often a system "
		           "call; booting with clocksource=tsc is the usual cure (Netflix and others "
		           "measured large CPU savings). On AWS, Nitro instance types use kvm-clock, "
		           "which the vDSO reads.\n");
		break;
	case CD_HV_HYPERV:
		cd_appendf(buf, cap,
		           "Hyper-V guests are fast on hyperv_clocksource_tsc_page; a guest on "
		           "hyperv_clocksource_msr is on an old host or configuration: use a current "
		           "Hyper-V version (Generation 2 VM) so the TSC page is offered.\n");
		break;
	case CD_HV_VMWARE:
		cd_appendf(buf, cap,
		           "VMware gives the guest a reliable TSC and the kernel trusts it "
		           "(tsc_reliable); a VMware guest off the TSC is unusual: check that the VM's "
		           "hardware version is current and that the TSC is not virtualized "
		           "(monitor_control settings).\n");
		break;
	default:
		break;
	}
}

void cd_fix_ntp(char *buf, size_t cap, const struct cd_facts *f)
{
	switch (f->os.family) {
	case CD_OS_REDHAT:
		cd_appendf(buf, cap, "Run chrony (better than ntpd in a VM):\n"
		           "$ yum install -y chrony && systemctl enable --now chronyd\n");
		break;
	case CD_OS_DEBIAN:
		cd_appendf(buf, cap, "Run chrony (better than ntpd in a VM):\n"
		           "$ apt-get install -y chrony\n");
		break;
	default:
		cd_appendf(buf, cap, "Install and enable chrony (or ntpd, or systemd-timesyncd) "
		           "so that the kernel's clock is disciplined.\n");
		break;
	}
}
