/* SPDX-License-Identifier: MIT */
/*
 * readcost.c: a counter read against the kernel's clock (readcost.h).
 */
#include "readcost.h"

#include "counter.h"
#include "kclock.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One try: a = K, n counter reads, b = K, n kernel reads (the last is c),
 * n system calls, d = K: the three spans, in ns. */
static bool one_try(const struct fc_read_cost_ops *o, int64_t span[3])
{
	int64_t a = o->kclock(o->ctx);
	for (int i = 0; i < FC_READ_COST_BATCH; i++)
		o->counter(o->ctx);
	int64_t b = o->kclock(o->ctx), c = b;
	for (int i = 0; i < FC_READ_COST_BATCH; i++)
		c = o->kclock(o->ctx);
	for (int i = 0; i < FC_READ_COST_BATCH; i++)
		o->syscall(o->ctx);
	int64_t d = o->kclock(o->ctx);
	if (a == INT64_MIN || b == INT64_MIN || c == INT64_MIN || d == INT64_MIN || b < a || c < b || d < c)
		return false;
	span[0] = b - a;
	span[1] = c - b;
	span[2] = d - c;
	return true;
}

/* Each span's least over the tries (a preemption or an interrupt only
 * lengthens one), then the costs from those: from one kernel sample to the
 * next lies one kernel read's cost besides what is between them, so
 * kernel = span1 / n, counter = (span0 - kernel) / n, syscall = (span2 -
 * kernel) / n.  Taking each cost's least over the tries instead would
 * take a counter from the try whose kernel reads were held up: too low,
 * even 0, and a trapped counter judged cheap. */
bool fc_read_cost_measure(const struct fc_read_cost_ops *ops, struct fc_read_cost *c)
{
	c->measured = false;
	c->counter_ns = c->kernel_ns = c->syscall_ns = 0;
	int64_t least[3] = { INT64_MAX, INT64_MAX, INT64_MAX };
	for (int t = 0; t < FC_READ_COST_TRIES; t++) {
		int64_t span[3];
		if (!one_try(ops, span))
			continue;
		for (int i = 0; i < 3; i++)
			if (span[i] < least[i])
				least[i] = span[i];
		c->measured = true;
	}
	if (!c->measured)
		return false;
	c->kernel_ns = (double)least[1] / FC_READ_COST_BATCH;
	c->counter_ns = ((double)least[0] - c->kernel_ns) / FC_READ_COST_BATCH;
	c->syscall_ns = ((double)least[2] - c->kernel_ns) / FC_READ_COST_BATCH;
	if (c->counter_ns < 0)
		c->counter_ns = 0;  /* below the clock's resolution */
	if (c->syscall_ns < 0)
		c->syscall_ns = 0;
	return true;
}

static void live_counter(void *ctx)
{
	(void)ctx;
	(void)fc_counter_read();
}

static int64_t live_kclock(void *ctx)
{
	(void)ctx;
	return fc_kclock_ns(CLOCK_MONOTONIC);
}

static void live_syscall(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	int saved = errno;
	(void)syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &ts);
	errno = saved;
}

bool fc_read_cost_measure_live(struct fc_read_cost *c)
{
	const struct fc_read_cost_ops ops = { live_counter, live_kclock, live_syscall, NULL };
	return fc_read_cost_measure(&ops, c);
}

bool fc_read_cost_counter_cheaper(const struct fc_read_cost *c)
{
	/* a counter read too cheap to be a trap is cheap whatever the
	 * kernel's clock measured (FC_READ_COST_TRAP_MIN_NS: a coarse clock
	 * may measure it below the counter, or 0) */
	if (!c->measured || c->counter_ns < FC_READ_COST_TRAP_MIN_NS)
		return true;
	if (fc_read_cost_kernel_is_syscall(c) && c->counter_ns * 2 >= c->syscall_ns)
		return false;
	return c->counter_ns < c->kernel_ns;
}

bool fc_read_cost_kernel_is_syscall(const struct fc_read_cost *c)
{
	return c->measured && c->syscall_ns > 0 && c->kernel_ns * 4 >= c->syscall_ns * 3;
}

bool fc_read_cost_parse(const char *text, struct fc_read_cost *c)
{
	double v[3];
	const char *p = text;
	int saved = errno;  /* strtod's ERANGE is not the caller's */
	for (int i = 0; i < 3; i++) {
		char *end;
		v[i] = strtod(p, &end);
		if (end == p || !(v[i] >= 0 && v[i] < 1e12) || *end != (i < 2 ? ',' : '\0')) {
			errno = saved;
			return false;
		}
		p = end + 1;
	}
	errno = saved;
	c->measured = true;
	c->counter_ns = v[0];
	c->kernel_ns = v[1];
	c->syscall_ns = v[2];
	return true;
}
