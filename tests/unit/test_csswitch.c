/* SPDX-License-Identifier: MIT */
/* Unit tests of the clocksource switch and its restore on every exit path
 * (the record's recovery, persist/csrestore.c, included), against a fake
 * sysfs tree in /tmp, where current_clocksource is a plain file: this
 * machine's clocksource is never touched.  Crashes and signals are real: a
 * child process switches, then is killed (SIGKILL: the record must remain
 * and restore it) or signalled (SIGTERM, SIGHUP, SIGINT: the handler must
 * restore it before the process dies). */
#include "measure/csswitch.h"
#include "persist/csrestore.h"
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct unit_cs_tree tree;
static const char *const root = tree.root, *const sysfs = tree.sysfs, *const state = tree.state,
                  *const cur = tree.cur, *const avail = tree.avail,
                  *const record = tree.record;

/* A fresh fake tree: on tsc, with tsc hpet acpi_pm available. */
static void fresh(void)
{
	unit_cs_fresh(&tree, "tsc\n", "tsc hpet acpi_pm \n");
}

/* Nothing left to restore: the fake sysfs on name, no record. */
#define settled_on(name) do { \
	CHECK_STR(unit_get(cur), name); \
	CHECK(!unit_exists(record)); \
} while (0)

static void init(struct cd_cs *cs)
{
	CHECK_INT(cd_cs_init(cs, sysfs, state), 0);
}

static void test_names_and_reads(void)
{
	struct cd_cs cs;
	char name[CD_CS_NAME_MAX], list[CD_CS_MAX][CD_CS_NAME_MAX], err[512];
	fresh();
	init(&cs);
	CHECK(cd_cs_name_valid("tsc") && cd_cs_name_valid("acpi_pm") && cd_cs_name_valid("kvm-clock"));
	CHECK(cd_cs_name_valid("hyperv_clocksource_tsc_page"));
	CHECK(!cd_cs_name_valid("") && !cd_cs_name_valid("../x") && !cd_cs_name_valid("a b"));
	CHECK_INT(cd_cs_current(&cs, name, sizeof name), 0);
	CHECK_STR(name, "tsc");
	CHECK_INT(cd_cs_available(&cs, list, CD_CS_MAX), 3);
	CHECK_STR(list[2], "acpi_pm");
	CHECK_INT(cd_cs_writable(&cs, err, sizeof err), 0);
	unit_put(cur, "evil/../name\n");
	CHECK_INT(cd_cs_current(&cs, name, sizeof name), -EINVAL);
	struct cd_cs none;
	CHECK_INT(cd_cs_init(&none, "/nonexistent-cd", state), 0);
	CHECK_INT(cd_cs_current(&none, name, sizeof name), -ENOENT);
	CHECK(cd_cs_writable(&none, err, sizeof err) < 0);
	CHECK(strstr(err, "/nonexistent-cd") != NULL);
}

static void test_switch_and_end(void)
{
	struct cd_cs cs;
	char err[512];
	fresh();
	init(&cs);
	CHECK_INT(cd_cs_switch(&cs, "hpet", err, sizeof err), -EINVAL); /* before begin */
	CHECK_INT(cd_cs_begin(&cs, true, err, sizeof err), 0);
	CHECK(unit_exists(record));
	CHECK(strstr(unit_get(record), "original tsc\n") != NULL);
	/* The handlers are in place while switched. */
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	CHECK(sa.sa_handler != SIG_DFL);
	CHECK_INT(cd_cs_switch(&cs, "hpet", err, sizeof err), 0);
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK_INT(cd_cs_switch(&cs, "bogus", err, sizeof err), -ENOENT);
	CHECK(strstr(err, "not available") != NULL);
	CHECK_INT(cd_cs_switch(&cs, "../../x", err, sizeof err), -EINVAL);
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK_INT(cd_cs_switch(&cs, "acpi_pm", err, sizeof err), 0);
	CHECK_INT(cd_cs_switch(&cs, "acpi_pm", err, sizeof err), 0); /* already: nothing written */
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	settled_on("tsc\n");
	sigaction(SIGTERM, NULL, &sa);
	CHECK(sa.sa_handler == SIG_DFL);
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0); /* twice is harmless */

	/* The record's folder is created with its parents (no /run in an
	 * initramfs). */
	char deep[300];
	snprintf(deep, sizeof deep, "%s/run/clockdoctor", state);
	CHECK_INT(cd_cs_init(&cs, sysfs, deep), 0);
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), 0);
	CHECK(unit_exists(cs.record_path));
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	CHECK(!unit_exists(cs.record_path));
}

