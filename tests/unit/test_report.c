/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of `clockdoctor report`'s writers and reader: the JSON reader
 * (util/jsonread.c: grammar, escapes, limits, JSON lines), the one HTML
 * escaping function and the embedded data (output/html.c), the SVG scales
 * (output/svg.c), and pages (report/page.c, report/charts.c) from JSON
 * built here: every chart drawn with its data in the marks, every missing
 * part said plainly, and hostile strings never becoming markup.
 */
#include "output/html.h"
#include "output/svg.h"
#include "report/report.h"
#include "util/jsonread.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct cd_json *parse(const char *text)
{
	char err[160];
	struct cd_json *d = cd_json_parse(text, strlen(text), NULL, err, sizeof err);
	if (!d)
		unit_check(false, __FILE__, __LINE__, "parse failed: %s", err);
	return d;
}

static void test_json_values(void)
{
	struct cd_json *d = parse(" {\"a\": [1, -2.5e3, true, false, null, \"x\"], \"b\": {\"c\": \"d\"}, \"e\": {}} ");
	const struct cd_jv *r = cd_json_root(d);
	CHECK(r && r->type == CD_JV_OBJECT);
	CHECK_INT(r ? r->n : 0, 3);
	const struct cd_jv *a = cd_jv_get(r, "a");
	CHECK_INT(a ? a->n : 0, 6);
	const struct cd_jv *e = cd_jv_first(a);
	CHECK(e && cd_jv_num(e, 0) == 1);
	CHECK(e && e->next && cd_jv_num(e->next, 0) == -2500);
	CHECK(e && e->next && cd_jv_bool(e->next->next, false));
	CHECK_STR(cd_jv_str(cd_jv_path(r, "b.c"), "?"), "d");
	CHECK(cd_jv_path(r, "b.x") == NULL);
	CHECK(cd_jv_first(cd_jv_get(r, "e")) == NULL);
	CHECK_STR(cd_jv_getstr(r, "a", "fallback"), "fallback"); /* an array is no string */
	CHECK(cd_jv_getnum(r, "missing", 7) == 7);
	cd_json_free(d);
}

static void test_json_strings(void)
{
	/* escapes, a surrogate pair, a lone surrogate and \u0000 as U+FFFD */
	struct cd_json *d = parse("\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\udc00\\u0000z\"");
	const struct cd_jv *s = cd_json_root(d);
	CHECK_STR(cd_jv_str(s, ""), "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbdz");
	CHECK_INT(s ? s->len : 0, strlen(cd_jv_str(s, "")));
	cd_json_free(d);
}

static void test_json_errors(void)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", ".5", "1e", "tru", "nul",
		"\"unterminated", "\"bad \\x escape\"", "\"raw\ttab\"", "\"\\u12\"", "{1:2}", "[1 2]", "'single'",
	};
	for (size_t i = 0; i < UNIT_COUNT(bad); i++) {
		unit_case("%s", bad[i]);
		char err[160] = "";
		size_t end = 0;
		struct cd_json *d = cd_json_parse(bad[i], strlen(bad[i]), &end, err, sizeof err);
		/* a value with more after it ("01" is 0, then 1) is read up to there */
		CHECK(d == NULL || end < strlen(bad[i]));
		CHECK(d != NULL || err[0] != '\0');
		cd_json_free(d);
	}
	unit_case(NULL);
	/* nesting beyond the limit is refused, at the limit read */
	char deep[400];
	int n = CD_JSON_MAX_DEPTH + 1;
	for (int i = 0; i < n; i++)
		deep[i] = '[';
	for (int i = 0; i < n; i++)
		deep[n + i] = ']';
	deep[2 * n] = '\0';
	char err[160];
	struct cd_json *d = cd_json_parse(deep, strlen(deep), NULL, err, sizeof err);
	CHECK(d == NULL);
	CHECK_HAS(err, "nested deeper");
	d = cd_json_parse(deep + 1, strlen(deep) - 2, NULL, err, sizeof err);
	CHECK(d != NULL);
	cd_json_free(d);
}

