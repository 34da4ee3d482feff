/* SPDX-License-Identifier: MIT */
/*
 * recordfile.c: the lock fix --persist and --undo hold, and the record put
 * in place and taken away whole (bootcfg_impl.h).
 *
 * A kill -9 may come between any two system calls.  So the record is never
 * half there: where its folders are missing (a tree without /var/lib), they
 * are made under a hidden name beside the first missing one
 * (/var/.lib.clockdoctor-new), the record written and synced inside, and
 * the whole renamed into place; where they exist, the record is written as
 * .fix.record.clockdoctor-new and renamed.  Undo takes it away the same way
 * in reverse (one rename to the hidden name, then the removal).  What a kill
 * leaves is always under those fixed names, which the next run removes
 * (cd_record_leftovers) after checking that they hold nothing else.
 */
#include "persist/bootcfg_impl.h"
#include "persist/statedir.h"
#include "util/beneath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_FILE "fix.lock"
#define RECORD_NAME "fix.record"
#define RECORD_NEW "." RECORD_NAME CD_NEW_SUFFIX

int cd_persist_lock(int rootfd, bool live, struct cd_steps *out)
{
	char path[PATH_MAX], err[PATH_MAX + 200];
	int fd;
	if (live) {
		const char *dir = cd_state_dir();
		int rc = cd_state_dir_ready(dir, "the lock", err, sizeof err);
		if (rc == 0 && snprintf(path, sizeof path, "%s/" LOCK_FILE, dir) >= (int)sizeof path)
			rc = -ENAMETOOLONG;
		if (rc == -ENAMETOOLONG)
			snprintf(err, sizeof err, "the state folder's name is too long");
		/* The folder is ours alone: nobody else can have put a link there,
		 * and the file is never removed, so every run locks the same one. */
		fd = rc < 0 ? rc : open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && rc == 0) {
			rc = -errno;
			snprintf(err, sizeof err, "cannot open %s: %s", path, strerror(-rc));
		}
		if (rc < 0) {
			cd_step(out, "cannot take the lock that keeps two runs of fix apart: %s; nothing changed", err);
			return rc;
		}
		snprintf(err, sizeof err, "%s", path);
	} else {
		/* A tree: its top folder is the lock (a fresh open of it, so that
		 * the lock is this descriptor's alone), and nothing is written. */
		fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			int rc = -errno;
			cd_step(out, "cannot open the root folder to lock it: %s; nothing changed", strerror(-rc));
			return rc;
		}
		snprintf(err, sizeof err, "the root folder itself");
	}
	const struct timespec pause = { 0, 20 * 1000 * 1000 };
	for (int waited = 0;; waited += 20) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e != EWOULDBLOCK || waited >= LOCK_WAIT_MS) {
			close(fd);
			if (e == EWOULDBLOCK)
				cd_step(out, "another clockdoctor fix is changing this boot configuration (it holds the "
				        "lock on %s, and still did after %d s): nothing changed; run again when it "
				        "has finished", err, LOCK_WAIT_MS / 1000);
			else
				cd_step(out, "cannot lock %s: %s; nothing changed", err, strerror(e));
			return e == EWOULDBLOCK ? -EBUSY : -e;
		}
		nanosleep(&pause, NULL);
	}
}

void cd_persist_unlock(int lockfd)
{
	if (lockfd >= 0)
		close(lockfd);
}

int cd_record_dirs(const struct cd_record *r)
{
	int n = 0;
	size_t dl = strlen(CD_RECORD_DIR);
	for (; n < r->n && r->ch[n].kind == CD_CH_MKDIR; n++) {
		size_t l = strlen(r->ch[n].path);
		if (l > dl || strncmp(r->ch[n].path, CD_RECORD_DIR, l) != 0 || (CD_RECORD_DIR)[l] != (l == dl ? '\0' : '/'))
			break;
	}
	return n;
}

/* The hidden name a new folder of the record's is built under, beside it:
 * "/var/lib" -> "/var/.lib.clockdoctor-new". */
static void staged_name(char *out, size_t cap, const char *dir)
{
	const char *slash = strrchr(dir, '/');
	snprintf(out, cap, "%.*s/.%s" CD_NEW_SUFFIX, (int)(slash - dir), dir, slash + 1);
}

/* Inside folder dfd, what a staged record holds: the folders of chain
 * ("lib/clockdoctor"), and in the last the record's files.  With remove,
 * they are removed; without, only checked.  0, or -ENOTEMPTY when anything
 * else is there (it is not fix's: left alone), another -errno. */
