/* SPDX-License-Identifier: MIT */
/*
 * record.c: the record of what `fix --persist` changed (persist.h).
 *
 * Text, one change a line, so that an operator can read it and see exactly
 * what undo will take back:
 *
 *   clockdoctor fix record 1
 *   created 1767225600
 *   family debian
 *   state pending                (then "done": every change was made)
 *   regen update-grub
 *   mkdir /etc/default/grub.d
 *   replaced /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg backup=/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg.clockdoctor-backup mode=0600 size=21 fnv=...
 *   file /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg mode=0644 size=312 fnv=0123456789abcdef add=tsc=reliable
 *   grubby add=tsc=reliable
 *   backup /var/lib/clockdoctor/backup-1767225600
 *
 * Paths are under the root the record lives in.  The parser trusts nothing,
 * and accepts only what fix itself writes: a folder of the two fix creates
 * (and their parents), a drop-in at the name fix gives that parameter with
 * exactly the content fix writes for it (size and hash), a file set aside
 * under that drop-in's name + ".clockdoctor-backup" only, with its hash,
 * the grubby backup folder of the record's own time.  Anything else (a path
 * with "..", a blank, another folder, an unknown line, a token fix would
 * never write) and the whole record is refused, so undo never acts on a
 * guess.  A record without a state line (written by an earlier version) is
 * taken as done.
 */
#include "persist/bootcfg_impl.h"
#include "diagnose/fixes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "clockdoctor fix record 1"

uint64_t cd_fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

bool cd_record_path_ok(const char *rel)
{
	size_t n = strlen(rel);
	if (n < 2 || n >= CD_REL_MAX || rel[0] != '/' || rel[n - 1] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)rel[i] <= ' ' || rel[i] == 0x7f)
			return false;
	/* Every component a plain name: not empty, not "." or "..". */
	for (const char *p = rel; *p == '/';) {
		size_t c = strcspn(p + 1, "/");
		if (c == 0 || (c == 1 && p[1] == '.') || (c == 2 && p[1] == '.' && p[2] == '.'))
			return false;
		p += 1 + c;
	}
	return true;
}

static const char *kind_word(enum cd_change_kind k)
{
	switch (k) {
	case CD_CH_MKDIR: return "mkdir";
	case CD_CH_FILE: return "file";
	case CD_CH_REPLACED: return "replaced";
	case CD_CH_GRUBBY: return "grubby";
	case CD_CH_BACKUP: return "backup";
	}
	return "?";
}

int cd_record_format(const struct cd_record *r, char *buf, size_t cap)
{
	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	cd_appendf(buf, cap, HEADER "\ncreated %lld\nfamily %s\nstate %s\n", r->created, r->family,
	           r->done ? "done" : "pending");
	if (r->regen[0])
		cd_appendf(buf, cap, "regen %s\n", r->regen);
	for (int i = 0; i < r->n; i++) {
		const struct cd_change *c = &r->ch[i];
		cd_appendf(buf, cap, "%s", kind_word(c->kind));
		if (c->kind != CD_CH_GRUBBY)
			cd_appendf(buf, cap, " %s", c->path);
		if (c->kind == CD_CH_REPLACED)
			cd_appendf(buf, cap, " backup=%s", c->backup);
		if (c->kind == CD_CH_FILE || c->kind == CD_CH_REPLACED)
			cd_appendf(buf, cap, " mode=%04o size=%llu fnv=%016" PRIx64, c->mode & 07777, c->size,
			           c->hash);
		if (c->kind == CD_CH_FILE || c->kind == CD_CH_GRUBBY)
			cd_appendf(buf, cap, " %s=%s", c->add ? "add" : "remove", c->token);
		cd_appendf(buf, cap, "\n");
	}
	size_t len = strlen(buf);
	/* cd_appendf stops at the cap: a full buffer means something was cut. */
	return len + 1 >= cap ? -ENOSPC : (int)len;
}

static int fail(char *err, size_t errlen, int line, const char *why)
{
	snprintf(err, errlen, "line %d: %s", line, why);
	return -EINVAL;
}