/* A number no double holds is refused (no infinity reaches a chart), and an
 * int is read only when it is a whole number within the range asked. */
static void test_json_number_limits(void)
{
	static const char *const huge[] = { "1e999", "-1e999", "[1, 1e400]", "{\"cpu_a\": 1E+309}" };
	for (size_t i = 0; i < UNIT_COUNT(huge); i++) {
		unit_case("%s", huge[i]);
		char err[160] = "";
		struct cd_json *d = cd_json_parse(huge[i], strlen(huge[i]), NULL, err, sizeof err);
		CHECK(d == NULL);
		CHECK_HAS(err, "out of range");
		cd_json_free(d);
	}
	unit_case(NULL);
	struct cd_json *d = parse("[3, 2.5, -1, 1e300, -1e300, 4096, \"7\", 1e-400, 1.7976931348623157e308]");
	const struct cd_jv *e = cd_jv_first(cd_json_root(d));
	static const int want[] = { 3, -9, -9, -9, -9, -9, -9, 0, -9 };
	for (size_t i = 0; i < UNIT_COUNT(want) && e; i++, e = e->next) {
		unit_case("element %zu", i);
		CHECK_INT(cd_jv_int(e, 0, 4095, -9), want[i]);
	}
	unit_case(NULL);
	CHECK_INT(cd_jv_int(NULL, 0, 1, 5), 5);
	cd_json_free(d);
}

static void test_json_lines(void)
{
	const char *text = "{\"n\":1}\n{\"n\":2}\n";
	size_t end = 0;
	char err[160];
	struct cd_json *d = cd_json_parse(text, strlen(text), &end, err, sizeof err);
	CHECK(d != NULL);
	CHECK_INT(end, 8);
	cd_json_free(d);
	struct cd_rpt_input in = { 0 };
	char *copy = strdup(text);
	CHECK_INT(cd_rpt_take(&in, CD_RPT_TOP, copy, strlen(text), err, sizeof err), 0);
	CHECK_INT(in.n, 2);
	struct cd_rpt r = { .in[CD_RPT_TOP] = in };
	cd_rpt_free(&r);
	/* one object expected: more after it is an error */
	copy = strdup(text);
	struct cd_rpt_input one = { 0 };
	CHECK_INT(cd_rpt_take(&one, CD_RPT_CHECK, copy, strlen(text), err, sizeof err), -1);
	CHECK_HAS(err, "more after");
}

static void test_html_escape(void)
{
	char *got;
	UNIT_CAPTURE(got, cd_html_esc(out, "<script>a&b</script> \"q\" 'p' \x01\x7f\xc2\x85 \xff\xfe ok \xc3\xa9\t\n"));
	CHECK_STR(got, "&lt;script&gt;a&amp;b&lt;/script&gt; &quot;q&quot; &#39;p&#39; \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
	               "\xef\xbf\xbd\xef\xbf\xbd ok \xc3\xa9\t\n");
	free(got);
	/* a huge string is cut, and says so */
	size_t n = CD_HTML_TEXT_MAX * 3;
	char *big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\0';
	UNIT_CAPTURE(got, cd_html_esc(out, big));
	CHECK(strlen(got) < CD_HTML_TEXT_MAX + 64);
	CHECK_HAS(got, "bytes more)");
	free(got);
	free(big);
	/* a truncated UTF-8 sequence at the end */
	UNIT_CAPTURE(got, cd_html_escn(out, "x\xe2\x82", 3));
	CHECK_STR(got, "x\xef\xbf\xbd\xef\xbf\xbd");
	free(got);
}

