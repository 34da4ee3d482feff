/* SPDX-License-Identifier: MIT */
/*
 * fastclock_trust.c: may libfastclock read the counter here?  (See
 * fastclock_trust.h; the rules are in docs/fastclock.3, TRUST.)
 *
 * The kernel is the best judge of the TSC it runs on: if its clocksource is
 * the counter, the kernel checked it at boot (tsc_sync, the watchdog) and
 * keeps checking.  On another clocksource the kernel may have rejected the
 * counter, so the library needs `clockdoctor tsc`'s measured verdict for
 * this boot, or the operator's FASTCLOCK=force.  A TSC whose rate follows
 * power states (no invariant bit) is refused even when forced: a line
 * through it is wrong between any two re-anchors.
 */
#include "fastclock_trust.h"

#include "clockfacts.h"
#include "counter.h"
#include "kclock.h"
#include "sandbox.h"
#include "tscfreq.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

long fc_read_small(const char *path, char *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;
	int saved = errno;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = -errno;
		errno = saved;
		return e;
	}
	size_t n = 0;
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			errno = saved;
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	errno = saved;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (long)n;
}

size_t fc_text_put(char *dst, size_t cap, size_t at, const char *s)
{
	if (cap == 0)
		return 0;
	if (at >= cap)
		at = cap - 1;
	while (*s && at + 1 < cap)
		dst[at++] = *s++;
	dst[at] = '\0';
	return at;
}

const char *fc_trust_counter_clocksource(int counter_kind)
{
	switch (counter_kind) {
	case FC_COUNTER_X86_TSC: return "tsc";
	case FC_COUNTER_ARM64_CNTVCT: return "arch_sys_counter";
	default: return NULL;
	}
}

int fc_trust_vdso_fast(const char *cs, int major, int minor, int patch)
{
	/* kvm-clock and xen are read only while the host sets the stable
	 * bit, which the library cannot see: "fast" is the usual case. */
	const struct fc_cs_fact *fact = fc_cs_fact(cs);
	if (!fact)
		return -1;
	return fc_vdso_usually_fast(fc_cs_state(fact, major, minor, patch)->vdso);
}

bool fc_trust_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return false;
	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
		bool start = p == list || p[-1] == ' ';
		bool end = p[n] == '\0' || p[n] == ' ' || p[n] == '\n';
		if (start && end)
			return true;
	}
	return false;
}

static void say(struct fc_trust *t, enum fc_reason r, bool use, const char *fmt, const char *a, const char *b)
{
	t->reason = r;
	t->use_counter = use;
	snprintf(t->text, sizeof t->text, fmt, a ? a : "", b ? b : "");
}

static void judge(const struct fc_trust_facts *f, struct fc_trust *t);

/* A verdict refused for its counter_hz is said in every decision's text,
 * not only in those that name the verdict. */
void fc_trust_judge(const struct fc_trust_facts *f, struct fc_trust *t)
{
	judge(f, t);
	if (t->use_counter && f->cost.measured && f->cost.counter_ns > 0) {
		size_t n = strlen(t->text);
		snprintf(t->text + n, sizeof t->text - n, "; a counter read costs %.0f ns, the kernel's clock %.0f ns%s",
		         f->cost.counter_ns, f->cost.kernel_ns,
		         fc_read_cost_kernel_is_syscall(&f->cost) ? " (a system call)" : "");
	}
	if (f->verdict_ignored && !strstr(t->text, "verdict ignored")) {
		size_t n = strlen(t->text);
		snprintf(t->text + n, sizeof t->text - n, "; %s", f->verdict_why);
	}
}

