/* Unit tests of the output layer: JSON escaping and nesting, text wrapping. */
#include "output/jsonw.h"
#include "output/output.h"
#include "unit.h"

#include <stdlib.h>

/* Run fn on a memory stream and return what it wrote (caller frees). */
static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void escape_fn(FILE *f, const void *arg)
{
	cd_json_escape(f, arg);
}

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
		char *got = capture(escape_fn, cases[i].in);
		CHECK_STR(got, cases[i].out);
		free(got);
	}
}

static void nested_fn(FILE *f, const void *arg)
{
	(void)arg;
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
	cd_jsonw_end_object(&w);
}

static void test_nesting(void)
{
	char *got = capture(nested_fn, NULL);
	CHECK_STR(got, "{\"s\":\"x\",\"n\":null,\"a\":[1,0.5,null,true,{}],\"empty\":[],\"z\":null}");
	free(got);
}

static void wrap_fn(FILE *f, const void *arg)
{
	cd_wrap(f, arg, 4, 40);
}

static void test_wrap(void)
{
	char *got = capture(wrap_fn, "one two three four five six seven eight nine ten eleven\n"
	                             "$ a command that is much longer than forty columns stays whole\n"
	                             "short");
	CHECK_STR(got, "    one two three four five six seven\n"
	               "    eight nine ten eleven\n"
	               "    $ a command that is much longer than forty columns stays whole\n"
	               "    short\n");
	free(got);
	/* A word longer than the line is cut, never looping forever. */
	char word[200];
	memset(word, 'w', sizeof word - 1);
	word[sizeof word - 1] = '\0';
	got = capture(wrap_fn, word);
	size_t lines = 0;
	for (char *p = got; *p; p++)
		lines += *p == '\n';
	CHECK_INT(lines, 6); /* 199 characters, 36 a line */
	free(got);
	got = capture(wrap_fn, "");
	CHECK_STR(got, "");
	free(got);
}

static void number_text_fn(FILE *f, const void *arg)
{
	struct cd_jsonw w;
	cd_jsonw_init(&w, f, 0);
	cd_jsonw_begin_array(&w, NULL);
	for (const char *const *t = arg; *t; t++)
		cd_jsonw_number_text(&w, NULL, *t);
	cd_jsonw_end_array(&w);
}

static void test_number_text(void)
{
	static const char *const nums[] = { "1767225600.250", "-3", "0", "1e9", "2.5E-3", "01", "1.", "x",
	                                    "", "1 2", "--1", NULL };
	char *got = capture(number_text_fn, nums);
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

int main(void)
{
	test_prom_label();
	test_number_text();
	test_escape();
	test_nesting();
	test_wrap();
	return unit_done("output");
}
