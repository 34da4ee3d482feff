/* SPDX-License-Identifier: MIT */
/*
 * grubcmdline.c: the kernel command line as GRUB assembles it
 * (bootcfg_impl.h).  grub-mkconfig sources /etc/default/grub, then every
 * /etc/default/grub.d/NAME.cfg in the order of the names, with /bin/sh: each
 * may set GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT anew or extend
 * them.  The files are read here, never run (a tree's files are anyone's):
 * an assignment is judged by its text, conservatively.  A file after our
 * drop-in that assigns the variable we extend without "$VARIABLE" in the
 * value overrides us (unless it names the parameter itself); one that
 * names a parameter we remove puts it back.
 */
#include "persist/bootcfg_impl.h"
#include "util/beneath.h"
#include "util/printable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GRUB_FILE_MAX (1u << 20)
#define CFG_MAX 256

/* Whether token appears as a word in text (blank, quote or '=' around it). */
static bool has_word(const char *text, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = text; (p = strstr(p, token)) != NULL; p++) {
		char before = p == text ? ' ' : p[-1], after = p[n];
		if (strchr(" \t\"'\n", before) && (after == '\0' || strchr(" \t\"'\n", after)))
			return true;
	}
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of grub.d's *.cfg files, sorted as the shell's glob sorts them
 * in the C locale (a hidden name is not matched by "*"): how many (at most
 * CFG_MAX), each malloc'd into names. */
static int cfg_names(int rootfd, char *names[CFG_MAX])
{
	int fd = cd_beneath_open(rootfd, GRUB_D, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int n = 0;
	for (struct dirent *e; n < CFG_MAX && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] != '.' && l > 4 && strcmp(e->d_name + l - 4, ".cfg") == 0 &&
		    (names[n] = strdup(e->d_name)) != NULL)
			n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], by_name);
	return n;
}

static char *read_cfg(int rootfd, const char *name)
{
	char rel[CD_REL_MAX + 256];
	size_t len;
	int err;
	snprintf(rel, sizeof rel, GRUB_D "/%s", name);
	char *text = cd_tree_read(rootfd, rel, true, GRUB_FILE_MAX, &len, &err);
	if (text && strlen(text) != len) {   /* a NUL inside: not a shell file */
		free(text);
		text = NULL;
	}
	return text;
}

/* Another value of token's key as a word of text ("clocksource=hpet" when
 * token is "clocksource=acpi_pm"), copied into found: true when there is. */
static bool other_value(const char *text, const char *token, char *found, size_t cap)
{
	size_t klen = strcspn(token, "=");
	if (!token[klen])
		return false;
	for (const char *p = text; *p;) {
		p += strspn(p, " \t\"'\n");
		size_t wlen = strcspn(p, " \t\"'\n");
		if (wlen > klen && strncmp(p, token, klen + 1) == 0 && (wlen != strlen(token) || strncmp(p, token, wlen) != 0)) {
			snprintf(found, cap, "%.*s", (int)wlen, p);
			return true;
		}
		p += wlen;
	}
	return false;
}

/* /etc/default/grub, then each drop-in not fix's: the first for which
 * match(text) holds. */
static bool config_matches(int rootfd, const char *token, char *found, size_t cap,
                           bool (*match)(const char *text, const char *token, char *found, size_t cap))
{
	size_t len;
	int err;
	char *text = cd_tree_read(rootfd, GRUB_DEFAULT, true, GRUB_FILE_MAX, &len, &err);
	bool hit = text && match(text, token, found, cap);
	free(text);
	char *names[CFG_MAX];
	int n = cfg_names(rootfd, names);
	for (int i = 0; i < n; i++) {
		if (!hit && strncmp(names[i], "90-clockdoctor-", 15) != 0) {
			text = read_cfg(rootfd, names[i]);
			hit = text && match(text, token, found, cap);
			free(text);
		}
		free(names[i]);
	}
	return hit;
}

static bool has_word_match(const char *text, const char *token, char *found, size_t cap)
{
	(void)found;
	(void)cap;
	return has_word(text, token);
}

bool cd_grub_config_has(int rootfd, const char *token)
{
	return config_matches(rootfd, token, NULL, 0, has_word_match);
}

bool cd_grub_config_other_value(int rootfd, const char *token, char *found, size_t cap)
{
	bool hit = config_matches(rootfd, token, found, cap, other_value);
	if (hit)
		cd_printable(found);   /* a word of the tree's */
	return hit;
}

/* The value of an assignment to var on line (blanks and "export" before
 * it), or NULL when the line assigns something else. */
static const char *assigned(const char *line, const char *var)
{
	line += strspn(line, " \t");
	if (strncmp(line, "export", 6) == 0 && (line[6] == ' ' || line[6] == '\t'))
		line += 6 + strspn(line + 6, " \t");
	size_t n = strlen(var);
	return strncmp(line, var, n) == 0 && line[n] == '=' ? line + n + 1 : NULL;
}

/* Whether value refers to var's own value ("$VAR" or "${VAR}"). */
static bool keeps(const char *value, const char *var)
{
	size_t n = strlen(var);
	for (const char *p = value; (p = strchr(p, '$')) != NULL; p++) {
		const char *v = p[1] == '{' ? p + 2 : p + 1;
		if (strncmp(v, var, n) != 0)
			continue;
		char after = v[n];
		if (p[1] == '{' ? after == '}' : !(after == '_' || (after >= 'A' && after <= 'Z') ||
		                                   (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9')))
			return true;
	}
	return false;
}

/* Whether the text of file name (after the drop-in d) undoes d: 1 with why. */
static int undoes(const char *text, const char *name, const struct cd_dropin *d, char *why, size_t whylen)
{
	static const char *const vars[] = { "GRUB_CMDLINE_LINUX_DEFAULT", "GRUB_CMDLINE_LINUX" };
	const char *dname = strrchr(d->path, '/') + 1;
	int lineno = 0;
	for (const char *l = text; *l; lineno++) {
		size_t len = strcspn(l, "\n");
		char line[4096];
		snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
		l += len + (l[len] == '\n');
		for (int v = 0; v < 2; v++) {
			const char *value = assigned(line, vars[v]);
			if (!value)
				continue;
			/* Adding: only GRUB_CMDLINE_LINUX_DEFAULT carries it. */
			if (d->add && v == 0 && !keeps(value, vars[v]) && !has_word(value, d->token)) {
				snprintf(why, whylen, "%s/%s (line %d) sets %s anew after %s, without keeping its "
				         "value: %s would not reach the kernel command line. Add %s to that line "
				         "instead (by hand), or move that file before %s", GRUB_D, name, lineno + 1,
				         vars[v], dname, d->token, d->token, dname);
				return 1;
			}
			if (!d->add && has_word(value, d->token)) {
				snprintf(why, whylen, "%s/%s (line %d) puts %s back on %s after %s removes it: "
				         "remove it from that file by hand", GRUB_D, name, lineno + 1, d->token, vars[v],
				         dname);
				return 1;
			}
		}
	}
	return 0;
}

int cd_grub_overridden(int rootfd, const struct cd_dropin *d, char *why, size_t whylen)
{
	const char *dname = strrchr(d->path, '/') + 1;
	char *names[CFG_MAX];
	int n = cfg_names(rootfd, names), found = 0;
	for (int i = 0; i < n; i++) {
		if (!found && strcmp(names[i], dname) > 0) {
			char *text = read_cfg(rootfd, names[i]);
			found = text ? undoes(text, names[i], d, why, whylen) : 0;
			free(text);
		}
		free(names[i]);
	}
	if (found)
		cd_printable(why);   /* a file name of the tree's */
	return found;
}
