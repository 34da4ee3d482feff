/* SPDX-License-Identifier: MIT */
/*
 * clocksource.c: the kernel's current and available clocksources, from
 * /sys/devices/system/clocksource/clocksource0/.
 *
 * Both files are a line of names separated by spaces.  Names are short and
 * printable; anything else is junk from a damaged snapshot and is skipped
 * rather than trusted.
 */
#include "probe/probe.h"

#include <errno.h>
#include <string.h>

static bool name_byte_ok(unsigned char c)
{
	return c > ' ' && c < 0x7f;
}

/* Copy the next name from *p into out; returns its length (0 at the end).
 * A name that does not fit or holds a bad byte is skipped (returns -1). */
static int next_name(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (!*s) {
		*p = s;
		return 0;
	}
	const char *start = s;
	bool ok = true;
	while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
		if (!name_byte_ok((unsigned char)*s))
			ok = false;
		s++;
	}
	*p = s;
	size_t n = (size_t)(s - start);
	if (!ok || n >= cap)
		return -1;
	memcpy(out, start, n);
	out[n] = '\0';
	return (int)n;
}

int cd_parse_clocksource_list(const char *text, struct cd_clocksource *cs)
{
	const char *p = text;
	char name[CD_NAME_MAX];
	int rc;
	cs->n_available = 0;
	while ((rc = next_name(&p, name, sizeof name)) != 0) {
		if (rc < 0 || cs->n_available >= CD_MAX_CLOCKSOURCES)
			continue;
		memcpy(cs->available[cs->n_available++], name, sizeof name);
	}
	cs->have_available = cs->n_available > 0;
	return cs->n_available > 0 ? cs->n_available : -EINVAL;
}

int cd_parse_clocksource_current(const char *text, struct cd_clocksource *cs)
{
	const char *p = text;
	char name[CD_NAME_MAX];
	int rc = next_name(&p, name, sizeof name);
	if (rc <= 0) {
		cs->have_current = false;
		return -EINVAL;
	}
	memcpy(cs->current, name, sizeof name);
	cs->have_current = true;
	return 0;
}

bool cd_clocksource_available(const struct cd_clocksource *cs, const char *name)
{
	for (int i = 0; i < cs->n_available; i++)
		if (strcmp(cs->available[i], name) == 0)
			return true;
	return false;
}
