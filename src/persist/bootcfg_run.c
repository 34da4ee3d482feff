/* SPDX-License-Identifier: MIT */
/*
 * bootcfg_run.c: fix --persist carried out (persist.h).
 *
 * The order of work is what makes undo exact: every change is listed in
 * the record before it is made (only the record's own folders exist before
 * it), and undo treats each line as "make sure this is gone" (a file that
 * is already gone, a folder already removed, is no error).  So a run cut
 * short anywhere is undone by undo, and a run undoes itself when a step
 * fails.
 */
#include "persist/bootcfg_impl.h"
#include "util/atomicfile.h"
#include "util/shellquote.h"
#include "util/spawn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int write_record(const char *root, const struct cd_record *r)
{
	char text[16384], path[PATH_MAX];
	int len = cd_record_format(r, text, sizeof text);
	if (len < 0)
		return len;
	int rc = cd_root_path(path, sizeof path, root, CD_RECORD_PATH);
	return rc ? rc : cd_write_atomic(path, text, (size_t)len, 0600, true);
}

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
static int plan_dirs(struct cd_record *r, const char *root, const char *rel)
{
	char part[CD_REL_MAX];
	for (const char *p = rel + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		snprintf(part, sizeof part, "%.*s", (int)(p - rel), rel);
		bool listed = false;
		for (int i = 0; i < r->n; i++)
			listed |= r->ch[i].kind == CD_CH_MKDIR && strcmp(r->ch[i].path, part) == 0;
		if (!listed && !cd_root_exists(root, part) && !change(r, CD_CH_MKDIR, part))
			return -ENOSPC;
		if (*p == '\0')
			return 0;
	}
}

/* ---- listing the changes ---- */

/* The drop-ins to write (not those there already with this content): the
 * drop-in folder's missing parts the first time, then for each the file
 * that is in its way, set aside, and the drop-in. */
