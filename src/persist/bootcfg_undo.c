/* SPDX-License-Identifier: MIT */
/*
 * bootcfg_undo.c: fix --undo: taking back exactly what the record lists,
 * newest first (persist.h).  Each line of the record is read as "make sure
 * this is gone": a file already gone, a folder already removed, is no
 * error, so that undo finishes a run cut short, and running it again
 * finishes an undo cut short.
 */
#include "persist/bootcfg_impl.h"
#include "util/atomicfile.h"
#include "util/fsread.h"
#include "util/shellquote.h"
#include "util/spawn.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

/* Take one FILE change back: remove it when it is as written, else set it
 * aside (it was edited since: someone's work is in it). */
static int undo_file(const char *root, const char *in, const struct cd_change *c, struct cd_steps *out)
{
	char p[PATH_MAX];
	int rc = cd_root_path(p, sizeof p, root, c->path);
	if (rc)
		return rc;
	struct stat st;
	if (lstat(p, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		cd_step(out, "%s%s: gone already", in, c->path);
		return 0;
	}
	size_t len = 0;
	int err, trunc;
	char *text = S_ISREG(st.st_mode) ? cd_read_file(root, c->path, 1 << 20, &len, &err, &trunc) : NULL;
	bool same = text && len == c->size && cd_fnv1a64(text, len) == c->hash;
	free(text);
	if (same) {
		if (unlink(p) != 0)
			return -errno;
		cd_sync_parent(p);
		cd_step(out, "removed %s%s", in, c->path);
		return 0;
	}
	char aside[PATH_MAX + 40];
	snprintf(aside, sizeof aside, "%s.clockdoctor-edited", p);
	for (int i = 1; i < 100 && access(aside, F_OK) == 0; i++)
		snprintf(aside, sizeof aside, "%s.clockdoctor-edited.%d", p, i);
	if (rename(p, aside) != 0)
		return -errno;
	cd_step(out, "%s%s was changed since fix wrote it: moved aside to %s (not deleted)", in, c->path, aside);
	return 0;
}

static int undo_one(const char *root, bool live, const struct cd_change *c, struct cd_steps *out)
{
	const char *in = live ? "" : root;
	char p[PATH_MAX], b[PATH_MAX];
	int rc;
	switch (c->kind) {
	case CD_CH_FILE:
		return undo_file(root, in, c, out);
	case CD_CH_REPLACED:
		if ((rc = cd_root_path(p, sizeof p, root, c->path)) || (rc = cd_root_path(b, sizeof b, root, c->backup)))
			return rc;
		if (access(b, F_OK) != 0) {
			cd_step(out, "%s%s: no backup to put back (gone already)", in, c->backup);
			return 0;
		}
		if (rename(b, p) != 0)
			return -errno;
		cd_step(out, "put back %s%s (the file fix had set aside)", in, c->path);
		return 0;
	case CD_CH_BACKUP:
		if ((rc = cd_root_path(p, sizeof p, root, c->path)))
			return rc;
		if (nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
			return -errno;
		cd_step(out, "removed the backup copies %s%s", in, c->path);
		return 0;
	case CD_CH_GRUBBY:
		if (!live) {
			char arg[CD_NAME_MAX * 2 + 20], *argv[4];
			cd_grubby_argv(arg, sizeof arg, argv, c->token, !c->add);
			cd_step(out, "cannot undo under --root: grubby --update-kernel=ALL %s (on the machine itself)", arg);
			return -ENOTSUP;
		}
		return cd_grubby_run(c->token, !c->add, out);
	case CD_CH_MKDIR:
		if ((rc = cd_root_path(p, sizeof p, root, c->path)))
			return rc;
		if (rmdir(p) == 0)
			cd_step(out, "removed the folder %s%s", in, c->path);
		else if (errno == ENOTEMPTY || errno == EEXIST)
			cd_step(out, "left the folder %s%s: something else is in it now", in, c->path);
		else if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		return 0;
	}
	return -EINVAL;
}

/* Every change but the folders, newest first; then the boot configuration;
 * then the record; then the folders, innermost first. */
int cd_persist_undo_record(const char *root, const struct cd_record *r, bool remove_record, struct cd_steps *out)
{
	bool live = strcmp(root, "/") == 0;
	bool files = false;
	for (int i = r->n - 1; i >= 0; i--) {
		const struct cd_change *c = &r->ch[i];
		if (c->kind == CD_CH_MKDIR)
			continue;
		files |= c->kind == CD_CH_FILE || c->kind == CD_CH_REPLACED;
		int rc = undo_one(root, live, c, out);
		if (rc < 0) {
			cd_step(out, "could not undo %s: %s; the record stays: run fix --undo again",
			        c->kind == CD_CH_GRUBBY ? c->token : c->path, strerror(-rc));
			return rc;
		}
	}
	if (files && strcmp(r->regen, "update-grub") == 0) {
		if (!live) {
			char q[PATH_MAX * 4 + 3];
			cd_step(out, "not run under --root: chroot %s update-grub",
			        cd_shell_word_or(q, sizeof q, root, "TREE"));
		} else {
			char *argv[] = { "update-grub", NULL };
			cd_step(out, "$ update-grub");
			int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
			/* Without update-grub there is nothing to regenerate: the files
			 * being back is all undo can do. */
			if (st == -ENOENT)
				cd_step(out, "update-grub is not installed: nothing to regenerate");
			else if (st != 0) {
				cd_step(out, "update-grub failed: the files are back as they were, but the boot "
				        "configuration is not regenerated; run it by hand");
				return -ECANCELED;
			}
		}
	}
	if (remove_record) {
		char p[PATH_MAX];
		int rc = cd_root_path(p, sizeof p, root, CD_RECORD_PATH);
		if (rc == 0 && unlink(p) != 0 && errno != ENOENT)
			rc = -errno;
		if (rc < 0)
			return rc;
		cd_step(out, "removed the record %s%s", live ? "" : root, CD_RECORD_PATH);
	}
	for (int i = r->n - 1; i >= 0; i--) {
		if (r->ch[i].kind != CD_CH_MKDIR)
			continue;
		int rc = undo_one(root, live, &r->ch[i], out);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int cd_persist_undo(const char *root, bool *had_record, struct cd_steps *out)
{
	const char *in = strcmp(root, "/") == 0 ? "" : root;
	*had_record = false;
	struct cd_record *r = calloc(1, sizeof *r);
	char why[200];
	int rc = !r ? -ENOMEM : cd_persist_read_record(root, r, why, sizeof why);
	if (rc == -ENOENT) {
		cd_step(out, "nothing to undo: no record at %s%s", in, CD_RECORD_PATH);
		free(r);
		return 0;
	}
	*had_record = rc != -ENOMEM;
	if (rc == -EINVAL)
		cd_step(out, "the record %s%s is not one fix wrote (%s): nothing undone; look at it by hand",
		        in, CD_RECORD_PATH, why);
	else if (rc < 0 && rc != -ENOMEM)
		cd_step(out, "cannot read %s%s: %s", in, CD_RECORD_PATH, why);
	if (rc == 0)
		rc = cd_persist_undo_record(root, r, true, out);
	free(r);
	return rc;
}
