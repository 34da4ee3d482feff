/* SPDX-License-Identifier: MIT */
/*
 * bootcfg.c: fix --persist's job (persist.h): what it would do under a
 * root folder for this distribution's boot configuration, whether an
 * earlier --persist did it already (its record), and the steps of the dry
 * run.  bootcfg_run.c carries the job out, bootcfg_undo.c takes it back;
 * bootcfg_impl.h lists what they share.
 */
#include "persist/bootcfg_impl.h"
#include "util/shellquote.h"
#include "util/beneath.h"
#include "util/lines.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cd_step(struct cd_steps *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	CD_LINES_VADD(s->line, s->n, fmt, ap);
	va_end(ap);
}

/* A warning for the operator, printf-style. */
#define warn(job, ...) CD_LINES_ADD((job)->warnings, (job)->n_warnings, __VA_ARGS__)

/* Debian, Ubuntu: a drop-in for each parameter, then update-grub; the
 * parameter's presence in the GRUB configuration already is worth a word.
 * 0, or -ENOTSUP (why said) under GRUB legacy. */
static int prepare_debian(struct cd_persist_job *job, const struct cd_plan *plan, char *why, size_t whylen)
{
	/* GRUB legacy (Debian before 6.0, Ubuntu before 9.10) has an
	 * update-grub too, but it rewrites menu.lst from its "# kopt="
	 * line and reads no drop-in: writing one would change nothing. */
	if (!cd_tree_exists(job->rootfd, GRUB_DEFAULT) && cd_tree_exists(job->rootfd, GRUB_LEGACY_MENU)) {
		snprintf(why, whylen, "this machine boots with GRUB legacy (%s, no %s): its update-grub "
		         "reads no drop-in. Add the parameter to the \"# kopt=\" line of %s by hand, then "
		         "run update-grub", GRUB_LEGACY_MENU, GRUB_DEFAULT, GRUB_LEGACY_MENU);
		return -ENOTSUP;
	}
	job->family_name = "debian";
	if (!cd_tree_exists(job->rootfd, GRUB_DEFAULT))
		warn(job, "there is no %s%s: is GRUB this machine's boot loader? The drop-in does "
		     "nothing until grub-mkconfig (update-grub) reads it.",
		     job->live ? "" : job->root, GRUB_DEFAULT);
	for (int i = 0; i < plan->n_params; i++) {
		const struct cd_plan_param *p = &plan->params[i];
		struct cd_dropin *d = &job->dropins[job->n_dropins++];
		memset(d, 0, sizeof *d);
		snprintf(d->token, sizeof d->token, "%s", p->token);
		d->add = p->add;
		if (p->add)
			cd_dropin_add(d, p->token);
		else
			cd_dropin_remove(d, p->token);
		bool there = cd_grub_config_has(job->rootfd, p->token);
		if (!p->add && !there)
			warn(job, "%s is not in %s or %s/*.cfg: it may come from elsewhere (a boot "
			     "loader other than GRUB, its own entries, the kernel's built-in command "
			     "line), where the drop-in cannot remove it.", p->token, GRUB_DEFAULT, GRUB_D);
		char other[CD_NAME_MAX * 2];
		if (!p->add && cd_grub_config_other_value(job->rootfd, p->token, other, sizeof other))
			warn(job, "%s is on GRUB's command line too: the kernel takes the last %.*s= it is "
			     "given, so once %s is removed that one decides. Remove it as well, by hand, "
			     "unless it is what you want.", other, (int)strcspn(p->token, "="), p->token, p->token);
		if (p->add && there)
			warn(job, "%s is in the GRUB configuration already, yet the running kernel did "
			     "not get it: was update-grub run, and the machine rebooted since?", p->token);
	}
	snprintf(job->regen, sizeof job->regen, "update-grub");
	return 0;
}

/* The Red Hat family: a grubby call for each parameter, run on the machine
 * itself only. */
static void prepare_redhat(struct cd_persist_job *job, const struct cd_plan *plan)
{
	job->family_name = "redhat";
	for (int i = 0; i < plan->n_params; i++) {
		snprintf(job->grubby[i].token, sizeof job->grubby[i].token, "%s", plan->params[i].token);
		job->grubby[i].add = plan->params[i].add;
	}
	job->n_grubby = plan->n_params;
	if (!job->live)
		warn(job, "grubby changes the boot entries of the running system, so under "
		     "--root it is not run: run the commands below inside %s (chroot %s).",
		     job->root, job->root);
}