static void test_json_data(void)
{
	const char *json = "{ \"a\" : \"</script><script>alert(1)</script><!-- & \\\" \xff\" ,\n \"b\": [1, 2] }";
	char *got;
	UNIT_CAPTURE(got, cd_html_json_data(out, "data-x", json, strlen(json)));
	CHECK_STR(got, "<script type=\"application/json\" id=\"data-x\">{\"a\":\"\\u003c/script\\u003e\\u003cscript\\u003e"
	               "alert(1)\\u003c/script\\u003e\\u003c!-- \\u0026 \\\" \\ufffd\",\"b\":[1,2]}</script>\n");
	/* what is embedded reads back as the same data */
	const char *body = strchr(got, '>') + 1;
	const char *end = strstr(body, "</script>");
	struct cd_json *d = cd_json_parse(body, (size_t)(end - body), NULL, NULL, 0);
	CHECK_STR(cd_jv_getstr(cd_json_root(d), "a", ""), "</script><script>alert(1)</script><!-- & \" \xef\xbf\xbd");
	cd_json_free(d);
	free(got);
}

static void test_svg_scale(void)
{
	struct cd_svg_scale s;
	cd_svg_scale_init(&s, 3, 700, 0, 300, true);
	CHECK(s.d0 == 1 && s.d1 == 1000);
	CHECK(fabs(cd_svg_map(&s, 10) - 100) < 1e-9);
	double t[16];
	CHECK_INT(cd_svg_ticks(&s, t, 16), 4);
	cd_svg_scale_init(&s, 0, 9, 100, 0, false);
	int n = cd_svg_ticks(&s, t, 16);
	CHECK(n >= 4 && t[0] == 0);
	CHECK(fabs(cd_svg_map(&s, 9) - 0) < 1e-9);
	/* an empty or broken domain divides by nothing */
	cd_svg_scale_init(&s, 5, 5, 0, 10, false);
	CHECK(isfinite(cd_svg_map(&s, 5)));
	cd_svg_scale_init(&s, NAN, INFINITY, 0, 10, true);
	CHECK(isfinite(cd_svg_map(&s, 5)));
	char buf[32];
	cd_svg_fmt_ns(buf, sizeof buf, -1500);
	CHECK_STR(buf, "-1500 ns");
}

/* A page from parts given as JSON text. */
static char *page(const char *check, const char *bench, const char *tsc, const char *acc, const char *top, int origin)
{
	struct cd_rpt *r = calloc(1, sizeof *r);
	const char *parts[CD_RPT_N] = { check, bench, tsc, acc, top };
	char err[160];
	for (int p = 0; p < CD_RPT_N; p++) {
		if (!parts[p])
			continue;
		unit_case("part %d", p);
		CHECK_INT(cd_rpt_take(&r->in[p], (enum cd_rpt_part)p, strdup(parts[p]), strlen(parts[p]), err, sizeof err), 0);
		snprintf(r->in[p].from, sizeof r->in[p].from, "a test");
	}
	unit_case(NULL);
	r->origin = origin;
	r->root = "/snap<shot>";
	strcpy(r->generated, "now");
	char *got;
	UNIT_CAPTURE(got, cd_rpt_page(out, r));
	cd_rpt_free(r);
	free(r);
	return got;
}

static const char CHECK_JSON[] =
	"{\"command\":\"check\",\"status\":\"critical\",\"verdict\":\"time calls are system calls <b>\","
	"\"clocksource\":{\"current\":\"hpet\\\"><script>alert(1)</script>\",\"available\":[\"hpet\",\"acpi_pm\"]},"
	"\"kernel\":{\"release\":\"6.1</style><img src=x onerror=alert(1)>\",\"cmdline\":\"javascript:alert(1)\"},"
	"\"measured\":true,\"measurements\":{\"CLOCK_MONOTONIC\":{\"measured\":true,\"ns_per_call\":912.3,"
	"\"syscall\":true,\"syscall_ns\":905}},"
	"\"findings\":[{\"code\":\"slow-clocksource\",\"severity\":\"critical\",\"title\":\"T '><svg onload=x>\","
	"\"evidence\":[\"e1 <i>\",\"e2\"],\"fix\":{\"now\":\"Do this:\\n$ echo tsc > /sys/x\\n$ two\",\"lasting\":null,"
	"\"hypervisor\":null,\"risk\":\"r\"}}],\"unknown\":[]}";

