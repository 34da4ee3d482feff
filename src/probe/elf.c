/* SPDX-License-Identifier: MIT */
/*
 * elf.c: a program's kind for LD_PRELOAD: static or dynamic, its class and
 * machine, Go or not (elf.h).
 *
 * Only the headers are read: the ELF header, the program headers (PT_INTERP,
 * PT_NOTE), and the section headers with their names.  Both classes and
 * both byte orders are parsed, so that a 32-bit or foreign program is named
 * as such instead of being handed a preload its loader would refuse with a
 * message of its own.
 */
#include "probe/elf.h"
#include "util/fsread.h"
#include "util/table.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel refuses program header tables over 64 KiB (load_elf_phdrs);
 * section names are looked for in at most this many sections and this much
 * name table. */
#define MAX_PHDR_BYTES 65536
#define MAX_SECTIONS 4096
#define MAX_SHSTRTAB 65536
#define MAX_NOTE_BYTES 65536
/* Go's build id note: name "Go", type 4 (cmd/link: ELF_NOTE_GOBUILDID_TAG). */
#define GO_NOTE_TYPE 4

/* Where a field this reader needs sits in a header, and its size. */
struct field {
	unsigned char off, size;
};

#define FIELD(type, member) { offsetof(type, member), sizeof(((type *)0)->member) }

/* The fields this reader needs in one class's headers (<elf.h>'s Elf32_*
 * and Elf64_*), in the order of the structs below that receive them. */
struct layout {
	struct field ehdr[7];   /* e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx */
	size_t phdr_size;
	struct field phdr[4];   /* p_type, p_offset, p_filesz, p_align */
	size_t shdr_size;
	struct field shdr[6];   /* sh_name, sh_type, sh_offset, sh_size, sh_link, sh_info */
};

#define LAYOUT(E, P, S) { \
	{ FIELD(E, e_phoff), FIELD(E, e_shoff), FIELD(E, e_phentsize), FIELD(E, e_phnum), \
	  FIELD(E, e_shentsize), FIELD(E, e_shnum), FIELD(E, e_shstrndx) }, \
	sizeof(P), { FIELD(P, p_type), FIELD(P, p_offset), FIELD(P, p_filesz), FIELD(P, p_align) }, \
	sizeof(S), { FIELD(S, sh_name), FIELD(S, sh_type), FIELD(S, sh_offset), FIELD(S, sh_size), \
	             FIELD(S, sh_link), FIELD(S, sh_info) } }

static const struct layout elf32 = LAYOUT(Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr);
static const struct layout elf64 = LAYOUT(Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr);

struct img {
	cd_elf_reader rd;
	void *ctx;
	bool be;
	const struct layout *lay;
};

static uint64_t get(const struct img *m, const unsigned char *p, int size)
{
	uint64_t v = 0;
	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[m->be ? size - 1 - i : i] << (8 * i);
	return v;
}

/* The n fields of the header at p, in the file's byte order, into *dst[i]. */
static void get_fields(const struct img *m, const unsigned char *p, const struct field *f, uint64_t *const *dst,
                       size_t n)
{
	for (size_t i = 0; i < n; i++)
		*dst[i] = get(m, p + f[i].off, f[i].size);
}

/* Exactly len bytes at off, or false. */
static bool read_at(const struct img *m, uint64_t off, void *buf, size_t len)
{
	ssize_t n = m->rd(m->ctx, off, buf, len);
	return n >= 0 && (size_t)n == len;
}

static void bad(struct cd_elf_info *out, const char *why)
{
	out->kind = CD_ELF_BAD;
	snprintf(out->bad_why, sizeof out->bad_why, "%s", why);
}

/* A note segment's entries: name, type, each padded to align. */
static bool notes_have_go(const struct img *m, const unsigned char *p, size_t len, size_t align)
{
	size_t off = 0;
	while (off + 12 <= len) {
		uint64_t namesz = get(m, p + off, 4), descsz = get(m, p + off + 4, 4), type = get(m, p + off + 8, 4);
		off += 12;
		size_t name_pad = (size_t)((namesz + align - 1) / align * align);
		size_t desc_pad = (size_t)((descsz + align - 1) / align * align);
		if (namesz > len || descsz > len || name_pad > len - off)
			return false;
		if (namesz == 3 && type == GO_NOTE_TYPE && memcmp(p + off, "Go", 3) == 0)
			return true;
		off += name_pad;
		if (desc_pad > len - off)
			return false;
		off += desc_pad;
	}
	return false;
}

struct shdr {
	uint64_t name, type, offset, size, link, info;
};

