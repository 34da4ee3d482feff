/* SPDX-License-Identifier: MIT */
/*
 * test_top.c: the pure parts of `clockdoctor top` (measure/trace.c): the
 * tracepoint format file, per-process aggregation, the sample period,
 * sorting by cost, the CPU list, and bad input.
 */
#include "measure/trace.h"
#include "probe/elf.h"
#include "output/topreport.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* events/syscalls/sys_enter_clock_gettime/format of Linux 6.18 (x86_64). */
static const char fmt_6_18[] =
	"name: sys_enter_clock_gettime\n"
	"ID: 480\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:const clockid_t which_clock;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:struct __kernel_timespec * tp;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"which_clock: 0x%08lx, tp: 0x%08lx\", ((unsigned long)(REC->which_clock)), "
	"((unsigned long)(REC->tp))\n";

static void test_format_embedded(void)
{
	int off = -1, sz = -1;
	CHECK_INT(cd_tp_format_id(fmt_6_18), 480);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "which_clock", &off, &sz), 0);
	CHECK_INT(off, 16);
	CHECK_INT(sz, 8);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "common_type", &off, &sz), 0);
	CHECK_INT(off, 0);
	CHECK_INT(sz, 2);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "tp", &off, &sz), 0);   /* after a '*' */
	CHECK_INT(off, 24);
	/* A name that is only a suffix of a field's name is not that field. */
	CHECK_INT(cd_tp_format_field(fmt_6_18, "clock", &off, &sz), -ENOENT);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "nr", &off, &sz), -ENOENT);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "pid", &off, &sz), -ENOENT);
}

/* The real file, when this machine's tracefs is mounted and readable. */
static void test_format_live(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/syscalls/sys_enter_clock_gettime/format",
		"/sys/kernel/debug/tracing/events/syscalls/sys_enter_clock_gettime/format",
	};
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(paths[i], "r");
		if (!f)
			continue;
		char buf[8192];
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		int off = -1, sz = -1;
		CHECK(cd_tp_format_id(buf) > 0);
		CHECK_INT(cd_tp_format_field(buf, "which_clock", &off, &sz), 0);
		CHECK(off >= 8 && (sz == 4 || sz == 8));
		CHECK_INT(cd_tp_format_field(buf, "common_type", &off, &sz), 0);
		CHECK_INT(off, 0);
		return;
	}
	printf("test_top: no readable tracefs here, the live format file is not checked\n");
}

static void test_format_bad(void)
{
	int off = 7, sz = 7;
	CHECK_INT(cd_tp_format_field(NULL, "which_clock", &off, &sz), -EINVAL);
	CHECK_INT(cd_tp_format_field(fmt_6_18, "", &off, &sz), -EINVAL);
	CHECK_INT(cd_tp_format_field("", "which_clock", &off, &sz), -ENOENT);
	CHECK_INT(cd_tp_format_id(""), -ENOENT);
	CHECK_INT(cd_tp_format_id("name: x\nformat:\n"), -ENOENT);
	CHECK_INT(cd_tp_format_id("ID: abc\n"), -ENOENT);
	/* The field is there but its offset or size is missing or absurd. */
	CHECK_INT(cd_tp_format_field("\tfield:int which_clock;\tsize:8;\n", "which_clock", &off, &sz),
	          -EINVAL);
	CHECK_INT(cd_tp_format_field("\tfield:int which_clock;\toffset:16;\n", "which_clock", &off, &sz),
	          -EINVAL);
	CHECK_INT(cd_tp_format_field("\tfield:int which_clock;\toffset:-3;\tsize:8;\n", "which_clock",
	                             &off, &sz), -EINVAL);
	CHECK_INT(cd_tp_format_field("\tfield:int which_clock;\toffset:16;\tsize:0;\n", "which_clock",
	                             &off, &sz), -EINVAL);
	CHECK_INT(cd_tp_format_field("\tfield:int which_clock\toffset:16;\tsize:8;\n", "which_clock",
	                             &off, &sz), -ENOENT);   /* no ';' after the name: not its declaration */
	/* Not a field line at all, no trailing newline, an array. */
	CHECK_INT(cd_tp_format_field("which_clock offset:16; size:8;", "which_clock", &off, &sz), -ENOENT);
	CHECK_INT(cd_tp_format_field("field:char comm[16];\toffset:8;\tsize:16;\tsigned:0;", "comm",
	                             &off, &sz), 0);
	CHECK_INT(off, 8);
	CHECK_INT(sz, 16);
}

