/*
 * fsread.c: bounded reads of files under a root directory (see fsread.h).
 */
#include "util/fsread.h"

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
		if (n == cap) {
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
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(buf);
			close(fd);
			*err = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	*err = 0;
	return buf;
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

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0755);
		int e = errno;
		*p = '/';
		if (rc < 0 && e != EEXIST)
			return -e;
	}
	return 0;
}

int cd_write_file(const char *root, const char *path, const char *data, size_t len)
{
	char full[4096];
	int rc = cd_path_join(full, sizeof full, root, path);
	if (rc < 0)
		return rc;
	rc = mkdirs(full);
	if (rc < 0)
		return rc;
	int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0)
		return -errno;
	return 0;
}
