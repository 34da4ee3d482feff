/* SPDX-License-Identifier: MIT */
/*
 * fixes.c: fix texts for this distribution and this hypervisor (fixes.h).
 *
 * The lasting fix is always the kernel command line, written the way the
 * distribution expects: a drop-in under /etc/default/grub.d/ (sourced after
 * /etc/default/grub by grub-mkconfig since GRUB 2.02, so the operator's own
 * file stays untouched) on Debian and Ubuntu, grubby on the Red Hat family.
 */
#include "diagnose/fixes.h"
#include "diagnose/plan.h"
#include "util/shellquote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_FILE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/* ---- the distribution's releases and their kernels ----
 *
 * Each release's own kernel (major.minor), and the newer kernel its
 * maintainers offer for it: Debian's backports suite, Ubuntu's hardware
 * enablement (HWE/LTS enablement) metapackage.  From the distributions'
 * release notes and package archives (archive.debian.org, packages.ubuntu.com). */
struct os_kernel {
	const char *id, *version, *name;
	int maj, min, pat;      /* the release's kernel (the patch level only for 2.6) */
	const char *newer;      /* backports suite (Debian) or metapackage (Ubuntu); NULL: none */
	int nmaj, nmin;         /* the kernel it brings */
	bool grub_legacy;       /* installs GRUB legacy (menu.lst) by default */
};

static const struct os_kernel os_kernels[] = {
	{ "debian", "4", "Debian 4.0 (etch)", 2, 6, 18, NULL, 0, 0, true },
	{ "debian", "5", "Debian 5.0 (lenny)", 2, 6, 26, "lenny-backports", 2, 6, true },
	{ "debian", "6", "Debian 6.0 (squeeze)", 2, 6, 32, "squeeze-backports", 3, 2, false },
	{ "debian", "7", "Debian 7 (wheezy)", 3, 2, 0, "wheezy-backports", 3, 16, false },
	{ "debian", "8", "Debian 8 (jessie)", 3, 16, 0, "jessie-backports", 4, 9, false },
	{ "debian", "9", "Debian 9 (stretch)", 4, 9, 0, "stretch-backports", 4, 19, false },
	{ "debian", "10", "Debian 10 (buster)", 4, 19, 0, "buster-backports", 5, 10, false },
	{ "debian", "11", "Debian 11 (bullseye)", 5, 10, 0, "bullseye-backports", 6, 1, false },
	{ "debian", "12", "Debian 12 (bookworm)", 6, 1, 0, NULL, 0, 0, false },
	{ "debian", "13", "Debian 13 (trixie)", 6, 12, 0, NULL, 0, 0, false },
	{ "ubuntu", "6.06", "Ubuntu 6.06 LTS", 2, 6, 15, NULL, 0, 0, true },
	{ "ubuntu", "8.04", "Ubuntu 8.04 LTS", 2, 6, 24, NULL, 0, 0, true },
	{ "ubuntu", "10.04", "Ubuntu 10.04 LTS", 2, 6, 32, NULL, 0, 0, false },
	{ "ubuntu", "12.04", "Ubuntu 12.04 LTS", 3, 2, 0, "linux-generic-lts-trusty", 3, 13, false },
	{ "ubuntu", "14.04", "Ubuntu 14.04 LTS", 3, 13, 0, "linux-generic-lts-xenial", 4, 4, false },
	{ "ubuntu", "16.04", "Ubuntu 16.04 LTS", 4, 4, 0, "linux-generic-hwe-16.04", 4, 15, false },
	{ "ubuntu", "18.04", "Ubuntu 18.04 LTS", 4, 15, 0, "linux-generic-hwe-18.04", 5, 4, false },
	{ "ubuntu", "20.04", "Ubuntu 20.04 LTS", 5, 4, 0, "linux-generic-hwe-20.04", 5, 15, false },
	{ "ubuntu", "22.04", "Ubuntu 22.04 LTS", 5, 15, 0, "linux-generic-hwe-22.04", 6, 8, false },
	{ "ubuntu", "24.04", "Ubuntu 24.04 LTS", 6, 8, 0, NULL, 0, 0, false },
	{ "rhel", "5", "Red Hat Enterprise Linux 5", 2, 6, 18, NULL, 0, 0, true },
	{ "rhel", "6", "Red Hat Enterprise Linux 6", 2, 6, 32, NULL, 0, 0, true },
	{ "rhel", "7", "Red Hat Enterprise Linux 7", 3, 10, 0, NULL, 0, 0, false },
	{ "rhel", "8", "Red Hat Enterprise Linux 8", 4, 18, 0, NULL, 0, 0, false },
	{ "rhel", "9", "Red Hat Enterprise Linux 9", 5, 14, 0, NULL, 0, 0, false },
	{ "sles", "11", "SUSE Linux Enterprise Server 11", 3, 0, 0, NULL, 0, 0, true },
	{ "sles", "12", "SUSE Linux Enterprise Server 12", 3, 12, 0, NULL, 0, 0, false },
	{ "sles", "15", "SUSE Linux Enterprise Server 15", 4, 12, 0, NULL, 0, 0, false },
};

