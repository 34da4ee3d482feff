/* SPDX-License-Identifier: MIT */
/*
 * bootcfg_run.c: fix --persist carried out (persist.h), as a transaction.
 *
 * Under the lock: what a killed run left is removed first (the hidden names
 * of the record's publication; a record still "pending" is taken back
 * whole), and the tree is looked at again.  Then every change is listed in
 * the record, which is put in place whole and synced (with the folders made
 * for it) before the first change is made; each change is made under fixed
 * names (a drop-in is written as .NAME.clockdoctor-new, synced, renamed into
 * place), and the record is marked done at the end.  Undo treats each line
 * as "make sure this is gone" (a file already gone, a folder already
 * removed, is no error).  So a run cut short anywhere is undone by undo, or
 * rolled back by the next --persist, and a run undoes itself when a step
 * fails.
 */
#include "persist/bootcfg_impl.h"
#include "util/shellquote.h"
#include "util/beneath.h"
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct cd_change *change(struct cd_record *r, enum cd_change_kind kind, const char *rel)
{
	if (r->n >= CD_RECORD_MAX_CHANGES)
		return NULL;
	struct cd_change *c = &r->ch[r->n++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	snprintf(c->path, sizeof c->path, "%s", rel);
	return c;
}

/* A MKDIR change for each missing folder of rel and its parents, outermost
 * first. */
static int plan_dirs(struct cd_record *r, int rootfd, const char *rel)
{
	char part[CD_REL_MAX];
	for (const char *p = rel + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		snprintf(part, sizeof part, "%.*s", (int)(p - rel), rel);
		bool listed = false;
		for (int i = 0; i < r->n; i++)
			listed |= r->ch[i].kind == CD_CH_MKDIR && strcmp(r->ch[i].path, part) == 0;
		if (!listed && !cd_tree_exists(rootfd, part) && !change(r, CD_CH_MKDIR, part))
			return -ENOSPC;
		if (*p == '\0')
			return 0;
	}
}

/* ---- listing the changes ---- */

/* Whether rel's folders that exist can be reached beneath the root (none
 * is a link out of it, or not a folder): 0, or -errno with why said. */
static int reachable(const struct cd_persist_job *job, const char *rel, struct cd_steps *out)
{
	char part[CD_REL_MAX];
	for (const char *p = rel + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		snprintf(part, sizeof part, "%.*s", (int)(p - rel), rel);
		int fd = cd_beneath_open(job->rootfd, part, O_RDONLY | O_DIRECTORY, 0);
		if (fd >= 0)
			close(fd);
		else if (fd != -ENOENT) {
			cd_step(out, "cannot use %s%s: %s", job->live ? "" : job->root, part,
			        cd_tree_strerror(fd));
			return fd;
		}
		if (fd < 0 || *p == '\0')
			return 0;
	}
}

/* A file that is not ours at a drop-in's name, to be set aside: a plain
 * file, its mode, size and hash in c; and nothing at the backup's name. */
static int list_replaced(const struct cd_persist_job *job, struct cd_change *c, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	struct stat st;
	size_t len = 0;
	int err = cd_tree_lstat(job->rootfd, c->path, &st);
	char *text = err == 0 && S_ISREG(st.st_mode) ? cd_tree_read(job->rootfd, c->path, false, 16u << 20, &len, &err)
	                                             : NULL;
	if (!text) {
		cd_step(out, "%s%s is in the way and is %s: fix sets aside only a plain file",
		        in, c->path, err < 0 ? cd_tree_strerror(err) : "not a plain file");
		free(text);
		return err < 0 ? err : -EEXIST;
	}
	c->mode = st.st_mode & 07777;
	c->size = len;
	c->hash = cd_fnv1a64(text, len);
	free(text);
	if (cd_tree_exists(job->rootfd, c->backup)) {
		cd_step(out, "%s%s is in the way (fix would keep %s%s there): move it away",
		        in, c->backup, in, c->path);
		return -EEXIST;
	}
	return 0;
}

/* The drop-ins to write (not those there already with this content): the
 * drop-in folder's missing parts the first time, then for each the file
 * that is in its way, set aside, and the drop-in. */
static int list_dropins(const struct cd_persist_job *job, struct cd_record *r, bool *any, struct cd_steps *out)
{
	int rc = 0;
	for (int i = 0; rc == 0 && i < job->n_dropins; i++) {
		const struct cd_dropin *d = &job->dropins[i];
		if (d->present_same)
			continue;
		if (!*any && (rc = reachable(job, GRUB_D, out)) == 0)
			rc = plan_dirs(r, job->rootfd, GRUB_D);
		*any = true;
		struct cd_change *c;
		if (rc == 0 && d->present_other) {
			if (!(c = change(r, CD_CH_REPLACED, d->path)))
				rc = -ENOSPC;
			else {
				snprintf(c->backup, sizeof c->backup, "%s" CD_BACKUP_SUFFIX, d->path);
				rc = list_replaced(job, c, out);
			}
		}
		if (rc == 0 && !(c = change(r, CD_CH_FILE, d->path)))
			rc = -ENOSPC;
		if (rc == 0) {
			c->mode = 0644;
			c->size = strlen(d->content);
			c->hash = cd_fnv1a64(d->content, strlen(d->content));
			c->add = d->add;
			snprintf(c->token, sizeof c->token, "%s", d->token);
		}
	}
	return rc;
}

/* On the machine itself: the backup folder of the files grubby edits, then
 * each grubby call. */
static int list_grubby(const struct cd_persist_job *job, struct cd_record *r, bool *any)
{
	char bdir[CD_REL_MAX];
	snprintf(bdir, sizeof bdir, CD_RECORD_DIR "/backup-%lld", r->created);
	if (!change(r, CD_CH_BACKUP, bdir))
		return -ENOSPC;
	for (int i = 0; i < job->n_grubby; i++) {
		struct cd_change *c = change(r, CD_CH_GRUBBY, "/");
		if (!c)
			return -ENOSPC;
		c->add = job->grubby[i].add;
		snprintf(c->token, sizeof c->token, "%s", job->grubby[i].token);
		*any = true;
	}
	return 0;
}

/* Every change the job makes, in r, before any is made: the record's own
 * missing folders first (the first *record_dirs), then the rest.  *any is
 * false when there is nothing to write.  0, or -errno (-ENOSPC: too many
 * for a record). */
static int list_changes(const struct cd_persist_job *job, struct cd_record *r, int *record_dirs, bool *any,
                        struct cd_steps *out)
{
	int rc = reachable(job, CD_RECORD_DIR, out);
	if (rc == 0)
		rc = plan_dirs(r, job->rootfd, CD_RECORD_DIR);
	*record_dirs = r->n;
	*any = false;
	if (rc == 0)
		rc = list_dropins(job, r, any, out);
	if (rc == 0 && job->n_grubby && job->live)
		rc = list_grubby(job, r, any);
	return rc;
}

/* ---- making them ---- */

/* Whether r sets aside a file at path before writing it. */
static bool replaces(const struct cd_record *r, const char *path)
{
	for (int i = 0; i < r->n; i++)
		if (r->ch[i].kind == CD_CH_REPLACED && strcmp(r->ch[i].path, path) == 0)
			return true;
	return false;
}

/* A drop-in, written whole: its temporary name, synced, renamed into place
 * (over the file set aside when there is one, else never over anything). */
static int write_dropin(const struct cd_persist_job *job, const struct cd_record *r, const struct cd_change *c,
                        const char *content)
{
	char tmp[CD_REL_MAX + 32];
	cd_dropin_new_name(tmp, sizeof tmp, c->path);
	int rc = cd_tree_write_new(job->rootfd, tmp, content, strlen(content), 0644);
	if (rc < 0)
		return rc;   /* nothing of ours there */
	rc = cd_tree_rename(job->rootfd, tmp, c->path, replaces(r, c->path) ? 0 : RENAME_NOREPLACE);
	if (rc < 0)
		cd_tree_remove(job->rootfd, tmp, false);
	return rc;
}

/* One change of the record (not one of its own folders); *d is where the
 * search for the next drop-in's content goes on from. */
static int make_change(const struct cd_persist_job *job, const struct cd_record *r, const struct cd_change *c,
                       int *d, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	int rc = 0;
	switch (c->kind) {
	case CD_CH_MKDIR:
		if ((rc = cd_tree_mkdir(job->rootfd, c->path, 0755)) == 0)
			cd_step(out, "created %s%s", in, c->path);
		break;
	case CD_CH_REPLACED:
		if ((rc = cd_tree_link(job->rootfd, c->path, c->backup)) == 0)
			cd_step(out, "kept %s%s (not written by fix) as %s%s", in, c->path, in, c->backup);
		break;
	case CD_CH_FILE:
		while (*d < job->n_dropins &&
		       (job->dropins[*d].present_same || strcmp(job->dropins[*d].path, c->path) != 0))
			(*d)++;
		if (*d >= job->n_dropins)
			return -EINVAL;
		if ((rc = write_dropin(job, r, c, job->dropins[*d].content)) == 0)
			cd_step(out, "wrote %s%s (%s %s)", in, c->path, c->add ? "adds" : "removes", c->token);
		break;
	case CD_CH_BACKUP:
		if ((rc = cd_grubby_backup(job->rootfd, c->path)) == 0)
			cd_step(out, "copied the files grubby edits into %s%s", in, c->path);
		break;
	case CD_CH_GRUBBY:
		if ((rc = cd_grubby_run(c->token, c->add, out)) != 0)
			cd_step(out, "grubby %s", rc == -ENOENT ? "is not installed" : "failed");
		break;
	}
	return rc;
}

/* The record (with its own folders) in place, then the changes it lists,
 * in order, until one fails, then the record marked done: 0, or the
 * failure's -errno (*published: whether the record got in place). */
static int make_changes(const struct cd_persist_job *job, struct cd_record *r, int record_dirs, bool *published,
                        struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	int rc = cd_record_publish(job->rootfd, r, record_dirs, false, in, out);
	*published = rc == 0;
	if (rc == 0)
		cd_step(out, "wrote the record %s%s, every change below listed in it before it is made", in,
		        CD_RECORD_PATH);
	int d = 0;
	for (int i = record_dirs; rc == 0 && i < r->n; i++) {
		const struct cd_change *c = &r->ch[i];
		rc = make_change(job, r, c, &d, out);
		if (rc < 0)
			cd_step(out, "FAILED at %s%s: %s", c->kind == CD_CH_GRUBBY ? "" : in,
			        c->kind == CD_CH_GRUBBY ? c->token : c->path, cd_tree_strerror(rc));
	}
	if (rc == 0) {
		r->done = true;
		rc = cd_record_publish(job->rootfd, r, 0, true, in, out);
	}
	return rc;
}

/* The boot configuration regenerated from the drop-ins written (update-
 * grub), or under --root the command to run in the tree: 0, or -ECANCELED
 * when it failed (the drop-ins stay, with the record, for undo). */
static int regenerate(const struct cd_persist_job *job, struct cd_steps *out)
{
	if (!job->regen[0] || !job->n_dropins)
		return 0;
	if (!job->live) {
		char q[PATH_MAX * 4 + 3];
		cd_step(out, "not run under --root: chroot %s %s", cd_shell_word_or(q, sizeof q, job->root, "TREE"),
		        job->regen);
		return 0;
	}
	char tool[sizeof job->regen], *argv[] = { tool, NULL };
	snprintf(tool, sizeof tool, "%s", job->regen);
	cd_step(out, "$ %s", job->regen);
	int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
	if (st == 0)
		return 0;
	cd_step(out, "%s %s: the drop-ins are written but the boot configuration is "
	        "not regenerated; run it by hand (or grub-mkconfig -o "
	        "/boot/grub/grub.cfg), or fix --undo", job->regen,
	        st == -ENOENT ? "is not installed" : "failed");
	return -ECANCELED;
}

/* What a run killed before it finished left: its record's hidden names
 * removed, and a record still pending taken back.  0, or -errno (said). */
static int finish_killed(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	int rc = cd_record_leftovers(job->rootfd, in, out);
	if (rc < 0)
		return rc;
	struct cd_record *r = calloc(1, sizeof *r);
	char why[200];
	if (!r)
		return -ENOMEM;
	rc = cd_persist_read_record(job->rootfd, r, why, sizeof why);
	if (rc == 0 && !r->done) {
		cd_step(out, "%s%s is the record of a fix --persist that did not finish: taking back what it did "
		        "first", in, CD_RECORD_PATH);
		rc = cd_persist_undo_record(job->rootfd, job->live, in, r, out);
		if (rc < 0)
			cd_step(out, "could not take it back: nothing else changed; run clockdoctor fix --undo");
	} else {
		rc = 0;   /* none, or one in force: the caller's to judge */
	}
	free(r);
	return rc;
}

/* The phases, under the lock: finish what a killed run left, look at the
 * tree again, refuse what is done already, in the way or undone by a later
 * file, list every change in the record, make them (each failure undoes
 * what was done), then regenerate the boot configuration. */
static int run_locked(struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	int rc = finish_killed(job, out);
	if (rc < 0)
		return rc;
	cd_persist_look(job);
	if (job->overridden[0]) {
		cd_step(out, "not written, as it would not take effect: %s", job->overridden);
		return -EDOM;
	}
	if (job->in_place) {
		cd_persist_describe_in_place(job, out);
		return 0;
	}
	if (job->have_record) {
		cd_step(out, "%s%s exists: an earlier fix --persist made other changes, or its files were "
		        "changed since; run fix --undo first", in, CD_RECORD_PATH);
		return -EEXIST;
	}
	struct cd_record *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->created = (long long)time(NULL);
	snprintf(r->family, sizeof r->family, "%s", job->family_name);
	snprintf(r->regen, sizeof r->regen, "%s", job->regen);
	int record_dirs;
	bool any, published = false;
	rc = list_changes(job, r, &record_dirs, &any, out);
	if (rc == 0 && !any) {
		cd_step(out, "nothing to write");
		free(r);
		return 0;
	}
	if (rc == 0)
		rc = make_changes(job, r, record_dirs, &published, out);
	if (rc < 0 && !published) {
		cd_step(out, "nothing was changed");
	} else if (rc < 0) {
		cd_step(out, "undoing what was done:");
		int u = cd_persist_undo_record(job->rootfd, job->live, in, r, out);
		cd_step(out, u == 0 ? "undone: the boot configuration is as it was" :
		        "NOT fully undone: run clockdoctor fix --undo again");
	}
	free(r);
	if (rc < 0)
		return rc;
	rc = regenerate(job, out);
	if (rc == 0)
		cd_step(out, "reboot for the new command line to take effect; fix --undo takes it back");
	return rc;
}

int cd_persist_run(struct cd_persist_job *job, struct cd_steps *out)
{
	int lock = cd_persist_lock(job->rootfd, job->live, out);
	if (lock < 0)
		return lock;
	int rc = run_locked(job, out);
	cd_persist_unlock(lock);
	return rc;
}
