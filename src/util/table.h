/* SPDX-License-Identifier: MIT */
/*
 * table.h: the length of a static table, and a name looked up in a table
 * of names indexed by an enum (designated initializers), with a fallback
 * for a value outside it or a hole in it.
 */
#ifndef CD_UTIL_TABLE_H
#define CD_UTIL_TABLE_H

#include <stddef.h>

#define CD_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define CD_NAME_OF(names, v, fallback) \
	((size_t)(v) < CD_ARRAY_LEN(names) && (names)[(size_t)(v)] ? (names)[(size_t)(v)] : (fallback))

#endif