#define N_OS_KERNELS (sizeof os_kernels / sizeof os_kernels[0])

static int ver_cmp(int amaj, int amin, int bmaj, int bmin)
{
	return amaj != bmaj ? amaj - bmaj : amin - bmin;
}

/* The release's kernel against this one, to the patch level for 2.6. */
static int kernel_cmp(const struct os_kernel *o, const struct cd_kernel *k)
{
	int c = ver_cmp(o->maj, o->min, k->ver_major, k->ver_minor);
	return c || o->maj != 2 ? c : o->pat - k->ver_patch;
}

/* The table's id for an os-release ID: the Red Hat rebuilds follow RHEL's
 * numbering. */
static const char *table_id(const char *id)
{
	static const char *const rhel[] = { "rhel", "centos", "rocky", "almalinux", "ol" };
	for (size_t i = 0; i < sizeof rhel / sizeof rhel[0]; i++)
		if (strcmp(id, rhel[i]) == 0)
			return "rhel";
	return id;
}

/* "6.10" matches "6" for RHEL and Debian, whose point releases keep the
 * kernel; Ubuntu's versions are whole ("8.04"). */
static bool version_matches(const char *want, const char *have, const char *id)
{
	size_t n = strlen(want);
	if (strcmp(id, "ubuntu") == 0)
		return strcmp(want, have) == 0;
	return strncmp(want, have, n) == 0 && (have[n] == 0 || have[n] == '.');
}

/* The release in front of us: read (os-release and older files), or, when
 * only the family was guessed from the kernel release, inferred from the
 * kernel's version (a Debian "3.2.0-4-686-pae" is wheezy's own kernel; a
 * "bpo" kernel is the backports kernel of the release before). */
static const struct os_kernel *os_release(const struct cd_facts *f, bool *inferred)
{
	const char *id = table_id(f->os.id);
	*inferred = false;
	if (f->os.version[0]) {
		for (size_t i = 0; i < N_OS_KERNELS; i++)
			if (strcmp(os_kernels[i].id, id) == 0 && version_matches(os_kernels[i].version, f->os.version, id))
				return &os_kernels[i];
		return NULL;
	}
	const struct cd_kernel *k = &f->kernel;
	if (!f->os.guessed || k->ver_major < 0)
		return NULL;
	bool bpo = strstr(k->release, "bpo") != NULL;
	const struct os_kernel *found = NULL;
	for (size_t i = 0; i < N_OS_KERNELS; i++) {
		const struct os_kernel *o = &os_kernels[i];
		if (strcmp(o->id, id) != 0)
			continue;
		int c = kernel_cmp(o, k);
		/* Its own kernel; or, for a backports kernel, the last release
		 * whose own kernel is older (backports carry the next release's). */
		if (!bpo && c == 0)
			found = o;
		else if (bpo && c < 0)
			found = o;
	}
	*inferred = found != NULL;
	return found;
}

const char *cd_os_release_name(const struct cd_facts *f, bool *inferred)
{
	const struct os_kernel *o = os_release(f, inferred);
	return o ? o->name : NULL;
}

static const char *family_name(const struct cd_facts *f)
{
	const char *id = table_id(f->os.id);
	return strcmp(id, "debian") == 0 ? "Debian" : strcmp(id, "ubuntu") == 0 ? "Ubuntu" :
	       strcmp(id, "rhel") == 0 ? "Red Hat Enterprise Linux (or its rebuild)" :
	       strcmp(id, "sles") == 0 ? "SUSE Linux Enterprise Server" : NULL;
}

