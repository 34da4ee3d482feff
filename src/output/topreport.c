/* SPDX-License-Identifier: MIT */
/*
 * topreport.c: one interval of `clockdoctor top`, as text or as JSON.
 *
 * The two kinds of figure are kept apart in both: the totals are exact
 * (counted by the kernel), the per-process split is sampled and scaled by
 * the sample period, so the text says "estimated" and the JSON has
 * "estimated": true on each process, and the exact figure of a -p process
 * next to its estimate.
 */
#include "output/topreport.h"
#include "output/jsonw.h"
#include "output/wrap.h"

#include <inttypes.h>
#include <string.h>

static uint64_t exact_sum(const uint64_t v[CD_TSYS_N])
{
	uint64_t s = 0;
	for (int i = 0; i < CD_TSYS_N; i++)
		s += v[i];
	return s;
}

static double per_s(double n, double secs)
{
	return secs > 0 ? n / secs : 0;
}

/* The CPU share as "0.61% of a CPU" from ns spent a second. */
static double cpu_percent(double ns_s)
{
	return ns_s / 1e7;
}

/* The interval's exact totals, per system call: every process's, or with
 * -p its threads' (false when those could not be counted). */
static bool totals(const struct cd_top_interval *iv, double v[CD_TSYS_N])
{
	for (int s = 0; s < CD_TSYS_N; s++) {
		if (iv->pid > 0 && iv->pid_exact[s] < 0)
			return false;
		v[s] = iv->pid > 0 ? (double)iv->pid_exact[s] : (double)iv->exact[s];
	}
	return true;
}

