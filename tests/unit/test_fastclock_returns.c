/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock_returns.c: every return value that fastclock(3) and
 * include/fastclock.h document, made to happen: each function called with
 * the inputs (or in the state) that give each one, and errno left as it was
 * by every call.  This program uses the public header only, as a user's
 * would.
 *
 * The states a process cannot leave once started are made in a copy of
 * this program run with the environment that gives them: FASTCLOCK=off
 * (kernel mode: -ENOTSUP, fc_cycles_to_ns 0), and a re-anchor held up by
 * FASTCLOCK_TEST_WRITER_DELAY_US while the main thread calls (fc_resync's
 * -EBUSY and fc_info's -EAGAIN).
 */
#include "fastclock.h"
#include "unit.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERRNO_MARK 4321

/* The values of an enum the header documents, and one past them. */
static const enum fc_reason all_reasons[] = {
	FC_REASON_KERNEL_USES_COUNTER, FC_REASON_VERIFIED,     FC_REASON_FORCED,       FC_REASON_OFF,
	FC_REASON_NO_COUNTER,          FC_REASON_NOT_INVARIANT, FC_REASON_UNVERIFIED,  FC_REASON_VERDICT_UNSOUND,
	FC_REASON_KERNEL_LEFT,         FC_REASON_NO_SYSFS,     FC_REASON_NO_FREQUENCY, FC_REASON_KERNEL_CLOCK_FAILED,
	FC_REASON_UNSUPPORTED,
	FC_REASON_COUNTER_SLOW,
};

/* Runs this program again with argv[1] = mode and one more variable in its
 * environment; its exit status (-1 when it did not exit). */
static int run_copy(const char *mode, const char *env1, const char *env2)
{
	pid_t p = fork();
	if (p == 0) {
		char *argv[] = { "test_fastclock_returns", (char *)mode, NULL };
		char *envp[] = { (char *)env1, (char *)env2, NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- in this process ---- */

static void test_reads(void)
{
	errno = ERRNO_MARK;
	CHECK(fc_now_ns() > 0);
	CHECK(fc_now_ns_unordered() > 0);
	CHECK(fc_realtime_ns() > 1500000000LL * 1000000000LL);  /* after 2017 */
	int64_t c = fc_coarse_ns();
	CHECK(c > 0 && c != INT64_MIN);
	(void)fc_cycles();
	CHECK_INT(errno, ERRNO_MARK);
}

static void test_gettime(void)
{
	struct timespec ts;
	const clockid_t served[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
	                             CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE, CLOCK_PROCESS_CPUTIME_ID };
	errno = ERRNO_MARK;
	for (size_t i = 0; i < UNIT_COUNT(served); i++) {
		unit_case("fc_gettime(%d)", (int)served[i]);
		ts.tv_sec = -1;
		ts.tv_nsec = -1;
		CHECK_INT(fc_gettime(served[i], &ts), 0);
		CHECK(ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
	}
	unit_case(NULL);
	/* the errors, as -errno, with errno untouched: not clock_gettime's way */
	CHECK_INT(fc_gettime((clockid_t)12345, &ts), -EINVAL);
	CHECK_INT(fc_gettime(CLOCK_MONOTONIC, NULL), -EFAULT);
	CHECK_INT(fc_gettime(CLOCK_PROCESS_CPUTIME_ID, NULL), -EFAULT);
	CHECK_INT(errno, ERRNO_MARK);
}

static void test_intervals(void)
{
	CHECK_INT(fc_elapsed_ns(fc_now_ns() + 1000000000), 0);  /* negative: 0 */
	CHECK(fc_elapsed_ns(0) > 0);
	CHECK_INT(fc_cycles_to_ns((uint64_t)-5), 0);             /* negative as signed: 0 */
	CHECK_INT(fc_cycles_to_ns(0), 0);
	struct fc_info in;
	CHECK_INT(fc_info(&in), 0);
	if (in.source == FC_SOURCE_COUNTER)
		CHECK(fc_cycles_to_ns((uint64_t)(in.counter_hz / 1000)) > 0);  /* a millisecond of counts */
}

static void test_info(void)
{
	struct fc_info in;
	errno = ERRNO_MARK;
	CHECK_INT(fc_info(NULL), -EINVAL);
	CHECK_INT(fc_info(&in), 0);
	CHECK(in.source == FC_SOURCE_KERNEL || in.source == FC_SOURCE_COUNTER);
	CHECK(in.reason_text[0] != '\0');
	CHECK(in.verdict >= -1 && in.verdict <= 2);
	CHECK_INT(errno, ERRNO_MARK);
	/* on the counter a re-anchor is done now (no other thread here) */
	int r = fc_resync();
	CHECK(r == 0 || r == -ENOTSUP);  /* -ENOTSUP: the counter not trusted here */
	if (in.source == FC_SOURCE_COUNTER)
		CHECK_INT(r, 0);
}

static void test_names(void)
{
	CHECK_STR(fc_source_name(FC_SOURCE_KERNEL), "kernel");
	CHECK_STR(fc_source_name(FC_SOURCE_COUNTER), "counter");
	CHECK_STR(fc_source_name((enum fc_source)99), "unknown");
	CHECK_STR(fc_source_name((enum fc_source)-1), "unknown");
	/* every reason its own name, none of them "unknown" */
	for (size_t i = 0; i < UNIT_COUNT(all_reasons); i++) {
		const char *n = fc_reason_name(all_reasons[i]);
		unit_case("reason %zu", i);
		CHECK(n != NULL && n[0] != '\0' && strcmp(n, "unknown") != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(n, fc_reason_name(all_reasons[j])) != 0);
	}
	unit_case(NULL);
	CHECK_STR(fc_reason_name(FC_REASON_KERNEL_USES_COUNTER), "kernel-uses-counter");
	CHECK_STR(fc_reason_name(FC_REASON_VERIFIED), "verified");
	CHECK_STR(fc_reason_name((enum fc_reason)99), "unknown");
	CHECK_STR(fc_reason_name((enum fc_reason)-1), "unknown");
}

static void test_verdict_parse(void)
{
	struct fc_verdict v;
	const char ok[] = "boot_id=0123abcd-0000\nverdict=sound\ncounter_hz=2995200000\nclocksource=hpet\n"
	                  "time=1700000000\nfuture_key=ignored\n";
	errno = ERRNO_MARK;
	CHECK_INT(fc_verdict_parse(ok, strlen(ok), &v), 0);
	CHECK_STR(v.boot_id, "0123abcd-0000");
	CHECK_INT(v.verdict, 0);
	CHECK_STR(v.clocksource, "hpet");
	CHECK_INT(v.time, 1700000000);
	const char *bad[] = {
		"verdict=sound\n",                          /* no boot_id */
		"boot_id=0123\n",                           /* no verdict */
		"boot_id=0123\nverdict=maybe\n",            /* a malformed value */
		"boot_id=XYZ\nverdict=sound\n",             /* not a boot id */
		"boot_id=0123\nverdict=sound\ncounter_hz=fast\n",
		"boot_id=0123\nverdict=sound\nno equals sign\n",
		"",
	};
	for (size_t i = 0; i < UNIT_COUNT(bad); i++) {
		unit_case("bad verdict %zu", i);
		CHECK_INT(fc_verdict_parse(bad[i], strlen(bad[i]), &v), -EINVAL);
	}
	unit_case(NULL);
	CHECK_INT(fc_verdict_parse(NULL, 3, &v), -EINVAL);
	CHECK_INT(fc_verdict_parse(ok, strlen(ok), NULL), -EINVAL);
	CHECK_INT(errno, ERRNO_MARK);
}

/* ---- in copies of this program ---- */

/* FASTCLOCK=off: the kernel's clock, for good. */
static int off_copy(void)
{
	struct fc_info in;
	int bad = 0;
	bad |= fc_info(&in) != 0 || in.source != FC_SOURCE_KERNEL || in.reason != FC_REASON_OFF;
	bad |= fc_resync() != -ENOTSUP;
	bad |= fc_cycles_to_ns(1000000) != 0;
	struct timespec ts;
	bad |= fc_gettime(CLOCK_MONOTONIC, &ts) != 0;
	return bad ? 1 : 0;
}

static atomic_int holding, held_done;

static void *hold_reanchor(void *arg)
{
	(void)arg;
	atomic_store(&holding, 1);
	(void)fc_resync();  /* held up by the writer delay, with the lock */
	atomic_store(&held_done, 1);
	return NULL;
}

/* A re-anchor held up in another thread: fc_resync says -EBUSY, fc_info
 * -EAGAIN.  Exit 0 both seen, 1 not, 77 the counter not in use here. */
static int held_copy(void)
{
	struct fc_info in;
	int64_t until = fc_now_ns() + 2000000000;
	while (fc_info(&in) == 0 && in.source != FC_SOURCE_COUNTER && fc_now_ns() < until)
		for (int i = 0; i < 1000; i++)
			(void)fc_now_ns();
	if (in.source != FC_SOURCE_COUNTER) {
		printf("  skip -EBUSY, -EAGAIN: the counter is not in use (%s)\n", in.reason_text);
		return 77;
	}
	bool busy = false, again = false;
	for (int tries = 0; tries < 5 && !(busy && again); tries++) {
		atomic_store(&holding, 0);
		atomic_store(&held_done, 0);
		pthread_t th;
		if (pthread_create(&th, NULL, hold_reanchor, NULL) != 0)
			return 1;
		while (!atomic_load(&holding))
			sched_yield();
		/* fc_resync only once fc_info has seen the state held: called
		 * before the other thread takes the lock, it would take it
		 * itself (and be the one held up), and the other would get
		 * the -EBUSY. */
		while (!atomic_load(&held_done)) {
			if (fc_info(&in) != -EAGAIN)
				continue;
			again = true;
			busy |= fc_resync() == -EBUSY;
		}
		pthread_join(th, NULL);
	}
	printf("  held re-anchor: fc_resync %s, fc_info %s\n", busy ? "-EBUSY" : "never -EBUSY",
	       again ? "-EAGAIN" : "never -EAGAIN");
	return busy && again ? 0 : 1;
}

static void test_copies(void)
{
	CHECK_INT(run_copy("--off", "FASTCLOCK=off", NULL), 0);
	int r = run_copy("--held", "FASTCLOCK=force", "FASTCLOCK_TEST_WRITER_DELAY_US=300000");
	CHECK(r == 0 || r == 77);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--off"))
		return off_copy();
	if (argc > 1 && !strcmp(argv[1], "--held"))
		return held_copy();
	test_reads();
	test_gettime();
	test_intervals();
	test_info();
	test_names();
	test_verdict_parse();
	test_copies();
	return unit_done("test_fastclock_returns");
}
