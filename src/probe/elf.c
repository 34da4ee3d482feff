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

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

struct img {
	cd_elf_reader rd;
	void *ctx;
	bool be;
	int bits;
};

static uint64_t get(const struct img *m, const unsigned char *p, int size)
{
	uint64_t v = 0;
	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[m->be ? size - 1 - i : i] << (8 * i);
	return v;
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
	unsigned char b[64];
	size_t need = m->bits == 64 ? 64 : 40;
	if (entsize < need || !read_at(m, shoff + i * entsize, b, need))
		return false;
	s->name = get(m, b, 4);
	s->type = get(m, b + 4, 4);
	if (m->bits == 64) {
		s->offset = get(m, b + 24, 8);
		s->size = get(m, b + 32, 8);
		s->link = get(m, b + 40, 4);
		s->info = get(m, b + 44, 4);
	} else {
		s->offset = get(m, b + 16, 4);
		s->size = get(m, b + 20, 4);
		s->link = get(m, b + 24, 4);
		s->info = get(m, b + 28, 4);
	}
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

void cd_elf_classify(cd_elf_reader rd, void *ctx, struct cd_elf_info *out)
{
	memset(out, 0, sizeof *out);
	unsigned char eh[64];
	ssize_t got = rd(ctx, 0, eh, sizeof eh);
	if (got < 4 || memcmp(eh, ELFMAG, SELFMAG) != 0) {
		out->kind = CD_ELF_NOT_ELF;
		return;
	}
	struct img m = { .rd = rd, .ctx = ctx };
	if (got < 52 || (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB)) {
		bad(out, "unknown ELF class or byte order");
		return;
	}
	m.bits = out->bits = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	m.be = out->big_endian = eh[EI_DATA] == ELFDATA2MSB;
	if (m.bits == 64 && got < 64) {
		bad(out, "truncated ELF header");
		return;
	}
	out->machine = (unsigned)get(&m, eh + 18, 2);
	uint64_t phoff, shoff, phent, phnum, shent, shnum, shstrndx;
	if (m.bits == 64) {
		phoff = get(&m, eh + 32, 8);
		shoff = get(&m, eh + 40, 8);
		phent = get(&m, eh + 54, 2);
		phnum = get(&m, eh + 56, 2);
		shent = get(&m, eh + 58, 2);
		shnum = get(&m, eh + 60, 2);
		shstrndx = get(&m, eh + 62, 2);
	} else {
		phoff = get(&m, eh + 28, 4);
		shoff = get(&m, eh + 32, 4);
		phent = get(&m, eh + 42, 2);
		phnum = get(&m, eh + 44, 2);
		shent = get(&m, eh + 46, 2);
		shnum = get(&m, eh + 48, 2);
		shstrndx = get(&m, eh + 50, 2);
	}
	if (phnum == PN_XNUM) {
		struct shdr s0;
		if (!read_shdr(&m, shoff, shent, 0, &s0)) {
			bad(out, "PN_XNUM without a first section header");
			return;
		}
		phnum = s0.info;
	}
	size_t need = m.bits == 64 ? 56 : 32;
	if (phnum == 0 || phent < need || phnum * phent > MAX_PHDR_BYTES) {
		bad(out, phnum == 0 ? "no program headers" : "program header table too large or malformed");
		return;
	}
	unsigned char *ph = malloc((size_t)(phnum * phent));
	if (!ph || !read_at(&m, phoff, ph, (size_t)(phnum * phent))) {
		free(ph);
		bad(out, "truncated program header table");
		return;
	}
	bool interp = false;
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *p = ph + i * phent;
		uint64_t type = get(&m, p, 4), off, filesz, align;
		if (m.bits == 64) {
			off = get(&m, p + 8, 8);
			filesz = get(&m, p + 32, 8);
			align = get(&m, p + 48, 8);
		} else {
			off = get(&m, p + 4, 4);
			filesz = get(&m, p + 16, 4);
			align = get(&m, p + 28, 4);
		}
		if (type == PT_INTERP && !interp) {
			interp = true;
			size_t n = filesz < sizeof out->interp ? (size_t)filesz : sizeof out->interp - 1;
			if (n > 0 && read_at(&m, off, out->interp, n))
				out->interp[n] = '\0';
			else
				out->interp[0] = '\0';
			out->interp[strcspn(out->interp, "\n")] = '\0';
		} else if (type == PT_NOTE && !out->go && filesz > 0 && filesz <= MAX_NOTE_BYTES) {
			unsigned char *notes = malloc((size_t)filesz);
			if (notes && read_at(&m, off, notes, (size_t)filesz) &&
			    notes_have_go(&m, notes, (size_t)filesz, align == 8 ? 8 : 4)) {
				out->go = true;
				snprintf(out->go_why, sizeof out->go_why, ".note.go.buildid");
			}
			free(notes);
		}
	}
	free(ph);
	out->kind = interp ? CD_ELF_DYNAMIC : CD_ELF_STATIC;
	if (!out->go)
		scan_sections(&m, shoff, shent, shnum, shstrndx, out);
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
