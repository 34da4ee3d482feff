/*
 * bootcfg.c: the kernel command line changed for good, and taken back
 * (persist.h).
 *
 * The order of work is what makes undo exact: every change is listed in
 * the record before it is made (only the record's own folders exist before
 * it), and undo treats each line as "make sure this is gone": a file that
 * is already gone, a folder already removed, is no error.  So a run cut
 * short anywhere is undone by undo, and persist undoes itself when a step
 * fails.
 */
#include "persist/persist.h"
#include "diagnose/fixes.h"
#include "util/atomicfile.h"
#include "util/fsread.h"
#include "util/lines.h"
#include "util/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GRUB_D "/etc/default/grub.d"
#define GRUB_DEFAULT "/etc/default/grub"
#define GRUB_LEGACY_MENU "/boot/grub/menu.lst"
#define TOOL_TIMEOUT_MS (5 * 60 * 1000)  /* update-grub probes every disk: minutes, not hours */

void cd_step(struct cd_steps *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	CD_LINES_VADD(s->line, s->n, fmt, ap);
	va_end(ap);
}

/* root + rel ("/" + "/etc" is "/etc"). */
static int abs_path(char *out, size_t cap, const char *root, const char *rel)
{
	int n = snprintf(out, cap, "%s%s", strcmp(root, "/") == 0 ? "" : root, rel);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static bool exists_under(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	return abs_path(p, sizeof p, root, rel) == 0 && lstat(p, &st) == 0;
}

/* ---- drop-ins ---- */

static void dropin_add(struct cd_dropin *d, const char *token)
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
static void dropin_remove(struct cd_dropin *d, const char *token)
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
static bool in_grub_config(const char *root, const char *token)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, GRUB_DEFAULT, 1 << 20, &len, &err, &trunc);
	bool found = text && has_word(text, token);
	free(text);
	char dir[PATH_MAX];
	DIR *d = abs_path(dir, sizeof dir, root, GRUB_D) == 0 ? opendir(dir) : NULL;
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

/* A warning for the operator, printf-style. */
#define warn(job, ...) CD_LINES_ADD((job)->warnings, (job)->n_warnings, __VA_ARGS__)

static void prepare_debian(struct cd_persist_job *job, const struct cd_plan *plan)
{
	if (!exists_under(job->root, GRUB_DEFAULT))
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
			dropin_add(d, p->token);
		else
			dropin_remove(d, p->token);
		size_t len;
		int err, trunc;
		char *old = cd_read_file(job->root, d->path, 1 << 20, &len, &err, &trunc);
		if (old) {
			d->present_same = len == strlen(d->content) && memcmp(old, d->content, len) == 0;
			d->present_other = !d->present_same;
			free(old);
		}
		bool there = in_grub_config(job->root, p->token);
		if (!p->add && !there)
			warn(job, "%s is not in %s or %s/*.cfg: it may come from elsewhere (a boot "
			     "loader other than GRUB, its own entries, the kernel's built-in command "
			     "line), where the drop-in cannot remove it.", p->token, GRUB_DEFAULT, GRUB_D);
		if (p->add && there)
			warn(job, "%s is in the GRUB configuration already, yet the running kernel did "
			     "not get it: was update-grub run, and the machine rebooted since?", p->token);
	}
	snprintf(job->regen, sizeof job->regen, "update-grub");
}

/* The record under root, parsed: 0; -ENOENT when there is none; -EINVAL
 * (why said) when it is not one fix wrote; another -errno when unreadable. */
static int read_record(const char *root, struct cd_record *r, char *why, size_t whylen)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, CD_RECORD_PATH, 65536, &len, &err, &trunc);
	if (!text) {
		snprintf(why, whylen, "%s", strerror(-err));
		return err;
	}
	bool cut = trunc || strlen(text) != len;
	if (cut)
		snprintf(why, whylen, "too long, or binary");
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
	if (read_record(job->root, r, why, sizeof why) != -ENOENT)
		job->have_record = true;
	else {
		free(r);
		return;
	}
	bool all = r->n > 0 && job->n_dropins + job->n_grubby > 0;
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

