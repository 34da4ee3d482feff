/* SPDX-License-Identifier: MIT */
/*
 * fuzz_redact.c: libFuzzer target for what `snapshot --redact` does with a
 * snapshot's text: cd_redact_text on any bytes, NUL included, from a heap
 * copy of exactly len bytes (AddressSanitizer flags any read beyond).
 *
 * The redacted text must be as long as it says and NUL-terminated, must
 * not change when redacted again (a marker is never taken for an
 * identifier), and must never hold a name it was given as a word.
 */
#include "fuzz.h"
#include "util/redact.h"

#include <stdbool.h>
#include <strings.h>

/* A byte that continues a word for redact.c. */
static bool word_byte(char c)
{
	return c && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:@%-_", c);
}

static void check_redact(const char *exact, size_t size)
{
	static struct cd_redact r;
	memset(&r, 0, sizeof r);
	cd_redact_add_name(&r, "db1.corp.example.com");
	cd_redact_learn(&r, exact, size);
	size_t n1 = 0, n2 = 0;
	char *once = cd_redact_text(&r, exact, size, &n1);
	if (!once || once[n1] != '\0')
		abort();
	char *twice = cd_redact_text(&r, once, n1, &n2);
	if (!twice || n2 != n1 || memcmp(once, twice, n1) != 0)
		abort();
	/* "db1" as a word of its own is gone. */
	for (size_t i = 0; i + 3 <= n1; i++)
		if (strncasecmp(once + i, "db1", 3) == 0 && !(i > 0 && word_byte(once[i - 1])) &&
		    !(i + 3 < n1 && word_byte(once[i + 3])))
			abort();
	free(once);
	free(twice);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact(data, size);
	check_redact(exact, size);
	free(exact);
	return 0;
}
