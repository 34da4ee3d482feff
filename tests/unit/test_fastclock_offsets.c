/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock_offsets.c: the offsets that make REALTIME, BOOTTIME and
 * TAI from libfastclock's MONOTONIC (lib/fastclock_offsets.c, included
 * here), against a kernel played by this file (fc_kclock_ns below): its
 * clocks advance 20 to 32 ns a read, and a suspend and resume can be put before
 * any read, as it falls for a thread that the freezer stopped there.
 *
 * A resume moves REALTIME and BOOTTIME alike, MONOTONIC not
 * (__timekeeping_inject_sleeptime in kernel/time/timekeeping.c).  What
 * must hold wherever the resume falls in a refresh of the offsets or in a
 * follow of BOOTTIME - MONOTONIC:
 *   - after the follow a check makes (fc_int_boot_follow), the clocks as
 *     the readers make them (MONOTONIC + boot_off, + the offsets to
 *     BOOTTIME) are the kernel's: REALTIME and TAI exactly, BOOTTIME
 *     within a bracket of the fake kernel's reads and never ahead;
 *   - boot_off is never lowered.
 * With nothing happening, follows and refreshes leave every clock as it
 * was (a raise that was only a tighter bracket moved REALTIME, and the
 * next refresh moved it back).  A resume with a step of the wall clock
 * in it, and after one no REALTIME read refreshed the offset for; a kernel
 * clock slow to read; children in time namespaces.
 * Keeping REALTIME - MONOTONIC instead, a refresher frozen between its
 * reads and its store left REALTIME behind by the time asleep (the lab's
 * fault-suspend saw it: 2.2 s, for about 1 ms).
 */
#include "fastclock_offsets.c"
#include "unit.h"

#define READ_NS 20
#define TICK_NS 4000000
#define SLEPT_NS 2355136424LL  /* the lab's */
#define THAW_NS 5000000        /* MONOTONIC from the freeze to the thaw */
#define TAI_S 37

/* ---- the kernel ---- */

static struct {
	int64_t mono, boot_off, rt_off;
	long reads, resume_before;  /* the resume comes before read number resume_before */
	long fine_reads;     /* reads of a clock other than the coarse ones: system calls on hpet */
	int64_t tai_extra;   /* TAI - REALTIME beyond TAI_S: adjtimex(ADJ_TAI) alone moves it */
	int resumes;
	bool others_follow;  /* another thread follows it before this one goes on */
	int64_t step;        /* a step of the wall clock at the resume */
	int64_t read_extra;  /* a kernel clock slower to read (hpet: about 1 us) */
	long stall_before;   /* the reading thread held up before this read... */
	int64_t stall_ns;    /* ...this long */
} K;

static void kernel_reset(void)
{
	memset(&K, 0, sizeof K);
	K.mono = 1000 * NS_PER_S + 123457;
	K.boot_off = 7 * NS_PER_S + 31;
	K.rt_off = 1790000000 * NS_PER_S + 99991;
}

int64_t fc_kclock_ns(clockid_t id)
{
	if (++K.reads == K.resume_before) {
		K.boot_off += SLEPT_NS;
		K.rt_off += SLEPT_NS + K.step;
		K.mono += THAW_NS;
		K.resumes++;
		if (K.others_follow)
			(void)fc_int_boot_follow();
	}
	if (K.reads == K.stall_before)
		K.mono += K.stall_ns;
	K.mono += READ_NS + K.reads * 7 % 13 + K.read_extra;  /* reads that take 20 to 32 ns */
	int64_t coarse = K.mono - K.mono % TICK_NS;
	if (id != CLOCK_MONOTONIC_COARSE && id != CLOCK_REALTIME_COARSE)
		K.fine_reads++;
	switch (id) {
	case CLOCK_MONOTONIC: return K.mono;
	case CLOCK_BOOTTIME: return K.mono + K.boot_off;
	case CLOCK_REALTIME: return K.mono + K.rt_off;
	case CLOCK_TAI: return K.mono + K.rt_off + (TAI_S + K.tai_extra) * NS_PER_S;
	case CLOCK_MONOTONIC_COARSE: return coarse;
	case CLOCK_REALTIME_COARSE: return coarse + K.rt_off;
	default: return INT64_MIN;
	}
}

