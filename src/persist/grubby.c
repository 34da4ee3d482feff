/* SPDX-License-Identifier: MIT */
/*
 * grubby.c: the Red Hat family's way of changing the kernel command line
 * for good: grubby --update-kernel=ALL --args=P (--remove-args=P), after
 * copying the files it edits into a backup folder (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"
#include "util/atomicfile.h"
#include "util/fsread.h"
#include "util/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cd_grubby_argv(char *buf, size_t cap, char *argv[4], const char *token, bool add)
{
	snprintf(buf, cap, "%s=%s", add ? "--args" : "--remove-args", token);
	argv[0] = "grubby";
	argv[1] = "--update-kernel=ALL";
	argv[2] = buf;
	argv[3] = NULL;
}

int cd_grubby_run(const char *token, bool add, struct cd_steps *out)
{
	char arg[CD_NAME_MAX * 2 + 20], *argv[4];
	cd_grubby_argv(arg, sizeof arg, argv, token, add);
	cd_step(out, "$ grubby --update-kernel=ALL %s", arg);
	int st = cd_spawn_and_wait(argv, NULL, TOOL_TIMEOUT_MS);
	return st == 0 ? 0 : st > 0 ? -ECHILD : st;
}

/* Copy root/rel into backup folder bdir (relative), keeping its path. */
static int backup_copy(const char *root, const char *bdir, const char *rel)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, rel, 16u << 20, &len, &err, &trunc);
	if (!text)
		return err == -ENOENT ? 0 : err;
	char dst[CD_REL_MAX], p[PATH_MAX];
	struct stat st;
	int rc = snprintf(dst, sizeof dst, "%s%s", bdir, rel) >= (int)sizeof dst ? -ENAMETOOLONG : 0;
	for (char *s = dst + strlen(bdir) + 1; rc == 0 && (s = strchr(s, '/')); s++) {
		*s = '\0';
		rc = cd_root_mkdir(root, dst, 0700);
		*s = '/';
	}
	if (rc == 0 && (rc = cd_root_path(p, sizeof p, root, rel)) == 0 && stat(p, &st) != 0)
		rc = -errno;
	if (rc == 0 && (rc = cd_root_path(p, sizeof p, root, dst)) == 0)
		rc = cd_write_atomic(p, text, len, st.st_mode & 07777, false);
	free(text);
	return rc;
}

int cd_grubby_backup(const char *root, const char *bdir)
{
	int rc = cd_root_mkdir(root, bdir, 0700);
	static const char *const files[] = { GRUB_DEFAULT, "/boot/grub2/grubenv", "/boot/grub/grubenv" };
	for (size_t i = 0; rc == 0 && i < sizeof files / sizeof files[0]; i++)
		rc = backup_copy(root, bdir, files[i]);
	char dir[PATH_MAX];
	DIR *d = rc == 0 && cd_root_path(dir, sizeof dir, root, "/boot/loader/entries") == 0 ? opendir(dir) : NULL;
	for (struct dirent *e; rc == 0 && d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		char rel[CD_REL_MAX];
		if (l > 5 && strcmp(e->d_name + l - 5, ".conf") == 0 &&
		    snprintf(rel, sizeof rel, "/boot/loader/entries/%s", e->d_name) < (int)sizeof rel)
			rc = backup_copy(root, bdir, rel);
	}
	if (d)
		closedir(d);
	return rc;
}
