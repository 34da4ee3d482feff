/*
 * atomicfile.h: writing a file so that every reader sees either the old
 * file or the whole new one, never a part: the data goes to a temporary
 * file in the same folder (so that the rename stays on one file system),
 * is synced, then renamed over the name (or linked to it, when an existing
 * file must not be replaced), and the folder is synced.
 *
 * The temporary file is hidden (".NAME.tmp.PID.N") and does not end in
 * ".prom", so node_exporter's textfile collector never reads a half-written
 * one; it is created with O_EXCL|O_NOFOLLOW, so a planted symlink is never
 * written through.
 */
#ifndef CD_ATOMICFILE_H
#define CD_ATOMICFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Write len bytes of data to path with the given mode (the umask does not
 * apply).  replace false: fail with -EEXIST when path exists.  Returns 0 or
 * -errno; on failure nothing is left behind and path is untouched. */
int cd_write_atomic(const char *path, const void *data, size_t len, mode_t mode, bool replace);

/* fsync the folder that holds path (after a rename, link or unlink in it).
 * Returns 0 or -errno. */
int cd_sync_parent(const char *path);

#endif
