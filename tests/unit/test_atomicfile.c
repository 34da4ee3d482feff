/* SPDX-License-Identifier: MIT */
/* Unit tests of whole-or-nothing writes, in a folder under /tmp. */
#include "util/atomicfile.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* Entries in dir other than . and .. */
static int entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

/* The folders state files go in: made with their parents, the last with
 * its own mode; accepted only when ours alone. */
static void test_dirs(void)
{
	char deep[128], failed[128], file[128], link_dir[128];
	struct stat st;
	snprintf(deep, sizeof deep, "%s/run/cd/", dir);
	mode_t old = umask(0);
	CHECK_INT(cd_make_dirs(deep, 0700, failed, sizeof failed), 0);
	umask(old);
	CHECK_INT(stat(deep, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	snprintf(deep, sizeof deep, "%s/run", dir);
	CHECK_INT(stat(deep, &st), 0);
	CHECK_INT(st.st_mode & 0755, 0755);
	CHECK_INT(cd_make_dirs(deep, 0700, NULL, 0), 0); /* there already */
	CHECK_INT(cd_dir_is_ours(deep, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_INT(chmod(deep, 0777), 0);
	CHECK_INT(cd_dir_is_ours(deep, NULL), -EPERM);
	snprintf(link_dir, sizeof link_dir, "%s/run-link", dir);
	CHECK_INT(symlink(deep, link_dir), 0);
	CHECK_INT(cd_dir_is_ours(link_dir, NULL), -EPERM);
	snprintf(file, sizeof file, "%s/run/file", dir);
	unit_put(file, "x");
	CHECK_INT(cd_dir_is_ours(file, NULL), -EPERM);
	snprintf(deep, sizeof deep, "%s/run/file/sub", dir);
	CHECK_INT(cd_make_dirs(deep, 0755, failed, sizeof failed), -ENOTDIR);
	CHECK_STR(failed, deep);
	CHECK_INT(cd_make_dirs("", 0755, NULL, 0), -ENOENT);
	/* leave dir empty for main's counts */
	snprintf(deep, sizeof deep, "%s/run/cd", dir);
	CHECK(unlink(file) == 0 && unlink(link_dir) == 0 && rmdir(deep) == 0);
	snprintf(deep, sizeof deep, "%s/run", dir);
	CHECK_INT(rmdir(deep), 0);
}

/* The two steps with a temporary name of the caller's: an existing file
 * (or symlink) at it is never written; publishing without replace keeps
 * the file there; the temporary name is gone after publishing, either way. */
static void test_steps(void)
{
	char tmp[128], path[128];
	snprintf(tmp, sizeof tmp, "%s/steps.tmp", dir);
	snprintf(path, sizeof path, "%s/steps", dir);
	unit_put(tmp, "theirs");
	CHECK_INT(cd_write_new(tmp, "ours", 4, 0600), -EEXIST);
	CHECK_STR(unit_get(tmp), "theirs");
	unlink(tmp);
	CHECK_INT(cd_write_new(tmp, "ours", 4, 0600), 0);
	CHECK_INT(cd_publish(tmp, path, false), 0);
	CHECK_STR(unit_get(path), "ours");
	CHECK_STR(unit_get(tmp), "(absent)");
	CHECK_INT(cd_write_new(tmp, "again", 5, 0600), 0);
	CHECK_INT(cd_publish(tmp, path, false), -EEXIST);
	CHECK_STR(unit_get(path), "ours");
	CHECK_STR(unit_get(tmp), "(absent)");
	CHECK_INT(cd_write_new(tmp, "again", 5, 0600), 0);
	CHECK_INT(cd_publish(tmp, path, true), 0);
	CHECK_STR(unit_get(path), "again");
	CHECK_STR(unit_get(tmp), "(absent)");
	unlink(path);
}

int main(void)
{
	unit_tempdir(dir, sizeof dir, "atomic");
	char path[128], sub[128], link_path[128];
	snprintf(path, sizeof path, "%s/a.prom", dir);
	mode_t old = umask(077); /* the mode asked for wins over the umask */
	CHECK_INT(cd_write_atomic(path, "one\n", 4, 0644, true), 0);
	umask(old);
	CHECK_STR(unit_get(path), "one\n");
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0644);
	CHECK_INT(cd_write_atomic(path, "two\n", 4, 0600, true), 0);
	CHECK_STR(unit_get(path), "two\n");
	stat(path, &st);
	CHECK_INT(st.st_mode & 07777, 0600);
	/* No replace: an existing file stays as it is. */
	CHECK_INT(cd_write_atomic(path, "three\n", 6, 0644, false), -EEXIST);
	CHECK_STR(unit_get(path), "two\n");
	CHECK_INT(entries(), 1); /* no temporary file left */
	snprintf(sub, sizeof sub, "%s/new.cfg", dir);
	CHECK_INT(cd_write_atomic(sub, "x", 1, 0644, false), 0);
	CHECK_STR(unit_get(sub), "x");
	CHECK_INT(entries(), 2);
	/* Empty data is a file too. */
	CHECK_INT(cd_write_atomic(sub, "", 0, 0644, true), 0);
	CHECK_STR(unit_get(sub), "");
	/* Errors: no folder, a folder in the way, an empty name. */
	snprintf(sub, sizeof sub, "%s/missing/x", dir);
	CHECK_INT(cd_write_atomic(sub, "x", 1, 0644, true), -ENOENT);
	snprintf(sub, sizeof sub, "%s/d", dir);
	mkdir(sub, 0755);
	CHECK(cd_write_atomic(sub, "x", 1, 0644, true) < 0);
	CHECK_INT(entries(), 3);
	rmdir(sub);
	snprintf(sub, sizeof sub, "%s/", dir);
	CHECK_INT(cd_write_atomic(sub, "x", 1, 0644, true), -EISDIR);
	/* A symlink at the name is replaced, never written through. */
	snprintf(link_path, sizeof link_path, "%s/link.prom", dir);
	CHECK_INT(symlink(path, link_path), 0);
	CHECK_INT(cd_write_atomic(link_path, "new\n", 4, 0644, true), 0);
	CHECK_STR(unit_get(path), "two\n");
	CHECK_INT(lstat(link_path, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT(cd_sync_parent(path), 0);
	test_steps();
	test_dirs();
	CHECK_INT(cd_sync_dir(dir), 0);
	return unit_done("atomicfile");
}
