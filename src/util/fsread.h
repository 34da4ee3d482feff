/* SPDX-License-Identifier: MIT */
/*
 * fsread.h: reading files, bounded and defensive: under a root directory
 * (this machine's "/" or a snapshot), or at a path (the state files).
 *
 * Files in /proc and /sys report a size of 0, may be enormous (a kernel log
 * saved by hand), or may hold binary junk: every read here is a loop with a
 * hard cap, and the result is always NUL-terminated.  cd_write_file, the
 * mirror of cd_read_file, writes the files a snapshot is made of.
 */
#ifndef CD_FSREAD_H
#define CD_FSREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Read root/path, at most max bytes, into a malloc'd NUL-terminated buffer.
 * Returns the buffer and its length in *len, or NULL with -errno in *err
 * (-EFBIG is never returned: a longer file is cut at max and *truncated set).
 * path is opened beneath root (util/beneath.h): a link out of it gives
 * -EXDEV (or -ELOOP), a FIFO or a device -EINVAL, a folder -EISDIR. */
char *cd_read_file(const char *root, const char *path, size_t max, size_t *len,
                   int *err, int *truncated);

/* cd_read_file for a file the user named (an option's argument): the path
 * resolved as open(2) resolves it (from the working folder, through links
 * and ".."), but only a regular file is read: a FIFO or a device is
 * refused (-EINVAL), never waited on. */
char *cd_read_named(const char *path, size_t max, size_t *len, int *err, int *truncated);

/* The same beneath an open root folder (cd_root_open), with the file's
 * fstat in *st when st is not NULL (its mode: whether others may read it). */
char *cd_read_beneath(int rootfd, const char *path, size_t max, size_t *len, int *err, int *truncated,
                      struct stat *st);

/* Read a small file (a sysfs attribute) into buf, with trailing whitespace
 * removed.  Returns its length, or -errno. */
int cd_read_small(const char *root, const char *path, char *buf, size_t cap);

/* Read len bytes into buf, or up to the end of the file when it comes
 * first (a read of /proc or /sys may return less than asked before the
 * end), through short reads and EINTR: at offset *at (pread), or from where
 * fd is when at is NULL (read).  The count, or -errno. */
ssize_t cd_read_full(int fd, void *buf, size_t len, const off_t *at);

/* Read the file at path into buf as it is (no trimming), at most cap - 1
 * bytes, NUL-terminated; flags are more open(2) flags (O_NOFOLLOW: a
 * symlink at path is refused).  Returns the length, or -errno. */
int cd_read_raw(const char *path, char *buf, size_t cap, int flags);

/* Write data to path beneath an open root folder, creating its parent
 * folders (0755, never through a link): the file is created with
 * O_EXCL|O_NOFOLLOW and given exactly mode.  replace: a file (or a link) at
 * the name is removed first, never written through; else it is -EEXIST.
 * Returns 0 or -errno. */
int cd_write_beneath(int rootfd, const char *path, const void *data, size_t len, mode_t mode, bool replace);

/* cd_write_beneath under the folder root, 0644, replacing. */
int cd_write_file(const char *root, const char *path, const char *data, size_t len);

#endif
