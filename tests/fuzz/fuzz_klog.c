/* SPDX-License-Identifier: MIT */
/*
 * fuzz_klog.c: libFuzzer target for cd_klog_parse.
 *
 * The parser takes text and len and must not read past len, so it is fed a
 * heap copy of exactly len bytes (AddressSanitizer flags any read beyond),
 * then a NUL-terminated copy, and must give the same answer both times.
 * Every event must stay within its bounds: a known kind, at most
 * CD_MAX_EVENTS of them, names and lines terminated and printable.
 */
#include "fuzz.h"
#include "probe/probe.h"

#include <math.h>

static void check_log(const struct cd_klog *l, size_t size)
{
	if (l->n_events < 0 || l->n_events > CD_MAX_EVENTS || l->lines < 0 ||
	    (size_t)l->lines > size || (l->truncated_events && l->n_events != CD_MAX_EVENTS) ||
	    (size > 0) != (l->lines > 0))
		abort();
	for (int i = 0; i < l->n_events; i++) {
		const struct cd_event *e = &l->events[i];
		if (e->kind < CD_EV_CS_SWITCHED || e->kind > CD_EV_CMDLINE || !isfinite(e->ts) ||
		    (e->ts < 0 && e->ts != -1) || e->cpu_a < -1 || e->cpu_b < -1)
			abort();
		fuzz_check_str(e->name, sizeof e->name);
		fuzz_check_str(e->name2, sizeof e->name2);
		fuzz_check_str(e->line, sizeof e->line);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cd_klog a, b;
	char *exact = fuzz_exact(data, size), *term = fuzz_text(data, size);

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	cd_klog_parse(exact, size, &a);
	cd_klog_parse(term, size, &b);
	if (memcmp(&a, &b, sizeof a))
		abort();
	check_log(&a, size);
	/* Appending to a log that already holds events must keep the bounds. */
	cd_klog_parse(exact, size, &a);
	check_log(&a, 2 * size);
	free(exact);
	free(term);
	return 0;
}