static const char BENCH_JSON[] =
	"{\"command\":\"bench\",\"runs\":[{\"clocksource\":\"tsc\",\"ways\":["
	"{\"name\":\"CLOCK_MONOTONIC\",\"call\":\"clock_gettime\",\"forced_syscall\":false,\"measured\":true,"
	"\"ns_per_call\":23.1,\"path\":\"vDSO\",\"latency\":{\"histogram\":[{\"low_ns\":16,\"high_ns\":31,\"count\":90},"
	"{\"low_ns\":32,\"high_ns\":63,\"count\":10}]}},"
	"{\"name\":\"CLOCK_MONOTONIC/syscall\",\"call\":\"clock_gettime\",\"forced_syscall\":true,\"measured\":true,"
	"\"ns_per_call\":244.8,\"path\":\"kernel\"},"
	"{\"name\":\"rdtsc\",\"call\":\"counter\",\"forced_syscall\":false,\"measured\":true,\"ns_per_call\":9.5,"
	"\"path\":\"CPU\"}]}]}";

static const char TSC_JSON[] =
	"{\"command\":\"tsc\",\"verdict\":\"unsound\",\"summary\":\"unsound: a warp\",\"frequency\":{\"measured_hz\":2e9,"
	"\"sources\":[{\"source\":\"measured\",\"hz\":2e9,\"diff_ppm\":null,\"precision_ppm\":0.4,\"note\":\"m\"},"
	"{\"source\":\"kernel-detected\",\"hz\":2000001000,\"diff_ppm\":0.5,\"precision_ppm\":0.5,\"note\":\"k\"},"
	"{\"source\":\"cpuid-0x15\",\"hz\":null,\"note\":\"no ratio\"}]},"
	"\"sync\":{\"pairs\":[{\"cpu_a\":0,\"cpu_b\":1,\"error\":null,\"backward_steps\":0,\"offset_ns\":-1,"
	"\"uncertainty_ns\":160},{\"cpu_a\":0,\"cpu_b\":2,\"error\":null,\"backward_steps\":3,\"offset_ns\":900,"
	"\"uncertainty_ns\":100,\"max_backward_ns\":80},{\"cpu_a\":1,\"cpu_b\":2,\"error\":\"pinning refused\"}]}}";

static const char ACC_JSON[] =
	"{\"command\":\"accuracy\",\"ok\":true,\"error\":null,\"elapsed_s\":1,\"error_bound\":{\"min_ns\":200,"
	"\"max_ns\":250},\"clocks\":[{\"name\":\"fc_now_ns\",\"kernel\":\"CLOCK_MONOTONIC\",\"histogram\":["
	"{\"low_ns\":4,\"high_ns\":7,\"count\":5},{\"low_ns\":8,\"high_ns\":15,\"count\":50}],\"timeline\":{\"slice_s\":0.1,"
	"\"slices\":[{\"t_s\":0,\"kept\":10,\"min_ns\":-5,\"max_ns\":12,\"bound_ns\":220},{\"t_s\":0.1,\"kept\":0,"
	"\"min_ns\":null,\"max_ns\":null,\"bound_ns\":230}]}}]}";

static const char TOP_JSON[] =
	"{\"command\":\"top\",\"time\":100,\"seconds\":1,\"total\":{\"calls_per_s\":50},\"processes\":[{\"pid\":7,"
	"\"comm\":\"<evil>\",\"calls\":50,\"calls_per_s\":50}]}\n"
	"{\"command\":\"top\",\"time\":101,\"seconds\":1,\"total\":{\"calls_per_s\":80},\"processes\":[{\"pid\":7,"
	"\"comm\":\"<evil>\",\"calls\":80,\"calls_per_s\":80}]}\n";

