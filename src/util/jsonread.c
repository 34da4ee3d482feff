/* SPDX-License-Identifier: MIT */
/*
 * jsonread.c: the JSON reader (jsonread.h).  Recursive descent, its depth
 * bounded; values and decoded strings live in an arena of blocks, so a
 * document is freed at once and nothing it points to moves.
 */
#include "util/jsonread.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_MIN 65536

struct block {
	struct block *prev;
	size_t used, cap;
	_Alignas(max_align_t) unsigned char data[];
};

struct cd_json {
	struct block *top;
	struct cd_jv *root;
	size_t nodes;
};

struct parser {
	const char *s;
	size_t len, pos;
	struct cd_json *doc;
	char *err;
	size_t errcap;
	bool failed;
};

static void *arena_alloc(struct cd_json *d, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!d->top || d->top->cap - d->top->used < n) {
		size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
		struct block *b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->prev = d->top;
		b->used = 0;
		b->cap = cap;
		d->top = b;
	}
	void *p = d->top->data + d->top->used;
	d->top->used += n;
	return p;
}

static void fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct parser *p, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	if (!p->err || p->errcap == 0)
		return;
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errcap, "%s at byte %zu", msg, p->pos);
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static struct cd_jv *new_node(struct parser *p, enum cd_jv_type t)
{
	if (p->doc->nodes >= CD_JSON_MAX_NODES) {
		fail(p, "more than %d values", CD_JSON_MAX_NODES);
		return NULL;
	}
	struct cd_jv *v = arena_alloc(p->doc, sizeof *v);
	if (!v) {
		fail(p, "out of memory");
		return NULL;
	}
	memset(v, 0, sizeof *v);
	v->type = t;
	p->doc->nodes++;
	return v;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at s[pos], or -1. */
static long hex4(const struct parser *p, size_t at)
{
	if (p->len - at < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p->s[at + (size_t)i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string at p->pos (on its opening quote), decoded into the arena.  The
 * decoded text is never longer than the source (an escape of 6 bytes makes
 * at most 3, a pair of 12 makes 4; U+FFFD for "\u0000" is 3 of 6). */
static const char *parse_string(struct parser *p, size_t *outlen)
{
	p->pos++;
	size_t start = p->pos, close = start;
	while (close < p->len && p->s[close] != '"') {
		if (p->s[close] == '\\')
			close++;
		close++;
	}
	if (close >= p->len) {
		fail(p, "unterminated string");
		return NULL;
	}
	unsigned char *out = arena_alloc(p->doc, close - start + 1);
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	size_t n = 0;
	while (p->pos < close) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c < 0x20) {
			fail(p, "control character in a string");
			return NULL;
		}
		if (c != '\\') {
			out[n++] = c;
			p->pos++;
			continue;
		}
		char e = p->s[p->pos + 1];
		p->pos += 2;
		switch (e) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case '/': out[n++] = '/'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u': {
			long u = hex4(p, p->pos);
			if (u < 0 || p->pos + 4 > close) {
				fail(p, "bad \\u escape");
				return NULL;
			}
			p->pos += 4;
			uint32_t cp = (uint32_t)u;
			if (cp >= 0xD800 && cp <= 0xDBFF && p->pos + 6 <= close && p->s[p->pos] == '\\' &&
			    p->s[p->pos + 1] == 'u') {
				long lo = hex4(p, p->pos + 2);
				if (lo >= 0xDC00 && lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
					p->pos += 6;
				}
			}
			if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
				cp = 0xFFFD;
			n += put_utf8(out + n, cp);
			break;
		}
		default:
			fail(p, "bad escape");
			return NULL;
		}
	}
	out[n] = '\0';
	p->pos = close + 1;
	*outlen = n;
	return (const char *)out;
}

static bool parse_number(struct parser *p, double *v)
{
	size_t i = p->pos;
	const char *s = p->s;
	if (i < p->len && s[i] == '-')
		i++;
	if (i >= p->len)
		goto bad;
	if (s[i] == '0') {
		i++;
	} else if (s[i] >= '1' && s[i] <= '9') {
		while (i < p->len && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		goto bad;
	}
	if (i < p->len && s[i] == '.') {
		i++;
		if (i >= p->len || s[i] < '0' || s[i] > '9')
			goto bad;
		while (i < p->len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= p->len || s[i] < '0' || s[i] > '9')
			goto bad;
		while (i < p->len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	/* strtod on a bounded copy: the text need not be NUL-terminated. */
	char buf[64];
	size_t n = i - p->pos;
	if (n >= sizeof buf) {
		fail(p, "number too long");
		return false;
	}
	memcpy(buf, s + p->pos, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL);
	/* 1e999 is valid grammar but no double: refused, so that no reader
	 * meets an infinity (nor inf - inf, a NaN) no command ever wrote */
	if (!isfinite(*v)) {
		fail(p, "number out of range");
		return false;
	}
	p->pos = i;
	return true;
bad:
	fail(p, "bad number");
	return false;
}

static bool literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) {
		fail(p, "unexpected character");
		return false;
	}
	p->pos += n;
	return true;
}

static struct cd_jv *parse_value(struct parser *p, int depth);

/* The members of an object or the elements of an array, after the
 * opening bracket. */
static bool parse_list(struct parser *p, struct cd_jv *v, int depth)
{
	bool object = v->type == CD_JV_OBJECT;
	char close = object ? '}' : ']';
	struct cd_jv **link = &v->first;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return true;
	}
	for (;;) {
		const char *key = NULL;
		skip_ws(p);
		if (object) {
			size_t klen;
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				fail(p, "expected a member name");
				return false;
			}
			key = parse_string(p, &klen);
			if (!key)
				return false;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				fail(p, "expected ':'");
				return false;
			}
			p->pos++;
		}
		struct cd_jv *e = parse_value(p, depth + 1);
		if (!e)
			return false;
		e->key = key;
		*link = e;
		link = &e->next;
		v->n++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return true;
		}
		fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
		return false;
	}
}

