/* SPDX-License-Identifier: MIT */
/* Unit tests of lines.c: a bounded list of formatted lines fills in order,
 * cuts what is too wide and drops what is past its end. */
#include "util/lines.h"
#include "unit.h"

struct list {
	int n;
	char row[3][8];
};

static char *add_v(struct list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *add_v(struct list *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *row = CD_LINES_VADD(l->row, l->n, fmt, ap);
	va_end(ap);
	return row;
}

int main(void)
{
	struct list l = { 0 };
	CHECK(CD_LINES_ADD(l.row, l.n, "tsc %d", 1) == l.row[0]);
	CHECK(add_v(&l, "%s", "a line too wide") == l.row[1]);
	CHECK(CD_LINES_ADD(l.row, l.n, "last") == l.row[2]);
	CHECK(CD_LINES_ADD(l.row, l.n, "dropped") == NULL);
	CHECK(add_v(&l, "dropped") == NULL);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.row[0], "tsc 1");
	CHECK_STR(l.row[1], "a line ");
	CHECK_STR(l.row[2], "last");
	return unit_done("lines");
}
