/*
 * run.c: `clockdoctor run [-q] [--verify] -- PROGRAM [ARGS]`: start an
 * unmodified program with the accelerator (libfastclock-preload.so) in
 * front of it, when that helps and is safe, and say in one line on stderr
 * whether it does and why (docs/run.md).
 *
 * The decision is the library's own: this process asks fc_info() with the
 * environment the program will inherit, so what `run` says is what the
 * preload will do.  Beside it, `run` knows what the preload cannot: that
 * the loader ignores LD_PRELOAD for a static, setuid or foreign program,
 * and that a Go program never calls libc for the time.  The preload is put
 * in LD_PRELOAD only when it will serve: a program run on the kernel's
 * clock is started exactly as without `run`.
 *
 * Then it execs the program in its own place (same pid, same signals), so
 * its exit status is the program's; run's own failures use the shell's
 * statuses (127 not found, 126 not executable) and env(1)'s 125.
 */
#include "run.h"
#include "util/fsread.h"
#include "util/numarg.h"
#include "util/printable.h"

#include "commands.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
	if (new_euid != ruid) {
		if (new_euid != euid)
			snprintf(why, whylen, "it is setuid (to uid %ld)", (long)fuid);
		else
			snprintf(why, whylen, "clockdoctor itself runs with another effective uid (%ld) than its real "
			         "one (%ld)", (long)euid, (long)ruid);
		return true;
	}
	if (new_egid != rgid) {
		if (new_egid != egid)
			snprintf(why, whylen, "it is setgid (to gid %ld)", (long)fgid);
		else
			snprintf(why, whylen, "clockdoctor itself runs with another effective gid (%ld) than its real "
			         "one (%ld)", (long)egid, (long)rgid);
		return true;
	}
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

/* ---- finding the accelerator ---- */

int cd_run_find_preload(char *out, size_t len, char *why, size_t whylen)
{
	const char *env = getenv("CLOCKDOCTOR_PRELOAD");
	why[0] = '\0';
	if (env && *env) {
		if (access(env, R_OK) != 0 || !realpath(env, out)) {
			int e = errno;
			snprintf(why, whylen, "CLOCKDOCTOR_PRELOAD=%s: %s", env, strerror(e));
			return -ENOENT;
		}
		return strlen(out) < len ? 0 : -ENAMETOOLONG;
	}
	char exe[PATH_MAX];
	if (!realpath("/proc/self/exe", exe)) {
		snprintf(why, whylen, "cannot find this executable (/proc/self/exe: %s); set CLOCKDOCTOR_PRELOAD",
		         strerror(errno));
		return -ENOENT;
	}
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
#if defined(__x86_64__)
#define TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define TRIPLET "aarch64-linux-gnu"
#else
#define TRIPLET "."
#endif
	/* Beside the executable first (the build tree, a copied pair), then
	 * where `make install` and the packages put it, then the install's
	 * layouts relative to the executable (a tree installed under another
	 * root). */
	char dirs[5][PATH_MAX + 32];
	size_t n = 0;
	snprintf(dirs[n++], sizeof dirs[0], "%s", exe);
#ifdef CD_PRELOADDIR
	snprintf(dirs[n++], sizeof dirs[0], "%s", CD_PRELOADDIR);
#endif
	static const char *const rel[] = { "/../lib", "/../lib64", "/../lib/" TRIPLET };
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
		snprintf(dirs[n++], sizeof dirs[0], "%s%s", exe, rel[i]);
	size_t used = (size_t)snprintf(why, whylen, "no %s in", CD_PRELOAD_NAME);
	for (size_t i = 0; i < n; i++) {
		char cand[sizeof dirs[0] + sizeof CD_PRELOAD_NAME + 1];
		snprintf(cand, sizeof cand, "%.*s/%s", (int)sizeof dirs[0], dirs[i], CD_PRELOAD_NAME);
		if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < len)
			return 0;
		if (used < whylen)
			used += (size_t)snprintf(why + used, whylen - used, "%s %s/", i ? "," : "", dirs[i]);
	}
	if (used < whylen)
		snprintf(why + used, whylen - used, "; set CLOCKDOCTOR_PRELOAD to its path");
	return -ENOENT;
}

/* ---- the decision ---- */

/* "the kernel's clocksource hpet", or what is known of it. */
static const char *cs_of(const struct fc_info *i)
{
	return i->kernel_clocksource[0] ? i->kernel_clocksource : "(unknown)";
}

static bool program_blocks(const struct cd_run_facts *f, char *msg, size_t len)
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
	if (program_blocks(f, msg, len))
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

/* ---- the command ---- */