static void test_read_int(void)
{
	unsigned char raw[32];
	memset(raw, 0, sizeof raw);
	raw[0] = 0xe0; raw[1] = 0x01;                        /* common_type 480 */
	long long v = -9;
	CHECK(cd_tp_read_int(raw, sizeof raw, 0, 2, false, &v));
	CHECK_INT(v, 480);
	raw[16] = 6;                                         /* MONOTONIC_COARSE */
	CHECK(cd_tp_read_int(raw, sizeof raw, 16, 8, false, &v));
	CHECK_INT(v, 6);
	/* A dynamic clock's negative id, sign-extended into the u64 argument. */
	memset(raw + 16, 0xff, 8);
	raw[16] = 0xfe;
	CHECK(cd_tp_read_int(raw, sizeof raw, 16, 8, false, &v));
	CHECK_INT(v, -2);
	CHECK_INT(cd_tclock_slot(v), CD_TCLOCK_OTHER);
	CHECK(cd_tp_read_int(raw, sizeof raw, 16, 4, true, &v));
	CHECK_INT(v, -2);
	/* Out of the record, or a size the format never has. */
	CHECK(!cd_tp_read_int(raw, sizeof raw, 28, 8, false, &v));
	CHECK(!cd_tp_read_int(raw, sizeof raw, -1, 2, false, &v));
	CHECK(!cd_tp_read_int(raw, sizeof raw, 0, 3, false, &v));
	CHECK(!cd_tp_read_int(NULL, 0, 0, 2, false, &v));
}

static void test_clock_names(void)
{
	CHECK_STR(cd_tclock_name(cd_tclock_slot(0)), "REALTIME");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(1)), "MONOTONIC");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(6)), "MONOTONIC_COARSE");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(7)), "BOOTTIME");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(11)), "TAI");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(12)), "other");
	CHECK_STR(cd_tclock_name(cd_tclock_slot(1LL << 40)), "other");
	CHECK_STR(cd_tclock_name(99), "other");
	CHECK_STR(cd_tsys_name(CD_TSYS_GETTIMEOFDAY), "gettimeofday");
	CHECK_STR(cd_tsys_name((enum cd_tsys)42), "?");
}

