/* SPDX-License-Identifier: MIT */
/*
 * tsc.h: can this machine's counter be trusted, measured rather than
 * assumed (`clockdoctor tsc`, and `check --deep`).
 *
 * The counter is the TSC on x86 and the generic timer (cntvct_el0) on
 * arm64.  cd_tsc_measure() takes the numbers on the live machine: the
 * frequency against CLOCK_MONOTONIC_RAW and CLOCK_MONOTONIC with error bars,
 * the perf_event page's conversion, and the cross-CPU warp test of
 * lib/tscsync.h for every pair of allowed CPUs (or each against the first,
 * quick).  cd_tsc_judge() (diagnose/tscjudge.h) is a pure function of the
 * facts and those numbers: it lists every frequency source with its
 * disagreement, runs the four tests (flags, frequency, sync, drift) and gives
 * the verdict, so unit tests can feed it a machine without a TSC, one CPU,
 * or a warp.  This header holds the numbers and the judgement's fields.
 *
 * Verdict (docs/tsc.md): unsound when a test failed; unknown when one could
 * not be run or concluded (one CPU, pinning refused, no counter); sound
 * otherwise.  The numbers are the exit status of `clockdoctor tsc`.
 */
#ifndef CD_MEASURE_TSC_H
#define CD_MEASURE_TSC_H

#include "probe/facts.h"

#include "counter.h"
#include "readcost.h"
#include "tscfreq.h"
#include "tscsync.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

enum cd_tsc_verdict {
	CD_TSC_SOUND = 0,
	CD_TSC_UNKNOWN = 1,
	CD_TSC_UNSOUND = 2,
};

enum cd_tsc_status {
	CD_TSC_PASS = 0,
	CD_TSC_UNTESTED,   /* could not be run, or did not conclude: says why */
	CD_TSC_FAIL,
};

enum cd_tsc_test_id {
	CD_TSC_T_FLAGS,
	CD_TSC_T_FREQ,
	CD_TSC_T_SYNC,
	CD_TSC_T_DRIFT,
	CD_TSC_N_TESTS,
};

/* Limits of the verdict (docs/tsc.md). */
#define CD_TSC_FREQ_MAX_ERR_PPM 100.0   /* "frequency known" means within this */
#define CD_TSC_RATE_MAX_PPM 1000.0      /* the kernel's frequency vs measured */

struct cd_tsc_test {
	enum cd_tsc_status status;
	char detail[240];
};

/* A frequency source, listed even when absent (note says why). */
enum cd_tsc_src {
	CD_SRC_MEASURED,      /* against CLOCK_MONOTONIC_RAW */
	CD_SRC_KLOG_REFINED,  /* "tsc: Refined TSC clocksource calibration" */
	CD_SRC_KLOG_DETECTED, /* "tsc: Detected N MHz processor" */
	CD_SRC_KLOG_HV,       /* "TSC freq read from hypervisor" */
	CD_SRC_CPUID_15,      /* crystal ratio */
	CD_SRC_CPUID_16,      /* base MHz, coarse */
	CD_SRC_HV_LEAF,       /* hypervisor leaf 0x40000010 EAX (kHz) */
	CD_SRC_PERF,          /* perf_event mmap page time_mult/time_shift */
	CD_SRC_CNTFRQ,        /* arm64 cntfrq_el0 */
	CD_N_SRC,
};

struct cd_tsc_freq {
	const char *name;     /* stable: "measured", "kernel-refined", "cpuid-0x15", ... */
	const char *label;    /* for people: "CPUID 0x15 crystal ratio" */
	bool have;
	double hz;
	double precision_ppm; /* the source's own resolution (0x16: 1 MHz) */
	bool have_diff;
	double diff_ppm;      /* (hz - measured) / measured */
	char note[120];       /* why absent, or how it was computed */
};

struct cd_tsc_pair {
	int cpu_a, cpu_b;
	int err;              /* -errno: pinning refused, ...; 0 when run */
	struct fc_sync_result r;
};