void cd_fix_newer_kernel(char *buf, size_t cap, const struct cd_facts *f, int maj, int min, int patch, bool bit32)
{
	(void)patch;  /* distributions ship kernels by major.minor */
	bool inferred;
	const struct os_kernel *o = os_release(f, &inferred);
	const char *fam = family_name(f);
	if (!fam) {
		cd_appendf(buf, cap, "Install a kernel of at least %d.%d%s from this distribution (its "
		           "release is not known here: look for a newer release's kernel, or one its "
		           "maintainers offer for this release).\n", maj, min, bit32 ? " (or a 64-bit kernel)" : "");
		return;
	}
	if (o && o->newer && ver_cmp(o->nmaj, o->nmin, maj, min) >= 0) {
		if (strcmp(o->id, "debian") == 0) {
			const char *flavour = bit32 ? "686-pae" : strcmp(f->cpu.arch, "aarch64") == 0 ? "arm64" : "amd64";
			/* Releases up to 10 (buster) and their backports have moved to
			 * archive.debian.org; before wheezy, backports had an archive of
			 * their own (debian-backports). */
			int rel = atoi(o->version);
			const char *mirror = rel <= 6 ? "archive.debian.org/debian-backports" :
			                     rel <= 10 ? "archive.debian.org/debian" : "deb.debian.org/debian";
			cd_appendf(buf, cap,
			           "On %s%s, the %s suite has kernel %d.%d: add 'deb http://%s %s main' "
			           "to /etc/apt/sources.list, then\n"
			           "$ apt-get update && apt-get -t %s install linux-image-%s\n",
			           o->name, inferred ? " (inferred from its kernel)" : "", o->newer, o->nmaj, o->nmin,
			           mirror, o->newer, o->newer, flavour);
		} else {
			cd_appendf(buf, cap, "On %s%s, the enablement kernel %d.%d:\n$ apt-get install %s\n", o->name,
			           inferred ? " (inferred from its kernel)" : "", o->nmaj, o->nmin, o->newer);
		}
		return;
	}
	/* The first release of the same distribution whose own kernel is new
	 * enough, and for Ubuntu the first LTS. */
	const struct os_kernel *next = NULL;
	for (size_t i = 0; i < N_OS_KERNELS && !next; i++)
		if (strcmp(os_kernels[i].id, table_id(f->os.id)) == 0 &&
		    ver_cmp(os_kernels[i].maj, os_kernels[i].min, maj, min) >= 0)
			next = &os_kernels[i];
	char kv[24];
	if (o && o->maj == 2)
		snprintf(kv, sizeof kv, "2.6.%d", o->pat);
	else if (o)
		snprintf(kv, sizeof kv, "%d.%d", o->maj, o->min);
	if (o)
		cd_appendf(buf, cap, "%s%s has kernel %s and offers none of at least %d.%d: ", o->name,
		           inferred ? " (inferred from its kernel)" : "", kv, maj, min);
	else if (f->os.version[0])
		cd_appendf(buf, cap, "This is %s %s, a release whose kernel this tool does not know: if it is "
		           "older than %d.%d, ", fam, f->os.version, maj, min);
	else
		cd_appendf(buf, cap, "This is %s (its release is not known here): ", fam);
	if (next)
		cd_appendf(buf, cap, "%s is the first release whose kernel is new enough (%d.%d): upgrade the "
		           "release%s.\n", next->name, next->maj, next->min,
		           strcmp(next->id, "ubuntu") == 0 ? " (do-release-upgrade, from one LTS to the next)" : "");
	else
		cd_appendf(buf, cap, "install a kernel of at least %d.%d.\n", maj, min);
}

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

/* A token from the machine (a command line parameter, a clocksource name)
 * can hold anything printable: each goes into a pasted command as one word
 * of util/shellquote.h, and a command whose word cannot be written safely
 * is not printed; the sentence says so instead. */
#define NOT_PASTABLE "(%s holds characters that cannot be pasted safely into a shell: no command is given.)\n"

/* "$ grubby --update-kernel=ALL OPT=WORD", one line: the constant OPT=
 * and the quoted word make one shell word. */
