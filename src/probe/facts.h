/* SPDX-License-Identifier: MIT */
/*
 * facts.h: what the probe stage learns about a machine.
 *
 * Every fact carries a "have_" flag, because any file may be missing or
 * malformed (a container without /sys, a snapshot rebuilt from a bug report
 * that quoted only two files).  Later stages must treat "not known" as its own
 * answer and never as "false".  Nothing here is measured: measurements live in
 * measure/measure.h, so that a snapshot (--root) is diagnosed from the same
 * struct as the live machine.
 */
#ifndef CD_FACTS_H
#define CD_FACTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_NAME_MAX 48
#define CD_MAX_CLOCKSOURCES 16
#define CD_LINE_MAX 240
#define CD_MAX_EVENTS 64
#define CD_MAX_CPUID_LEAVES 96

/* ---- clocksource (sysfs) ---- */
struct cd_clocksource {
	bool have_current;
	char current[CD_NAME_MAX];
	bool have_available;
	int n_available;
	char available[CD_MAX_CLOCKSOURCES][CD_NAME_MAX];
	/* No sysfs (a container, a log-only snapshot): current is the kernel
	 * log's last "Switched to clocksource" line, or the watchdog of a later
	 * report that demoted the TSC (probe.c); log_event its index in
	 * klog.events.  Every switch, at boot or through sysfs, is logged by
	 * clocksource_select() (kernel/time/clocksource.c), so the last one in
	 * the log is the one in force unless the log was cleared since. */
	bool from_log;
	int log_event;
};

/* ---- CPU (/proc/cpuinfo) ---- */
enum cd_cpu_flag {
	CD_CPU_TSC = 1u << 0,
	CD_CPU_CONSTANT_TSC = 1u << 1,
	CD_CPU_NONSTOP_TSC = 1u << 2,
	CD_CPU_RDTSCP = 1u << 3,
	CD_CPU_TSC_KNOWN_FREQ = 1u << 4,
	CD_CPU_TSC_RELIABLE = 1u << 5,
	CD_CPU_TSC_ADJUST = 1u << 6,
	CD_CPU_HYPERVISOR = 1u << 7,
};

struct cd_cpu {
	bool have_cpuinfo;
	char arch[16];             /* "x86_64", "aarch64", ... from uname or cpuinfo */
	char vendor[CD_NAME_MAX];  /* vendor_id (x86) or CPU implementer (arm64) */
	char model[CD_LINE_MAX / 2];  /* model name */
	int count;                 /* processors listed; 0 if unknown */
	unsigned flags;            /* enum cd_cpu_flag, as listed for processor 0 */
	/* A flag missing on some CPUs but present on others is itself evidence:
	 * flags_all is the AND over every processor. */
	unsigned flags_all;
	double mhz;                /* "cpu MHz" of processor 0, 0 if absent */
};

/* ---- CPUID, live or from cpuid.txt (Debian `cpuid -r -1` format) ---- */
struct cd_cpuid_leaf {
	uint32_t leaf, subleaf;
	uint32_t eax, ebx, ecx, edx;
};

struct cd_cpuid {
	bool have;                 /* any leaf known */
	int n;
	struct cd_cpuid_leaf leaves[CD_MAX_CPUID_LEAVES];
	/* Derived by cd_cpuid_derive(); each has_ flag says the leaf was present. */
	bool has_invariant;        /* leaf 0x80000007 known */
	bool invariant_tsc;        /* 0x80000007 EDX[8] */
	bool hypervisor_bit;       /* 1:ECX[31] */
	char hv_signature[13];     /* from 0x40000000 (or 0x40000100.. for Xen) */
	uint32_t hv_base;          /* the leaf where the signature was found */
	uint32_t hv_tsc_khz;       /* 0x40000010 EAX, when the hypervisor offers it; 0 if not */
	uint32_t l15_denominator, l15_numerator, l15_crystal_hz; /* 0x15 EAX, EBX, ECX */
	uint32_t l16_base_mhz;     /* 0x16 EAX */
};

