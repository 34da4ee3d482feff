/* SPDX-License-Identifier: MIT */
/*
 * html.h: writing HTML safely.  Every string that came from a machine, a
 * snapshot or a file someone sent goes through cd_html_esc, the one
 * escaping function: the same text is safe between tags and inside a
 * quoted attribute.  Numbers the tool formats itself are written as they
 * are.
 */
#ifndef CD_OUTPUT_HTML_H
#define CD_OUTPUT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* The longest text one call writes: a longer one is cut there (on a
 * character boundary) and "... (N bytes more)" said, so that a huge string
 * cannot swell the page. */
#define CD_HTML_TEXT_MAX 8192

/* s (NULL: nothing) escaped: & < > " ' as character references; tab and
 * newline kept; every other control character (C0, DEL, C1) and every byte
 * that is not part of valid UTF-8 as U+FFFD. */
void cd_html_esc(FILE *out, const char *s);
/* The first n bytes of s, the same way. */
void cd_html_escn(FILE *out, const char *s, size_t n);

/* JSON text (valid JSON, as parsed) embedded as data the page carries:
 * <script type="application/json" id="ID">, whitespace outside strings
 * left out, '<', '>' and '&' written as \u003c, \u003e, \u0026 (so that
 * "</script>" or "<!--" in a string ends nothing), and bytes that are not
 * valid UTF-8 as \ufffd.  No script runs: the type is data. */
void cd_html_json_data(FILE *out, const char *id, const char *json, size_t len);

#endif