static int staged_chain(int dfd, const char *chain, bool remove)
{
	char first[NAME_MAX + 1] = "";
	const char *rest = "";
	if (*chain) {
		size_t l = strcspn(chain, "/");
		snprintf(first, sizeof first, "%.*s", (int)l, chain);
		rest = chain[l] ? chain + l + 1 : "";
	}
	int rc = 0;
	DIR *d = cd_tree_opendir(dfd, &rc);
	struct stat st;
	for (const char *name; rc == 0 && (name = cd_tree_next(d, dfd, &st, &rc));) {
		if (*first ? strcmp(name, first) != 0 || !S_ISDIR(st.st_mode)
		                : (strcmp(name, RECORD_NAME) != 0 && strcmp(name, RECORD_NEW) != 0) ||
		                  !S_ISREG(st.st_mode))
			rc = -ENOTEMPTY;
	}
	if (d)
		closedir(d);
	if (rc < 0)
		return rc;
	if (*first) {
		int sub = openat(dfd, first, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return errno == ENOENT ? 0 : -errno;
		rc = staged_chain(sub, rest, remove);
		close(sub);
		if (rc == 0 && remove && unlinkat(dfd, first, AT_REMOVEDIR) != 0 && errno != ENOENT)
			rc = -errno;
		return rc;
	}
	for (int i = 0; remove && i < 2; i++)
		if (unlinkat(dfd, i ? RECORD_NEW : RECORD_NAME, 0) != 0 && errno != ENOENT)
			return -errno;
	return 0;
}

/* The chain of the record's folders below dir ("/var" -> "lib/clockdoctor"). */
static const char *chain_below(const char *dir)
{
	const char *rest = CD_RECORD_DIR + strlen(dir);
	return *rest == '/' ? rest + 1 : rest;
}

/* Check, then (remove) take away the folder rel (dir: a record folder, or
 * the staged name of one), which must hold nothing but the record's
 * chain below dir.  0, -ENOENT when it is not there, -ENOTEMPTY, -errno. */
static int take_chain(int rootfd, const char *rel, const char *dir, bool remove)
{
	int fd = cd_beneath_open(rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd;
	int rc = staged_chain(fd, chain_below(dir), remove);
	close(fd);
	if (rc == 0 && remove)
		rc = cd_tree_remove(rootfd, rel, true);
	return rc;
}

int cd_record_leftovers(int rootfd, const char *in, struct cd_steps *out)
{
	int n = 0;
	char dir[CD_REL_MAX], staged[CD_REL_MAX + 32];
	for (const char *p = CD_RECORD_DIR + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		snprintf(dir, sizeof dir, "%.*s", (int)(p - CD_RECORD_DIR), CD_RECORD_DIR);
		staged_name(staged, sizeof staged, dir);
		int rc = take_chain(rootfd, staged, dir, true);
		if (rc == 0) {
			cd_step(out, "removed %s%s, left by a fix that was cut short", in, staged);
			n++;
		} else if (rc == -ENOTEMPTY) {
			cd_step(out, "%s%s holds something fix did not put there: left alone, and nothing changed; "
			        "look at it by hand", in, staged);
			return rc;
		} else if (rc != -ENOENT && rc != -ENOTDIR) {
			cd_step(out, "cannot look for what a fix cut short left at %s%s: %s; nothing changed", in, staged,
			        cd_tree_strerror(rc));
			return rc;
		}
		if (*p == '\0')
			break;
	}
	struct stat st;
	int rc = cd_tree_lstat(rootfd, CD_RECORD_DIR "/" RECORD_NEW, &st);
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -ENOTEMPTY;
	if (rc == 0)
		rc = cd_tree_remove(rootfd, CD_RECORD_DIR "/" RECORD_NEW, false);
	if (rc == 0) {
		cd_step(out, "removed %s%s/%s, left by a fix that was cut short", in, CD_RECORD_DIR, RECORD_NEW);
		n++;
	} else if (rc != -ENOENT && rc != -ENOTDIR) {
		cd_step(out, "cannot look for what a fix cut short left at %s%s/%s: %s; nothing changed", in,
		        CD_RECORD_DIR, RECORD_NEW, rc == -ENOTEMPTY ? "it is not a plain file" : cd_tree_strerror(rc));
		return rc;
	}
	return n;
}

int cd_record_publish(int rootfd, const struct cd_record *r, int record_dirs, bool replace, const char *in,
                      struct cd_steps *out)
{
	char text[16384], staged[CD_REL_MAX + 32], rel[CD_REL_MAX * 2 + 32];
	int len = cd_record_format(r, text, sizeof text), rc;
	if (len < 0) {
		cd_step(out, "the record does not fit in %zu bytes: nothing changed", sizeof text);
		return len;
	}
	if (record_dirs == 0) {
		const char *tmp = CD_RECORD_DIR "/" RECORD_NEW;
		rc = cd_tree_write_new(rootfd, tmp, text, (size_t)len, 0600);
		if (rc == 0)
			rc = cd_tree_rename(rootfd, tmp, CD_RECORD_PATH, replace ? 0 : RENAME_NOREPLACE);
		if (rc < 0)
			cd_tree_remove(rootfd, tmp, false);
	} else {
		/* The first folder of the chain that is missing, built hidden. */
		const char *top = r->ch[0].path;
		staged_name(staged, sizeof staged, top);
		rc = cd_tree_mkdir(rootfd, staged, 0755);
		bool made = rc == 0;
		for (int i = 1; rc == 0 && i < record_dirs; i++) {
			snprintf(rel, sizeof rel, "%s%s", staged, r->ch[i].path + strlen(top));
			rc = cd_tree_mkdir(rootfd, rel, 0755);
		}
		snprintf(rel, sizeof rel, "%s%s", staged, CD_RECORD_PATH + strlen(top));
		if (rc == 0)
			rc = cd_tree_write_new(rootfd, rel, text, (size_t)len, 0600);
		if (rc == 0)
			rc = cd_tree_rename(rootfd, staged, top, RENAME_NOREPLACE);
		if (rc < 0 && made)
			take_chain(rootfd, staged, top, true);
	}
	if (rc < 0)
		cd_step(out, "cannot write the record %s%s: %s", in, CD_RECORD_PATH, cd_tree_strerror(rc));
	else if (!replace)
		for (int i = 0; i < record_dirs; i++)
			cd_step(out, "created %s%s", in, r->ch[i].path);
	return rc;
}

int cd_record_unpublish(int rootfd, const struct cd_record *r, const char *in, struct cd_steps *out)
{
	int record_dirs = cd_record_dirs(r), rc;
	char staged[CD_REL_MAX + 32];
	const char *top = record_dirs ? r->ch[0].path : NULL;
	/* The record and the folders made for it, when they hold nothing
	 * else: away in one rename, then removed. */
	if (top && take_chain(rootfd, top, top, false) == 0) {
		staged_name(staged, sizeof staged, top);
		rc = cd_tree_rename(rootfd, top, staged, RENAME_NOREPLACE);
		if (rc == 0)
			rc = take_chain(rootfd, staged, top, true);
		if (rc < 0) {
			cd_step(out, "cannot remove the record %s%s: %s", in, CD_RECORD_PATH, cd_tree_strerror(rc));
			return rc;
		}
		cd_step(out, "removed the record %s%s", in, CD_RECORD_PATH);
		for (int i = record_dirs - 1; i >= 0; i--)
			cd_step(out, "removed the folder %s%s", in, r->ch[i].path);
		return 0;
	}
	rc = cd_tree_remove(rootfd, CD_RECORD_PATH, false);
	if (rc < 0 && rc != -ENOENT) {
		cd_step(out, "cannot remove the record %s%s: %s", in, CD_RECORD_PATH, cd_tree_strerror(rc));
		return rc;
	}
	cd_step(out, rc == 0 ? "removed the record %s%s" : "the record %s%s is gone already", in, CD_RECORD_PATH);
	for (int i = record_dirs - 1; i >= 0; i--) {
		rc = cd_tree_remove(rootfd, r->ch[i].path, true);
		if (rc == 0)
			cd_step(out, "removed the folder %s%s", in, r->ch[i].path);
		else if (rc == -ENOTEMPTY || rc == -EEXIST)
			cd_step(out, "left the folder %s%s: something else is in it now", in, r->ch[i].path);
		else if (rc != -ENOENT && rc != -ENOTDIR) {
			cd_step(out, "cannot remove the folder %s%s: %s", in, r->ch[i].path, cd_tree_strerror(rc));
			return rc;
		}
	}
	return 0;
}
