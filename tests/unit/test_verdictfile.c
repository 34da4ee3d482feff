/* SPDX-License-Identifier: MIT */
/*
 * test_verdictfile.c: the per-boot TSC verdict file: its text (and the
 * library's parser reading it back), the atomic write into a state folder
 * of ours (CLOCKDOCTOR_STATE_DIR pointing at a temporary folder), the
 * refusals (a folder others can write, a symlinked folder), a planted
 * symlink at the name replaced rather than followed, the reading side
 * (missing, this boot, another boot, unsafe), and a non-root run that says
 * it could not save.
 */
#include "persist/verdictfile.h"
#include "probe/probe.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[64];

static void test_format(void)
{
	char buf[512];
	int n = cd_verdict_format(buf, sizeof buf, "5d1c7a2e-0000-4000-8000-0123456789ab", CD_TSC_SOUND, 2596130166.4,
	                          "hpet", 1795381234LL, "x86-tsc");
	CHECK(n > 0);
	CHECK_STR(buf, "boot_id=5d1c7a2e-0000-4000-8000-0123456789ab\nverdict=sound\ncounter_hz=2596130166\n"
	               "clocksource=hpet\ntime=1795381234\ncounter=x86-tsc\n");
	struct fc_verdict v;
	CHECK_INT(fc_verdict_parse(buf, (size_t)n, &v), 0);
	CHECK_STR(v.boot_id, "5d1c7a2e-0000-4000-8000-0123456789ab");
	CHECK_INT(v.verdict, 0);
	CHECK(v.counter_hz == 2596130166.0);
	CHECK_STR(v.clocksource, "hpet");
	CHECK_INT(v.time, 1795381234LL);

	n = cd_verdict_format(buf, sizeof buf, "ab-12", CD_TSC_UNSOUND, 0, "", 1, NULL);
	CHECK_STR(buf, "boot_id=ab-12\nverdict=unsound\ncounter_hz=0\nclocksource=\ntime=1\n");
	CHECK_INT(fc_verdict_parse(buf, (size_t)n, &v), 0);
	CHECK_INT(v.verdict, 2);
	CHECK(v.counter_hz == 0);
	cd_verdict_format(buf, sizeof buf, "ab", CD_TSC_UNKNOWN, -5, "acpi_pm", 1, "");
	CHECK(strstr(buf, "verdict=unknown\ncounter_hz=0\n") != NULL);
	CHECK(strstr(buf, "counter=") == NULL);

	/* values that would break the lines */
	CHECK_INT(cd_verdict_format(buf, sizeof buf, "", CD_TSC_SOUND, 1, "hpet", 1, NULL), -EINVAL);
	CHECK_INT(cd_verdict_format(buf, sizeof buf, "a\nverdict=sound", CD_TSC_UNSOUND, 1, "hpet", 1, NULL), -EINVAL);
	CHECK_INT(cd_verdict_format(buf, sizeof buf, "ab", CD_TSC_SOUND, 1, "hp=et", 1, NULL), -EINVAL);
	CHECK_INT(cd_verdict_format(buf, sizeof buf, "ab", CD_TSC_SOUND, 1, "hpet", 1, "x\n"), -EINVAL);
	CHECK_INT(cd_verdict_format(buf, 20, "ab", CD_TSC_SOUND, 1, "hpet", 1, NULL), -ENAMETOOLONG);
}

