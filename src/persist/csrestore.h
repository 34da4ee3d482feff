/* SPDX-License-Identifier: MIT */
/*
 * csrestore.h: the record of the clocksource to put back, and putting it
 * back after a run that could not (SIGKILL, a crash, a power cut).
 *
 * measure/csswitch.h switches the clocksource and restores it on every exit
 * path it lives through; the record is what survives the others.
 * cd_cs_begin() writes it before anything is switched
 * (CLOCKDOCTOR_STATE_DIR, default /run/clockdoctor, file
 * clocksource.restore: complete or absent), cd_cs_end() and cd_cs_keep()
 * remove it, and cd_cs_recover(), run by the next command that switches or
 * by `clockdoctor bench --restore`, puts the original back and removes it.
 */
#ifndef CD_PERSIST_CSRESTORE_H
#define CD_PERSIST_CSRESTORE_H

#include "measure/csswitch.h"

#include <stddef.h>

/* Write the record of cs->original at cs->record_path, creating the state
 * folder (0700) when missing.  0, or -errno with why in err (-EPERM: the
 * folder is not ours alone; -EEXIST: another run's record appeared). */
int cd_cs_record_write(const struct cd_cs *cs, char *err, size_t errlen);

/* Remove the record (none there counts as removed) and sync its folder.
 * 0 or -errno. */
int cd_cs_record_remove(const struct cd_cs *cs);

enum cd_cs_recovery {
	CD_CS_NO_RECORD,        /* nothing to do */
	CD_CS_RESTORED,         /* switched back to the recorded original */
	CD_CS_WAS_ORIGINAL,     /* already on the original: record removed */
	CD_CS_OWNER_RUNNING,    /* the run that wrote it is still going: untouched */
	CD_CS_CORRUPT,          /* unreadable record: moved aside to *.corrupt */
	CD_CS_UNAVAILABLE,      /* the original is no longer available: record removed */
	CD_CS_FAILED,           /* could not switch back: the record stays */
};

/* Put back the clocksource a record says, after a run that could not
 * (SIGKILL, a crash).  msg always says what happened, in a sentence. */
enum cd_cs_recovery cd_cs_recover(struct cd_cs *cs, char *msg, size_t msglen);

#endif
