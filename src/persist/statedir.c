/* SPDX-License-Identifier: MIT */
/*
 * statedir.c: the state folder and this boot's id (statedir.h).
 */
#include "persist/statedir.h"
#include "util/atomicfile.h"
#include "util/fsread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cd_state_dir(void)
{
	const char *d = getenv("CLOCKDOCTOR_STATE_DIR");
	return d && *d ? d : CD_STATE_DIR_DEFAULT;
}

int cd_boot_id(char *out, size_t len)
{
	int n = cd_read_raw("/proc/sys/kernel/random/boot_id", out, len, 0);
	if (n < 0) {
		if (len > 0)
			out[0] = '\0';
		return n;
	}
	out[strcspn(out, " \t\r\n")] = '\0';
	return out[0] ? 0 : -EINVAL;
}

int cd_state_dir_ready(const char *dir, const char *what, char *err, size_t errlen)
{
	int md = cd_make_dirs(dir, 0700, NULL, 0);
	if (md == 0)
		md = cd_dir_is_ours(dir, NULL);
	if (md == -EPERM)
		snprintf(err, errlen, "%s is not a folder of ours alone (it must be owned by uid %ld and "
		         "not writable by others): not writing %s there", dir, (long)geteuid(), what);
	else if (md < 0)
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-md));
	return md;
}
