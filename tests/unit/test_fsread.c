/* SPDX-License-Identifier: MIT */
/* Unit tests of fsread.c: bounded, defensive reads under a root. */
#include "util/beneath.h"
#include "util/fsread.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void test_read(void)
{
	CHECK_INT(cd_write_file(dir, "/a/b/c.txt", "hpet \n\n", 7), 0);
	char buf[16];
	CHECK_INT(cd_read_small(dir, "/a/b/c.txt", buf, sizeof buf), 4);
	CHECK_STR(buf, "hpet");
	CHECK_INT(cd_read_small(dir, "/missing", buf, sizeof buf), -ENOENT);
	CHECK_INT(cd_read_small(dir, "/a", buf, sizeof buf), -EISDIR);
	/* A value longer than the buffer is cut, and NUL-terminated. */
	CHECK_INT(cd_write_file(dir, "/long", "0123456789abcdefghij", 20), 0);
	CHECK_INT(cd_read_small(dir, "/long", buf, sizeof buf), 15);
	CHECK_STR(buf, "0123456789abcde");
	/* A NUL inside an attribute ends it. */
	CHECK_INT(cd_write_file(dir, "/nul", "tsc\0junk", 8), 0);
	CHECK_INT(cd_read_small(dir, "/nul", buf, sizeof buf), 3);
	/* An empty file. */
	CHECK_INT(cd_write_file(dir, "/empty", "", 0), 0);
	CHECK_INT(cd_read_small(dir, "/empty", buf, sizeof buf), 0);

	/* A file larger than the cap is cut at the cap and says so. */
	size_t big = 100000;
	char *data = malloc(big);
	memset(data, 'x', big);
	CHECK_INT(cd_write_file(dir, "/big", data, big), 0);
	size_t len;
	int err, trunc;
	char *got = cd_read_file(dir, "/big", 5000, &len, &err, &trunc);
	CHECK(got != NULL);
	CHECK_INT(len, 5000);
	CHECK_INT(trunc, 1);
	CHECK_INT(got[len], '\0');
	free(got);
	got = cd_read_file(dir, "/big", 1 << 20, &len, &err, &trunc);
	CHECK_INT(len, big);
	CHECK_INT(trunc, 0);
	free(got);
	free(data);
	/* /proc files report size 0 but have contents. */
	got = cd_read_file("/", "/proc/self/stat", 1 << 16, &len, &err, &trunc);
	CHECK(got != NULL && len > 0);
	free(got);

	/* A file at a path, as it is: no trimming, cut at the buffer, a symlink
	 * refused on request; and a read at an offset. */
	char path[96], link_path[96];
	snprintf(path, sizeof path, "%s/raw", dir);
	CHECK_INT(cd_write_file(dir, "/raw", "tsc \nhpet\n", 10), 0);
	CHECK_INT(cd_read_raw(path, buf, sizeof buf, 0), 10);
	CHECK_STR(buf, "tsc \nhpet\n");
	CHECK_INT(cd_read_raw(path, buf, 8, 0), 7);
	CHECK_STR(buf, "tsc \nhp");
	snprintf(link_path, sizeof link_path, "%s/raw-link", dir);
	CHECK_INT(symlink(path, link_path), 0);
	CHECK_INT(cd_read_raw(link_path, buf, sizeof buf, 0), 10);
	CHECK_INT(cd_read_raw(link_path, buf, sizeof buf, O_NOFOLLOW), -ELOOP);
	CHECK_INT(cd_read_raw(path, buf, 0, 0), -EINVAL);
	int fd = open(path, O_RDONLY);
	off_t at = 5;
	CHECK_INT(cd_read_full(fd, buf, 4, &at), 4);
	CHECK(memcmp(buf, "hpet", 4) == 0);
	at = 8;
	CHECK_INT(cd_read_full(fd, buf, 4, &at), 2); /* the end comes first */
	CHECK_INT(cd_read_full(fd, buf, 3, NULL), 3);
	CHECK(memcmp(buf, "tsc", 3) == 0);
	close(fd);
}

/* A tree with links out, a FIFO and a planted link at a name to write:
 * nothing outside is read or written. */
static void test_beneath_root(void)
{
	char root[96], secret[96], p[160];
	snprintf(root, sizeof root, "%s/tree", dir);
	snprintf(secret, sizeof secret, "%s/secret", dir);
	unit_put(secret, "SECRET");
	snprintf(p, sizeof p, "%s/proc", root);
	unit_mkdirs(p);
	snprintf(p, sizeof p, "%s/proc/cmdline", root);
	CHECK_INT(symlink(secret, p), 0);
	snprintf(p, sizeof p, "%s/proc/uptime", root);
	CHECK_INT(symlink("../../secret", p), 0);
	snprintf(p, sizeof p, "%s/proc/fifo", root);
	CHECK_INT(mkfifo(p, 0600), 0);
	char buf[64];
	CHECK_INT(cd_read_small(root, "/proc/cmdline", buf, sizeof buf), -EXDEV);
	CHECK_INT(cd_read_small(root, "/proc/uptime", buf, sizeof buf), -EXDEV);
	CHECK_INT(cd_read_small(root, "/proc/fifo", buf, sizeof buf), -EINVAL);
	CHECK_INT(cd_read_small(root, "/../secret", buf, sizeof buf), -EXDEV);
	/* writing over a planted link replaces the link, never its target */
	CHECK_INT(cd_write_file(root, "/proc/cmdline", "quiet", 5), 0);
	CHECK_STR(unit_get(secret), "SECRET");
	CHECK_INT(cd_read_small(root, "/proc/cmdline", buf, sizeof buf), 5);
	/* without replacing: refused */
	int rootfd = cd_root_open(root);
	CHECK_INT(cd_write_beneath(rootfd, "/proc/uptime", "1", 1, 0600, false), -EEXIST);
	CHECK_INT(cd_write_beneath(rootfd, "/proc/new", "1", 1, 0600, false), 0);
	struct stat st;
	snprintf(p, sizeof p, "%s/proc/new", root);
	CHECK_INT(stat(p, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	/* the folders above a new file are made, never through a link */
	snprintf(p, sizeof p, "%s/out", root);
	CHECK_INT(symlink(dir, p), 0);
	CHECK(cd_write_beneath(rootfd, "/out/x/y", "1", 1, 0600, false) < 0);
	snprintf(p, sizeof p, "%s/x", dir);
	CHECK(!unit_exists(p));
	CHECK_INT(cd_write_beneath(rootfd, "/a/b/c", "1", 1, 0644, false), 0);
	close(rootfd);
}

int main(void)
{
	unit_tempdir(dir, sizeof dir, "fsread");
	test_read();
	test_beneath_root();
	return unit_done("fsread");
}