static bool read_shdr(const struct img *m, uint64_t shoff, uint64_t entsize, uint64_t i, struct shdr *s)
{
	const struct layout *l = m->lay;
	unsigned char b[sizeof(Elf64_Shdr)];
	if (entsize < l->shdr_size || !read_at(m, shoff + i * entsize, b, l->shdr_size))
		return false;
	uint64_t *const dst[] = { &s->name, &s->type, &s->offset, &s->size, &s->link, &s->info };
	_Static_assert(CD_ARRAY_LEN(dst) == CD_ARRAY_LEN(l->shdr), "a destination for each field");
	get_fields(m, b, l->shdr, dst, CD_ARRAY_LEN(dst));
	return true;
}

/* Looks for Go's sections by name.  A file without section headers (they
 * are optional for running) simply has none. */
static void scan_sections(const struct img *m, uint64_t shoff, uint64_t entsize, uint64_t shnum,
                          uint64_t shstrndx, struct cd_elf_info *out)
{
	struct shdr s0, strs;
	if (shoff == 0)
		return;
	if ((shnum == 0 || shstrndx == SHN_XINDEX) && !read_shdr(m, shoff, entsize, 0, &s0))
		return;
	if (shnum == 0)
		shnum = s0.size;       /* more than SHN_LORESERVE sections */
	if (shstrndx == SHN_XINDEX)
		shstrndx = s0.link;
	if (shnum == 0 || shnum > MAX_SECTIONS || shstrndx >= shnum)
		return;
	if (!read_shdr(m, shoff, entsize, shstrndx, &strs) || strs.size == 0)
		return;
	size_t n = strs.size > MAX_SHSTRTAB ? MAX_SHSTRTAB : (size_t)strs.size;
	char *names = malloc(n + 1);
	if (!names)
		return;
	if (read_at(m, strs.offset, names, n)) {
		names[n] = '\0';
		for (uint64_t i = 1; i < shnum && !out->go; i++) {
			struct shdr s;
			if (!read_shdr(m, shoff, entsize, i, &s))
				break;
			if (s.name >= n)
				continue;
			const char *name = names + s.name;
			if (strcmp(name, ".go.buildinfo") == 0 || strcmp(name, ".note.go.buildid") == 0) {
				out->go = true;
				snprintf(out->go_why, sizeof out->go_why, "%s", name);
			}
		}
	}
	free(names);
}

/* The ELF header's table positions, in one class's layout. */
struct ehdr {
	uint64_t phoff, shoff, phent, phnum, shent, shnum, shstrndx;
};

/* The identification and the header: class, byte order, machine and the
 * tables' positions.  False, with out->kind said, when it is no ELF file
 * or one this reader cannot take. */
static bool read_header(cd_elf_reader rd, void *ctx, struct img *m, struct ehdr *h, struct cd_elf_info *out)
{
	unsigned char eh[sizeof(Elf64_Ehdr)];
	ssize_t got = rd(ctx, 0, eh, sizeof eh);
	if (got < 4 || memcmp(eh, ELFMAG, SELFMAG) != 0) {
		out->kind = CD_ELF_NOT_ELF;
		return false;
	}
	*m = (struct img){ .rd = rd, .ctx = ctx };
	if (got < (ssize_t)sizeof(Elf32_Ehdr) || (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB)) {
		bad(out, "unknown ELF class or byte order");
		return false;
	}
	out->bits = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	m->lay = out->bits == 64 ? &elf64 : &elf32;
	m->be = out->big_endian = eh[EI_DATA] == ELFDATA2MSB;
	if (out->bits == 64 && got < (ssize_t)sizeof(Elf64_Ehdr)) {
		bad(out, "truncated ELF header");
		return false;
	}
	const struct layout *l = m->lay;
	out->machine = (unsigned)get(m, eh + offsetof(Elf64_Ehdr, e_machine), 2);  /* the same in both */
	uint64_t *const dst[] = { &h->phoff, &h->shoff, &h->phent, &h->phnum, &h->shent, &h->shnum, &h->shstrndx };
	_Static_assert(CD_ARRAY_LEN(dst) == CD_ARRAY_LEN(l->ehdr), "a destination for each field");
	get_fields(m, eh, l->ehdr, dst, CD_ARRAY_LEN(dst));
	return true;
}

/* One program header: the interpreter's name (the first PT_INTERP), or
 * Go's build id note.  *interp: a PT_INTERP was seen. */