static void run_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor run [-q] [--verify] [--] PROGRAM [ARGS...]\n"
	        "\n"
	        "Runs PROGRAM with libfastclock-preload.so in LD_PRELOAD when the kernel's\n"
	        "clocksource makes every time call a system call (hpet, acpi_pm, xen, ...)\n"
	        "and `clockdoctor tsc` found the TSC sound on this boot: its clock_gettime\n"
	        "and gettimeofday then read the TSC, at tens of ns instead of 1-2 us.\n"
	        "Otherwise it runs PROGRAM unchanged.  One line on stderr says which, and why.\n"
	        "\n"
	        "  -q, --quiet         do not print that line (errors are still printed)\n"
	        "      --verify        as root, run the `clockdoctor tsc` measurement first\n"
	        "                      (about 1-2 s) and save this boot's verdict\n"
	        "\n"
	        "It cannot help a static, setuid or Go program, and says so.  Environment:\n"
	        "FASTCLOCK=auto|off|force (force: the TSC even unverified, see docs/run.md),\n"
	        "FASTCLOCK_INFO=1 (the accelerated program says on stderr what it does),\n"
	        "CLOCKDOCTOR_PRELOAD (the library's path), CLOCKDOCTOR_STATE_DIR.\n"
	        "\n"
	        "exit status: PROGRAM's own; 127 not found, 126 not executable, 125 bad usage\n"
	        "or --verify refused\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor run -- redis-server /etc/redis/redis.conf\n"
	        "  sudo clockdoctor run --verify -- ./server -p 8080\n"
	        "  FASTCLOCK_INFO=1 clockdoctor run -q -- python3 app.py\n");
}

/* --verify: the `tsc` measurement, judged and saved for this boot. */
static int verify(bool quiet)
{
	const char *state = getenv("CLOCKDOCTOR_STATE_DIR");
	if (geteuid() != 0 && !(state && *state)) {
		fprintf(stderr, "clockdoctor run: --verify needs root: the verdict is saved in %s for every process "
		        "to read (or run `sudo clockdoctor tsc` once per boot)\n", CD_STATE_DIR_DEFAULT);
		return -EPERM;
	}
	struct cd_facts *f = calloc(1, sizeof *f);
	struct cd_tsc_report *t = calloc(1, sizeof *t);
	if (!f || !t) {
		free(f);
		free(t);
		fprintf(stderr, "clockdoctor run: out of memory\n");
		return -ENOMEM;
	}
	cd_probe("/", true, f);
	struct cd_tsc_opts o;
	cd_tsc_opts_default(&o, 1.0, false);
	int allowed;
	long pairs;
	double est;
	cd_tsc_plan(&o, &allowed, &pairs, &est);
	if (!quiet)
		fprintf(stderr, "clockdoctor run: verifying the TSC (`clockdoctor tsc`): about %.1f s...\n", est + 0.05);
	cd_tsc_measure(f, &o, t);
	cd_tsc_judge(f, t);
	char msg[PATH_MAX + 400];
	int rc = cd_verdict_save(f, t, msg, sizeof msg);
	if (!quiet || rc < 0)
		fprintf(stderr, "clockdoctor run: TSC %s: %s; %s\n", cd_tsc_verdict_name(t->verdict), t->summary, msg);
	cd_tsc_report_free(t);
	free(f);
	free(t);
	return rc;
}

/* Execs path as a shell would; returns only on failure, with the status. */
static int exec_program(const char *name, const char *path, char **argv)
{
	execv(path, argv);
	int e = errno;
	if (e == ENOEXEC) {
		/* No "#!" and not a binary the kernel knows: a shell script, as
		 * execvp(3) and every shell run it. */
		int n = 0;
		while (argv[n])
			n++;
		char **sh = calloc((size_t)n + 2, sizeof *sh);
		if (sh) {
			sh[0] = (char *)"sh";
			sh[1] = (char *)path;
			for (int i = 1; i < n; i++)
				sh[i + 1] = argv[i];
			execv("/bin/sh", sh);
			e = errno;
			free(sh);
		}
	}
	fprintf(stderr, "clockdoctor run: %s: %s\n", name, strerror(e));
	return e == ENOENT ? CD_RUN_EXIT_NOTFOUND : CD_RUN_EXIT_NOEXEC;
}

/* Runs `clockdoctor run [-q] -- PROGRAM...` again in this process; returns
 * only if that cannot be done (no /proc), and the decision is then taken
 * on what the library saw at start. */
static void reexec(bool quiet, char **prog_argv)
{
	int n = 0;
	while (prog_argv[n])
		n++;
	char **av = calloc((size_t)n + 5, sizeof *av);
	if (!av)
		return;
	int k = 0;
	av[k++] = (char *)"clockdoctor";
	av[k++] = (char *)"run";
	if (quiet)
		av[k++] = (char *)"-q";
	av[k++] = (char *)"--";
	for (int i = 0; i < n; i++)
		av[k++] = prog_argv[i];
	av[k] = NULL;
	fflush(stderr);
	execv("/proc/self/exe", av);
	free(av);
}

