/* SPDX-License-Identifier: MIT */
/*
 * test_runplan.c: `clockdoctor run`'s plain functions (runplan.c): LD_PRELOAD composition,
 * the PATH search, "#!" lines, the setuid rule, and the decision with its
 * line for every case (the ELF classification it uses: test_elf.c).
 */
#include "runplan.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- LD_PRELOAD ---- */

static void test_compose(void)
{
	char out[256];
	const char *lib = "/usr/lib/libfastclock-preload.so";
	CHECK_INT(cd_run_preload_compose(NULL, lib, out, sizeof out), 0);
	CHECK_STR(out, lib);
	CHECK_INT(cd_run_preload_compose("", lib, out, sizeof out), 0);
	CHECK_STR(out, lib);
	CHECK_INT(cd_run_preload_compose(" : ", lib, out, sizeof out), 0);
	CHECK_STR(out, lib);
	CHECK_INT(cd_run_preload_compose("/a.so", lib, out, sizeof out), 0);
	CHECK_STR(out, "/a.so:/usr/lib/libfastclock-preload.so");
	CHECK_INT(cd_run_preload_compose("/a.so:/b.so:", lib, out, sizeof out), 0);
	CHECK_STR(out, "/a.so:/b.so:/usr/lib/libfastclock-preload.so");
	/* a list of spaces keeps spaces */
	CHECK_INT(cd_run_preload_compose("/a.so /b.so ", lib, out, sizeof out), 0);
	CHECK_STR(out, "/a.so /b.so /usr/lib/libfastclock-preload.so");
	/* already there, in any place: unchanged */
	CHECK_INT(cd_run_preload_compose("/usr/lib/libfastclock-preload.so:/a.so", lib, out, sizeof out), 1);
	CHECK_STR(out, "/usr/lib/libfastclock-preload.so:/a.so");
	CHECK_INT(cd_run_preload_compose("/a.so /usr/lib/libfastclock-preload.so", lib, out, sizeof out), 1);
	/* a longer name that starts with ours is another entry */
	CHECK_INT(cd_run_preload_compose("/usr/lib/libfastclock-preload.so.1", lib, out, sizeof out), 0);
	CHECK_STR(out, "/usr/lib/libfastclock-preload.so.1:/usr/lib/libfastclock-preload.so");
	/* paths LD_PRELOAD cannot carry */
	CHECK_INT(cd_run_preload_compose("", "/my libs/x.so", out, sizeof out), -EINVAL);
	CHECK_INT(cd_run_preload_compose("", "/a:b/x.so", out, sizeof out), -EINVAL);
	CHECK_INT(cd_run_preload_compose("", "", out, sizeof out), -EINVAL);
	/* too long, exactly fitting */
	CHECK_INT(cd_run_preload_compose("/a.so", lib, out, 10), -ENAMETOOLONG);
	CHECK_INT(cd_run_preload_compose("/a.so", lib, out, strlen("/a.so:") + strlen(lib) + 1), 0);
	CHECK_INT(cd_run_preload_compose("/a.so", lib, out, strlen("/a.so:") + strlen(lib)), -ENAMETOOLONG);
}

static void test_shebang(void)
{
	char in[64];
	const char *s = "#!/usr/bin/perl -w\nprint 1;\n";
	CHECK_INT(cd_run_shebang(s, strlen(s), in, sizeof in), 1);
	CHECK_STR(in, "/usr/bin/perl");
	s = "#! \t/bin/sh\n";
	CHECK_INT(cd_run_shebang(s, strlen(s), in, sizeof in), 1);
	CHECK_STR(in, "/bin/sh");
	s = "#!/usr/bin/env python3";
	CHECK_INT(cd_run_shebang(s, strlen(s), in, sizeof in), 1);
	CHECK_STR(in, "/usr/bin/env");
	CHECK_INT(cd_run_shebang("#!\n", 3, in, sizeof in), 0);
	CHECK_INT(cd_run_shebang("#", 1, in, sizeof in), 0);
	CHECK_INT(cd_run_shebang("echo hi\n", 8, in, sizeof in), 0);
	CHECK_INT(cd_run_shebang("#!/a/very/long/interpreter/path", 31, in, 8), 0);
}

