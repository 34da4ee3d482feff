/* SPDX-License-Identifier: MIT */
/*
 * bootcfg_impl.h: what the files of `fix --persist` and `fix --undo` share
 * (persist.h is their API): the GRUB files they know, paths under the root
 * folder, and the pieces one file needs of another.
 *
 *   bootcfg.c       the job: what --persist would do here, whether an
 *                   earlier --persist did it, and the dry run's steps
 *   bootcfg_run.c   carrying the job out, record first
 *   bootcfg_undo.c  taking back what a record lists
 *   grubdropin.c    Debian's and Ubuntu's GRUB drop-ins
 *   grubcmdline.c   the command line as GRUB assembles it from those files
 *   grubby.c        the Red Hat family's grubby, and the copies taken first
 *   recordfile.c    the lock, and the record put in place and taken away whole
 *   rootpath.c      files and folders beneath the root folder's descriptor
 */
#ifndef CD_BOOTCFG_IMPL_H
#define CD_BOOTCFG_IMPL_H

#include "persist/persist.h"

#include <dirent.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define GRUB_D "/etc/default/grub.d"
#define GRUB_DEFAULT "/etc/default/grub"
#define GRUB_LEGACY_MENU "/boot/grub/menu.lst"
#define TOOL_TIMEOUT_MS (5 * 60 * 1000)  /* update-grub probes every disk: minutes, not hours */

/* ---- rootpath.c ---- */

/* rel is a path under the root ("/etc/default/grub"), reached beneath
 * rootfd (util/beneath.h): a link or ".." that leads out is -EXDEV, never
 * followed.  Each returns 0 or -errno unless said. */
/* lstat of rel (a link is not followed). */
int cd_tree_lstat(int rootfd, const char *rel, struct stat *st);
/* Whether rel exists (a link counts, whatever it points to). */
bool cd_tree_exists(int rootfd, const char *rel);
/* mkdir (-EEXIST when something is there), its folder synced. */
int cd_tree_mkdir(int rootfd, const char *rel, mode_t mode);
/* A regular file, whole (at most max bytes, else -EFBIG), NUL-terminated:
 * the buffer (free it) with its length, or NULL with -errno in *err.
 * follow false: a link at rel's own name is refused (-ELOOP). */
char *cd_tree_read(int rootfd, const char *rel, bool follow, size_t max, size_t *len, int *err);
/* Create rel (O_EXCL|O_NOFOLLOW: never through a link), write, fsync; on a
 * failure after creating it, it is removed. */
int cd_tree_write_new(int rootfd, const char *rel, const void *data, size_t len, mode_t mode);
/* renameat2(from, to, flags), linkat(from, to), unlinkat(rel): the
 * folders synced after. */
int cd_tree_rename(int rootfd, const char *from, const char *to, unsigned flags);
int cd_tree_link(int rootfd, const char *from, const char *to);
int cd_tree_remove(int rootfd, const char *rel, bool dir);
/* The entries of folder dfd (not "." or ".."), each with its lstat:
 * cd_tree_opendir gives a fresh DIR of its own (NULL, -errno in *rc),
 * cd_tree_next the next name (gone since: skipped), NULL at the end or
 * with -errno in *rc. */
DIR *cd_tree_opendir(int dfd, int *rc);
const char *cd_tree_next(DIR *d, int dfd, struct stat *st, int *rc);
/* A reason in words for -errno from the above ("a symbolic link ... leads
 * out of the root folder" for -EXDEV). */
const char *cd_tree_strerror(int rc);

/* ---- recordfile.c ---- */

/* The lock every run of --persist and --undo holds while it looks at and
 * changes the tree: the state folder's fix.lock (made 0700, ours alone)
 * for this machine, flock on rootfd itself for a tree.  It waits up to
 * LOCK_WAIT_MS for another run.  The lock's descriptor (close it to
 * unlock), or -errno with why in out: -EBUSY when another run holds it. */
