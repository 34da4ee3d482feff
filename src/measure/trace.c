/* SPDX-License-Identifier: MIT */
/*
 * trace.c: the pure half of `clockdoctor top`: the tracepoint format file,
 * per-process aggregation of samples, the sample period, sorting.
 *
 * Nothing here touches the kernel, so each part is tested with recorded
 * text and made-up samples (tests/unit/test_top*.c).  The per-process
 * figures are estimates: each sample stands for `period` calls, the period
 * chosen so that sampling stays near a few thousand samples a second
 * whatever the call rate; the exact totals come from counting (tracepf.c).
 */
#include "measure/trace.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tsys_names[CD_TSYS_N] = {
	"clock_gettime", "clock_gettime64", "gettimeofday", "time",
};

const char *cd_tsys_name(enum cd_tsys s)
{
	return (unsigned)s < CD_TSYS_N ? tsys_names[s] : "?";
}

/* The clock ids of include/uapi/linux/time.h, by number (8-11 are the
 * alarm and TAI clocks; 2 and 3 are CPU-time clocks). */
static const char *const clock_names[CD_TCLOCK_N] = {
	"REALTIME", "MONOTONIC", "PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID",
	"MONOTONIC_RAW", "REALTIME_COARSE", "MONOTONIC_COARSE", "BOOTTIME",
	"REALTIME_ALARM", "BOOTTIME_ALARM", "SGI_CYCLE", "TAI", "other",
};

const char *cd_tclock_name(int slot)
{
	return slot >= 0 && slot < CD_TCLOCK_N ? clock_names[slot] : "other";
}

int cd_tclock_slot(long long clockid)
{
	return clockid >= 0 && clockid < CD_TCLOCK_OTHER ? (int)clockid : CD_TCLOCK_OTHER;
}

/* ---- the format file ---- */

/* A number after `key` ("offset:") in line [p, end); false when absent. */
static bool line_number(const char *p, const char *end, const char *key, long *out)
{
	size_t kl = strlen(key);
	for (; p + kl <= end; p++) {
		if (memcmp(p, key, kl) != 0)
			continue;
		char *e;
		errno = 0;
		long v = strtol(p + kl, &e, 10);
		if (e == p + kl || errno != 0 || e > end)
			return false;
		*out = v;
		return true;
	}
	return false;
}

/* Whether the declaration [decl, semi) ends with the word `name` (an array
 * suffix "[N]" allowed). */
static bool decl_names(const char *decl, const char *semi, const char *name)
{
	const char *e = semi;
	if (e > decl && e[-1] == ']') {
		while (e > decl && *e != '[')
			e--;
		if (e == decl)
			return false;
	}
	size_t nl = strlen(name);
	if ((size_t)(e - decl) < nl || memcmp(e - nl, name, nl) != 0)
		return false;
	const char *before = e - nl;
	return before == decl || before[-1] == ' ' || before[-1] == '\t' || before[-1] == '*';
}

