/* SPDX-License-Identifier: MIT */
/* Unit tests of the output layer: JSON escaping, nesting and numbers, Prometheus
 * labels and textfile (wrapping: test_wrap.c). */
#include "output/jsonw.h"
#include "output/output.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static void test_escape(void)
{
	struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "a\"b\\c", "a\\\"b\\\\c" },
		{ "tab\there\nnl\rcr", "tab\\there\\nnl\\rcr" },
		{ "\x01\x1f", "\\u0001\\u001f" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },               /* valid UTF-8 kept */
		{ "\xe6\x97\xb6\xe9\x92\x9f", "\xe6\x97\xb6\xe9\x92\x9f" },
		{ "bad\xff" "byte", "bad\\ufffdbyte" },         /* invalid bytes replaced */
		{ "cut\xe6\x97", "cut\\ufffd\\ufffd" },         /* truncated sequence */
		{ "\xc0\xaf", "\\ufffd\\ufffd" },               /* overlong encoding */
		{ "del\x7f" "c1\xc2\x9b" "nbsp\xc2\xa0", "del\\u007fc1\\u009bnbsp\xc2\xa0" }, /* DEL, C1 escaped */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got;
		UNIT_CAPTURE(got, cd_json_escape(out, cases[i].in));
		CHECK_STR(got, cases[i].out);
		free(got);
	}
}

static void nested(FILE *f)
{
	struct cd_jsonw w;
	cd_jsonw_init(&w, f, 0);
	cd_jsonw_begin_object(&w, NULL);
	cd_jsonw_string(&w, "s", "x");
	cd_jsonw_string(&w, "n", NULL);
	cd_jsonw_begin_array(&w, "a");
	cd_jsonw_int(&w, NULL, 1);
	cd_jsonw_number(&w, NULL, 0.5);
	cd_jsonw_number(&w, NULL, 0.0 / 0.0);
	cd_jsonw_bool(&w, NULL, true);
	cd_jsonw_begin_object(&w, NULL);
	cd_jsonw_end_object(&w);
	cd_jsonw_end_array(&w);
	cd_jsonw_begin_array(&w, "empty");
	cd_jsonw_end_array(&w);
	cd_jsonw_null(&w, "z");
	cd_jsonw_numbers(&w, (const struct cd_jsonw_num[]){ { "p", 1 }, { "q", 0.5 }, { "r", 0.0 / 0.0 }, { NULL, 0 } });
	cd_jsonw_end_object(&w);
}

static void test_nesting(void)
{
	char *got;
	UNIT_CAPTURE(got, nested(out));
	CHECK_STR(got, "{\"s\":\"x\",\"n\":null,\"a\":[1,0.5,null,true,{}],\"empty\":[],\"z\":null,"
	               "\"p\":1,\"q\":0.5,\"r\":null}");
	free(got);
}

static void number_texts(FILE *f, const char *const *texts)
{
	struct cd_jsonw w;
	cd_jsonw_init(&w, f, 0);
	cd_jsonw_begin_array(&w, NULL);
	for (const char *const *t = texts; *t; t++)
		cd_jsonw_number_text(&w, NULL, *t);
	cd_jsonw_end_array(&w);
}

static void test_number_text(void)
{
	static const char *const nums[] = { "1767225600.250", "-3", "0", "1e9", "2.5E-3", "01", "1.", "x",
	                                    "", "1 2", "--1", NULL };
	char *got;
	UNIT_CAPTURE(got, number_texts(out, nums));
	CHECK_STR(got, "[1767225600.250,-3,0,1e9,2.5E-3,null,null,null,null,null,null]");
	free(got);
}

/* Prometheus label values: backslash, double quote and newline escaped,
 * all else as it is (check's --prometheus and watch's textfile). */
static void test_prom_label(void)
{
	char buf[128] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	if (!f) {
		CHECK(0);
		return;
	}
	cd_prom_label(f, "a\\b\"c\nd-tsc");
	fclose(f);
	CHECK_STR(buf, "a\\\\b\\\"c\\nd-tsc");
}