static void grubby_line(char *buf, size_t cap, const char *opt, const char *params)
{
	char word[CD_NAME_MAX * 8 + 3];
	if (cd_shell_word(word, sizeof word, params))
		cd_appendf(buf, cap, "$ grubby --update-kernel=ALL %s=%s\n", opt, word);
	else
		cd_appendf(buf, cap, NOT_PASTABLE, params);
}

/* Whether each word of params is a parameter fix itself writes (plan.h):
 * only such a word goes into a file that grub-mkconfig sources as shell
 * code, and into that file's name. */
static bool params_writable(const char *params)
{
	char copy[CD_NAME_MAX * 2 + 24];
	if ((size_t)snprintf(copy, sizeof copy, "%s", params) >= sizeof copy)
		return false;
	bool any = false;
	for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (!cd_plan_token_safe(t))
			return false;
		any = true;
	}
	return any;
}

static void debian_add(char *buf, size_t cap, const char *params)
{
	if (!params_writable(params)) {
		cd_appendf(buf, cap, "Add %s to GRUB_CMDLINE_LINUX_DEFAULT (in a drop-in under "
		           "/etc/default/grub.d/ or in /etc/default/grub), then run update-grub and reboot. "
		           NOT_PASTABLE, params, params);
		return;
	}
	char name[96], line[CD_NAME_MAX * 2 + 96], word[sizeof line * 4 + 3];
	cd_fix_dropin_name(name, sizeof name, params);
	snprintf(line, sizeof line, "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT %s\"", params);
	cd_shell_word(word, sizeof word, line);
	cd_appendf(buf, cap,
	           "Add %s to the kernel command line with a GRUB drop-in, then "
	           "regenerate the boot configuration and reboot:\n"
	           "$ mkdir -p /etc/default/grub.d\n"
	           "$ echo %s > /etc/default/grub.d/%s\n"
	           "$ update-grub\n"
	           "(GRUB older than 2.02 ignores grub.d: add %s to GRUB_CMDLINE_LINUX_DEFAULT "
	           "in /etc/default/grub instead.)\n",
	           params, word, name, params);
}

static void redhat_add(char *buf, size_t cap, const char *params)
{
	cd_appendf(buf, cap, "Add %s to the command line of every installed kernel, then reboot:\n", params);
	grubby_line(buf, cap, "--args", params);
}

static void suse_add(char *buf, size_t cap, const char *params)
{
	cd_appendf(buf, cap,
	           "Add %s to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then "
	           "regenerate the boot configuration and reboot:\n"
	           "$ grub2-mkconfig -o /boot/grub2/grub.cfg\n",
	           params);
}

/* GRUB legacy (Debian before 6.0, Ubuntu before 9.10): update-grub
 * rewrites /boot/grub/menu.lst from its "# kopt=" line, and reads no
 * /etc/default/grub. */
static bool grub_legacy(const struct cd_facts *f)
{
	bool inferred;
	const struct os_kernel *o = os_release(f, &inferred);
	return o && o->grub_legacy;
}

void cd_fix_add_kernel_params(char *buf, size_t cap, const struct cd_facts *f, const char *params)
{
	switch (f->os.family) {
	case CD_OS_DEBIAN:
		if (grub_legacy(f)) {
			cd_appendf(buf, cap,
			           "Add %s to the end of the \"# kopt=\" line in /boot/grub/menu.lst (this "
			           "release boots with GRUB legacy, which has no /etc/default/grub), then "
			           "regenerate the boot entries and reboot:\n"
			           "$ update-grub\n", params);
			break;
		}
		debian_add(buf, cap, params);
		break;
	case CD_OS_REDHAT:
		redhat_add(buf, cap, params);
		break;
	case CD_OS_SUSE:
		if (grub_legacy(f)) {
			cd_appendf(buf, cap,
			           "Add %s to the kernel line of the default entry in /boot/grub/menu.lst "
			           "(or in YaST's boot loader module: this release boots with GRUB legacy), "
			           "then reboot.\n", params);
			break;
		}
		suse_add(buf, cap, params);
		break;
	default:
		/* The distribution is not known: say which way fits which
		 * machine rather than guess one. */
		cd_appendf(buf, cap, "The distribution is not known here. On Debian, Ubuntu and their "
		           "derivatives (GRUB 2 with /etc/default/grub):\n");
		debian_add(buf, cap, params);
		cd_appendf(buf, cap, "(On the Red Hat family instead:)\n");
		grubby_line(buf, cap, "--args", params);
		cd_appendf(buf, cap, "(With another boot loader, add %s to the kernel command line in its "
		           "configuration.)\n", params);
		break;
	}
}

