/* SPDX-License-Identifier: MIT */
/*
 * runplan.h: what `clockdoctor run` works out before it starts a program,
 * as plain functions (runplan.c) for the command (run.c) and its unit
 * tests: composing LD_PRELOAD, finding the program as a shell would,
 * telling whether the loader will honour LD_PRELOAD for it, and the
 * decision with its one line of explanation.
 */
#ifndef CD_RUNPLAN_H
#define CD_RUNPLAN_H

#include "persist/verdictfile.h"
#include "probe/elf.h"

#include "fastclock.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* existing LD_PRELOAD (NULL: unset) with lib appended, in out.  ld.so
 * splits the list on spaces and colons; the separator added is a colon,
 * or a space when the list already uses spaces only.  Returns 0 when lib
 * was appended, 1 when it is in the list already (out is the list as it
 * was, without trailing separators), -EINVAL when lib is empty or holds a
 * space or colon (LD_PRELOAD cannot carry it), -ENAMETOOLONG. */
int cd_run_preload_compose(const char *existing, const char *lib, char *out, size_t len);

/* Finds name as execvp(3) and a shell do: as a path when it holds a '/',
 * else in each folder of path_env (NULL: "/bin:/usr/bin"; an empty entry
 * is the current folder).  0 with the path in out; -ENOENT (nowhere,
 * exit 127), -EACCES (found, not executable: 126), -EISDIR (126),
 * -ENAMETOOLONG. */
int cd_run_find(const char *name, const char *path_env, char *out, size_t len);

/* A "#!" line's interpreter: 1 with its path in interp, 0 when buf does
 * not start with "#!" and a path. */
int cd_run_shebang(const char *buf, size_t len, char *interp, size_t ilen);

/* Whether exec'ing a file with this mode, owner, group and capabilities
 * makes the kernel set AT_SECURE, so that the loader ignores LD_PRELOAD:
 * the effective ids would differ from the real ones (setuid or setgid to
 * another id, or this process's own ids differ already), or file
 * capabilities are gained by a non-root user.  nosuid: the file system is
 * mounted nosuid (the bits do nothing).  why says which. */
bool cd_run_secure_exec(mode_t mode, uid_t fuid, gid_t fgid, bool nosuid, bool file_caps, uid_t ruid,
                        uid_t euid, gid_t rgid, gid_t egid, char *why, size_t whylen);

/* What the dynamic loader will start for a program file. */
struct cd_run_prog {
	char path[PATH_MAX];       /* the file found */
	char loaded[PATH_MAX];     /* the ELF the kernel starts: path, or its #! interpreter */
	int scripts;               /* #! levels followed to reach loaded */
	int err;                   /* -errno: loaded could not be read */
	struct cd_elf_info elf;    /* loaded's */
	bool secure;               /* the loader ignores LD_PRELOAD for path */
	char secure_why[160];
};

/* Fills *p for the file at path (found by cd_run_find): follows "#!" lines
 * up to 4 levels as the kernel does, a file with neither ELF magic nor
 * "#!" is run by /bin/sh (execvp's ENOEXEC rule), and the setuid, setgid
 * and capability checks are made on path itself. */
void cd_run_inspect(const char *path, struct cd_run_prog *p);

/* Everything the decision rests on. */
struct cd_run_facts {
	const char *name;                 /* the program as typed */
	const struct cd_run_prog *prog;
	const char *preload;              /* NULL: not found (preload_why says where looked) */
	const char *preload_why;
	bool have_info;
	const struct fc_info *info;       /* what the library decides here, with this environment */
	const char *fastclock;            /* $FASTCLOCK, NULL when unset */
	enum cd_verdict_state vf;         /* the verdict file */
	const struct fc_verdict *verdict; /* when vf is CD_VF_THIS_BOOT */
	const char *vf_why;               /* cd_verdict_load()'s sentence */
};

/* True when the program cannot be accelerated whatever the library would
 * do (setuid, unreadable, not ELF, Go, static, foreign, no accelerator
 * found): msg says why, as cd_run_decide does. */
bool cd_run_blocked(const struct cd_run_facts *f, char *msg, size_t len);

/* True when the program should start with the accelerator; msg is the one
 * line (without "clockdoctor run: " and newline) saying so, and why. */
bool cd_run_decide(const struct cd_run_facts *f, char *msg, size_t len);

#endif
