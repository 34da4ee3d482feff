/* SPDX-License-Identifier: MIT */
/*
 * atomicfile.h: writing a file so that every reader sees either the old
 * file or the whole new one, never a part, and the folders such files go
 * in.  The data goes to a temporary file in the same folder (so that the
 * rename stays on one file system), is synced, then renamed over the name
 * (or linked to it, when an existing file must not be replaced), and the
 * folder is synced.
 *
 * The temporary file of cd_write_atomic is hidden (".NAME.tmp.PID.N") and
 * does not end in ".prom", so node_exporter's textfile collector never
 * reads a half-written one; every temporary file is created with
 * O_EXCL|O_NOFOLLOW, so a planted symlink is never written through.  Root
 * writes its state (the clocksource record, the TSC verdict) only in a
 * folder cd_dir_is_ours() accepts, so that no other user can swap it.
 */
#ifndef CD_ATOMICFILE_H
#define CD_ATOMICFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Write len bytes of data to path with the given mode (the umask does not
 * apply).  replace false: fail with -EEXIST when path exists.  replace
 * true: a regular file or a link at path is replaced (a link's target is
 * never written), but not a folder (-EISDIR) nor what is no file, itself or
 * at the end of the link: a device such as /dev/null, a FIFO, a socket, or
 * a link into /proc such as /dev/stdout (-EINVAL).  Returns 0 or -errno; on failure
 * nothing is left behind and path is untouched. */
int cd_write_atomic(const char *path, const void *data, size_t len, mode_t mode, bool replace);

/* The two steps of cd_write_atomic, for a caller that names its own
 * temporary file.  cd_write_new: create tmp (it must not exist; the umask
 * does not apply to mode), write data, sync it; 0 or -errno, and on a
 * failure after it was created, tmp is removed.  cd_publish: put the
 * finished tmp at path, as cd_write_atomic does (replace false: -EEXIST
 * when path exists), then sync the folder; tmp is gone afterwards either
 * way.  0 or -errno. */
int cd_write_new(const char *tmp, const void *data, size_t len, mode_t mode);
int cd_publish(const char *tmp, const char *path, bool replace);

/* Write all of data to fd, through short writes and EINTR.  0 or -errno. */
int cd_write_all(int fd, const void *data, size_t len);

/* mkdir -p: every missing folder of dir is made 0755, the last one
 * last_mode (the umask applies; /run itself is missing in an initramfs).
 * 0, or -errno with the folder that could not be made in failed (when not
 * NULL). */
int cd_make_dirs(const char *dir, mode_t last_mode, char *failed, size_t failedlen);

/* 0 when dir is a folder root may keep state in: a real folder (lstat: not
 * a symlink), owned by this user and writable by nobody else.  -EPERM when
 * it is not, -errno when it cannot be read.  *st (when not NULL) is its
 * lstat. */
int cd_dir_is_ours(const char *dir, struct stat *st);

/* fsync a folder (after a rename, link or unlink in it), or the folder
 * that holds path.  0 or -errno; a file system that cannot sync a folder
 * counts as done. */
int cd_sync_dir(const char *dir);
int cd_sync_parent(const char *path);

/* The folder that holds path ("." for a bare name, "/" for /NAME) into dir
 * of cap bytes.  0, or -ENAMETOOLONG. */
int cd_parent_dir(const char *path, char *dir, size_t cap);

#endif
