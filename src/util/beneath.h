/* SPDX-License-Identifier: MIT */
/*
 * beneath.h: the one way to open anything under a root folder (this
 * machine's "/" or a tree given with --root: a snapshot, a mounted image).
 *
 * A tree may be hostile: a link to /etc/shadow or "../../..", a FIFO where a
 * sysfs attribute should be, a device node, a loop of links.  Every open
 * here stays beneath the root: openat2(2) with RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS where the kernel has it (Linux 5.6), else a walk
 * of the path one component at a time with O_NOFOLLOW that resolves
 * relative links itself and refuses one that leads out.  Under a tree an
 * absolute link is refused either way (its target would be read against
 * the wrong root), so is ".." above the root: -EXDEV.  Under this
 * process's own root ("/", live) nothing is outside: an absolute link is
 * followed from "/" (RESOLVE_IN_ROOT), as any program would, but never a
 * /proc magic link.  A loop, or more than CD_BENEATH_MAX_LINKS links in one
 * path: -ELOOP.
 *
 * Only a regular file or a folder is opened: unless the open creates the
 * file (O_CREAT|O_EXCL), the object is first opened with O_PATH (no
 * device's open runs, no FIFO waits for its other end), its type checked,
 * then opened for real with O_NONBLOCK and checked to be the same object.
 * Anything else: -EINVAL.  A read keeps O_NONBLOCK (nothing to a regular
 * file); a write gets its blocking mode back.  With O_CREAT the last
 * component is never followed (O_NOFOLLOW): a planted link at the name
 * fails with -ELOOP (or -EEXIST with O_EXCL).  Every descriptor is
 * O_CLOEXEC.
 */
#ifndef CD_BENEATH_H
#define CD_BENEATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The most links one path may go through (the kernel's own limit). */
#define CD_BENEATH_MAX_LINKS 40

/* Open the root folder itself (O_DIRECTORY|O_CLOEXEC|O_RDONLY): its fd, or
 * -errno.  A root of PATH_MAX bytes or more is refused (-ENAMETOOLONG),
 * never cut to a shorter, other folder. */
int cd_root_open(const char *root);

/* Open rel (a leading "/" is ignored; "" is the root itself) beneath
 * rootfd with open(2)'s flags and mode.  The fd, or -errno: -EXDEV or
 * -ELOOP for a path that would leave the root, -EINVAL for a read of
 * something that is not a regular file or a folder. */
int cd_beneath_open(int rootfd, const char *rel, int flags, mode_t mode);

/* The folder that holds rel, opened beneath rootfd (O_RDONLY|O_DIRECTORY,
 * usable as the dirfd of renameat, unlinkat, linkat, fstatat, fsync), with
 * rel's last component in leaf: a plain name, never "", "." or "..".  The
 * fd, or -errno (-EINVAL for a rel without such a name, -ENAMETOOLONG when
 * it does not fit leafcap). */
int cd_beneath_parent(int rootfd, const char *rel, char *leaf, size_t leafcap);

/* mkdir -p rel beneath rootfd, each missing folder made with mode (the
 * umask applies), never through a link (a link where a folder is expected:
 * -ELOOP or -ENOTDIR), never "..": -EXDEV.  0 or -errno. */
int cd_beneath_mkdirs(int rootfd, const char *rel, mode_t mode);

/* Whether the open folder fd is this process's root folder ("/", live:
 * what a tree must never be written as). */
bool cd_is_process_root(int fd);

/* What a refusal above means, in words ("a link that leads out of the
 * root, refused"), or strerror's for any other -errno. */
const char *cd_beneath_strerror(int err);

/* For tests: true makes every open take the component walk, as on a kernel
 * without openat2.  The variable CLOCKDOCTOR_BENEATH_WALK=1 in the
 * environment does the same for a whole run. */
void cd_beneath_force_walk(bool on);

#endif
