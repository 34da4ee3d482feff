/* SPDX-License-Identifier: MIT */
/*
 * fsread.c: bounded reads of files, under a root directory or at a path
 * (see fsread.h).
 */
#include "util/fsread.h"
#include "util/atomicfile.h"
#include "util/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t cd_read_full(int fd, void *buf, size_t len, const off_t *at)
{
	char *p = buf;
	size_t got = 0;
	while (got < len) {
		/* the offset summed unsigned: one near the top (a crafted ELF
		 * header) wraps to an offset pread refuses, never overflows */
		ssize_t r = at ? pread(fd, p + got, len - got, (off_t)((unsigned long long)*at + got))
		               : read(fd, p + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

char *cd_read_beneath(int rootfd, const char *path, size_t max, size_t *len, int *err, int *truncated,
                      struct stat *st)
{
	*len = 0;
	if (truncated)
		*truncated = 0;
	int fd = cd_beneath_open(rootfd, path, O_RDONLY, 0);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	struct stat own;
	if (!st)
		st = &own;
	int rc = fstat(fd, st) != 0 ? -errno : S_ISDIR(st->st_mode) ? -EISDIR : 0;
	if (rc < 0) {
		*err = rc;
		close(fd);
		return NULL;
	}
	size_t cap = max < 4096 ? max : 4096, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	for (;;) {
		ssize_t r = cd_read_full(fd, buf + n, cap - n, NULL);
		if (r < 0) {
			free(buf);
			close(fd);
			*err = (int)r;
			return NULL;
		}
		n += (size_t)r;
		if (n < cap)
			break; /* the end of the file */
		if (cap >= max) {
			if (truncated)
				*truncated = 1;
			break;
		}
		size_t ncap = cap * 2 > max ? max : cap * 2;
		char *nb = realloc(buf, ncap + 1);
		if (!nb) {
			free(buf);
			close(fd);
			*err = -ENOMEM;
			return NULL;
		}
		buf = nb;
		cap = ncap;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	*err = 0;
	return buf;
}

char *cd_read_file(const char *root, const char *path, size_t max, size_t *len, int *err, int *truncated)
{
	int rootfd = cd_root_open(root);
	if (rootfd < 0) {
		*len = 0;
		if (truncated)
			*truncated = 0;
		*err = rootfd;
		return NULL;
	}
	char *text = cd_read_beneath(rootfd, path, max, len, err, truncated, NULL);
	close(rootfd);
	return text;
}

char *cd_read_named(const char *path, size_t max, size_t *len, int *err, int *truncated)
{
	/* From this process's root every path means what open(2) makes of
	 * it (links followed, ".." allowed); a relative one is made absolute
	 * from the working folder first. */
	char abs[PATH_MAX];
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		int rc = getcwd(cwd, sizeof cwd) ? 0 : -errno;
		if (rc == 0 && (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, path) >= sizeof abs)
			rc = -ENAMETOOLONG;
		if (rc < 0) {
			*len = 0;
			if (truncated)
				*truncated = 0;
			*err = rc == -ERANGE ? -ENAMETOOLONG : rc;
			return NULL;
		}
		path = abs;
	}
	return cd_read_file("/", path, max, len, err, truncated);
}

int cd_read_raw(const char *path, char *buf, size_t cap, int flags)
{
	if (cap == 0)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	if (fd < 0)
		return -errno;
	ssize_t n = cd_read_full(fd, buf, cap - 1, NULL);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return (int)n;
}

int cd_read_small(const char *root, const char *path, char *buf, size_t cap)
{
	size_t len;
	int err, trunc;
	if (cap == 0)
		return -EINVAL;
	char *s = cd_read_file(root, path, 65536, &len, &err, &trunc);
	if (!s)
		return err;
	/* A NUL inside a sysfs attribute is junk: stop there. */
	len = strnlen(s, len);
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	free(s);
	return (int)len;
}

int cd_write_beneath(int rootfd, const char *path, const void *data, size_t len, mode_t mode, bool replace)
{
	char leaf[NAME_MAX + 1];
	int dirfd = cd_beneath_parent(rootfd, path, leaf, sizeof leaf);
	if (dirfd == -ENOENT) {
		/* the folders above it (path less its leaf and the slashes
		 * after), made beneath the root and never through a link, then
		 * the parent again */
		char parent[PATH_MAX];
		size_t n = strlen(path);
		while (n > 0 && path[n - 1] == '/')
			n--;
		n -= strlen(leaf);
		if (n >= sizeof parent)
			return -ENAMETOOLONG;
		memcpy(parent, path, n);
		parent[n] = '\0';
		int rc = cd_beneath_mkdirs(rootfd, parent, 0755);
		if (rc < 0)
			return rc;
		dirfd = cd_beneath_parent(rootfd, path, leaf, sizeof leaf);
	}
	if (dirfd < 0)
		return dirfd;
	/* replace: the name is removed first (unlinkat removes a planted
	 * link, never what it points to), and made again exclusively */
	if (replace && unlinkat(dirfd, leaf, 0) != 0 && errno != ENOENT) {
		int e = -errno;
		close(dirfd);
		return e;
	}
	int fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	int rc = fd < 0 ? -errno : 0;
	close(dirfd);
	if (rc < 0)
		return rc;
	if (fchmod(fd, mode & 07777) != 0) /* exactly mode, whatever the umask */
		rc = -errno;
	if (rc == 0)
		rc = cd_write_all(fd, data, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int cd_write_file(const char *root, const char *path, const char *data, size_t len)
{
	int rootfd = cd_root_open(root);
	if (rootfd < 0)
		return rootfd;
	int rc = cd_write_beneath(rootfd, path, data, len, 0644, true);
	close(rootfd);
	return rc;
}