static void test_aggregate(void)
{
	struct cd_top_table t = { 0 };
	/* pid 10: 30 samples of MONOTONIC and 10 of REALTIME at period 100;
	 * pid 20: 5 gettimeofday and 5 time at period 100;
	 * pid 30: 200 samples of MONOTONIC at period 1 (fewer calls). */
	for (int i = 0; i < 30; i++)
		cd_top_add_sample(&t, 10, CD_TSYS_CLOCK_GETTIME, 1, 100);
	for (int i = 0; i < 10; i++)
		cd_top_add_sample(&t, 10, CD_TSYS_CLOCK_GETTIME, 0, 100);
	for (int i = 0; i < 5; i++) {
		cd_top_add_sample(&t, 20, CD_TSYS_GETTIMEOFDAY, -1, 100);
		cd_top_add_sample(&t, 20, CD_TSYS_TIME, -1, 100);
	}
	for (int i = 0; i < 200; i++)
		cd_top_add_sample(&t, 30, CD_TSYS_CLOCK_GETTIME, 1, 1);
	cd_top_add_sample(&t, 40, (enum cd_tsys)99, 1, 1);   /* ignored */
	CHECK_INT(t.n, 3);
	CHECK_INT(t.samples, 250);
	cd_top_finish(&t, 2.0, 300.0, NULL);
	CHECK_INT(t.p[0].pid, 10);
	CHECK_INT(t.p[0].total, 4000);
	CHECK_INT(t.p[0].rate, 2000);
	CHECK_INT(t.p[0].cost_ns_s, 600000);
	CHECK_INT(t.p[0].clocks[1], 3000);
	CHECK_INT(t.p[0].clocks[0], 1000);
	CHECK_INT(t.p[1].pid, 20);
	CHECK_INT(t.p[1].rate, 500);
	CHECK_INT(t.p[1].clocks[0] + t.p[1].clocks[1], 0);  /* gettimeofday has no clock id */
	CHECK_INT(t.p[2].pid, 30);
	CHECK_INT(t.p[2].rate, 100);
	char buf[64];
	cd_top_clock_list(&t.p[0], buf, sizeof buf);
	CHECK_STR(buf, "MONOTONIC,REALTIME");
	cd_top_clock_list(&t.p[1], buf, sizeof buf);
	CHECK_STR(buf, "gettimeofday,time");
	cd_top_clock_list(&t.p[0], buf, 8);                  /* cut, still terminated */
	CHECK(strlen(buf) < 8);
	struct cd_top_proc empty = { 0 };
	cd_top_clock_list(&empty, buf, sizeof buf);
	CHECK_STR(buf, "-");
	/* A bad interval length or cost does not make NaNs. */
	cd_top_finish(&t, 0, -1, NULL);
	CHECK_INT(t.p[0].rate, 4000);
	CHECK_INT(t.p[0].cost_ns_s, 0);
	cd_top_table_reset(&t);
	CHECK_INT(t.n, 0);
	CHECK_INT(t.samples, 0);
	/* Many processes: the table grows. */
	for (int pid = 1; pid <= 1000; pid++)
		cd_top_add_sample(&t, pid, CD_TSYS_CLOCK_GETTIME, 1, (uint64_t)pid);
	CHECK_INT(t.n, 1000);
	cd_top_finish(&t, 1, 1, NULL);
	CHECK_INT(t.p[0].pid, 1000);
	CHECK_INT(t.p[999].pid, 1);
	cd_top_table_free(&t);
	CHECK(t.p == NULL);
}

/* Estimates as shares of the exact counts: a period that changed within
 * the interval, or lost samples, do not bias them. */
static void test_scale_to_exact(void)
{
	struct cd_top_table t = { 0 };
	/* Calibration at period 200: pid 1 got 2 samples, pid 2 none; then
	 * period 10: pid 1 got 90 samples, pid 2 got 10 (MONOTONIC and
	 * REALTIME), pid 3 one gettimeofday. */
	cd_top_add_sample(&t, 1, CD_TSYS_CLOCK_GETTIME, 1, 200);
	cd_top_add_sample(&t, 1, CD_TSYS_CLOCK_GETTIME, 1, 200);
	for (int i = 0; i < 90; i++)
		cd_top_add_sample(&t, 1, CD_TSYS_CLOCK_GETTIME, 1, 10);
	for (int i = 0; i < 10; i++)
		cd_top_add_sample(&t, 2, CD_TSYS_CLOCK_GETTIME, i < 5 ? 1 : 0, 10);
	cd_top_add_sample(&t, 3, CD_TSYS_GETTIMEOFDAY, -1, 10);
	CHECK_INT(t.weight[CD_TSYS_CLOCK_GETTIME], 1400);
	/* The kernel counted 2000 clock_gettime and 7 gettimeofday. */
	uint64_t exact[CD_TSYS_N] = { 0 };
	exact[CD_TSYS_CLOCK_GETTIME] = 2000;
	exact[CD_TSYS_GETTIMEOFDAY] = 7;
	exact[CD_TSYS_TIME] = 50;                 /* counted, never sampled */
	cd_top_finish(&t, 1.0, 100.0, exact);
	CHECK_INT(t.p[0].pid, 1);
	CHECK_INT(t.p[0].rate * 1400 + 0.5, 1300 * 2000);   /* 1300/1400 of 2000 */
	CHECK_INT(t.p[1].pid, 2);
	CHECK_INT(t.p[1].clocks[0] * 1400 + 0.5, 50 * 2000);
	CHECK_INT(t.p[1].clocks[1] * 1400 + 0.5, 50 * 2000);
	CHECK_INT(t.p[2].pid, 3);
	CHECK_INT(t.p[2].rate, 7);
	double sum = 0;
	for (size_t i = 0; i < t.n; i++)
		sum += t.p[i].total;
	CHECK_INT(sum + 0.5, 2007);               /* time: nobody sampled, not invented */
	cd_top_keep_pid(&t, 2);
	CHECK_INT(t.n, 1);
	CHECK_INT(t.p[0].pid, 2);
	cd_top_keep_pid(&t, 99);
	CHECK_INT(t.n, 0);
	cd_top_table_free(&t);
}

