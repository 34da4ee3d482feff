/* SPDX-License-Identifier: MIT */
/* Unit tests of fix --persist and --undo against scratch trees under /tmp:
 * the drop-ins as /bin/sh reads them, the record, undo leaving the tree
 * byte for byte as it was (every path, type, mode and content compared),
 * a foreign file kept and put back, an edited file set aside, a failure
 * midway undone, and the families it does not write for. */
#include "persist/bootcfg_impl.h"
#include "util/beneath.h"
#include "unit.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];
static char *listing;
static size_t listing_len, listing_cap;

/* root/rel, in one of two buffers used in turn */
static const char *at(const char *rel)
{
	static char p[2][256];
	static int i;
	i ^= 1;
	snprintf(p[i], sizeof p[i], "%s%s", root, rel);
	return p[i];
}

static void put(const char *rel, const char *text, mode_t mode)
{
	unit_put_mode(at(rel), text, mode);
}

static void dir(const char *rel)
{
	mkdir(at(rel), 0755);
}

static const char *get(const char *rel)
{
	return unit_get(at(rel));
}

static bool exists(const char *rel)
{
	return unit_exists(at(rel));
}

static int add_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	char line[8192];
	int n = snprintf(line, sizeof line, "%s %o", path + strlen(root), (unsigned)st->st_mode);
	if (S_ISREG(st->st_mode)) {
		FILE *f = fopen(path, "r");
		char buf[4096];
		size_t k = f ? fread(buf, 1, sizeof buf, f) : 0;
		if (f)
			fclose(f);
		n += snprintf(line + n, sizeof line - (size_t)n, " %zu %016llx", k,
		              (unsigned long long)cd_fnv1a64(buf, k));
	}
	if (listing_len + (size_t)n + 2 > listing_cap) {
		listing_cap = (listing_cap + (size_t)n + 2) * 2;
		listing = realloc(listing, listing_cap);
	}
	memcpy(listing + listing_len, line, (size_t)n);
	listing_len += (size_t)n;
	listing[listing_len++] = '\n';
	listing[listing_len] = '\0';
	return 0;
}

/* Every path under root with its mode, and each file's size and hash. */
static char *snapshot(void)
{
	listing = NULL;
	listing_len = listing_cap = 0;
	nftw(root, add_entry, 16, FTW_PHYS);
	return listing;
}

static void fresh(void)
{
	if (unit_rmtree(root) != 0)
		exit(2);
	unit_mkdirs(at("/etc/default"));
	put("/etc/default/grub", "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n"
	    "GRUB_CMDLINE_LINUX=\"console=ttyS0 clocksource=acpi_pm\"\n", 0640);
}

static struct cd_plan *plan_of(const char *add, const char *remove)
{
	static struct cd_plan p;
	memset(&p, 0, sizeof p);
	if (add) {
		snprintf(p.params[p.n_params].token, sizeof p.params[0].token, "%s", add);
		p.params[p.n_params++].add = true;
	}
	if (remove)
		snprintf(p.params[p.n_params++].token, sizeof p.params[0].token, "%s", remove);
	return &p;
}

/* What grub-mkconfig would see: /etc/default/grub, then every drop-in, read
 * by /bin/sh. */
static const char *as_grub_sees(void)
{
	static char buf[512];
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sh -c '. %s/etc/default/grub; for f in %s/etc/default/grub.d/*.cfg; do "
	         "[ -e \"$f\" ] && . \"$f\"; done; echo \"$GRUB_CMDLINE_LINUX|$GRUB_CMDLINE_LINUX_DEFAULT\"'",
	         root, root);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
	buf[n] = '\0';
	if (p)
		pclose(p);
	return buf;
}

static bool steps_have(const struct cd_steps *s, const char *text)
{
	return UNIT_ROWS_HAVE(s->line, s->n, text);
}