static struct cd_jv *parse_value(struct parser *p, int depth)
{
	if (depth >= CD_JSON_MAX_DEPTH) {
		fail(p, "nested deeper than %d", CD_JSON_MAX_DEPTH);
		return NULL;
	}
	skip_ws(p);
	if (p->pos >= p->len) {
		fail(p, "unexpected end");
		return NULL;
	}
	struct cd_jv *v;
	char c = p->s[p->pos];
	switch (c) {
	case '{':
	case '[':
		v = new_node(p, c == '{' ? CD_JV_OBJECT : CD_JV_ARRAY);
		if (!v)
			return NULL;
		p->pos++;
		return parse_list(p, v, depth) ? v : NULL;
	case '"':
		v = new_node(p, CD_JV_STRING);
		if (!v)
			return NULL;
		v->str = parse_string(p, &v->len);
		return v->str ? v : NULL;
	case 't':
	case 'f':
		v = new_node(p, CD_JV_BOOL);
		if (!v || !literal(p, c == 't' ? "true" : "false"))
			return NULL;
		v->b = c == 't';
		return v;
	case 'n':
		v = new_node(p, CD_JV_NULL);
		return v && literal(p, "null") ? v : NULL;
	default:
		v = new_node(p, CD_JV_NUMBER);
		return v && parse_number(p, &v->num) ? v : NULL;
	}
}

struct cd_json *cd_json_parse(const char *text, size_t len, size_t *end, char *err, size_t errcap)
{
	if (err && errcap)
		err[0] = '\0';
	struct cd_json *doc = calloc(1, sizeof *doc);
	if (!doc) {
		if (err && errcap)
			snprintf(err, errcap, "out of memory");
		return NULL;
	}
	struct parser p = { .s = text, .len = len, .doc = doc, .err = err, .errcap = errcap };
	doc->root = parse_value(&p, 0);
	if (!doc->root) {
		cd_json_free(doc);
		return NULL;
	}
	skip_ws(&p);
	if (end)
		*end = p.pos;
	return doc;
}

void cd_json_free(struct cd_json *doc)
{
	if (!doc)
		return;
	while (doc->top) {
		struct block *prev = doc->top->prev;
		free(doc->top);
		doc->top = prev;
	}
	free(doc);
}

const struct cd_jv *cd_json_root(const struct cd_json *doc)
{
	return doc ? doc->root : NULL;
}

size_t cd_json_values(const struct cd_json *doc)
{
	return doc ? doc->nodes : 0;
}

const struct cd_jv *cd_jv_get(const struct cd_jv *v, const char *key)
{
	if (!v || v->type != CD_JV_OBJECT)
		return NULL;
	for (const struct cd_jv *m = v->first; m; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

const struct cd_jv *cd_jv_path(const struct cd_jv *v, const char *path)
{
	char part[128];
	while (v && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof part)
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		v = cd_jv_get(v, part);
		path += n + (path[n] == '.');
	}
	return v;
}

double cd_jv_num(const struct cd_jv *v, double fallback)
{
	return v && v->type == CD_JV_NUMBER ? v->num : fallback;
}

int cd_jv_int(const struct cd_jv *v, int lo, int hi, int fallback)
{
	/* compared as doubles before the conversion, which a value out of
	 * int's range would make undefined */
	if (!v || v->type != CD_JV_NUMBER || !(v->num >= lo && v->num <= hi) || v->num != floor(v->num))
		return fallback;
	return (int)v->num;
}

bool cd_jv_is_num(const struct cd_jv *v)
{
	return v && v->type == CD_JV_NUMBER;
}

const char *cd_jv_str(const struct cd_jv *v, const char *fallback)
{
	return v && v->type == CD_JV_STRING ? v->str : fallback;
}

bool cd_jv_bool(const struct cd_jv *v, bool fallback)
{
	return v && v->type == CD_JV_BOOL ? v->b : fallback;
}

double cd_jv_getnum(const struct cd_jv *v, const char *key, double fallback)
{
	return cd_jv_num(cd_jv_get(v, key), fallback);
}

const char *cd_jv_getstr(const struct cd_jv *v, const char *key, const char *fallback)
{
	return cd_jv_str(cd_jv_get(v, key), fallback);
}

bool cd_jv_getbool(const struct cd_jv *v, const char *key, bool fallback)
{
	return cd_jv_bool(cd_jv_get(v, key), fallback);
}

const struct cd_jv *cd_jv_first(const struct cd_jv *v)
{
	return v && (v->type == CD_JV_ARRAY || v->type == CD_JV_OBJECT) ? v->first : NULL;
}
