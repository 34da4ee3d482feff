/* SPDX-License-Identifier: MIT */
/*
 * bootcfg_undo.c: fix --undo: taking back exactly what the record lists,
 * newest first (persist.h).  Every file is checked before anything is
 * changed: the record's set-aside files must hash as recorded, a drop-in's
 * temporary file must hold the start of what fix writes; anything else and
 * nothing is undone.  Each line of the record is then read as "make sure
 * this is gone": a file already gone, a folder already removed, is no
 * error, so that undo finishes a run cut short, and running it again
 * finishes an undo cut short.  The record goes last, with the folders made
 * for it, in one rename.
 */
#include "persist/bootcfg_impl.h"
#include "util/shellquote.h"
#include "util/beneath.h"
#include "util/printable.h"
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The content fix writes for a FILE change (the parser checked the path and
 * hash against it). */
static void dropin_of(const struct cd_change *c, struct cd_dropin *d)
{
	memset(d, 0, sizeof *d);
	(c->add ? cd_dropin_add : cd_dropin_remove)(d, c->token);
}

/* The change that sets aside a file at c's path, or NULL. */
static const struct cd_change *replaced_of(const struct cd_record *r, const char *path)
{
	for (int i = 0; i < r->n; i++)
		if (r->ch[i].kind == CD_CH_REPLACED && strcmp(r->ch[i].path, path) == 0)
			return &r->ch[i];
	return NULL;
}

/* rel as a plain file whose size and hash are as recorded: 1, 0 when it
 * is something else, -ENOENT when absent, -errno. */
static int file_is(int rootfd, const char *rel, unsigned long long size, uint64_t hash)
{
	struct stat st;
	int rc = cd_tree_lstat(rootfd, rel, &st);
	if (rc < 0)
		return rc == -ENOTDIR ? -ENOENT : rc;
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size != size)
		return 0;
	size_t len;
	int err;
	char *text = cd_tree_read(rootfd, rel, false, (size_t)size, &len, &err);
	int same = text && len == size && cd_fnv1a64(text, len) == hash;
	free(text);
	return text ? same : err == -ENOENT ? -ENOENT : 0;
}

/* A drop-in's temporary file: absent (-ENOENT), or a plain file holding the
 * start of what fix writes (1), or something else (0). */
static int tmp_is_ours(int rootfd, const char *tmp, const char *content)
{
	struct stat st;
	int rc = cd_tree_lstat(rootfd, tmp, &st);
	if (rc < 0)
		return rc == -ENOTDIR ? -ENOENT : rc;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > strlen(content))
		return 0;
	size_t len;
	int err;
	char *text = cd_tree_read(rootfd, tmp, false, strlen(content), &len, &err);
	int ours = text && memcmp(text, content, len) == 0;
	free(text);
	return ours;
}

/* Before anything is changed: every file the record would have undo put
 * back or remove is what fix left there.  0, or -EINVAL with why said. */
static int check_change(int rootfd, const char *in, const struct cd_change *c, struct cd_steps *out)
{
	char tmp[CD_REL_MAX + 32];
	struct cd_dropin d;
	struct stat st;
	int rc;
	switch (c->kind) {
	case CD_CH_FILE:
		dropin_of(c, &d);
		cd_dropin_new_name(tmp, sizeof tmp, c->path);
		rc = tmp_is_ours(rootfd, tmp, d.content);
		if (rc == 0)
			cd_step(out, "%s%s is not the drop-in fix was writing: nothing undone; look at it by hand", in, tmp);
		break;
	case CD_CH_REPLACED:
		rc = file_is(rootfd, c->backup, c->size, c->hash);
		if (rc == 0)
			cd_step(out, "%s%s is not the file fix set aside (its size or hash differs from the "
			        "record's): nothing undone; look at it by hand", in, c->backup);
		break;
	case CD_CH_BACKUP:
		rc = cd_tree_lstat(rootfd, c->path, &st);
		if (rc == 0 && !S_ISDIR(st.st_mode)) {
			cd_step(out, "%s%s is not the folder of copies fix made: nothing undone", in, c->path);
			return -EINVAL;
		}
		break;
	default:
		return 0;
	}
	if (rc < 0 && rc != -ENOENT) {
		cd_step(out, "cannot look at %s%s: %s; nothing undone", in,
		        c->kind == CD_CH_REPLACED ? c->backup : c->path, cd_tree_strerror(rc));
		return rc;
	}
	return rc == 0 ? -EINVAL : 0;
}