static void test_debian_persist_undo(void)
{
	fresh();
	char *before = snapshot();
	struct cd_persist_job job;
	char err[300];
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", "clocksource=acpi_pm"), &job,
	                             err, sizeof err), 0);
	CHECK(!job.live);
	CHECK_INT(job.n_dropins, 2);
	CHECK_STR(job.dropins[0].path, "/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg");
	CHECK_STR(job.dropins[1].path, "/etc/default/grub.d/90-clockdoctor-remove-clocksource-acpi_pm.cfg");
	CHECK_STR(job.regen, "update-grub");
	CHECK_INT(job.n_warnings, 0);
	struct cd_steps steps = { 0 };
	cd_persist_describe(&job, &steps);
	CHECK(steps_have(&steps, "$ mkdir -p "));
	CHECK(steps_have(&steps, "    GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT tsc=reliable\""));
	CHECK(steps_have(&steps, "chroot "));
	CHECK(steps_have(&steps, "fix.record"));
	/* The dry run wrote nothing. */
	char *after_describe = snapshot();
	CHECK_STR(after_describe, before);
	free(after_describe);

	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	CHECK(steps_have(&steps, "wrote the record"));
	CHECK(steps_have(&steps, "not run under --root"));
	CHECK_STR(as_grub_sees(), "console=ttyS0|quiet tsc=reliable\n");
	CHECK(strstr(get(CD_RECORD_PATH), "\nfamily debian\n") != NULL);
	CHECK(strstr(get(CD_RECORD_PATH), "\nmkdir /var\n") != NULL);
	CHECK(strstr(get(CD_RECORD_PATH), "\nmkdir /etc/default/grub.d\n") != NULL);
	struct stat st;
	char p[256];
	snprintf(p, sizeof p, "%s/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg", root);
	CHECK_INT(stat(p, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0644);
	CHECK_STR(get("/etc/default/grub"), "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n"
	          "GRUB_CMDLINE_LINUX=\"console=ttyS0 clocksource=acpi_pm\"\n"); /* never touched */

	/* Twice: the run looks again under its lock, finds its change in
	 * place, and writes nothing. */
	memset(&steps, 0, sizeof steps);
	char *done = snapshot();
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	CHECK(job.in_place);
	CHECK(steps_have(&steps, "in place already"));
	char *again = snapshot();
	CHECK_STR(again, done);
	free(again);
	free(done);

	bool had;
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_undo(root, &had, &steps), 0);
	CHECK(had);
	CHECK(steps_have(&steps, "removed the record"));
	char *after = snapshot();
	CHECK_STR(after, before);
	free(after);
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_undo(root, &had, &steps), 0);
	CHECK(!had);
	CHECK(steps_have(&steps, "nothing to undo"));
	free(before);
}

static void test_foreign_and_edited(void)
{
	fresh();
	dir("/etc/default/grub.d");
	dir("/var");
	put("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg", "# the operator's own\n", 0600);
	char *before = snapshot();
	struct cd_persist_job job;
	char err[300];
	struct cd_steps steps = { 0 };
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK(job.dropins[0].present_other);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	CHECK_STR(get("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg.clockdoctor-backup"),
	          "# the operator's own\n");
	CHECK(strstr(get("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"), "tsc=reliable\"") != NULL);
	bool had;
	CHECK_INT(cd_persist_undo(root, &had, &steps), 0);
	char *after = snapshot();
	CHECK_STR(after, before); /* the operator's file is back, mode and all */
	free(after);
	free(before);

	/* The same content is there already: left alone, nothing recorded. */
	fresh();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	dir("/etc/default/grub.d");
	put("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg", job.dropins[0].content, 0644);
	before = snapshot();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK(job.dropins[0].present_same);
	CHECK_INT(job.n_warnings, 0);
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	CHECK(steps_have(&steps, "nothing to write"));
	after = snapshot();
	CHECK_STR(after, before);
	free(after);
	free(before);

	/* Ours, edited by someone since: undo sets it aside, deletes nothing
	 * of theirs, and takes the rest back. */
	fresh();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	put("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg", "# edited\n", 0644);
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_undo(root, &had, &steps), 0);
	CHECK(steps_have(&steps, "moved aside"));
	CHECK_STR(get("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg.clockdoctor-edited"), "# edited\n");
	CHECK(!exists("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"));
	CHECK(steps_have(&steps, "left the folder"));  /* grub.d holds the edited file */
	CHECK(!exists(CD_RECORD_PATH));
	CHECK(!exists("/var"));
}

static void test_warnings_and_failure(void)
{
	/* No /etc/default/grub, and a parameter to remove that is not there. */
	fresh();
	char p[256];
	snprintf(p, sizeof p, "%s/etc/default/grub", root);
	unlink(p);
	struct cd_persist_job job;
	char err[300];
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of(NULL, "notsc"), &job, err, sizeof err), 0);
	CHECK_INT(job.n_warnings, 2);
	CHECK(strstr(job.warnings[0], "is GRUB this machine's boot loader") != NULL);
	CHECK(strstr(job.warnings[1], "notsc is not in") != NULL);

	/* grub.d is a file, so no drop-in can be written: refused before
	 * anything is written, and the tree is as it was. */
	fresh();
	put("/etc/default/grub.d", "not a folder\n", 0644);
	char *before = snapshot();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	struct cd_steps steps = { 0 };
	CHECK(cd_persist_run(&job, &steps) < 0);
	CHECK(steps_have(&steps, "/etc/default/grub.d: Not a directory"));
	CHECK(steps_have(&steps, "nothing was changed"));
	char *after = snapshot();
	CHECK_STR(after, before);
	free(after);
	free(before);

	/* A record that is not one fix wrote: undo touches nothing. */
	fresh();
	dir("/var");
	dir("/var/lib");
	dir("/var/lib/clockdoctor");
	put(CD_RECORD_PATH, "clockdoctor fix record 1\ncreated 1\nfamily debian\nfile /etc/default/grub "
	    "mode=0644 size=1 fnv=0123456789abcdef add=$(x)\n", 0600);
	before = snapshot();
	bool had;
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_undo(root, &had, &steps), -EINVAL);
	CHECK(had);
	CHECK(steps_have(&steps, "is not one fix wrote"));
	after = snapshot();
	CHECK_STR(after, before);
	free(after);
	free(before);
}

