/* SPDX-License-Identifier: MIT */
/*
 * tracering.c: the samples of `clockdoctor top`, from the per-CPU ring
 * buffers of the syscall tracepoints' perf events (tracepf.c opens them;
 * tracer_impl.h).
 *
 * A sample carries the process and the raw tracepoint record, whose first
 * field (common_type) says which system call it was and whose which_clock
 * field, at the offset the format file gives, the clock id.
 * PERF_SAMPLE_PERIOD is not asked for: on a software event it makes the
 * kernel record every event (perf_swevent_event), whatever the period.  A
 * sample stands for the period in force when it is read; the ring buffers
 * are drained before the period changes.
 *
 * PERF_EVENT_IOC_PERIOD zeroes the kernel's count to the next sample
 * (__perf_event_period), so the event's next hit is sampled at once: that
 * sample stands for one call, not a period.  Weighed as a period, it biased
 * whichever process called first after each change (redithered every 50 ms
 * at a period near 490, a process making 20000 calls a second came out 20-28%
 * over, one making 50 about 190 times over), so each event's first sample
 * after a change weighs 1 and the period is changed seldom: when the counts
 * say it is off by more than 2x (top.c), and redithered once a second.  (A
 * regular sample written between a CPU's drain and its ioctl, a window of
 * microseconds, is taken for the forced one: rare, and off by one period.)
 */
#include "measure/tracer_impl.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "util/monotime.h"

#define POLL_NS 50000000L       /* the ring buffers are drained every 50 ms */
#define REDITHER_S 1.0          /* and the periods redithered at most this often */

/* The polling reads CLOCK_MONOTONIC_COARSE, which the vDSO serves on every
 * clocksource, so that on hpet top does not show up in its own table at 20
 * system calls a second; its few ms of granularity do not matter to a
 * slice of 0.2 s (top.c times whole intervals with CLOCK_MONOTONIC). */
#define POLL_CLOCK CLOCK_MONOTONIC_COARSE

/* One PERF_RECORD_SAMPLE of CPU index ci: u32 pid, tid; u32 size; raw
 * data.  It weighs the CPU's period, or 1 when it is its event's first
 * since the period was set (see the top of the file). */
static void take_sample(struct cd_tracer *tr, int ci, const unsigned char *rec, size_t len,
                        struct cd_top_table *t)
{
	const size_t hdr = sizeof(struct perf_event_header);
	if (len < hdr + 8 + 4)
		return;
	uint32_t pid, raw_size;
	memcpy(&pid, rec + hdr, 4);
	memcpy(&raw_size, rec + hdr + 8, 4);
	const unsigned char *raw = rec + hdr + 12;
	if (raw_size > len - (hdr + 12))
		return;
	long long type;
	if (!cd_tp_read_int(raw, raw_size, 0, 2, false, &type))
		return;
	for (int s = 0; s < CD_TSYS_N; s++) {
		const struct tracepoint *tp = &tr->tp[s];
		if (!tp->have || tp->id != type)
			continue;
		long long clk = -1;
		if (tp->clock_size)
			cd_tp_read_int(raw, raw_size, tp->clock_off, tp->clock_size, false, &clk);
		uint64_t period = tr->cpu_period[ci] ? tr->cpu_period[ci] : tr->period;
		bool *fresh = &tr->fresh[ci * CD_TSYS_N + s];
		if (*fresh) {
			period = 1;
			*fresh = false;
		}
		size_t before = t->n;
		cd_top_add_sample(t, (int)pid, (enum cd_tsys)s, clk, period);
		if (t->n > before)
			cd_trace_read_comm((int)pid, t->p[t->n - 1].comm, sizeof t->p[t->n - 1].comm);
		return;
	}
}

