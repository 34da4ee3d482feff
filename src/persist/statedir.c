/* SPDX-License-Identifier: MIT */
/*
 * statedir.c: the state folder and this boot's id (statedir.h).
 */
#include "persist/statedir.h"
#include "util/fsread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