int fc_kclock(clockid_t id, struct timespec *ts)
{
	int64_t v = fc_kclock_ns(id);
	if (v == INT64_MIN)
		return -EINVAL;
	ts->tv_sec = v / NS_PER_S;
	ts->tv_nsec = v % NS_PER_S;
	return 0;
}

void fc_kclock_init(void) {}
int fc_kclock_has_vdso(void) { return 1; }
void *fc_elf_lookup(const void *base, const char *name) { (void)base; (void)name; return NULL; }

/* ---- the library's state, as fastclock.c holds it ---- */

static struct fc_mm mm;
struct fc_latch_state fc_int_latch = { .mm = &mm };
struct fc_offsets fc_int_offsets;
struct fc_writer fc_int_writer;

static void library_start(void)
{
	memset(&fc_int_offsets, 0, sizeof fc_int_offsets);
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	memset(&mm, 0, sizeof mm);
	fc_int_boot_start();
	fc_int_rt_refresh();
}

/* The clocks as fastclock.c's readers make them from MONOTONIC m (a line
 * right for MONOTONIC: the kernel's own). */
static int64_t served_boot(int64_t m)
{
	return m + atomic_load(&fc_int_offsets.boot_off);
}

static int64_t served_realtime(int64_t m)
{
	return served_boot(m) + atomic_load(&fc_int_offsets.rt_boot_off);
}

static int64_t served_tai(int64_t m)
{
	return served_boot(m) + atomic_load(&fc_int_offsets.tai_boot_off);
}

/* The error of each served clock now, against the kernel's (no resume
 * falls in these reads). */
struct errors {
	int64_t boot, rt, tai;
};

static struct errors errors_now(void)
{
	long saved = K.resume_before;
	K.resume_before = 0;
	int64_t m = fc_kclock_ns(CLOCK_MONOTONIC);
	struct errors e = {
		served_boot(m) - (m + K.boot_off),
		served_realtime(m) - (m + K.rt_off),
		served_tai(m) - (m + K.rt_off + (TAI_S + K.tai_extra) * NS_PER_S),
	};
	K.resume_before = saved;
	return e;
}

/* A bracket of the fake kernel's: two reads wide. */
#define BRACKET_NS (2 * (READ_NS + 12))

/* BOOTTIME within tol behind, never ahead; REALTIME and TAI exact. */
static void check_right(struct errors e, int64_t tol)
{
	CHECK(e.boot <= 0 && e.boot >= -tol);
	CHECK_INT(e.rt, 0);
	CHECK_INT(e.tai, 0);
	if (e.boot > 0 || e.boot < -tol)
		printf("  BOOTTIME off by %" PRId64 " (tolerance %" PRId64 ")\n", e.boot, tol);
}

/* Quiet: REALTIME and TAI exact (the coarse clocks give REALTIME -
 * MONOTONIC exactly, and the offset to BOOTTIME takes off the boot_off
 * readers add); BOOTTIME within a bracket, never ahead. */
static void test_quiet(void)
{
	kernel_reset();
	library_start();
	CHECK(atomic_load(&fc_int_offsets.tai_ok));
	check_right(errors_now(), BRACKET_NS);
	CHECK_INT(K.resumes, 0);
	/* nothing happens: follows and refreshes change nothing */
	int64_t boot = atomic_load(&fc_int_offsets.boot_off);
	for (int i = 0; i < 200; i++) {
		CHECK(fc_int_boot_follow());
		if (i % 10 == 0)
			fc_int_rt_refresh();
		if (i % 50 == 0)
			fc_int_boot_refresh();
		check_right(errors_now(), BRACKET_NS);
	}
	CHECK_INT(atomic_load(&fc_int_offsets.boot_off), boot);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 0);
	CHECK(!fc_int_writer.reset_base);
}

/* How many reads one refresh makes, quiet. */
static long refresh_reads(void)
{
	long before = K.reads;
	fc_int_rt_refresh();
	return K.reads - before;
}

/* A refresh of the offsets with the resume before each of its reads (and
 * after its last: stored after the resume from values read before it),
 * then the first check after the thaw, which follows BOOTTIME - MONOTONIC:
 * every clock right; also when another thread followed the resume before
 * this one, held up across it, goes on (its boot_off then is a later
 * one than its own reads'). */
