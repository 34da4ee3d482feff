/* SPDX-License-Identifier: MIT */
/*
 * fuzz_jsonread.c: libFuzzer target for the JSON reader `report --from`
 * reads files with (util/jsonread.h), from a heap copy of exactly size
 * bytes (AddressSanitizer flags any read beyond), and for the HTML the page
 * writes from what it read (output/html.h).
 *
 * Every document read must hold what it says (counts match the lists, keys
 * in objects only, strings as long as their len with no NUL inside); every
 * string escaped for HTML must come out with no markup character and as
 * valid UTF-8; the JSON embedded as data must hold no "</" before its end.
 */
#include "fuzz.h"
#include "output/html.h"
#include "util/jsonread.h"
#include "util/utf8.h"

#include <stdio.h>

static void check_html(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	cd_html_escn(f, s, n);
	fclose(f);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '<' || c == '>' || c == '"' || c == '\'' || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			abort();
		int k = cd_utf8_len((const unsigned char *)buf + i, len - i);
		if (k == 0)
			abort();
		i += (size_t)k;
	}
	free(buf);
}

static void walk(const struct cd_jv *v, bool in_object, int depth)
{
	if (depth > CD_JSON_MAX_DEPTH + 1)
		abort();
	if (in_object != (v->key != NULL))
		abort();
	if (v->key)
		check_html(v->key, strlen(v->key));
	if (v->type == CD_JV_STRING) {
		if (!v->str || strlen(v->str) != v->len)
			abort();
		check_html(v->str, v->len);
	}
	if (v->type == CD_JV_ARRAY || v->type == CD_JV_OBJECT) {
		size_t n = 0;
		for (const struct cd_jv *e = cd_jv_first(v); e; e = e->next, n++)
			walk(e, v->type == CD_JV_OBJECT, depth + 1);
		if (n != v->n)
			abort();
	}
}

static void check_embedded(const char *text, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		abort();
	cd_html_json_data(f, "data-x", text, len);
	fclose(f);
	const char *end = strstr(buf, "</");
	if (!end || strcmp(end, "</script>\n") != 0)
		abort();
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact(data, size);
	size_t end = 0;
	char err[160];
	struct cd_json *doc = cd_json_parse(exact, size, &end, err, sizeof err);
	if (doc) {
		if (end > size)
			abort();
		walk(cd_json_root(doc), false, 0);
		check_embedded(exact, end);
		cd_json_free(doc);
	} else if (!err[0]) {
		abort();
	}
	free(exact);
	return 0;
}