static void test_other_families(void)
{
	fresh();
	char *before = snapshot();
	struct cd_persist_job job;
	char err[300];
	struct cd_steps steps = { 0 };
	/* Red Hat under --root: grubby is printed, never run, nothing written. */
	CHECK_INT(cd_persist_prepare(root, CD_OS_REDHAT, plan_of("tsc=reliable", "clocksource=acpi_pm"), &job,
	                             err, sizeof err), 0);
	CHECK_INT(job.n_grubby, 2);
	CHECK_INT(job.n_dropins, 0);
	CHECK(strstr(job.warnings[0], "not run") != NULL);
	cd_persist_describe(&job, &steps);
	CHECK(steps_have(&steps, "$ grubby --update-kernel=ALL --args=tsc=reliable"));
	CHECK(steps_have(&steps, "$ grubby --update-kernel=ALL --remove-args=clocksource=acpi_pm"));
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	CHECK(steps_have(&steps, "nothing to write"));
	char *after = snapshot();
	CHECK_STR(after, before);
	free(after);
	free(before);
	CHECK_INT(cd_persist_prepare(root, CD_OS_SUSE, plan_of("tsc=reliable", NULL), &job, err, sizeof err),
	          -ENOTSUP);
	CHECK(strstr(err, "by hand") != NULL);
	CHECK_INT(cd_persist_prepare(root, CD_OS_UNKNOWN, plan_of("tsc=reliable", NULL), &job, err, sizeof err),
	          -ENOTSUP);
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("a/../b", NULL), &job, err, sizeof err),
	          -EINVAL);
	CHECK_INT(cd_persist_prepare("", CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err),
	          -EINVAL);
	/* GRUB legacy (menu.lst, no /etc/default/grub): no drop-in, said why. */
	fresh();
	char rm[200];
	snprintf(rm, sizeof rm, "%s/etc/default/grub", root);
	unlink(rm);
	dir("/boot");
	dir("/boot/grub");
	put("/boot/grub/menu.lst", "# kopt=root=/dev/sda1 ro\n", 0644);
	before = snapshot();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err),
	          -ENOTSUP);
	CHECK(strstr(err, "GRUB legacy") != NULL && strstr(err, "kopt") != NULL);
	after = snapshot();
	CHECK_STR(after, before);
	free(after);
	free(before);
	/* ... but with /etc/default/grub as well, GRUB 2 is in charge. */
	put("/etc/default/grub", "GRUB_CMDLINE_LINUX=\"\"\n", 0644);
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	fresh();
	/* The root's trailing slashes do not matter. */
	char slashed[80];
	snprintf(slashed, sizeof slashed, "%s//", root);
	CHECK_INT(cd_persist_prepare(slashed, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK_STR(job.root, root);
}

/* An earlier --persist whose recorded change is still in place: the job
 * is done already (nothing written, success), and a change edited since,
 * or a different one, is not taken for it. */
static void test_in_place(void)
{
	fresh();
	struct cd_persist_job job;
	char err[300];
	struct cd_steps steps = { 0 };
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK(!job.have_record && !job.in_place);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	char *written = snapshot();
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK(job.have_record && job.in_place && job.dropins[0].ours);
	memset(&steps, 0, sizeof steps);
	cd_persist_describe(&job, &steps);
	CHECK(steps_have(&steps, "in place already"));
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_run(&job, &steps), 0);
	char *again = snapshot();
	CHECK_STR(again, written);
	free(again);
	free(written);
	/* another change than the recorded one: refused until undo */
	CHECK_INT(cd_persist_prepare(root, CD_OS_DEBIAN, plan_of("tsc=reliable", "clocksource=acpi_pm"), &job,
	                             err, sizeof err), 0);
	CHECK(job.have_record && !job.in_place);
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_run(&job, &steps), -EEXIST);
	bool had;
	memset(&steps, 0, sizeof steps);
	CHECK_INT(cd_persist_undo(root, &had, &steps), 0);
	CHECK(had);

	/* Red Hat: the record of a grubby call with this very token */
	fresh();
	struct cd_record *r = calloc(1, sizeof *r);
	snprintf(r->family, sizeof r->family, "redhat");
	r->done = true;
	r->n = 1;
	r->ch[0].kind = CD_CH_GRUBBY;
	r->ch[0].add = true;
	snprintf(r->ch[0].token, sizeof r->ch[0].token, "tsc=reliable");
	char text[4096];
	CHECK(cd_record_format(r, text, sizeof text) > 0);
	dir("/var");
	dir("/var/lib");
	dir("/var/lib/clockdoctor");
	put(CD_RECORD_PATH, text, 0644);
	CHECK_INT(cd_persist_prepare(root, CD_OS_REDHAT, plan_of("tsc=reliable", NULL), &job, err, sizeof err), 0);
	CHECK(job.in_place);
	CHECK_INT(cd_persist_prepare(root, CD_OS_REDHAT, plan_of("tsc=reliable", "clocksource=acpi_pm"), &job,
	                             err, sizeof err), 0);
	CHECK(!job.in_place);
	free(r);
}

