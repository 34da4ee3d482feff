/* SPDX-License-Identifier: MIT */
/*
 * beneath.c: opening paths beneath a root folder, with openat2 or a walk
 * that does its work where the kernel lacks it (beneath.h).
 */
#include "util/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Folders deeper than this in one path are refused (-ENAMETOOLONG): a
 * sysfs path is a dozen deep, and each level holds a descriptor. */
#define WALK_MAX_DEPTH 128

enum { OPENAT2_UNKNOWN, OPENAT2_YES, OPENAT2_NO };
static _Atomic int have_openat2 = OPENAT2_UNKNOWN;
static _Atomic bool force_walk;

void cd_beneath_force_walk(bool on)
{
	atomic_store(&force_walk, on);
}

/* in_root: dirfd is this process's root folder, where an absolute link
 * leads nowhere else and is followed from it (RESOLVE_IN_ROOT); any other
 * root refuses one (RESOLVE_BENEATH). */
static int sys_openat2(int dirfd, const char *path, int flags, mode_t mode, bool in_root)
{
	struct open_how how = {
		.flags = (unsigned long long)(unsigned)flags,
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = (in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	return fd < 0 ? -errno : (int)fd;
}

/* Whether to use openat2: asked of the kernel once.  A seccomp filter may
 * answer ENOSYS or EPERM for a call it does not know; an old kernel's
 * openat2 may not know a resolve flag (EINVAL) or the struct (E2BIG).  Any
 * other answer is the call at work: the working folder may be one this
 * user cannot search (EACCES) or one removed (ENOENT), which says nothing
 * about the roots opened later. */
static bool use_openat2(void)
{
	if (atomic_load(&force_walk))
		return false;
	int h = atomic_load(&have_openat2);
	if (h == OPENAT2_UNKNOWN) {
		const char *e = getenv("CLOCKDOCTOR_BENEATH_WALK");
		if (e && strcmp(e, "1") == 0) {
			h = OPENAT2_NO;
		} else {
			int fd = sys_openat2(AT_FDCWD, ".", O_PATH | O_CLOEXEC, 0, false);
			h = fd == -ENOSYS || fd == -EPERM || fd == -EINVAL || fd == -E2BIG ? OPENAT2_NO : OPENAT2_YES;
			if (fd >= 0)
				close(fd);
		}
		atomic_store(&have_openat2, h);
	}
	return h == OPENAT2_YES;
}

bool cd_is_process_root(int rootfd)
{
	struct stat a, b;
	return fstat(rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int cd_root_open(const char *root)
{
	if (!root || !*root)
		return -ENOENT;
	if (strlen(root) >= PATH_MAX)
		return -ENAMETOOLONG;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static bool is_read(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_PATH));
}

/* A file made by this open: nothing was there to look at first. */
static bool creates_new(int flags)
{
	return (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
}

/* Only regular files and folders are opened (the link itself, under
 * O_NOFOLLOW, is refused as open(2) refuses it). */
static int check_type(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	return S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) ? 0 : -EINVAL;
}

/* The flags of the real open: a FIFO put there in a race fails at once
 * instead of waiting, a terminal never becomes ours. */
static int open_flags(int flags)
{
	if (flags & O_CREAT)
		flags |= O_NOFOLLOW; /* the last component is never followed */
	return flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
}

/* After the real open of fd: the same object as the O_PATH look at it (st),
 * or, with nothing looked at (a file created), a regular file.  A write
 * gets its blocking mode back.  fd, or -errno with fd closed. */
static int finish_open(int fd, const struct stat *st, int flags)
{
	struct stat now;
	int rc = fstat(fd, &now) == 0 ? 0 : -errno;
	if (rc == 0 && st && (now.st_dev != st->st_dev || now.st_ino != st->st_ino))
		rc = -EAGAIN; /* swapped between the two opens */
	if (rc == 0 && !st)
		rc = check_type(&now);
	if (rc == 0 && !is_read(flags) && !(flags & O_NONBLOCK) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* The O_PATH look at an object, pfd: its type checked into *st.  pfd is
 * closed.  0 or -errno. */
static int look(int pfd, struct stat *st)
{
	int rc = fstat(pfd, st) == 0 ? 0 : -errno;
	close(pfd);
	return rc < 0 ? rc : check_type(st);
}

static int open_with_openat2(int rootfd, const char *rel, int flags, mode_t mode, bool in_root)
{
	if (flags & O_PATH)
		return sys_openat2(rootfd, rel, flags | O_CLOEXEC, 0, in_root);
	struct stat st;
	bool looked = false;
	if (!creates_new(flags)) {
		int pfd = sys_openat2(rootfd, rel,
		                      O_PATH | O_CLOEXEC | (open_flags(flags) & (O_NOFOLLOW | O_DIRECTORY)), 0, in_root);
		if (pfd >= 0) {
			int rc = look(pfd, &st);
			if (rc < 0)
				return rc;
			looked = true;
		} else if (pfd != -ENOENT || !(flags & O_CREAT)) {
			return pfd;
		}
	}
	int fd = sys_openat2(rootfd, rel, open_flags(flags), mode, in_root);
	return fd < 0 ? fd : finish_open(fd, looked ? &st : NULL, flags);
}

/* ---- the walk, for a kernel without openat2 ---- */

struct walk {
	int fds[WALK_MAX_DEPTH + 1]; /* fds[0]: the root, not ours to close */
	int depth;
	int links;
	bool in_root;           /* the process's root: absolute links followed from it */
	char path[2][PATH_MAX]; /* what is left to walk, and room to splice a link */
	int cur;
};

static void walk_close(struct walk *w)
{
	while (w->depth > 0)
		close(w->fds[w->depth--]);
}

/* The component at name of dirfd is a link: read it, and make what is left
 * to walk its target followed by rest. */
static int walk_splice(struct walk *w, int dirfd, const char *name, const char *rest)
{
	char target[PATH_MAX];
	if (++w->links > CD_BENEATH_MAX_LINKS)
		return -ELOOP;
	ssize_t n = readlinkat(dirfd, name, target, sizeof target);
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof target)
		return -ENAMETOOLONG;
	target[n] = '\0';
	if (n == 0)
		return -ENOENT;
	if (target[0] == '/') {
		if (!w->in_root)
			return -EXDEV; /* absolute: outside, or against the wrong root */
		walk_close(w); /* from the root again */
	}
	int next = !w->cur;
	int len = *rest ? snprintf(w->path[next], PATH_MAX, "%s/%s", target, rest)
	                : snprintf(w->path[next], PATH_MAX, "%s", target);
	if (len < 0 || len >= PATH_MAX)
		return -ENAMETOOLONG;
	w->cur = next;
	return 0;
}

static int open_with_walk(int rootfd, const char *rel, int flags, mode_t mode, bool in_root)
{
	struct walk *w = malloc(sizeof *w);
	if (!w)
		return -ENOMEM;
	w->in_root = in_root;
	w->fds[0] = rootfd;
	w->depth = 0;
	w->links = 0;
	w->cur = 0;
	if (strlen(rel) >= PATH_MAX) {
		free(w);
		return -ENAMETOOLONG;
	}
	strcpy(w->path[0], rel);
	const char *p = w->path[0];
	int rc;
	for (;;) {
		while (*p == '/')
			p++;
		int dirfd = w->fds[w->depth];
		if (!*p) {
			/* the path names a folder reached so far */
			if (flags & O_CREAT) {
				rc = -EISDIR;
			} else {
				rc = openat(dirfd, ".", open_flags(flags));
				rc = rc < 0 ? -errno : finish_open(rc, NULL, flags);
			}
			break;
		}
		char name[NAME_MAX + 1];
		size_t len = strcspn(p, "/");
		if (len > NAME_MAX) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		const char *rest = p + len;
		bool last = *rest == '\0';
		while (*rest == '/')
			rest++;
		if (strcmp(name, ".") == 0) {
			p = rest;
			continue;
		}
		if (strcmp(name, "..") == 0) {
			if (w->depth == 0 && !w->in_root) {
				rc = -EXDEV;
				break;
			}
			if (w->depth > 0) /* "/.." is "/" */
				close(w->fds[w->depth--]);
			p = rest;
			continue;
		}
		if (last && creates_new(flags)) {
			rc = openat(dirfd, name, open_flags(flags), mode);
			rc = rc < 0 ? -errno : finish_open(rc, NULL, flags);
			break;
		}
		int pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0 && errno == ENOENT && last && (flags & O_CREAT)) {
			rc = openat(dirfd, name, open_flags(flags), mode);
			rc = rc < 0 ? -errno : finish_open(rc, NULL, flags);
			break;
		}
		if (pfd < 0) {
			rc = -errno;
			break;
		}
		struct stat st;
		if (fstat(pfd, &st) != 0) {
			rc = -errno;
			close(pfd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			close(pfd);
			if (last && (flags & (O_NOFOLLOW | O_CREAT))) {
				rc = -ELOOP;
				break;
			}
			rc = walk_splice(w, dirfd, name, rest);
			if (rc < 0)
				break;
			p = w->path[w->cur];
			continue;
		}
		if (!last) {
			if (!S_ISDIR(st.st_mode)) {
				close(pfd);
				rc = -ENOTDIR;
				break;
			}
			if (w->depth == WALK_MAX_DEPTH) {
				close(pfd);
				rc = -ENAMETOOLONG;
				break;
			}
			w->fds[++w->depth] = pfd;
			p = rest;
			continue;
		}
		/* The last component, not a link: open it for real, never
		 * following (it was no link a moment ago), and check it is what
		 * was looked at. */
		rc = look(pfd, &st);
		if (rc < 0)
			break;
		rc = openat(dirfd, name, open_flags(flags) | O_NOFOLLOW, mode);
		rc = rc < 0 ? -errno : finish_open(rc, &st, flags);
		break;
	}
	walk_close(w);
	free(w);
	return rc;
}

int cd_beneath_open(int rootfd, const char *rel, int flags, mode_t mode)
{
	if (rootfd < 0)
		return -EBADF;
	if (!rel)
		return -EINVAL;
	while (*rel == '/')
		rel++;
	if (strlen(rel) >= PATH_MAX)
		return -ENAMETOOLONG;
	bool in_root = cd_is_process_root(rootfd);
	if (use_openat2()) {
		int fd = open_with_openat2(rootfd, *rel ? rel : ".", flags, mode, in_root);
		if (fd != -ENOSYS)
			return fd;
		atomic_store(&have_openat2, OPENAT2_NO);
	}
	return open_with_walk(rootfd, rel, flags, mode, in_root);
}

int cd_beneath_parent(int rootfd, const char *rel, char *leaf, size_t leafcap)
{
	char dir[PATH_MAX];
	if (!rel)
		return -EINVAL;
	size_t n = strlen(rel);
	if (n >= sizeof dir)
		return -ENAMETOOLONG;
	memcpy(dir, rel, n + 1);
	while (n > 0 && dir[n - 1] == '/')
		dir[--n] = '\0';
	char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : dir;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if (strlen(name) >= leafcap)
		return -ENAMETOOLONG;
	memmove(leaf, name, strlen(name) + 1);
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	return cd_beneath_open(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
}

int cd_beneath_mkdirs(int rootfd, const char *rel, mode_t mode)
{
	if (rootfd < 0)
		return -EBADF;
	if (!rel)
		return -EINVAL;
	int dirfd = dup(rootfd);
	if (dirfd < 0)
		return -errno;
	const char *p = rel;
	int rc = 0;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t len = strcspn(p, "/");
		char name[NAME_MAX + 1];
		if (len > NAME_MAX) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			rc = -EXDEV;
			break;
		}
		if (mkdirat(dirfd, name, mode) != 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		int next = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			rc = -errno;
			break;
		}
		close(dirfd);
		dirfd = next;
	}
	close(dirfd);
	return rc;
}

const char *cd_beneath_strerror(int err)
{
	switch (-err) {
	case EXDEV: return "a link that leads out of the root, refused";
	case ELOOP: return "a loop of links (or a link where none may be), refused";
	case EINVAL: return "not a regular file (a FIFO, a device or a socket), refused";
	case EAGAIN: return "changed while it was opened (a folder or link swapped), refused";
	default: return strerror(err < 0 ? -err : err);
	}
}
