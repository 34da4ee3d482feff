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

#include <errno.h>
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
static void token_value(const char *tok, size_t toklen, size_t keylen, char *out, size_t cap)
{
	size_t n = toklen - keylen;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, tok + keylen, n);
	out[n] = '\0';
}

static bool token_is(const char *tok, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(tok, word, len) == 0;
}

static bool token_has_prefix(const char *tok, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);
	return len >= pl && memcmp(tok, prefix, pl) == 0;
}

/* tsc= takes one option per occurrence: tsc_setup() in arch/x86/kernel/tsc.c
 * compares the whole value with strcmp ("reliable", "unstable",
 * "nowatchdog"), except noirqtime, which it matches as a prefix.  So
 * "tsc=reliable,noirqtime" sets nothing but noirqtime's prefix test fails
 * too: it is ignored, and said so. */
static void parse_tsc_option(const char *v, size_t len, struct cd_kernel *k)
{
	if (token_is(v, len, "reliable"))
		k->cmd_tsc_reliable = true;
	else if (token_is(v, len, "nowatchdog"))
		k->cmd_tsc_nowatchdog = true;
	else if (token_is(v, len, "unstable"))
		k->cmd_tsc_unstable = true;
	else if (token_has_prefix(v, len, "noirqtime"))
		k->cmd_tsc_noirqtime = true;
	else if (!token_is(v, len, "recalibrate") && !token_is(v, len, "watchdog"))
		token_value(v, len, 0, k->cmd_tsc_ignored, sizeof k->cmd_tsc_ignored);
}

void cd_parse_cmdline(const char *text, struct cd_kernel *k)
{
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *tok = p;
		/* A quoted value may hold spaces (init="a b"); the kernel's own
		 * parser honours double quotes, so do we. */
		bool quoted = false;
		while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		size_t len = (size_t)(p - tok);
		/* Everything after a bare "--" goes to init, not the kernel. */
		if (token_is(tok, len, "--"))
			break;
		if (token_has_prefix(tok, len, "clocksource="))
			token_value(tok, len, strlen("clocksource="), k->cmd_clocksource, sizeof k->cmd_clocksource);
		else if (token_has_prefix(tok, len, "tsc="))
			parse_tsc_option(tok + 4, len - 4, k);
		else if (token_is(tok, len, "notsc"))
			k->cmd_notsc = true;
		else if (token_is(tok, len, "no-kvmclock"))
			k->cmd_no_kvmclock = true;
		else if (token_is(tok, len, "no-kvmclock-vsyscall"))
			k->cmd_no_kvmclock_vsyscall = true;
		else if (token_is(tok, len, "clocksource_failover") || token_has_prefix(tok, len, "clocksource_failover="))
			k->cmd_clocksource_failover = true;
		else if (token_is(tok, len, "acpi=off"))
			k->cmd_acpi_off = true;
		else if (token_is(tok, len, "nohpet") || token_is(tok, len, "hpet=disable"))
			k->cmd_nohpet = true;
	}
}
