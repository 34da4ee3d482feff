/* SPDX-License-Identifier: MIT */
/*
 * fsread.c: bounded reads of files, under a root directory or at a path
 * (see fsread.h).
 */
#include "util/fsread.h"
#include "util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_path_join(char *out, size_t cap, const char *root, const char *path)
{
	size_t rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	while (*path == '/')
		path++;
	int n = snprintf(out, cap, "%.*s/%s", (int)rl, root, path);
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return 0;
}

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

char *cd_read_file(const char *root, const char *path, size_t max, size_t *len,
                   int *err, int *truncated)
{
	char full[4096];
	int rc = cd_path_join(full, sizeof full, root, path);
	*len = 0;
	if (truncated)
		*truncated = 0;
	if (rc < 0) {
		*err = rc;
		return NULL;
	}
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		*err = -EISDIR;
		return NULL;
	}
	size_t cap = 4096, n = 0;
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

int cd_write_file(const char *root, const char *path, const char *data, size_t len)
{
	char full[4096], parent[4096];
	int rc = cd_path_join(full, sizeof full, root, path);
	if (rc < 0)
		return rc;
	snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(full, '/') - full), full);
	rc = parent[0] ? cd_make_dirs(parent, 0755, NULL, 0) : 0;
	if (rc < 0)
		return rc;
	int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = cd_write_all(fd, data, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}
