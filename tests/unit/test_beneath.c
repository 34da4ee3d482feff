/* SPDX-License-Identifier: MIT */
/* Unit tests of beneath.c: opening paths beneath a root folder, against
 * trees that try to lead out of it, with openat2 and with the walk. */
#include "util/beneath.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char top[64];      /* holds root/ and outside/ */
static char root[128];    /* the root the tests open beneath */
static char outside[128]; /* what no open may reach */

static void mklink(const char *target, const char *rel)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (symlink(target, p) != 0) {
		perror(p);
		exit(2);
	}
}

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	unit_put(p, text);
}

/* The tree: root/file, root/a/b/c, and links of every kind; outside/secret
 * beside the root. */
static void make_tree(void)
{
	char p[256];
	unit_tempdir(top, sizeof top, "beneath");
	snprintf(root, sizeof root, "%s/root", top);
	snprintf(outside, sizeof outside, "%s/outside", top);
	snprintf(p, sizeof p, "%s/a/b", root);
	unit_mkdirs(p);
	unit_mkdirs(outside);
	snprintf(p, sizeof p, "%s/secret", outside);
	unit_put(p, "SECRET\n");
	put("file", "inside\n");
	put("a/b/c", "deep\n");
	snprintf(p, sizeof p, "%s/secret", outside);
	mklink(p, "abs");                        /* absolute, out */
	mklink("/etc/passwd", "passwd");         /* absolute, out */
	mklink("../outside/secret", "rel");      /* relative, out */
	mklink("../../../outside/secret", "a/b/up"); /* a ".." chain, out */
	mklink("../../file", "a/b/in");          /* relative, in */
	mklink("b", "a/blink");                  /* a folder link, in */
	mklink("a/b", "ab");                     /* a folder link through two */
	mklink("../outside", "outdir");          /* a folder link, out */
	mklink("/dev/zero", "zero");             /* a device, absolute */
	mklink("../../../../../../../../../../dev/zero", "zero_rel");
	mklink("loop2", "loop1");                /* a loop */
	mklink("loop1", "loop2");
	mklink("self", "self");
	mklink("/file", "abs_in");               /* absolute, even to inside */
	snprintf(p, sizeof p, "%s/fifo", root);
	if (mkfifo(p, 0644) != 0) {
		perror(p);
		exit(2);
	}
}

static int rootfd;

static int open_read(const char *rel)
{
	return cd_beneath_open(rootfd, rel, O_RDONLY, 0);
}

