/* SPDX-License-Identifier: MIT */
/*
 * runplan.c: what `clockdoctor run` works out before it starts a program
 * (runplan.h): the program found as a shell would, what the kernel and the
 * loader will start for it, the LD_PRELOAD list, and whether the
 * accelerator goes in front of it, with the line that says why.  The
 * command itself, which execs the program, is run.c.
 */
#include "runplan.h"
#include "util/fsread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- LD_PRELOAD ---- */

static bool is_sep(char c)
{
	return c == ' ' || c == ':';
}

int cd_run_preload_compose(const char *existing, const char *lib, char *out, size_t len)
{
	if (!lib || !*lib || strpbrk(lib, " :\t\n"))
		return -EINVAL;
	if (!existing)
		existing = "";
	size_t n = strlen(existing), lib_len = strlen(lib);
	while (n > 0 && (is_sep(existing[n - 1]) || existing[n - 1] == '\t' || existing[n - 1] == '\n'))
		n--;
	size_t start = 0;
	while (start < n && is_sep(existing[start]))
		start++;
	/* Already there, as a whole entry: nothing to add. */
	bool present = false, spaces = false, colons = false;
	for (size_t i = start; i < n;) {
		size_t j = i;
		while (j < n && !is_sep(existing[j]))
			j++;
		if (j - i == lib_len && memcmp(existing + i, lib, lib_len) == 0)
			present = true;
		while (j < n && is_sep(existing[j])) {
			spaces |= existing[j] == ' ';
			colons |= existing[j] == ':';
			j++;
		}
		i = j;
	}
	size_t body = n - start;
	size_t need = present || body == 0 ? (present ? body : lib_len) : body + 1 + lib_len;
	if (need + 1 > len)
		return -ENAMETOOLONG;
	if (present) {
		memcpy(out, existing + start, body);
		out[body] = '\0';
		return 1;
	}
	if (body == 0) {
		memcpy(out, lib, lib_len + 1);
		return 0;
	}
	memcpy(out, existing + start, body);
	out[body] = spaces && !colons ? ' ' : ':';
	memcpy(out + body + 1, lib, lib_len + 1);
	return 0;
}

/* ---- finding the program ---- */

/* 0 for an executable regular file, else -errno as execve would say. */
static int executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return -EACCES;
	return 0;
}

int cd_run_find(const char *name, const char *path_env, char *out, size_t len)
{
	if (!name || !*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= len)
			return -ENAMETOOLONG;
		strcpy(out, name);
		return executable(name);
	}
	if (!path_env)
		path_env = "/bin:/usr/bin";
	int seen = -ENOENT;
	const char *p = path_env;
	for (;;) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		int n = dlen == 0 ? snprintf(out, len, "%s", name) : snprintf(out, len, "%.*s/%s", (int)dlen, p, name);
		if (n >= 0 && (size_t)n < len) {
			int rc = executable(out);
			if (rc == 0)
				return 0;
			/* Like execvp, go on past a file that may not be run, and
			 * say so only when nothing later can be (a folder of the
			 * name is passed over, as shells do). */
			if (rc == -EACCES)
				seen = -EACCES;
		}
		if (!end)
			break;
		p = end + 1;
	}
	out[0] = '\0';
	return seen;
}

int cd_run_shebang(const char *buf, size_t len, char *interp, size_t ilen)
{
	if (len < 3 || buf[0] != '#' || buf[1] != '!')
		return 0;
	size_t i = 2;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	size_t j = i;
	while (j < len && buf[j] != ' ' && buf[j] != '\t' && buf[j] != '\n' && buf[j] != '\0')
		j++;
	if (j == i || j - i >= ilen)
		return 0;
	memcpy(interp, buf + i, j - i);
	interp[j - i] = '\0';
	return 1;
}

/* One of the two ids, kind "u" or "g": when exec would leave the effective
 * id (new_id) other than the real one, true and why. */
static bool id_differs(const char *kind, long new_id, long eff, long real, long file_id, char *why, size_t whylen)
{
	if (new_id == real)
		return false;
	if (new_id != eff)
		snprintf(why, whylen, "it is set%sid (to %sid %ld)", kind, kind, file_id);
	else
		snprintf(why, whylen, "clockdoctor itself runs with another effective %sid (%ld) than its real "
		         "one (%ld)", kind, eff, real);
	return true;
}

