/* SPDX-License-Identifier: MIT */
/*
 * verdictfile.h: the per-boot TSC verdict that `clockdoctor tsc` leaves for
 * libfastclock and `clockdoctor run`.
 *
 * A process that starts under the accelerator cannot spend a second
 * measuring the TSC, so `clockdoctor tsc` (as root) saves what it judged in
 * $CLOCKDOCTOR_STATE_DIR/tsc-verdict (default /run/clockdoctor/tsc-verdict,
 * FC_VERDICT_PATH of include/fastclock.h, which documents the format):
 *
 *   boot_id=5d1c...          /proc/sys/kernel/random/boot_id
 *   verdict=sound            sound, unknown or unsound
 *   counter_hz=2596130166    the measured frequency (0: none)
 *   clocksource=hpet         the kernel's clocksource when judged
 *   time=1795381234          when, in unix seconds
 *   counter=x86-tsc          which counter was judged (a key of our own)
 *
 * /run is a tmpfs emptied at boot, and boot_id ties the verdict to one boot
 * anyway.  The file is written whole or not at all (a temporary file in the
 * same folder, then rename), mode 0644 in a folder of ours (0755, owned by
 * the writer, writable by nobody else): the library trusts it only when no
 * other user could have written it.
 */
#ifndef CD_PERSIST_VERDICTFILE_H
#define CD_PERSIST_VERDICTFILE_H

#include "measure/tsc.h"
#include "persist/statedir.h"
#include "probe/facts.h"

#include "fastclock.h"

#include <stddef.h>

#define CD_VERDICT_FILE "tsc-verdict"

/* The file the library will read: $FASTCLOCK_VERDICT when set (the
 * library's own override), else the state folder's tsc-verdict.  Returns 0,
 * or -ENAMETOOLONG. */
int cd_verdict_read_path(char *out, size_t len);

/* The file's text.  hz <= 0 writes counter_hz=0 (none).  counter (NULL
 * or "": left out) adds a line counter=KIND ("x86-tsc", "arm64-cntvct"),
 * which the library's parser passes over as a key it does not know.
 * Returns its length, or -ENAMETOOLONG when it does not fit, -EINVAL for a
 * value that would break the format (a newline, '=', an empty boot id). */
int cd_verdict_format(char *buf, size_t len, const char *boot_id, enum cd_tsc_verdict v, double hz,
                      const char *clocksource, long long time, const char *counter);

/* Writes text atomically as dir/tsc-verdict, creating dir (and its parents)
 * 0755.  0, or -errno with the reason in err (for people: which folder or
 * file, and why; -EPERM: dir is not a folder of ours alone). */
int cd_verdict_write(const char *dir, const char *text, size_t len, char *err, size_t errlen);

/* The verdict of a judged report, saved in cd_state_dir().  0, or -errno;
 * msg says where it was saved, or why it could not be (not root; -EXDEV:
 * this binary runs under an emulator of another architecture, qemu-user,
 * whose counter is not the machine's). */
int cd_verdict_save(const struct cd_facts *f, const struct cd_tsc_report *t, char *msg, size_t msglen);

/* What the verdict file at path says about this boot. */
enum cd_verdict_state {
	CD_VF_NONE,        /* no file */
	CD_VF_UNUSABLE,    /* unreadable, malformed, or not safely owned: why says */
	CD_VF_OTHER_BOOT,  /* left by another boot */
	CD_VF_THIS_BOOT,   /* *v holds this boot's verdict */
};

enum cd_verdict_state cd_verdict_load(const char *path, struct fc_verdict *v, char *why, size_t whylen);

#endif
