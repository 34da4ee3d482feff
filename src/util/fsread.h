/*
 * fsread.h: reading files under a root directory, bounded and defensive.
 *
 * Files in /proc and /sys report a size of 0, may be enormous (a kernel log
 * saved by hand), or may hold binary junk: every read here is a loop with a
 * hard cap, and the result is always NUL-terminated.
 */
#ifndef CD_FSREAD_H
#define CD_FSREAD_H

#include <stddef.h>

/* Join root and path ("/" + "/proc/cmdline" -> "/proc/cmdline"). Returns 0, or
 * -ENAMETOOLONG. */
int cd_path_join(char *out, size_t cap, const char *root, const char *path);

/* Read root/path, at most max bytes, into a malloc'd NUL-terminated buffer.
 * Returns the buffer and its length in *len, or NULL with -errno in *err
 * (-EFBIG is never returned: a longer file is cut at max and *truncated set). */
char *cd_read_file(const char *root, const char *path, size_t max, size_t *len,
                   int *err, int *truncated);

/* Read a small file (a sysfs attribute) into buf, with trailing whitespace
 * removed.  Returns its length, or -errno. */
int cd_read_small(const char *root, const char *path, char *buf, size_t cap);

/* Write data to root/path, creating the parent folders.  Returns 0 or -errno. */
int cd_write_file(const char *root, const char *path, const char *data, size_t len);

#endif
