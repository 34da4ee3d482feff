/* SPDX-License-Identifier: MIT */
/*
 * kclock.h: the kernel's clocks, read without going through the
 * clock_gettime symbol.
 *
 * libfastclock is also built into an LD_PRELOAD library that defines
 * clock_gettime itself; calling clock_gettime from inside the library would
 * call the shim again.  So the library finds the vDSO's own entry point in
 * the image the kernel maps into every process (AT_SYSINFO_EHDR), as Go's
 * runtime and the kernel's tools/testing/selftests/vDSO/parse_vdso.c do,
 * and falls back to the raw system call when there is no vDSO or no such
 * symbol in it.
 */
#ifndef FC_KCLOCK_H
#define FC_KCLOCK_H

#include <stdint.h>
#include <time.h>

/* Finds the vDSO entry once; safe to call again (later calls do nothing).
 * Async-signal-safe after the first call. */
void fc_kclock_init(void);

/* clock_gettime through the vDSO (or the system call): 0, or -errno. */
int fc_kclock(clockid_t clock, struct timespec *ts);

/* The clock in nanoseconds, or INT64_MIN when it cannot be read. */
int64_t fc_kclock_ns(clockid_t clock);

/* 1 when a vDSO entry was found, 0 when calls go to the system call. */
int fc_kclock_has_vdso(void);

/* Finds a defined function in an ELF image mapped at base (the vDSO's
 * layout: one PT_LOAD, a PT_DYNAMIC with DT_SYMTAB, DT_STRTAB and DT_HASH or
 * DT_GNU_HASH).  Returns its address, or NULL.  Symbol versions are not
 * checked: the vDSO defines each name once.  Exposed for tests. */
void *fc_elf_lookup(const void *base, const char *name);

#endif
