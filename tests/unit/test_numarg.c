/* SPDX-License-Identifier: MIT */
/*
 * test_numarg.c: command-line numbers are whole numbers or refused, a
 * usage error says whose it is and where the options are, and the option
 * loop every subcommand shares hands over its options, answers --help and
 * refuses what it does not know.
 */
#include "unit.h"
#include "util/numarg.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What call(ctx) writes on fd (1 or 2), in buf; returns what call
 * returned. */
static int captured(int fd, int (*call)(void *ctx), void *ctx, char *buf, size_t len)
{
	fflush(fd == 1 ? stdout : stderr);
	int saved = dup(fd);
	FILE *f = tmpfile();
	if (saved < 0 || !f)
		return -100;
	dup2(fileno(f), fd);
	int rc = call(ctx);
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return rc;
}

static int usage_error(void *ctx)
{
	(void)ctx;
	return cd_usage_error("bench", "-t takes a number of threads, not '%s' (%d)", "x", 7);
}

/* Each parser on its cases: what it reads, or that it refuses (and then,
 * for a range, leaves the value as it was: a default stays). */
enum parser { DOUBLE, LONG, NUMBER, WHOLE };

static const struct {
	enum parser p;
	const char *s;
	double lo, hi;             /* NUMBER and WHOLE's range */
	bool refused;
	double want;
} numbers[] = {
	{ DOUBLE, "2.5", 0, 0, false, 2.5 },      { DOUBLE, "-1e3", 0, 0, false, -1000 },
	{ DOUBLE, "", 0, 0, true, 0 },            { DOUBLE, "2s", 0, 0, true, 0 },
	{ DOUBLE, "inf", 0, 0, true, 0 },         { DOUBLE, "nan", 0, 0, true, 0 },
	{ DOUBLE, "1e999", 0, 0, true, 0 },
	{ LONG, "1000", 0, 0, false, 1000 },      { LONG, "-7", 0, 0, false, -7 },
	{ LONG, "", 0, 0, true, 0 },              { LONG, "10k", 0, 0, true, 0 },
	{ LONG, "1.5", 0, 0, true, 0 },           { LONG, "99999999999999999999999", 0, 0, true, 0 },
	{ NUMBER, "0.05", 0.05, 600, false, 0.05 }, { NUMBER, "600", 0.05, 600, false, 600 },
	{ NUMBER, "0.01", 0.05, 600, true, 0 },   { NUMBER, "601", 0.05, 600, true, 0 },
	{ NUMBER, "inf", 0.05, 1e300, true, 0 },  { NUMBER, "nan", 0, 1, true, 0 },
	{ NUMBER, "1e-400", 0, 1, true, 0 },      /* underflow: not a number read right */
	{ NUMBER, "5x", 0, 10, true, 0 },
	{ WHOLE, "1e3", 1, 1e12, false, 1000 },   { WHOLE, "5.0", 1, 10, false, 5 },
	{ WHOLE, "0", 0, 10, false, 0 },          { WHOLE, "1.5", 0, 10, true, 0 },
	{ WHOLE, "0", 1, 10, true, 0 },           { WHOLE, "11", 1, 10, true, 0 },
	{ WHOLE, "x", 1, 10, true, 0 },
};

static void test_numbers(void)
{
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		double d = 7;
		long l = 7;
		long long w = 7;
		bool ok = false;
		double got = 0;
		switch (numbers[i].p) {
		case DOUBLE: ok = cd_parse_double(numbers[i].s, &d); got = d; break;
		case LONG: ok = cd_parse_long(numbers[i].s, &l); got = (double)l; break;
		case NUMBER: ok = cd_parse_number(numbers[i].s, numbers[i].lo, numbers[i].hi, &d); got = d; break;
		case WHOLE: ok = cd_parse_whole(numbers[i].s, numbers[i].lo, numbers[i].hi, &w); got = (double)w; break;
		}
		bool range = numbers[i].p == NUMBER || numbers[i].p == WHOLE;
		bool right = numbers[i].refused ? !ok && (!range || got == 7) : ok && got == numbers[i].want;
		if (!right)
			fprintf(stderr, "number case %zu: '%s' read as %g (%s)\n", i, numbers[i].s, got, ok ? "ok" : "refused");
		CHECK(right);
	}
}

/* ---- the option loop ---- */

struct seen {
	int n;
	char order[16];            /* the options taken, in turn */
	char value[32];            /* -v's */
	int end_with;              /* what -x returns */
};

static int take(void *ctx, int ch, char *arg)
{
	struct seen *s = ctx;
	if (s->n < (int)sizeof s->order - 1)
		s->order[s->n++] = (char)ch;
	if (ch == 'v')
		snprintf(s->value, sizeof s->value, "%s", arg);
	return ch == 'x' ? s->end_with : -1;
}

static void demo_usage(FILE *out)
{
	fprintf(out, "usage: clockdoctor demo [-f] [-v VALUE]\n");
}

static const struct option demo_longs[] = {
	{ "flag", no_argument, NULL, 'f' },
	{ "value", required_argument, NULL, 'v' },
	{ "exit", no_argument, NULL, 'x' },
	{ NULL, 0, NULL, 0 },
};

