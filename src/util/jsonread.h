/* SPDX-License-Identifier: MIT */
/*
 * jsonread.h: a small JSON reader for the files `report --from` is given
 * (what each command's --json wrote, sent by someone else): hostile input.
 *
 * Strict RFC 8259 grammar, bounded: nesting at most CD_JSON_MAX_DEPTH deep,
 * at most CD_JSON_MAX_NODES values, the whole text parsed into one arena
 * freed at once.  Strings are decoded (escapes, surrogate pairs) and kept
 * NUL-terminated; a \u0000, a lone surrogate and a raw control character
 * (which JSON forbids) are refused or replaced as the grammar says: raw
 * controls are an error, \u0000 and lone surrogates become U+FFFD, so no
 * string holds a NUL.  Bytes that are not valid UTF-8 are kept as they are:
 * whoever writes a string out escapes it for where it goes.  A number too
 * large for a double (1e999) is refused: every number read is finite.
 */
#ifndef CD_UTIL_JSONREAD_H
#define CD_UTIL_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

#define CD_JSON_MAX_DEPTH 64
#define CD_JSON_MAX_NODES 2000000

enum cd_jv_type {
	CD_JV_NULL,
	CD_JV_BOOL,
	CD_JV_NUMBER,
	CD_JV_STRING,
	CD_JV_ARRAY,
	CD_JV_OBJECT,
};

/* One value.  Members of an object and elements of an array are a list
 * (first, next); a member's name is its key. */
struct cd_jv {
	enum cd_jv_type type;
	const char *key;          /* the member's name; NULL in an array or at the top */
	const char *str;          /* CD_JV_STRING: the decoded text */
	size_t len;               /* its length in bytes */
	double num;               /* CD_JV_NUMBER */
	bool b;                   /* CD_JV_BOOL */
	size_t n;                 /* CD_JV_ARRAY, CD_JV_OBJECT: how many */
	struct cd_jv *first, *next;
};

struct cd_json;

/* Parse one JSON value from text[0..len) (whitespace around it allowed).
 * *end (may be NULL) gets the offset just past the value and the
 * whitespace after it, so that a file of JSON lines is read value by
 * value; text after the value is not an error here.  Returns the document,
 * or NULL with a message in err (at the byte offset where it failed). */
struct cd_json *cd_json_parse(const char *text, size_t len, size_t *end, char *err, size_t errcap);
void cd_json_free(struct cd_json *doc);
const struct cd_jv *cd_json_root(const struct cd_json *doc);
/* How many values doc holds (at most CD_JSON_MAX_NODES): a reader of many
 * documents (JSON lines) bounds their sum with it. */
size_t cd_json_values(const struct cd_json *doc);

/* An object's member by name (the first of that name), or NULL (also when v
 * is NULL or no object).  A dotted path "sync.pairs" walks objects. */
const struct cd_jv *cd_jv_get(const struct cd_jv *v, const char *key);
const struct cd_jv *cd_jv_path(const struct cd_jv *v, const char *path);

/* Typed reads with a fallback for a missing value or another type. */
double cd_jv_num(const struct cd_jv *v, double fallback);
bool cd_jv_is_num(const struct cd_jv *v);
/* A whole number within [lo, hi] as an int (a CPU, an index), else
 * fallback: a fraction, a value out of the range, another type. */
int cd_jv_int(const struct cd_jv *v, int lo, int hi, int fallback);
const char *cd_jv_str(const struct cd_jv *v, const char *fallback);
bool cd_jv_bool(const struct cd_jv *v, bool fallback);
/* The same on a member: cd_jv_num(cd_jv_get(v, key), fallback). */
double cd_jv_getnum(const struct cd_jv *v, const char *key, double fallback);
const char *cd_jv_getstr(const struct cd_jv *v, const char *key, const char *fallback);
bool cd_jv_getbool(const struct cd_jv *v, const char *key, bool fallback);

/* The first element or member of an array or object (NULL when empty or
 * another type); v->next walks on. */
const struct cd_jv *cd_jv_first(const struct cd_jv *v);

#endif
