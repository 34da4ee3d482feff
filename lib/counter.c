/* SPDX-License-Identifier: MIT */
/*
 * counter.c: can this process read the counter of counter.h?
 *
 * Reading a counter that is not there, or that the process was told to trap
 * on, kills the process with SIGILL or SIGSEGV; so every caller asks here
 * first, and gets -errno rather than a crash.
 */
#include "counter.h"

#include <errno.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/prctl.h>

static int counter_usable(void)
{
	unsigned a, b, c, d;
	/* CPUID 1:EDX[4] is the TSC; a CPU without cpuid (i486) has none. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & (1u << 4)))
		return -ENODEV;
#ifdef PR_GET_TSC
	int mode = 0;
	/* PR_TSC_SIGSEGV: rdtsc faults in this process (set by a sandbox). */
	if (prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV)
		return -EPERM;
#endif
	return 0;
}
#elif defined(__aarch64__)
static int counter_usable(void)
{
	/* Linux lets EL0 read cntvct_el0 (CNTKCTL_EL1.EL0VCTEN), and traps and
	 * emulates it when an erratum workaround needs to: always readable. */
	return 0;
}
#else
static int counter_usable(void)
{
	return -ENOTSUP;
}
#endif

void fc_counter_probe(struct fc_counter_info *info)
{
	info->kind = FC_COUNTER_KIND;
	info->usable = counter_usable();
	switch (info->kind) {
	case FC_COUNTER_X86_TSC: info->name = "TSC"; break;
	case FC_COUNTER_ARM64_CNTVCT: info->name = "cntvct_el0"; break;
	default: info->name = "none"; break;
	}
	info->freq_register_hz = info->usable == 0 ? fc_counter_freq_register() : 0;
}

const char *fc_counter_kind_name(int kind)
{
	switch (kind) {
	case FC_COUNTER_X86_TSC: return "x86-tsc";
	case FC_COUNTER_ARM64_CNTVCT: return "arm64-cntvct";
	default: return "none";
	}
}