static void test_secure(void)
{
	char why[160];
	/* plain program */
	CHECK(!cd_run_secure_exec(0755, 0, 0, false, false, 1000, 1000, 1000, 1000, why, sizeof why));
	/* setuid root, run by a user */
	CHECK(cd_run_secure_exec(04755, 0, 0, false, false, 1000, 1000, 1000, 1000, why, sizeof why));
	CHECK(strstr(why, "setuid") != NULL);
	/* setuid root, run by root: the ids do not change, LD_PRELOAD works */
	CHECK(!cd_run_secure_exec(04755, 0, 0, false, false, 0, 0, 0, 0, why, sizeof why));
	/* setuid to ourselves */
	CHECK(!cd_run_secure_exec(04755, 1000, 0, false, false, 1000, 1000, 1000, 1000, why, sizeof why));
	/* setuid on a nosuid mount does nothing */
	CHECK(!cd_run_secure_exec(04755, 0, 0, true, false, 1000, 1000, 1000, 1000, why, sizeof why));
	/* setgid to another group; setgid without group execute is no setgid */
	CHECK(cd_run_secure_exec(02755, 0, 42, false, false, 1000, 1000, 1000, 1000, why, sizeof why));
	CHECK(strstr(why, "setgid") != NULL);
	CHECK(!cd_run_secure_exec(02745, 0, 42, false, false, 1000, 1000, 1000, 1000, why, sizeof why));
	/* file capabilities, for a user but not for root */
	CHECK(cd_run_secure_exec(0755, 0, 0, false, true, 1000, 1000, 1000, 1000, why, sizeof why));
	CHECK(strstr(why, "capabilities") != NULL);
	CHECK(!cd_run_secure_exec(0755, 0, 0, false, true, 0, 0, 0, 0, why, sizeof why));
	/* we ourselves run setuid: every exec is secure */
	CHECK(cd_run_secure_exec(0755, 0, 0, false, false, 1000, 0, 1000, 1000, why, sizeof why));
	CHECK(strstr(why, "effective uid") != NULL);
}

/* ---- PATH ---- */

static char tmpdir[64];

static void make_file(const char *name, const char *text, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", tmpdir, name);
	unit_put_mode(p, text, mode);
}

static void test_find(void)
{
	unit_tempdir(tmpdir, sizeof tmpdir, "test-run");
	char a[128], b[128], path[512], out[512];
	snprintf(a, sizeof a, "%s/a", tmpdir);
	snprintf(b, sizeof b, "%s/b", tmpdir);
	mkdir(a, 0755);
	mkdir(b, 0755);
	make_file("a/noexec", "x", 0644);
	make_file("b/noexec", "#!/bin/sh\n", 0755);
	make_file("a/only-noexec", "x", 0644);
	make_file("b/prog", "#!/bin/sh\n", 0755);
	mkdir(strcat(strcpy(path, a), "/prog"), 0755);   /* a folder of the name first */
	snprintf(path, sizeof path, "%s:%s", a, b);

	/* a non-executable file is passed over for a later executable one */
	CHECK_INT(cd_run_find("noexec", path, out, sizeof out), 0);
	CHECK(strstr(out, "/b/noexec") != NULL);
	/* a folder of the name is passed over too */
	CHECK_INT(cd_run_find("prog", path, out, sizeof out), 0);
	CHECK(strstr(out, "/b/prog") != NULL);
	/* found only as non-executable: EACCES (126) */
	CHECK_INT(cd_run_find("only-noexec", path, out, sizeof out), -EACCES);
	CHECK_INT(cd_run_find("nothing-here", path, out, sizeof out), -ENOENT);
	CHECK_INT(cd_run_find("", path, out, sizeof out), -ENOENT);
	/* a name with a slash is a path */
	char full[256];
	snprintf(full, sizeof full, "%s/b/prog", tmpdir);
	CHECK_INT(cd_run_find(full, "/nonexistent", out, sizeof out), 0);
	CHECK_STR(out, full);
	CHECK_INT(cd_run_find(a, path, out, sizeof out), -EISDIR);
	snprintf(full, sizeof full, "%s/a/only-noexec", tmpdir);
	CHECK_INT(cd_run_find(full, path, out, sizeof out), -EACCES);
	CHECK_INT(cd_run_find("/nonexistent/x", path, out, sizeof out), -ENOENT);
	/* an empty PATH entry is the current folder */
	char cwd[512];
	if (getcwd(cwd, sizeof cwd) && chdir(b) == 0) {
		CHECK_INT(cd_run_find("prog", ":/nonexistent", out, sizeof out), 0);
		CHECK_STR(out, "prog");
		CHECK(chdir(cwd) == 0);
	}
	/* PATH unset: /bin:/usr/bin */
	CHECK_INT(cd_run_find("sh", NULL, out, sizeof out), 0);

	/* inspect: a script is judged by its interpreter; a file without "#!"
	 * by /bin/sh; a loop of scripts ends */
	struct cd_run_prog p;
	snprintf(full, sizeof full, "%s/b/prog", tmpdir);
	cd_run_inspect(full, &p);
	CHECK_INT(p.err, 0);
	CHECK_INT(p.scripts, 1);
	CHECK_STR(p.loaded, "/bin/sh");
	CHECK(p.elf.kind == CD_ELF_DYNAMIC || p.elf.kind == CD_ELF_STATIC);
	CHECK(!p.secure);
	make_file("b/plain", "echo hi\n", 0755);
	snprintf(full, sizeof full, "%s/b/plain", tmpdir);
	cd_run_inspect(full, &p);
	CHECK_INT(p.scripts, 1);
	CHECK_STR(p.loaded, "/bin/sh");
	char loop[300];
	snprintf(loop, sizeof loop, "#!%s/b/loop\n", tmpdir);
	make_file("b/loop", loop, 0755);
	snprintf(full, sizeof full, "%s/b/loop", tmpdir);
	cd_run_inspect(full, &p);
	CHECK_INT(p.err, -ELOOP);
	snprintf(loop, sizeof loop, "#!%s/b/none\n", tmpdir);
	make_file("b/dangling", loop, 0755);
	snprintf(full, sizeof full, "%s/b/dangling", tmpdir);
	cd_run_inspect(full, &p);
	CHECK_INT(p.err, -ENOENT);
}