/* check's textfile: the version, whether the vDSO reads each clocksource
 * (the current one too when the kernel does not list it), the times; never
 * the current clocksource itself, which node_exporter exports. */
static void test_prometheus(void)
{
	struct cd_facts *f = calloc(1, sizeof *f);
	struct cd_report *r = calloc(1, sizeof *r);
	if (!f || !r) {
		CHECK(0);
		free(f);
		free(r);
		return;
	}
	snprintf(f->kernel.release, sizeof f->kernel.release, "6.1.0-56-amd64");
	f->kernel.have_release = true;
	f->kernel.ver_major = 6, f->kernel.ver_minor = 1, f->kernel.ver_patch = 0;
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "x86_64");
	f->cs.have_current = true;
	snprintf(f->cs.current, sizeof f->cs.current, "jiffies");
	f->cs.n_available = 3;
	snprintf(f->cs.available[0], sizeof f->cs.available[0], "tsc");
	snprintf(f->cs.available[1], sizeof f->cs.available[1], "hpet");
	snprintf(f->cs.available[2], sizeof f->cs.available[2], "kvm-clock");
	r->status = CD_STATUS_CRITICAL;
	struct cd_prom_times t = { .last_run = 1767225600.25, .last_success = 0 };
	struct cd_measurements m = { .done = false };
	char *got;
	UNIT_CAPTURE(got, cd_output_prometheus(out, f, &m, r, &t));
	static const char *const want[] = {
		"\nclockdoctor_build_info{version=\"" CD_VERSION "\",revision=\"",
		"\nclockdoctor_clocksource_vdso{clocksource=\"tsc\"} 1\n",
		"\nclockdoctor_clocksource_vdso{clocksource=\"hpet\"} 0\n",
		"\nclockdoctor_clocksource_vdso{clocksource=\"jiffies\"} 0\n",
		"\nclockdoctor_check_last_run_timestamp_seconds 1767225600.250\n",
		"\nclockdoctor_check_last_success_timestamp_seconds 0.000\n",
	};
	CHECK_HAS_ALL(got, want);
	CHECK_LACKS(got, "current_info");
	/* kvm-clock: the vDSO reads it on some hosts only; no sentinel value. */
	CHECK_LACKS(got, "kvm-clock");
	CHECK_LACKS(got, "} -1");
	CHECK(strstr(got, "\",compiler=\"") != NULL);
	/* What a later run reads back from this file. */
	CHECK(cd_prom_last_success(got) == 0);
	free(got);
	f->cs.n_available = 1;
	snprintf(f->cs.current, sizeof f->cs.current, "tsc");
	t.last_success = 1767225000.5;
	UNIT_CAPTURE(got, cd_output_prometheus(out, f, &m, r, &t));
	CHECK(strstr(got, "jiffies") == NULL && strstr(got, "hpet") == NULL);
	CHECK(strstr(got, "clocksource=\"tsc\"} 1\nclockdoctor_clocksource_vdso") == NULL); /* once */
	CHECK(cd_prom_last_success(got) == 1767225000.5);
	free(got);
	free(f);
	free(r);
}

/* The last success read back: only our own sample, only a plausible time. */
static void test_prom_last_success(void)
{
	static const struct { const char *text; double want; } cases[] = {
		{ "clockdoctor_check_last_success_timestamp_seconds 1767225600.250\n", 1767225600.25 },
		{ "x 1\nclockdoctor_check_last_success_timestamp_seconds 12\n", 12 },
		{ "clockdoctor_check_last_success_timestamp_seconds 12", 12 },
		{ "# HELP clockdoctor_check_last_success_timestamp_seconds 5\n", 0 },
		{ "xclockdoctor_check_last_success_timestamp_seconds 5\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds -5\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds nan\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds inf\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds 1e300\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds 5 junk\n", 0 },
		{ "clockdoctor_check_last_success_timestamp_seconds \n", 0 },
		{ "", 0 },
		{ "\n\n\n", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(cd_prom_last_success(cases[i].text) == cases[i].want);
}

int main(void)
{
	test_prom_label();
	test_prometheus();
	test_prom_last_success();
	test_number_text();
	test_escape();
	test_nesting();
	return unit_done("output");
}
