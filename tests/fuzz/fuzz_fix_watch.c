/* SPDX-License-Identifier: MIT */
/* libFuzzer target: what fix and watch read from outside: the record undo
 * trusts nothing of (any bytes: refused or parsed, and a parsed record
 * formats back into one that parses the same), and kernel log lines as watch
 * groups them (each input line fed as a record, at advancing times). */
#include "fuzz.h"
#include "persist/persist.h"
#include "probe/kmsg.h"

static void record(const char *text)
{
	struct cd_record *r = malloc(sizeof *r), *back = malloc(sizeof *back);
	char err[200], *buf = malloc(65536);
	if (r && back && buf && cd_record_parse(text, r, err, sizeof err) == 0) {
		int n = cd_record_format(r, buf, 65536);
		if (n > 0 && cd_record_parse(buf, back, err, sizeof err) != 0)
			abort(); /* what fix writes, fix must read */
	}
	free(r);
	free(back);
	free(buf);
}

static void lines(char *text)
{
	struct cd_kgroup g;
	struct cd_kgroup_event ev[8];
	if (cd_kgroup_init(&g) != 0)
		return;
	double t = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int fac, lev;
		unsigned long long seq;
		(void)cd_kmsg_prefix(l, &fac, &lev, &seq);
		cd_kgroup_feed(&g, l, t, ev, 8);
		cd_kgroup_flush(&g, t, false, ev, 8);
		t += 0.3;
	}
	cd_kgroup_flush(&g, t, true, ev, 8);
	cd_kgroup_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	record(text);
	lines(text);
	free(text);
	return 0;
}
