/* SPDX-License-Identifier: MIT */
/*
 * grubdropin.c: Debian's and Ubuntu's way of changing the kernel command
 * line for good: a drop-in in /etc/default/grub.d/ per parameter, which
 * grub-mkconfig (update-grub) sources after /etc/default/grub, so that the
 * operator's own file is never touched (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"
#include "diagnose/fixes.h"
#include "util/fsread.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cd_dropin_add(struct cd_dropin *d, const char *token)
{
	char name[128];
	cd_fix_dropin_name(name, sizeof name, token);
	snprintf(d->path, sizeof d->path, GRUB_D "/%s", name);
	snprintf(d->content, sizeof d->content,
	         "# Written by `clockdoctor fix --persist`: adds %s to the kernel\n"
	         "# command line.  `clockdoctor fix --undo` removes this file.\n"
	         "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT %s\"\n",
	         token, token);
}

/* Removing a word in portable sh: grub-mkconfig sources drop-ins with
 * /bin/sh, which may be dash.  set -f inside the command substitution (a
 * subshell) keeps a parameter like "x=*" from globbing, and leaks nowhere. */
void cd_dropin_remove(struct cd_dropin *d, const char *token)
{
	char name[128], what[CD_NAME_MAX * 2 + 8];
	snprintf(what, sizeof what, "remove-%s", token);
	cd_fix_dropin_name(name, sizeof name, what);
	snprintf(d->path, sizeof d->path, GRUB_D "/%s", name);
	snprintf(d->content, sizeof d->content,
	         "# Written by `clockdoctor fix --persist`: removes %s from the\n"
	         "# kernel command line that /etc/default/grub and the drop-ins before\n"
	         "# this one set.  `clockdoctor fix --undo` removes this file.\n"
	         "clockdoctor_drop() {\n"
	         "\tset -f\n"
	         "\tclockdoctor_kept=\n"
	         "\tfor clockdoctor_w in $1; do\n"
	         "\t\t[ \"$clockdoctor_w\" = \"$2\" ] || clockdoctor_kept=\"$clockdoctor_kept${clockdoctor_kept:+ }$clockdoctor_w\"\n"
	         "\tdone\n"
	         "\tprintf '%%s' \"$clockdoctor_kept\"\n"
	         "}\n"
	         "GRUB_CMDLINE_LINUX=\"$(clockdoctor_drop \"$GRUB_CMDLINE_LINUX\" '%s')\"\n"
	         "GRUB_CMDLINE_LINUX_DEFAULT=\"$(clockdoctor_drop \"$GRUB_CMDLINE_LINUX_DEFAULT\" '%s')\"\n"
	         "unset -f clockdoctor_drop\n",
	         token, token, token);
}

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

/* Whether token is in /etc/default/grub or a drop-in (other than ours). */
bool cd_grub_config_has(const char *root, const char *token)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, GRUB_DEFAULT, 1 << 20, &len, &err, &trunc);
	bool found = text && has_word(text, token);
	free(text);
	char dir[PATH_MAX];
	DIR *d = cd_root_path(dir, sizeof dir, root, GRUB_D) == 0 ? opendir(dir) : NULL;
	for (struct dirent *e; !found && d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".cfg") != 0 || strncmp(e->d_name, "90-clockdoctor-", 15) == 0)
			continue;
		char rel[CD_REL_MAX + 256];
		snprintf(rel, sizeof rel, GRUB_D "/%s", e->d_name);
		text = cd_read_file(root, rel, 1 << 20, &len, &err, &trunc);
		found = text && has_word(text, token);
		free(text);
	}
	if (d)
		closedir(d);
	return found;
}