bool cd_run_secure_exec(mode_t mode, uid_t fuid, gid_t fgid, bool nosuid, bool file_caps, uid_t ruid,
                        uid_t euid, gid_t rgid, gid_t egid, char *why, size_t whylen)
{
	uid_t new_euid = euid;
	gid_t new_egid = egid;
	if (!nosuid && (mode & S_ISUID))
		new_euid = fuid;
	if (!nosuid && (mode & S_ISGID) && (mode & S_IXGRP))
		new_egid = fgid;
	why[0] = '\0';
	if (id_differs("u", (long)new_euid, (long)euid, (long)ruid, (long)fuid, why, whylen) ||
	    id_differs("g", (long)new_egid, (long)egid, (long)rgid, (long)fgid, why, whylen))
		return true;
	if (file_caps && ruid != 0) {
		snprintf(why, whylen, "it has file capabilities (security.capability)");
		return true;
	}
	return false;
}

void cd_run_inspect(const char *path, struct cd_run_prog *p)
{
	memset(p, 0, sizeof *p);
	snprintf(p->path, sizeof p->path, "%s", path);
	snprintf(p->loaded, sizeof p->loaded, "%s", path);
	struct stat st;
	if (stat(path, &st) == 0) {
		struct statvfs vfs;
		bool nosuid = statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID);
		bool caps = getxattr(path, "security.capability", NULL, 0) > 0;
		p->secure = cd_run_secure_exec(st.st_mode, st.st_uid, st.st_gid, nosuid, caps, getuid(), geteuid(),
		                               getgid(), getegid(), p->secure_why, sizeof p->secure_why);
	}
	/* The kernel follows "#!" a few levels deep (binfmt_script, up to
	 * BINPRM_MAX_RECURSION); 4 is plenty and ends a loop. */
	for (int level = 0; level <= 4; level++) {
		int rc = cd_elf_classify_file(p->loaded, &p->elf);
		if (rc < 0) {
			p->err = rc;
			return;
		}
		if (p->elf.kind != CD_ELF_NOT_ELF)
			return;
		char buf[256 + 1], interp[PATH_MAX]; /* the first 256 bytes, for "#!" */
		int n = cd_read_raw(p->loaded, buf, sizeof buf, 0);
		if (n < 0) {
			p->err = n;
			return;
		}
		if (level == 4)
			break;
		if (!cd_run_shebang(buf, (size_t)n, interp, sizeof interp))
			snprintf(interp, sizeof interp, "/bin/sh"); /* execvp: ENOEXEC runs it with sh */
		snprintf(p->loaded, sizeof p->loaded, "%s", interp);
		p->scripts++;
	}
	p->err = -ELOOP;
}

/* ---- the decision ---- */

/* "the kernel's clocksource hpet", or what is known of it. */
static const char *cs_of(const struct fc_info *i)
{
	return i->kernel_clocksource[0] ? i->kernel_clocksource : "(unknown)";
}