/* A free name to move an edited file aside to: PATH.clockdoctor-edited[.N]. */
static int aside_name(int rootfd, const char *path, char *aside, size_t cap)
{
	snprintf(aside, cap, "%s.clockdoctor-edited", path);
	for (int i = 1; i < 100 && cd_tree_exists(rootfd, aside); i++)
		snprintf(aside, cap, "%s.clockdoctor-edited.%d", path, i);
	return cd_tree_exists(rootfd, aside) ? -EEXIST : 0;
}

/* Take one FILE change back: its temporary file removed; the drop-in
 * removed when it is as written (or the file fix set aside put back over
 * it in one rename), else set aside (it was edited since: someone's work
 * is in it); the file fix set aside, not yet replaced, left as it is. */
static int undo_file(int rootfd, const char *in, const struct cd_record *r, const struct cd_change *c,
                     struct cd_steps *out)
{
	struct cd_dropin d;
	char tmp[CD_REL_MAX + 32], aside[CD_REL_MAX + 48];
	dropin_of(c, &d);
	cd_dropin_new_name(tmp, sizeof tmp, c->path);
	int rc = tmp_is_ours(rootfd, tmp, d.content);
	if (rc == 1 && (rc = cd_tree_remove(rootfd, tmp, false)) == 0)
		cd_step(out, "removed %s%s (a drop-in not finished)", in, tmp);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	/* The file fix sets aside still at its name (the drop-in was never
	 * written), or put back there by an undo cut short: REPLACED's. */
	const struct cd_change *rep = replaced_of(r, c->path);
	if (rep && file_is(rootfd, c->path, rep->size, rep->hash) == 1)
		return 0;
	rc = file_is(rootfd, c->path, c->size, c->hash);
	if (rc == -ENOENT) {
		cd_step(out, "%s%s: gone already", in, c->path);
		return 0;
	}
	if (rc < 0)
		return rc;
	if (rc == 1) {
		bool back = rep && file_is(rootfd, rep->backup, rep->size, rep->hash) == 1;
		rc = back ? cd_tree_rename(rootfd, rep->backup, c->path, 0) : cd_tree_remove(rootfd, c->path, false);
		if (rc == 0 && back)
			cd_step(out, "put back %s%s (the file fix had set aside) in place of its drop-in", in, c->path);
		else if (rc == 0)
			cd_step(out, "removed %s%s", in, c->path);
		return rc;
	}
	if ((rc = aside_name(rootfd, c->path, aside, sizeof aside)) < 0 ||
	    (rc = cd_tree_rename(rootfd, c->path, aside, RENAME_NOREPLACE)) < 0)
		return rc;
	cd_step(out, "%s%s was changed since fix wrote it: moved aside to %s%s (not deleted)", in, c->path, in, aside);
	return 0;
}

/* Take one REPLACED change back: the file set aside put back at its name,
 * or, when it never left it, its second name removed. */
