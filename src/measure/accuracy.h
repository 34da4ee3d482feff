/* SPDX-License-Identifier: MIT */
/*
 * accuracy.h: libfastclock held against the kernel's clocks, reading by
 * reading (`clockdoctor accuracy`).
 *
 * Each reading of the library is bracketed by two readings of the kernel's
 * clock: k1, f, k2.  The kernel's value at the instant of f lies in [k1, k2],
 * so the error of f is f - (k1 + k2) / 2 give or take (k2 - k1) / 2.  A
 * bracket much wider than usual (an interrupt, a preemption between the
 * reads) says little about f: such readings are counted and left out of the
 * error figures, but still checked against the library's own error bound
 * with their own uncertainty, so nothing escapes that check.
 *
 * Hand-made rdtsc clocks are usually tested the same way and judged by max
 * diff, average diff, and how many readings were off by more than 1 us and
 * by more than 10 us; the figures here are those, plus percentiles, the
 * frequency error, backward steps and the bound.
 *
 * The statistics (accstats.c) are pure functions of the samples, apart so
 * that they can be tested on known data; the threads that take the samples
 * are in accuracy.c.
 */
#ifndef CD_ACCURACY_H
#define CD_ACCURACY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- statistics (accstats.c) ---- */

/* |error| histogram: 1 ns bins below CD_ACC_LINEAR_NS, so that the median,
 * p99 and p99.9 are exact to the nanosecond where they matter (the targets
 * are 100 ns and 1 us); above, one bin per power of two. */
#define CD_ACC_LINEAR_NS 16384
#define CD_ACC_LOG_BINS 50

struct cd_acc_hist {
	uint64_t n;
	uint64_t lin[CD_ACC_LINEAR_NS];     /* value v in lin[v] */
	uint64_t log2[CD_ACC_LOG_BINS];     /* v in [2^(14+i), 2^(15+i)) in log2[i] */
};

void cd_acc_hist_add(struct cd_acc_hist *h, uint64_t v);
void cd_acc_hist_merge(struct cd_acc_hist *dst, const struct cd_acc_hist *src);

/* The nearest-rank percentile (0 < pct <= 100) of the values added; 0 for an
 * empty histogram.  *exact (may be NULL) is false when the rank falls in a
 * power-of-two bin, whose upper edge is then returned. */
uint64_t cd_acc_hist_percentile(const struct cd_acc_hist *h, double pct, bool *exact);

/* One bracketed reading: kernel, library, kernel, all in ns. */
struct cd_acc_sample {
	int64_t k1, f, k2;
};

/* The figures of one clock (fc_now_ns against CLOCK_MONOTONIC, or
 * fc_realtime_ns against CLOCK_REALTIME).  Errors are kept doubled (2f - k1 -
 * k2, "half-ns") so that the midpoint is exact in integers. */
struct cd_acc_stats {
	uint64_t reads;          /* every bracketed reading */
	uint64_t kept;           /* bracket no wider than the cut: in the error figures */
	uint64_t wide;           /* bracket wider than the cut: left out of them */
	int64_t max_abs2;        /* largest |2 err| of the kept readings */
	int64_t sum2, sum_abs2;  /* sums of 2 err and |2 err| of the kept readings */
	uint64_t over_1us;       /* kept readings with |err| > 1000 ns */
	uint64_t over_10us;      /* kept readings with |err| > 10000 ns */
	/* Against the library's bound b (every reading, wide ones too): f
	 * outside [k1 - b, k2 + b], i.e. |err| > b + the bracket's half-width.
	 * That the library broke its promise is then certain, not a matter of
	 * how the bracket fell. */
	uint64_t over_bound;
	int64_t worst_excess_ns; /* the largest distance of f beyond [k1 - b, k2 + b]; 0 none */
	uint64_t over_bound_naive; /* kept readings with |err| > b (the bracket ignored) */
	/* The kept reading farthest from the kernel, and the first reading
	 * beyond the bound, with the bound it was judged by: what to look at
	 * when a figure is bad.  has_*: false while there is none. */
	bool has_worst, has_first_over;
	struct cd_acc_sample worst, first_over;
	int64_t worst_bound_ns, first_over_bound_ns;
	struct cd_acc_hist abs_hist;     /* |err| of the kept readings, rounded to ns */
	struct cd_acc_hist bracket_hist; /* k2 - k1 of every reading */
};

/* Count one reading.  cut_ns: the widest bracket kept; bound_ns: the
 * library's error bound for this reading. */
void cd_acc_add(struct cd_acc_stats *st, const struct cd_acc_sample *s, int64_t cut_ns, int64_t bound_ns);

/* Add src's counts to dst (threads' figures into one). */
void cd_acc_merge(struct cd_acc_stats *dst, const struct cd_acc_stats *src);