static struct cd_options demo = { "demo", "fv:x", demo_longs, demo_usage, take, false };

static struct {
	char *argv[8];
	int argc;
	struct seen seen;
	int rc;
} run_;

static int parse(void *ctx)
{
	(void)ctx;
	return cd_parse_options(&demo, run_.argc, run_.argv, &run_.seen);
}

/* Parses the words of args (space-separated) as `clockdoctor demo ARGS`;
 * returns the status, with stdout or stderr (fd) in out. */
static int demo_parse(const char *args, bool operands, int fd, char *out, size_t len)
{
	static char words[128];
	snprintf(words, sizeof words, "%s", args);
	memset(&run_, 0, sizeof run_);
	run_.argv[run_.argc++] = "demo";
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w && run_.argc < 7; w = strtok_r(NULL, " ", &save))
		run_.argv[run_.argc++] = w;
	run_.seen.end_with = 42;
	demo.operands = operands;
	demo.shorts = "fv:x";
	return captured(fd, parse, NULL, out, len);
}

static void test_options(void)
{
	char out[512];
	/* Each option handed over in turn, with its value; then the operands. */
	CHECK_INT(demo_parse("-f --value 3 -v4 --flag", false, 2, out, sizeof out), -1);
	CHECK_STR(run_.seen.order, "fvvf");
	CHECK_STR(run_.seen.value, "4");
	CHECK_STR(out, "");
	CHECK_INT(demo_parse("-f a b", true, 2, out, sizeof out), -1);
	CHECK_INT(optind, 2);
	CHECK_STR(run_.argv[optind], "a");
	/* An option's own status ends the loop. */
	CHECK_INT(demo_parse("-x -f", false, 2, out, sizeof out), 42);
	CHECK_STR(run_.seen.order, "x");

	/* --help and -h: the usage on stdout, status 0, whatever follows. */
	CHECK_INT(demo_parse("-f --help --bogus", false, 1, out, sizeof out), 0);
	CHECK_STR(out, "usage: clockdoctor demo [-f] [-v VALUE]\n");
	CHECK_INT(demo_parse("-h", false, 1, out, sizeof out), 0);
	CHECK_STR(out, "usage: clockdoctor demo [-f] [-v VALUE]\n");

	/* What it does not know: one line and the hint, status 3. */
	static const char hint[] = "(clockdoctor demo --help shows the options)\n";
	CHECK_INT(demo_parse("-q", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: unknown option '-q'\n", 38) == 0 && strstr(out, hint));
	CHECK_INT(demo_parse("--bogus=1", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: unknown option '--bogus'\n", 43) == 0);
	CHECK_INT(demo_parse("-v", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: option -v needs a value\n", 42) == 0);
	CHECK_INT(demo_parse("--value", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: option --value needs a value\n", 47) == 0);
	CHECK_INT(demo_parse("--help=x", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: option --help takes no value\n", 47) == 0);
	CHECK_INT(demo_parse("-f stray", false, 2, out, sizeof out), 3);
	CHECK(strncmp(out, "clockdoctor demo: unexpected argument 'stray'\n", 46) == 0);

	/* "+": the options end at the first operand, which keeps its own. */
	demo.shorts = "+fv:x";
	demo.operands = true;
	memset(&run_, 0, sizeof run_);
	char *argv[] = { "demo", "-f", "prog", "-x", NULL };
	CHECK_INT(cd_parse_options(&demo, 4, argv, &run_.seen), -1);
	CHECK_STR(run_.seen.order, "f");
	CHECK_INT(optind, 2);
}

/* Folders and files named by options: --root a folder, --prometheus-file
 * any name that is not a folder's.  said: the message, or NULL to leave
 * it unchecked. */
static const struct path_case {
	bool file;
	const char *path;
	int rc;
	const char *said;
} paths[] = {
	{ false, "/", -1, "" },
	{ false, "/nonexistent", 3, "clockdoctor check: --root /nonexistent: not a folder\n"
	                            "(clockdoctor check --help shows the options)\n" },
	{ false, "/dev/null", 3, NULL },
	{ true, "/var/lib/x.prom", -1, "" },
	{ true, "x.prom", -1, "" },
	{ true, "/var/lib/", 3, "clockdoctor watch: --prometheus-file takes a file name, not '/var/lib/'\n"
	                        "(clockdoctor watch --help shows the options)\n" },
	{ true, "", 3, NULL },
};

static int path_arg(void *ctx)
{
	const struct path_case *c = ctx;
	return c->file ? cd_file_arg("watch", "--prometheus-file", c->path) : cd_folder_arg("check", "--root", c->path);
}

static void test_paths(void)
{
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		char out[256];
		CHECK_INT(captured(2, path_arg, (void *)&paths[i], out, sizeof out), paths[i].rc);
		if (paths[i].said)
			CHECK_STR(out, paths[i].said);
	}
}

int main(void)
{
	test_numbers();
	test_options();
	test_paths();

	char text[256];
	CHECK_INT(captured(2, usage_error, NULL, text, sizeof text), 3);   /* CD_EXIT_USAGE */
	CHECK_STR(text, "clockdoctor bench: -t takes a number of threads, not 'x' (7)\n"
	                "(clockdoctor bench --help shows the options)\n");
	return unit_done("test_numarg");
}
