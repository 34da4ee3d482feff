/* libFuzzer target: the small text parsers of probe/ (kernel command line,
 * release, clocksource files, os-release), each fed a NUL-terminated copy of
 * the input, as they receive text from cd_read_small/cd_read_file. */
#include "probe/probe.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	cd_parse_cmdline(text, &k);
	cd_parse_kernel_release(text, &k);
	(void)cd_kernel_at_least(&k, 4, 7, 0);
	struct cd_clocksource cs;
	memset(&cs, 0, sizeof cs);
	cd_parse_clocksource_list(text, &cs);
	cd_parse_clocksource_current(text, &cs);
	struct cd_os os;
	memset(&os, 0, sizeof os);
	cd_parse_os_release(text, &os);
	cd_os_guess_from_release(text, &os);
	free(text);
	return 0;
}