static int undo_replaced(int rootfd, const char *in, const struct cd_change *c, struct cd_steps *out)
{
	if (!cd_tree_exists(rootfd, c->backup)) {
		cd_step(out, "%s%s: in place (nothing set aside)", in, c->path);
		return 0;
	}
	if (file_is(rootfd, c->path, c->size, c->hash) == 1) {
		/* A second name (or a copy) of the file, which stayed at its own. */
		int rc = cd_tree_remove(rootfd, c->backup, false);
		if (rc == 0)
			cd_step(out, "removed %s%s: %s%s stayed in place", in, c->backup, in, c->path);
		return rc;
	}
	int rc = cd_tree_rename(rootfd, c->backup, c->path, RENAME_NOREPLACE);
	if (rc == 0)
		cd_step(out, "put back %s%s (the file fix had set aside)", in, c->path);
	else if (rc == -EEXIST)
		cd_step(out, "%s%s is there again, and is not the file fix set aside: left both it and %s%s",
		        in, c->path, in, c->backup);
	return rc;
}

static int undo_one(int rootfd, bool live, const char *in, const struct cd_record *r, const struct cd_change *c,
                    struct cd_steps *out)
{
	int rc;
	switch (c->kind) {
	case CD_CH_FILE:
		return undo_file(rootfd, in, r, c, out);
	case CD_CH_REPLACED:
		return undo_replaced(rootfd, in, c, out);
	case CD_CH_BACKUP:
		if ((rc = cd_grubby_backup_remove(rootfd, c->path)) == 0)
			cd_step(out, "removed the backup copies %s%s", in, c->path);
		return rc;
	case CD_CH_GRUBBY:
		if (!live) {
			char arg[CD_NAME_MAX * 2 + 20], *argv[4];
			cd_grubby_argv(arg, sizeof arg, argv, c->token, !c->add);
			cd_step(out, "cannot undo under --root: grubby --update-kernel=ALL %s (on the machine itself)", arg);
			return -ENOTSUP;
		}
		return cd_grubby_run(c->token, !c->add, out);
	case CD_CH_MKDIR:
		rc = cd_tree_remove(rootfd, c->path, true);
		if (rc == 0)
			cd_step(out, "removed the folder %s%s", in, c->path);
		else if (rc == -ENOTEMPTY || rc == -EEXIST)
			cd_step(out, "left the folder %s%s: something else is in it now", in, c->path);
		else if (rc != -ENOENT && rc != -ENOTDIR)
			return rc;
		return 0;
	}
	return -EINVAL;
}

/* update-grub after the files are back, on the machine itself. */
static int regenerate(bool live, const char *in, struct cd_steps *out)
{
	if (!live) {
		char q[PATH_MAX * 4 + 3];
		cd_step(out, "not run under --root: chroot %s update-grub", cd_shell_word_or(q, sizeof q, in, "TREE"));
		return 0;
	}
	char *argv[] = { "update-grub", NULL };
	cd_step(out, "$ update-grub");
	int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
	/* Without update-grub there is nothing to regenerate: the files being
	 * back is all undo can do. */
	if (st == -ENOENT)
		cd_step(out, "update-grub is not installed: nothing to regenerate");
	else if (st != 0) {
		cd_step(out, "update-grub failed: the files are back as they were, but the boot configuration "
		        "is not regenerated; run it by hand");
		return -ECANCELED;
	}
	return 0;
}

/* Every change but the folders, newest first; then the boot configuration;
 * then the folders, innermost first; then the record with its own. */
