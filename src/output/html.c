/* SPDX-License-Identifier: MIT */
/*
 * html.c: escaping for HTML and embedding JSON as data (html.h).
 */
#include "output/html.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <string.h>

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

void cd_html_escn(FILE *out, const char *s, size_t n)
{
	if (!s)
		return;
	const unsigned char *p = (const unsigned char *)s;
	size_t limit = n > CD_HTML_TEXT_MAX ? CD_HTML_TEXT_MAX : n;
	size_t i = 0;
	while (i < limit) {
		unsigned char c = p[i];
		switch (c) {
		case '&': fputs("&amp;", out); i++; continue;
		case '<': fputs("&lt;", out); i++; continue;
		case '>': fputs("&gt;", out); i++; continue;
		case '"': fputs("&quot;", out); i++; continue;
		case '\'': fputs("&#39;", out); i++; continue;
		case '\t':
		case '\n': fputc(c, out); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fputs(REPLACEMENT, out);
			i++;
			continue;
		}
		int len = cd_utf8_len(p + i, n - i);
		if (len == 0 || (len == 2 && c == 0xc2 && p[i + 1] < 0xa0)) {
			/* not UTF-8, or a C1 control */
			fputs(REPLACEMENT, out);
			i += len ? (size_t)len : 1;
			continue;
		}
		if (i + (size_t)len > limit)
			break;
		fwrite(p + i, 1, (size_t)len, out);
		i += (size_t)len;
	}
	if (i < n)
		fprintf(out, "\xe2\x80\xa6 (%zu bytes more)", n - i);
}

void cd_html_esc(FILE *out, const char *s)
{
	if (s)
		cd_html_escn(out, s, strlen(s));
}

void cd_html_json_data(FILE *out, const char *id, const char *json, size_t len)
{
	fputs("<script type=\"application/json\" id=\"", out);
	cd_html_esc(out, id);
	fputs("\">", out);
	const unsigned char *p = (const unsigned char *)json;
	bool in_string = false;
	size_t i = 0;
	while (i < len) {
		unsigned char c = p[i];
		if (!in_string && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
			i++;
			continue;
		}
		if (c == '"')
			in_string = !in_string;
		if (in_string && c == '\\' && i + 1 < len) {
			fputc(c, out);
			fputc(p[i + 1], out);
			i += 2;
			continue;
		}
		if (c == '<' || c == '>' || c == '&') {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, out);
			i++;
			continue;
		}
		int n = cd_utf8_len(p + i, len - i);
		if (n == 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		fwrite(p + i, 1, (size_t)n, out);
		i += (size_t)n;
	}
	fputs("</script>\n", out);
}
