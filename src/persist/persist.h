/* SPDX-License-Identifier: MIT */
/*
 * persist.h: changing the kernel command line for good, the way the
 * distribution expects, and taking exactly that back (`fix --persist`,
 * `fix --undo`).
 *
 *   Debian, Ubuntu: one drop-in per parameter in /etc/default/grub.d/
 *     (grub-mkconfig sources them after /etc/default/grub, so the
 *     operator's own file is never touched), then update-grub.  Adding
 *     appends to GRUB_CMDLINE_LINUX_DEFAULT; removing strips the word from
 *     GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT as set before it.
 *   Red Hat family: grubby --update-kernel=ALL --args=P (--remove-args=P),
 *     after copying the files grubby edits (BLS entries, grubenv,
 *     /etc/default/grub) into a backup folder.
 *
 * Everything happens under a root folder: "/" for this machine, or a
 * scratch tree (`fix --root DIR`), where files are written but no tool is
 * run (update-grub and grubby act on the running system: they are printed,
 * to be run inside the tree).
 *
 * Both are one transaction, which survives kill -9 at any system call and
 * a second copy of itself:
 *   - a lock (flock) held from the first look at the tree to the last
 *     change: the state folder's fix.lock on this machine, the tree's own
 *     top folder under --root; a second run waits a few seconds, then
 *     refuses;
 *   - the intent record, ROOT/var/lib/clockdoctor/fix.record, lists every
 *     change (folders created, files written with their size and hash,
 *     files set aside with theirs, grubby calls) and is in place, synced,
 *     before the first of them is made ("state pending"); it is published
 *     whole (its new folders built under a hidden name and renamed into
 *     place), and marked "state done" when every change is made;
 *   - every step is idempotent and uses fixed names (a drop-in's temporary
 *     file is .NAME.clockdoctor-new), so undo finishes whatever a killed
 *     run left, and a pending record found by --persist is rolled back
 *     before it starts anew;
 *   - every path is opened beneath the root (util/beneath.h): a link or
 *     ".." that leads out is refused, never followed.
 * Undo reverses the changes newest first, each hash checked first, then
 * removes the record and its folders as one rename.  A file this code did
 * not write is never changed without a backup: a drop-in of the same name
 * that is not ours is kept as NAME.clockdoctor-backup (a hard link) and
 * put back by undo; one of ours edited since is moved aside as
 * NAME.clockdoctor-edited, not deleted.
 *
 * Nothing here prints: what was done comes back as lines in a
 * struct cd_steps, for the command to print.
 */
#ifndef CD_PERSIST_H
#define CD_PERSIST_H

#include "diagnose/plan.h"

#include <limits.h>
#include <stdint.h>

#define CD_RECORD_DIR "/var/lib/clockdoctor"
#define CD_RECORD_PATH CD_RECORD_DIR "/fix.record"
#define CD_BACKUP_SUFFIX ".clockdoctor-backup"
#define CD_NEW_SUFFIX ".clockdoctor-new"
#define CD_RECORD_MAX_CHANGES 32
#define CD_REL_MAX 256

/* ---- the record (record.c) ---- */

enum cd_change_kind {
	CD_CH_MKDIR,     /* a folder created: removed by undo when empty */
	CD_CH_FILE,      /* a file written: removed by undo when unchanged, else set aside */
	CD_CH_REPLACED,  /* a file that was not ours, linked to backup (its mode, size, hash): put back by undo */
	CD_CH_GRUBBY,    /* grubby --update-kernel=ALL --args (add) or --remove-args of token */
	CD_CH_BACKUP,    /* a folder of copies taken before grubby ran: removed by undo */
};

struct cd_change {
	enum cd_change_kind kind;
	char path[CD_REL_MAX];       /* under the root, starting with '/' */
	char backup[CD_REL_MAX];     /* CD_CH_REPLACED */
	unsigned mode;               /* CD_CH_FILE, CD_CH_REPLACED */
	unsigned long long size;     /* CD_CH_FILE, CD_CH_REPLACED */
	uint64_t hash;               /* CD_CH_FILE, CD_CH_REPLACED: FNV-1a of the content */
	bool add;                    /* CD_CH_FILE, CD_CH_GRUBBY: adds (or removes) token */
	char token[CD_NAME_MAX * 2];
};

struct cd_record {
	long long created;           /* Unix time */
	char family[16];             /* "debian", "redhat" */
	char regen[128];             /* the command that regenerates the boot configuration, "" */
	bool done;                   /* every change made ("state done"), else pending */
	int n;
	struct cd_change ch[CD_RECORD_MAX_CHANGES];
};