static void test_refresh_across_a_resume(void)
{
	kernel_reset();
	library_start();
	long n = refresh_reads();
	CHECK(n >= 9);
	for (int others = 0; others < 2; others++) {
		for (long at = 1; at <= n + 1; at++) {
			unit_case("a resume before read %ld of a refresh's %ld%s", at, n,
			          others ? ", another thread following it" : "");
			kernel_reset();
			library_start();
			K.others_follow = others;
			int64_t boot_before = atomic_load(&fc_int_offsets.boot_off);
			K.resume_before = K.reads + at;
			fc_int_rt_refresh();
			if (at > n)
				(void)fc_kclock_ns(CLOCK_MONOTONIC);  /* the thaw, after the store */
			CHECK_INT(K.resumes, 1);
			/* never above the kernel's, never lowered */
			CHECK(atomic_load(&fc_int_offsets.boot_off) <= K.boot_off);
			CHECK(atomic_load(&fc_int_offsets.boot_off) >= boot_before);
			fc_int_boot_follow();
			check_right(errors_now(), BRACKET_NS);
		}
	}
}

/* The follow alone (a resume between two checks, the counter stopped while
 * asleep so the line stayed right): BOOTTIME - MONOTONIC raised by the
 * time asleep, the writer told (its frequency baseline starts again). */
static void test_follow_after_a_resume(void)
{
	unit_case("a follow after a resume");
	kernel_reset();
	library_start();
	fc_int_writer.reset_base = false;
	long before = K.reads;
	CHECK(fc_int_boot_follow());
	CHECK_INT(K.reads - before, 3);  /* a quiet follow: one bracket */
	K.resume_before = K.reads + 1;
	(void)fc_kclock_ns(CLOCK_MONOTONIC);
	struct errors stale = errors_now();
	CHECK(stale.boot < -SLEPT_NS + BRACKET_NS && stale.rt == -SLEPT_NS);
	CHECK(fc_int_boot_follow());
	check_right(errors_now(), BRACKET_NS);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	fc_int_boot_refresh();
	CHECK(fc_int_writer.reset_base);
	fc_int_writer.reset_base = false;
	fc_int_boot_refresh();
	CHECK(!fc_int_writer.reset_base);
}

/* Two follows with the resume before each of their reads: what the first
 * stores is never above the kernel's; the second is right. */
static void test_follow_across_a_resume(void)
{
	for (long at = 1; at <= 14; at++) {
		unit_case("a resume before read %ld of two follows%s", (at - 1) % 7 + 1,
		          at > 7 ? ", another thread following it" : "");
		kernel_reset();
		library_start();
		K.others_follow = at > 7;
		int64_t before = atomic_load(&fc_int_offsets.boot_off);
		K.resume_before = K.reads + (at - 1) % 7 + 1;
		(void)fc_int_boot_follow();
		(void)fc_kclock_ns(CLOCK_MONOTONIC);
		CHECK(atomic_load(&fc_int_offsets.boot_off) <= K.boot_off);
		CHECK(atomic_load(&fc_int_offsets.boot_off) >= before);
		CHECK(fc_int_boot_follow());
		CHECK_INT(K.resumes, 1);
		check_right(errors_now(), BRACKET_NS);
	}
}

/* A step of the wall clock at the resume: REALTIME's growth does not fit
 * the time asleep, so BOOTTIME's offset is the bracket's and REALTIME is
 * read again at once. */
static void test_resume_with_a_step(void)
{
	unit_case("a resume with a step");
	kernel_reset();
	library_start();
	K.step = 5 * NS_PER_S;
	K.resume_before = K.reads + 1;
	(void)fc_kclock_ns(CLOCK_MONOTONIC);
	CHECK(fc_int_boot_follow());
	check_right(errors_now(), BRACKET_NS);
}

/* A child in a time namespace (fc_int_new_mm starts the offsets afresh
 * when fc_int_offsets_moved): BOOTTIME's offset alone lower or higher
 * than its parent's, or MONOTONIC's and BOOTTIME's alike (then only
 * REALTIME - MONOTONIC tells: REALTIME is not namespaced; a parent in
 * kernel mode from start-up has no line or floor that would). */