static void drain(struct cd_tracer *tr, int ci, struct cd_top_table *t)
{
	struct perf_event_mmap_page *mp = tr->ring[ci];
	if (!mp)
		return;
	const unsigned char *data = (const unsigned char *)mp + tr->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	unsigned char rec[65536];
	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % tr->ring_len);
		for (size_t i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(off + i) % tr->ring_len];
		if (h.size < sizeof h || tail + h.size > head)
			break;
		/* A record may wrap around the end of the buffer: copy it whole. */
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) % tr->ring_len];
		if (h.type == PERF_RECORD_SAMPLE)
			take_sample(tr, ci, rec, h.size, t);
		else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
			uint64_t lost;
			memcpy(&lost, rec + sizeof h + 8, 8);
			t->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static bool is_prime(uint64_t n)
{
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

/* A prime period in about [p/2, 3p/2).  Prime, because a loop of k calls
 * (k < period) is then sampled at every one of its k positions in turn:
 * the sample's position in the loop advances by period mod k, which shares
 * no factor with k.  Random within the range (xorshift64), so that longer
 * patterns do not lock on either. */
static uint64_t dithered(struct cd_tracer *tr, uint64_t p)
{
	tr->rng ^= tr->rng << 13;
	tr->rng ^= tr->rng >> 7;
	tr->rng ^= tr->rng << 17;
	if (p < 2)
		return p;
	uint64_t q = p / 2 + tr->rng % p;
	if (q < 3)
		q = 3;          /* 2 is prime but even: it would lock onto a two-call loop */
	while (!is_prime(q))
		q++;
	return q;
}

/* Drain one CPU, then give its events a new dithered period: the samples
 * drained were all taken under the period recorded for them.  An event
 * whose period was set takes its next hit at once: that sample is fresh.
 * (An event whose ioctl failed keeps the old period; the CPU's samples are
 * then weighed by the new one, so a failure is not expected to be partial:
 * the same call on the same kind of event.) */
static void drain_and_redither(struct cd_tracer *tr, int ci, struct cd_top_table *t)
{
	drain(tr, ci, t);
	if (!tr->ring[ci])
		return;
	uint64_t p = dithered(tr, tr->period);
	if (p == (tr->cpu_period[ci] ? tr->cpu_period[ci] : tr->period))
		return;                 /* period 1, or the same prime: no reset */
	bool ok = true;
	for (int s = 0; s < CD_TSYS_N; s++) {
		int i = ci * CD_TSYS_N + s;
		if (tr->fd[i] < 0)
			continue;
		if (ioctl(tr->fd[i], PERF_EVENT_IOC_PERIOD, &p) == 0)
			tr->fresh[i] = true;
		else
			ok = false;
	}
	if (ok)
		tr->cpu_period[ci] = p;
}

static void redither_all(struct cd_tracer *tr, struct cd_top_table *t)
{
	for (int ci = 0; ci < tr->ncpus; ci++)
		drain_and_redither(tr, ci, t);
	tr->dithered_at = cd_clock_s(POLL_CLOCK);
}

double cd_tracer_collect(struct cd_tracer *tr, double secs, const volatile sig_atomic_t *stop,
                         struct cd_top_table *t)
{
	double t0 = cd_clock_s(POLL_CLOCK);
	for (;;) {
		if (cd_clock_s(POLL_CLOCK) - tr->dithered_at >= REDITHER_S)
			redither_all(tr, t);
		else
			for (int ci = 0; ci < tr->ncpus; ci++)
				drain(tr, ci, t);
		double left = secs - (cd_clock_s(POLL_CLOCK) - t0);
		if (left <= 0 || (stop && *stop))
			break;
		long ns = left * 1e9 < POLL_NS ? (long)(left * 1e9) : POLL_NS;
		struct timespec ts = { 0, ns };
		nanosleep(&ts, NULL);   /* EINTR (Ctrl-C) is fine: the loop checks stop */
	}
	return cd_clock_s(POLL_CLOCK) - t0;
}

void cd_tracer_set_period(struct cd_tracer *tr, uint64_t period, struct cd_top_table *t)
{
	if (period == 0 || period == tr->period)
		return;
	/* The samples waiting in the buffers stand for the old period; each
	 * CPU then gets a dithered new one. */
	tr->period = period;
	redither_all(tr, t);
}

