/* SPDX-License-Identifier: MIT */
/*
 * klog_check.h: what the kernel-log parser's tests share: a parse into one
 * static result, the events of a kind, and a fixture's log parsed.
 */
#ifndef KLOG_CHECK_H
#define KLOG_CHECK_H

#include "unit.h"
#include "probe/probe.h"

#include <stdbool.h>
#include <stdlib.h>

static struct cd_klog L;

static inline const struct cd_klog *parse_n(const char *text, size_t len)
{
	memset(&L, 0, sizeof L);
	cd_klog_parse(text, len, &L);
	return &L;
}

static inline const struct cd_klog *parse(const char *text)
{
	return parse_n(text, strlen(text));
}

/* The nth (0-based) event of that kind, or NULL. */
static inline const struct cd_event *find(const struct cd_klog *l, enum cd_event_kind k, int nth)
{
	for (int i = 0; i < l->n_events; i++)
		if (l->events[i].kind == k && nth-- == 0)
			return &l->events[i];
	return NULL;
}

static inline int count(const struct cd_klog *l, enum cd_event_kind k)
{
	int n = 0;
	for (int i = 0; i < l->n_events; i++)
		n += l->events[i].kind == k;
	return n;
}

static inline bool near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

/* Only one event, of that kind: returns it (or a zeroed one, and fails). */
static inline const struct cd_event *only(const char *text, enum cd_event_kind k)
{
	static const struct cd_event none = { .cpu_a = -9, .cpu_b = -9 };
	const struct cd_klog *l = parse(text);
	CHECK_INT(l->n_events, 1);
	if (l->n_events != 1 || l->events[0].kind != k) {
		CHECK_INT(l->n_events > 0 ? (int)l->events[0].kind : -1, (int)k);
		fprintf(stderr, "  for: %s\n", text);
		return &none;
	}
	return &l->events[0];
}

static inline const struct cd_klog *fixture(const char *name)
{
	size_t len;
	char *text = unit_need_fixture(name, "dmesg.txt", &len);
	parse_n(text, len);
	free(text);
	return &L;
}

#endif