bool cd_run_blocked(const struct cd_run_facts *f, char *msg, size_t len)
{
	const struct cd_run_prog *p = f->prog;
	char via[PATH_MAX + 40] = "", mbuf[24];
	if (p->scripts)
		snprintf(via, sizeof via, "its interpreter %s ", p->loaded);
	if (p->secure) {
		snprintf(msg, len, "cannot accelerate %s: %s, and the dynamic loader ignores LD_PRELOAD for such "
		         "programs; running it unchanged", f->name, p->secure_why);
		return true;
	}
	if (p->err) {
		snprintf(msg, len, "cannot accelerate %s: cannot read %s (%s); running it unchanged", f->name,
		         p->loaded, strerror(-p->err));
		return true;
	}
	switch (p->elf.kind) {
	case CD_ELF_NOT_ELF:
		snprintf(msg, len, "cannot accelerate %s: %s is not an ELF program; running it unchanged", f->name,
		         p->loaded);
		return true;
	case CD_ELF_BAD:
		snprintf(msg, len, "cannot accelerate %s: %s has malformed ELF headers (%s); running it unchanged",
		         f->name, p->loaded, p->elf.bad_why);
		return true;
	case CD_ELF_STATIC:
	case CD_ELF_DYNAMIC:
		break;
	}
	/* Go first: most Go programs are static too, and this is the reason
	 * that holds for the dynamic ones as well. */
	if (p->elf.go) {
		snprintf(msg, len, "cannot accelerate %s: %sis a Go program (%s): Go's runtime calls the vDSO "
		         "itself, past libc, so LD_PRELOAD cannot reach its time calls; running it unchanged", f->name,
		         via[0] ? via : "it ", p->elf.go_why);
		return true;
	}
	if (p->elf.kind == CD_ELF_STATIC) {
		snprintf(msg, len, "cannot accelerate %s: %sis statically linked (no program interpreter), so "
		         "LD_PRELOAD cannot reach its time calls; running it unchanged", f->name, via[0] ? via : "it ");
		return true;
	}
	if (!cd_elf_native(&p->elf)) {
		snprintf(msg, len, "cannot accelerate %s: %sis a %d-bit %s program, and the accelerator is built for "
		         "this machine's %d-bit programs; running it unchanged", f->name, via[0] ? via : "it ",
		         p->elf.bits, cd_elf_machine_name(p->elf.machine, mbuf, sizeof mbuf), (int)sizeof(void *) * 8);
		return true;
	}
	if (!f->preload) {
		snprintf(msg, len, "cannot accelerate %s: %s; running it unchanged", f->name, f->preload_why);
		return true;
	}
	return false;
}

/* Why the library reads the kernel's clock, for someone who wants it not
 * to: what to do about it. */
static void kernel_source(const struct cd_run_facts *f, char *msg, size_t len)
{
	const struct fc_info *i = f->info;
	const char *name = f->name;
	bool forced = f->fastclock && strcmp(f->fastclock, "force") == 0;
	char slow[160];
	snprintf(slow, sizeof slow, "the kernel's clocksource %s makes every time call a system call", cs_of(i));
	switch (i->reason) {
	case FC_REASON_OFF:
		snprintf(msg, len, "not accelerating %s: FASTCLOCK=off; running it on the kernel's clock", name);
		return;
	case FC_REASON_NOT_INVARIANT: {
		/* Where a verdict would matter, say its state too: it is the
		 * next thing the operator would look at. */
		char also[PATH_MAX + 200] = "";
		if (i->kernel_vdso_fast == 0 && f->vf == CD_VF_THIS_BOOT && f->verdict->verdict == 2)
			snprintf(also, sizeof also, "; and `clockdoctor tsc` found the TSC unsound on this boot");
		else if (i->kernel_vdso_fast == 0 && !(f->vf == CD_VF_THIS_BOOT && f->verdict->verdict == 0))
			snprintf(also, sizeof also, "; and there is no sound TSC verdict for this boot (%s)",
			         f->vf_why && *f->vf_why ? f->vf_why : "none");
		snprintf(msg, len, "not accelerating %s: %sthe TSC is not invariant (its rate follows the CPU's power "
		         "states), so the library falls back to the kernel's clock (%s)%s; running it on the kernel's "
		         "clock", name, forced ? "FASTCLOCK=force, but " : "", i->reason_text, also);
		return;
	}
	case FC_REASON_UNVERIFIED:
	case FC_REASON_NO_SYSFS:
		if (f->vf == CD_VF_OTHER_BOOT)
			snprintf(msg, len, "not accelerating %s: %s, and %s: run `clockdoctor tsc` as root on this boot, or "
			         "`clockdoctor run --verify`; running it on the kernel's clock", name,
			         i->kernel_vdso_fast == 0 ? slow : "the kernel is not on the TSC", f->vf_why);
		else if (f->vf == CD_VF_THIS_BOOT && f->verdict->verdict == 1)
			snprintf(msg, len, "not accelerating %s: %s, and `clockdoctor tsc` could not conclude on this boot "
			         "(verdict unknown: see `clockdoctor tsc`); running it on the kernel's clock", name,
			         i->kernel_vdso_fast == 0 ? slow : "the kernel is not on the TSC");
		else
			snprintf(msg, len, "not accelerating %s: %s, but there is no sound TSC verdict for this boot "
			         "(%s): run `clockdoctor tsc` as root, or `clockdoctor run --verify`; running it on the "
			         "kernel's clock", name, i->kernel_vdso_fast == 0 ? slow : "the kernel is not on the TSC",
			         f->vf_why && *f->vf_why ? f->vf_why : i->reason_text);
		return;
	case FC_REASON_COUNTER_SLOW:
		/* the library's text carries the two costs it measured */
		snprintf(msg, len, "not accelerating %s: reading the %s from user space traps into the kernel here, so "
		         "the accelerator cannot beat the kernel's clock (%s); running it on the kernel's clock", name,
		         i->counter[0] ? i->counter : "counter", i->reason_text);
		return;
	case FC_REASON_VERDICT_UNSOUND:
		snprintf(msg, len, "not accelerating %s: `clockdoctor tsc` found the TSC unsound on this boot (%s): "
		         "the TSC cannot be trusted here; running it on the kernel's clock", name,
		         f->vf_why && *f->vf_why ? f->vf_why : i->reason_text);
		return;
	default:
		snprintf(msg, len, "not accelerating %s: the library reads the kernel's clock (%s: %s); running it "
		         "on the kernel's clock", name, fc_reason_name(i->reason), i->reason_text);
		return;
	}
}