/* ---- the decision ---- */

/* One case of the decision: its facts, pointing into its own program,
 * library information and verdict; and the line the decision wrote. */
struct decision {
	struct cd_run_prog prog;
	struct fc_info info;
	struct fc_verdict verdict;
	struct cd_run_facts f;
	char msg[1024];
};

/* A dynamic program of this machine's kind, on a machine the library
 * accelerates: the kernel on hpet, the TSC found sound on this boot. */
static void machine(struct decision *d)
{
	memset(d, 0, sizeof *d);
	strcpy(d->prog.path, "/usr/bin/server");
	strcpy(d->prog.loaded, d->prog.path);
	d->prog.elf.kind = CD_ELF_DYNAMIC;
	d->prog.elf.bits = (int)sizeof(void *) * 8;
#if defined(__x86_64__)
	d->prog.elf.machine = EM_X86_64;
#elif defined(__aarch64__)
	d->prog.elf.machine = EM_AARCH64;
#endif
	d->info.source = FC_SOURCE_COUNTER;
	d->info.reason = FC_REASON_VERIFIED;
	strcpy(d->info.counter, "tsc");
	strcpy(d->info.kernel_clocksource, "hpet");
	d->info.kernel_vdso_fast = 0;
	d->info.counter_hz = 2596130166.0;
	d->info.error_bound_ns = 180;
	d->f = (struct cd_run_facts){
		.name = "server", .prog = &d->prog, .preload = "/usr/lib/libfastclock-preload.so", .preload_why = "",
		.have_info = true, .info = &d->info, .fastclock = NULL, .vf = CD_VF_THIS_BOOT, .verdict = &d->verdict,
		.vf_why = "/run/clockdoctor/tsc-verdict says sound on this boot",
	};
}

/* The same machine with the library on the kernel's clock, for reason. */
static void on_kernel_clock(struct decision *d, enum fc_reason reason)
{
	machine(d);
	d->info.source = FC_SOURCE_KERNEL;
	d->info.reason = reason;
}

static bool decide(struct decision *d)
{
	return cd_run_decide(&d->f, d->msg, sizeof d->msg);
}