/* The record under root, parsed: 0; -ENOENT when there is none; -EINVAL
 * (why said) when it is not one fix wrote; another -errno when unreadable. */
int cd_persist_read_record(int rootfd, struct cd_record *r, char *why, size_t whylen)
{
	size_t len;
	int err;
	char *text = cd_tree_read(rootfd, CD_RECORD_PATH, false, 65536, &len, &err);
	if (!text) {
		snprintf(why, whylen, "%s", err == -EFBIG ? "too long" : cd_tree_strerror(err));
		return err == -EFBIG ? -EINVAL : err == -ENOTDIR ? -ENOENT : err;
	}
	bool cut = strlen(text) != len;
	if (cut)
		snprintf(why, whylen, "binary");
	int rc = cut ? -EINVAL : cd_record_parse(text, r, why, whylen);
	free(text);
	return rc;
}

/* Does the record hold this change: the drop-in written with this very
 * content, or the grubby call with this token? */
static bool recorded_file(const struct cd_record *r, const struct cd_dropin *d)
{
	uint64_t hash = cd_fnv1a64(d->content, strlen(d->content));
	for (int i = 0; i < r->n; i++)
		if (r->ch[i].kind == CD_CH_FILE && strcmp(r->ch[i].path, d->path) == 0 &&
		    r->ch[i].hash == hash && r->ch[i].size == strlen(d->content))
			return true;
	return false;
}

static bool recorded_grubby(const struct cd_record *r, const char *token, bool add)
{
	for (int i = 0; i < r->n; i++)
		if (r->ch[i].kind == CD_CH_GRUBBY && r->ch[i].add == add && strcmp(r->ch[i].token, token) == 0)
			return true;
	return false;
}

/* An earlier --persist: which of this job's changes it made (job->in_place
 * when all of them, each still as written). */
static void match_record(struct cd_persist_job *job)
{
	struct cd_record *r = calloc(1, sizeof *r);
	char why[200];
	if (!r)
		return;
	job->have_record = false;
	job->in_place = false;
	int rc = cd_persist_read_record(job->rootfd, r, why, sizeof why);
	if (rc != -ENOENT)
		job->have_record = true;
	if (rc != 0) {
		free(r);
		return;
	}
	bool all = r->done && r->n > 0 && job->n_dropins + job->n_grubby > 0;
	for (int i = 0; i < job->n_dropins; i++) {
		struct cd_dropin *d = &job->dropins[i];
		d->ours = d->present_same && recorded_file(r, d);
		all = all && d->ours;
	}
	for (int i = 0; i < job->n_grubby; i++)
		all = all && recorded_grubby(r, job->grubby[i].token, job->grubby[i].add);
	job->in_place = all;
	free(r);
}

void cd_persist_look(struct cd_persist_job *job)
{
	job->overridden[0] = '\0';
	for (int i = 0; i < job->n_dropins; i++) {
		struct cd_dropin *d = &job->dropins[i];
		struct stat st;
		d->present_same = d->present_other = false;
		if (cd_tree_lstat(job->rootfd, d->path, &st) == 0) {
			size_t len;
			int err;
			char *old = S_ISREG(st.st_mode) ? cd_tree_read(job->rootfd, d->path, false, 1 << 20, &len, &err)
			                                : NULL;
			d->present_same = old && len == strlen(d->content) && memcmp(old, d->content, len) == 0;
			d->present_other = !d->present_same;
			free(old);
		}
		if (!job->overridden[0])
			cd_grub_overridden(job->rootfd, d, job->overridden, sizeof job->overridden);
	}
	match_record(job);
}

void cd_persist_release(struct cd_persist_job *job)
{
	if (job->rootfd >= 0)
		close(job->rootfd);
	job->rootfd = -1;
}

int cd_persist_prepare(const char *root, enum cd_os_family family, const struct cd_plan *plan,
                       struct cd_persist_job *job, char *err, size_t errlen)
{
	memset(job, 0, sizeof *job);
	job->rootfd = -1;
	size_t rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 0 || rl >= sizeof job->root) {
		snprintf(err, errlen, "bad root folder '%s'", root);
		return -EINVAL;
	}
	memcpy(job->root, root, rl);
	job->root[rl] = '\0';
	job->rootfd = cd_root_open(job->root);
	if (job->rootfd < 0) {
		snprintf(err, errlen, "cannot open the root folder '%s': %s", job->root, strerror(-job->rootfd));
		return -EINVAL;
	}
	job->live = strcmp(job->root, "/") == 0;
	job->family = family;
	for (int i = 0; i < plan->n_params; i++)
		if (!cd_plan_token_safe(plan->params[i].token)) {
			snprintf(err, errlen, "'%s' is not a parameter fix writes", plan->params[i].token);
			return -EINVAL;
		}
	int rc;
	switch (family) {
	case CD_OS_DEBIAN:
		rc = prepare_debian(job, plan, err, errlen);
		break;
	case CD_OS_REDHAT:
		prepare_redhat(job, plan);
		rc = 0;
		break;
	default:
		snprintf(err, errlen, "fix --persist knows the boot configuration of Debian and Ubuntu "
		         "(GRUB drop-ins) and of the Red Hat family (grubby); this system's family is "
		         "not one of them: change the kernel command line by hand, as "
		         "`clockdoctor check` says");
		return -ENOTSUP;
	}
	if (rc == 0)
		cd_persist_look(job);
	return rc;
}

