/* SPDX-License-Identifier: MIT */
/*
 * verdictfact.c: the TSC verdict `clockdoctor tsc` saved for this boot, as
 * a fact (probe.h).  It is the measured evidence that lets a finding
 * advise a parameter that switches the kernel's TSC checks off
 * (diagnose/tscgate.c).  Live, the file is read as the library reads it
 * (persist/verdictfile.h: owned by root or us, writable by nobody else, of
 * this boot); in a snapshot, beneath its root, and only when the boot id
 * saved beside it matches.
 */
#include "persist/verdictfile.h"
#include "probe/probe.h"
#include "util/fsread.h"

#include "fastclock.h"

#include <stdio.h>
#include <string.h>

/* Where snapshot saves them, the live machine's default paths. */
#define SNAP_VERDICT "/run/clockdoctor/" CD_VERDICT_FILE
#define SNAP_BOOT_ID "/proc/sys/kernel/random/boot_id"

/* fc_verdict's 0 sound, 1 unknown, 2 unsound. */
static enum cd_saved_verdict from_library(int v)
{
	return v == 0 ? CD_SAVED_SOUND : v == 2 ? CD_SAVED_UNSOUND : CD_SAVED_UNKNOWN;
}

static void from_snapshot(struct cd_facts *f)
{
	char text[1024], boot[64];
	struct fc_verdict v;
	int n = cd_read_small(f->root, SNAP_VERDICT, text, sizeof text);
	if (n <= 0 || fc_verdict_parse(text, (size_t)n, &v) != 0)
		return;
	if (cd_read_small(f->root, SNAP_BOOT_ID, boot, sizeof boot) <= 0 || strcmp(boot, v.boot_id) != 0)
		return;
	f->saved_verdict = from_library(v.verdict);
	snprintf(f->saved_verdict_from, sizeof f->saved_verdict_from, "%s in the snapshot, of its boot", SNAP_VERDICT);
}

void cd_probe_saved_verdict(struct cd_facts *f)
{
	f->saved_verdict = CD_SAVED_NONE;
	if (!f->live) {
		from_snapshot(f);
		return;
	}
	char path[512], why[600];
	struct fc_verdict v;
	if (cd_verdict_read_path(path, sizeof path) != 0)
		return;
	if (cd_verdict_load(path, &v, why, sizeof why) != CD_VF_THIS_BOOT)
		return;
	f->saved_verdict = from_library(v.verdict);
	snprintf(f->saved_verdict_from, sizeof f->saved_verdict_from, "%.*s", (int)sizeof f->saved_verdict_from - 1, why);
}