/* FNV-1a, 64 bits: tells a file edited since it was written (not a
 * defence against an attacker: root wrote it, root may change it). */
uint64_t cd_fnv1a64(const void *data, size_t len);

/* The record as text; its length, or -ENOSPC when cap is too small. */
int cd_record_format(const struct cd_record *r, char *buf, size_t cap);
/* Parse a record; 0, or -EINVAL with why in err.  Paths must be absolute
 * (under the root), without "..", tokens pass cd_plan_token_safe(), and
 * every change must be one fix writes (record.c says which). */
int cd_record_parse(const char *text, struct cd_record *r, char *err, size_t errlen);
/* A path under the root as records hold them: starts with '/', no "..",
 * no blank or control character. */
bool cd_record_path_ok(const char *rel);

/* ---- what --persist does and did (bootcfg.c, bootcfg_run.c, bootcfg_undo.c) ---- */

#define CD_STEPS_MAX 48
#define CD_STEP_LEN 600

/* Lines for people, in order: what was (or would be) done. */
struct cd_steps {
	int n;
	char line[CD_STEPS_MAX][CD_STEP_LEN];
};

void cd_step(struct cd_steps *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cd_dropin {
	char path[CD_REL_MAX];       /* /etc/default/grub.d/90-clockdoctor-....cfg */
	char content[1600];
	char token[CD_NAME_MAX * 2];
	bool add;
	bool present_same;           /* a file with exactly this content is there already */
	bool present_other;          /* a different file of that name is there: backed up first */
	bool ours;                   /* present_same, and the record says fix --persist wrote it */
};

struct cd_persist_job {
	char root[PATH_MAX];         /* "/" or a tree; no trailing '/' but for "/" */
	bool live;                   /* root is "/": tools are run */
	enum cd_os_family family;
	const char *family_name;     /* "debian", "redhat" */
	int n_dropins;
	struct cd_dropin dropins[CD_PLAN_MAX_PARAMS];
	int n_grubby;
	struct { char token[CD_NAME_MAX * 2]; bool add; } grubby[CD_PLAN_MAX_PARAMS];
	char regen[128];             /* "update-grub", "" */
	/* A record is there (an earlier --persist), and it holds every change
	 * this job would make, still in place: the job is done already, waiting
	 * for a reboot; running it again changes nothing and succeeds. */
	bool have_record;
	bool in_place;
	int rootfd;                  /* the root folder, opened by cd_persist_prepare; -1 */
	/* A later GRUB file that undoes the change (it sets the variable anew
	 * after our drop-in): why, or "" (grubcmdline.c). */
	char overridden[600];
	int n_warnings;
	char warnings[6][400];
};

/* Work out what --persist would do for the plan's parameters under root.
 * Returns 0; -ENOTSUP with why in err when this distribution's boot
 * configuration is not one it knows how to change (the caller prints the
 * finding's text instead); -EINVAL for a bad root. */
int cd_persist_prepare(const char *root, enum cd_os_family family, const struct cd_plan *plan,
                       struct cd_persist_job *job, char *err, size_t errlen);

/* Describe the job as steps, each with its command or file content (the
 * dry run). */
void cd_persist_describe(const struct cd_persist_job *job, struct cd_steps *out);

/* Carry the job out under the lock: the record first, then each change.  0
 * when every step was done, or job->in_place (nothing to do: said in out);
 * -EEXIST when a record of other changes is there already (undo first);
 * -EBUSY when another run holds the lock; -EDOM when a later GRUB file
 * would undo the change (job->overridden: nothing written); -errno when a
 * step failed: then what was done is undone, and out says so with the
 * reason; -ECANCELED when a tool (update-grub) failed after the files were
 * written: they stay, with the record, for undo.  The job is looked at
 * again under the lock (job->in_place, job->overridden as found then). */
int cd_persist_run(struct cd_persist_job *job, struct cd_steps *out);

/* Under the lock: what a run killed before its record was in place left is
 * removed; then exactly what the record says is taken back, newest first,
 * every file checked against its hash before it is put back or removed,
 * and the record removed.  0 when all of it was undone (or there was no
 * record: *had_record false); -EINVAL when the record is not one fix
 * wrote, or the tree no longer holds what it says (nothing changed); -EBUSY
 * when another run holds the lock; another -errno when a step failed: the
 * record stays, and running undo again finishes the job. */
int cd_persist_undo(const char *root, bool *had_record, struct cd_steps *out);

/* What --undo would take back (the dry run): 0, or -errno. */
int cd_persist_describe_undo(const char *root, struct cd_steps *out);

/* Close the root folder cd_persist_prepare opened. */
void cd_persist_release(struct cd_persist_job *job);

#endif