int cd_persist_prepare(const char *root, enum cd_os_family family, const struct cd_plan *plan,
                       struct cd_persist_job *job, char *err, size_t errlen)
{
	memset(job, 0, sizeof *job);
	size_t rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 0 || rl >= sizeof job->root) {
		snprintf(err, errlen, "bad root folder '%s'", root);
		return -EINVAL;
	}
	memcpy(job->root, root, rl);
	job->root[rl] = '\0';
	job->live = strcmp(job->root, "/") == 0;
	job->family = family;
	for (int i = 0; i < plan->n_params; i++)
		if (!cd_plan_token_safe(plan->params[i].token)) {
			snprintf(err, errlen, "'%s' is not a parameter fix writes", plan->params[i].token);
			return -EINVAL;
		}
	switch (family) {
	case CD_OS_DEBIAN:
		/* GRUB legacy (Debian before 6.0, Ubuntu before 9.10) has an
		 * update-grub too, but it rewrites menu.lst from its "# kopt="
		 * line and reads no drop-in: writing one would change nothing. */
		if (!exists_under(job->root, GRUB_DEFAULT) && exists_under(job->root, GRUB_LEGACY_MENU)) {
			snprintf(err, errlen, "this machine boots with GRUB legacy (%s, no %s): its update-grub "
			         "reads no drop-in. Add the parameter to the \"# kopt=\" line of %s by hand, then "
			         "run update-grub", GRUB_LEGACY_MENU, GRUB_DEFAULT, GRUB_LEGACY_MENU);
			return -ENOTSUP;
		}
		job->family_name = "debian";
		prepare_debian(job, plan);
		match_record(job);
		return 0;
	case CD_OS_REDHAT:
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
		match_record(job);
		return 0;
	default:
		snprintf(err, errlen, "fix --persist knows the boot configuration of Debian and Ubuntu "
		         "(GRUB drop-ins) and of the Red Hat family (grubby); this system's family is "
		         "not one of them: change the kernel command line by hand, as "
		         "`clockdoctor check` says");
		return -ENOTSUP;
	}
}

static void grubby_argv(char *buf, size_t cap, char *argv[4], const char *token, bool add)
{
	snprintf(buf, cap, "%s=%s", add ? "--args" : "--remove-args", token);
	argv[0] = "grubby";
	argv[1] = "--update-kernel=ALL";
	argv[2] = buf;
	argv[3] = NULL;
}

/* The job done already: what is in place, and what is left (the reboot). */
static void describe_in_place(const struct cd_persist_job *job, struct cd_steps *out)
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
	else if (job->regen[0])
		cd_step(out, "if %s did not finish then, run it inside the tree: chroot %s %s", job->regen, in,
		        job->regen);
	cd_step(out, "reboot: the kernel reads its command line at boot");
}

void cd_persist_describe(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *in = job->live ? "" : job->root;
	if (job->in_place) {
		describe_in_place(job, out);
		return;
	}
	if (job->n_dropins && !exists_under(job->root, GRUB_D))
		cd_step(out, "$ mkdir -p %s%s", in, GRUB_D);
	for (int i = 0; i < job->n_dropins; i++) {
		const struct cd_dropin *d = &job->dropins[i];
		if (d->present_same) {
			cd_step(out, "%s%s is there already, with this very content (not written by fix: "
			        "left alone)", in, d->path);
			continue;
		}
		if (d->present_other)
			cd_step(out, "keep the file that is there as %s%s.clockdoctor-backup (fix --undo "
			        "puts it back)", in, d->path);
		cd_step(out, "write %s%s (%s %s), atomically:", in, d->path,
		        d->add ? "adds" : "removes", d->token);
		char content[sizeof d->content];
		snprintf(content, sizeof content, "%s", d->content);
		for (char *save = NULL, *l = strtok_r(content, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			cd_step(out, "    %s", l);
	}
	for (int i = 0; i < job->n_grubby; i++) {
		char arg[CD_NAME_MAX * 2 + 20], *argv[4];
		grubby_argv(arg, sizeof arg, argv, job->grubby[i].token, job->grubby[i].add);
		if (i == 0 && job->live)
			cd_step(out, "copy the files grubby edits (/boot/loader/entries/*.conf, "
			        "/boot/grub2/grubenv, /etc/default/grub) into /var/lib/clockdoctor/backup-TIME/");
		cd_step(out, "$ grubby --update-kernel=ALL %s", arg);
	}
	if (job->regen[0])
		cd_step(out, job->live ? "$ %s" : "then, inside the tree: chroot %s %s", job->live ? job->regen : in,
		        job->regen);
	cd_step(out, "record every change in %s%s (fix --undo takes back exactly that)", in, CD_RECORD_PATH);
	cd_step(out, "reboot: the kernel reads its command line at boot");
}

/* ---- carrying it out ---- */

static int write_record(const char *root, const struct cd_record *r)
{
	char text[16384], path[PATH_MAX];
	int len = cd_record_format(r, text, sizeof text);
	if (len < 0)
		return len;
	int rc = abs_path(path, sizeof path, root, CD_RECORD_PATH);
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
		if (!listed && !exists_under(root, part) && !change(r, CD_CH_MKDIR, part))
			return -ENOSPC;
		if (*p == '\0')
			return 0;
	}
}

static int make_dir(const char *root, const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	int rc = abs_path(p, sizeof p, root, rel);
	if (rc == 0 && mkdir(p, mode) != 0 && errno != EEXIST)
		rc = -errno;
	return rc;
}

/* Copy root/rel into backup folder bdir (relative), keeping its path. */
static int backup_copy(const char *root, const char *bdir, const char *rel)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, rel, 16u << 20, &len, &err, &trunc);
	if (!text)
		return err == -ENOENT ? 0 : err;
	char dst[CD_REL_MAX], p[PATH_MAX];
	struct stat st;
	int rc = snprintf(dst, sizeof dst, "%s%s", bdir, rel) >= (int)sizeof dst ? -ENAMETOOLONG : 0;
	for (char *s = dst + strlen(bdir) + 1; rc == 0 && (s = strchr(s, '/')); s++) {
		*s = '\0';
		rc = make_dir(root, dst, 0700);
		*s = '/';
	}
	if (rc == 0 && (rc = abs_path(p, sizeof p, root, rel)) == 0 && stat(p, &st) != 0)
		rc = -errno;
	if (rc == 0 && (rc = abs_path(p, sizeof p, root, dst)) == 0)
		rc = cd_write_atomic(p, text, len, st.st_mode & 07777, false);
	free(text);
	return rc;
}

