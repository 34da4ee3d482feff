/* SPDX-License-Identifier: MIT */
/*
 * tscfreq.c: the counter's frequency, measured and declared (tscfreq.h).
 *
 * The measurement keeps, at each end of the interval, the tightest of many
 * "clock, counter, clock" brackets: a bracket widened by an interrupt or a
 * preemption is simply not the tightest.  Its error bar is honest only if
 * the reference clock is honest; CLOCK_MONOTONIC_RAW is not slewed by NTP,
 * which is why it is the reference.
 */
#include "tscfreq.h"
#include "fenceorder.h"
#include "counter.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- measured ---- */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int fc_freq_sample(clockid_t clock, int tries, struct fc_freq_sample *out)
{
	if (tries < 1)
		return -EINVAL;
	bool have = false;
	for (int i = 0; i < tries; i++) {
		struct timespec t1, t2;
		if (clock_gettime(clock, &t1) != 0)
			return -errno;
		uint64_t c = fc_counter_read();
		if (clock_gettime(clock, &t2) != 0)
			return -errno;
		int64_t a = ts_ns(&t1), b = ts_ns(&t2);
		if (b < a)
			continue;  /* a broken clock: never the tightest */
		if (!have || b - a < out->width_ns) {
			out->width_ns = b - a;
			out->ref_ns = a + (b - a) / 2;
			out->count = c;
			have = true;
		}
	}
	return have ? 0 : -EINVAL;
}

int fc_freq_between(const struct fc_freq_sample *a, const struct fc_freq_sample *b,
                    struct fc_freq_estimate *out)
{
	memset(out, 0, sizeof *out);
	if (b->ref_ns <= a->ref_ns || b->count <= a->count)
		return -EINVAL;
	double ns = (double)(b->ref_ns - a->ref_ns);
	double cycles = (double)(b->count - a->count);
	out->interval_s = ns * 1e-9;
	out->hz = cycles / ns * 1e9;
	/* Each end is known to half its bracket, each clock read to 1 ns, and
	 * the counter to one count. */
	double err_ns = (double)(a->width_ns + b->width_ns) / 2 + 1;
	out->err_ppm = (err_ns / ns + 1 / cycles) * 1e6;
	return 0;
}

/* ---- declared ---- */

int fc_freq_cpuid15(uint32_t eax, uint32_t ebx, uint32_t crystal_hz, double *hz)
{
	*hz = 0;
	if (eax == 0 || ebx == 0)
		return -ENODATA;
	if (crystal_hz == 0)
		return -ENOENT;
	/* The product fits in 64 bits (32 x 32); dividing it, rather than
	 * multiplying by a truncated EBX / EAX, keeps the ratio exact. */
	uint64_t n = (uint64_t)crystal_hz * ebx;
	*hz = (double)(n / eax) + (double)(n % eax) / eax;
	return 0;
}

/* Intel family 6 models whose leaf 0x15 has ECX = 0, with a citable crystal.
 * The kernel hard-coded these in native_calibrate_tsc() (arch/x86/kernel/
 * tsc.c) from 4.x until about 5.2, when "x86/tsc: Use CPUID.0x16 to
 * calculate missing crystal frequency" kept only Denverton and derived the
 * rest from leaf 0x16; turbostat (tools/power/x86/turbostat) keeps them, with
 * Goldmont Plus.  Skylake-X (0x55) is not here: its crystal is 25 MHz, and the
 * 24 MHz guess made its clock drift, which is why the kernel dropped the
 * table.  Nothing else is guessed. */
static const struct {
	uint32_t model, crystal_hz;
	const char *cite;
} crystals[] = {
	{ 0x5f, 25000000, "Denverton: Linux native_calibrate_tsc() hard-codes 25 MHz" },
	{ 0x4e, 24000000, "Skylake client: Linux 4.x native_calibrate_tsc(), turbostat" },
	{ 0x5e, 24000000, "Skylake client: Linux 4.x native_calibrate_tsc()" },
	{ 0x8e, 24000000, "Kaby Lake client: Linux 4.x native_calibrate_tsc()" },
	{ 0x9e, 24000000, "Kaby Lake client: Linux 4.x native_calibrate_tsc()" },
	{ 0x5c, 19200000, "Goldmont: Linux 4.x native_calibrate_tsc(), turbostat" },
	{ 0x7a, 19200000, "Goldmont Plus: turbostat" },
};

uint32_t fc_freq_known_crystal(const char *vendor, uint32_t leaf1_eax, const char **cite)
{
	*cite = NULL;
	if (!vendor || strcmp(vendor, "GenuineIntel") != 0)
		return 0;
	uint32_t family = (leaf1_eax >> 8) & 0xf;
	uint32_t model = ((leaf1_eax >> 4) & 0xf) | (((leaf1_eax >> 16) & 0xf) << 4);
	if (family != 6)
		return 0;
	for (size_t i = 0; i < sizeof crystals / sizeof crystals[0]; i++)
		if (crystals[i].model == model) {
			*cite = crystals[i].cite;
			return crystals[i].crystal_hz;
		}
	return 0;
}

double fc_freq_from_mult_shift(uint32_t mult, unsigned shift)
{
	if (mult == 0 || shift > 63)
		return 0;
	return 1e9 * (double)(1ull << shift) / mult;
}

double fc_freq_ppm(double hz, double ref_hz)
{
	return ref_hz > 0 ? (hz - ref_hz) / ref_hz * 1e6 : 0;
}

/* ---- the perf_event mmap page ---- */

static int perf_open_dummy(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	/* User space only: perf_event_paranoid 2 allows that for one's own
	 * threads, without CAP_PERFMON. */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */, -1, 0);
	return fd < 0 ? -errno : (int)fd;
}

/* Reads the conversion under the page's sequence count, as the perf
 * documentation prescribes for user-space readers. */
static int read_page(volatile struct perf_event_mmap_page *pg, struct fc_perf_time *out)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t seq = pg->lock;
		fc_fence_acquire();
		bool cap = pg->cap_user_time;
		uint32_t mult = pg->time_mult;
		uint16_t shift = pg->time_shift;
		fc_fence_acquire();
		if (pg->lock != seq || (seq & 1))
			continue;
		out->cap_user_time = cap;
		out->time_mult = mult;
		out->time_shift = shift;
		return 0;
	}
	return -EAGAIN;
}

int fc_freq_perf(struct fc_perf_time *out)
{
	memset(out, 0, sizeof *out);
	int fd = perf_open_dummy();
	if (fd < 0)
		return fd;
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page > 0 ? (size_t)page : 4096, PROT_READ, MAP_SHARED, fd, 0);
	int err = 0;
	if (p == MAP_FAILED) {
		err = -errno;
	} else {
		err = read_page(p, out);
		munmap(p, page > 0 ? (size_t)page : 4096);
	}
	close(fd);
	if (err)
		return err;
	if (!out->cap_user_time || out->time_mult == 0)
		return -ENODATA;
	out->hz = fc_freq_from_mult_shift(out->time_mult, out->time_shift);
	return 0;
}
