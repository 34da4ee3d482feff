/* SPDX-License-Identifier: MIT */
/*
 * test_printable.c: strings from a machine reach a terminal as printable
 * ASCII only: every control (C0, DEL, C1), every byte of UTF-8, invalid or
 * not, becomes '?'; copies are bounded and always terminated.
 */
#include "unit.h"
#include "util/printable.h"

int main(void)
{
	char buf[64];
	CHECK_INT(cd_printable_copy(buf, sizeof buf, "6.1.0-56-amd64", 14), 14);
	CHECK_STR(buf, "6.1.0-56-amd64");
	const char evil[] = "a\x1b]0;X\x07" "b\x7f\x9b" "c\xc2\x9b" "d\xff\r\n\t";
	cd_printable_copy(buf, sizeof buf, evil, sizeof evil - 1);
	CHECK_STR(buf, "a?]0;X?b??c??d????");
	/* n bounds the copy, the NUL ends it, cap bounds it */
	CHECK_INT(cd_printable_copy(buf, sizeof buf, "abcdef", 3), 3);
	CHECK_STR(buf, "abc");
	CHECK_INT(cd_printable_copy(buf, sizeof buf, "ab\0cd", 5), 5);   /* a NUL is a byte too */
	CHECK_STR(buf, "ab?cd");
	CHECK_INT(cd_printable_copy(buf, 4, "abcdef", 6), 3);
	CHECK_STR(buf, "abc");
	buf[0] = 'x';
	CHECK_INT(cd_printable_copy(buf, 0, "abc", 3), 0);
	CHECK(buf[0] == 'x');
	char in_place[] = "tsc\x1b[2J\x01 ok";
	cd_printable(in_place);
	CHECK_STR(in_place, "tsc?[2J? ok");
	return unit_done("test_printable");
}
