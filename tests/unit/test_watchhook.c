/* SPDX-License-Identifier: MIT */
/*
 * test_watchhook.c: watch --exec's hooks: the event's environment given,
 * at most CD_HOOKS_MAX at once and the rest said once, a hook over its time
 * killed, a failing one named, and every one reaped.
 */
#include "watchhook.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int running(const struct cd_hooks *h)
{
	int n = 0;
	for (int i = 0; i < CD_HOOKS_MAX; i++)
		n += h->run[i].pid > 0;
	return n;
}

/* How many processes have marker among their argv (/proc/PID/cmdline):
 * a hook's descendants carry one, so that none can hide. */
static int with_marker(const char *marker)
{
	DIR *d = opendir("/proc");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[300], buf[4096];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		/* a cmdline longer than buf (another program's, on a busy
		 * machine) is cut: terminated here, or strlen runs past it */
		size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		buf[len] = '\0';
		if (f)
			fclose(f);
		for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
			if (strcmp(buf + i, marker) == 0)
				n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* A hook that starts sleepers in the background, some deaf to SIGTERM:
 * ended with its whole process group, when it runs over its time and when
 * watch ends; nothing it started is left. */
static void test_group_ended(void)
{
	char marker[32], cmd[512];
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	/* GNU sleep adds up its arguments: the marker is a duration too */
	snprintf(marker, sizeof marker, "0.000%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "sleep 300 %s & sleep 300 %s & (trap '' TERM; sleep 300 %s) & "
	         "sh -c 'sleep 300 %s; :' & wait", marker, marker, marker, marker);
	struct cd_hooks h = { .cmd = cmd, .timeout_s = 0.1 };
	cd_hooks_start(&h, 0, env, 0);
	for (int k = 0; k < 1000 && with_marker(marker) < 4; k++)
		usleep(10 * 1000);
	CHECK_INT(with_marker(marker), 4);
	cd_hooks_reap(&h, false, 0.05);            /* within its time */
	CHECK_INT(running(&h), 1);
	cd_hooks_reap(&h, false, 1);               /* over it */
	CHECK_INT(running(&h), 0);
	CHECK_INT(with_marker(marker), 0);

	/* Still running when watch ends: the same. */
	h = (struct cd_hooks){ .cmd = cmd, .timeout_s = 60 };
	cd_hooks_start(&h, 2, env, 0);
	for (int k = 0; k < 1000 && with_marker(marker) < 4; k++)
		usleep(10 * 1000);
	CHECK_INT(with_marker(marker), 4);
	cd_hooks_reap(&h, true, 0);
	CHECK_INT(running(&h), 0);
	CHECK_INT(with_marker(marker), 0);
}

/* Defined only in a sanitizer's build: its report goes to the saved stderr,
 * not the file the hooks' words go to (where a failing run would hide it). */
extern void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

/* The times given are seconds from 0, the hooks' start. */
int main(void)
{
	/* What the hooks say goes to a file, read at the end; a failed check
	 * is told there too until then. */
	char said_path[] = "/tmp/test_watchhook.XXXXXX";
	int fd = mkstemp(said_path), saved = dup(2);
	if (fd < 0 || saved < 0)
		return 2;
	if (__sanitizer_set_report_fd)
		__sanitizer_set_report_fd((void *)(long)saved);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);

	/* The environment given, and only it; a place taken while it runs. */
	char out[64];
	snprintf(out, sizeof out, "%s.out", said_path);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "echo \"$CLOCKDOCTOR_EVENT${HOME:-}\" > %s", out);
	struct cd_hooks h = { .cmd = cmd, .timeout_s = 60 };
	char *env[] = { "CLOCKDOCTOR_EVENT=tsc-unstable", NULL };
	int i = cd_hooks_place(&h, "tsc-unstable", 0);
	CHECK_INT(i, 0);
	cd_hooks_start(&h, i, env, 0);
	CHECK_INT(running(&h), 1);
	cd_hooks_reap(&h, true, 0);
	CHECK_INT(running(&h), 0);
	CHECK_STR(unit_get(out), "tsc-unstable\n");
	unlink(out);

	/* CD_HOOKS_MAX at once; the next event is not passed on, said once. */
	h = (struct cd_hooks){ .cmd = "sleep 0.3", .timeout_s = 60 };
	for (int k = 0; k < CD_HOOKS_MAX; k++) {
		i = cd_hooks_place(&h, "x", 0);
		CHECK_INT(i, k);
		cd_hooks_start(&h, i, env, 0);
	}
	CHECK_INT(cd_hooks_place(&h, "watchdog-skew", 0), -1);
	CHECK_INT(cd_hooks_place(&h, "clocksource-changed", 0), -1);
	CHECK_INT(h.skipped, 2);
	/* Once they have ended, there is room again. */
	cd_hooks_reap(&h, true, 0);
	CHECK_INT(running(&h), 0);
	CHECK_INT(cd_hooks_place(&h, "x", 0), 0);

	/* Over its time: killed when reaped; a status other than 0: said. */
	h = (struct cd_hooks){ .cmd = "sleep 30", .timeout_s = 60 };
	cd_hooks_start(&h, 0, env, 0);
	h.cmd = "exit 3";
	cd_hooks_start(&h, 1, env, 0);
	usleep(200 * 1000);
	cd_hooks_reap(&h, false, 0);
	CHECK_INT(running(&h), 1);         /* sleep 30 within its time */
	cd_hooks_reap(&h, false, 61);
	CHECK_INT(running(&h), 0);
	CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);   /* nothing left unreaped */
	CHECK_INT(errno, ECHILD);

	test_group_ended();
	CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);
	CHECK_INT(errno, ECHILD);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK_STR(unit_get(said_path),
	          "clockdoctor watch: 4 hooks still running: watchdog-skew not passed to the hook\n"
	          "clockdoctor watch: the hook exited with status 3\n"
	          "clockdoctor watch: the hook ran over 60 s: killed\n"
	          "clockdoctor watch: the hook ran over 0 s: killed\n"
	          "clockdoctor watch: the hook was still running at the end: ended\n");
	unlink(said_path);
	return unit_done("test_watchhook");
}