/* The Red Hat family's copies: taken beneath the root, then removed with
 * nothing in the folder followed (a link planted in it is removed as a
 * name, its target kept). */
static void test_grubby_backup(void)
{
	fresh();
	dir("/boot");
	dir("/boot/loader");
	dir("/boot/loader/entries");
	put("/boot/loader/entries/a.conf", "options quiet\n", 0600);
	put("/keep", "precious\n", 0644);
	int rootfd = cd_root_open(root);
	CHECK(rootfd >= 0);
	dir("/var");
	dir("/var/lib");
	dir("/var/lib/clockdoctor");
	CHECK_INT(cd_grubby_backup(rootfd, "/var/lib/clockdoctor/backup-1"), 0);
	CHECK_STR(get("/var/lib/clockdoctor/backup-1/boot/loader/entries/a.conf"), "options quiet\n");
	CHECK_STR(get("/var/lib/clockdoctor/backup-1/etc/default/grub"), get("/etc/default/grub"));
	CHECK_INT(symlink(at("/keep"), at("/var/lib/clockdoctor/backup-1/boot/link")), 0);
	CHECK_INT(cd_grubby_backup_remove(rootfd, "/var/lib/clockdoctor/backup-1"), 0);
	CHECK(!exists("/var/lib/clockdoctor/backup-1"));
	CHECK_STR(get("/keep"), "precious\n");
	CHECK_INT(cd_grubby_backup_remove(rootfd, "/var/lib/clockdoctor/backup-1"), 0);   /* gone: done */
	close(rootfd);
}

/* The lock of this machine's runs: fix.lock in a state folder of ours
 * alone (made 0700), reused, never through a link. */
static void test_live_lock(void)
{
	char state[700], lock[720];
	snprintf(state, sizeof state, "%s/state", root);
	snprintf(lock, sizeof lock, "%s/fix.lock", state);
	setenv("CLOCKDOCTOR_STATE_DIR", state, 1);
	struct cd_steps steps = { 0 };
	int fd = cd_persist_lock(-1, true, &steps);
	CHECK(fd >= 0);
	struct stat st;
	CHECK_INT(lstat(state, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0700);
	CHECK_INT(lstat(lock, &st), 0);
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	cd_persist_unlock(fd);
	fd = cd_persist_lock(-1, true, &steps);
	CHECK(fd >= 0);
	cd_persist_unlock(fd);
	chmod(state, 0777);
	CHECK_INT(cd_persist_lock(-1, true, &steps), -EPERM);
	CHECK(steps_have(&steps, "not a folder of ours alone"));
	chmod(state, 0700);
	unlink(lock);
	CHECK_INT(symlink("/etc/passwd", lock), 0);
	CHECK_INT(cd_persist_lock(-1, true, &steps), -ELOOP);
	CHECK(steps_have(&steps, "nothing changed"));
	unlink(lock);
	rmdir(state);
	unsetenv("CLOCKDOCTOR_STATE_DIR");
}

int main(void)
{
	unit_tempdir(root, sizeof root, "bootcfg");
	test_debian_persist_undo();
	test_foreign_and_edited();
	test_warnings_and_failure();
	test_other_families();
	test_in_place();
	test_grubby_backup();
	test_live_lock();
	return unit_done("bootcfg");
}
