/* SPDX-License-Identifier: MIT */
/*
 * rootpath.c: the files and folders fix --persist and --undo touch, every
 * one beneath the root folder's descriptor ("/", or a tree under --root),
 * never through a link or ".." that leads out of it (util/beneath.h); each
 * name changed through its folder's descriptor (renameat, linkat,
 * unlinkat), so that a link on the way is never followed (bootcfg_impl.h).
 */
#include "persist/bootcfg_impl.h"
#include "util/atomicfile.h"
#include "util/beneath.h"
#include "util/fsread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_tree_lstat(int rootfd, const char *rel, struct stat *st)
{
	char leaf[256];
	int dfd = cd_beneath_parent(rootfd, rel, leaf, sizeof leaf);
	if (dfd < 0)
		return dfd;
	int rc = fstatat(dfd, leaf, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	close(dfd);
	return rc;
}

bool cd_tree_exists(int rootfd, const char *rel)
{
	struct stat st;
	return cd_tree_lstat(rootfd, rel, &st) == 0;
}

int cd_tree_mkdir(int rootfd, const char *rel, mode_t mode)
{
	char leaf[256];
	int dfd = cd_beneath_parent(rootfd, rel, leaf, sizeof leaf);
	if (dfd < 0)
		return dfd;
	int rc = mkdirat(dfd, leaf, mode) == 0 ? 0 : -errno;
	if (rc == 0 && fsync(dfd) != 0 && errno != EINVAL && errno != EROFS)
		rc = -errno;
	close(dfd);
	return rc;
}

char *cd_tree_read(int rootfd, const char *rel, bool follow, size_t max, size_t *len, int *err)
{
	struct stat st;
	int trunc = 0;
	*len = 0;
	*err = follow ? 0 : cd_tree_lstat(rootfd, rel, &st);
	if (*err == 0 && !follow && !S_ISREG(st.st_mode))
		*err = S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
	/* One byte more than max: a file of exactly max bytes is whole. */
	char *text = *err == 0 ? cd_read_beneath(rootfd, rel, max + 1, len, err, &trunc, &st) : NULL;
	if (text && (*len > max || !S_ISREG(st.st_mode))) {
		*err = *len > max ? -EFBIG : -EINVAL;
		free(text);
		text = NULL;
	}
	return text;
}

int cd_tree_write_new(int rootfd, const char *rel, const void *data, size_t len, mode_t mode)
{
	int fd = cd_beneath_open(rootfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode & 07777);
	if (fd < 0)
		return fd;   /* not ours: left alone */
	int rc = fchmod(fd, mode & 07777) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = cd_write_all(fd, data, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		cd_tree_remove(rootfd, rel, false);
	return rc;
}

/* Two names' folders and leaves: 0 or -errno (both closed on failure). */
static int two_parents(int rootfd, const char *a, const char *b, int *da, char *la, int *db, char *lb)
{
	*da = cd_beneath_parent(rootfd, a, la, 256);
	if (*da < 0)
		return *da;
	*db = cd_beneath_parent(rootfd, b, lb, 256);
	if (*db < 0) {
		close(*da);
		return *db;
	}
	return 0;
}

/* fsync a folder; a file system that cannot sync one counts as done. */
static int sync_fd(int dfd)
{
	return fsync(dfd) == 0 || errno == EINVAL || errno == EROFS ? 0 : -errno;
}

int cd_tree_rename(int rootfd, const char *from, const char *to, unsigned flags)
{
	int df, dt;
	char lf[256], lt[256];
	int rc = two_parents(rootfd, from, to, &df, lf, &dt, lt);
	if (rc < 0)
		return rc;
	rc = renameat2(df, lf, dt, lt, flags) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = sync_fd(dt);
	if (rc == 0)
		rc = sync_fd(df);
	close(df);
	close(dt);
	return rc;
}

int cd_tree_link(int rootfd, const char *from, const char *to)
{
	int df, dt;
	char lf[256], lt[256];
	int rc = two_parents(rootfd, from, to, &df, lf, &dt, lt);
	if (rc < 0)
		return rc;
	rc = linkat(df, lf, dt, lt, 0) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = sync_fd(dt);
	close(df);
	close(dt);
	return rc;
}

int cd_tree_remove(int rootfd, const char *rel, bool dir)
{
	char leaf[256];
	int dfd = cd_beneath_parent(rootfd, rel, leaf, sizeof leaf);
	if (dfd < 0)
		return dfd;
	int rc = unlinkat(dfd, leaf, dir ? AT_REMOVEDIR : 0) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = sync_fd(dfd);
	close(dfd);
	return rc;
}

DIR *cd_tree_opendir(int dfd, int *rc)
{
	int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!d) {
		*rc = -errno;
		if (lfd >= 0)
			close(lfd);
	}
	return d;
}

const char *cd_tree_next(DIR *d, int dfd, struct stat *st, int *rc)
{
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, e->d_name, st, AT_SYMLINK_NOFOLLOW) == 0)
			return e->d_name;
		if (errno != ENOENT) {
			*rc = -errno;
			return NULL;
		}
	}
	return NULL;
}

const char *cd_tree_strerror(int rc)
{
	switch (rc) {
	case -EXDEV:
		return "a symbolic link or \"..\" on the way leads out of the root folder";
	case -ELOOP:
		return "a symbolic link is in the way";
	default:
		return strerror(-rc);
	}
}