int cd_tp_format_field(const char *text, const char *name, int *offset, int *size)
{
	if (!text || !name || !*name)
		return -EINVAL;
	for (const char *line = text; *line; ) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *f = line;
		while (f < end && (*f == ' ' || *f == '\t'))
			f++;
		if ((size_t)(end - f) > 6 && memcmp(f, "field:", 6) == 0) {
			const char *decl = f + 6;
			const char *semi = memchr(decl, ';', (size_t)(end - decl));
			if (semi && decl_names(decl, semi, name)) {
				long off, sz;
				if (!line_number(semi, end, "offset:", &off) ||
				    !line_number(semi, end, "size:", &sz) ||
				    off < 0 || off > 65535 || sz <= 0 || sz > 65535)
					return -EINVAL;
				*offset = (int)off;
				*size = (int)sz;
				return 0;
			}
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

long cd_tp_format_id(const char *text)
{
	if (!text)
		return -ENOENT;
	for (const char *line = text; *line; ) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		long id;
		if (strncmp(line, "ID:", 3) == 0 && line_number(line, end, "ID:", &id) && id >= 0)
			return id;
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

bool cd_tp_read_int(const void *raw, size_t raw_len, int offset, int size, bool is_signed,
                    long long *out)
{
	if (!raw || offset < 0 || (size != 1 && size != 2 && size != 4 && size != 8) ||
	    (size_t)offset + (size_t)size > raw_len)
		return false;
	const unsigned char *p = (const unsigned char *)raw + offset;
	/* The ring buffer only promises 8-byte alignment of the record, so copy. */
	switch (size) {
	case 1: { uint8_t v = p[0]; *out = is_signed ? (int8_t)v : v; break; }
	case 2: { uint16_t v; memcpy(&v, p, 2); *out = is_signed ? (int16_t)v : v; break; }
	case 4: { uint32_t v; memcpy(&v, p, 4); *out = is_signed ? (int32_t)v : (long long)v; break; }
	default: { uint64_t v; memcpy(&v, p, 8); *out = (long long)v; break; }
	}
	/* clockid_t is an int widened to a long in the syscall arguments: a
	 * negative id (a dynamic clock) arrives as 0xffffffff........ or as a
	 * zero-extended 32-bit value; both read as the int. */
	if (size == 8 && !is_signed && (*out > INT_MAX || *out < INT_MIN))
		*out = (int32_t)(uint32_t)(uint64_t)*out;
	return true;
}

/* ---- aggregation ---- */

void cd_top_table_reset(struct cd_top_table *t)
{
	t->n = 0;
	t->samples = 0;
	memset(t->weight, 0, sizeof t->weight);
	t->lost = 0;
	t->oom = false;
}

void cd_top_table_free(struct cd_top_table *t)
{
	free(t->p);
	memset(t, 0, sizeof *t);
}

struct cd_top_proc *cd_top_proc_get(struct cd_top_table *t, int pid)
{
	/* Linear: a few hundred processes make time system calls at most, and
	 * the table is searched once per sample, a few thousand a second. */
	for (size_t i = 0; i < t->n; i++)
		if (t->p[i].pid == pid)
			return &t->p[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct cd_top_proc *np = realloc(t->p, cap * sizeof *np);
		if (!np) {
			t->oom = true;
			return NULL;
		}
		t->p = np;
		t->cap = cap;
	}
	struct cd_top_proc *p = &t->p[t->n++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	return p;
}

void cd_top_add_sample(struct cd_top_table *t, int pid, enum cd_tsys s, long long clockid,
                       uint64_t period)
{
	if ((unsigned)s >= CD_TSYS_N)
		return;
	double w = period ? (double)period : 1.0;
	t->samples++;
	t->weight[s] += w;
	struct cd_top_proc *p = cd_top_proc_get(t, pid);
	if (!p)
		return;
	p->samples++;
	p->calls[s] += w;
	if (s == CD_TSYS_CLOCK_GETTIME || s == CD_TSYS_CLOCK_GETTIME64)
		p->clocks[cd_tclock_slot(clockid)] += w;
}

int cd_top_cmp(const void *a, const void *b)
{
	const struct cd_top_proc *x = a, *y = b;
	if (x->cost_ns_s != y->cost_ns_s)
		return x->cost_ns_s < y->cost_ns_s ? 1 : -1;
	if (x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Scales a row's sampled calls to its share of the exact counts (a row
 * counted exactly keeps its calls); its clock ids follow. */
static void scale_to_exact(struct cd_top_proc *p, const struct cd_top_table *t,
                           const uint64_t exact[CD_TSYS_N])
{
	double clocks_before = 0, clocks_after = 0;
	for (int c = 0; c < CD_TCLOCK_N; c++)
		clocks_before += p->clocks[c];
	for (int s = 0; s < CD_TSYS_N; s++) {
		bool clk = s == CD_TSYS_CLOCK_GETTIME || s == CD_TSYS_CLOCK_GETTIME64;
		if (!p->exact)
			p->calls[s] = t->weight[s] > 0 ? p->calls[s] / t->weight[s] * (double)exact[s] : 0;
		if (clk)
			clocks_after += p->calls[s];
	}
	for (int c = 0; c < CD_TCLOCK_N; c++)
		p->clocks[c] = clocks_before > 0 ? p->clocks[c] / clocks_before * clocks_after : 0;
}

void cd_top_keep_pid(struct cd_top_table *t, int pid)
{
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->p[i].pid == pid)
			t->p[k++] = t->p[i];
	t->n = k;
}

void cd_top_finish(struct cd_top_table *t, double secs, double call_ns,
                   const uint64_t exact[CD_TSYS_N])
{
	if (!(secs > 0))
		secs = 1;
	if (!(call_ns >= 0))
		call_ns = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct cd_top_proc *p = &t->p[i];
		if (exact)
			scale_to_exact(p, t, exact);
		p->total = 0;
		for (int s = 0; s < CD_TSYS_N; s++)
			p->total += p->calls[s];
		p->rate = p->total / secs;
		p->cost_ns_s = p->rate * call_ns;
	}
	if (t->n > 1)
		qsort(t->p, t->n, sizeof *t->p, cd_top_cmp);
}

static void append(char *buf, size_t len, size_t *used, const char *s)
{
	int n = snprintf(buf + *used, len - *used, "%s%s", *used ? "," : "", s);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

void cd_top_clock_list(const struct cd_top_proc *p, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	size_t used = 0;
	bool done[CD_TCLOCK_N] = { false };
	/* Most used first: a selection by count, over 13 slots at most. */
	for (;;) {
		int best = -1;
		for (int i = 0; i < CD_TCLOCK_N; i++)
			if (!done[i] && p->clocks[i] > 0 && (best < 0 || p->clocks[i] > p->clocks[best]))
				best = i;
		if (best < 0)
			break;
		done[best] = true;
		append(buf, len, &used, cd_tclock_name(best));
	}
	if (p->calls[CD_TSYS_GETTIMEOFDAY] > 0)
		append(buf, len, &used, "gettimeofday");
	if (p->calls[CD_TSYS_TIME] > 0)
		append(buf, len, &used, "time");
	if (!used)
		snprintf(buf, len, "-");
}

/* ---- the period ---- */

uint64_t cd_top_adapt_period(uint64_t calls, double secs, uint64_t target)
{
	if (!(secs > 0) || target == 0)
		return 1;
	double rate = (double)calls / secs;
	double p = ceil(rate / (double)target);
	if (!(p >= 1))
		return 1;
	if (p > 1e12)
		return (uint64_t)1e12;
	return (uint64_t)p;
}

uint64_t cd_top_keep_period(uint64_t current, uint64_t wanted)
{
	if (wanted == 0)
		wanted = 1;
	/* Within 2x of the wanted period, the samples a second are within 2x of
	 * the target: not worth a reset (each one costs a sample, tracering.c). */
	if (current > 0 && 2 * current >= wanted && current <= 2 * wanted)
		return current;
	return wanted;
}

/* ---- CPU lists ---- */

int cd_parse_cpu_list(const char *s, int *cpus, int max)
{
	if (!s)
		return -EINVAL;
	int n = 0;
	const char *p = s;
	while (*p && *p != '\n') {
		char *e;
		errno = 0;
		long a = strtol(p, &e, 10), b;
		if (e == p || a < 0 || a > 1 << 20 || errno)
			return -EINVAL;
		p = e;
		b = a;
		if (*p == '-') {
			p++;
			b = strtol(p, &e, 10);
			if (e == p || b < a || b > 1 << 20 || errno)
				return -EINVAL;
			p = e;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -EINVAL;
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}
