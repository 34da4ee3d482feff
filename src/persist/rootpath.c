/* SPDX-License-Identifier: MIT */
/*
 * rootpath.c: paths under the root folder fix --persist and --undo work in
 * ("/", or a tree under --root) (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cd_root_path(char *out, size_t cap, const char *root, const char *rel)
{
	int n = snprintf(out, cap, "%s%s", strcmp(root, "/") == 0 ? "" : root, rel);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool cd_root_exists(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	return cd_root_path(p, sizeof p, root, rel) == 0 && lstat(p, &st) == 0;
}

int cd_root_mkdir(const char *root, const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	int rc = cd_root_path(p, sizeof p, root, rel);
	if (rc == 0 && mkdir(p, mode) != 0 && errno != EEXIST)
		rc = -errno;
	return rc;
}