/* The job done already: what is in place, and what is left (the reboot). */
void cd_persist_describe_in_place(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	cd_step(out, "in place already: an earlier fix --persist made this change (recorded in %s%s); "
	        "nothing to write", in, CD_RECORD_PATH);
	for (int i = 0; i < job->n_dropins; i++)
		cd_step(out, "%s%s (%s %s): written by fix --persist, unchanged since", in,
		        job->dropins[i].path, job->dropins[i].add ? "adds" : "removes", job->dropins[i].token);
	for (int i = 0; i < job->n_grubby; i++)
		cd_step(out, "grubby --update-kernel=ALL %s=%s: run by fix --persist",
		        job->grubby[i].add ? "--args" : "--remove-args", job->grubby[i].token);
	if (job->regen[0] && job->live)
		cd_step(out, "if %s did not finish then, run it: $ %s", job->regen, job->regen);
	else if (job->regen[0]) {
		char q[PATH_MAX * 4 + 3];
		cd_step(out, "if %s did not finish then, run it inside the tree: chroot %s %s", job->regen,
		        cd_shell_word_or(q, sizeof q, in, "TREE"), job->regen);
	}
	cd_step(out, "reboot: the kernel reads its command line at boot");
}

void cd_persist_describe(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	if (job->overridden[0])
		cd_step(out, "NOT EFFECTIVE as things stand, so fix --persist writes nothing: %s", job->overridden);
	if (job->in_place) {
		cd_persist_describe_in_place(job, out);
		return;
	}
	char q[PATH_MAX * 4 + 3], dir[PATH_MAX + sizeof GRUB_D];
	snprintf(dir, sizeof dir, "%s%s", in, GRUB_D);
	if (job->n_dropins && !cd_tree_exists(job->rootfd, GRUB_D))
		cd_step(out, "$ mkdir -p %s", cd_shell_word_or(q, sizeof q, dir, "TREE" GRUB_D));
	for (int i = 0; i < job->n_dropins; i++) {
		const struct cd_dropin *d = &job->dropins[i];
		if (d->present_same) {
			cd_step(out, "%s%s is there already, with this very content (not written by fix: "
			        "left alone)", in, d->path);
			continue;
		}
		if (d->present_other)
			cd_step(out, "keep the file that is there as %s%s" CD_BACKUP_SUFFIX " (a hard link; fix "
			        "--undo puts it back)", in, d->path);
		cd_step(out, "write %s%s (%s %s), atomically:", in, d->path,
		        d->add ? "adds" : "removes", d->token);
		char content[sizeof d->content];
		snprintf(content, sizeof content, "%s", d->content);
		for (char *save = NULL, *l = strtok_r(content, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			cd_step(out, "    %s", l);
	}
	for (int i = 0; i < job->n_grubby; i++) {
		char arg[CD_NAME_MAX * 2 + 20], *argv[4];
		cd_grubby_argv(arg, sizeof arg, argv, job->grubby[i].token, job->grubby[i].add);
		if (i == 0 && job->live)
			cd_step(out, "copy the files grubby edits (/boot/loader/entries/*.conf, "
			        "/boot/grub2/grubenv, /etc/default/grub) into /var/lib/clockdoctor/backup-TIME/");
		cd_step(out, "$ grubby --update-kernel=ALL %s", arg);
	}
	if (job->regen[0])
		cd_step(out, job->live ? "$ %s" : "then, inside the tree: chroot %s %s",
		        job->live ? job->regen : cd_shell_word_or(q, sizeof q, in, "TREE"), job->regen);
	cd_step(out, "record every change in %s%s before it is made (fix --undo takes back exactly that)", in,
	        CD_RECORD_PATH);
	cd_step(out, "reboot: the kernel reads its command line at boot");
}
