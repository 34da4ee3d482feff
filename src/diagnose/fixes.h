/* SPDX-License-Identifier: MIT */
/*
 * fixes.h: the texts of fixes, written for the distribution and the
 * hypervisor in front of us.  Rules decide what to fix; this decides how to
 * say it.  Every function appends to buf (bounded, always NUL-terminated).
 */
#ifndef CD_FIXES_H
#define CD_FIXES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "probe/facts.h"

void cd_appendf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The name of the GRUB drop-in that adds params ("tsc=reliable" ->
 * "90-clockdoctor-tsc-reliable.cfg"), shared with `fix --persist`. */
void cd_fix_dropin_name(char *out, size_t cap, const char *params);
/* How to add params ("tsc=reliable") to the kernel command line for good. */
void cd_fix_add_kernel_params(char *buf, size_t cap, const struct cd_facts *f, const char *params);
/* How to remove one parameter (its name, e.g. "clocksource") for good. */
void cd_fix_remove_kernel_param(char *buf, size_t cap, const struct cd_facts *f, const char *param);
/* Switching the clocksource now, as root (lasts until reboot). */
void cd_fix_switch_now(char *buf, size_t cap, const char *clocksource);
/* What the hypervisor's owner can do so the guest keeps a fast clocksource. */
void cd_fix_hypervisor(char *buf, size_t cap, const struct cd_facts *f);
/* How to get a kernel of at least maj.min on this distribution, in the
 * words of its release (a backports or enablement kernel, or the first
 * release that has one); on an unknown distribution, what to look for.
 * maj, min, patch: a version constant of lib/clockfacts.h (FC_KV_...). */
void cd_fix_newer_kernel(char *buf, size_t cap, const struct cd_facts *f, int maj, int min, int patch, bool bit32);
/* The release in front of us, for people ("Debian 7 (wheezy)"), and
 * whether it was inferred from the kernel release rather than read; NULL
 * when unknown. */
const char *cd_os_release_name(const struct cd_facts *f, bool *inferred);
/* How to get the clock disciplined (chrony or ntpd) on this distribution. */
void cd_fix_ntp(char *buf, size_t cap, const struct cd_facts *f);

#endif
