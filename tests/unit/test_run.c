/*
 * test_run.c: `clockdoctor run`'s plain functions: the ELF classification
 * (static, dynamic, Go, foreign, malformed) on images built here, LD_PRELOAD
 * composition, the PATH search, "#!" lines, the setuid rule, and the
 * decision with its line for every case.
 */
#include "run.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ELF images in memory ---- */

struct mem {
	unsigned char b[8192];
	size_t len;
};

static ssize_t mem_reader(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct mem *m = ctx;
	if (off >= m->len)
		return 0;
	size_t n = m->len - off < len ? m->len - off : len;
	memcpy(buf, m->b + off, n);
	return (ssize_t)n;
}

static bool big;

static void put(struct mem *m, size_t off, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		m->b[off + (size_t)(big ? size - 1 - i : i)] = (unsigned char)(v >> (8 * i));
	if (off + (size_t)size > m->len)
		m->len = off + (size_t)size;
}

static void put_bytes(struct mem *m, size_t off, const void *p, size_t n)
{
	memcpy(m->b + off, p, n);
	if (off + n > m->len)
		m->len = off + n;
}

enum { PH_OFF = 64, DATA_OFF = 1024, SH_OFF = 4096 };

/* An ELF64 header with n program headers at 64 and no sections. */
static void elf64(struct mem *m, unsigned machine, int phnum)
{
	memset(m, 0, sizeof *m);
	put_bytes(m, 0, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = ELFCLASS64;
	m->b[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
	m->b[EI_VERSION] = EV_CURRENT;
	put(m, 16, ET_DYN, 2);
	put(m, 18, machine, 2);
	put(m, 32, PH_OFF, 8);
	put(m, 54, 56, 2);
	put(m, 56, (uint64_t)phnum, 2);
	put(m, 58, 64, 2);
	put(m, 62, 0, 2);
}

static void phdr64(struct mem *m, int i, uint32_t type, uint64_t off, uint64_t filesz, uint64_t align)
{
	size_t p = PH_OFF + (size_t)i * 56;
	put(m, p, type, 4);
	put(m, p + 8, off, 8);
	put(m, p + 32, filesz, 8);
	put(m, p + 48, align, 8);
}

static struct cd_elf_info classify(struct mem *m)
{
	struct cd_elf_info e;
	cd_elf_classify(mem_reader, m, &e);
	return e;
}

static void test_elf_kinds(void)
{
	struct mem m;
	struct cd_elf_info e;
	big = false;

	/* dynamic: PT_LOAD and PT_INTERP */
	elf64(&m, EM_X86_64, 2);
	phdr64(&m, 0, PT_LOAD, 0, 4096, 4096);
	phdr64(&m, 1, PT_INTERP, DATA_OFF, 28, 1);
	put_bytes(&m, DATA_OFF, "/lib64/ld-linux-x86-64.so.2", 28);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_DYNAMIC);
	CHECK_INT(e.bits, 64);
	CHECK_INT(e.machine, EM_X86_64);
	CHECK_STR(e.interp, "/lib64/ld-linux-x86-64.so.2");
	CHECK(!e.go);

	/* static: no PT_INTERP */
	elf64(&m, EM_X86_64, 1);
	phdr64(&m, 0, PT_LOAD, 0, 4096, 4096);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_STATIC);

	/* Go: the build id note, after a GNU note, in one PT_NOTE */
	elf64(&m, EM_X86_64, 2);
	phdr64(&m, 0, PT_INTERP, DATA_OFF, 28, 1);
	put_bytes(&m, DATA_OFF, "/lib64/ld-linux-x86-64.so.2", 28);
	size_t n = DATA_OFF + 64;
	put(&m, n, 4, 4); put(&m, n + 4, 8, 4); put(&m, n + 8, 3, 4); put_bytes(&m, n + 12, "GNU", 4);
	put(&m, n + 16, 0x1122334455667788ull, 8);
	put(&m, n + 24, 3, 4); put(&m, n + 28, 16, 4); put(&m, n + 32, 4, 4); put_bytes(&m, n + 36, "Go\0", 4);
	put_bytes(&m, n + 40, "0123456789abcdef", 16);
	phdr64(&m, 1, PT_NOTE, n, 56, 4);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_DYNAMIC);
	CHECK(e.go);
	CHECK_STR(e.go_why, ".note.go.buildid");

	/* A note named "Go" of another type is not the build id. */
	put(&m, n + 32, 5, 4);
	e = classify(&m);
	CHECK(!e.go);

	/* A note whose sizes run past the segment: not Go, no crash. */
	put(&m, n + 24, 0xffffffffu, 4);
	e = classify(&m);
	CHECK(!e.go);
	CHECK_INT(e.kind, CD_ELF_DYNAMIC);
}

