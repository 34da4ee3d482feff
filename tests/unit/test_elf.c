/* SPDX-License-Identifier: MIT */
/*
 * test_elf.c: the ELF classification `clockdoctor run` decides by (static,
 * dynamic, Go, foreign, malformed), on images built here in memory and on
 * real files.
 */
#include "probe/elf.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* m is a Go program of that kind, found by why. */
static void go(struct mem *m, enum cd_elf_kind kind, const char *why)
{
	struct cd_elf_info e = classify(m);
	CHECK_INT(e.kind, kind);
	CHECK(e.go);
	CHECK_STR(e.go_why, why);
}

/* With v written at off, m is no Go program. */
static struct cd_elf_info poked(struct mem *m, size_t off, uint64_t v, int size)
{
	put(m, off, v, size);
	struct cd_elf_info e = classify(m);
	CHECK(!e.go);
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
	go(&m, CD_ELF_DYNAMIC, ".note.go.buildid");

	/* A note named "Go" of another type is not the build id. */
	poked(&m, n + 32, 5, 4);

	/* A note whose sizes run past the segment: not Go, no crash. */
	CHECK_INT(poked(&m, n + 24, 0xffffffffu, 4).kind, CD_ELF_DYNAMIC);
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
	go(&m, CD_ELF_STATIC, ".go.buildinfo");

	/* A name offset past the table, a shstrndx past the sections: not Go. */
	poked(&m, SH_OFF + 192, 5000, 4);
	CHECK_INT(poked(&m, 62, 9, 2).kind, CD_ELF_STATIC);
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

int main(void)
{
	test_elf_kinds();
	test_elf_go_section();
	test_elf_foreign_and_bad();
	test_elf_files();
	return unit_done("elf");
}