/* The kernel keeps another clocksource than the one written: simulated by
 * a current_clocksource that swallows writes and reads back empty. */
static void test_kernel_refuses(void)
{
	struct cd_cs cs;
	char err[512];
	fresh();
	init(&cs);
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), 0);
	unlink(cur);
	if (symlink("/dev/null", cur) != 0)
		perror("symlink");
	CHECK(cd_cs_switch(&cs, "hpet", err, sizeof err) < 0);
	CHECK(strstr(err, "read") != NULL);
	/* end cannot confirm either: the record stays for --restore. */
	CHECK(cd_cs_end(&cs, err, sizeof err) < 0);
	CHECK(unit_exists(record));
	unlink(cur);
	unit_put(cur, "hpet\n");
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	settled_on("tsc\n");
}

/* cd_cs_keep: the switch stays, the record goes, the handlers go, and a
 * later end() or signal writes nothing. */
static void test_keep(void)
{
	struct cd_cs cs;
	char err[512];
	fresh();
	init(&cs);
	CHECK_INT(cd_cs_keep(&cs, err, sizeof err), 0); /* before begin: nothing to do */
	CHECK_INT(cd_cs_begin(&cs, true, err, sizeof err), 0);
	CHECK_INT(cd_cs_switch(&cs, "hpet", err, sizeof err), 0);
	CHECK_INT(cd_cs_keep(&cs, err, sizeof err), 0);
	settled_on("hpet\n");
	CHECK(!cs.begun);
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	CHECK(sa.sa_handler == SIG_DFL);
	cd_cs_restore_signal_safe(); /* disarmed: writes nothing */
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	CHECK_STR(unit_get(cur), "hpet\n");

	/* Kept in a child that then gets SIGTERM: no handler puts it back. */
	fresh();
	pid_t pid = fork();
	if (pid == 0) {
		struct cd_cs c;
		char e[512];
		if (cd_cs_init(&c, sysfs, state) || cd_cs_begin(&c, true, e, sizeof e) ||
		    cd_cs_switch(&c, "acpi_pm", e, sizeof e) || cd_cs_keep(&c, e, sizeof e))
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	settled_on("acpi_pm\n");
}

/* A write the kernel took but did not act on leaves the kernel's override
 * naming the target: end() must write the original back even though the
 * current clocksource reads as the original.  "tsc " (a trailing blank,
 * which the reader ignores) shows whether end() wrote: it writes "tsc\n". */
static void test_end_after_unacted_write(void)
{
	struct cd_cs cs;
	char err[512];
	fresh();
	init(&cs);
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), 0);
	CHECK_INT(cd_cs_switch(&cs, "hpet", err, sizeof err), 0);
	CHECK(cs.wrote);
	unit_put(cur, "tsc \n"); /* the kernel went back by itself */
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	settled_on("tsc\n");
	/* Without a write, end() leaves current_clocksource alone. */
	fresh();
	unit_put(cur, "tsc \n");
	init(&cs);
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), 0);
	CHECK_INT(cd_cs_switch(&cs, "tsc", err, sizeof err), 0); /* already: nothing written */
	CHECK(!cs.wrote);
	CHECK_INT(cd_cs_end(&cs, err, sizeof err), 0);
	CHECK_STR(unit_get(cur), "tsc \n");
}

/* A child begins, switches to hpet, then meets `how`: a signal, or _exit
 * without cleaning up (a crash).  Returns the wait status. */
static int child_switches(int how, bool catch_sigint)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct cd_cs cs;
		char err[512];
		/* the test's own disposition, whatever it inherited (started
		 * with nohup or `&`, SIGHUP or SIGINT and SIGQUIT come in
		 * ignored, and an ignored signal rightly stays ignored) */
		if (how > 0 && catch_sigint)
			signal(how, SIG_DFL);
		if (cd_cs_init(&cs, sysfs, state) || cd_cs_begin(&cs, catch_sigint, err, sizeof err) ||
		    cd_cs_switch(&cs, "hpet", err, sizeof err))
			_exit(3);
		if (how == 0)
			_exit(0);
		raise(how);
		_exit(4); /* not reached when the signal ends the process */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