/* What cd_tsc_measure() needs to know. */
struct cd_tsc_opts {
	double seconds;       /* the frequency and drift interval (-d) */
	bool quick;           /* each CPU against the first, not every pair */
	double pair_s;        /* each pair runs about this long */
	double sync_budget_s; /* all pairs together, about; pair_s shrinks to fit */
	/* Set (by a signal handler) to end early: the pairs not yet run are
	 * left -EINTR, the frequency interval ends then.  NULL: never. */
	const volatile sig_atomic_t *stop;
};

/* The numbers, then the judgement. */
struct cd_tsc_report {
	/* The frequency was measured against kernel clocks that read this very
	 * counter: it shows consistency with the kernel's calibration only. */
	bool freq_self_referenced;
	/* ---- measured (or set by hand in tests) ---- */
	struct fc_counter_info counter;
	bool measured;                 /* cd_tsc_measure ran on this machine */
	int cpus_online;               /* 0 unknown */
	int cpus_allowed;              /* in this process's affinity mask */
	bool quick;
	int ref_cpu;                   /* the first allowed CPU */
	int n_pairs;
	struct cd_tsc_pair *pairs;     /* malloc'd; cd_tsc_report_free */
	bool sync_truncated;           /* more pairs than could be stored */
	double pair_s;
	int freq_err;                  /* -errno of the measurement, 0 ok */
	struct fc_freq_estimate raw;   /* counter against CLOCK_MONOTONIC_RAW */
	struct fc_freq_estimate mono;  /* against CLOCK_MONOTONIC */
	bool migrated;                 /* start and end samples on different CPUs */
	int perf_err;
	int perf_paranoid;             /* kernel.perf_event_paranoid when perf failed; -99 unknown */
	struct fc_perf_time perf;
	double elapsed_s;
	bool interrupted;              /* opts->stop ended it before its end */
	struct fc_read_cost read_cost; /* one counter read against the kernel's clock (libfastclock's
	                                  measurement: a read that traps costs about a system call) */

	/* ---- judged (cd_tsc_judge) ---- */
	struct cd_tsc_freq src[CD_N_SRC];
	double ref_hz;                 /* the frequency a clock would be told: the kernel's */
	const char *ref_name;          /* which source that is; NULL when none */
	bool have_drift;
	double drift_raw_ppm, drift_mono_ppm, drift_err_ppm;
	uint64_t worst_back;           /* largest backward step over all pairs (cycles) */
	int worst_a, worst_b;
	uint64_t bound_cycles;         /* every tested CPU within +-this of ref_cpu */
	bool have_bound;
	int pairs_run, pairs_failed, pairs_refused;
	int pairs_timed_out;             /* pairs not run: the whole test's deadline passed */
	int pairs_interrupted;         /* pairs not run: the run was interrupted (-EINTR) */
	int pairs_short;               /* run without a warp, but cut short */
	struct cd_tsc_test test[CD_TSC_N_TESTS];
	enum cd_tsc_verdict verdict;
	char summary[200];             /* one line: the verdict and its main reason */
	int n_reasons;
	char reasons[8][240];          /* failed (or untested) tests, then kernel notes */
	int n_kernel_notes;
	char kernel_notes[4][240];     /* what the kernel log says about the TSC */
};

/* Measure on this machine within about opts->seconds (more when many CPU
 * pairs are tested).  f gives the CPU count.  Never fails: what cannot be
 * measured is left with its -errno for the judgement to explain. */
void cd_tsc_measure(const struct cd_facts *f, const struct cd_tsc_opts *opts, struct cd_tsc_report *t);

/* What cd_tsc_measure() will do here: the CPUs this process may use, the
 * pairs it will test and about how long it will take (the start-up line). */
void cd_tsc_plan(const struct cd_tsc_opts *o, int *allowed, long *pairs, double *est_s);

void cd_tsc_report_free(struct cd_tsc_report *t);

/* Defaults: `tsc` (1 s, every pair) and `check --deep` (short, quick). */
void cd_tsc_opts_default(struct cd_tsc_opts *o, double seconds, bool quick);
void cd_tsc_opts_deep(struct cd_tsc_opts *o);

#endif