/* Go found by its .go.buildinfo section (a stripped binary without the
 * note in a segment). */
static void test_elf_go_section(void)
{
	struct mem m;
	big = false;
	elf64(&m, EM_X86_64, 1);
	phdr64(&m, 0, PT_LOAD, 0, 4096, 4096);
	const char names[] = "\0.shstrtab\0.text\0.go.buildinfo\0";
	put_bytes(&m, DATA_OFF, names, sizeof names);
	put(&m, 40, SH_OFF, 8);   /* e_shoff */
	put(&m, 60, 4, 2);        /* e_shnum */
	put(&m, 62, 1, 2);        /* e_shstrndx */
	/* section 1: .shstrtab */
	put(&m, SH_OFF + 64 + 0, 1, 4);
	put(&m, SH_OFF + 64 + 4, SHT_STRTAB, 4);
	put(&m, SH_OFF + 64 + 24, DATA_OFF, 8);
	put(&m, SH_OFF + 64 + 32, sizeof names, 8);
	/* section 2: .text, 3: .go.buildinfo */
	put(&m, SH_OFF + 128, 11, 4);
	put(&m, SH_OFF + 192, 17, 4);
	put(&m, SH_OFF + 255, 0, 1);
	struct cd_elf_info e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_STATIC);
	CHECK(e.go);
	CHECK_STR(e.go_why, ".go.buildinfo");

	/* A name offset past the table, a shstrndx past the sections: not Go. */
	put(&m, SH_OFF + 192, 5000, 4);
	e = classify(&m);
	CHECK(!e.go);
	put(&m, 62, 9, 2);
	e = classify(&m);
	CHECK(!e.go);
	CHECK_INT(e.kind, CD_ELF_STATIC);
}

static void test_elf_foreign_and_bad(void)
{
	struct mem m;
	struct cd_elf_info e;

	/* 32-bit i386, dynamic */
	big = false;
	memset(&m, 0, sizeof m);
	put_bytes(&m, 0, ELFMAG, SELFMAG);
	m.b[EI_CLASS] = ELFCLASS32;
	m.b[EI_DATA] = ELFDATA2LSB;
	put(&m, 18, EM_386, 2);
	put(&m, 28, 52, 4);
	put(&m, 42, 32, 2);
	put(&m, 44, 1, 2);
	put(&m, 52, PT_INTERP, 4);
	put(&m, 56, DATA_OFF, 4);
	put(&m, 68, 13, 4);
	put_bytes(&m, DATA_OFF, "/lib/ld.so.1", 13);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_DYNAMIC);
	CHECK_INT(e.bits, 32);
	CHECK_STR(e.interp, "/lib/ld.so.1");
	CHECK(!cd_elf_native(&e));
	char buf[24];
	CHECK_STR(cd_elf_machine_name(e.machine, buf, sizeof buf), "i386");
	CHECK_STR(cd_elf_machine_name(4242, buf, sizeof buf), "machine 4242");

	/* big-endian 64-bit s390x, static */
	big = true;
	elf64(&m, EM_S390, 1);
	phdr64(&m, 0, PT_LOAD, 0, 4096, 4096);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_STATIC);
	CHECK(e.big_endian);
	CHECK_INT(e.machine, EM_S390);
	CHECK(!cd_elf_native(&e));
	big = false;

	/* This machine's own kind is native. */
#if defined(__x86_64__)
	elf64(&m, EM_X86_64, 1);
#elif defined(__aarch64__)
	elf64(&m, EM_AARCH64, 1);