int cd_persist_undo_record(int rootfd, bool live, const char *in, const struct cd_record *r, struct cd_steps *out)
{
	for (int i = 0; i < r->n; i++) {
		int rc = check_change(rootfd, in, &r->ch[i], out);
		if (rc < 0)
			return rc;
	}
	bool files = false;
	for (int i = r->n - 1; i >= 0; i--) {
		const struct cd_change *c = &r->ch[i];
		if (c->kind == CD_CH_MKDIR)
			continue;
		files |= c->kind == CD_CH_FILE || c->kind == CD_CH_REPLACED;
		int rc = undo_one(rootfd, live, in, r, c, out);
		if (rc < 0) {
			cd_step(out, "could not undo %s%s: %s; the record stays: run fix --undo again",
			        c->kind == CD_CH_GRUBBY ? "" : in, c->kind == CD_CH_GRUBBY ? c->token : c->path,
			        cd_tree_strerror(rc));
			return rc;
		}
	}
	if (files && strcmp(r->regen, "update-grub") == 0) {
		int rc = regenerate(live, in, out);
		if (rc < 0)
			return rc;
	}
	for (int i = r->n - 1; i >= cd_record_dirs(r); i--) {
		if (r->ch[i].kind != CD_CH_MKDIR)
			continue;
		int rc = undo_one(rootfd, live, in, r, &r->ch[i], out);
		if (rc < 0) {
			cd_step(out, "could not remove the folder %s%s: %s; the record stays: run fix --undo again", in,
			        r->ch[i].path, cd_tree_strerror(rc));
			return rc;
		}
	}
	return cd_record_unpublish(rootfd, r, in, out);
}

static int undo_locked(int rootfd, bool live, const char *in, bool *had_record, struct cd_steps *out)
{
	int left = cd_record_leftovers(rootfd, in, out);
	if (left < 0)
		return left;
	struct cd_record *r = calloc(1, sizeof *r);
	char why[200];
	int rc = !r ? -ENOMEM : cd_persist_read_record(rootfd, r, why, sizeof why);
	if (rc == -ENOENT) {
		*had_record = left > 0;
		cd_step(out, left ? "no record at %s%s: nothing else to undo" : "nothing to undo: no record at %s%s", in,
		        CD_RECORD_PATH);
		free(r);
		return 0;
	}
	*had_record = rc != -ENOMEM;
	if (rc == -EINVAL)
		cd_step(out, "the record %s%s is not one fix wrote (%s): nothing undone; look at it by hand", in,
		        CD_RECORD_PATH, why);
	else if (rc < 0 && rc != -ENOMEM)
		cd_step(out, "cannot read %s%s: %s; nothing undone", in, CD_RECORD_PATH, why);
	if (rc == 0 && !r->done)
		cd_step(out, "the record is of a fix --persist that did not finish: taking back what it did");
	if (rc == 0)
		rc = cd_persist_undo_record(rootfd, live, in, r, out);
	free(r);
	return rc;
}

int cd_persist_undo(const char *root, bool *had_record, struct cd_steps *out)
{
	bool live = strcmp(root, "/") == 0;
	const char *in = live ? "" : root;
	*had_record = false;
	int rootfd = cd_root_open(root);
	if (rootfd < 0) {
		cd_step(out, "cannot open the root folder %s: %s; nothing undone", root, strerror(-rootfd));
		return rootfd;
	}
	int lock = cd_persist_lock(rootfd, live, out);
	int rc = lock < 0 ? lock : undo_locked(rootfd, live, in, had_record, out);
	cd_persist_unlock(lock);
	close(rootfd);
	return rc;
}

int cd_persist_describe_undo(const char *root, struct cd_steps *out)
{
	const char *in = strcmp(root, "/") == 0 ? "" : root;
	int rootfd = cd_root_open(root);
	size_t len;
	int err = rootfd;
	char *text = rootfd >= 0 ? cd_tree_read(rootfd, CD_RECORD_PATH, false, 65536, &len, &err) : NULL;
	if (rootfd >= 0)
		close(rootfd);
	if (!text && (err == -ENOENT || err == -ENOTDIR))
		cd_step(out, "nothing to undo: no record at %s%s", in, CD_RECORD_PATH);
	else if (!text)
		cd_step(out, "cannot read %s%s: %s", in, CD_RECORD_PATH, cd_tree_strerror(err));
	else
		cd_step(out, "would take back what %s%s records:", in, CD_RECORD_PATH);
	for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		cd_printable(l);   /* a tree's record may hold anything */
		cd_step(out, "    %s", l);
	}
	free(text);
	return text || err == -ENOENT || err == -ENOTDIR ? 0 : err;
}