/* ---- hypervisor: every source, and the conclusion ---- */
enum cd_hv {
	CD_HV_UNKNOWN = 0, /* not enough evidence either way */
	CD_HV_NONE,        /* evidence of bare metal (cpuinfo without "hypervisor") */
	CD_HV_KVM,
	CD_HV_VMWARE,
	CD_HV_VIRTUALBOX,
	CD_HV_XEN,
	CD_HV_HYPERV,
	CD_HV_QEMU_TCG,
	CD_HV_BHYVE,
	CD_HV_ACRN,
	CD_HV_OTHER,
};

struct cd_hypervisor {
	enum cd_hv kind;
	char from[CD_NAME_MAX];           /* which source decided: "cpuid", "dmi", ... */
	char cpuid_signature[13];
	char sys_hypervisor_type[CD_NAME_MAX];
	char dmi_sys_vendor[CD_NAME_MAX];
	char dmi_product_name[CD_NAME_MAX];
	/* DMI's chassis asset tag: Azure writes one constant to every VM */
	char dmi_chassis_asset_tag[CD_NAME_MAX];
	char klog_detected[CD_NAME_MAX];  /* "Hypervisor detected: NAME" */
	char klog_dmi[CD_LINE_MAX / 2];   /* the log's "DMI: ..." line, when sysfs has no DMI */
	/* The paravirtual interface the guest sees when it is another
	 * hypervisor's (VirtualBox offering KVM's or Hyper-V's, Xen or KVM
	 * offering Hyper-V's); CD_HV_UNKNOWN when it is kind's own. */
	enum cd_hv interface;
	/* Name for people, set by cd_hypervisor_decide(): cd_hv_display(kind),
	 * or more precise when kind alone cannot say it ("QEMU" for a QEMU guest
	 * not known to be KVM, the kernel's name for an unlisted hypervisor). */
	char display[CD_NAME_MAX];
	/* The platform's other signs, for people and the advice: the x86
	 * paravirt banner's name ("bare hardware", "KVM"), the device tree's
	 * machine model (kernel log or /proc/device-tree/model). */
	char klog_paravirt[CD_NAME_MAX];
	char machine_model[CD_NAME_MAX];
	/* Where the user stands, when it is not a machine they manage: a
	 * container or sandbox ("docker", "lxc", "podman", "gvisor", "wsl1",
	 * ...), and a VM that a desktop product runs for them ("Docker
	 * Desktop's LinuxKit VM", "WSL 2"); "" when none is known.  Either way
	 * the lasting fix is on the host. */
	char container[CD_NAME_MAX];
	char utility_vm[CD_NAME_MAX];
};

/* ---- kernel: release, command line, uptime ---- */
struct cd_kernel {
	bool have_release;
	char release[CD_NAME_MAX * 2];
	int ver_major, ver_minor, ver_patch; /* -1 when unknown */
	bool have_cmdline;
	char cmdline[4096];     /* x86 allows 2048 bytes, some architectures more */
	/* Parsed from the command line (the last occurrence wins, as in the kernel). */
	char cmd_clocksource[CD_NAME_MAX];   /* clocksource=NAME, "" if absent */
	char cmd_clocksource_word[CD_NAME_MAX + 16]; /* the word that set it, as written: "clocksource=hpet",
	                                        or the deprecated "clock=pmtmr" (cmd_clocksource "acpi_pm") */
	bool cmd_tsc_reliable, cmd_tsc_nowatchdog, cmd_tsc_unstable, cmd_tsc_noirqtime;
	bool cmd_notsc, cmd_no_kvmclock, cmd_no_kvmclock_vsyscall, cmd_clocksource_failover;
	char cmd_tsc_ignored[CD_NAME_MAX];   /* a tsc= value the kernel does not recognise ("reliable,noirqtime") */
	/* acpi=off takes away both the ACPI PM timer and the HPET (found
	 * through an ACPI table); hpet=disable and nohpet the HPET alone. */
	bool cmd_acpi_off, cmd_nohpet;
	bool have_uptime;
	double uptime_s;
};

