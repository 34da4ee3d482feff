/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock.c: libfastclock on the live machine: the values against
 * the kernel's, never backwards across threads while another thread forces
 * re-anchors, after fork (also while a re-anchor is under way), inside a
 * signal handler, the clock_gettime drop-in's errors, and the trust rules
 * read from the environment (re-executing this program with FASTCLOCK,
 * FASTCLOCK_SYSFS and FASTCLOCK_VERDICT set: the library decides at start).
 *
 * Only the library's own state changes: never the machine's clock.
 */
#include "fastclock.h"
#include "fastclock_trust.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, id, &ts);  /* the kernel itself, no vDSO question */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t vdso_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits (reading the clock, which drives calibration) until the library is
 * on the counter or 2 s have passed; returns the source. */
static enum fc_source settle(struct fc_info *in)
{
	int64_t until = vdso_ns(CLOCK_MONOTONIC) + 2000000000;
	do {
		for (int i = 0; i < 1000; i++)
			(void)fc_now_ns();
		fc_info(in);
	} while (in->source != FC_SOURCE_COUNTER && vdso_ns(CLOCK_MONOTONIC) < until &&
	         (in->reason == FC_REASON_KERNEL_USES_COUNTER || in->reason == FC_REASON_VERIFIED ||
	          in->reason == FC_REASON_FORCED));
	return in->source;
}

/* Every served id against the kernel, bracketed: |value - kernel| within
 * the reported bound plus the bracket. */
static void test_against_kernel(void)
{
	struct fc_info in;
	enum fc_source src = settle(&in);
	printf("  source %s (%s): %s; bound %lld ns\n", fc_source_name(src), fc_reason_name(in.reason),
	       in.reason_text, (long long)in.error_bound_ns);
	static const clockid_t ids[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
		                         CLOCK_MONOTONIC_RAW };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		int64_t worst = 0, worst_allow = 0;
		for (int n = 0; n < 2000; n++) {
			struct timespec ts;
			int64_t a = vdso_ns(ids[i]);
			int r = fc_gettime(ids[i], &ts);
			int64_t b = vdso_ns(ids[i]);
			CHECK_INT(r, 0);
			int64_t v = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
			fc_info(&in);
			/* the bound, the bracket, and for BOOTTIME the offset's own
			 * bracket (read once, a few reads wide) */
			int64_t allow = in.error_bound_ns + (b - a) + 1000;
			int64_t off = v < a ? a - v : v > b ? v - b : 0;
			if (off - allow > worst - worst_allow) {
				worst = off;
				worst_allow = allow;
			}
		}
		if (worst > worst_allow)
			fprintf(stderr, "clock %d: off by %lld ns, allowed %lld\n", (int)ids[i], (long long)worst,
			        (long long)worst_allow);
		CHECK(worst <= worst_allow);
	}
}