#endif
	phdr64(&m, 0, PT_INTERP, DATA_OFF, 2, 1);
	e = classify(&m);
	CHECK(cd_elf_native(&e));

	/* not ELF */
	memset(&m, 0, sizeof m);
	put_bytes(&m, 0, "#!/bin/sh\necho hi\n", 18);
	CHECK_INT(classify(&m).kind, CD_ELF_NOT_ELF);
	m.len = 2;
	CHECK_INT(classify(&m).kind, CD_ELF_NOT_ELF);

	/* truncated header, bad class, no program headers, a table past the
	 * end, an absurd count */
	elf64(&m, EM_X86_64, 1);
	m.len = 40;
	CHECK_INT(classify(&m).kind, CD_ELF_BAD);
	elf64(&m, EM_X86_64, 1);
	m.b[EI_CLASS] = 7;
	CHECK_INT(classify(&m).kind, CD_ELF_BAD);
	elf64(&m, EM_X86_64, 0);
	CHECK_INT(classify(&m).kind, CD_ELF_BAD);
	elf64(&m, EM_X86_64, 3);
	put(&m, 32, 1u << 30, 8);
	CHECK_INT(classify(&m).kind, CD_ELF_BAD);
	elf64(&m, EM_X86_64, 0xfffe);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_BAD);
	CHECK(strstr(e.bad_why, "too large") != NULL);
	/* PN_XNUM with no section header to hold the count */
	elf64(&m, EM_X86_64, PN_XNUM);
	CHECK_INT(classify(&m).kind, CD_ELF_BAD);
	/* a PT_INTERP past the end of the file: still dynamic, no path */
	elf64(&m, EM_X86_64, 1);
	phdr64(&m, 0, PT_INTERP, 1u << 20, 28, 1);
	e = classify(&m);
	CHECK_INT(e.kind, CD_ELF_DYNAMIC);
	CHECK_STR(e.interp, "");
}

/* Real files: this test program, and a folder. */
static void test_elf_files(void)
{
	struct cd_elf_info e;
	CHECK_INT(cd_elf_classify_file("/proc/self/exe", &e), 0);
	CHECK(e.kind == CD_ELF_DYNAMIC || e.kind == CD_ELF_STATIC);
	CHECK(cd_elf_native(&e));
	CHECK(!e.go);
	CHECK_INT(cd_elf_classify_file("/nonexistent/x", &e), -ENOENT);
	CHECK_INT(cd_elf_classify_file("/", &e), -EISDIR);
}

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

static struct cd_run_prog prog;
static struct fc_info info;
static struct fc_verdict verdict;

static struct cd_run_facts facts(void)
{
	memset(&prog, 0, sizeof prog);
	strcpy(prog.path, "/usr/bin/server");
	strcpy(prog.loaded, prog.path);
	prog.elf.kind = CD_ELF_DYNAMIC;
	prog.elf.bits = (int)sizeof(void *) * 8;
#if defined(__x86_64__)
	prog.elf.machine = EM_X86_64;
#elif defined(__aarch64__)
	prog.elf.machine = EM_AARCH64;
#endif
	memset(&info, 0, sizeof info);
	info.source = FC_SOURCE_COUNTER;
	info.reason = FC_REASON_VERIFIED;
	strcpy(info.counter, "tsc");
	strcpy(info.kernel_clocksource, "hpet");
	info.kernel_vdso_fast = 0;
	info.counter_hz = 2596130166.0;
	info.error_bound_ns = 180;
	memset(&verdict, 0, sizeof verdict);
	struct cd_run_facts f = {
		.name = "server", .prog = &prog, .preload = "/usr/lib/libfastclock-preload.so", .preload_why = "",
		.have_info = true, .info = &info, .fastclock = NULL, .vf = CD_VF_THIS_BOOT, .verdict = &verdict,
		.vf_why = "/run/clockdoctor/tsc-verdict says sound on this boot",
	};
	return f;
}

#define HAS(s) CHECK(strstr(msg, s) != NULL)

