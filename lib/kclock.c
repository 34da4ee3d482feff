/* SPDX-License-Identifier: MIT */
/*
 * kclock.c: the kernel's clocks through the vDSO entry point itself (see
 * kclock.h for why not through clock_gettime).
 */
#include "kclock.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*vdso_gettime_fn)(clockid_t, struct timespec *);

/* Written once by fc_kclock_init (0 = not looked up, 1 = looked up); the
 * pointer is published with release and read with acquire. */
static _Atomic(vdso_gettime_fn) vdso_gettime;
static atomic_int looked_up;

#if defined(__x86_64__)
#define VDSO_GETTIME "__vdso_clock_gettime"
#elif defined(__aarch64__)
#define VDSO_GETTIME "__kernel_clock_gettime"
#elif defined(__i386__)
#define VDSO_GETTIME "__vdso_clock_gettime"
#else
#define VDSO_GETTIME NULL
#endif

static uint32_t gnu_hash_nsyms(const uint32_t *gh)
{
	/* DT_GNU_HASH has no symbol count: it is one past the last symbol of
	 * the longest chain, found by walking from the highest bucket. */
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)(gh + 4);
	const uint32_t *buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

void *fc_elf_lookup(const void *base, const char *name)
{
	if (!base || !name)
		return NULL;
	const ElfW(Ehdr) *eh = base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phoff == 0)
		return NULL;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(const void *)((const char *)base + eh->e_phoff);
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t load_offset = 0;
	int have_load = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			load_offset = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(const void *)((const char *)base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Word) *hash = NULL;
	const uint32_t *gnu_hash = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr + load_offset;
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: strtab = (const char *)p; break;
		case DT_HASH: hash = (const ElfW(Word) *)p; break;
		case DT_GNU_HASH: gnu_hash = (const uint32_t *)p; break;
		default: break;
		}
	}
	if (!symtab || !strtab || (!hash && !gnu_hash))
		return NULL;
	uint32_t nsyms = hash ? hash[1] : gnu_hash_nsyms(gnu_hash);
	for (uint32_t i = 0; i < nsyms; i++) {
		const ElfW(Sym) *s = &symtab[i];
		unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
		if (type != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK) || s->st_shndx == SHN_UNDEF)
			continue;
		if (strcmp(strtab + s->st_name, name) == 0)
			return (void *)(s->st_value + load_offset);
	}
	return NULL;
}

void fc_kclock_init(void)
{
	if (atomic_load_explicit(&looked_up, memory_order_acquire))
		return;
	vdso_gettime_fn fn = NULL;
	const char *sym = VDSO_GETTIME;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (sym && base)
		fn = (vdso_gettime_fn)fc_elf_lookup((const void *)base, sym);
	atomic_store_explicit(&vdso_gettime, fn, memory_order_release);
	atomic_store_explicit(&looked_up, 1, memory_order_release);
}

int fc_kclock_has_vdso(void)
{
	fc_kclock_init();
	return atomic_load_explicit(&vdso_gettime, memory_order_acquire) != NULL;
}

int fc_kclock(clockid_t clock, struct timespec *ts)
{
	vdso_gettime_fn fn = atomic_load_explicit(&vdso_gettime, memory_order_acquire);
	if (!fn && !atomic_load_explicit(&looked_up, memory_order_acquire)) {
		fc_kclock_init();
		fn = atomic_load_explicit(&vdso_gettime, memory_order_acquire);
	}
	if (fn)
		return fn(clock, ts);  /* the vDSO returns -errno itself */
	/* The raw system call: syscall() sets errno, which the library must
	 * leave alone. */
	int saved = errno;
	long r = syscall(SYS_clock_gettime, (long)clock, ts);
	int err = r == 0 ? 0 : -errno;
	errno = saved;
	return err;
}

int64_t fc_kclock_ns(clockid_t clock)
{
	struct timespec ts;
	if (fc_kclock(clock, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