static void test_decide_accelerates(void)
{
	struct decision d;
	machine(&d);
	CHECK(decide(&d));
	CHECK_HAS(d.msg, "accelerating server: the kernel's clocksource hpet makes every time call a system call");
	CHECK_HAS(d.msg, "found the TSC sound on this boot");
	CHECK_HAS(d.msg, "2596.130 MHz");
	CHECK_HAS(d.msg, "within 180 ns");

	machine(&d);
	d.info.reason = FC_REASON_FORCED;
	d.info.kernel_vdso_fast = 1;
	strcpy(d.info.kernel_clocksource, "tsc");
	CHECK(decide(&d));
	CHECK_HAS(d.msg, "FASTCLOCK=force");
	CHECK_HAS(d.msg, "docs/run.md");
}

/* healthy: the vDSO reads the clocksource */
static void test_decide_nothing_to_gain(void)
{
	struct decision d;
	machine(&d);
	d.info.reason = FC_REASON_KERNEL_USES_COUNTER;
	d.info.kernel_vdso_fast = 1;
	strcpy(d.info.kernel_clocksource, "tsc");
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "not accelerating server: nothing to gain");
	CHECK_HAS(d.msg, "clocksource tsc is read by the vDSO");
	d.info.kernel_vdso_fast = -1;
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "unknown");
}

/* no verdict, another boot's, unknown, unsound */
static void test_decide_verdicts(void)
{
	struct decision d;
	on_kernel_clock(&d, FC_REASON_UNVERIFIED);
	d.f.vf = CD_VF_NONE;
	d.f.vf_why = "/run/clockdoctor/tsc-verdict: No such file or directory";
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "no sound TSC verdict for this boot (/run/clockdoctor/tsc-verdict: No such file");
	CHECK_HAS(d.msg, "run `clockdoctor tsc` as root, or `clockdoctor run --verify`");
	CHECK_HAS(d.msg, "hpet makes every time call a system call");
	CHECK_HAS(d.msg, "running it on the kernel's clock");
	d.f.vf = CD_VF_OTHER_BOOT;
	d.f.vf_why = "the verdict in /x is from another boot";
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "from another boot");
	CHECK_HAS(d.msg, "as root on this boot");
	d.f.vf = CD_VF_THIS_BOOT;
	d.verdict.verdict = 1;
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "could not conclude");
	d.info.reason = FC_REASON_VERDICT_UNSOUND;
	d.verdict.verdict = 2;
	d.f.vf_why = "/run/clockdoctor/tsc-verdict says unsound on this boot";
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "found the TSC unsound on this boot");
}

/* off; not invariant, forced or not; no counter; no information */
static void test_decide_kernel_clock(void)
{
	struct decision d;
	on_kernel_clock(&d, FC_REASON_OFF);
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "FASTCLOCK=off");
	d.info.reason = FC_REASON_NOT_INVARIANT;
	strcpy(d.info.reason_text, "the TSC is not invariant (CPUID 0x80000007 EDX[8] clear)");
	d.f.fastclock = "force";
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "FASTCLOCK=force, but the TSC is not invariant");
	CHECK_HAS(d.msg, "falls back to the kernel's clock");
	d.f.fastclock = NULL;
	CHECK(!decide(&d));
	CHECK_LACKS(d.msg, "FASTCLOCK=force");
	d.info.reason = FC_REASON_NO_COUNTER;
	strcpy(d.info.reason_text, "this CPU has no counter to read");
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "no-counter");
	d.f.have_info = false;
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "no information");
}

/* arm64 with a timer erratum's workaround: the counter traps.  Refused by
 * the library (its reason and the costs it measured, in one line), or,
 * where a trapped read still beats the system call the vDSO falls back
 * to, served with what it gains. */
