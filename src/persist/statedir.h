/* SPDX-License-Identifier: MIT */
/*
 * statedir.h: where clockdoctor keeps what must outlive a run but not the
 * boot (the clocksource record, csrestore.h; the TSC verdict,
 * verdictfile.h), and which boot wrote it.
 *
 * The folder is $CLOCKDOCTOR_STATE_DIR, default /run/clockdoctor: /run is
 * a tmpfs emptied at boot, and each file there also names the boot that
 * wrote it (/proc/sys/kernel/random/boot_id), so one left by another boot
 * is known for what it is.
 */
#ifndef CD_PERSIST_STATEDIR_H
#define CD_PERSIST_STATEDIR_H

#include <stddef.h>

#define CD_STATE_DIR_DEFAULT "/run/clockdoctor"

/* $CLOCKDOCTOR_STATE_DIR when set and not empty, else /run/clockdoctor. */
const char *cd_state_dir(void);

/* The state folder dir made when missing (/run itself is missing on
 * minimal systems, an initramfs), the last folder 0700; an existing one
 * must be a folder of ours alone, or root could be led to write through
 * someone's symlink.  0, or -errno with why in err (-EPERM: not ours
 * alone), what naming the file that was to be written there. */
int cd_state_dir_ready(const char *dir, const char *what, char *err, size_t errlen);

/* This boot's id into out ("" when unreadable); 0 or -errno. */
int cd_boot_id(char *out, size_t len);

#endif