static int backup_for_grubby(const char *root, const char *bdir)
{
	int rc = make_dir(root, bdir, 0700);
	static const char *const files[] = { GRUB_DEFAULT, "/boot/grub2/grubenv", "/boot/grub/grubenv" };
	for (size_t i = 0; rc == 0 && i < sizeof files / sizeof files[0]; i++)
		rc = backup_copy(root, bdir, files[i]);
	char dir[PATH_MAX];
	DIR *d = rc == 0 && abs_path(dir, sizeof dir, root, "/boot/loader/entries") == 0 ? opendir(dir) : NULL;
	for (struct dirent *e; rc == 0 && d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		char rel[CD_REL_MAX];
		if (l > 5 && strcmp(e->d_name + l - 5, ".conf") == 0 &&
		    snprintf(rel, sizeof rel, "/boot/loader/entries/%s", e->d_name) < (int)sizeof rel)
			rc = backup_copy(root, bdir, rel);
	}
	if (d)
		closedir(d);
	return rc;
}

static int undo_record(const char *root, const struct cd_record *r, bool remove_record, struct cd_steps *out);

int cd_persist_run(const struct cd_persist_job *job, struct cd_steps *out)
{
	const char *root = job->root, *in = job->live ? "" : job->root;
	if (job->in_place) {
		describe_in_place(job, out);
		return 0;
	}
	if (exists_under(root, CD_RECORD_PATH)) {
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
	int rc = plan_dirs(r, root, "/var/lib/clockdoctor");
	int record_dirs = r->n;
	char bdir[CD_REL_MAX] = "";
	bool any = false;
	for (int i = 0; rc == 0 && i < job->n_dropins; i++) {
		const struct cd_dropin *d = &job->dropins[i];
		if (d->present_same)
			continue;
		if (!any)
			rc = plan_dirs(r, root, GRUB_D);
		any = true;
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
	if (rc == 0 && job->n_grubby && job->live) {
		snprintf(bdir, sizeof bdir, "/var/lib/clockdoctor/backup-%lld", r->created);
		if (!change(r, CD_CH_BACKUP, bdir))
			rc = -ENOSPC;
		for (int i = 0; rc == 0 && i < job->n_grubby; i++) {
			struct cd_change *c = change(r, CD_CH_GRUBBY, "/");
			if (!c) {
				rc = -ENOSPC;
				break;
			}
			c->add = job->grubby[i].add;
			snprintf(c->token, sizeof c->token, "%s", job->grubby[i].token);
			any = true;
		}
	}
	if (rc == 0 && !any) {
		cd_step(out, "nothing to write");
		free(r);
		return 0;
	}
	/* The record's own folders, then the record, then the changes. */
	for (int i = 0; rc == 0 && i < record_dirs; i++)
		if ((rc = make_dir(root, r->ch[i].path, 0755)) == 0)
			cd_step(out, "created %s%s", in, r->ch[i].path);
	if (rc == 0 && (rc = write_record(root, r)) == 0)
		cd_step(out, "wrote the record %s%s", in, CD_RECORD_PATH);
	int d = 0;
	for (int i = record_dirs; rc == 0 && i < r->n; i++) {
		const struct cd_change *c = &r->ch[i];
		char p[PATH_MAX], b[PATH_MAX];
		switch (c->kind) {
		case CD_CH_MKDIR:
			if ((rc = make_dir(root, c->path, 0755)) == 0)
				cd_step(out, "created %s%s", in, c->path);
			break;
		case CD_CH_REPLACED:
			if ((rc = abs_path(p, sizeof p, root, c->path)) == 0 &&
			    (rc = abs_path(b, sizeof b, root, c->backup)) == 0 && link(p, b) != 0)
				rc = -errno;
			if (rc == 0)
				cd_step(out, "kept %s%s (not written by fix) as %s%s", in, c->path, in, c->backup);
			break;
		case CD_CH_FILE:
			while (d < job->n_dropins && (job->dropins[d].present_same || strcmp(job->dropins[d].path, c->path) != 0))
				d++;
			if (d >= job->n_dropins) {
				rc = -EINVAL;
				break;
			}
			if ((rc = abs_path(p, sizeof p, root, c->path)) == 0)
				rc = cd_write_atomic(p, job->dropins[d].content, strlen(job->dropins[d].content), 0644,
				                     true);
			if (rc == 0)
				cd_step(out, "wrote %s%s (%s %s)", in, c->path, c->add ? "adds" : "removes", c->token);
			break;
		case CD_CH_BACKUP:
			if ((rc = backup_for_grubby(root, c->path)) == 0)
				cd_step(out, "copied the files grubby edits into %s%s", in, c->path);
			break;
		case CD_CH_GRUBBY: {
			char arg[CD_NAME_MAX * 2 + 20], *argv[4];
			grubby_argv(arg, sizeof arg, argv, c->token, c->add);
			cd_step(out, "$ grubby --update-kernel=ALL %s", arg);
			int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
			if (st != 0) {
				cd_step(out, "grubby %s", st == -ENOENT ? "is not installed" : "failed");
				rc = st > 0 ? -ECHILD : st;
			}
			break;
		}
		}
		if (rc < 0)
			cd_step(out, "FAILED at %s: %s", c->kind == CD_CH_GRUBBY ? c->token : c->path, strerror(-rc));
	}
	if (rc < 0) {
		cd_step(out, "undoing what was done:");
		int u = undo_record(root, r, true, out);
		cd_step(out, u == 0 ? "undone: the machine is as it was" :
		        "NOT fully undone: run clockdoctor fix --undo again");
		free(r);
		return rc;
	}
	if (job->regen[0] && job->n_dropins) {
		if (!job->live) {
			cd_step(out, "not run under --root: chroot %s %s", root, job->regen);
		} else {
			char tool[sizeof job->regen], *argv[] = { tool, NULL };
			snprintf(tool, sizeof tool, "%s", job->regen);
			cd_step(out, "$ %s", job->regen);
			int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
			if (st != 0) {
				cd_step(out, "%s %s: the drop-ins are written but the boot configuration is "
				        "not regenerated; run it by hand (or grub-mkconfig -o "
				        "/boot/grub/grub.cfg), or fix --undo", job->regen,
				        st == -ENOENT ? "is not installed" : "failed");
				free(r);
				return -ECANCELED;
			}
		}
	}
	cd_step(out, "reboot for the new command line to take effect; fix --undo takes it back");
	free(r);
	return 0;
}

/* ---- undo ---- */

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
	int rc = abs_path(p, sizeof p, root, c->path);
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
		if ((rc = abs_path(p, sizeof p, root, c->path)) || (rc = abs_path(b, sizeof b, root, c->backup)))
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
		if ((rc = abs_path(p, sizeof p, root, c->path)))
			return rc;
		if (nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
			return -errno;
		cd_step(out, "removed the backup copies %s%s", in, c->path);
		return 0;
	case CD_CH_GRUBBY: {
		char arg[CD_NAME_MAX * 2 + 20], *argv[4];
		grubby_argv(arg, sizeof arg, argv, c->token, !c->add);
		if (!live) {
			cd_step(out, "cannot undo under --root: grubby --update-kernel=ALL %s (on the machine itself)", arg);
			return -ENOTSUP;
		}
		cd_step(out, "$ grubby --update-kernel=ALL %s", arg);
		int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
		return st == 0 ? 0 : st > 0 ? -ECHILD : st;
	}
	case CD_CH_MKDIR:
		if ((rc = abs_path(p, sizeof p, root, c->path)))
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
static int undo_record(const char *root, const struct cd_record *r, bool remove_record, struct cd_steps *out)
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
			cd_step(out, "not run under --root: chroot %s update-grub", root);
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
		int rc = abs_path(p, sizeof p, root, CD_RECORD_PATH);
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
	int rc = !r ? -ENOMEM : read_record(root, r, why, sizeof why);
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
		rc = undo_record(root, r, true, out);
	free(r);
	return rc;
}