static void judge(const struct fc_trust_facts *f, struct fc_trust *t)
{
	memset(t, 0, sizeof *t);
	const char *mine = fc_trust_counter_clocksource(f->counter_kind);
	t->vdso_fast = f->have_sysfs ? fc_trust_vdso_fast(f->clocksource, f->kernel_major, f->kernel_minor, f->kernel_patch) : -1;
	if (f->mode == FC_MODE_OFF) {
		say(t, FC_REASON_OFF, false, "FASTCLOCK=off: reading the kernel's clock%s%s", NULL, NULL);
		return;
	}
	if (!mine) {
		say(t, FC_REASON_UNSUPPORTED, false, "no counter support on this architecture%s%s", NULL, NULL);
		return;
	}
	if (f->counter_usable != 0) {
		say(t, FC_REASON_NO_COUNTER, false,
		    f->counter_usable == -EPERM ? "reading the counter faults in this process (PR_SET_TSC)%s%s"
		                                : "this CPU has no counter to read%s%s", NULL, NULL);
		return;
	}
	if (f->cost.measured && fc_read_cost_kernel_is_syscall(&f->cost))
		t->vdso_fast = 0;  /* the vDSO falls back: measured, whatever the table says */
	if (!f->invariant) {
		say(t, FC_REASON_NOT_INVARIANT, false,
		    "the TSC is not invariant (CPUID 0x80000007 EDX[8] clear): its rate changes with power states%s%s",
		    NULL, NULL);
		return;
	}
	/* A counter no cheaper than the kernel's clock is one whose reads
	 * trap; the operator's FASTCLOCK=force is still obeyed. */
	if (!fc_read_cost_counter_cheaper(&f->cost) && f->mode != FC_MODE_FORCE) {
		char costs[120];
		snprintf(costs, sizeof costs, "a counter read costs %.0f ns, no less than the kernel's clock (%.0f ns%s)",
		         f->cost.counter_ns, f->cost.kernel_ns,
		         fc_read_cost_kernel_is_syscall(&f->cost) ? ", a system call" : "");
		say(t, FC_REASON_COUNTER_SLOW, false,
		    "%.100s: user-space reads of the counter trap (a timer erratum's workaround, or a hypervisor)%s", costs, "");
		return;
	}
	bool kernel_on_it = f->have_sysfs && !strcmp(f->clocksource, mine);
	if (kernel_on_it) {
		say(t, FC_REASON_KERNEL_USES_COUNTER, true, "the kernel's clocksource is %s%s", mine, "");
		t->watch_current = true;
		return;
	}
	/* The kernel is on another clocksource (or we cannot tell). */
	if (f->have_sysfs && fc_trust_listed(f->available, mine))
		t->watch_available = true;
	if (f->verdict == 0) {
		say(t, FC_REASON_VERIFIED, true,
		    "the kernel is on %.24s, but `clockdoctor tsc` found the counter sound on this boot%s",
		    f->have_sysfs ? f->clocksource : "an unknown clocksource", "");
		return;
	}
	if (f->mode == FC_MODE_FORCE) {
		say(t, FC_REASON_FORCED, true, "FASTCLOCK=force: reading the counter although the kernel is on %.24s%s",
		    f->have_sysfs ? f->clocksource : "an unknown clocksource", "");
		return;
	}
	if (f->verdict == 2) {
		say(t, FC_REASON_VERDICT_UNSOUND, false, "`clockdoctor tsc` found the counter unsound on this boot%s%s",
		    NULL, NULL);
		return;
	}
	if (!f->have_sysfs) {
		say(t, FC_REASON_NO_SYSFS, false,
		    "the kernel's clocksource cannot be read (no /sys) and no sound verdict for this boot (%.90s)%s",
		    f->verdict_why, "");
		return;
	}
	if (f->verdict_ignored) {
		say(t, FC_REASON_UNVERIFIED, false, "the kernel is on %.24s, not the counter; %.130s", f->clocksource,
		    f->verdict_why);
		return;
	}
	say(t, FC_REASON_UNVERIFIED, false,
	    "the kernel is on %.24s, not the counter, and no sound `clockdoctor tsc` verdict for this boot (%.70s)",
	    f->clocksource, f->verdict == 1 ? "verdict unknown" : f->verdict_why);
}

/* ---- gathering ---- */

static bool cpu_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1;
#elif defined(__aarch64__)
	return true;  /* the generic timer runs at cntfrq by definition */
#else
	return false;
#endif
}