static void test_decide(void)
{
	char msg[1024];
	struct cd_run_facts f = facts();
	CHECK(cd_run_decide(&f, msg, sizeof msg));
	HAS("accelerating server: the kernel's clocksource hpet makes every time call a system call");
	HAS("found the TSC sound on this boot");
	HAS("2596.130 MHz");
	HAS("within 180 ns");

	f = facts();
	info.reason = FC_REASON_FORCED;
	info.kernel_vdso_fast = 1;
	strcpy(info.kernel_clocksource, "tsc");
	CHECK(cd_run_decide(&f, msg, sizeof msg));
	HAS("FASTCLOCK=force");
	HAS("docs/run.md");

	/* healthy: the vDSO reads the clocksource */
	f = facts();
	info.reason = FC_REASON_KERNEL_USES_COUNTER;
	info.kernel_vdso_fast = 1;
	strcpy(info.kernel_clocksource, "tsc");
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("not accelerating server: nothing to gain");
	HAS("clocksource tsc is read by the vDSO");
	info.kernel_vdso_fast = -1;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("unknown");

	/* no verdict, another boot's, unknown, unsound */
	f = facts();
	info.source = FC_SOURCE_KERNEL;
	info.reason = FC_REASON_UNVERIFIED;
	f.vf = CD_VF_NONE;
	f.vf_why = "/run/clockdoctor/tsc-verdict: No such file or directory";
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("no sound TSC verdict for this boot (/run/clockdoctor/tsc-verdict: No such file");
	HAS("run `clockdoctor tsc` as root, or `clockdoctor run --verify`");
	HAS("hpet makes every time call a system call");
	HAS("running it on the kernel's clock");
	f.vf = CD_VF_OTHER_BOOT;
	f.vf_why = "the verdict in /x is from another boot";
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("from another boot");
	HAS("as root on this boot");
	f.vf = CD_VF_THIS_BOOT;
	verdict.verdict = 1;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("could not conclude");
	info.reason = FC_REASON_VERDICT_UNSOUND;
	verdict.verdict = 2;
	f.vf_why = "/run/clockdoctor/tsc-verdict says unsound on this boot";
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("found the TSC unsound on this boot");

	/* off; not invariant, forced or not */
	f = facts();
	info.source = FC_SOURCE_KERNEL;
	info.reason = FC_REASON_OFF;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("FASTCLOCK=off");
	info.reason = FC_REASON_NOT_INVARIANT;
	strcpy(info.reason_text, "the TSC is not invariant (CPUID 0x80000007 EDX[8] clear)");
	f.fastclock = "force";
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("FASTCLOCK=force, but the TSC is not invariant");
	HAS("falls back to the kernel's clock");
	f.fastclock = NULL;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	CHECK(strstr(msg, "FASTCLOCK=force") == NULL);
	info.reason = FC_REASON_NO_COUNTER;
	strcpy(info.reason_text, "this CPU has no counter to read");
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("no-counter");
	f.have_info = false;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("no information");

	/* the program: static, Go, setuid, foreign, unreadable, no preload;
	 * each wins over a machine that would be accelerated */
	f = facts();
	prog.elf.kind = CD_ELF_STATIC;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("cannot accelerate server: it is statically linked");
	HAS("LD_PRELOAD cannot reach");
	f = facts();
	prog.scripts = 1;
	strcpy(prog.loaded, "/bin/busybox");
	prog.elf.kind = CD_ELF_STATIC;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("its interpreter /bin/busybox is statically linked");
	f = facts();
	prog.elf.go = true;
	strcpy(prog.elf.go_why, ".note.go.buildid");
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("is a Go program (.note.go.buildid)");
	HAS("calls the vDSO itself");
	f = facts();
	prog.secure = true;
	strcpy(prog.secure_why, "it is setuid (to uid 0)");
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("setuid");
	HAS("ignores LD_PRELOAD");
	f = facts();
	prog.elf.bits = 32;
	prog.elf.machine = EM_386;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("32-bit i386 program");
	f = facts();
	prog.err = -EACCES;
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("cannot read /usr/bin/server (Permission denied)");
	f = facts();
	prog.elf.kind = CD_ELF_BAD;
	strcpy(prog.elf.bad_why, "truncated program header table");
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("malformed ELF headers (truncated");
	f = facts();
	f.preload = NULL;
	f.preload_why = "no libfastclock-preload.so in /x/../lib/; set CLOCKDOCTOR_PRELOAD to its path";
	CHECK(!cd_run_decide(&f, msg, sizeof msg));
	HAS("no libfastclock-preload.so in /x/../lib/");
}

int main(void)
{
	test_elf_kinds();
	test_elf_go_section();
	test_elf_foreign_and_bad();
	test_elf_files();
	test_compose();
	test_shebang();
	test_secure();
	test_find();
	test_decide();
	return unit_done("test_run");
}
