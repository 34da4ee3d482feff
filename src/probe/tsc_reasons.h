/* SPDX-License-Identifier: MIT */
/*
 * tsc_reasons.h: every reason the kernel has given for dropping the TSC as a
 * clocksource ("Marking TSC unstable due to <reason>"), in one table: what
 * kind of evidence it is, whether the kernel was right, and what it means
 * for the advice.  The log reader (klog_events.c, klog.c) knows the reasons
 * by it; the rules explain them from it.
 */
#ifndef CD_PROBE_TSC_REASONS_H
#define CD_PROBE_TSC_REASONS_H

#include <stdbool.h>
#include <stddef.h>

enum cd_tsc_reason_class {
	CD_REASON_SYNC = 1,     /* the TSCs disagree between CPUs (measured, or assumed) */
	CD_REASON_WATCHDOG,     /* the clocksource watchdog saw it drift at run time */
	CD_REASON_IDLE,         /* the TSC stops in deep idle states */
	CD_REASON_CPUFREQ,      /* the TSC's rate follows the CPU's frequency */
	CD_REASON_HYPERVISOR,   /* a hypervisor's guest code: the host gives no invariant TSC */
	CD_REASON_HOST,         /* a KVM host saw its own TSC go backwards */
	CD_REASON_FIRMWARE,     /* no usable frequency, or a machine the kernel lists as broken */
	CD_REASON_PARAMETER,    /* the command line (tsc=unstable) */
};

struct cd_tsc_reason {
	const char *text;       /* the reason as the kernel passes it to mark_tsc_unstable() */
	enum cd_tsc_reason_class cls;
	bool kernel_right;      /* the evidence says the TSC really is unusable here */
	const char *meaning;    /* in words, with what it means for the advice */
};

/* The table's row for a reason as the log gave it (a trailing '.' or a
 * 2.6.21-2.6.23 "due to: " colon already gone), or NULL when the kernel
 * never gave that reason. */
const struct cd_tsc_reason *cd_tsc_reason_find(const char *reason);

/* Whether text is a proper beginning of some reason in the table: a line
 * cut there (a mail client's wrap) may go on in the next one. */
bool cd_tsc_reason_is_beginning(const char *text, size_t n);

#endif