static void test_namespaces(void)
{
	static const struct {
		const char *name;
		int64_t mono, boot;  /* the namespace's offsets */
	} ns[] = {
		{ "BOOTTIME's offset lower", 0, -300 * NS_PER_S },
		{ "BOOTTIME's offset higher", 0, 1000 * NS_PER_S },
		{ "both offsets -300 s", -300 * NS_PER_S, -300 * NS_PER_S },
	};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		unit_case("a child in a time namespace: %s", ns[i].name);
		kernel_reset();
		library_start();
		CHECK(!fc_int_offsets_moved());
		K.mono += ns[i].mono;
		K.boot_off += ns[i].boot - ns[i].mono;
		K.rt_off -= ns[i].mono;  /* REALTIME stays */
		CHECK(fc_int_offsets_moved());
		fc_int_boot_start();
		fc_int_rt_refresh();
		CHECK(!fc_int_offsets_moved());
		check_right(errors_now(), BRACKET_NS);
	}
}

/* A kernel clock slow to read (1 us a read, as hpet): the slack follows
 * the brackets, so a follow says nothing moved (and lets the check vouch)
 * and sees no resume in the jitter; a real one is still taken. */
static void test_slow_kernel_clock(void)
{
	unit_case("a kernel clock slow to read");
	kernel_reset();
	K.read_extra = 1000;
	library_start();
	CHECK(atomic_load(&fc_int_offsets.boot_slack) > 2 * 1000);
	int told = 0;
	for (int i = 0; i < 100; i++) {
		told += fc_int_boot_follow();
		if (i % 10 == 0)
			fc_int_rt_refresh();
	}
	CHECK_INT(told, 100);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 0);
	check_right(errors_now(), 2 * (READ_NS + 12 + 1000));
	K.resume_before = K.reads + 1;
	CHECK(fc_int_boot_follow());
	CHECK_INT(K.resumes, 1);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	check_right(errors_now(), 2 * (READ_NS + 12 + 1000));
}

/* The kernel's clock slower to read after start (its clocksource switched
 * to hpet under the library: 20 us a read under TCG): the slack grows
 * with the brackets, so follows go on saying nothing moved and checks go
 * on vouching; a resume is still taken; beyond FOLLOW_SLACK_MAX_NS a
 * follow cannot tell. */
static void test_kernel_clock_slower_later(void)
{
	unit_case("the kernel's clock slower to read after start");
	kernel_reset();
	library_start();
	K.read_extra = 20000;
	int told = 0;
	for (int i = 0; i < 20; i++)
		told += fc_int_boot_follow();
	CHECK_INT(told, 20);
	CHECK(atomic_load(&fc_int_offsets.boot_slack) >= 2 * 2 * 20000);
	CHECK(atomic_load(&fc_int_offsets.boot_slack) <= FOLLOW_SLACK_MAX_NS);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 0);
	K.resume_before = K.reads + 1;
	CHECK(fc_int_boot_follow());
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	CHECK(errors_now().boot <= 0);
	K.read_extra = 60000;  /* brackets of 120 us */
	CHECK(!fc_int_boot_follow());
}

/* A step of the wall clock that no REALTIME read refreshed the offset for
 * (a program that reads BOOTTIME only), then a resume, found by a follow
 * held up inside its bracket: REALTIME's growth is the time asleep plus the
 * step, above the bracket's low end; BOOTTIME takes the low end (never
 * ahead of the kernel's) and REALTIME is read again. */
static void test_unrefreshed_step_then_resume(void)
{
	/* the last: a step smaller than a bracket of 300 ns reads, which a
	 * growth allowed up to the bracket's high end took into BOOTTIME */
	static const struct {
		int64_t step, read_extra;
	} c[] = { { -20000, 0 }, { 20000, 0 }, { 500, 300 } };
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int64_t step = c[i].step;
		unit_case("a step of %lld ns unrefreshed, then a resume", (long long)step);
		kernel_reset();
		K.read_extra = c[i].read_extra;
		library_start();
		K.rt_off += step;
		K.resume_before = K.reads + 1;
		(void)fc_kclock_ns(CLOCK_MONOTONIC);
		K.stall_before = K.reads + 2;  /* between the follow's MONOTONIC and BOOTTIME */
		K.stall_ns = 50000;
		CHECK(fc_int_boot_follow());
		check_right(errors_now(), 2 * (READ_NS + 12 + c[i].read_extra));
		CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	}
}

