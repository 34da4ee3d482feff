/* SPDX-License-Identifier: MIT */
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
 *
 * The finding out and the decision are plain functions (runplan.c); this
 * file is the command: its options, --verify, where the accelerator is,
 * and the exec.
 */
#include "runplan.h"
#include "util/numarg.h"
#include "util/printable.h"
#include "output/wrap.h"

#include "commands.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "probe/probe.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CD_PRELOAD_NAME "libfastclock-preload.so"

/* Exit statuses of run's own failures, as a shell's and env(1)'s: the
 * program's own status passes through, so these must not look like one a
 * program commonly uses. */
#define CD_RUN_EXIT_FAILED 125      /* bad usage, --verify refused */
#define CD_RUN_EXIT_NOEXEC 126      /* found, but cannot be executed */
#define CD_RUN_EXIT_NOTFOUND 127

/* ---- finding the accelerator ---- */

/* Where the accelerator is: $CLOCKDOCTOR_PRELOAD, else beside this
 * executable's real path (the build tree), else the install's PRELOADDIR
 * compiled in (CD_PRELOADDIR, from the Makefile), else ../lib, ../lib64,
 * ../lib/TRIPLET from the executable (an installed tree moved elsewhere).
 * 0 with the real path in out; -ENOENT with the places looked at in why. */

static int find_preload(char *out, size_t len, char *why, size_t whylen)
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

/* A notice on stderr, within 80 columns: the lines after the first
 * indented, paths and commands left whole to be copied. */
static void notice(const char *text)
{
	cd_wrap_with(stderr, text, &(struct cd_wrap_opts){ .lead = "clockdoctor run: ", .indent = 4,
	                                                  .whole_words = true });
}

/* --verify: the `tsc` measurement, judged and saved for this boot. */
static int verify(bool quiet)
{
	const char *state = getenv("CLOCKDOCTOR_STATE_DIR");
	if (geteuid() != 0 && !(state && *state)) {
		char text[512];
		snprintf(text, sizeof text, "--verify needs root: the verdict is saved in %s for every process to "
		         "read (or run `sudo clockdoctor tsc` once per boot)", CD_STATE_DIR_DEFAULT);
		notice(text);
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
	if (!quiet || rc < 0) {
		char text[sizeof msg + sizeof t->summary + 32];
		snprintf(text, sizeof text, "TSC %s: %s; %s", cd_tsc_verdict_name(t->verdict), t->summary, msg);
		notice(text);
	}
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

struct run_opts {
	bool quiet, verify;
};

static int run_option(void *ctx, int ch, char *arg)
{
	struct run_opts *o = ctx;
	(void)arg;
	switch (ch) {
	case 'q': o->quiet = true; break;
	case 'V': o->verify = true; break;
	}
	return -1;
}

/* Returns -1 to go on (argv[optind] is PROGRAM), else run's exit status. */
static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	static const struct option longs[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "verify", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* "+": options end at PROGRAM, whose own options are its own. */
	static const struct cd_options run_options = { "run", "+q", longs, run_usage, run_option, true };
	int rc = cd_parse_options(&run_options, argc, argv, o);
	/* The messages are the other commands'; the status is run's own. */
	if (rc >= 0)
		return rc == 0 ? 0 : CD_RUN_EXIT_FAILED;
	if (optind >= argc) {
		fprintf(stderr, "clockdoctor run: no program given\n\n");
		run_usage(stderr);
		return CD_RUN_EXIT_FAILED;
	}
	return -1;
}

/* --verify's verdict, and a state folder moved with CLOCKDOCTOR_STATE_DIR,
 * made the ones the library will read.  Returns -1 to go on, else the
 * exit status. */
static int refresh_verdict(const struct run_opts *o, char **prog_argv)
{
	bool changed = false;
	if (o->verify) {
		if (verify(o->quiet) == -EPERM)
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
		reexec(o->quiet, prog_argv);
	return -1;
}

/* PROGRAM's path, found as a shell would.  Returns -1 to go on, else the
 * shell's status, said. */
static int find_program(const char *name, char *path, size_t len)
{
	int rc = cd_run_find(name, getenv("PATH"), path, len);
	if (rc == 0)
		return -1;
	if (rc == -ENOENT && !strchr(name, '/'))
		fprintf(stderr, "clockdoctor run: %s: command not found\n", name);
	else
		fprintf(stderr, "clockdoctor run: %s: %s\n", name, strerror(-rc));
	return rc == -ENOENT ? CD_RUN_EXIT_NOTFOUND : CD_RUN_EXIT_NOEXEC;
}

/* The decision for prog, on what this machine holds: the accelerator
 * (its path in preload), this boot's verdict and the library's own view.
 * msg says why. */
static bool decide(const char *name, const struct cd_run_prog *prog, char *preload, size_t plen, char *msg,
                   size_t len)
{
	char preload_why[PATH_MAX * 2];
	bool have_preload = find_preload(preload, plen, preload_why, sizeof preload_why) == 0;
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
	if (!cd_run_blocked(&facts, msg, len))
		facts.have_info = fc_info(&info) == 0;
	return cd_run_decide(&facts, msg, len);
}

/* The accelerator added to LD_PRELOAD; false, with msg saying why, when
 * it cannot be. */
static bool put_preload(const char *name, const char *preload, char *msg, size_t len)
{
	char list[8192];
	int c = cd_run_preload_compose(getenv("LD_PRELOAD"), preload, list, sizeof list);
	if (c < 0) {
		snprintf(msg, len, "cannot accelerate %s: %s; running it unchanged", name,
		         c == -EINVAL ? "the accelerator's path holds a space or a colon, which LD_PRELOAD "
		                        "cannot carry (set CLOCKDOCTOR_PRELOAD to another path)"
		                      : "LD_PRELOAD is too long");
		return false;
	}
	if (setenv("LD_PRELOAD", list, 1) != 0) {
		snprintf(msg, len, "cannot accelerate %s: cannot set LD_PRELOAD (%s); running it unchanged", name,
		         strerror(errno));
		return false;
	}
	return true;
}

int cd_cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	const char *name = argv[optind];
	char **prog_argv = argv + optind;
	char path[PATH_MAX];
	if ((rc = refresh_verdict(&o, prog_argv)) >= 0 || (rc = find_program(name, path, sizeof path)) >= 0)
		return rc;
	struct cd_run_prog *prog = calloc(1, sizeof *prog);
	if (!prog) {
		fprintf(stderr, "clockdoctor run: out of memory\n");
		return CD_RUN_EXIT_FAILED;
	}
	cd_run_inspect(path, prog);
	char preload[PATH_MAX], msg[PATH_MAX * 3];
	if (decide(name, prog, preload, sizeof preload, msg, sizeof msg))
		put_preload(name, preload, msg, sizeof msg);
	free(prog);
	/* The message names files (a script's #! interpreter is read from the
	 * script): safe for the terminal. */
	cd_printable(msg);
	if (!o.quiet)
		notice(msg);
	fflush(stdout);
	fflush(stderr);
	return exec_program(name, path, prog_argv);
}