static void test_page_all_charts(void)
{
	char *got = page(CHECK_JSON, BENCH_JSON, TSC_JSON, ACC_JSON, TOP_JSON, CD_RPT_FILES);
	/* the verdict first, then the findings, then the figures */
	const char *v = strstr(got, "id=\"verdict\""), *f = strstr(got, "id=\"findings\""), *g = strstr(got, "id=\"figures\"");
	CHECK(v && f && g && v < f && f < g);
	CHECK_HAS(got, "data-status=\"critical\"");
	CHECK_HAS(got, "data-code=\"slow-clocksource\"");
	CHECK_HAS(got, "<pre><code>$ echo tsc &gt; /sys/x\n$ two</code></pre>");
	static const char *const charts[] = {
		"id=\"fig-cost\"", "data-way=\"CLOCK_MONOTONIC\" data-ns=\"23.1\"", "data-ref=\"vDSO (CLOCK_MONOTONIC)\"",
		"data-ref=\"forced system call\"", "data-ref=\"counter\"", "id=\"fig-latency\"", "data-low-ns=\"16\"",
		"id=\"fig-tsc-freq\"", "data-source=\"kernel-detected\"", "id=\"fig-warp\"", "data-a=\"0\" data-b=\"2\"",
		"cell h4 fail", "cell h0 refused", "class=\"cross\"", "id=\"fig-accuracy\"", "data-bound-ns=\"220\"",
		"class=\"band\"", "id=\"fig-top\"", "data-calls-per-s=\"80\"",
		"id=\"data-check\"", "id=\"data-top\">[{", "Not offered here: <b>cpuid-0x15</b>",
	};
	CHECK_HAS_ALL(got, charts);
	CHECK_LACKS(got, "data-empty");
	/* nothing from the data became markup */
	static const char *const never[] = {
		"<script>", "<img", "<svg onload", "<b>\"", "<evil>", "<i>", "'><", "\"><script",
	};
	CHECK_HAS(got, "&lt;evil&gt;");
	CHECK_HAS(got, "&lt;script&gt;alert(1)&lt;/script&gt;");
	for (size_t i = 0; i < UNIT_COUNT(never); i++) {
		unit_case("%s", never[i]);
		CHECK_LACKS(got, never[i]);
	}
	unit_case(NULL);
	/* the only <script> elements are data */
	int scripts = 0;
	for (const char *p = got; (p = strstr(p, "<script")) != NULL; p++, scripts++)
		CHECK(strncmp(p, "<script type=\"application/json\"", 31) == 0);
	CHECK_INT(scripts, 5);
	free(got);
}

static void test_page_snapshot(void)
{
	const char *check = "{\"command\":\"check\",\"status\":\"ok\",\"verdict\":\"fine\",\"measured\":false,"
	                    "\"measurements\":null,\"findings\":[]}";
	char *got = page(check, NULL, NULL, NULL, NULL, CD_RPT_SNAPSHOT);
	CHECK_HAS(got, "Measured: nothing");
	CHECK_HAS(got, "/snap&lt;shot&gt;");
	CHECK_HAS(got, "No finding");
	/* every figure there, each saying why it is empty */
	static const char *const empty[] = {
		"id=\"fig-cost\" data-chart=\"cost\" data-empty=\"1\"", "id=\"fig-latency\" data-chart=\"latency\" data-empty",
		"id=\"fig-tsc-freq\" data-chart=\"tsc-freq\" data-empty", "id=\"fig-warp\" data-chart=\"warp\" data-empty",
		"id=\"fig-accuracy\" data-chart=\"accuracy\" data-empty", "id=\"fig-top\" data-chart=\"top\" data-empty",
	};
	CHECK_HAS_ALL(got, empty);
	CHECK_LACKS(got, "class=\"mark");
	free(got);
	/* no check at all: the verdict says it cannot tell */
	got = page(NULL, BENCH_JSON, NULL, NULL, NULL, CD_RPT_FILES);
	CHECK_HAS(got, "data-status=\"unknown\"");
	CHECK_HAS(got, "data-way=\"rdtsc\"");
	free(got);
}

int main(void)
{
	test_json_values();
	test_json_strings();
	test_json_errors();
	test_json_number_limits();
	test_json_lines();
	test_html_escape();
	test_json_data();
	test_svg_scale();
	test_page_all_charts();
	test_page_snapshot();
	return unit_done("test_report");
}
