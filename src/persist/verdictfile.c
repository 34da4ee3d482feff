/* SPDX-License-Identifier: MIT */
/*
 * verdictfile.c: saving and reading the per-boot TSC verdict
 * (verdictfile.h).
 *
 * Root writes a file that every process under the accelerator reads and
 * trusts, so the writing is careful in the ways csrestore.c's record is: the
 * folder must be a real folder owned by us and writable by nobody else (a
 * planted symlink or a folder another user controls could make root write
 * elsewhere, or let that user swap the verdict), the temporary file is
 * created with O_EXCL|O_NOFOLLOW, and rename() replaces the old verdict in
 * one step (a symlink planted at the name is replaced, never followed).
 * Unlike the record, the folder is 0755: the verdict is read by everyone.
 */
#include "persist/verdictfile.h"
#include "diagnose/tscjudge.h"
#include "persist/statedir.h"
#include "util/atomicfile.h"
#include "util/fsread.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cd_verdict_read_path(char *out, size_t len)
{
	const char *env = getenv("FASTCLOCK_VERDICT");
	int n = env && *env ? snprintf(out, len, "%s", env)
	                    : snprintf(out, len, "%s/%s", cd_state_dir(), CD_VERDICT_FILE);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A value that cannot break the key=value lines. */
static int value_ok(const char *s)
{
	return s && !strpbrk(s, "\n\r=");
}

int cd_verdict_format(char *buf, size_t len, const char *boot_id, enum cd_tsc_verdict v, double hz,
                      const char *clocksource, long long when, const char *counter)
{
	if (!value_ok(boot_id) || !*boot_id || !value_ok(clocksource ? clocksource : "") ||
	    !value_ok(counter ? counter : ""))
		return -EINVAL;
	if (!(hz > 0) || hz > 1e12)
		hz = 0;
	int n = snprintf(buf, len, "boot_id=%s\nverdict=%s\ncounter_hz=%.0f\nclocksource=%s\ntime=%lld\n%s%s%s",
	                 boot_id, cd_tsc_verdict_name(v), hz, clocksource ? clocksource : "", when,
	                 counter && *counter ? "counter=" : "", counter && *counter ? counter : "",
	                 counter && *counter ? "\n" : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

/* mkdir -p, each new folder 0755.  The last must then be a folder of ours
 * alone (cd_dir_is_ours); one made 0700 by an older run (the bench
 * record's folder) is opened to readers. */
static int make_state_dir(const char *dir, char *err, size_t errlen)
{
	char failed[PATH_MAX];
	struct stat st;
	if (strlen(dir) >= sizeof failed) {
		snprintf(err, errlen, "the state folder name is too long");
		return -ENAMETOOLONG;
	}
	int rc = cd_make_dirs(dir, 0755, failed, sizeof failed);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create %s: %s", failed, strerror(-rc));
		return rc;
	}
	rc = cd_dir_is_ours(dir, &st);
	if (rc == -EPERM) {
		snprintf(err, errlen, "%s is not a folder of ours alone (it must be a folder owned by uid %ld and "
		         "writable by nobody else): not writing the verdict there", dir, (long)geteuid());
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(-rc));
		return rc;
	}
	if ((st.st_mode & 0755) != 0755 && chmod(dir, (st.st_mode & 07777) | 0755) != 0) {
		int e = errno;
		snprintf(err, errlen, "cannot make %s readable by every user: %s", dir, strerror(e));
		return -e;
	}
	return 0;
}

int cd_verdict_write(const char *dir, const char *text, size_t len, char *err, size_t errlen)
{
	int rc = make_state_dir(dir, err, errlen);
	if (rc < 0)
		return rc;
	char final[PATH_MAX], tmp[PATH_MAX];
	if (snprintf(final, sizeof final, "%s/%s", dir, CD_VERDICT_FILE) >= (int)sizeof final ||
	    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, CD_VERDICT_FILE, (long)getpid()) >= (int)sizeof tmp) {
		snprintf(err, errlen, "the state folder name is too long");
		return -ENAMETOOLONG;
	}
	unlink(tmp); /* a leftover of a killed run with our pid: ours to remove */
	/* 0644 whatever the umask: every process under the accelerator reads it. */
	rc = cd_write_new(tmp, text, len, 0644);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(-rc));
		return rc;
	}
	/* rename: a symlink planted at the name is replaced, never followed. */
	rc = cd_publish(tmp, final, true);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", final, strerror(-rc));
		return rc;
	}
	return 0;
}

/* The frequency a clock should be told: the measurement against
 * MONOTONIC_RAW (kernel nanoseconds, whatever the clocksource), else the
 * kernel's own figure. */
