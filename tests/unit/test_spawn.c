/* SPDX-License-Identifier: MIT */
/* Unit tests of running programs: exit status, signals, time limit, no
 * shell, the environment, stdout kept off ours. */
#include "util/spawn.h"
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char *ok[] = { "true", NULL };
	char *fail[] = { "sh", "-c", "exit 7", NULL };
	char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *slow[] = { "sleep", "5", NULL };
	char *missing[] = { "clockdoctor-no-such-program", NULL };
	char *empty[] = { "", NULL };
	CHECK_INT(cd_spawn_and_wait(ok, NULL, 5000), 0);
	CHECK_INT(cd_spawn_and_wait(fail, NULL, 5000), 7);
	CHECK_INT(cd_spawn_and_wait(killed, NULL, 5000), 128 + SIGTERM);
	CHECK_INT(cd_spawn_and_wait(slow, NULL, 200), -ETIMEDOUT);
	CHECK_INT(cd_spawn_and_wait(missing, NULL, 5000), -ENOENT);
	CHECK_INT(cd_spawn_and_wait(empty, NULL, 5000), -EINVAL);
	CHECK_INT(cd_spawn(NULL, NULL, false), -EINVAL);

	/* No shell: the argument is one word, never split or expanded. */
	char *literal[] = { "test", "a b", "=", "a b", NULL };
	CHECK_INT(cd_spawn_and_wait(literal, NULL, 5000), 0);
	char *noexpand[] = { "test", "$HOME", "=", "$HOME", NULL };
	CHECK_INT(cd_spawn_and_wait(noexpand, NULL, 5000), 0);

	/* The environment given, and only it. */
	char *env[] = { "CLOCKDOCTOR_EVENT=x", "PATH=/usr/bin:/bin", NULL };
	char *envtest[] = { "sh", "-c", "[ \"$CLOCKDOCTOR_EVENT\" = x ] && [ -z \"$HOME\" ]", NULL };
	CHECK_INT(cd_spawn_and_wait(envtest, env, 5000), 0);

	/* Our handlers and blocked signals are not the child's. */
	signal(SIGTERM, SIG_IGN);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	CHECK_INT(cd_spawn_and_wait(killed, NULL, 5000), 128 + SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGTERM, SIG_DFL);

	/* poll: running, then done. */
	char *brief[] = { "sleep", "0.2", NULL };
	pid_t pid = cd_spawn(brief, NULL, false);
	CHECK(pid > 0);
	CHECK_INT(cd_spawn_poll(pid), -EAGAIN);
	CHECK_INT(cd_spawn_wait(pid, 5000), 0);

	/* stdout goes to our stderr: a child's line reaches our stderr, never
	 * our stdout. */
	int out[2], err[2];
	if (pipe(out) != 0 || pipe(err) != 0)
		return 2;
	fflush(stdout);
	fflush(stderr);
	int saved1 = dup(1), saved2 = dup(2);
	dup2(out[1], 1);
	dup2(err[1], 2);
	char *echo[] = { "echo", "from-child", NULL };
	int rc = cd_spawn_and_wait(echo, NULL, 5000);
	dup2(saved1, 1);
	dup2(saved2, 2);
	close(out[1]);
	close(err[1]);
	char buf[32] = "";
	CHECK_INT(rc, 0);
	CHECK_INT(read(out[0], buf, sizeof buf), 0);
	CHECK_INT(read(err[0], buf, sizeof buf - 1), 11);
	CHECK(strncmp(buf, "from-child\n", 11) == 0);
	close(out[0]);
	close(err[0]);

	/* capture: the child's stdout in a buffer, cut at max, killed at the
	 * limit with what it wrote so far. */
	char *text;
	size_t len;
	bool cut;
	char *hello[] = { "sh", "-c", "echo hello; exit 3", NULL };
	CHECK_INT(cd_spawn_capture(hello, 5000, 100, &text, &len, &cut), 3);
	CHECK_STR(text, "hello\n");
	CHECK_INT(len, 6);
	CHECK(!cut);
	free(text);
	char *lots[] = { "sh", "-c", "i=0; while [ $i -lt 200 ]; do echo 0123456789; i=$((i+1)); done", NULL };
	CHECK_INT(cd_spawn_capture(lots, 5000, 50, &text, &len, &cut), 0);
	CHECK_INT(len, 50);
	CHECK(cut);
	CHECK_INT(strlen(text), 50);
	free(text);
	char *hang[] = { "sh", "-c", "echo partial; exec sleep 5", NULL };
	CHECK_INT(cd_spawn_capture(hang, 300, 100, &text, &len, &cut), -ETIMEDOUT);
	CHECK_STR(text, "partial\n");
	free(text);
	CHECK_INT(cd_spawn_capture(missing, 5000, 100, &text, &len, &cut), -ENOENT);
	CHECK(text == NULL);
	return unit_done("spawn");
}