/* "key=value" words after the path. */
static int parse_attrs(char *rest, struct cd_change *c, char *err, size_t errlen, int line)
{
	bool have_token = false, have_mode = false, have_size = false, have_hash = false;
	for (char *save = NULL, *w = strtok_r(rest, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *v = strchr(w, '=');
		if (!v)
			return fail(err, errlen, line, "a word without '='");
		*v++ = '\0';
		char *end;
		if (strcmp(w, "add") == 0 || strcmp(w, "remove") == 0) {
			if (!cd_plan_token_safe(v))
				return fail(err, errlen, line, "not a kernel parameter fix writes");
			c->add = w[0] == 'a';
			snprintf(c->token, sizeof c->token, "%s", v);
			have_token = true;
		} else if (strcmp(w, "mode") == 0) {
			unsigned long m = strtoul(v, &end, 8);
			if (*end || end == v || m > 07777)
				return fail(err, errlen, line, "bad mode");
			c->mode = (unsigned)m;
			have_mode = true;
		} else if (strcmp(w, "size") == 0) {
			c->size = strtoull(v, &end, 10);
			if (*end || end == v || v[0] == '-')
				return fail(err, errlen, line, "bad size");
			have_size = true;
		} else if (strcmp(w, "fnv") == 0) {
			c->hash = strtoull(v, &end, 16);
			if (*end || end - v != 16)
				return fail(err, errlen, line, "bad hash");
			have_hash = true;
		} else if (strcmp(w, "backup") == 0) {
			if (!cd_record_path_ok(v))
				return fail(err, errlen, line, "bad backup path");
			snprintf(c->backup, sizeof c->backup, "%s", v);
		} else {
			return fail(err, errlen, line, "unknown attribute");
		}
	}
	switch (c->kind) {
	case CD_CH_FILE:
		if (!have_token || !have_mode || !have_size || !have_hash)
			return fail(err, errlen, line, "a file line needs mode, size, fnv and add/remove");
		break;
	case CD_CH_GRUBBY:
		if (!have_token)
			return fail(err, errlen, line, "a grubby line needs add/remove");
		break;
	case CD_CH_REPLACED:
		if (!c->backup[0] || !have_mode || !have_size || !have_hash || have_token)
			return fail(err, errlen, line, "a replaced line needs backup, mode, size and fnv");
		break;
	default:
		if (have_token || have_mode || have_size || have_hash || c->backup[0])
			return fail(err, errlen, line, "unexpected attribute");
		break;
	}
	return 0;
}

/* A change line, its word (kind) split from the rest (v: the path, then
 * the attributes): appended to r.  0, or -EINVAL with why in err. */
static int parse_change(const char *kind, char *v, struct cd_record *r, char *err, size_t errlen, int line)
{
	static const enum cd_change_kind kinds[] = { CD_CH_MKDIR, CD_CH_FILE, CD_CH_REPLACED,
	                                             CD_CH_GRUBBY, CD_CH_BACKUP };
	int k = -1;
	for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++)
		if (strcmp(kind, kind_word(kinds[i])) == 0)
			k = i;
	if (k < 0)
		return fail(err, errlen, line, "unknown line");
	if (r->n >= CD_RECORD_MAX_CHANGES)
		return fail(err, errlen, line, "too many changes");
	struct cd_change *c = &r->ch[r->n++];
	c->kind = kinds[k];
	char *rest = v;
	if (c->kind != CD_CH_GRUBBY) {
		char *end = strchr(v, ' ');
		if (end)
			*end = '\0';
		if (!cd_record_path_ok(v))
			return fail(err, errlen, line, "a path that is not plainly under the root");
		snprintf(c->path, sizeof c->path, "%s", v);
		rest = end ? end + 1 : v + strlen(v);
	}
	return parse_attrs(rest, c, err, errlen, line);
}

/* Whether path is one of the folders fix creates, or a parent of one. */
static bool fix_folder(const char *path)
{
	static const char *const made[] = { GRUB_D, CD_RECORD_DIR };
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
		if (strncmp(made[i], path, n) == 0 && (made[i][n] == '\0' || made[i][n] == '/'))
			return true;
	return false;
}

/* Whether change i is what fix writes (see the top of this file): 0, or
 * -EINVAL with why. */
