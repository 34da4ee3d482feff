/* SPDX-License-Identifier: MIT */
/*
 * jsonw.h: a streaming JSON writer.  Every string goes through one escaping
 * function (no JSON is ever built with an unescaped printf); commas and
 * nesting are tracked here so that callers cannot get them wrong.
 */
#ifndef CD_JSONW_H
#define CD_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#define CD_JSONW_DEPTH 16

struct cd_jsonw {
	FILE *out;
	int depth;
	bool first[CD_JSONW_DEPTH]; /* nothing written yet at this level */
	int indent;                 /* spaces per level; 0 writes one line */
};

void cd_jsonw_init(struct cd_jsonw *w, FILE *out, int indent);
void cd_jsonw_begin_object(struct cd_jsonw *w, const char *key); /* key NULL inside an array or at top */
void cd_jsonw_end_object(struct cd_jsonw *w);
void cd_jsonw_begin_array(struct cd_jsonw *w, const char *key);
void cd_jsonw_end_array(struct cd_jsonw *w);
void cd_jsonw_string(struct cd_jsonw *w, const char *key, const char *value); /* NULL value: null */
void cd_jsonw_number(struct cd_jsonw *w, const char *key, double value);      /* NaN/inf: null */
void cd_jsonw_int(struct cd_jsonw *w, const char *key, long long value);
/* A run of numbers in the current object, in the order listed, each as
 * cd_jsonw_number writes it; a NULL key ends the list. */
struct cd_jsonw_num {
	const char *key;
	double value;
};
void cd_jsonw_numbers(struct cd_jsonw *w, const struct cd_jsonw_num *nums);
/* A number already formatted ("1767225600.250"), written as it is when it
 * is a JSON number, else null: for values %.6g would round. */
void cd_jsonw_number_text(struct cd_jsonw *w, const char *key, const char *text);
void cd_jsonw_bool(struct cd_jsonw *w, const char *key, bool value);
void cd_jsonw_null(struct cd_jsonw *w, const char *key);
/* The version of the JSON schemas (docs/json.md): raised when a field is
 * renamed, removed or changes meaning; adding fields does not raise it. */
#define CD_JSON_SCHEMA_VERSION 1

/* Starts a subcommand's JSON object: w writes to out (indent as for
 * cd_jsonw_init), and the object opens with the envelope every one does
 * (docs/json.md): "tool", "version", "command", "schema_version",
 * "exit_status".  The exit status is the process's, or null (exit_status
 * < 0) in the objects of a stream (top, watch), written before the process
 * ends.  The caller ends the object (cd_jsonw_end_object). */
void cd_jsonw_open(struct cd_jsonw *w, FILE *out, int indent, const char *command, int exit_status);

/* Escape s as a JSON string body (no quotes) to out. Invalid UTF-8 bytes
 * become U+FFFD, so the output is always valid JSON. */
void cd_json_escape(FILE *out, const char *s);

#endif