static void text_header(FILE *out, const struct cd_top_interval *iv)
{
	char when[16];
	struct tm tm;
	localtime_r(&iv->when, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	double v[CD_TSYS_N], all = 0;
	bool known = totals(iv, v);
	for (int s = 0; known && s < CD_TSYS_N; s++)
		all += v[s];
	double rate = per_s(all, iv->secs);
	/* The headline within 80 columns: the total on the first line, the
	 * calls' split after it, or on the next line when it does not fit
	 * there (a name and its rate are never parted). */
	char line[256], split[CD_TSYS_N][48];
	int nsplit = 0;
	if (iv->pid > 0 && !known) {
		snprintf(line, sizeof line, "%s  time system calls of PID %d: not counted (its threads' counters "
		         "could not be opened)", when, iv->pid);
	} else {
		if (iv->pid > 0)
			snprintf(line, sizeof line, "%s  time system calls of PID %d (exact, its threads): %.0f/s", when,
			         iv->pid, rate);
		else
			snprintf(line, sizeof line, "%s  time system calls (exact, every process): %.0f/s", when, rate);
		for (int s = 0; s < CD_TSYS_N; s++)
			if (iv->traced[s] && v[s] > 0)
				snprintf(split[nsplit++], sizeof split[0], "%s %.0f/s", cd_tsys_name((enum cd_tsys)s),
				         per_s(v[s], iv->secs));
	}
	size_t split_cols = 0;
	for (int i = 0; i < nsplit; i++)
		split_cols += strlen(split[i]) + 2;
	bool inline_split = nsplit && strlen(line) + 1 + split_cols <= CD_TEXT_WIDTH;
	size_t col = 10;
	if (inline_split) {
		fputs(line, out);
		col = strlen(line);
	} else {
		cd_wrap_with(out, line, &(struct cd_wrap_opts){ .lead = "", .indent = 10 });
		if (nsplit)
			fprintf(out, "%10s", "");
	}
	/* "(clock_gettime N/s, gettimeofday N/s)": a new line only between two */
	for (int i = 0; i < nsplit; i++) {
		size_t w = strlen(split[i]) + (i == 0) + 1;  /* its "(", and its "," or ")" */
		if (i > 0 && col + 1 + w > CD_TEXT_WIDTH) {
			fprintf(out, ",\n%10s", "");
			col = 10;
		} else if (i > 0 || inline_split) {
			fputs(i > 0 ? ", " : " ", out);
			col += i > 0 ? 2 : 1;
		}
		fprintf(out, "%s%s", i == 0 ? "(" : "", split[i]);
		col += strlen(split[i]) + (i == 0);
	}
	if (nsplit)
		fputs(")\n", out);
	if (iv->pid <= 0 || known) {
		if (iv->call_ns > 0)
			fprintf(out, "  each one missed the vDSO: ~%.0f ns a call, %.2f%% of a CPU in all\n",
			        iv->call_ns, cpu_percent(rate * iv->call_ns));
		else
			fprintf(out, "  each one missed the vDSO (the cost of one could not be measured)\n");
	}
	if (iv->pid > 0)
		fprintf(out, "  every process: %.0f/s\n", per_s((double)exact_sum(iv->exact), iv->secs));
}

void cd_top_print_text(FILE *out, const struct cd_top_interval *iv)
{
	const struct cd_top_table *t = iv->t;
	text_header(out, iv);
	/* The clock ids last, wrapped under their heading: a process that
	 * uses many keeps its CPU% in view. */
	fprintf(out, "%-8s %-16s %10s %7s  %s\n", "PID", "COMM", iv->exact_procs ? "CALLS/s" : "CALLS/s~", "CPU%~",
	        iv->exact_procs ? "CLOCK IDS~" : "CLOCK IDS");
	size_t rows = iv->rows > 0 && (size_t)iv->rows < t->n ? (size_t)iv->rows : t->n;
	for (size_t i = 0; i < rows; i++) {
		const struct cd_top_proc *p = &t->p[i];
		char clocks[512], spaced[1024], lead[64];
		cd_top_clock_list(p, clocks, sizeof clocks);
		size_t k = 0;
		for (const char *c = clocks; *c && k + 2 < sizeof spaced; c++) {
			spaced[k++] = *c;
			if (*c == ',')
				spaced[k++] = ' ';  /* a place to break the line */
		}
		spaced[k] = '\0';
		int cols = snprintf(lead, sizeof lead, "%-8d %-16s %10.0f %7.2f  ", p->pid, p->comm, p->rate,
		                    cpu_percent(p->cost_ns_s));
		cd_wrap_with(out, spaced, &(struct cd_wrap_opts){ .lead = lead, .indent = cols > 46 ? cols : 46 });
	}
	if (t->n > rows)
		fprintf(out, "  (%zu more processes)\n", t->n - rows);
	if (t->n == 0)
		fprintf(out, "  (no process made a time system call that was sampled)\n");
	char note[400];
	if (iv->exact_procs)
		snprintf(note, sizeof note, "calls per process: exact (counted in the kernel); ~ clock ids and CPU%% "
		         "estimated: %" PRIu64 " samples, one per %" PRIu64 " calls%s", t->samples, iv->period,
		         iv->period == 1 ? " (every call)" : "");
	else
		snprintf(note, sizeof note, "~ estimated: %" PRIu64 " samples, one per %" PRIu64 " calls%s; totals "
		         "above are exact", t->samples, iv->period, iv->period == 1 ? " (every call)" : "");
	cd_wrap(out, note, 2, 0);
	if (t->lost) {
		snprintf(note, sizeof note, "%" PRIu64 " samples lost: the kernel's buffer was full before top read "
		         "it; the split above is from the samples kept (each process's share of them, times the exact "
		         "totals)", t->lost);
		cd_wrap(out, note, 2, 0);
	}
	fputc('\n', out);
}

static void json_syscalls(struct cd_jsonw *w, const char *key, const double v[CD_TSYS_N],
                          const bool traced[CD_TSYS_N], double secs)
{
	cd_jsonw_begin_object(w, key);
	for (int s = 0; s < CD_TSYS_N; s++)
		if (traced[s])
			cd_jsonw_number(w, cd_tsys_name((enum cd_tsys)s), per_s(v[s], secs));
	cd_jsonw_end_object(w);
}

static void json_process(struct cd_jsonw *w, const struct cd_top_proc *p,
                         const struct cd_top_interval *iv)
{
	cd_jsonw_begin_object(w, NULL);
	cd_jsonw_int(w, "pid", p->pid);
	cd_jsonw_string(w, "comm", p->comm);
	cd_jsonw_bool(w, "estimated", !p->exact);
	cd_jsonw_number(w, "calls", p->total);
	cd_jsonw_number(w, "calls_per_s", p->rate);
	cd_jsonw_int(w, "samples", (long long)p->samples);
	json_syscalls(w, "syscalls_per_s", p->calls, iv->traced, iv->secs);
	cd_jsonw_begin_object(w, "clock_ids_per_s");
	for (int c = 0; c < CD_TCLOCK_N; c++)
		if (p->clocks[c] > 0)
			cd_jsonw_number(w, cd_tclock_name(c), per_s(p->clocks[c], iv->secs));
	cd_jsonw_end_object(w);
	cd_jsonw_number(w, "cpu_ns_per_s", p->cost_ns_s);
	cd_jsonw_number(w, "cpu_percent", cpu_percent(p->cost_ns_s));
	cd_jsonw_end_object(w);
}

/* "total": the exact totals, every process's or with -p its threads';
 * "every_process" beside it with -p. */
static void json_exact(struct cd_jsonw *w, const struct cd_top_interval *iv)
{
	double v[CD_TSYS_N], all = 0;
	bool known = totals(iv, v);
	for (int s = 0; known && s < CD_TSYS_N; s++)
		all += v[s];
	cd_jsonw_begin_object(w, "total");
	cd_jsonw_bool(w, "estimated", false);
	if (iv->pid > 0)
		cd_jsonw_int(w, "pid", iv->pid);
	else
		cd_jsonw_null(w, "pid");
	if (known) {
		cd_jsonw_int(w, "calls", (long long)all);
		cd_jsonw_number(w, "calls_per_s", per_s(all, iv->secs));
		json_syscalls(w, "syscalls_per_s", v, iv->traced, iv->secs);
		cd_jsonw_number(w, "cpu_percent", cpu_percent(per_s(all, iv->secs) * iv->call_ns));
	} else {
		cd_jsonw_null(w, "calls");
		cd_jsonw_null(w, "calls_per_s");
		cd_jsonw_null(w, "syscalls_per_s");
		cd_jsonw_null(w, "cpu_percent");
	}
	cd_jsonw_end_object(w);
	if (iv->pid <= 0)
		return;
	uint64_t every = exact_sum(iv->exact);
	cd_jsonw_begin_object(w, "every_process");
	cd_jsonw_int(w, "calls", (long long)every);
	cd_jsonw_number(w, "calls_per_s", per_s((double)every, iv->secs));
	cd_jsonw_end_object(w);
}

void cd_top_print_json(FILE *out, const struct cd_top_interval *iv)
{
	struct cd_jsonw w;
	cd_jsonw_open(&w, out, 0, "top", -1);
	cd_jsonw_int(&w, "report", iv->index);
	cd_jsonw_number(&w, "interval", iv->interval);
	cd_jsonw_int(&w, "time", (long long)iv->when);
	cd_jsonw_number(&w, "seconds", iv->secs);
	cd_jsonw_number(&w, "call_ns", iv->call_ns);
	json_exact(&w, iv);
	cd_jsonw_int(&w, "sample_period", (long long)iv->period);
	cd_jsonw_int(&w, "samples", (long long)iv->t->samples);
	cd_jsonw_int(&w, "lost", (long long)iv->t->lost);
	cd_jsonw_bool(&w, "processes_exact", iv->exact_procs);
	cd_jsonw_begin_array(&w, "processes");
	for (size_t i = 0; i < iv->t->n; i++)
		json_process(&w, &iv->t->p[i], iv);
	cd_jsonw_end_array(&w);
	cd_jsonw_end_object(&w);
	fputc('\n', out);
	fflush(out);
}