/* A refresh that stores nothing (its lock busy, or a step in each attempt)
 * leaves REALTIME's offset due at the next read, not FC_STEP_CHECK_NS
 * later: a step is then seen at the first read that can refresh. */
static void test_failed_refresh_due_again(void)
{
	unit_case("a refresh that stored nothing is due again");
	kernel_reset();
	library_start();
	atomic_store(&fc_int_offsets.rt_every, 1000);
	atomic_store(&fc_int_offsets.rt_due, 6000);  /* checked at 5000 */
	K.rt_off += 2 * NS_PER_S;  /* a step */
	atomic_store(&mm.rt_lock, 1);  /* another thread refreshing, held up */
	fc_int_rt_check(7000);
	CHECK_INT(atomic_load(&fc_int_offsets.rt_due), 6000);
	CHECK_INT(errors_now().rt, -2 * NS_PER_S);
	atomic_store(&mm.rt_lock, 0);
	fc_int_rt_check(7001);
	CHECK_INT(atomic_load(&fc_int_offsets.rt_due), 8001);
	check_right(errors_now(), BRACKET_NS);
}

/* A due check of REALTIME's offset with nothing moved reads only the
 * coarse clocks (the vDSO's data page: no system call where the fine
 * clocks are one); a step, a resume, another day's leap span or a
 * namespace's other MONOTONIC each make it refresh in full, and every
 * clock is right after. */
static void test_check_reads_coarse_when_quiet(void)
{
	unit_case("a quiet check of REALTIME's offset makes no fine read");
	kernel_reset();
	library_start();
	atomic_store(&fc_int_offsets.rt_every, 1000);
	atomic_store(&fc_int_offsets.rt_due, 0);
	long fine = K.fine_reads;
	fc_int_rt_check(1000);
	CHECK_INT(K.fine_reads - fine, 0);
	CHECK_INT(atomic_load(&fc_int_offsets.rt_due), 2000);
	check_right(errors_now(), BRACKET_NS);

	K.rt_off += 3 * NS_PER_S;  /* a step: refreshed in full */
	fine = K.fine_reads;
	fc_int_rt_check(2000);
	CHECK(K.fine_reads - fine > 0);
	check_right(errors_now(), BRACKET_NS);

	K.boot_off += SLEPT_NS;  /* a resume: REALTIME - MONOTONIC grew too */
	K.rt_off += SLEPT_NS;
	fc_int_rt_check(3000);
	check_right(errors_now(), BRACKET_NS);
	fine = K.fine_reads;
	fc_int_rt_check(4000);
	CHECK_INT(K.fine_reads - fine, 0);  /* quiet again */

	/* a day later, nothing else moved: the leap span is the next day's */
	int64_t lo = atomic_load(&fc_int_offsets.leap_lo);
	K.mono += DAY_NS;
	fine = K.fine_reads;
	fc_int_rt_check(5000);
	CHECK(K.fine_reads - fine > 0);
	CHECK_INT(atomic_load(&fc_int_offsets.leap_lo) - lo, DAY_NS);
	check_right(errors_now(), BRACKET_NS);

	/* TAI - REALTIME moved alone (adjtimex's ADJ_TAI): the quiet checks
	 * do not see it; the full refresh they make each RT_FULL_EVERY_NS does */
	K.tai_extra = 1;
	fine = K.fine_reads;
	fc_int_rt_check(6000);
	CHECK_INT(K.fine_reads - fine, 0);
	CHECK_INT(errors_now().tai, -NS_PER_S);
	K.mono += RT_FULL_EVERY_NS;
	fine = K.fine_reads;
	fc_int_rt_check(7000);
	CHECK(K.fine_reads - fine > 0);
	check_right(errors_now(), BRACKET_NS);

	/* another time namespace: MONOTONIC (coarse too) moved, REALTIME not */
	K.mono -= 500 * NS_PER_S;
	K.rt_off += 500 * NS_PER_S;
	K.boot_off += 500 * NS_PER_S;
	fine = K.fine_reads;
	fc_int_rt_check(8000);
	CHECK(K.fine_reads - fine > 0);
	CHECK_INT(errors_now().rt, 0);
}