static void program_header(const struct img *m, const unsigned char *p, bool *interp, struct cd_elf_info *out)
{
	uint64_t type, off, filesz, align;
	uint64_t *const dst[] = { &type, &off, &filesz, &align };
	_Static_assert(CD_ARRAY_LEN(dst) == CD_ARRAY_LEN(m->lay->phdr), "a destination for each field");
	get_fields(m, p, m->lay->phdr, dst, CD_ARRAY_LEN(dst));
	if (type == PT_INTERP && !*interp) {
		*interp = true;
		size_t n = filesz < sizeof out->interp ? (size_t)filesz : sizeof out->interp - 1;
		if (n > 0 && read_at(m, off, out->interp, n))
			out->interp[n] = '\0';
		else
			out->interp[0] = '\0';
		out->interp[strcspn(out->interp, "\n")] = '\0';
	} else if (type == PT_NOTE && !out->go && filesz > 0 && filesz <= MAX_NOTE_BYTES) {
		unsigned char *notes = malloc((size_t)filesz);
		if (notes && read_at(m, off, notes, (size_t)filesz) &&
		    notes_have_go(m, notes, (size_t)filesz, align == 8 ? 8 : 4)) {
			out->go = true;
			snprintf(out->go_why, sizeof out->go_why, ".note.go.buildid");
		}
		free(notes);
	}
}

/* The program header table: static or dynamic, and Go's note.  False, with
 * the reason in out, when the table cannot be read. */
static bool scan_program_headers(const struct img *m, const struct ehdr *h, struct cd_elf_info *out)
{
	uint64_t phnum = h->phnum;
	if (phnum == PN_XNUM) {
		struct shdr s0;
		if (!read_shdr(m, h->shoff, h->shent, 0, &s0)) {
			bad(out, "PN_XNUM without a first section header");
			return false;
		}
		phnum = s0.info;
	}
	if (phnum == 0 || h->phent < m->lay->phdr_size || phnum * h->phent > MAX_PHDR_BYTES) {
		bad(out, phnum == 0 ? "no program headers" : "program header table too large or malformed");
		return false;
	}
	unsigned char *ph = malloc((size_t)(phnum * h->phent));
	if (!ph || !read_at(m, h->phoff, ph, (size_t)(phnum * h->phent))) {
		free(ph);
		bad(out, "truncated program header table");
		return false;
	}
	bool interp = false;
	for (uint64_t i = 0; i < phnum; i++)
		program_header(m, ph + i * h->phent, &interp, out);
	free(ph);
	out->kind = interp ? CD_ELF_DYNAMIC : CD_ELF_STATIC;
	return true;
}

void cd_elf_classify(cd_elf_reader rd, void *ctx, struct cd_elf_info *out)
{
	memset(out, 0, sizeof *out);
	struct img m;
	struct ehdr h;
	if (!read_header(rd, ctx, &m, &h, out) || !scan_program_headers(&m, &h, out))
		return;
	if (!out->go)
		scan_sections(&m, h.shoff, h.shent, h.shnum, h.shstrndx, out);
}

static ssize_t fd_reader(void *ctx, uint64_t off, void *buf, size_t len)
{
	off_t at = (off_t)off;
	return cd_read_full(*(int *)ctx, buf, len, &at);
}

int cd_elf_classify_file(const char *path, struct cd_elf_info *out)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	unsigned char probe;
	/* A folder opens, but reads fail: say so rather than "not ELF". */
	if (pread(fd, &probe, 1, 0) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	cd_elf_classify(fd_reader, &fd, out);
	close(fd);
	return 0;
}

bool cd_elf_native(const struct cd_elf_info *e)
{
	if (e->kind != CD_ELF_DYNAMIC && e->kind != CD_ELF_STATIC)
		return false;
	bool be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
#if defined(__x86_64__)
	unsigned mine = EM_X86_64;
#elif defined(__aarch64__)
	unsigned mine = EM_AARCH64;
#elif defined(__i386__)
	unsigned mine = EM_386;
#elif defined(__arm__)
	unsigned mine = EM_ARM;
#else
	unsigned mine = 0;
#endif
	return e->bits == (int)(sizeof(void *) * 8) && e->big_endian == be && (mine == 0 || e->machine == mine);
}

const char *cd_elf_machine_name(unsigned machine, char *buf, size_t len)
{
	switch (machine) {
	case EM_X86_64: return "x86-64";
	case EM_AARCH64: return "AArch64";
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "PowerPC64";
	case EM_S390: return "s390";
	case EM_MIPS: return "MIPS";
	default:
		snprintf(buf, len, "machine %u", machine);
		return buf;
	}
}