int cd_cmd_run(int argc, char **argv)
{
	bool quiet = false, do_verify = false;
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* "+": options end at PROGRAM, whose own options are its own. */
	static const char optstring[] = "+qh";
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (ch) {
		case 'q': quiet = true; break;
		case 'V': do_verify = true; break;
		case 'h': run_usage(stdout); return cd_report_written("run", 0) ? CD_RUN_EXIT_FAILED : 0;
		default:
			/* The message is the other commands'; the status is run's own. */
			cd_bad_option("run", optstring, opts, argv);
			return CD_RUN_EXIT_FAILED;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "clockdoctor run: no program given\n\n");
		run_usage(stderr);
		return CD_RUN_EXIT_FAILED;
	}
	const char *name = argv[optind];
	char **prog_argv = argv + optind;

	bool changed = false;
	if (do_verify) {
		if (verify(quiet) == -EPERM)
			return CD_RUN_EXIT_FAILED;
		changed = true;
	}
	/* The library reads FC_VERDICT_PATH or $FASTCLOCK_VERDICT; a state
	 * folder moved with CLOCKDOCTOR_STATE_DIR is passed on, so that the
	 * program reads the verdict `tsc` saved there. */
	const char *state = getenv("CLOCKDOCTOR_STATE_DIR");
	const char *fv = getenv("FASTCLOCK_VERDICT");
	if (state && *state && !(fv && *fv)) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", state, CD_VERDICT_FILE) < (int)sizeof p &&
		    setenv("FASTCLOCK_VERDICT", p, 1) == 0)
			changed = true;
	}
	/* libfastclock, linked into this command, judged the machine when it
	 * started, before the verdict or the environment changed: start again
	 * for its decision to be the one the program's library will take. */
	if (changed)
		reexec(quiet, prog_argv);

	char path[PATH_MAX];
	int rc = cd_run_find(name, getenv("PATH"), path, sizeof path);
	if (rc < 0) {
		if (rc == -ENOENT && !strchr(name, '/'))
			fprintf(stderr, "clockdoctor run: %s: command not found\n", name);
		else
			fprintf(stderr, "clockdoctor run: %s: %s\n", name, strerror(-rc));
		return rc == -ENOENT ? CD_RUN_EXIT_NOTFOUND : CD_RUN_EXIT_NOEXEC;
	}
	struct cd_run_prog *prog = calloc(1, sizeof *prog);
	if (!prog) {
		fprintf(stderr, "clockdoctor run: out of memory\n");
		return CD_RUN_EXIT_FAILED;
	}
	cd_run_inspect(path, prog);

	char preload[PATH_MAX], preload_why[PATH_MAX * 2];
	bool have_preload = cd_run_find_preload(preload, sizeof preload, preload_why, sizeof preload_why) == 0;
	char vpath[PATH_MAX], vf_why[PATH_MAX + 200] = "";
	struct fc_verdict verdict;
	enum cd_verdict_state vf = CD_VF_NONE;
	if (cd_verdict_read_path(vpath, sizeof vpath) == 0)
		vf = cd_verdict_load(vpath, &verdict, vf_why, sizeof vf_why);
	struct fc_info info;
	memset(&info, 0, sizeof info);
	struct cd_run_facts facts = {
		.name = name, .prog = prog, .preload = have_preload ? preload : NULL, .preload_why = preload_why,
		.info = &info, .fastclock = getenv("FASTCLOCK"), .vf = vf, .verdict = &verdict, .vf_why = vf_why,
	};
	/* The library is asked only for a program it could serve: it measures
	 * the counter's frequency at its start. */
	char msg[PATH_MAX * 3];
	if (!program_blocks(&facts, msg, sizeof msg))
		facts.have_info = fc_info(&info) == 0;
	bool accel = cd_run_decide(&facts, msg, sizeof msg);
	if (accel) {
		char list[8192];
		int c = cd_run_preload_compose(getenv("LD_PRELOAD"), preload, list, sizeof list);
		if (c < 0) {
			accel = false;
			snprintf(msg, sizeof msg, "cannot accelerate %s: %s; running it unchanged", name,
			         c == -EINVAL ? "the accelerator's path holds a space or a colon, which LD_PRELOAD "
			                        "cannot carry (set CLOCKDOCTOR_PRELOAD to another path)"
			                      : "LD_PRELOAD is too long");
		} else if (setenv("LD_PRELOAD", list, 1) != 0) {
			accel = false;
			snprintf(msg, sizeof msg, "cannot accelerate %s: cannot set LD_PRELOAD (%s); running it unchanged",
			         name, strerror(errno));
		}
	}
	/* The message names files (a script's #! interpreter is read from the
	 * script): safe for the terminal. */
	cd_printable(msg);
	if (!quiet)
		fprintf(stderr, "clockdoctor run: %s\n", msg);
	free(prog);
	fflush(stdout);
	fflush(stderr);
	return exec_program(name, path, prog_argv);
}
