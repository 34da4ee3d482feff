/* SPDX-License-Identifier: MIT */
/* Unit tests of the log2 histogram's printed layout (src/output/histprint.c):
 * bcc's print_log2_hist, character for character. */
#include "output/histprint.h"
#include "unit.h"

#include <stdlib.h>

/* The exact text, as bcc would print these counts (tools/funclatency.py). */
static void test_print(void)
{
	struct cd_hist h = { { 0 }, 0, 0 };
	for (int i = 0; i < 100; i++)
		cd_hist_add(&h, 20);  /* 16 -> 31 */
	for (int i = 0; i < 10; i++)
		cd_hist_add(&h, 40);  /* 32 -> 63 */
	cd_hist_add(&h, 5000);        /* 4096 -> 8191, with empty buckets between */
	char *text;
	UNIT_CAPTURE(text, cd_hist_print(out, &h, "nsecs"));
	const char *want =
	        "     nsecs               : count     distribution\n"
	        "        16 -> 31         : 100      |****************************************|\n"
	        "        32 -> 63         : 10       |****                                    |\n"
	        "        64 -> 127        : 0        |                                        |\n"
	        "       128 -> 255        : 0        |                                        |\n"
	        "       256 -> 511        : 0        |                                        |\n"
	        "       512 -> 1023       : 0        |                                        |\n"
	        "      1024 -> 2047       : 0        |                                        |\n"
	        "      2048 -> 4095       : 0        |                                        |\n"
	        "      4096 -> 8191       : 1        |                                        |\n"
	        "\n"
	        "avg = 67 nsecs, total: 7400 nsecs, count: 111\n";
	CHECK_STR(text, want);
	free(text);

	/* An empty histogram prints nothing. */
	struct cd_hist empty = { { 0 }, 0, 0 };
	UNIT_CAPTURE(text, cd_hist_print(out, &empty, "nsecs"));
	CHECK_STR(text, "");
	free(text);

	/* Past 2^32 bcc widens the columns and halves the bar. */
	struct cd_hist wide = { { 0 }, 0, 0 };
	cd_hist_add(&wide, (uint64_t)1 << 40);
	UNIT_CAPTURE(text, cd_hist_print(out, &wide, "nsecs"));
	CHECK(strstr(text, "               nsecs                         : count     distribution\n") == text);
	CHECK(strstr(text, "       1099511627776 -> 2199023255551        : 1        |********************|\n") != NULL);
	free(text);
}

int main(void)
{
	test_print();
	return unit_done("histprint");
}
