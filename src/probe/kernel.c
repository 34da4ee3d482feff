/* SPDX-License-Identifier: MIT */
/*
 * kernel.c: the kernel's release and the clock-related parts of its command
 * line.
 *
 * The release decides which rules apply (the versions are lib/clockfacts.h:
 * when hpet lost its vDSO read, when tsc=reliable reached the boot-time sync
 * check, ...), so it is parsed into numbers once here.  Distribution suffixes ("-358.18.1.el6.x86_64",
 * "-0.bpo.2-686-pae") are ignored: the first two or three numbers are the
 * upstream base, which is all the rules can rely on.
 */
#include "probe/probe.h"
#include "probe/span.h"
#include "util/table.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Read a decimal number of at most 5 digits at *p; -1 if none. */
static int small_number(const char **p)
{
	const char *s = *p;
	int v = 0, digits = 0;
	while (*s >= '0' && *s <= '9') {
		if (++digits > 5)
			return -1;
		v = v * 10 + (*s - '0');
		s++;
	}
	if (digits == 0)
		return -1;
	*p = s;
	return v;
}

int cd_parse_kernel_release(const char *text, struct cd_kernel *k)
{
	const char *p = text;
	k->ver_major = k->ver_minor = k->ver_patch = -1;
	while (*p == ' ' || *p == '\t')
		p++;
	int maj = small_number(&p);
	if (maj < 0 || *p != '.')
		return -EINVAL;
	p++;
	int min = small_number(&p);
	if (min < 0)
		return -EINVAL;
	int patch = 0;
	if (*p == '.') {
		p++;
		int v = small_number(&p);
		if (v >= 0)
			patch = v;
	}
	k->ver_major = maj;
	k->ver_minor = min;
	k->ver_patch = patch;
	return 0;
}

enum fc_kver cd_kernel_compare(const struct cd_kernel *k, int maj, int min, int patch)
{
	return fc_kver_compare(k->ver_major, k->ver_minor, k->ver_patch, maj, min, patch);
}

/* Copy the value of one "key=value" token into out (bounded). */
static void token_value(struct cd_span tok, size_t keylen, char *out, size_t cap)
{
	size_t n = tok.n - keylen;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, tok.p + keylen, n);
	out[n] = '\0';
}

/* A word the command line (or tsc=) may hold, and the flag of struct
 * cd_kernel it sets (the offset of a bool cmd_* field). */
#define FLAG_WORD(word, prefix, field) { word, prefix, (int)offsetof(struct cd_kernel, field) }

/* tsc= takes one option per occurrence: tsc_setup() in arch/x86/kernel/tsc.c
 * compares the whole value with strcmp ("reliable", "unstable",
 * "nowatchdog"), except noirqtime, which it matches as a prefix.  So
 * "tsc=reliable,noirqtime" sets nothing but noirqtime's prefix test fails
 * too: it is ignored, and said so. */
static const struct cd_word tsc_options[] = {
	FLAG_WORD("reliable", false, cmd_tsc_reliable),
	FLAG_WORD("nowatchdog", false, cmd_tsc_nowatchdog),
	FLAG_WORD("unstable", false, cmd_tsc_unstable),
	FLAG_WORD("noirqtime", true, cmd_tsc_noirqtime),
};

static const struct cd_word cmdline_words[] = {
	FLAG_WORD("notsc", false, cmd_notsc),
	FLAG_WORD("no-kvmclock", false, cmd_no_kvmclock),
	FLAG_WORD("no-kvmclock-vsyscall", false, cmd_no_kvmclock_vsyscall),
	FLAG_WORD("clocksource_failover", false, cmd_clocksource_failover),
	FLAG_WORD("clocksource_failover=", true, cmd_clocksource_failover),
	FLAG_WORD("acpi=off", false, cmd_acpi_off),
	FLAG_WORD("nohpet", false, cmd_nohpet),
	FLAG_WORD("hpet=disable", false, cmd_nohpet),
};

/* Set the flag that tok names in words[]; false when it names none. */
static bool set_flag(const struct cd_word *words, size_t n, struct cd_span tok, struct cd_kernel *k)
{
	int flag = cd_span_lookup(tok, words, n, -1);
	if (flag < 0)
		return false;
	*(bool *)((char *)k + flag) = true;
	return true;
}

static void parse_tsc_option(struct cd_span v, struct cd_kernel *k)
{
	if (!set_flag(tsc_options, CD_ARRAY_LEN(tsc_options), v, k) && !cd_span_is(v, "recalibrate") &&
	    !cd_span_is(v, "watchdog"))
		token_value(v, 0, k->cmd_tsc_ignored, sizeof k->cmd_tsc_ignored);
}

void cd_parse_cmdline(const char *text, struct cd_kernel *k)
{
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *start = p;
		/* A quoted value may hold spaces (init="a b"); the kernel's own
		 * parser honours double quotes, so do we. */
		bool quoted = false;
		while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		struct cd_span tok = { start, (size_t)(p - start) };
		/* Everything after a bare "--" goes to init, not the kernel. */
		if (cd_span_is(tok, "--"))
			break;
		if (cd_span_starts(tok, "clocksource=")) {
			token_value(tok, strlen("clocksource="), k->cmd_clocksource, sizeof k->cmd_clocksource);
			token_value(tok, 0, k->cmd_clocksource_word, sizeof k->cmd_clocksource_word);
		} else if (cd_span_starts(tok, "clock=")) {
			/* kernel/time/clocksource.c boot_override_clock(): the
			 * deprecated clock= sets the same override as clocksource=
			 * (the last of either wins), "pmtmr" meaning acpi_pm. */
			token_value(tok, strlen("clock="), k->cmd_clocksource, sizeof k->cmd_clocksource);
			if (strcmp(k->cmd_clocksource, "pmtmr") == 0)
				strcpy(k->cmd_clocksource, "acpi_pm");
			token_value(tok, 0, k->cmd_clocksource_word, sizeof k->cmd_clocksource_word);
		}
		else if (cd_span_starts(tok, "tsc="))
			parse_tsc_option((struct cd_span){ tok.p + 4, tok.n - 4 }, k);
		else
			set_flag(cmdline_words, CD_ARRAY_LEN(cmdline_words), tok, k);
	}
}
