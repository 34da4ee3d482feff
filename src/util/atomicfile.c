/* SPDX-License-Identifier: MIT */
/*
 * atomicfile.c: whole-or-nothing file writes, and the folders they go in
 * (atomicfile.h).
 */
#include "util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary names differ within a process too (a hook and the textfile). */
static unsigned long tmp_counter;

int cd_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int cd_make_dirs(const char *dir, mode_t last_mode, char *failed, size_t failedlen)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s", dir);
	if (n < 0 || (size_t)n >= sizeof path)
		return -ENAMETOOLONG;
	if (n == 0)
		return -ENOENT;
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		bool last = c == '\0' || p[1] == '\0'; /* "a/b/" ends with b */
		*p = '\0';
		if (mkdir(path, last ? last_mode : 0755) != 0 && errno != EEXIST) {
			int e = errno;
			if (failed)
				snprintf(failed, failedlen, "%s", path);
			return -e;
		}
		*p = c;
		if (last)
			return 0;
	}
}

int cd_dir_is_ours(const char *dir, struct stat *st)
{
	struct stat own;
	if (!st)
		st = &own;
	if (lstat(dir, st) != 0)
		return -errno;
	if (!S_ISDIR(st->st_mode) || st->st_uid != geteuid() || (st->st_mode & 022))
		return -EPERM;
	return 0;
}

int cd_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	/* Some file systems cannot sync a folder: the rename is done anyway. */
	return rc == -EINVAL || rc == -EROFS ? 0 : rc;
}

int cd_parent_dir(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int n;
	if (!slash)
		n = snprintf(dir, cap, ".");
	else if (slash == path)
		n = snprintf(dir, cap, "/");
	else
		n = snprintf(dir, cap, "%.*s", (int)(slash - path), path);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int cd_sync_parent(const char *path)
{
	char dir[PATH_MAX];
	int rc = cd_parent_dir(path, dir, sizeof dir);
	return rc < 0 ? rc : cd_sync_dir(dir);
}

int cd_write_new(const char *tmp, const void *data, size_t len, mode_t mode)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (fd < 0)
		return -errno; /* not ours: left alone */
	int rc = fchmod(fd, mode & 07777) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = cd_write_all(fd, data, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int cd_publish(const char *tmp, const char *path, bool replace)
{
	int rc = 0;
	bool moved = false; /* tmp is gone: renamed to path */
	if (replace) {
		rc = rename(tmp, path) == 0 ? 0 : -errno;
		moved = rc == 0;
	} else if (link(tmp, path) != 0) {
		rc = -errno;
		/* A file system without hard links: a rename that, like link,
		 * never replaces. */
		if (rc != -EEXIST && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
			rc = 0, moved = true;
		else if (rc != -EEXIST && errno == EEXIST)
			rc = -EEXIST;
	}
	if (!moved)
		unlink(tmp);
	if (rc == 0)
		cd_sync_parent(path);
	return rc;
}

int cd_write_atomic(const char *path, const void *data, size_t len, mode_t mode, bool replace)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	if (!*base)
		return -EISDIR;
	/* Only a file is replaced (or a link, not followed): /dev/null or
	 * /dev/stdout given as a file name must not become a regular file
	 * for every program on the machine. */
	struct stat st;
	if (replace && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	/* /dev/stdout, /dev/stderr: links to one of this process's
	 * descriptors (/proc/self/fd/N), which a redirection may have made a
	 * regular file; the link is the system's, never ours to replace */
	char target[16];
	ssize_t tl = replace ? readlink(path, target, sizeof target) : -1;
	if (tl >= 6 && memcmp(target, "/proc/", 6) == 0)
		return -EINVAL;
	int n = snprintf(tmp, sizeof tmp, "%.*s.%s.tmp.%ld.%lu", dlen, path, base, (long)getpid(),
	                 tmp_counter++);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return -ENAMETOOLONG;
	int rc = cd_write_new(tmp, data, len, mode);
	return rc < 0 ? rc : cd_publish(tmp, path, replace);
}
