/* SPDX-License-Identifier: MIT */
/*
 * probe.h: reading facts from a root directory ("/" live, or a snapshot).
 *
 * Each parser is a pure function of text, so that unit tests and fuzzers can
 * feed it anything; the cd_probe_* functions only find the text (under the
 * root, or from the live kernel) and hand it to the parser.  No parser may
 * crash or read past its input on any bytes at all: they are fuzzed.
 */
#ifndef CD_PROBE_H
#define CD_PROBE_H

#include "probe/facts.h"

#include "clockfacts.h"

/* ---- whole probe ---- */

/* Fill *f from root ("/" and live=true for this machine).  Never fails:
 * whatever cannot be read is left unknown and noted in f->unknown. */
void cd_probe(const char *root, bool live, struct cd_facts *f);

/* Record one "what was unknown" note (dropped silently when the list is full). */
void cd_note_unknown(struct cd_facts *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- clocksource.c ---- */

/* Parse a whitespace-separated list of clocksource names ("tsc hpet acpi_pm \n")
 * into cs->available.  Returns the number of names, or -EINVAL when there is
 * none.  Names that are too long or contain non-printable bytes are skipped. */
int cd_parse_clocksource_list(const char *text, struct cd_clocksource *cs);
/* Take the first name of text into cs->current.  Returns 0 or -EINVAL. */
int cd_parse_clocksource_current(const char *text, struct cd_clocksource *cs);
bool cd_clocksource_available(const struct cd_clocksource *cs, const char *name);

/* ---- cpuinfo.c ---- */

/* Parse /proc/cpuinfo text (x86 or arm64 layout).  Returns 0 when at least one
 * processor was seen, -EINVAL otherwise (cpu->have_cpuinfo stays false). */
int cd_parse_cpuinfo(const char *text, size_t len, struct cd_cpu *cpu);

/* The cpuinfo word of each enum cd_cpu_flag, in bit order: what the parser
 * matches, and what the reports print. */
#define CD_CPU_N_FLAGS 8
extern const struct cd_cpu_flag_name {
	const char *name;
	unsigned bit;
} cd_cpu_flag_names[CD_CPU_N_FLAGS];

/* ---- cpuid.c ---- */

/* Parse the raw output of Debian's `cpuid -r -1` ("   0x00000000 0x00: eax=0x... ebx=...
 * ecx=... edx=..." lines).  Unparseable lines are skipped.  Returns the number of
 * leaves read, or -EINVAL when there is none. */
int cd_parse_cpuid_txt(const char *text, size_t len, struct cd_cpuid *c);
/* Read the leaves that matter from this CPU with the cpuid instruction (x86
 * only; elsewhere c->have stays false).  Calls cd_cpuid_derive(). */
void cd_cpuid_live(struct cd_cpuid *c);
/* Fill the derived fields from c->leaves. */
void cd_cpuid_derive(struct cd_cpuid *c);
const struct cd_cpuid_leaf *cd_cpuid_find(const struct cd_cpuid *c, uint32_t leaf, uint32_t subleaf);
/* "VENDOR family F model M stepping S" (decimal, as /proc/cpuinfo prints
 * them) from leaves 0 and 1, the display family and model as Intel's SDM
 * (CPUID leaf 1) and AMD's APM define them; "" without those leaves.
 * Returns the length written (snprintf semantics). */
int cd_cpuid_signature(const struct cd_cpuid *c, char *buf, size_t cap);
/* This machine's CPU in one line for a benchmark's report: the live
 * signature above, then /proc/cpuinfo's model name ("AuthenticAMD family
 * 25 model 1 stepping 1, AMD EPYC"); "unknown CPU" when neither is there. */
void cd_cpu_describe_live(char *buf, size_t cap);
/* Write c->leaves in the `cpuid -r -1` format (for `snapshot`).  Returns bytes
 * written (snprintf semantics). */
int cd_format_cpuid_txt(const struct cd_cpuid *c, char *buf, size_t cap);

/* ---- verdictfact.c ---- */

/* f->saved_verdict: live, the verdict file `clockdoctor tsc` saved
 * (verdictfile.h) when it is of this boot; under a root folder (a
 * snapshot), its run/clockdoctor/tsc-verdict when its boot id is the
 * snapshot's proc/sys/kernel/random/boot_id. */
void cd_probe_saved_verdict(struct cd_facts *f);

/* ---- hypervisor.c ---- */

/* Decide f->hv.kind from the CPUID signature, /sys/hypervisor/type, DMI
 * strings, the kernel log's "Hypervisor detected:" line and the cpuinfo
 * "hypervisor" flag, in that order of trust.  The strings must already be in
 * f->hv and f->cpuid / f->cpu / f->klog filled. */
void cd_hypervisor_decide(struct cd_facts *f);
enum cd_hv cd_hv_from_signature(const char *sig);
/* Short stable name: "kvm", "vmware", "virtualbox", "xen", "hyperv",
 * "qemu-tcg", "bhyve", "acrn", "other", "none", "unknown". */
const char *cd_hv_name(enum cd_hv kind);
/* Name for people: "KVM", "VMware", "VirtualBox", ... */
const char *cd_hv_display(enum cd_hv kind);
/* The kernel release is WSL 2's own kernel ("-microsoft-standard"). */
bool cd_hv_wsl2_release(const char *release);

/* ---- platform.c: the signs that name no hypervisor ---- */

/* The hardware maker DMI names (sysfs, else the log's DMI line), or NULL. */
const char *cd_platform_hardware_maker(const struct cd_facts *f);
/* The device tree's model is a virtual board's (QEMU's linux,dummy-virt). */
bool cd_platform_virtual_board(const struct cd_facts *f);
/* The device tree's model is a known board or SoC family's. */
bool cd_platform_board(const struct cd_facts *f);
/* A clocksource only real hardware registers (sgi_rtc, ...), or NULL. */
const char *cd_platform_hardware_clocksource(const struct cd_facts *f);
/* 1 an x86 machine, 0 another architecture, -1 nothing says: uname or
 * /proc/sys/kernel/arch, CPUID, cpuinfo's vendor, lines only one
 * architecture's kernel logs, the table's architecture of a clocksource. */
int cd_platform_is_x86(const struct cd_facts *f);
/* Fill f->hv.container (its file's contents cleaned, else the signs) and
 * f->hv.utility_vm from the release and the log; dockerenv, containerenv:
 * /.dockerenv, /run/.containerenv exist beneath the root. */
/* utility_vm for a microVM (its devices on the kernel command line) */
#define CD_MICROVM "a microVM (Firecracker-style)"
void cd_platform_where(struct cd_facts *f, bool dockerenv, bool containerenv);
/* The value of container= in an environment block (/proc/1/environ:
 * NUL-separated, len bytes), the variable a container manager sets for the
 * container's init (LXC: "lxc", systemd-nspawn, Podman, ...), copied into
 * out; false when it has none. */
bool cd_platform_container_from_environ(const char *env, size_t len, char *out, size_t cap);

/* ---- kernel.c ---- */

/* Parse a release string ("6.1.0-56-amd64", "3.11-0.bpo.2-686-pae",
 * "2.6.32-358.18.1.el6.x86_64") into k->ver_*.  Returns 0 or -EINVAL. */
int cd_parse_kernel_release(const char *text, struct cd_kernel *k);
/* Parse the command line's clock-related parameters into k->cmd_*. */
void cd_parse_cmdline(const char *text, struct cd_kernel *k);
/* The kernel against maj.min.patch (a version constant of lib/clockfacts.h):
 * FC_KVER_UNKNOWN when its release could not be parsed. */
enum fc_kver cd_kernel_compare(const struct cd_kernel *k, int maj, int min, int patch);

/* ---- klog.c ---- */

/* Parse kernel log text into events, appending to log->events.  Accepts the
 * layouts people save: `dmesg` ("[    1.234567] msg"), syslog(2)'s ring
 * buffer ("<6>[    1.234567] msg"), /dev/kmsg records ("6,123,1234567,-;msg"),
 * `journalctl -k -o short-monotonic` ("[    1.234567] host kernel: msg"),
 * syslog files with or without their date ("kernel: [  384.258940] msg"),
 * the same behind `grep -H`'s "FILE:" prefix, and bare messages without a
 * timestamp.  Sets log->lines and log->reaches_boot. */
void cd_klog_parse(const char *text, size_t len, struct cd_klog *log);
/* Read this machine's kernel log: the ring buffer through syslog(2), and the
 * journal (journalctl -k -b) when the ring buffer no longer reaches back to
 * boot or cannot be read.  Says why in log->why_not when neither can. */
void cd_klog_live(struct cd_klog *log);
/* The raw text behind cd_klog_live (for `snapshot`): malloc'd, caller frees;
 * NULL when nothing is readable.  *len receives its length. */
char *cd_klog_live_text(size_t *len, enum cd_klog_source *source, char *why_not, size_t why_cap);
const char *cd_klog_source_name(enum cd_klog_source s);

/* ---- os.c ---- */

/* Parse /etc/os-release text into os (ID, ID_LIKE, PRETTY_NAME). */
void cd_parse_os_release(const char *text, struct cd_os *os);
/* The same from a file older than os-release: path is /etc/lsb-release,
 * /etc/debian_version, /etc/redhat-release or /etc/SuSE-release, text its
 * contents. */
void cd_parse_os_legacy(const char *path, const char *text, struct cd_os *os);
/* When os-release is missing, guess the family from the kernel release
 * ("el6", "fc38" -> Red Hat; "-amd64", "bpo", "-generic" -> Debian). */
void cd_os_guess_from_release(const char *release, struct cd_os *os);

/* ---- ntp.c ---- */

/* Read the kernel's NTP state with adjtimex(2) in read-only mode. */
void cd_ntp_live(struct cd_ntp *ntp);

/* The NTP state as a snapshot's adjtimex.txt, in the format of `adjtimex
 * --print`.  Returns the length, -ENODATA when ntp->have is false, or
 * -ENOSPC. */
int cd_format_adjtimex_txt(const struct cd_ntp *ntp, char *buf, size_t cap);

/* Parse adjtimex.txt (ours, or `adjtimex --print` output): the status line
 * is required, the return value is 0 when absent.  Returns 0, or -EINVAL
 * with ntp->have false. */
int cd_parse_adjtimex_txt(const char *text, struct cd_ntp *ntp);

#endif