static void test_signals_restore(void)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		fresh();
		int st = child_switches(sigs[i], true);
		CHECK(WIFSIGNALED(st));
		CHECK_INT(WIFSIGNALED(st) ? WTERMSIG(st) : -1, sigs[i]);
		settled_on("tsc\n");
	}
	/* An ignored signal stays ignored (nohup): no handler, no death. */
	fresh();
	signal(SIGHUP, SIG_IGN);
	int st = child_switches(SIGHUP, false);
	signal(SIGHUP, SIG_DFL);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	CHECK_STR(unit_get(cur), "hpet\n"); /* the child then "crashed" with _exit(4) */
	CHECK(unit_exists(record));
}

/* A child the switching run forks (kernelpath.c's measuring child, whose
 * pipe outlives a parent killed with SIGKILL) inherits the armed restore and
 * the handlers; its own death by SIGPIPE must not put the clocksource back
 * while its parent's switch stands: only the process that armed it does. */
static void test_forked_child_does_not_restore(void)
{
	fresh();
	pid_t pid = fork();
	if (pid == 0) {
		struct cd_cs cs;
		char err[512];
		signal(SIGPIPE, SIG_DFL);
		if (cd_cs_init(&cs, sysfs, state) || cd_cs_begin(&cs, true, err, sizeof err) ||
		    cd_cs_switch(&cs, "hpet", err, sizeof err))
			_exit(3);
		pid_t grandchild = fork();
		if (grandchild == 0) {
			raise(SIGPIPE);
			_exit(4);
		}
		int gst = 0;
		waitpid(grandchild, &gst, 0);
		/* the grandchild died of its SIGPIPE; this run then ends as a
		 * SIGKILL would end it: nothing of its own put back */
		_exit(WIFSIGNALED(gst) && WTERMSIG(gst) == SIGPIPE ? 0 : 5);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK(unit_exists(record));
}

static void test_crash_then_recover(void)
{
	struct cd_cs cs;
	char msg[1024];
	/* SIGKILL: nothing runs; the record says what to put back. */
	fresh();
	int st = child_switches(SIGKILL, true);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK(unit_exists(record));
	init(&cs);
	char err[512];
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), -EEXIST); /* never over a record */
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_RESTORED);
	CHECK(strstr(msg, "restored clocksource tsc") != NULL);
	settled_on("tsc\n");
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_NO_RECORD);
	CHECK(strstr(msg, "nothing to restore") != NULL);

	/* A crash (exit without cleaning up) is the same. */
	fresh();
	CHECK(WIFEXITED(child_switches(0, false)));
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_RESTORED);
	CHECK_STR(unit_get(cur), "tsc\n");

	/* Someone put it back by hand already. */
	fresh();
	child_switches(SIGKILL, false);
	unit_put(cur, "tsc\n");
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_WAS_ORIGINAL);
	CHECK(!unit_exists(record));
}

static void test_record_unavailable(void)
{
	struct cd_cs cs;
	char msg[1024];
	fresh();
	child_switches(SIGKILL, false);
	unit_put(avail, "hpet acpi_pm\n"); /* since then, the kernel dropped tsc */
	init(&cs);
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_UNAVAILABLE);
	CHECK(strstr(msg, "no longer offers it") != NULL);
	settled_on("hpet\n"); /* left alone */
}

static void test_record_corrupt(void)
{
	struct cd_cs cs;
	char msg[1024], aside[300];
	static const char *bad[] = {
		"",
		"garbage\x01\x02\n",
		"clockdoctor clocksource record 1\n",                             /* no original */
		"clockdoctor clocksource record 1\noriginal ../../etc\npid 5\n", /* not a name */
		"clockdoctor clocksource record 1\noriginal tsc\npid -3\n",
		"clockdoctor clocksource record 2\noriginal tsc\npid 5\n",       /* unknown version */
	};
	snprintf(aside, sizeof aside, "%s.corrupt", record);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		fresh();
		unit_put(cur, "hpet\n");
		mkdir(state, 0755);
		unit_put(record, bad[i]);
		init(&cs);
		CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_CORRUPT);
		CHECK(strstr(msg, "corrupt") != NULL);
		settled_on("hpet\n");
		CHECK(unit_exists(aside));
	}
}