/* ---- kernel log events ---- */
enum cd_event_kind {
	CD_EV_CS_SWITCHED = 1,     /* name = new clocksource */
	CD_EV_TSC_UNSTABLE,        /* name = reason ("clocksource watchdog", "TSCs unsynchronized", ...) */
	CD_EV_TSC_SYNC_HEADER,     /* "TSC synchronization [CPU#a -> CPU#b]:"  cpu_a, cpu_b */
	CD_EV_TSC_WARP,            /* "Measured N cycles TSC warp between CPUs": value = N; cpu_a/b from header */
	CD_EV_TSC_SYNC_SKIPPED,    /* "Skipped synchronization checks as TSC is reliable." */
	CD_EV_WATCHDOG_SKEW,       /* watchdog on CPU cpu_a marking name unstable; name2 = watchdog;
	                              value = wd_nsec, value2 = cs_nsec when printed (5.x+), else 0;
	                              wd_cycles/cs_cycles from the now/last lines */
	CD_EV_CS_UNSTABLE_DELTA,   /* old "Clocksource NAME unstable (delta = N ns)": value = N */
	CD_EV_WD_READBACK_EXCESSIVE, /* "wd-X-wd excessive read-back delay of N ns vs. limit of M ns": value N, value2 M */
	CD_EV_WD_NOISE,            /* read-back delay skipped / long readout interval: nothing demoted */
	CD_EV_TSC_BROKEN_BIOS,     /* "TSC found unstable after boot, most likely due to broken BIOS" */
	CD_EV_SCHED_CLOCK_UNSTABLE,
	CD_EV_TSC_ADJUST,          /* firmware wrote TSC_ADJUST; cpu_a, value = the value if printed */
	CD_EV_TSC_CALIBRATION,     /* calibration trouble: "Fast TSC calibration failed", "Unable to calibrate against PIT", ... */
	CD_EV_TSC_FREQ,            /* name = "detected", "refined" or "hypervisor"; khz = frequency */
	CD_EV_HYPERVISOR,          /* name = "KVM", "VMware", ... */
	CD_EV_XEN_NO_VDSO,         /* "xen: VDSO_CLOCKMODE_PVCLOCK not supported" (or VCLOCK_PVCLOCK) */
	CD_EV_ARCH_TIMER_WORKAROUND, /* arm64 "arch_timer: Enabling ... workaround": name = erratum */
	CD_EV_KERNEL_VERSION,      /* "Linux version X ...": name = X (tells the log reaches boot) */
	CD_EV_CMDLINE,             /* "Command line: ..." (tells the log reaches boot) */
	CD_EV_DMI,                 /* "DMI: VENDOR PRODUCT/BOARD, BIOS ..." or "Hardware name: ..." */
	CD_EV_X86_32BIT,           /* a line only a 32-bit x86 kernel prints ("HIGHMEM available",
	                              "Compat vDSO mapped to ffffe000") */
	CD_EV_CS_REGISTERED,       /* "clocksource: NAME: mask: 0x... max_cycles: ...": name = NAME */
	CD_EV_PARAVIRT_BOOT,       /* x86 "Booting paravirtualized kernel on NAME": name = "bare hardware", "KVM", ... */
	CD_EV_MACHINE_MODEL,       /* device tree "Machine model: NAME" (model, else compatible): name = NAME */
	CD_EV_ARM_TIMER,           /* arm/arm64 "arch_timer: ..." state: name = "running" or "refused" */
	CD_EV_SANDBOX,             /* a sandbox's own kernel log ("Starting gVisor..."): name = its kind */
	CD_EV_ARCH_TIMER_TRAP,     /* arm64 "arch_timer: CPU%d: Trapping CNTVCT access": user-space reads
	                              of the counter trap; the first CPU's line only (cpu_a) */
};