static double verdict_hz(const struct cd_tsc_report *t)
{
	const struct cd_tsc_freq *m = &t->src[CD_SRC_MEASURED];
	if (m->have && m->hz > 0)
		return m->hz;
	return t->ref_hz > 0 ? t->ref_hz : 0;
}

/* The architecture this binary is built for, as the kernel names its own
 * (/proc/sys/kernel/arch). */
#if defined(__x86_64__)
#define MY_ARCH "x86_64"
#elif defined(__aarch64__)
#define MY_ARCH "aarch64"
#else
#define MY_ARCH NULL
#endif

int cd_verdict_save(const struct cd_facts *f, const struct cd_tsc_report *t, char *msg, size_t msglen)
{
	const char *dir = cd_state_dir();
	char boot[64], text[512], err[PATH_MAX + 200], arch[64];
	/* Under qemu-user an arm64 build runs on an x86-64 kernel: uname()
	 * says aarch64, the kernel's own file does not.  Its counter is the
	 * emulator's, and the machine's programs must not read its verdict. */
	if (MY_ARCH && cd_read_raw("/proc/sys/kernel/arch", arch, sizeof arch, 0) > 0 &&
	    (arch[strcspn(arch, "\n")] = '\0', strcmp(arch, MY_ARCH) != 0)) {
		snprintf(msg, msglen, "not saving the verdict: this clockdoctor is built for %s but the kernel is "
		         "%s (an emulator), so its counter is not the machine's", MY_ARCH, arch);
		return -EXDEV;
	}
	int rc = cd_boot_id(boot, sizeof boot);
	if (rc < 0) {
		snprintf(msg, msglen, "could not save the verdict: this boot's id is unreadable "
		         "(/proc/sys/kernel/random/boot_id: %s)", strerror(-rc));
		return rc;
	}
	int n = cd_verdict_format(text, sizeof text, boot, t->verdict, verdict_hz(t),
	                          f->cs.have_current ? f->cs.current : "", (long long)time(NULL),
	                          fc_counter_kind_name(t->counter.kind));
	if (n < 0) {
		snprintf(msg, msglen, "could not save the verdict: %s", strerror(-n));
		return n;
	}
	rc = cd_verdict_write(dir, text, (size_t)n, err, sizeof err);
	if (rc == 0) {
		snprintf(msg, msglen, "saved the verdict (%s) for this boot in %s/%s", cd_tsc_verdict_name(t->verdict),
		         dir, CD_VERDICT_FILE);
	} else if ((rc == -EACCES || rc == -EPERM || rc == -EROFS) && geteuid() != 0) {
		snprintf(msg, msglen, "could not save the verdict in %s: not root; as root it would be saved for "
		         "libfastclock and `clockdoctor run` to use on this boot (%s)", dir, err);
	} else {
		snprintf(msg, msglen, "could not save the verdict: %s", err);
	}
	return rc;
}

enum cd_verdict_state cd_verdict_load(const char *path, struct fc_verdict *v, char *why, size_t whylen)
{
	memset(v, 0, sizeof *v);
	/* Opened once, then checked and read through the same descriptor: a
	 * file swapped in after a check by path is never the one read; a link
	 * at the name is refused, a FIFO never waited on. */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(why, whylen, "%s: %s", path, e == ELOOP ? "a symbolic link, not read" : strerror(e));
		return e == ENOENT || e == ENOTDIR ? CD_VF_NONE : CD_VF_UNUSABLE;
	}
	/* The library's own rule: a verdict another user could have written
	 * is not one to trust. */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022) || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, whylen, "%s is not a regular file owned by root (or by you) and writable by nobody "
		         "else", path);
		return CD_VF_UNUSABLE;
	}
	char text[1024], boot[64];
	ssize_t n = cd_read_full(fd, text, sizeof text - 1, NULL);
	close(fd);
	if (n < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror((int)-n));
		return CD_VF_UNUSABLE;
	}
	text[n] = '\0';
	if (fc_verdict_parse(text, (size_t)n, v) != 0) {
		snprintf(why, whylen, "%s is malformed", path);
		return CD_VF_UNUSABLE;
	}
	if (cd_boot_id(boot, sizeof boot) != 0) {
		snprintf(why, whylen, "this boot's id is unreadable (/proc/sys/kernel/random/boot_id)");
		return CD_VF_UNUSABLE;
	}
	if (strcmp(boot, v->boot_id) != 0) {
		snprintf(why, whylen, "the verdict in %s is from another boot", path);
		return CD_VF_OTHER_BOOT;
	}
	snprintf(why, whylen, "%s says %s on this boot", path,
	         v->verdict == 0 ? "sound" : v->verdict == 1 ? "unknown" : "unsound");
	return CD_VF_THIS_BOOT;
}
