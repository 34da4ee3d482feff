/* SPDX-License-Identifier: MIT */
/* libFuzzer target: libfastclock's parsers of outside text: the per-boot
 * verdict file (fed exactly size bytes, not NUL-terminated: the parser
 * takes a length), and the clocksource list and name matchers.  (The vDSO
 * symbol lookup is not fuzzed: it reads the image the kernel maps, which it
 * trusts as the kernel's own tools/testing/selftests/vDSO/parse_vdso.c
 * does.) */
#include "fastclock.h"
#include "fastclock_trust.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact(data, size);
	struct fc_verdict v;
	if (fc_verdict_parse(exact, size, &v) == 0) {
		/* what it accepted is well-formed */
		if (strlen(v.boot_id) == 0 || v.verdict < 0 || v.verdict > 2)
			abort();
	}
	free(exact);

	char *text = fuzz_text(data, size);
	(void)fc_trust_listed(text, "tsc");
	(void)fc_trust_listed(text, "");
	(void)fc_trust_vdso_fast(text, 6, 1, 0);
	free(text);
	return 0;
}