bool cd_run_decide(const struct cd_run_facts *f, char *msg, size_t len)
{
	if (cd_run_blocked(f, msg, len))
		return false;
	if (!f->have_info) {
		snprintf(msg, len, "not accelerating %s: the library gave no information; running it on the "
		         "kernel's clock", f->name);
		return false;
	}
	const struct fc_info *i = f->info;
	/* Trusted, but still measuring the counter's frequency: the library
	 * reads the kernel's clock for those few ms, then the counter. */
	bool trusted = i->source == FC_SOURCE_COUNTER || i->reason == FC_REASON_KERNEL_USES_COUNTER ||
	               i->reason == FC_REASON_VERIFIED || i->reason == FC_REASON_FORCED;
	if (!trusted) {
		kernel_source(f, msg, len);
		return false;
	}
	char what[200];
	if (i->source == FC_SOURCE_COUNTER)
		snprintf(what, sizeof what, "clock_gettime and gettimeofday come from the %s at %.3f MHz, within "
		         "%lld ns of the kernel's clocks", i->counter[0] ? i->counter : "counter", i->counter_hz / 1e6,
		         (long long)i->error_bound_ns);
	else
		snprintf(what, sizeof what, "clock_gettime and gettimeofday come from the %s once the library "
		         "has measured its frequency (the kernel's clock until then)", i->counter[0] ? i->counter : "counter");
	/* On a kernel that runs on the counter the library's reason stays
	 * kernel-uses-counter under FASTCLOCK=force; the preload serves. */
	if (i->reason == FC_REASON_FORCED || (f->fastclock && strcmp(f->fastclock, "force") == 0)) {
		snprintf(msg, len, "accelerating %s: FASTCLOCK=force: %s, whether or not it helps or was verified "
		         "(risks: docs/run.md)", f->name, what);
		return true;
	}
	if (i->kernel_vdso_fast == 0) {
		snprintf(msg, len, "accelerating %s: the kernel's clocksource %s makes every time call a system call, "
		         "and %s: %s", f->name, cs_of(i),
		         i->reason == FC_REASON_VERIFIED ? "`clockdoctor tsc` found the TSC sound on this boot"
		                                         : i->reason_text, what);
		return true;
	}
	if (i->kernel_vdso_fast > 0)
		snprintf(msg, len, "not accelerating %s: nothing to gain: the kernel's clocksource %s is read by the "
		         "vDSO, without a system call; running it unchanged", f->name, cs_of(i));
	else
		snprintf(msg, len, "not accelerating %s: whether the vDSO can read the kernel's clocksource %s is "
		         "unknown, and the accelerator only acts where it is sure to help; running it unchanged",
		         f->name, cs_of(i));
	return false;
}