struct cd_event {
	enum cd_event_kind kind;
	double ts;          /* seconds since boot from the log prefix; < 0 if the line had none */
	int cpu_a, cpu_b;   /* -1 if not applicable */
	int64_t value, value2;
	/* Watchdog events: the counters' advance over the watchdog interval, from
	 * the wd_now/wd_last and cs_now/cs_last lines (masked); 0 if not printed. */
	uint64_t wd_cycles, cs_cycles;
	uint32_t khz;
	char name[CD_NAME_MAX];
	char name2[CD_NAME_MAX];
	char line[CD_LINE_MAX]; /* the message as logged (prefix stripped), truncated */
	/* Watchdog events: the continuation lines that carry the kernel's own
	 * numbers (wd_nsec/cs_nsec, wd_now/cs_now, "skewed N ns ... interval of
	 * M ns"), as logged (runs of blanks made one), one per '\n', so that
	 * evidence quotes them; a line that does not fit is cut. */
	char detail[2 * CD_LINE_MAX];
};

enum cd_klog_source {
	CD_KLOG_NONE = 0,
	CD_KLOG_FILE,     /* dmesg.txt of a snapshot */
	CD_KLOG_RING,     /* syslog(2) ring buffer */
	CD_KLOG_JOURNAL,  /* journalctl -k -b */
};

struct cd_klog {
	enum cd_klog_source source;
	bool readable;
	char why_not[CD_LINE_MAX]; /* when !readable, or a note about partial reads */
	bool reaches_boot;         /* the log still holds the boot messages */
	long lines;                /* lines read */
	int n_events;
	bool truncated_events;     /* more events than CD_MAX_EVENTS: the rest dropped */
	struct cd_event events[CD_MAX_EVENTS];
};

/* ---- NTP discipline (adjtimex, read only; a snapshot's adjtimex.txt) ---- */
struct cd_ntp {
	bool have;
	bool synchronized;   /* the kernel clock is disciplined (not STA_UNSYNC, not TIME_ERROR) */
	int state;           /* adjtimex return value */
	long status;         /* timex.status */
	double freq_ppm;
	long maxerror_us, esterror_us;
};

/* ---- the distribution (/etc/os-release), for the lasting fix ---- */
enum cd_os_family {
	CD_OS_UNKNOWN = 0,
	CD_OS_DEBIAN,    /* Debian, Ubuntu and derivatives: /etc/default/grub.d, update-grub */
	CD_OS_REDHAT,    /* RHEL, CentOS, Fedora, Rocky, Alma, Amazon Linux: grubby */
	CD_OS_SUSE,      /* /etc/default/grub, grub2-mkconfig */
	CD_OS_OTHER,
};

struct cd_os {
	enum cd_os_family family;
	char id[CD_NAME_MAX];         /* os-release ID, or guessed from the kernel release */
	char pretty[CD_NAME_MAX * 2]; /* PRETTY_NAME */
	/* The release, for advice of its era: VERSION_ID ("7", "8.04", "6.10")
	 * from os-release, lsb-release, debian_version or redhat-release; ""
	 * when unknown (guessed from the kernel release: the family only). */
	char version[16];
	bool guessed;                 /* family guessed from the kernel release */
};

/* ---- all facts ---- */
struct cd_facts {
	char root[PATH_MAX]; /* "/" for the live machine */
	bool live;
	struct cd_clocksource cs;
	struct cd_cpu cpu;
	struct cd_cpuid cpuid;
	struct cd_hypervisor hv;
	struct cd_kernel kernel;
	struct cd_klog klog;
	struct cd_ntp ntp;
	struct cd_os os;
	/* The TSC verdict `clockdoctor tsc` saved for this boot (verdictfact.c;
	 * none when of another boot); saved_verdict_from says where it was
	 * read, for people.  Zero is none: facts made by hand hold no evidence. */
	enum cd_saved_verdict {
		CD_SAVED_NONE = 0, CD_SAVED_SOUND, CD_SAVED_UNKNOWN, CD_SAVED_UNSOUND,
	} saved_verdict;
	char saved_verdict_from[CD_LINE_MAX / 2];
	/* What could not be read, one short note each ("cpuinfo: missing", ...),
	 * so that the output can say what was unknown. */
	int n_unknown;
	char unknown[16][CD_LINE_MAX / 2];
};

#endif