static void test_gettime_errors(void)
{
	struct timespec ts;
	errno = 4321;
	CHECK_INT(fc_gettime((clockid_t)12345, &ts), -EINVAL);
	CHECK_INT(fc_gettime((clockid_t)-77, &ts), -EINVAL);
	CHECK_INT(fc_gettime(CLOCK_MONOTONIC, NULL), -EFAULT);
	CHECK_INT(errno, 4321);
	/* an id the library does not serve goes to the kernel */
	CHECK_INT(fc_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	CHECK(ts.tv_sec > 0 || ts.tv_nsec > 0);
	CHECK_INT(fc_gettime(CLOCK_MONOTONIC_COARSE, &ts), 0);
	int64_t c = fc_coarse_ns(), m = fc_now_ns();
	CHECK(c > 0 && c <= m + 1000);
	CHECK(fc_info(NULL) == -EINVAL);
	/* intervals */
	uint64_t c0 = fc_cycles();
	int64_t t0 = fc_now_ns();
	struct timespec ten = { 0, 10000000 };
	nanosleep(&ten, NULL);
	int64_t dt = fc_elapsed_ns(t0);
	int64_t dc = fc_cycles_to_ns(fc_cycles() - c0);
	CHECK(dt >= 10000000 && dt < 2000000000);
	struct fc_info in;
	fc_info(&in);
	if (in.source == FC_SOURCE_COUNTER)
		CHECK(dc > dt - 1000000 && dc < dt + 1000000);
	else
		CHECK_INT(dc, 0);
	CHECK_INT(fc_elapsed_ns(fc_now_ns() + 1000000000), 0);
}

/* ---- never backwards, across threads, with forced re-anchors ---- */

static _Atomic int64_t latest;
static atomic_int stop;
static atomic_long backwards, reads;

static void *reader(void *arg)
{
	int kind = (int)(intptr_t)arg;
	int64_t mine = 0;
	long n = 0, back = 0;
	while (!atomic_load(&stop)) {
		int64_t g = atomic_load(&latest);
		int64_t v;
		if (kind == 0) {
			v = fc_now_ns();
		} else {
			struct timespec ts;
			fc_gettime(CLOCK_MONOTONIC, &ts);
			v = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		}
		if (v < g || v < mine)
			back++;
		mine = v;
		int64_t cur = g;
		while (v > cur && !atomic_compare_exchange_weak(&latest, &cur, v))
			;
		n++;
	}
	atomic_fetch_add(&backwards, back);
	atomic_fetch_add(&reads, n);
	return NULL;
}

static void *resyncer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		fc_resync();
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[5];
	atomic_store(&stop, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, reader, (void *)(intptr_t)(i & 1));
	pthread_create(&th[4], NULL, resyncer, NULL);
	struct timespec run = { 1, 0 };
	nanosleep(&run, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	struct fc_info in;
	fc_info(&in);
	printf("  threads: %ld reads, %ld backward, %llu re-anchors\n", atomic_load(&reads), atomic_load(&backwards),
	       (unsigned long long)in.syncs);
	CHECK(atomic_load(&reads) > 1000);
	CHECK_INT(atomic_load(&backwards), 0);
}

/* ---- fork, also while another thread is re-anchoring ---- */

static void test_fork(void)
{
	pthread_t th;
	atomic_store(&stop, 0);
	pthread_create(&th, NULL, resyncer, NULL);
	int bad = 0;
	for (int i = 0; i < 50; i++) {
		int64_t before = fc_now_ns();
		pid_t p = fork();
		if (p == 0) {
			/* the child: the clock works, does not go back, re-anchors */
			int64_t a = fc_now_ns();
			int ok = a >= before;
			for (int n = 0; n < 3; n++) {
				ok &= fc_resync() != -EBUSY || n > 0;
				int64_t b = fc_now_ns();
				ok &= b >= a;
				a = b;
			}
			int64_t k = kns(CLOCK_MONOTONIC);
			ok &= a - k < 1000000 && k - a < 1000000;
			_exit(ok ? 0 : 1);
		}
		int st;
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	CHECK_INT(bad, 0);
}

/* ---- a signal handler reading the time while the main thread re-anchors ---- */

static volatile sig_atomic_t in_handler_bad, handled;
static _Atomic int64_t handler_last;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	int64_t v = fc_now_ns();
	int64_t prev = atomic_load(&handler_last);
	if (v < prev)
		in_handler_bad = 1;
	atomic_store(&handler_last, v);
	struct timespec ts;
	if (fc_gettime(CLOCK_REALTIME, &ts) != 0)
		in_handler_bad = 1;
	handled++;
	errno = saved;
}

static void test_signals(void)
{
	sigaction(SIGALRM, &(struct sigaction){ .sa_handler = on_alarm, .sa_flags = SA_RESTART }, NULL);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 100 }, { 0, 100 } }, NULL);
	/* the main thread re-anchors without pause: handlers land inside
	 * re-anchors, where the writer holds the lock */
	int64_t end = vdso_ns(CLOCK_MONOTONIC) + 500000000;
	while (vdso_ns(CLOCK_MONOTONIC) < end) {
		fc_resync();
		(void)fc_now_ns();
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	printf("  signals: %d handled\n", (int)handled);
	CHECK(handled > 10);
	CHECK_INT(in_handler_bad, 0);
}

/* ---- the environment decides (a child started with it) ---- */

