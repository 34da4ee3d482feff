/* SPDX-License-Identifier: MIT */
/*
 * jsonw.c: the streaming JSON writer (see jsonw.h).
 */
#include "output/jsonw.h"
#include "output/output.h"
#include "util/utf8.h"

#include <math.h>
#include <string.h>

void cd_jsonw_init(struct cd_jsonw *w, FILE *out, int indent)
{
	memset(w, 0, sizeof *w);
	w->out = out;
	w->indent = indent;
	w->first[0] = true;
}

static void newline(struct cd_jsonw *w)
{
	if (!w->indent)
		return;
	fputc('\n', w->out);
	for (int i = 0; i < w->depth * w->indent; i++)
		fputc(' ', w->out);
}

void cd_json_escape(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char ch = *p;
		if (ch == '"' || ch == '\\') {
			fputc('\\', out);
			fputc(ch, out);
			p++;
		} else if (ch < 0x20) {
			switch (ch) {
			case '\n': fputs("\\n", out); break;
			case '\t': fputs("\\t", out); break;
			case '\r': fputs("\\r", out); break;
			default: fprintf(out, "\\u%04x", ch); break;
			}
			p++;
		} else if (ch < 0x7f) {
			fputc(ch, out);
			p++;
		} else if (ch == 0x7f) {
			/* DEL and the C1 controls are valid JSON raw, but `jq -r`
			 * would hand them to a terminal: escaped like C0. */
			fputs("\\u007f", out);
			p++;
		} else {
			int n = cd_utf8_len(p, strnlen((const char *)p, 4));
			if (n == 0) {
				fputs("\\ufffd", out);
				p++;
			} else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
				fprintf(out, "\\u%04x", p[1]);
				p += 2;
			} else {
				fwrite(p, 1, (size_t)n, out);
				p += n;
			}
		}
	}
}

static void key(struct cd_jsonw *w, const char *k)
{
	if (!w->first[w->depth])
		fputc(',', w->out);
	w->first[w->depth] = false;
	if (w->depth > 0)
		newline(w);
	if (k) {
		fputc('"', w->out);
		cd_json_escape(w->out, k);
		fputs(w->indent ? "\": " : "\":", w->out);
	}
}

static void open_container(struct cd_jsonw *w, const char *k, char c)
{
	key(w, k);
	fputc(c, w->out);
	if (w->depth + 1 < CD_JSONW_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_container(struct cd_jsonw *w, char c)
{
	bool empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(w);
	fputc(c, w->out);
	if (w->depth == 0 && w->indent)
		fputc('\n', w->out);
}

void cd_jsonw_begin_object(struct cd_jsonw *w, const char *k) { open_container(w, k, '{'); }
void cd_jsonw_end_object(struct cd_jsonw *w) { close_container(w, '}'); }
void cd_jsonw_begin_array(struct cd_jsonw *w, const char *k) { open_container(w, k, '['); }
void cd_jsonw_end_array(struct cd_jsonw *w) { close_container(w, ']'); }

void cd_jsonw_string(struct cd_jsonw *w, const char *k, const char *value)
{
	key(w, k);
	if (!value) {
		fputs("null", w->out);
		return;
	}
	fputc('"', w->out);
	cd_json_escape(w->out, value);
	fputc('"', w->out);
}

void cd_jsonw_number(struct cd_jsonw *w, const char *k, double value)
{
	key(w, k);
	if (isnan(value) || isinf(value))
		fputs("null", w->out);
	else
		fprintf(w->out, "%.6g", value);
}

void cd_jsonw_numbers(struct cd_jsonw *w, const struct cd_jsonw_num *nums)
{
	for (; nums->key; nums++)
		cd_jsonw_number(w, nums->key, nums->value);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(const char *s)
{
	const char *p = s + (*s == '-');
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p += p[1] == '+' || p[1] == '-' ? 2 : 1;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

void cd_jsonw_number_text(struct cd_jsonw *w, const char *k, const char *text)
{
	key(w, k);
	fputs(text && json_number(text) ? text : "null", w->out);
}

void cd_jsonw_int(struct cd_jsonw *w, const char *k, long long value)
{
	key(w, k);
	fprintf(w->out, "%lld", value);
}

void cd_jsonw_bool(struct cd_jsonw *w, const char *k, bool value)
{
	key(w, k);
	fputs(value ? "true" : "false", w->out);
}

void cd_jsonw_null(struct cd_jsonw *w, const char *k)
{
	key(w, k);
	fputs("null", w->out);
}

void cd_jsonw_open(struct cd_jsonw *w, FILE *out, int indent, const char *command, int exit_status)
{
	cd_jsonw_init(w, out, indent);
	cd_jsonw_begin_object(w, NULL);
	cd_jsonw_string(w, "tool", "clockdoctor");
	cd_jsonw_string(w, "version", CD_VERSION);
	cd_jsonw_string(w, "command", command);
	cd_jsonw_int(w, "schema_version", CD_JSON_SCHEMA_VERSION);
	if (exit_status >= 0)
		cd_jsonw_int(w, "exit_status", exit_status);
	else
		cd_jsonw_null(w, "exit_status");
}