static void test_sort(void)
{
	struct cd_top_proc p[4];
	memset(p, 0, sizeof p);
	p[0].pid = 1; p[0].cost_ns_s = 10; p[0].rate = 5;
	p[1].pid = 2; p[1].cost_ns_s = 30; p[1].rate = 1;
	p[2].pid = 3; p[2].cost_ns_s = 10; p[2].rate = 9;     /* same cost, more calls: first */
	p[3].pid = 0; p[3].cost_ns_s = 10; p[3].rate = 5;     /* all equal to p[0]: lower pid first */
	qsort(p, 4, sizeof p[0], cd_top_cmp);
	CHECK_INT(p[0].pid, 2);
	CHECK_INT(p[1].pid, 3);
	CHECK_INT(p[2].pid, 0);
	CHECK_INT(p[3].pid, 1);
}

static void test_period(void)
{
	/* 8.6 million calls in 30 s (a reported overloaded server), 2000 samples a second: 144. */
	CHECK_INT(cd_top_adapt_period(8600000, 30, 2000), 144);
	CHECK_INT(cd_top_adapt_period(20000, 1, 2000), 10);
	CHECK_INT(cd_top_adapt_period(20001, 1, 2000), 11);  /* up: never above the target */
	CHECK_INT(cd_top_adapt_period(1500, 1, 2000), 1);     /* few calls: every one */
	CHECK_INT(cd_top_adapt_period(0, 1, 2000), 1);
	CHECK_INT(cd_top_adapt_period(4000, 0.2, 2000), 10);  /* a short calibration */
	CHECK_INT(cd_top_adapt_period(100, 0, 2000), 1);      /* no time: no division */
	CHECK_INT(cd_top_adapt_period(100, 1, 0), 1);
	CHECK_INT(cd_top_adapt_period(UINT64_MAX, 1e-9, 1), 1000000000000ULL);
	/* kept within 2x either way: a change costs a forced sample */
	CHECK_INT(cd_top_keep_period(10, 11), 10);
	CHECK_INT(cd_top_keep_period(10, 20), 10);
	CHECK_INT(cd_top_keep_period(10, 21), 21);
	CHECK_INT(cd_top_keep_period(10, 5), 10);
	CHECK_INT(cd_top_keep_period(10, 4), 4);
	CHECK_INT(cd_top_keep_period(200, 5), 5);      /* top's first guess, far off */
	CHECK_INT(cd_top_keep_period(2, 1), 2);
	CHECK_INT(cd_top_keep_period(3, 1), 1);
	CHECK_INT(cd_top_keep_period(0, 7), 7);
	CHECK_INT(cd_top_keep_period(5, 0), 1);
	CHECK_INT(cd_top_keep_period(1, 1000000000000ULL), 1000000000000ULL);
}

static void test_cpu_list(void)
{
	int c[16];
	CHECK_INT(cd_parse_cpu_list("0-1\n", c, 16), 2);
	CHECK_INT(c[1], 1);
	CHECK_INT(cd_parse_cpu_list("0-3,8,10-11", c, 16), 7);
	CHECK_INT(c[4], 8);
	CHECK_INT(c[6], 11);
	CHECK_INT(cd_parse_cpu_list("5", c, 16), 1);
	CHECK_INT(c[0], 5);
	CHECK_INT(cd_parse_cpu_list("", c, 16), -EINVAL);
	CHECK_INT(cd_parse_cpu_list("3-1", c, 16), -EINVAL);
	CHECK_INT(cd_parse_cpu_list("a", c, 16), -EINVAL);
	CHECK_INT(cd_parse_cpu_list("0-1;", c, 16), -EINVAL);
	CHECK_INT(cd_parse_cpu_list("0-100", c, 16), -EINVAL);   /* more than fit */
	CHECK_INT(cd_parse_cpu_list(NULL, c, 16), -EINVAL);
}