static int child_info(char *const envp[], struct fc_info *out)
{
	int st;
	int rc = unit_self_output("--info", envp, out, sizeof *out, &st);
	return rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void test_environment(void)
{
	struct fc_info in;
	char *off[] = { "FASTCLOCK=off", NULL };
	CHECK_INT(child_info(off, &in), 0);
	CHECK_INT(in.source, FC_SOURCE_KERNEL);
	CHECK_INT(in.reason, FC_REASON_OFF);

	/* a fake sysfs where the kernel is on hpet, as after a rejected TSC;
	 * the verdict in the state folder beside it */
	struct unit_cs_tree tree;
	unit_cs_tree(&tree, "fastclock", "tsc-verdict");
	unit_cs_fresh(&tree, "hpet\n", "hpet acpi_pm \n");
	unit_mkdirs(tree.state);
	const char *path = tree.record;
	char env_sysfs[600], env_verdict[600], text[512], boot[64] = "";
	snprintf(env_sysfs, sizeof env_sysfs, "FASTCLOCK_SYSFS=%s", tree.sysfs);
	snprintf(env_verdict, sizeof env_verdict, "FASTCLOCK_VERDICT=%s", path);

	char *hpet[] = { env_sysfs, env_verdict, NULL };
	CHECK_INT(child_info(hpet, &in), 0);
	CHECK_INT(in.source, FC_SOURCE_KERNEL);
	CHECK_INT(in.reason, FC_REASON_UNVERIFIED);
	CHECK_STR(in.kernel_clocksource, "hpet");
	CHECK_INT(in.kernel_vdso_fast, 0);
	CHECK_INT(in.verdict, -1);

	FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (b) {
		if (!fgets(boot, sizeof boot, b))
			boot[0] = '\0';
		fclose(b);
		boot[strcspn(boot, "\n")] = '\0';
	}
	snprintf(text, sizeof text, "boot_id=%s\nverdict=sound\nclocksource=hpet\n", boot);
	unit_put_mode(path, text, 0644);
	/* a machine whose CPU the library refuses whatever the verdict (a VM
	 * without the invariant-TSC bit) says so instead */
	struct fc_trust_facts here;
	fc_trust_gather(&here);
	enum fc_reason refused = here.counter_usable != 0 ? FC_REASON_NO_COUNTER
	                         : !here.invariant       ? FC_REASON_NOT_INVARIANT
	                         : !fc_read_cost_counter_cheaper(&here.cost) ? FC_REASON_COUNTER_SLOW
	                                                 : FC_REASON_VERIFIED;
	bool cpu_ok = refused == FC_REASON_VERIFIED;
	CHECK_INT(child_info(hpet, &in), 0);
	CHECK_INT(in.reason, refused);
	CHECK_INT(in.verdict, 0);
	if (cpu_ok)
		CHECK_INT(in.source, FC_SOURCE_COUNTER);

	snprintf(text, sizeof text, "boot_id=%s\nverdict=unsound\n", boot);
	unit_put_mode(path, text, 0644);
	CHECK_INT(child_info(hpet, &in), 0);
	CHECK_INT(in.source, FC_SOURCE_KERNEL);
	CHECK_INT(in.reason, FC_REASON_VERDICT_UNSOUND);

	/* another boot's verdict is no verdict */
	unit_put_mode(path, "boot_id=00000000-0000-0000-0000-000000000000\nverdict=sound\n", 0644);
	CHECK_INT(child_info(hpet, &in), 0);
	CHECK_INT(in.reason, FC_REASON_UNVERIFIED);
	CHECK(strstr(in.reason_text, "another boot") != NULL);

	/* writable by others: not trusted */
	snprintf(text, sizeof text, "boot_id=%s\nverdict=sound\n", boot);
	unit_put_mode(path, text, 0644);
	chmod(path, 0666);
	CHECK_INT(child_info(hpet, &in), 0);
	CHECK_INT(in.reason, FC_REASON_UNVERIFIED);

	char *forced[] = { env_sysfs, "FASTCLOCK=force", "FASTCLOCK_VERDICT=/nonexistent", NULL };
	CHECK_INT(child_info(forced, &in), 0);
	CHECK_INT(in.reason, cpu_ok ? FC_REASON_FORCED : refused);
}

/* ---- the verdict's counter_hz proves itself ---- */

/* A child started with envp that checks every served id against the
 * kernel (test_against_kernel): true when it passed. */
static bool child_against(char *const envp[])
{
	pid_t p = fork();
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		char *argv[] = { "test_fastclock", "--against", NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	int st = 0;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Forged and stale rates in a sound verdict, where the kernel is on hpet
 * (the verdict is what lets the library on the counter): one outside the
 * range of real counters, or beyond a few ppm of the rate the library
 * measures at start, is ignored with the verdict, and said; none of them
 * takes the clock beyond the bound the library states, whether the
 * library then stays on the kernel's clock or is forced onto the counter
 * (with a rate of its own). */
static void test_verdict_rate(void)
{
	struct fc_info in;
	struct unit_cs_tree tree;
	unit_cs_tree(&tree, "fastclock-hz", "tsc-verdict");
	unit_cs_fresh(&tree, "hpet\n", "hpet acpi_pm \n");
	unit_mkdirs(tree.state);
	char env_sysfs[600], env_verdict[600], text[512], boot[64] = "";
	snprintf(env_sysfs, sizeof env_sysfs, "FASTCLOCK_SYSFS=%s", tree.sysfs);
	snprintf(env_verdict, sizeof env_verdict, "FASTCLOCK_VERDICT=%s", tree.record);
	FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!b || !fgets(boot, sizeof boot, b)) {
		if (b)
			fclose(b);
		printf("  no boot_id: the verdict's rate not tried\n");
		return;
	}
	fclose(b);
	boot[strcspn(boot, "\n")] = '\0';
	struct fc_trust_facts here;
	fc_trust_gather(&here);
	if (here.counter_usable != 0 || !here.invariant || !fc_read_cost_counter_cheaper(&here.cost)) {
		printf("  a counter the library refuses here: the verdict's rate not tried\n");
		return;
	}
	/* the counter's rate as the library measures it, forced, with no verdict */
	char *measure[] = { env_sysfs, "FASTCLOCK=force", "FASTCLOCK_VERDICT=/nonexistent", NULL };
	CHECK_INT(child_info(measure, &in), 0);
	double hz = in.counter_hz;
	CHECK(hz > 1e6);
	char *verdict[] = { env_sysfs, env_verdict, NULL };
	char *forced[] = { env_sysfs, env_verdict, "FASTCLOCK=force", NULL };
	static const struct {
		const char *name;
		double factor;      /* of the measured rate; 0: `value` as it is */
		const char *value;
		bool ignored;
		const char *why;
	} cases[] = {
		{ "1 Hz", 0, "1", true, "outside 1 MHz to 10 GHz" },
		{ "1 % fast", 1.01, NULL, true, "ppm from the" },
		{ "1 % slow", 0.99, NULL, true, "ppm from the" },
		{ "twice", 2.0, NULL, true, "ppm from the" },
		{ "huge", 0, "100000000000000", true, "outside 1 MHz to 10 GHz" },
		{ "beyond parsing", 0, "99999999999999999999", true, "malformed" },
		{ "garbage", 0, "2.6GHz", true, "malformed" },
		{ "0 (none)", 0, "0", false, NULL },
		{ "right", 1.0, NULL, false, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unit_case("counter_hz %s", cases[i].name);
		char value[64];
		if (cases[i].value)
			snprintf(value, sizeof value, "%s", cases[i].value);
		else
			snprintf(value, sizeof value, "%.0f", hz * cases[i].factor);
		snprintf(text, sizeof text, "boot_id=%s\nverdict=sound\ncounter_hz=%s\nclocksource=hpet\n", boot, value);
		unit_put_mode(tree.record, text, 0644);
		CHECK_INT(child_info(verdict, &in), 0);
		if (cases[i].ignored) {
			CHECK_INT(in.reason, FC_REASON_UNVERIFIED);
			CHECK_INT(in.source, FC_SOURCE_KERNEL);
			CHECK_INT(in.verdict, -1);
			CHECK_HAS(in.reason_text, cases[i].why);
		} else {
			CHECK_INT(in.reason, FC_REASON_VERIFIED);
			CHECK_INT(in.source, FC_SOURCE_COUNTER);
			/* the rate in use within its stated error of the measured one */
			double ppm = (in.counter_hz / hz - 1) * 1e6;
			CHECK(ppm < in.freq_err_ppm + 50 && -ppm < in.freq_err_ppm + 50);
		}
		CHECK(child_against(verdict));
		CHECK_INT(child_info(forced, &in), 0);
		CHECK_INT(in.reason, cases[i].ignored ? FC_REASON_FORCED : FC_REASON_VERIFIED);
		CHECK_INT(in.source, FC_SOURCE_COUNTER);
		if (cases[i].ignored && strcmp(cases[i].why, "malformed") != 0)
			CHECK_HAS(in.reason_text, "verdict ignored");
		CHECK(child_against(forced));
	}
	unit_case(NULL);
}

/* ---- the writer held up between its two steps ---- */

static atomic_long stalls;
static _Atomic int64_t worst_lag;

static void *window_reader(void *arg)
{
	(void)arg;
	int64_t mine = 0, mine_k = 0;
	long back = 0, n = 0, stall = 0;
	while (!atomic_load(&stop)) {
		int64_t g = atomic_load(&latest);
		int64_t k0 = vdso_ns(CLOCK_MONOTONIC);
		int64_t v = fc_now_ns();
		int64_t k = vdso_ns(CLOCK_MONOTONIC);
		if (v < g || v < mine)
			back++;
		/* standing still while the kernel's clock moved on 200 us */
		if (v == mine && k - mine_k > 200000)
			stall++;
		if (v != mine) {
			mine = v;
			mine_k = k;
		}
		/* behind the kernel's reading taken before it: a real lag (a
		 * reader preempted between the reads only makes this smaller) */
		if (k0 - v > atomic_load(&worst_lag))
			atomic_store(&worst_lag, k0 - v);
		int64_t cur = g;
		while (v > cur && !atomic_compare_exchange_weak(&latest, &cur, v))
			;
		n++;
	}
	atomic_fetch_add(&backwards, back);
	atomic_fetch_add(&reads, n);
	atomic_fetch_add(&stalls, stall);
	return NULL;
}

/* Run in a child with FASTCLOCK_TEST_WRITER_DELAY_US set (5 ms, 200 ms):
 * every re-anchor is held up that long after its samples, as a preempted
 * writer would be, so the other readers run past the line's end (1 ms
 * after it is due) with the lock taken.  They must neither go back nor
 * stand still, and never lag the kernel by more than the bound: past the
 * end they read the kernel's clock themselves. */
static int window_child(void)
{
	struct fc_info in;
	if (settle(&in) != FC_SOURCE_COUNTER) {
		printf("skip: %s\n", in.reason_text);
		return 0;
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, window_reader, NULL);
	uint64_t syncs0 = in.syncs;
	struct timespec run = { 0, 600000000 };
	nanosleep(&run, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	fc_info(&in);
	int held = (int)(in.syncs - syncs0);
	printf("%d held re-anchors, %ld reads, %ld backward, %ld stalls, worst lag %lld ns\n", held,
	       atomic_load(&reads), atomic_load(&backwards), atomic_load(&stalls), (long long)atomic_load(&worst_lag));
	/* the bound (about 100 ns) and a kernel read's width: 5 us is far
	 * below what a reader standing still would show (the delay) */
	return held >= 2 && atomic_load(&backwards) == 0 && atomic_load(&stalls) == 0 &&
	               atomic_load(&worst_lag) < 5000 ? 0 : 1;
}

/* Runs this program again with argv[1] = mode and the writer held up by
 * delay_us at every re-anchor; true when it exits 0. */
static bool run_held(const char *mode, const char *delay_us)
{
	char env[64];
	snprintf(env, sizeof env, "FASTCLOCK_TEST_WRITER_DELAY_US=%s", delay_us);
	pid_t p = fork();
	if (p == 0) {
		char *argv[] = { "test_fastclock", (char *)mode, NULL };
		char *envp[] = { env, NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_window(void)
{
	CHECK(run_held("--window", "5000"));
	CHECK(run_held("--window", "200000"));
}

/* ---- every way a process is copied, while another thread re-anchors ---- */

static int64_t copy_bound;  /* the parent's bound, read by the copies */

/* The larger of the bound the parent stated and the one this copy's
 * library states now (a line the parent's re-anchoring thread published
 * since may state more); fc_info gives up, -EAGAIN, in a clone(CLONE_VM)
 * child while the parent's writer holds the shared lock. */
static int64_t copy_bound_now(void)
{
	struct fc_info in;
	if (fc_info(&in) == 0 && in.error_bound_ns > copy_bound)
		return in.error_bound_ns;
	return copy_bound;
}

/* A copy's readings for about 2 ms: each between two kernel reads, within
 * the bound of them (the larger stated before and after the readings), never
 * back, and moving on.  0 when all hold. */
static int copy_reads(void)
{
	int64_t first = fc_now_ns(), first_k = kns(CLOCK_MONOTONIC);
	int64_t bound = copy_bound_now();
	int64_t prev = first, k0 = first_k, k1 = first_k, worst = 0;
	int bad = 0;
	while (k1 - first_k < 2000000) {
		k0 = kns(CLOCK_MONOTONIC);
		int64_t v = fc_now_ns();
		k1 = kns(CLOCK_MONOTONIC);
		if (v < prev)
			bad |= 1;  /* backwards */
		int64_t off = v < k0 ? k0 - v : v > k1 ? v - k1 : 0;
		if (off > worst)
			worst = off;
		prev = v;
	}
	int64_t end_bound = copy_bound_now();
	if (end_bound > bound)
		bound = end_bound;
	if (worst > bound + 1000) {
		fprintf(stderr, "copy %d: %lld ns from the kernel's bracket, bound %lld (the parent's %lld)\n",
		        (int)getpid(), (long long)worst, (long long)bound, (long long)copy_bound);
		bad |= 2;  /* outside the bound */
	}
	/* the kernel moved on (to the last read's first bracket) and the
	 * values with it: a preemption between the last reads does not count */
	if (k0 - first_k > 500000 && prev - first < (k0 - first_k) / 2)
		bad |= 4;  /* stood still */
	return bad;
}

static int clone_vm_child(void *arg)
{
	*(int *)arg = copy_reads();
	return 0;
}

extern char **environ;

/* In a program whose writer is held up 200 ms at every re-anchor by a
 * thread that re-anchors without pause (so that the lock is nearly always
 * held, by a thread the copies do not have): _Fork and clone(SIGCHLD),
 * which run no atfork handler, fork, and clone(CLONE_VM), a thread outside
 * pthreads; then vfork + exec and posix_spawn of a program that reads the
 * clock.  Every copy's readings hold. */
static int copies_child(int n)
{
	struct fc_info in;
	if (settle(&in) != FC_SOURCE_COUNTER) {
		printf("skip: %s\n", in.reason_text);
		return 0;
	}
	copy_bound = in.error_bound_ns;
	pthread_t th;
	atomic_store(&stop, 0);
	pthread_create(&th, NULL, resyncer, NULL);
	int bad[4] = { 0, 0, 0, 0 }, ran[4] = { 0, 0, 0, 0 }, why = 0;
	static char stack[1 << 16] __attribute__((aligned(16)));
	for (int i = 0; i < n; i++) {
		int way = i % 4;
		pid_t p;
		int result = -1;
		if (way == 0)
			p = _Fork();
		else if (way == 1)
			p = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		else if (way == 2)
			p = fork();
		else
			p = clone(clone_vm_child, stack + sizeof stack, CLONE_VM | SIGCHLD, &result);
		if (p == 0)
			_exit(copy_reads());
		if (p < 0)
			continue;
		int st;
		waitpid(p, &st, 0);
		ran[way]++;
		int code = way == 3 ? result : WIFEXITED(st) ? WEXITSTATUS(st) : 99;
		if (code != 0) {
			bad[way]++;
			why |= code;
		}
	}
	/* a program started by vfork + exec and by posix_spawn: this one,
	 * reading the clock from its start */
	char *argv[] = { "test_fastclock", "--reads", NULL };
	int spawned_bad = 0;
	for (int i = 0; i < 4; i++) {
		pid_t p;
		if (i % 2 == 0) {
			p = vfork();
			if (p == 0) {
				execve("/proc/self/exe", argv, environ);
				_exit(127);
			}
		} else if (posix_spawn(&p, "/proc/self/exe", NULL, NULL, argv, environ) != 0) {
			p = -1;
		}
		int st;
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			spawned_bad++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("copies with the writer held: _Fork %d/%d bad, clone %d/%d, fork %d/%d, clone(CLONE_VM) %d/%d; "
	       "vfork+exec and posix_spawn %d/4 bad%s%s%s\n",
	       bad[0], ran[0], bad[1], ran[1], bad[2], ran[2], bad[3], ran[3], spawned_bad,
	       why & 1 ? "; backwards" : "", why & 2 ? "; outside the bound" : "", why & 4 ? "; stood still" : "");
	return bad[0] + bad[1] + bad[2] + bad[3] + spawned_bad == 0 && ran[0] > 0 && ran[1] > 0 && ran[3] > 0 ? 0 : 1;
}

static void test_copies(void)
{
	CHECK(run_held("--copies", "200000"));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--window"))
		return window_child();
	if (argc > 1 && !strcmp(argv[1], "--copies"))
		return copies_child(argc > 2 ? atoi(argv[2]) : 400);
	if (argc > 1 && !strcmp(argv[1], "--reads")) {
		struct fc_info in;
		settle(&in);
		copy_bound = in.error_bound_ns;
		return copy_reads();
	}
	if (argc > 1 && !strcmp(argv[1], "--against")) {
		test_against_kernel();
		return unit_done("test_fastclock --against");
	}
	if (argc > 1 && !strcmp(argv[1], "--info")) {
		struct fc_info in;
		settle(&in);
		return write(1, &in, sizeof in) == (ssize_t)sizeof in ? 0 : 1;
	}
	test_against_kernel();
	test_gettime_errors();
	test_threads();
	test_fork();
	test_signals();
	test_environment();
	test_verdict_rate();
	test_window();
	test_copies();
	return unit_done("test_fastclock");
}