static int list_dropins(const struct cd_persist_job *job, struct cd_record *r, bool *any)
{
	int rc = 0;
	for (int i = 0; rc == 0 && i < job->n_dropins; i++) {
		const struct cd_dropin *d = &job->dropins[i];
		if (d->present_same)
			continue;
		if (!*any)
			rc = plan_dirs(r, job->root, GRUB_D);
		*any = true;
		struct cd_change *c;
		if (rc == 0 && d->present_other) {
			if (!(c = change(r, CD_CH_REPLACED, d->path)))
				rc = -ENOSPC;
			else
				snprintf(c->backup, sizeof c->backup, "%s.clockdoctor-backup", d->path);
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
	snprintf(bdir, sizeof bdir, "/var/lib/clockdoctor/backup-%lld", r->created);
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
static int list_changes(const struct cd_persist_job *job, struct cd_record *r, int *record_dirs, bool *any)
{
	int rc = plan_dirs(r, job->root, "/var/lib/clockdoctor");
	*record_dirs = r->n;
	*any = false;
	if (rc == 0)
		rc = list_dropins(job, r, any);
	if (rc == 0 && job->n_grubby && job->live)
		rc = list_grubby(job, r, any);
	return rc;
}

/* ---- making them ---- */

/* One change of the record (not one of its own folders); *d is where the
 * search for the next drop-in's content goes on from. */
static int make_change(const struct cd_persist_job *job, const struct cd_change *c, int *d, struct cd_steps *out)
{
	const char *root = job->root, *in = job->live ? "" : job->root;
	char p[PATH_MAX], b[PATH_MAX];
	int rc = 0;
	switch (c->kind) {
	case CD_CH_MKDIR:
		if ((rc = cd_root_mkdir(root, c->path, 0755)) == 0)
			cd_step(out, "created %s%s", in, c->path);
		break;
	case CD_CH_REPLACED:
		if ((rc = cd_root_path(p, sizeof p, root, c->path)) == 0 &&
		    (rc = cd_root_path(b, sizeof b, root, c->backup)) == 0 && link(p, b) != 0)
			rc = -errno;
		if (rc == 0)
			cd_step(out, "kept %s%s (not written by fix) as %s%s", in, c->path, in, c->backup);
		break;
	case CD_CH_FILE:
		while (*d < job->n_dropins &&
		       (job->dropins[*d].present_same || strcmp(job->dropins[*d].path, c->path) != 0))
			(*d)++;
		if (*d >= job->n_dropins)
			return -EINVAL;
		if ((rc = cd_root_path(p, sizeof p, root, c->path)) == 0)
			rc = cd_write_atomic(p, job->dropins[*d].content, strlen(job->dropins[*d].content), 0644, true);
		if (rc == 0)
			cd_step(out, "wrote %s%s (%s %s)", in, c->path, c->add ? "adds" : "removes", c->token);
		break;
	case CD_CH_BACKUP:
		if ((rc = cd_grubby_backup(root, c->path)) == 0)
			cd_step(out, "copied the files grubby edits into %s%s", in, c->path);
		break;
	case CD_CH_GRUBBY:
		if ((rc = cd_grubby_run(c->token, c->add, out)) != 0)
			cd_step(out, "grubby %s", rc == -ENOENT ? "is not installed" : "failed");
		break;
	}
	return rc;
}

/* The record's own folders, then the record, then the changes it lists,
 * in order, until one fails: 0 or its -errno. */
static int make_changes(const struct cd_persist_job *job, const struct cd_record *r, int record_dirs,
                        struct cd_steps *out)
{
	const char *root = job->root, *in = job->live ? "" : job->root;
	int rc = 0;
	for (int i = 0; rc == 0 && i < record_dirs; i++)
		if ((rc = cd_root_mkdir(root, r->ch[i].path, 0755)) == 0)
			cd_step(out, "created %s%s", in, r->ch[i].path);
	if (rc == 0 && (rc = write_record(root, r)) == 0)
		cd_step(out, "wrote the record %s%s", in, CD_RECORD_PATH);
	int d = 0;
	for (int i = record_dirs; rc == 0 && i < r->n; i++) {
		const struct cd_change *c = &r->ch[i];
		rc = make_change(job, c, &d, out);
		if (rc < 0)
			cd_step(out, "FAILED at %s: %s", c->kind == CD_CH_GRUBBY ? c->token : c->path, strerror(-rc));
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

/* The phases: refuse what is done already or in the way, list every change
 * in the record, make them (each failure undoes what was done), then
 * regenerate the boot configuration. */
int cd_persist_run(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	if (job->in_place) {
		cd_persist_describe_in_place(job, out);
		return 0;
	}
	if (cd_root_exists(job->root, CD_RECORD_PATH)) {
		cd_step(out, "%s%s exists: an earlier fix --persist is in force; run fix --undo first",
		        in, CD_RECORD_PATH);
		return -EEXIST;
	}
	struct cd_record *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->created = (long long)time(NULL);
	snprintf(r->family, sizeof r->family, "%s", job->family_name);
	snprintf(r->regen, sizeof r->regen, "%s", job->regen);
	int record_dirs;
	bool any;
	int rc = list_changes(job, r, &record_dirs, &any);
	if (rc == 0 && !any) {
		cd_step(out, "nothing to write");
		free(r);
		return 0;
	}
	if (rc == 0)
		rc = make_changes(job, r, record_dirs, out);
	if (rc < 0) {
		cd_step(out, "undoing what was done:");
		int u = cd_persist_undo_record(job->root, r, true, out);
		cd_step(out, u == 0 ? "undone: the machine is as it was" :
		        "NOT fully undone: run clockdoctor fix --undo again");
		free(r);
		return rc;
	}
	rc = regenerate(job, out);
	if (rc == 0)
		cd_step(out, "reboot for the new command line to take effect; fix --undo takes it back");
	free(r);
	return rc;
}
