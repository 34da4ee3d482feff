/* SPDX-License-Identifier: MIT */
/*
 * elf.h: what kind of program a file is, as far as LD_PRELOAD is concerned
 * (`clockdoctor run`).
 *
 * LD_PRELOAD only reaches a program that the dynamic loader starts: one
 * with a PT_INTERP program header, of the loader's own class and machine.
 * Within those, a Go program reads the time through the vDSO itself, never
 * through libc's clock_gettime: its runtime finds __vdso_clock_gettime in
 * the vDSO image (runtime/vdso_linux.go), so an interposed clock_gettime is
 * never called.  Go's linker marks every binary with a .note.go.buildid
 * note (ELF note name "Go", type 4) and, since Go 1.13, a .go.buildinfo
 * section; either one is enough.
 *
 * The classification reads through a callback, so that unit tests feed it
 * ELF images built in memory; cd_elf_classify_file() reads a file.  Every
 * offset and count from the file is checked: a truncated or hostile file is
 * CD_ELF_BAD, never a crash or a huge read.
 */
#ifndef CD_PROBE_ELF_H
#define CD_PROBE_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cd_elf_kind {
	CD_ELF_NOT_ELF,   /* no ELF magic: a script, or something execve refuses */
	CD_ELF_BAD,       /* ELF magic, but truncated or inconsistent headers */
	CD_ELF_STATIC,    /* no PT_INTERP: static (or static-pie) */
	CD_ELF_DYNAMIC,   /* PT_INTERP: started by the dynamic loader */
};

struct cd_elf_info {
	enum cd_elf_kind kind;
	int bits;                 /* 32 or 64 (0 when not ELF) */
	bool big_endian;
	unsigned machine;         /* e_machine */
	bool go;                  /* a Go program (go_why says how it was told) */
	char go_why[32];          /* ".note.go.buildid", ".go.buildinfo" */
	char interp[128];         /* PT_INTERP's path, when dynamic */
	char bad_why[64];         /* what is wrong, when CD_ELF_BAD */
};

/* Reads len bytes at off into buf: the count read (short at the end of the
 * file), or -errno. */
typedef ssize_t (*cd_elf_reader)(void *ctx, uint64_t off, void *buf, size_t len);

/* Classifies the image that rd reads.  Never fails: the answer is in *out. */
void cd_elf_classify(cd_elf_reader rd, void *ctx, struct cd_elf_info *out);

/* The same for a file: 0, or -errno when it cannot be opened or read. */
int cd_elf_classify_file(const char *path, struct cd_elf_info *out);

/* Whether an ELF of this class and machine can be loaded with this
 * process's own dynamic loader (and so with a preload built like it). */
bool cd_elf_native(const struct cd_elf_info *e);

/* "x86-64", "AArch64", "i386", ... for messages ("machine 183" when
 * unknown; buf is used then). */
const char *cd_elf_machine_name(unsigned machine, char *buf, size_t len);

#endif