/* The text read through fd (closed), or an error mark. */
static const char *slurp(int fd)
{
	static char buf[64];
	if (fd < 0) {
		snprintf(buf, sizeof buf, "(error %d)", fd);
		return buf;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void test_reads(void)
{
	CHECK_STR(slurp(open_read("file")), "inside\n");
	CHECK_STR(slurp(open_read("/file")), "inside\n");
	CHECK_STR(slurp(open_read("a/b/c")), "deep\n");
	CHECK_STR(slurp(open_read("a/b/in")), "inside\n");
	CHECK_STR(slurp(open_read("a/blink/c")), "deep\n");
	CHECK_STR(slurp(open_read("ab/c")), "deep\n");
	CHECK_STR(slurp(open_read("a/../file")), "inside\n");
	CHECK_STR(slurp(open_read("a/./b/../b/c")), "deep\n");
	int fd = open_read("");
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	fd = cd_beneath_open(rootfd, "a", O_RDONLY | O_DIRECTORY, 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(open_read("missing"), -ENOENT);
	CHECK_INT(open_read("file/x"), -ENOTDIR);
	CHECK_INT(cd_beneath_open(rootfd, "file", O_RDONLY | O_DIRECTORY, 0), -ENOTDIR);
}

static void test_escapes(void)
{
	CHECK_INT(open_read("abs"), -EXDEV);
	CHECK_INT(open_read("passwd"), -EXDEV);
	CHECK_INT(open_read("rel"), -EXDEV);
	CHECK_INT(open_read("a/b/up"), -EXDEV);
	CHECK_INT(open_read("outdir/secret"), -EXDEV);
	CHECK_INT(open_read(".."), -EXDEV);
	CHECK_INT(open_read("../outside/secret"), -EXDEV);
	CHECK_INT(open_read("a/../../outside/secret"), -EXDEV);
	CHECK_INT(open_read("a/b/../../../outside/secret"), -EXDEV);
	CHECK_INT(open_read("zero"), -EXDEV);
	CHECK_INT(open_read("zero_rel"), -EXDEV);
	CHECK_INT(open_read("abs_in"), -EXDEV);
	/* writes are held to the same */
	CHECK_INT(cd_beneath_open(rootfd, "rel", O_WRONLY, 0), -EXDEV);
	CHECK_INT(cd_beneath_open(rootfd, "outdir/new", O_WRONLY | O_CREAT | O_EXCL, 0600), -EXDEV);
	char p[256];
	snprintf(p, sizeof p, "%s/new", outside);
	CHECK(!unit_exists(p));
	snprintf(p, sizeof p, "%s/secret", outside);
	CHECK_STR(unit_get(p), "SECRET\n");
}

static void test_loops(void)
{
	CHECK_INT(open_read("loop1"), -ELOOP);
	CHECK_INT(open_read("self"), -ELOOP);
	CHECK_INT(open_read("loop1/x"), -ELOOP);
}

static void test_special_files(void)
{
	/* a FIFO: refused, at once (an open for reading would wait) */
	CHECK_INT(open_read("fifo"), -EINVAL);
	CHECK_INT(cd_beneath_open(rootfd, "fifo", O_RDONLY | O_NONBLOCK, 0), -EINVAL);
	/* a device node inside the tree (root may make one) */
	char p[256];
	snprintf(p, sizeof p, "%s/devzero", root);
	if (mknod(p, S_IFCHR | 0644, makedev(1, 5)) == 0) {
		CHECK_INT(open_read("devzero"), -EINVAL);
		unlink(p);
	}
}

/* Writes meet the same refusals, and never block on a FIFO. */
static void test_writes(void)
{
	CHECK_INT(cd_beneath_open(rootfd, "fifo", O_WRONLY, 0), -EINVAL);
	CHECK_INT(cd_beneath_open(rootfd, "fifo", O_WRONLY | O_CREAT | O_TRUNC, 0600), -EINVAL);
	CHECK_INT(cd_beneath_open(rootfd, "fifo", O_RDWR, 0), -EINVAL);
	CHECK_INT(cd_beneath_open(rootfd, "file", O_RDONLY | O_NOFOLLOW, 0) >= 0, 1);
	CHECK_INT(cd_beneath_open(rootfd, "a/b/in", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
	/* an existing file, and a new one without O_EXCL: opened, blocking */
	int fd = cd_beneath_open(rootfd, "a/b/c", O_WRONLY | O_APPEND, 0);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_INT(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
		CHECK_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	}
	fd = cd_beneath_open(rootfd, "a/b/made", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_INT(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
		close(fd);
	}
	char p[256];
	snprintf(p, sizeof p, "%s/a/b/made", root);
	CHECK(unit_exists(p));
	unlink(p);
	/* a read keeps O_NONBLOCK (harmless on a regular file) and O_CLOEXEC */
	fd = open_read("file");
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	}
}

static void test_create(void)
{
	char p[256];
	/* a new file, beneath a folder link inside the root */
	int fd = cd_beneath_open(rootfd, "a/blink/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof p, "%s/a/b/new", root);
	CHECK(unit_exists(p));
	/* a planted link at the name is never written through */
	CHECK_INT(cd_beneath_open(rootfd, "rel", O_WRONLY | O_CREAT | O_EXCL, 0600), -EEXIST);
	CHECK_INT(cd_beneath_open(rootfd, "rel", O_WRONLY | O_CREAT | O_TRUNC, 0600), -ELOOP);
	CHECK_INT(cd_beneath_open(rootfd, "a/b/in", O_WRONLY | O_CREAT | O_TRUNC, 0600), -ELOOP);
	CHECK_INT(cd_beneath_open(rootfd, "", O_WRONLY | O_CREAT, 0600) < 0, 1);
	snprintf(p, sizeof p, "%s/secret", outside);
	CHECK_STR(unit_get(p), "SECRET\n");
	snprintf(p, sizeof p, "%s/file", root);
	CHECK_STR(unit_get(p), "inside\n");
}

static void test_parent(void)
{
	char leaf[NAME_MAX + 1];
	struct stat st;
	int fd = cd_beneath_parent(rootfd, "a/b/c", leaf, sizeof leaf);
	CHECK(fd >= 0);
	CHECK_STR(leaf, "c");
	if (fd >= 0) {
		CHECK_INT(fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW), 0);
		CHECK(S_ISREG(st.st_mode));
		close(fd);
	}
	fd = cd_beneath_parent(rootfd, "/file", leaf, sizeof leaf);
	CHECK(fd >= 0);
	CHECK_STR(leaf, "file");
	if (fd >= 0)
		close(fd);
	/* the leaf itself is never followed: the link is what is named */
	fd = cd_beneath_parent(rootfd, "a/b/up/", leaf, sizeof leaf);
	CHECK(fd >= 0);
	CHECK_STR(leaf, "up");
	if (fd >= 0) {
		CHECK_INT(fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW), 0);
		CHECK(S_ISLNK(st.st_mode));
		close(fd);
	}
	CHECK_INT(cd_beneath_parent(rootfd, "outdir/secret", leaf, sizeof leaf), -EXDEV);
	CHECK_INT(cd_beneath_parent(rootfd, "a/..", leaf, sizeof leaf), -EINVAL);
	CHECK_INT(cd_beneath_parent(rootfd, "a/.", leaf, sizeof leaf), -EINVAL);
	CHECK_INT(cd_beneath_parent(rootfd, "", leaf, sizeof leaf), -EINVAL);
	CHECK_INT(cd_beneath_parent(rootfd, "/", leaf, sizeof leaf), -EINVAL);
	CHECK_INT(cd_beneath_parent(rootfd, "a/verylongname", leaf, 4), -ENAMETOOLONG);
}

static void test_mkdirs(void)
{
	char p[256];
	CHECK_INT(cd_beneath_mkdirs(rootfd, "m/n/o", 0700), 0);
	snprintf(p, sizeof p, "%s/m/n/o", root);
	struct stat st;
	CHECK_INT(lstat(p, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_INT(cd_beneath_mkdirs(rootfd, "/m/n/o/", 0700), 0); /* again: done */
	/* never through a link, even one inside the root */
	int rc = cd_beneath_mkdirs(rootfd, "a/blink/x", 0700);
	CHECK(rc == -ELOOP || rc == -ENOTDIR);
	rc = cd_beneath_mkdirs(rootfd, "outdir/x", 0700);
	CHECK(rc == -ELOOP || rc == -ENOTDIR);
	snprintf(p, sizeof p, "%s/x", outside);
	CHECK(!unit_exists(p));
	CHECK_INT(cd_beneath_mkdirs(rootfd, "m/../../x", 0700), -EXDEV);
	CHECK_INT(cd_beneath_mkdirs(rootfd, "file/x", 0700), -ENOTDIR);
}

static void test_root_open(void)
{
	char longroot[PATH_MAX + 10];
	memset(longroot, 'r', sizeof longroot - 1);
	longroot[0] = '/';
	longroot[sizeof longroot - 1] = '\0';
	CHECK_INT(cd_root_open(longroot), -ENAMETOOLONG);
	longroot[PATH_MAX] = '\0'; /* PATH_MAX bytes: still too long */
	CHECK_INT(cd_root_open(longroot), -ENAMETOOLONG);
	CHECK_INT(cd_root_open(""), -ENOENT);
	char p[256];
	snprintf(p, sizeof p, "%s/file", root);
	CHECK_INT(cd_root_open(p), -ENOTDIR);
	CHECK_INT(cd_beneath_open(-1, "file", O_RDONLY, 0), -EBADF);
}

static void run_all(const char *mode)
{
	unit_case("%s", mode);
	test_reads();
	test_escapes();
	test_loops();
	test_special_files();
	test_writes();
	test_create();
	test_parent();
	test_mkdirs();
	test_root_open();
	/* the folders and files made by this pass, for the next */
	char p[256];
	snprintf(p, sizeof p, "%s/a/b/new", root);
	unlink(p);
	snprintf(p, sizeof p, "%s/m", root);
	unit_rmtree(p);
}

int main(void)
{
	alarm(60); /* an open that waits on a FIFO fails the test, not hangs it */
	make_tree();
	rootfd = cd_root_open(root);
	CHECK(rootfd >= 0);
	run_all("openat2 (or the walk where the kernel lacks it)");
	cd_beneath_force_walk(true);
	run_all("the walk");
	cd_beneath_force_walk(false);
	close(rootfd);
	/* "/" as the root: nothing is outside it, so an absolute link is
	 * followed from it and ".." above it stays there, as for any program;
	 * a /proc magic link is still refused by openat2 (the walk reads its
	 * text, a path beneath "/" like any other) */
	for (int walk = 0; walk < 2; walk++) {
		unit_case("\"/\" as the root, %s", walk ? "the walk" : "openat2");
		cd_beneath_force_walk(walk);
		rootfd = cd_root_open("/");
		CHECK(rootfd >= 0);
		int fd = open_read("/proc/self/status");
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		char rel[256];
		snprintf(rel, sizeof rel, "%s/abs", root);
		CHECK_STR(slurp(open_read(rel)), "SECRET\n");
		snprintf(rel, sizeof rel, "../../..%s/a/b/up", root);
		CHECK_STR(slurp(open_read(rel)), "SECRET\n");
		if (!walk) {
			CHECK_INT(open_read("proc/self/fd/0"), -ELOOP);
			CHECK_INT(open_read("proc/self/root/etc/passwd"), -ELOOP);
		}
		snprintf(rel, sizeof rel, "%s/fifo", root);
		CHECK_INT(open_read(rel), -EINVAL);
		close(rootfd);
	}
	cd_beneath_force_walk(false);
	return unit_done("beneath");
}
