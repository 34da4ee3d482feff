/* SPDX-License-Identifier: MIT */
/*
 * csswitch.h: switching the kernel's clocksource, and always switching back.
 *
 * Writing a name to .../clocksource0/current_clocksource changes how every
 * program on the machine reads the time, so a command that does it must put
 * the original back on every exit path:
 *
 *   - normal end and errors: cd_cs_end();
 *   - signals that end the process (TERM, HUP, INT, QUIT, PIPE, ALRM, USR1,
 *     USR2, XCPU, XFSZ, VTALRM): handlers installed by cd_cs_begin() write the
 *     original back with open/write/close only (async-signal-safe), then let
 *     the signal end the process as it would have;
 *   - SIGKILL, a crash, a power cut: cd_cs_begin() first writes a record of
 *     the original (persist/csrestore.h), and cd_cs_recover() run by the
 *     next command that switches, or by `clockdoctor bench --restore`, puts
 *     it back and removes the record.
 *
 * Nothing here prints: results come back as return values and messages in
 * the caller's buffer, so that other commands (a later `fix`) can use it.
 * The sysfs root is a parameter: tests point it at a fake tree where
 * current_clocksource is a plain file.
 */
#ifndef CD_CSSWITCH_H
#define CD_CSSWITCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define CD_CS_NAME_MAX 64
#define CD_CS_MAX 16
#define CD_CS_RECORD_NAME "clocksource.restore"

struct cd_cs {
	char current_path[PATH_MAX];
	char available_path[PATH_MAX];
	char state_dir[PATH_MAX];
	char record_path[PATH_MAX];
	char original[CD_CS_NAME_MAX];
	bool begun;             /* record written, restore armed, handlers installed */
	/* A name was written to current_clocksource since cd_cs_begin(): the
	 * kernel keeps it as its choice even when it did not switch (a refused
	 * or deferred override), so cd_cs_end() must write the original back
	 * even when the current clocksource already is the original. */
	bool wrote;
};

/* Where things are.  sysfs_root NULL: $CLOCKDOCTOR_SYSFS, else "/sys";
 * state_dir NULL: $CLOCKDOCTOR_STATE_DIR, else "/run/clockdoctor".
 * Returns 0, or -ENAMETOOLONG. */
int cd_cs_init(struct cd_cs *cs, const char *sysfs_root, const char *state_dir);

/* A clocksource name as the kernel spells them: letters, digits, '_', '-',
 * '.', at most CD_CS_NAME_MAX - 1 characters. */
bool cd_cs_name_valid(const char *name);

/* The current clocksource; 0 or -errno (-EINVAL: not a valid name). */
int cd_cs_current(const struct cd_cs *cs, char *name, size_t len);

/* The available clocksources, in the kernel's order; the count or -errno. */
int cd_cs_available(const struct cd_cs *cs, char names[][CD_CS_NAME_MAX], int max);

/* Whether name is among the available clocksources. */
bool cd_cs_is_available(const struct cd_cs *cs, const char *name);

/* 0 when this process may write current_clocksource, else -errno with why
 * in err (not root, or no such file). */
int cd_cs_writable(const struct cd_cs *cs, char *err, size_t errlen);

/* Before the first switch: remember the current clocksource, write the
 * record, arm the signal-safe restore and install its handlers (only where
 * the signal's action is the default; SIGINT only when catch_sigint, for a
 * caller that handles Ctrl-C itself and calls cd_cs_restore_signal_safe()).
 * -EEXIST when a record of an earlier run is there: cd_cs_recover()
 * (persist/csrestore.h) first. */
int cd_cs_begin(struct cd_cs *cs, bool catch_sigint, char *err, size_t errlen);

/* Switch to name (which must be in the available list) and read it back:
 * 0, or -errno with why in err (-ENOENT not available, -EIO the kernel kept
 * another). */
int cd_cs_switch(struct cd_cs *cs, const char *name, char *err, size_t errlen);

/* Switch back to the original, confirm it, disarm, remove the record.  0, or
 * -errno with why in err (the record then stays, for --restore). */
int cd_cs_end(struct cd_cs *cs, char *err, size_t errlen);

/* Keep the switch: the caller decided the clocksource it switched to stays
 * (`fix --apply` after measuring a gain).  Disarms the restore, puts the
 * signal actions back and removes the record, without writing
 * current_clocksource.  0, or -errno with why in err (the record could not
 * be removed: a later run's cd_cs_recover() would switch back, so the
 * caller must say so). */
int cd_cs_keep(struct cd_cs *cs, char *err, size_t errlen);

/* Put original back as the kernel's clocksource, leaving no pin where
 * there was none, and read it back: 0, or -errno with why in err.  For
 * cd_cs_end() and cd_cs_recover(). */
int cd_cs_put_back(const struct cd_cs *cs, const char *original, char *err, size_t errlen);

/* Async-signal-safe: write the original back if a switch is armed, and
 * remove the record once the kernel confirms it.  For a caller's own signal
 * handler. */
void cd_cs_restore_signal_safe(void);

#endif