/* The syscall tracepoints ignore compat (32-bit and x32) tasks on x86-64
 * and arm64: those programs are the ones top cannot see. */
static void test_unseen_programs(void)
{
	struct cd_elf_info e;
	memset(&e, 0, sizeof e);
	e.kind = CD_ELF_NOT_ELF;
	CHECK(cd_trace_sees_program(&e));        /* a script: its interpreter decides */
	e.kind = CD_ELF_DYNAMIC;
	e.bits = 64;
	e.machine = EM_X86_64;
	CHECK(cd_trace_sees_program(&e));
#if defined(__x86_64__) || defined(__aarch64__)
	e.bits = 32;
	e.machine = EM_386;
	CHECK(!cd_trace_sees_program(&e));
	e.kind = CD_ELF_STATIC;
	e.machine = EM_X86_64;                    /* x32 */
	CHECK(!cd_trace_sees_program(&e));
#endif
	/* This test program itself is seen, and so named by nobody. */
	struct cd_unseen u[1];
	CHECK_INT(cd_trace_unseen_programs((int)getpid(), u, 1), 0);
	CHECK_INT(cd_trace_unseen_programs(999999999, u, 1), 0);   /* no such process */
}

/* The text report of one interval: with -p the exact totals are the
 * process's, every process's beside them; lost samples are explained where
 * they are counted. */
/* Every line of a report within 80 columns: a process using every clock
 * id keeps its CPU% on its row, the ids wrapped under their heading, and a
 * headline with every call's rate splits only between them. */
static void test_report_80_columns(void)
{
	struct cd_top_table t = { 0 };
	for (long long c = 0; c <= 11; c++)
		cd_top_add_sample(&t, 4242, CD_TSYS_CLOCK_GETTIME, c, 1000);
	cd_top_add_sample(&t, 4242, CD_TSYS_GETTIMEOFDAY, -1, 1000);
	cd_top_add_sample(&t, 4242, CD_TSYS_TIME, -1, 1000);
	uint64_t exact[CD_TSYS_N] = { 0 };
	exact[CD_TSYS_CLOCK_GETTIME] = 12345678;
	exact[CD_TSYS_GETTIMEOFDAY] = 2345678;
	exact[CD_TSYS_TIME] = 345678;
	struct cd_top_interval iv = { .index = 1, .interval = 1, .when = 0, .secs = 1.0, .period = 1000,
	                              .call_ns = 300, .rows = 20, .t = &t };
	memcpy(iv.exact, exact, sizeof exact);
	for (int s = 0; s < CD_TSYS_N; s++)
		iv.traced[s] = true;
	cd_top_finish(&t, 1.0, 300, iv.exact);
	t.lost = 123456789;
	char *text = NULL;
	UNIT_CAPTURE(text, cd_top_print_text(out, &iv));
	int longest = 0;
	for (char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		if ((int)n > longest)
			longest = (int)n;
		l += n + (l[n] == '\n');
	}
	CHECK(longest <= 80);
	CHECK_HAS(text, "(clock_gettime 12345678/s, gettimeofday 2345678/s, time 345678/s)");
	const char *row = strstr(text, "\n4242 ");
	CHECK(row != NULL);
	if (row) {
		char first[128];
		size_t n = strcspn(row + 1, "\n");
		snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), row + 1);
		CHECK(strstr(first, "MONOTONIC") != NULL);   /* the ids start on the row */
		CHECK(strchr(first, '.') != NULL);           /* and its CPU% is there */
	}
	free(text);
	cd_top_table_free(&t);
}

