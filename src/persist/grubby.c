/* SPDX-License-Identifier: MIT */
/*
 * grubby.c: the Red Hat family's way of changing the kernel command line
 * for good: grubby --update-kernel=ALL --args=P (--remove-args=P), after
 * copying the files it edits into a backup folder (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"
#include "util/beneath.h"
#include "util/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Copy rel into backup folder bdir (both under the root), keeping its path
 * and mode. */
static int backup_copy(int rootfd, const char *bdir, const char *rel)
{
	size_t len;
	int err;
	struct stat st;
	int rc = cd_tree_lstat(rootfd, rel, &st);
	if (rc == -ENOENT || rc == -ENOTDIR || (rc == 0 && !S_ISREG(st.st_mode)))
		return 0;   /* nothing grubby edits */
	char *text = rc == 0 ? cd_tree_read(rootfd, rel, false, 16u << 20, &len, &err) : NULL;
	if (!text)
		return rc < 0 ? rc : err;
	char dst[CD_REL_MAX * 2];
	rc = snprintf(dst, sizeof dst, "%s%s", bdir, rel) >= (int)sizeof dst ? -ENAMETOOLONG : 0;
	for (char *s = dst + strlen(bdir) + 1; rc == 0 && (s = strchr(s, '/')); s++) {
		*s = '\0';
		rc = cd_tree_mkdir(rootfd, dst, 0700);
		rc = rc == -EEXIST ? 0 : rc;
		*s = '/';
	}
	if (rc == 0)
		rc = cd_tree_write_new(rootfd, dst, text, len, st.st_mode & 07777);
	free(text);
	return rc;
}

int cd_grubby_backup(int rootfd, const char *bdir)
{
	int rc = cd_tree_mkdir(rootfd, bdir, 0700);
	static const char *const files[] = { GRUB_DEFAULT, "/boot/grub2/grubenv", "/boot/grub/grubenv" };
	for (size_t i = 0; rc == 0 && i < sizeof files / sizeof files[0]; i++)
		rc = backup_copy(rootfd, bdir, files[i]);
	int fd = rc == 0 ? cd_beneath_open(rootfd, "/boot/loader/entries", O_RDONLY | O_DIRECTORY, 0) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d)
		close(fd);
	for (struct dirent *e; rc == 0 && d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		char rel[CD_REL_MAX];
		if (l > 5 && strcmp(e->d_name + l - 5, ".conf") == 0 &&
		    snprintf(rel, sizeof rel, "/boot/loader/entries/%s", e->d_name) < (int)sizeof rel)
			rc = backup_copy(rootfd, bdir, rel);
	}
	if (d)
		closedir(d);
	return rc;
}

/* Everything inside folder dfd removed, depth first; no link followed
 * (a link is removed as a name).  0 or -errno. */
static int empty_folder(int dfd, int depth)
{
	int rc = 0;
	DIR *d = cd_tree_opendir(dfd, &rc);
	struct stat st;
	for (const char *name; rc == 0 && (name = cd_tree_next(d, dfd, &st, &rc));) {
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < 16 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
			rc = sub < 0 ? (depth < 16 ? -errno : -ELOOP) : empty_folder(sub, depth + 1);
			if (sub >= 0)
				close(sub);
		}
		if (rc == 0 && unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT)
			rc = -errno;
	}
	if (d)
		closedir(d);
	return rc;
}

int cd_grubby_backup_remove(int rootfd, const char *bdir)
{
	int fd = cd_beneath_open(rootfd, bdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd < 0)
		return fd;
	int rc = empty_folder(fd, 0);
	close(fd);
	if (rc == 0)
		rc = cd_tree_remove(rootfd, bdir, true);
	return rc == -ENOENT ? 0 : rc;
}