/* The widest bracket kept, from the median bracket: twice the median, and
 * never under 20 ns, so that a counter that moves in 10 ns steps does not cut
 * half the readings. */
int64_t cd_acc_cut(int64_t median_bracket_ns);

/* Figures derived from the counts, in ns. */
struct cd_acc_summary {
	double max_abs_ns, mean_ns, mean_abs_ns;
	double median_ns, p99_ns, p999_ns;    /* of |err|, kept readings */
	bool percentiles_exact;               /* false: one fell in a power-of-two bin */
	double share_1us, share_10us;         /* over_1us / kept, over_10us / kept */
	double bracket_median_ns;             /* of every reading */
	double wide_share;                    /* wide / reads */
};

void cd_acc_summarize(const struct cd_acc_stats *st, struct cd_acc_summary *out);

/* A point for the frequency error: the narrowest bracket of a stretch. */
struct cd_acc_point {
	bool set;
	struct cd_acc_sample s;
};

/* Keep the narrower of *p and s. */
void cd_acc_point_offer(struct cd_acc_point *p, const struct cd_acc_sample *s);

/* The library's slope against the kernel's between two points, in ppm:
 * (f_b - f_a) / (k_b - k_a) - 1, k the bracket's midpoint; *err_ppm gets the
 * uncertainty from the two brackets' half-widths.  Returns NAN when the
 * points are not both set or not in order. */
double cd_acc_ppm(const struct cd_acc_point *a, const struct cd_acc_point *b, double *err_ppm);

/* ---- the measurement (accuracy.c) ---- */

/* How far back "the last 10 s" of the frequency error looks. */
#define CD_ACC_TAIL_NS 10000000000LL

struct cd_acc_params {
	double duration_s;
	int threads;
	const volatile sig_atomic_t *stop; /* set: end at the next block; may be NULL */
};

/* The run in CD_ACC_SLICES equal slices of time, thread 0's readings in
 * each: the error's extremes (kept readings) beside the bound they were
 * judged by, so that a report can draw the error over the run. */
#define CD_ACC_SLICES 120

struct cd_acc_slice {
	uint64_t kept;           /* kept readings in the slice; 0: none (min2, max2 unset) */
	int64_t min2, max2;      /* the least and greatest 2 err of them */
	int64_t bound_ns;        /* the largest bound a reading of the slice was judged by */
};

/* Fold thread 0's block of n readings, judged by bound_ns, into slices[]:
 * each reading by its k1 since start_ns, slice_ns a slice. */
void cd_acc_slices_add(struct cd_acc_slice *slices, const struct cd_acc_sample *s, int n, int64_t start_ns,
                       int64_t slice_ns, int64_t cut_ns, int64_t bound_ns);

/* The brackets taken before the run to set the cut, when they are cheap;
 * fewer when they are slow (accuracy.c). */
#define CD_ACC_CALIB_READS 20001

struct cd_acc_clock {
	const char *name;        /* "fc_now_ns", "fc_realtime_ns" */
	const char *kernel;      /* "CLOCK_MONOTONIC", "CLOCK_REALTIME" */
	int64_t start_ns;        /* the kernel clock when the threads started */
	int64_t cut_ns;          /* the widest bracket kept */
	int64_t calib_bracket_ns; /* median bracket before the run, which set the cut */
	int calib_reads;          /* brackets it took: fewer than 20001 when they were slow */
	struct cd_acc_stats st;  /* all threads */
	struct cd_acc_summary sum;
	uint64_t backward_thread;  /* a value below the same thread's previous one */
	uint64_t backward_cross;   /* a value below one another thread had already returned */
	int64_t backward_max_ns;
	/* The frequency error (thread 0's points): over the run and over its
	 * last 10 s (the whole run when shorter). */
	double ppm, ppm_err, ppm_span_s;
	double tail_ppm, tail_ppm_err, tail_span_s;
	struct cd_acc_slice slice[CD_ACC_SLICES]; /* thread 0's, over the run */
};

struct cd_acc_result {
	int threads;
	double elapsed_s;
	bool interrupted;
	int err;                 /* -errno: the measurement could not run (threads, memory) */
	const char *kernel_read; /* how the kernel's clocks were read */
	double kernel_read_ns;   /* median cost of one kernel read, measured before the run */
	struct cd_acc_clock mono, real;
	/* fc_info().error_bound_ns sampled at every block boundary */
	uint64_t bound_samples;
	int64_t bound_min_ns, bound_max_ns, bound_last_ns;
	uint64_t syncs_before, syncs_after;
	double slice_s;          /* the length of one of the clocks' slices */
};

/* Run the comparison.  result is large (histograms): allocate it. */
void cd_accuracy_run(const struct cd_acc_params *p, struct cd_acc_result *r);

/* Whether the library kept its promises: within its bound, never backwards. */
bool cd_accuracy_ok(const struct cd_acc_result *r);

#endif
