/* SPDX-License-Identifier: MIT */
/*
 * grubdropin.c: Debian's and Ubuntu's way of changing the kernel command
 * line for good: a drop-in in /etc/default/grub.d/ per parameter, which
 * grub-mkconfig (update-grub) sources after /etc/default/grub, so that the
 * operator's own file is never touched (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"
#include "diagnose/fixes.h"

#include <stdio.h>
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

void cd_dropin_new_name(char *out, size_t cap, const char *path)
{
	const char *slash = strrchr(path, '/');
	snprintf(out, cap, "%.*s/.%s" CD_NEW_SUFFIX, (int)(slash - path), path, slash + 1);
}