/* A check's look for a resume (fc_int_check_follow): quiet, only the
 * coarse clocks; a resume (REALTIME - MONOTONIC grew by the time asleep)
 * is followed, with the counter standing still as QEMU's S3 leaves it;
 * a step alone follows and refreshes REALTIME's offsets once, and the
 * next look is quiet again.  Every clock right after each. */
static void test_check_follow(void)
{
	unit_case("a check's look for a resume reads the fine clocks only when something moved");
	kernel_reset();
	library_start();
	int64_t mono;
	long fine = K.fine_reads;
	CHECK(fc_int_check_follow(&mono));
	CHECK_INT(K.fine_reads - fine, 0);
	CHECK_INT(mono, INT64_MIN);

	int64_t boot = atomic_load(&fc_int_offsets.boot_off);
	K.boot_off += SLEPT_NS;
	K.rt_off += SLEPT_NS;
	CHECK(fc_int_check_follow(&mono));
	CHECK(mono != INT64_MIN);  /* the follow's last MONOTONIC, for the check */
	CHECK(atomic_load(&fc_int_offsets.boot_off) >= boot + SLEPT_NS - BRACKET_NS);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	check_right(errors_now(), BRACKET_NS);
	fine = K.fine_reads;
	CHECK(fc_int_check_follow(&mono));
	CHECK_INT(K.fine_reads - fine, 0);

	K.rt_off -= 5 * NS_PER_S;  /* a step back, no resume */
	CHECK(fc_int_check_follow(&mono));
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	check_right(errors_now(), BRACKET_NS);
	fine = K.fine_reads;
	CHECK(fc_int_check_follow(&mono));
	CHECK_INT(K.fine_reads - fine, 0);

	/* the resume before each read of a look (and after its last): this
	 * look or the next one takes it */
	for (long at = 1; at <= 40; at++) {
		kernel_reset();
		library_start();
		K.resume_before = K.reads + at;
		(void)fc_int_check_follow(&mono);
		bool fell = K.resumes > 0;
		K.resume_before = 0;
		if (!fell)
			K.boot_off += SLEPT_NS, K.rt_off += SLEPT_NS, K.resumes++;
		CHECK(fc_int_check_follow(&mono));
		CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
		check_right(errors_now(), BRACKET_NS);
	}
}

/* Kernel mode (no checks): a thread follows BOOTTIME - MONOTONIC when
 * MONOTONIC moved FC_STEP_CHECK_NS past the last follow, not before, and
 * when the last follow is far ahead (another clock's); REALTIME's offset
 * is refreshed on the same timing. */
static void test_kernel_mode_timing(void)
{
	unit_case("kernel mode's look at the offsets");
	kernel_reset();
	library_start();
	int64_t m = fc_kclock_ns(CLOCK_MONOTONIC);
	fc_int_offsets_due_kernel(m);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_followed), m);
	K.resume_before = K.reads + 1;
	(void)fc_kclock_ns(CLOCK_MONOTONIC);
	fc_int_offsets_due_kernel(m + FC_STEP_CHECK_NS / 2);  /* too soon */
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 0);
	fc_int_offsets_due_kernel(m + FC_STEP_CHECK_NS);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_jumps), 1);
	check_right(errors_now(), BRACKET_NS);
	/* a last look far ahead (a child in a namespace behind): due */
	atomic_store(&fc_int_offsets.boot_followed, m + 300 * NS_PER_S);
	atomic_store(&fc_int_offsets.rt_checked_ns, m + 300 * NS_PER_S);
	K.rt_off += NS_PER_S;  /* a step */
	fc_int_offsets_due_kernel(m + 2 * FC_STEP_CHECK_NS);
	CHECK_INT(atomic_load(&fc_int_offsets.boot_followed), m + 2 * FC_STEP_CHECK_NS);
	check_right(errors_now(), BRACKET_NS);
}

int main(void)
{
	fc_int_writer.counts_per_ns = 1;
	test_quiet();
	test_refresh_across_a_resume();
	test_follow_after_a_resume();
	test_follow_across_a_resume();
	test_resume_with_a_step();
	test_unrefreshed_step_then_resume();
	test_slow_kernel_clock();
	test_kernel_clock_slower_later();
	test_namespaces();
	test_failed_refresh_due_again();
	test_check_reads_coarse_when_quiet();
	test_check_follow();
	test_kernel_mode_timing();
	return unit_done("fastclock_offsets");
}