#define LOCK_WAIT_MS 10000
int cd_persist_lock(int rootfd, bool live, struct cd_steps *out);
void cd_persist_unlock(int lockfd);
/* Write the record: first (record_dirs: how many of r's first changes are
 * the record's own folders, made here) published whole, or over the one
 * there (replace: marking it done).  0, or -errno with the step said. */
int cd_record_publish(int rootfd, const struct cd_record *r, int record_dirs, bool replace, const char *in,
                      struct cd_steps *out);
/* Take the record away, and its own folders with it when they hold nothing
 * else, as one rename.  0 or -errno. */
int cd_record_unpublish(int rootfd, const struct cd_record *r, const char *in, struct cd_steps *out);
/* Remove what a run killed while publishing or unpublishing the record left
 * (the hidden names those use), each said in out: how many, or -errno. */
int cd_record_leftovers(int rootfd, const char *in, struct cd_steps *out);
/* How many of r's first changes are the record's own folders. */
int cd_record_dirs(const struct cd_record *r);

/* ---- grubcmdline.c ---- */

/* Whether a GRUB file read after the drop-in d undoes it (sets the
 * variable anew without keeping it, or puts the removed word back): 0, or
 * 1 with why in d->overridden's place (why). */
int cd_grub_overridden(int rootfd, const struct cd_dropin *d, char *why, size_t whylen);
/* Whether token is in /etc/default/grub or a drop-in (other than ours). */
bool cd_grub_config_has(int rootfd, const char *token);
/* Whether another value of token's key is there ("clocksource=hpet" for
 * "clocksource=acpi_pm"): true, with the first found in found. */
bool cd_grub_config_other_value(int rootfd, const char *token, char *found, size_t cap);

/* ---- grubdropin.c ---- */

/* The drop-in that adds token to the kernel command line, and the one that
 * removes it: d->path and d->content. */
void cd_dropin_add(struct cd_dropin *d, const char *token);
void cd_dropin_remove(struct cd_dropin *d, const char *token);
/* The temporary name a drop-in is written under before it is renamed into
 * place: ".NAME.clockdoctor-new" beside it (fixed, so that undo knows it). */
void cd_dropin_new_name(char *out, size_t cap, const char *path);
/* ---- grubby.c ---- */

/* grubby's argument vector for adding (or removing) token: argv[] points
 * into buf, and argv[2] is the --args=/--remove-args= word. */
void cd_grubby_argv(char *buf, size_t cap, char *argv[4], const char *token, bool add);
/* Runs grubby for token, the command said in out first: 0, -ENOENT when
 * it is not installed, -ECHILD when it failed, another -errno. */
int cd_grubby_run(const char *token, bool add, struct cd_steps *out);
/* Copies the files grubby edits (BLS entries, grubenv, /etc/default/grub)
 * into the folder bdir (under the root), keeping their paths: 0 or -errno. */
int cd_grubby_backup(int rootfd, const char *bdir);
/* Removes that folder and the copies in it (nothing followed): 0 or -errno. */
int cd_grubby_backup_remove(int rootfd, const char *bdir);

/* ---- bootcfg.c ---- */

/* The record under the root, parsed: 0; -ENOENT when there is none;
 * -EINVAL (why said) when it is not one fix wrote; another -errno when
 * unreadable. */
int cd_persist_read_record(int rootfd, struct cd_record *r, char *why, size_t whylen);
/* Look at the tree again (under the lock): the drop-ins there, the record,
 * what a later GRUB file does. */
void cd_persist_look(struct cd_persist_job *job);
/* The job done already: what is in place, and what is left (the reboot). */
void cd_persist_describe_in_place(const struct cd_persist_job *job, struct cd_steps *out);

/* ---- bootcfg_undo.c ---- */

/* Takes back every change r lists (see cd_persist_undo), each checked
 * first, then removes the record: 0 or -errno.  live: tools are run; in:
 * the root as said in out ("" live). */
int cd_persist_undo_record(int rootfd, bool live, const char *in, const struct cd_record *r, struct cd_steps *out);

#endif