static int change_is_fixs(const struct cd_record *r, int i, char *err, size_t errlen)
{
	const struct cd_change *c = &r->ch[i];
	bool debian = strcmp(r->family, "debian") == 0;
	struct cd_dropin d;
	char want[CD_REL_MAX + 32];
	switch (c->kind) {
	case CD_CH_MKDIR:
		if (!fix_folder(c->path))
			return fail(err, errlen, i + 1, "a folder fix does not create");
		return 0;
	case CD_CH_FILE:
		if (!debian)
			return fail(err, errlen, i + 1, "a drop-in in a record of the Red Hat family");
		(c->add ? cd_dropin_add : cd_dropin_remove)(&d, c->token);
		if (strcmp(d.path, c->path) != 0)
			return fail(err, errlen, i + 1, "not the drop-in fix writes for that parameter");
		if (c->mode != 0644 || c->size != strlen(d.content) || c->hash != cd_fnv1a64(d.content, strlen(d.content)))
			return fail(err, errlen, i + 1, "not the content fix writes for that parameter");
		return 0;
	case CD_CH_REPLACED:
		snprintf(want, sizeof want, "%s" CD_BACKUP_SUFFIX, c->path);
		if (strcmp(c->backup, want) != 0)
			return fail(err, errlen, i + 1, "a backup that is not the drop-in's own name + " CD_BACKUP_SUFFIX);
		for (int j = i + 1; j < r->n; j++)
			if (r->ch[j].kind == CD_CH_FILE && strcmp(r->ch[j].path, c->path) == 0)
				return 0;
		return fail(err, errlen, i + 1, "a file set aside for no drop-in");
	case CD_CH_BACKUP:
		snprintf(want, sizeof want, CD_RECORD_DIR "/backup-%lld", r->created);
		if (debian || strcmp(c->path, want) != 0)
			return fail(err, errlen, i + 1, "not the backup folder fix makes");
		return 0;
	case CD_CH_GRUBBY:
		return debian ? fail(err, errlen, i + 1, "grubby in a record of Debian") : 0;
	}
	return fail(err, errlen, i + 1, "unknown change");
}

/* The record as a whole is what fix writes.  Line numbers in why count the
 * changes (the header's lines aside). */
static int record_is_fixs(const struct cd_record *r, char *err, size_t errlen)
{
	for (int i = 0; i < r->n; i++) {
		int rc = change_is_fixs(r, i, err, errlen);
		if (rc < 0) {
			char why[200];
			snprintf(why, sizeof why, "%s", err);
			snprintf(err, errlen, "change %s", why + 5);   /* "line N: ..." -> "change N: ..." */
			return rc;
		}
	}
	return 0;
}

int cd_record_parse(const char *text, struct cd_record *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	size_t len = strlen(text);
	char *copy = malloc(len + 1);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, text, len + 1);
	int rc = 0, line = 0;
	bool have_created = false, have_family = false, have_state = false;
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
		line++;
		if (line == 1) {
			if (strcmp(l, HEADER) != 0)
				rc = fail(err, errlen, line, "not a clockdoctor fix record (version 1)");
			continue;
		}
		char *sp = strchr(l, ' ');
		if (!sp) {
			rc = fail(err, errlen, line, "a line without a value");
			break;
		}
		*sp = '\0';
		char *v = sp + 1;
		if (strcmp(l, "created") == 0) {
			char *end;
			r->created = strtoll(v, &end, 10);
			have_created = *end == '\0' && end != v;
			if (!have_created)
				rc = fail(err, errlen, line, "bad time");
			continue;
		}
		if (strcmp(l, "family") == 0) {
			if (strcmp(v, "debian") != 0 && strcmp(v, "redhat") != 0)
				rc = fail(err, errlen, line, "unknown family");
			snprintf(r->family, sizeof r->family, "%s", v);
			have_family = true;
			continue;
		}
		if (strcmp(l, "state") == 0) {
			if (strcmp(v, "pending") != 0 && strcmp(v, "done") != 0)
				rc = fail(err, errlen, line, "unknown state");
			r->done = strcmp(v, "done") == 0;
			have_state = true;
			continue;
		}
		if (strcmp(l, "regen") == 0) {
			if (strcmp(v, "update-grub") != 0)
				rc = fail(err, errlen, line, "unknown regeneration command");
			snprintf(r->regen, sizeof r->regen, "%s", v);
			continue;
		}
		rc = parse_change(l, v, r, err, errlen, line);
	}
	if (rc == 0 && line == 0)
		rc = fail(err, errlen, 1, "empty");
	if (rc == 0 && (!have_created || !have_family))
		rc = fail(err, errlen, line, "created or family missing");
	if (rc == 0 && !have_state)
		r->done = true;   /* a record of an earlier version: written when done */
	if (rc == 0)
		rc = record_is_fixs(r, err, errlen);
	free(copy);
	return rc;
}