static void declared_frequency(struct fc_trust_facts *f)
{
	f->declared_hz = 0;
	if (f->verdict == 0 && f->verdict_hz > 0) {
		/* measured against MONOTONIC_RAW by `clockdoctor tsc` on this boot */
		f->declared_hz = f->verdict_hz;
		f->declared_err_ppm = f->verdict_hz_err_ppm;
		snprintf(f->freq_from, sizeof f->freq_from, "verdict");
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	/* The hypervisor's timing leaf (VMware, KVM with it enabled): kHz. */
	__cpuid(1, a, b, c, d);
	if ((c >> 31) & 1) {
		__cpuid(0x40000000u, a, b, c, d);
		if (a >= 0x40000010u) {
			unsigned khz, x, y, z;
			__cpuid(0x40000010u, khz, x, y, z);
			(void)x; (void)y; (void)z;
			if (khz > 1000) {
				f->declared_hz = khz * 1000.0;
				f->declared_err_ppm = 1e9 / f->declared_hz + 10;
				snprintf(f->freq_from, sizeof f->freq_from, "hypervisor-leaf");
				return;
			}
		}
	}
	if (__get_cpuid(0, &a, &b, &c, &d) && a >= 0x15) {
		unsigned max = a;
		char vendor[13];
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &c, 4);
		vendor[12] = '\0';
		(void)max;
		unsigned eax, ebx, ecx, edx;
		__cpuid(0x15, eax, ebx, ecx, edx);
		(void)edx;
		uint32_t crystal = ecx;
		if (crystal == 0) {
			unsigned l1a, l1b, l1c, l1d;
			__cpuid(1, l1a, l1b, l1c, l1d);
			(void)l1b; (void)l1c; (void)l1d;
			const char *cite;
			crystal = fc_freq_known_crystal(vendor, l1a, &cite);
		}
		double hz;
		if (crystal && fc_freq_cpuid15(eax, ebx, crystal, &hz) == 0 && hz > 1e6) {
			f->declared_hz = hz;
			f->declared_err_ppm = 20;  /* the kernel's own calibration may differ */
			snprintf(f->freq_from, sizeof f->freq_from, "cpuid-0x15");
			return;
		}
	}
	/* perf_event_open is outside systemd's @system-service set (sandbox.h) */
	struct fc_perf_time pt;
	if (fc_unfiltered() && fc_freq_perf(&pt) == 0 && pt.cap_user_time && pt.hz > 1e6) {
		f->declared_hz = pt.hz;
		f->declared_err_ppm = 1;
		snprintf(f->freq_from, sizeof f->freq_from, "perf-page");
		return;
	}
#elif defined(__aarch64__)
	uint64_t hz = fc_counter_freq_register();
	if (hz > 0) {
		f->declared_hz = (double)hz;
		f->declared_err_ppm = 1;
		snprintf(f->freq_from, sizeof f->freq_from, "cntfrq");
		return;
	}
#endif
	snprintf(f->freq_from, sizeof f->freq_from, "measured");
}

bool fc_verdict_hz_check(double hz, double ref_hz, double ref_err_ppm, double *err_ppm, char *why, size_t len)
{
	*err_ppm = 1000;
	if (!(hz >= FC_COUNTER_HZ_MIN && hz <= FC_COUNTER_HZ_MAX)) {
		snprintf(why, len, "verdict ignored: its counter_hz %.0f is outside 1 MHz to 10 GHz", hz);
		return false;
	}
	if (!(ref_hz > 0))
		return true;  /* not measured: the library measures before it uses the rate */
	double dev = (hz / ref_hz - 1) * 1e6;
	if (dev < 0)
		dev = -dev;
	if (!(dev <= ref_err_ppm + FC_VERDICT_AGREE_PPM)) {
		snprintf(why, len, "verdict ignored: its counter_hz %.0f is %.0f ppm from the %.0f Hz measured at start (+-%.1f ppm)",
		         hz, dev, ref_hz, ref_err_ppm);
		return false;
	}
	*err_ppm = dev + ref_err_ppm > 1 ? dev + ref_err_ppm : 1;
	return true;
}

/* The tightest of `tries` brackets "counter, CLOCK_MONOTONIC_RAW,
 * counter": its middle, width (counts) and the clock.  false when the
 * clock cannot be read. */
static bool raw_bracket(int tries, uint64_t *mid, uint64_t *width, int64_t *k)
{
	*width = UINT64_MAX;
	for (int i = 0; i < tries; i++) {
		struct timespec ts;
		uint64_t t0 = fc_counter_read();
		if (fc_kclock(CLOCK_MONOTONIC_RAW, &ts) != 0)
			return false;
		uint64_t t1 = fc_counter_read();
		if (t1 - t0 < *width) {
			*width = t1 - t0;
			*mid = t0 + *width / 2;
			*k = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		}
	}
	return true;
}

/* The counter's rate against CLOCK_MONOTONIC_RAW (what `clockdoctor tsc`
 * measured the verdict's against) over FC_VERDICT_CHECK_NS, and what it
 * may be off: half of both brackets' widths over the span, and a
 * nanosecond at each end.  false when it cannot be measured. */