void cd_fix_remove_kernel_param(char *buf, size_t cap, const struct cd_facts *f, const char *param)
{
	if (f->os.family == CD_OS_DEBIAN && grub_legacy(f)) {
		cd_appendf(buf, cap,
		           "Remove %s from the \"# kopt=\" line in /boot/grub/menu.lst (GRUB legacy), then "
		           "reboot after:\n$ update-grub\n", param);
		return;
	}
	switch (f->os.family) {
	case CD_OS_REDHAT:
		cd_appendf(buf, cap, "Remove %s from the command line of every installed kernel, then reboot:\n",
		           param);
		grubby_line(buf, cap, "--remove-args", param);
		break;
	case CD_OS_SUSE:
		if (grub_legacy(f)) {
			cd_appendf(buf, cap, "Remove %s from the kernel line in /boot/grub/menu.lst (GRUB legacy; "
			           "or in YaST's boot loader module), then reboot.\n", param);
			break;
		}
		cd_appendf(buf, cap,
		           "Remove %s from GRUB_CMDLINE_LINUX* in /etc/default/grub, then reboot after:\n"
		           "$ grub2-mkconfig -o /boot/grub2/grub.cfg\n",
		           param);
		break;
	default:
		if (f->os.family != CD_OS_DEBIAN)
			cd_appendf(buf, cap, "The distribution is not known here. On Debian, Ubuntu and their "
			           "derivatives (GRUB 2):\n");
		cd_appendf(buf, cap,
		           "Remove %s from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT "
		           "(in /etc/default/grub and /etc/default/grub.d/*.cfg), then reboot after:\n"
		           "$ update-grub\n"
		           "(On the Red Hat family instead:)\n", param);
		grubby_line(buf, cap, "--remove-args", param);
		break;
	}
}

void cd_fix_switch_now(char *buf, size_t cap, const char *clocksource)
{
	char word[CD_NAME_MAX * 4 + 3];
	cd_appendf(buf, cap, "Switch now, as root (lasts until the next reboot):\n");
	if (cd_shell_word(word, sizeof word, clocksource))
		cd_appendf(buf, cap, "$ echo %s > " CS_FILE "\n", word);
	else
		cd_appendf(buf, cap, NOT_PASTABLE, clocksource);
}

void cd_fix_hypervisor(char *buf, size_t cap, const struct cd_facts *f)
{
	switch (f->hv.kind) {
	case CD_HV_VIRTUALBOX:
		if (f->hv.interface == CD_HV_KVM)
			cd_appendf(buf, cap,
			           "This guest already has VirtualBox's KVM paravirtualization interface (the "
			           "kernel calls it KVM): its kvm-clock is read by the vDSO only while VirtualBox "
			           "marks the TSC stable, so measure on the machine (clockdoctor check). These are "
			           "VirtualBox's settings, not a KVM host's:\n");
		cd_appendf(buf, cap,
		           "VirtualBox disables its fast TSC mode for guests with more than one vCPU, "
		           "so the guest's TSCs disagree and the kernel drops the TSC. On the host, "
		           "with the VM powered off, any of:\n");
		if (f->hv.interface != CD_HV_KVM)
			cd_appendf(buf, cap,
			           "$ VBoxManage modifyvm \"VM\" --paravirtprovider kvm\n"
			           "(VirtualBox 5.0+: the guest gets kvm-clock, which the vDSO can read)\n");
		cd_appendf(buf, cap,
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
		           "call; the guest's own cure is the TSC as its clocksource where the TSC is "
		           "sound (Netflix and others measured large CPU savings), and the lasting fix "
		           "says on what evidence. On AWS, Nitro instance types use kvm-clock, which the "
		           "vDSO reads.\n");
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
		/* Releases before 7 have no systemd (and RHEL 5 and 6 up to 6.7
		 * no chrony package): ntpd with SysV init. */
		if (grub_legacy(f))
			cd_appendf(buf, cap, "Run ntpd:\n"
			           "$ yum install -y ntp && chkconfig ntpd on && service ntpd start\n");
		else
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