static void test_owner_running(void)
{
	struct cd_cs cs;
	char msg[1024];
	fresh();
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		struct cd_cs c;
		char err[512];
		close(pipefd[0]);
		if (cd_cs_init(&c, sysfs, state) || cd_cs_begin(&c, true, err, sizeof err) ||
		    cd_cs_switch(&c, "hpet", err, sizeof err))
			_exit(3);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			pause(); /* until the SIGKILL */
	}
	close(pipefd[1]);
	char c;
	CHECK_INT(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	init(&cs);
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_OWNER_RUNNING);
	CHECK(strstr(msg, "still running") != NULL);
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK(unit_exists(record));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_RESTORED);
	CHECK_STR(unit_get(cur), "tsc\n");

	/* A pid that now belongs to another program does not own the record. */
	fresh();
	unit_put(cur, "hpet\n");
	mkdir(state, 0755);
	unit_put(record, "clockdoctor clocksource record 1\noriginal tsc\npid 1\ncomm clockdoctor-gone\n");
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_RESTORED);
	CHECK_STR(unit_get(cur), "tsc\n");
}

/* The state folder must be ours alone, and a planted symlink is never
 * written through (root would overwrite its target). */
static void test_unsafe_state_dir(void)
{
	struct cd_cs cs;
	char err[512], victim[256], link_path[400];
	fresh();
	if (mkdir(state, 0777) != 0 || chmod(state, 0777) != 0) {
		perror(state);
		exit(2);
	}
	init(&cs);
	CHECK_INT(cd_cs_begin(&cs, false, err, sizeof err), -EPERM);
	CHECK(strstr(err, "not a folder of ours alone") != NULL);
	CHECK(!unit_exists(record));
	CHECK_STR(unit_get(cur), "tsc\n");

	/* A safe folder, with the temporary file's name planted as a symlink. */
	chmod(state, 0700);
	snprintf(victim, sizeof victim, "%s/victim", root);
	unit_put(victim, "precious\n");
	snprintf(link_path, sizeof link_path, "%s.%ld.tmp", record, (long)getpid());
	CHECK_INT(symlink(victim, link_path), 0);
	init(&cs);
	CHECK(cd_cs_begin(&cs, false, err, sizeof err) < 0);
	CHECK_STR(unit_get(victim), "precious\n");
	unlink(link_path);
}

/* A record left by another boot is dropped, not applied: the kernel chose
 * its clocksource anew at boot. */
static void test_record_from_another_boot(void)
{
	struct cd_cs cs;
	char msg[1024];
	fresh();
	child_switches(SIGKILL, false);
	CHECK(unit_exists(record));
	char text[1024];
	snprintf(text, sizeof text, "%s", unit_get(record));
	char *boot = strstr(text, "boot ");
	CHECK(boot != NULL);
	if (boot)
		boot[5] = boot[5] == '0' ? '1' : '0'; /* another boot id */
	unit_put(record, text);
	unit_put(cur, "acpi_pm\n");
	init(&cs);
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_WAS_ORIGINAL);
	CHECK(strstr(msg, "another boot") != NULL);
	settled_on("acpi_pm\n"); /* left as this boot has it */
}

/* A record whose pid is alive but started at another time (a reused pid) is
 * not owned: recover restores. */
static void test_reused_pid(void)
{
	struct cd_cs cs;
	char msg[1024];
	fresh();
	child_switches(SIGKILL, false);
	char text[1024], out[1200];
	snprintf(text, sizeof text, "%s", unit_get(record));
	/* Our own pid is alive; give it a start time that is not ours. */
	char *pidline = strstr(text, "pid ");
	char *startline = strstr(text, "start ");
	CHECK(pidline && startline);
	if (pidline && startline) {
		*pidline = '\0';
		*startline = '\0';
		char *after_pid = strchr(pidline + 1, '\n');
		snprintf(out, sizeof out, "%spid %ld\n%sstart 1\n", text, (long)getppid(),
		         after_pid ? after_pid + 1 : "");
		unit_put(record, out);
	}
	init(&cs);
	CHECK_INT(cd_cs_recover(&cs, msg, sizeof msg), CD_CS_RESTORED);
	CHECK_STR(unit_get(cur), "tsc\n");
}

int main(void)
{
	unit_cs_tree(&tree, "csswitch", CD_CS_RECORD_NAME);
	test_names_and_reads();
	test_switch_and_end();
	test_kernel_refuses();
	test_keep();
	test_end_after_unacted_write();
	test_signals_restore();
	test_forked_child_does_not_restore();
	test_crash_then_recover();
	test_record_unavailable();
	test_record_corrupt();
	test_owner_running();
	test_unsafe_state_dir();
	test_record_from_another_boot();
	test_reused_pid();
	return unit_done("csswitch");
}
