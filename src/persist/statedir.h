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

/* This boot's id into out ("" when unreadable); 0 or -errno. */
int cd_boot_id(char *out, size_t len);

#endif
