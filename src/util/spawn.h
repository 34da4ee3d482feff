/* SPDX-License-Identifier: MIT */
/*
 * spawn.h: running another program without a shell, bounded in time, and
 * always reaping it.  For the tools `fix` runs (update-grub, grubby) and
 * the hooks `watch` starts.
 */
#ifndef CD_SPAWN_H
#define CD_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/* Start argv[0] (searched in PATH when it has no '/'), stdin from
 * /dev/null, stdout onto our stderr when out_to_stderr (a tool's chatter
 * never mixes into a report on stdout), with the environment envp (NULL:
 * ours).  The child gets the default signal actions and an empty signal
 * mask.  Returns its pid, or -errno (-ENOENT: no such program). */
pid_t cd_spawn(char *const argv[], char *const envp[], bool out_to_stderr);

/* cd_spawn, the child made the leader of a process group of its own (its
 * pid): whatever it starts (a shell's commands, their children) is ended
 * with it by cd_spawn_end_group. */
pid_t cd_spawn_group(char *const argv[], char *const envp[], bool out_to_stderr);

/* End cd_spawn_group's child pid and its whole group: SIGTERM to the group,
 * up to grace_ms for every member to go, then SIGKILL to what is left; pid
 * reaped.  Returns pid's status as cd_spawn_wait does (128 + the signal,
 * when one of ours ended it). */
int cd_spawn_end_group(pid_t pid, int grace_ms);

/* Wait for pid, at most timeout_ms (<= 0: no limit), then SIGKILL it and
 * reap it.  Returns its exit status, 128 + the signal that ended it,
 * -ETIMEDOUT when it was killed at the deadline, or -errno. */
int cd_spawn_wait(pid_t pid, int timeout_ms);

/* Reap pid if it has ended, without waiting: its status as above, or
 * -EAGAIN while it runs. */
int cd_spawn_poll(pid_t pid);

/* Run argv (as cd_spawn, its stderr ours) with its stdout into a malloc'd,
 * NUL-terminated buffer of at most max bytes (*out, *len; more is read and
 * dropped, *truncated set), killed at timeout_ms.  Returns its exit status
 * as cd_spawn_wait does (the buffer is set then, whatever the status), or
 * -errno when it could not be run (*out NULL). */
int cd_spawn_capture(char *const argv[], int timeout_ms, size_t max, char **out, size_t *len, bool *truncated);

/* cd_spawn, then cd_spawn_wait. */
int cd_spawn_and_wait(char *const argv[], char *const envp[], int timeout_ms);

#endif
