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
 *   grubby.c        the Red Hat family's grubby, and the copies taken first
 *   rootpath.c      paths under the root folder
 */
#ifndef CD_BOOTCFG_IMPL_H
#define CD_BOOTCFG_IMPL_H

#include "persist/persist.h"

#include <stddef.h>
#include <sys/types.h>

#define GRUB_D "/etc/default/grub.d"
#define GRUB_DEFAULT "/etc/default/grub"
#define GRUB_LEGACY_MENU "/boot/grub/menu.lst"
#define TOOL_TIMEOUT_MS (5 * 60 * 1000)  /* update-grub probes every disk: minutes, not hours */

/* ---- rootpath.c ---- */

/* root + rel ("/" + "/etc" is "/etc"): 0, or -ENAMETOOLONG. */
int cd_root_path(char *out, size_t cap, const char *root, const char *rel);
/* Whether root/rel exists (a link counts, whatever it points to). */
bool cd_root_exists(const char *root, const char *rel);
/* mkdir root/rel: 0 when made or there already, else -errno. */
int cd_root_mkdir(const char *root, const char *rel, mode_t mode);

/* ---- grubdropin.c ---- */

/* The drop-in that adds token to the kernel command line, and the one that
 * removes it: d->path and d->content. */
void cd_dropin_add(struct cd_dropin *d, const char *token);
void cd_dropin_remove(struct cd_dropin *d, const char *token);
/* Whether token is in /etc/default/grub or a drop-in (other than ours). */
bool cd_grub_config_has(const char *root, const char *token);

/* ---- grubby.c ---- */

/* grubby's argument vector for adding (or removing) token: argv[] points
 * into buf, and argv[2] is the --args=/--remove-args= word. */
void cd_grubby_argv(char *buf, size_t cap, char *argv[4], const char *token, bool add);
/* Runs grubby for token, the command said in out first: 0, -ENOENT when
 * it is not installed, -ECHILD when it failed, another -errno. */
int cd_grubby_run(const char *token, bool add, struct cd_steps *out);
/* Copies the files grubby edits (BLS entries, grubenv, /etc/default/grub)
 * into the folder bdir (under root), keeping their paths: 0 or -errno. */
int cd_grubby_backup(const char *root, const char *bdir);

/* ---- bootcfg.c ---- */

/* The record under root, parsed: 0; -ENOENT when there is none; -EINVAL
 * (why said) when it is not one fix wrote; another -errno when unreadable. */
int cd_persist_read_record(const char *root, struct cd_record *r, char *why, size_t whylen);
/* The job done already: what is in place, and what is left (the reboot). */
void cd_persist_describe_in_place(const struct cd_persist_job *job, struct cd_steps *out);

/* ---- bootcfg_undo.c ---- */

/* Takes back every change r lists (see cd_persist_undo), and removes the
 * record file when remove_record: 0 or -errno. */
int cd_persist_undo_record(const char *root, const struct cd_record *r, bool remove_record, struct cd_steps *out);

#endif