static void test_report_text(void)
{
	struct cd_top_table t = { 0 };
	cd_top_add_sample(&t, 42, CD_TSYS_CLOCK_GETTIME, 1, 100);
	uint64_t exact[CD_TSYS_N] = { 0 };
	exact[CD_TSYS_CLOCK_GETTIME] = 5000;
	struct cd_top_interval iv = { .index = 1, .interval = 1, .when = 0, .secs = 1.0, .pid = 42,
	                              .period = 100, .call_ns = 300, .rows = 20, .t = &t };
	memcpy(iv.exact, exact, sizeof exact);
	for (int s = 0; s < CD_TSYS_N; s++) {
		iv.traced[s] = true;
		iv.pid_exact[s] = s == CD_TSYS_CLOCK_GETTIME ? 1200 : 0;
	}
	cd_top_finish(&t, 1.0, 300, iv.exact);
	cd_top_keep_pid(&t, 42);
	t.lost = 7;
	char *text = NULL;
	UNIT_CAPTURE(text, cd_top_print_text(out, &iv));
	CHECK(strstr(text, "time system calls of PID 42 (exact, its threads): 1200/s") != NULL);
	CHECK(strstr(text, "  every process: 5000/s\n") != NULL);
	CHECK(strstr(text, "7 samples lost: the kernel's buffer was full") != NULL);
	CHECK(strstr(text, "CALLS/s~") != NULL && strstr(text, "~ estimated: 1 samples") != NULL);
	free(text);
	iv.exact_procs = true;
	UNIT_CAPTURE(text, cd_top_print_text(out, &iv));
	CHECK(strstr(text, "CALLS/s ") != NULL && strstr(text, "CALLS/s~") == NULL);
	CHECK(strstr(text, "calls per process: exact (counted in the kernel)") != NULL);
	free(text);
	iv.exact_procs = false;
	/* JSON: "report" counts, "interval" is seconds, "total" is the pid's */
	UNIT_CAPTURE(text, cd_top_print_json(out, &iv));
	CHECK(strstr(text, "\"report\":1,\"interval\":1,") != NULL);
	CHECK(strstr(text, "\"total\":{\"estimated\":false,\"pid\":42,\"calls\":1200,") != NULL);
	CHECK(strstr(text, "\"every_process\":{\"calls\":5000,") != NULL);
	free(text);
	cd_top_table_free(&t);
}

/* A row counted in the kernel keeps its calls when the others are scaled to
 * the exact totals; its clock ids, from its samples, follow its calls. */
static void test_exact_row_kept(void)
{
	struct cd_top_table t = { 0 };
	cd_top_add_sample(&t, 1, CD_TSYS_CLOCK_GETTIME, 1, 100);   /* MONOTONIC */
	cd_top_add_sample(&t, 1, CD_TSYS_CLOCK_GETTIME, 0, 100);   /* REALTIME */
	cd_top_add_sample(&t, 2, CD_TSYS_CLOCK_GETTIME, 1, 100);
	struct cd_top_proc *p = cd_top_proc_get(&t, 1);
	p->exact = true;
	p->calls[CD_TSYS_CLOCK_GETTIME] = 1000;
	uint64_t exact[CD_TSYS_N] = { 0 };
	exact[CD_TSYS_CLOCK_GETTIME] = 3000;
	cd_top_finish(&t, 1.0, 100, exact);
	for (size_t i = 0; i < t.n; i++) {
		if (t.p[i].pid == 1) {
			CHECK(t.p[i].total == 1000);
			CHECK(t.p[i].clocks[1] == 500 && t.p[i].clocks[0] == 500);
		} else {
			CHECK(t.p[i].total == 1000);    /* 1 sample of 3: a third of 3000 */
		}
	}
	cd_top_table_free(&t);
}

int main(void)
{
	test_unseen_programs();
	test_exact_row_kept();
	test_report_text();
	test_report_80_columns();
	test_format_embedded();
	test_format_live();
	test_format_bad();
	test_read_int();
	test_clock_names();
	test_aggregate();
	test_scale_to_exact();
	test_sort();
	test_period();
	test_cpu_list();
	return unit_done("test_top");
}
