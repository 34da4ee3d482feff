/* SPDX-License-Identifier: MIT */
/*
 * as-user: run a command as the lab guest's unprivileged user.
 *
 * usage: as-user [-u UID] [-g GID] CMD [ARGS...]   (default uid and gid 1000)
 *
 * Busybox's su would need busybox installed setuid and a passwd entry with a
 * usable shell; this helper needs neither.  It drops every supplementary group
 * first, then the gid, then the uid (in that order: after setuid we could no
 * longer change groups), checks that root cannot be regained, and execs.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid = 1000;
	gid_t gid = 1000;
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-u") == 0)
			uid = (uid_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-g") == 0)
			gid = (gid_t)strtoul(argv[i + 1], NULL, 10);
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: as-user [-u UID] [-g GID] CMD [ARGS...]\n");
		return 125;
	}
	if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) {
		fprintf(stderr, "as-user: dropping privileges: %s\n", strerror(errno));
		return 125;
	}
	if (uid != 0 && setuid(0) == 0) {
		fprintf(stderr, "as-user: could regain root, refusing to run\n");
		return 125;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "as-user: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
