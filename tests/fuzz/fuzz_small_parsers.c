/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the small text parsers of probe/ (kernel command line,
 * release, clocksource files, os-release, a snapshot's adjtimex.txt), each
 * fed a NUL-terminated copy of the input, as they receive text from
 * cd_read_small/cd_read_file.  adjtimex.txt must also survive
 * cd_format_adjtimex_txt and come back unchanged. */
#include "fuzz.h"
#include "probe/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	cd_parse_cmdline(text, &k);
	cd_parse_kernel_release(text, &k);
	(void)cd_kernel_compare(&k, 4, 7, 0);
	struct cd_clocksource cs;
	memset(&cs, 0, sizeof cs);
	cd_parse_clocksource_list(text, &cs);
	cd_parse_clocksource_current(text, &cs);
	struct cd_os os;
	memset(&os, 0, sizeof os);
	cd_parse_os_release(text, &os);
	cd_os_guess_from_release(text, &os);
	struct cd_ntp a, b;
	if (cd_parse_adjtimex_txt(text, &a) == 0) {
		char buf[512];
		if (cd_format_adjtimex_txt(&a, buf, sizeof buf) <= 0 || cd_parse_adjtimex_txt(buf, &b) != 0 ||
		    a.state != b.state || a.status != b.status || a.synchronized != b.synchronized ||
		    a.maxerror_us != b.maxerror_us || a.esterror_us != b.esterror_us)
			abort();
	} else if (a.have) {
		abort();
	}
	free(text);
	return 0;
}