static bool quick_counter_hz(double *hz, double *err_ppm)
{
	uint64_t ma = 0, wa, mb = 0, wb;
	int64_t ka = 0, kb = 0;
	if (!raw_bracket(5, &ma, &wa, &ka))
		return false;
	for (long n = 0; n < 10000000 && kb - ka < FC_VERDICT_CHECK_NS; n++)
		if (!raw_bracket(1, &mb, &wb, &kb))
			return false;
	if (!raw_bracket(3, &mb, &wb, &kb) || kb - ka < FC_VERDICT_CHECK_NS / 2 || (int64_t)(mb - ma) <= 0)
		return false;
	double counts = (double)(mb - ma), ns = (double)(kb - ka);
	*hz = counts / ns * 1e9;
	*err_ppm = ((double)(wa + wb) / 2 / counts + 2 / ns) * 1e6;
	return true;
}

static void read_verdict(struct fc_trust_facts *f)
{
	f->verdict = -1;
	f->verdict_hz = 0;
	const char *path = secure_getenv("FASTCLOCK_VERDICT");
	bool from_env = path && *path;
	if (!from_env)
		path = FC_VERDICT_PATH;
	struct stat st;
	int saved = errno;
	if (stat(path, &st) != 0) {
		snprintf(f->verdict_why, sizeof f->verdict_why, "no verdict file %s", path);
		errno = saved;
		return;
	}
	/* A verdict writable by another user could make a program trust a
	 * counter nobody checked. */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		snprintf(f->verdict_why, sizeof f->verdict_why, "verdict file not owned by root or writable by others");
		return;
	}
	char text[1024], boot[64];
	long n = fc_read_small(path, text, sizeof text);
	struct fc_verdict v;
	if (n < 0 || fc_verdict_parse(text, (size_t)n, &v) != 0) {
		snprintf(f->verdict_why, sizeof f->verdict_why, "verdict file unreadable or malformed");
		return;
	}
	if (fc_read_small("/proc/sys/kernel/random/boot_id", boot, sizeof boot) < 0) {
		snprintf(f->verdict_why, sizeof f->verdict_why, "cannot read this boot's boot_id");
		return;
	}
	if (strcmp(boot, v.boot_id) != 0) {
		snprintf(f->verdict_why, sizeof f->verdict_why, "the verdict is from another boot");
		return;
	}
	f->verdict_hz = 0;
	f->verdict_hz_err_ppm = 1;
	/* Where the kernel runs on the counter the verdict decides nothing,
	 * and its rate is not taken: the library measures its own without
	 * waiting, and no process spends the check's millisecond there. */
	const char *mine = fc_trust_counter_clocksource(f->counter_kind);
	bool kernel_on_it = f->have_sysfs && mine && !strcmp(f->clocksource, mine);
	/* (nor where its reads trap: refused whatever the verdict, and a
	 * millisecond of trapped reads is thousands of exceptions) */
	if (v.verdict == 0 && v.counter_hz > 0 && f->counter_usable == 0 && f->mode != FC_MODE_OFF && !kernel_on_it &&
	    fc_read_cost_counter_cheaper(&f->cost)) {
		/* the rate the library would take from it: only one that agrees
		 * with the counter measured here (a stale verdict after a change
		 * of the counter's rate, or a forged one, is no verdict) */
		double ref = 0, ref_err = 0, err = 0;
		if (!quick_counter_hz(&ref, &ref_err))
			ref = 0;
		if (!fc_verdict_hz_check(v.counter_hz, ref, ref_err, &err, f->verdict_why, sizeof f->verdict_why)) {
			f->verdict_ignored = true;
			return;
		}
		f->verdict_hz = v.counter_hz;
		f->verdict_hz_err_ppm = err;
	}
	f->verdict = v.verdict;
	snprintf(f->verdict_why, sizeof f->verdict_why, "verdict %s",
	         v.verdict == 0 ? "sound" : v.verdict == 1 ? "unknown" : "unsound");
}

static void sysfs_paths(char *cur, char *avail, size_t len)
{
	const char *root = secure_getenv("FASTCLOCK_SYSFS");
	if (!root || !*root)
		root = "/sys";
	snprintf(cur, len, "%s/devices/system/clocksource/clocksource0/current_clocksource", root);
	snprintf(avail, len, "%s/devices/system/clocksource/clocksource0/available_clocksource", root);
}