static void test_write(void)
{
	char dir[128], file[160], err[512];
	snprintf(dir, sizeof dir, "%s/run/clockdoctor", base);
	snprintf(file, sizeof file, "%s/tsc-verdict", dir);
	const char *text = "boot_id=ab\nverdict=sound\ncounter_hz=1\nclocksource=hpet\ntime=1\n";

	/* parents created; folder 0755, file 0644 whatever the umask */
	mode_t old = umask(077);
	CHECK_INT(cd_verdict_write(dir, text, strlen(text), err, sizeof err), 0);
	umask(old);
	struct stat st;
	CHECK_INT(stat(dir, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0755);
	CHECK_INT(stat(file, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0644);
	CHECK_STR(unit_get(file), text);

	/* written again: replaced whole (a new inode), nothing left behind */
	ino_t ino = st.st_ino;
	const char *text2 = "boot_id=ab\nverdict=unsound\ncounter_hz=0\nclocksource=hpet\ntime=2\n";
	CHECK_INT(cd_verdict_write(dir, text2, strlen(text2), err, sizeof err), 0);
	CHECK_INT(stat(file, &st), 0);
	CHECK(st.st_ino != ino);
	CHECK_STR(unit_get(file), text2);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) = 1", dir);
	CHECK(system(cmd) == 0);

	/* a symlink planted at the name is replaced, its target untouched */
	char target[160];
	snprintf(target, sizeof target, "%s/target", base);
	int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
	close(fd);
	unlink(file);
	CHECK_INT(symlink(target, file), 0);
	CHECK_INT(cd_verdict_write(dir, text, strlen(text), err, sizeof err), 0);
	CHECK_INT(lstat(file, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_STR(unit_get(target), "keep\n");

	/* a folder made 0700 (by the bench record) is opened to readers */
	CHECK_INT(chmod(dir, 0700), 0);
	CHECK_INT(cd_verdict_write(dir, text, strlen(text), err, sizeof err), 0);
	CHECK_INT(stat(dir, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0755);

	/* a folder others can write: refused, nothing written */
	CHECK_INT(chmod(dir, 0777), 0);
	unlink(file);
	CHECK_INT(cd_verdict_write(dir, text, strlen(text), err, sizeof err), -EPERM);
	CHECK(strstr(err, "not a folder of ours alone") != NULL);
	CHECK(access(file, F_OK) != 0);
	CHECK_INT(chmod(dir, 0755), 0);

	/* a symlink as the folder: refused */
	char link_dir[160];
	snprintf(link_dir, sizeof link_dir, "%s/linked", base);
	CHECK_INT(symlink(dir, link_dir), 0);
	CHECK_INT(cd_verdict_write(link_dir, text, strlen(text), err, sizeof err), -EPERM);

	/* a file where a folder should be */
	char notdir[200];
	snprintf(notdir, sizeof notdir, "%s/target/sub", base);
	CHECK(cd_verdict_write(notdir, text, strlen(text), err, sizeof err) < 0);
	CHECK(strstr(err, "cannot create") != NULL);
}

/* A judged report saved where CLOCKDOCTOR_STATE_DIR says, then read the
 * way `clockdoctor run` and the library read it. */
static void test_save_and_load(void)
{
	char state[128], path[200], msg[1024], why[512], buf[512];
	snprintf(state, sizeof state, "%s/state", base);
	setenv("CLOCKDOCTOR_STATE_DIR", state, 1);
	unsetenv("FASTCLOCK_VERDICT");
	CHECK_STR(cd_state_dir(), state);
	CHECK_INT(cd_verdict_read_path(path, sizeof path), 0);
	snprintf(buf, sizeof buf, "%s/tsc-verdict", state);
	CHECK_STR(path, buf);

	struct fc_verdict v;
	CHECK_INT(cd_verdict_load(path, &v, why, sizeof why), CD_VF_NONE);
	CHECK(strstr(why, "No such file") != NULL);

	static struct cd_facts f;
	static struct cd_tsc_report t;
	memset(&f, 0, sizeof f);
	memset(&t, 0, sizeof t);
	f.cs.have_current = true;
	snprintf(f.cs.current, sizeof f.cs.current, "hpet");
	t.verdict = CD_TSC_SOUND;
	t.counter.kind = FC_COUNTER_X86_TSC;
	t.src[CD_SRC_MEASURED].have = true;
	t.src[CD_SRC_MEASURED].hz = 2596130166.0;
	t.ref_hz = 2596130000.0;
	CHECK_INT(cd_verdict_save(&f, &t, msg, sizeof msg), 0);
	CHECK(strstr(msg, "saved the verdict (sound) for this boot in") != NULL);
	CHECK(strstr(msg, state) != NULL);

	char boot[64];
	CHECK_INT(cd_boot_id(boot, sizeof boot), 0);
	CHECK_INT(cd_verdict_load(path, &v, why, sizeof why), CD_VF_THIS_BOOT);
	CHECK_STR(v.boot_id, boot);
	CHECK_INT(v.verdict, 0);
	CHECK(v.counter_hz == 2596130166.0);
	CHECK_STR(v.clocksource, "hpet");
	CHECK(strstr(why, "says sound on this boot") != NULL);
	CHECK(strstr(unit_get(path), "counter=x86-tsc\n") != NULL);
	/* ... and the probe takes it as this boot's evidence (verdictfact.c). */
	static struct cd_facts g;
	memset(&g, 0, sizeof g);
	g.live = true;
	cd_probe_saved_verdict(&g);
	CHECK_INT(g.saved_verdict, CD_SAVED_SOUND);
	CHECK(strstr(g.saved_verdict_from, "says sound on this boot") != NULL);

	/* without a measurement, the kernel's frequency */
	t.src[CD_SRC_MEASURED].have = false;
	t.verdict = CD_TSC_UNKNOWN;
	CHECK_INT(cd_verdict_save(&f, &t, msg, sizeof msg), 0);
	CHECK_INT(cd_verdict_load(path, &v, why, sizeof why), CD_VF_THIS_BOOT);
	CHECK_INT(v.verdict, 1);
	CHECK(v.counter_hz == 2596130000.0);
	cd_probe_saved_verdict(&g);
	CHECK_INT(g.saved_verdict, CD_SAVED_UNKNOWN);

	/* FASTCLOCK_VERDICT, the library's override, is what run reads */
	char other[200];
	snprintf(other, sizeof other, "%s/other-boot", base);
	setenv("FASTCLOCK_VERDICT", other, 1);
	CHECK_INT(cd_verdict_read_path(path, sizeof path), 0);
	CHECK_STR(path, other);
	unsetenv("FASTCLOCK_VERDICT");
	char err[256];
	const char *text = "boot_id=00000000-0000-4000-8000-000000000000\nverdict=sound\ncounter_hz=1\n";
	int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	CHECK_INT(cd_verdict_load(other, &v, why, sizeof why), CD_VF_OTHER_BOOT);
	CHECK(strstr(why, "another boot") != NULL);
	/* a sound verdict of another boot is no evidence for this one */
	setenv("FASTCLOCK_VERDICT", other, 1);
	cd_probe_saved_verdict(&g);
	CHECK_INT(g.saved_verdict, CD_SAVED_NONE);
	unsetenv("FASTCLOCK_VERDICT");
	/* malformed, or writable by others: unusable */
	fd = open(other, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "verdict=sound\n", 14) == 14);
	close(fd);
	CHECK_INT(cd_verdict_load(other, &v, why, sizeof why), CD_VF_UNUSABLE);
	CHECK(strstr(why, "malformed") != NULL);
	CHECK_INT(chmod(other, 0666), 0);
	CHECK_INT(cd_verdict_load(other, &v, why, sizeof why), CD_VF_UNUSABLE);
	CHECK(strstr(why, "writable by nobody else") != NULL);
	(void)err;
	/* a link at the name (to a verdict root wrote) is not followed; a
	 * FIFO is refused at once, never waited on */
	char planted[220];
	snprintf(planted, sizeof planted, "%s/planted", base);
	CHECK_INT(symlink(path, planted), 0);
	CHECK_INT(cd_verdict_load(planted, &v, why, sizeof why), CD_VF_UNUSABLE);
	CHECK(strstr(why, "a symbolic link, not read") != NULL);
	unlink(planted);
	CHECK_INT(mkfifo(planted, 0644), 0);
	CHECK_INT(cd_verdict_load(planted, &v, why, sizeof why), CD_VF_UNUSABLE);
	CHECK(strstr(why, "not a regular file") != NULL);
	unlink(planted);

	/* a state folder we may not write: says so (as root: a folder others
	 * own; either way nothing is written) */
	if (geteuid() == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			/* as nobody, with the default /run/clockdoctor */
			unsetenv("CLOCKDOCTOR_STATE_DIR");
			if (setgid(65534) != 0 || setuid(65534) != 0)
				_exit(3);
			char m[1024];
			int rc = cd_verdict_save(&f, &t, m, sizeof m);
			_exit(rc < 0 && strstr(m, "could not save the verdict in /run/clockdoctor") &&
			      strstr(m, "not root; as root it would be saved") ? 0 : 1);
		}
		int status = 0;
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	unsetenv("CLOCKDOCTOR_STATE_DIR");
}

int main(void)
{
	unit_tempdir(base, sizeof base, "test-verdict");
	test_format();
	test_write();
	test_save_and_load();
	return unit_done("test_verdictfile");
}