static void test_decide_trapped_counter(void)
{
	struct decision d;
	on_kernel_clock(&d, FC_REASON_COUNTER_SLOW);
	strcpy(d.info.counter, "cntvct_el0");
	strcpy(d.info.kernel_clocksource, "arch_sys_counter");
	strcpy(d.info.reason_text, "a counter read costs 2100 ns, no less than the kernel's clock (1900 ns, a system "
	       "call): user-space reads of the counter trap (a timer erratum's workaround, or a hypervisor)");
	CHECK(!decide(&d));
	CHECK_HAS(d.msg, "not accelerating server: reading the cntvct_el0 from user space traps into the kernel here, "
	          "so the accelerator cannot beat the kernel's clock (a counter read costs 2100 ns");
	CHECK_HAS(d.msg, "; running it on the kernel's clock");
	CHECK(!strchr(d.msg, '\n'));

	machine(&d);
	d.info.reason = FC_REASON_KERNEL_USES_COUNTER;
	strcpy(d.info.counter, "cntvct_el0");
	strcpy(d.info.kernel_clocksource, "arch_sys_counter");
	d.info.kernel_vdso_fast = 0;  /* measured: the vDSO falls back */
	strcpy(d.info.reason_text, "the kernel's clocksource is arch_sys_counter; a counter read costs 900 ns, the "
	       "kernel's clock 1900 ns (a system call)");
	CHECK(decide(&d));
	CHECK_HAS(d.msg, "accelerating server: the kernel's clocksource arch_sys_counter makes every time call a "
	          "system call, and the kernel's clocksource is arch_sys_counter; a counter read costs 900 ns, the "
	          "kernel's clock 1900 ns (a system call)");
}

/* the program: static, Go, setuid, foreign, unreadable, malformed, no
 * preload; each wins over a machine that would be accelerated.  A case
 * changes the program (or the preload) where its fields are set, and the
 * line says says, and says_too where given. */
static void test_decide_program(void)
{
	static const struct {
		enum cd_elf_kind kind;
		int scripts, bits, err;
		unsigned machine;
		const char *loaded, *go_why, *secure_why, *bad_why, *no_preload;
		const char *says, *says_too;
	} cases[] = {
		{ .kind = CD_ELF_STATIC,
		  .says = "cannot accelerate server: it is statically linked", .says_too = "LD_PRELOAD cannot reach" },
		{ .kind = CD_ELF_STATIC, .scripts = 1, .loaded = "/bin/busybox",
		  .says = "its interpreter /bin/busybox is statically linked" },
		{ .go_why = ".note.go.buildid",
		  .says = "is a Go program (.note.go.buildid)", .says_too = "calls the vDSO itself" },
		{ .secure_why = "it is setuid (to uid 0)", .says = "setuid", .says_too = "ignores LD_PRELOAD" },
		{ .bits = 32, .machine = EM_386, .says = "32-bit i386 program" },
		{ .err = -EACCES, .says = "cannot read /usr/bin/server (Permission denied)" },
		{ .kind = CD_ELF_BAD, .bad_why = "truncated program header table", .says = "malformed ELF headers (truncated" },
		{ .no_preload = "no libfastclock-preload.so in /x/../lib/; set CLOCKDOCTOR_PRELOAD to its path",
		  .says = "no libfastclock-preload.so in /x/../lib/" },
	};
	for (size_t i = 0; i < UNIT_COUNT(cases); i++) {
		unit_case("%s", cases[i].says);
		struct decision d;
		machine(&d);
		struct cd_run_prog *p = &d.prog;
		if (cases[i].kind)
			p->elf.kind = cases[i].kind;
		if (cases[i].scripts)
			p->scripts = cases[i].scripts;
		if (cases[i].loaded)
			strcpy(p->loaded, cases[i].loaded);
		p->elf.go = cases[i].go_why != NULL;
		if (cases[i].go_why)
			strcpy(p->elf.go_why, cases[i].go_why);
		p->secure = cases[i].secure_why != NULL;
		if (cases[i].secure_why)
			strcpy(p->secure_why, cases[i].secure_why);
		if (cases[i].bits) {
			p->elf.bits = cases[i].bits;
			p->elf.machine = cases[i].machine;
		}
		p->err = cases[i].err;
		if (cases[i].bad_why)
			strcpy(p->elf.bad_why, cases[i].bad_why);
		if (cases[i].no_preload) {
			d.f.preload = NULL;
			d.f.preload_why = cases[i].no_preload;
		}
		CHECK(!decide(&d));
		CHECK_HAS(d.msg, cases[i].says);
		if (cases[i].says_too)
			CHECK_HAS(d.msg, cases[i].says_too);
	}
	unit_case(NULL);
}

int main(void)
{
	test_compose();
	test_shebang();
	test_secure();
	test_find();
	test_decide_accelerates();
	test_decide_nothing_to_gain();
	test_decide_verdicts();
	test_decide_kernel_clock();
	test_decide_trapped_counter();
	test_decide_program();
	return unit_done("test_runplan");
}