void fc_trust_gather(struct fc_trust_facts *f)
{
	memset(f, 0, sizeof *f);
	const char *m = secure_getenv("FASTCLOCK");  /* setuid programs: auto */
	f->mode = FC_MODE_AUTO;
	if (m && *m) {
		if (!strcmp(m, "off") || !strcmp(m, "0"))
			f->mode = FC_MODE_OFF;
		else if (!strcmp(m, "force"))
			f->mode = FC_MODE_FORCE;
		else if (strcmp(m, "auto") != 0)
			f->mode_bad = true;
	}
	struct fc_counter_info ci;
	fc_counter_probe(&ci);
	f->counter_kind = ci.kind;
	f->counter_usable = ci.usable;
	f->invariant = ci.usable == 0 && cpu_invariant();
	/* what a read costs, where the counter could be used at all; tests
	 * give the three costs instead ("COUNTER,KERNEL,SYSCALL" in ns) */
	const char *given = secure_getenv("FASTCLOCK_TEST_READ_COST");
	if (f->mode != FC_MODE_OFF && f->invariant && fc_trust_counter_clocksource(f->counter_kind)) {
		if (!given || !*given || !fc_read_cost_parse(given, &f->cost))
			fc_read_cost_measure_live(&f->cost);
	}
	sysfs_paths(f->cur_path, f->avail_path, sizeof f->cur_path);
	f->have_sysfs = fc_read_small(f->cur_path, f->clocksource, sizeof f->clocksource) > 0;
	if (f->have_sysfs && fc_read_small(f->avail_path, f->available, sizeof f->available) < 0)
		f->available[0] = '\0';
	struct utsname u;
	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d.%d", &f->kernel_major, &f->kernel_minor, &f->kernel_patch);
	read_verdict(f);
}

void fc_trust_declared(struct fc_trust_facts *f)
{
	if (f->counter_usable == 0 && f->mode != FC_MODE_OFF)
		declared_frequency(f);
}

bool fc_trust_still(struct fc_trust_facts *f, const struct fc_trust *t, char *why, size_t len)
{
	const char *mine = fc_trust_counter_clocksource(f->counter_kind);
	if (!mine || (!t->watch_current && !t->watch_available))
		return true;
	/* the paths and buffers in f: this runs in a re-anchor, on whatever
	 * stack the reader has (docs/fastclock.3, "Stack use") */
	char *now = f->now, *list = f->list;
	if (t->watch_current) {
		if (fc_read_small(f->cur_path, now, sizeof f->now) <= 0)
			return true;  /* unreadable now: keep the decision taken */
		if (strcmp(now, mine) != 0) {
			size_t n = fc_text_put(why, len, 0, "the kernel left ");
			n = fc_text_put(why, len, n, mine);
			n = fc_text_put(why, len, n, " for ");
			n = fc_text_put(why, len, n, now);
			fc_text_put(why, len, n, " while the program ran");
			return false;
		}
	}
	if (t->watch_available) {
		if (fc_read_small(f->avail_path, list, sizeof f->list) <= 0)
			return true;
		if (!fc_trust_listed(list, mine)) {
			size_t n = fc_text_put(why, len, 0, "the kernel withdrew ");
			n = fc_text_put(why, len, n, mine);
			fc_text_put(why, len, n, " from the available clocksources (marked unstable)");
			return false;
		}
	}
	return true;
}

/* ---- the names of the sources and of the reasons decided above ---- */

const char *fc_source_name(enum fc_source source)
{
	switch (source) {
	case FC_SOURCE_KERNEL: return "kernel";
	case FC_SOURCE_COUNTER: return "counter";
	}
	return "unknown";
}

const char *fc_reason_name(enum fc_reason reason)
{
	switch (reason) {
	case FC_REASON_KERNEL_USES_COUNTER: return "kernel-uses-counter";
	case FC_REASON_VERIFIED: return "verified";
	case FC_REASON_FORCED: return "forced";
	case FC_REASON_OFF: return "off";
	case FC_REASON_NO_COUNTER: return "no-counter";
	case FC_REASON_NOT_INVARIANT: return "not-invariant";
	case FC_REASON_UNVERIFIED: return "unverified";
	case FC_REASON_VERDICT_UNSOUND: return "verdict-unsound";
	case FC_REASON_KERNEL_LEFT: return "kernel-left";
	case FC_REASON_NO_SYSFS: return "no-sysfs";
	case FC_REASON_NO_FREQUENCY: return "no-frequency";
	case FC_REASON_KERNEL_CLOCK_FAILED: return "kernel-clock-failed";
	case FC_REASON_UNSUPPORTED: return "unsupported";
	case FC_REASON_COUNTER_SLOW: return "counter-slow";
	}
	return "unknown";
}
