/*
 * numarg.h: a command-line number, whole or not at all (the subcommands'
 * option values: "-d 2.5", "-n 1000").
 */
#ifndef CD_UTIL_NUMARG_H
#define CD_UTIL_NUMARG_H

#include <stdbool.h>

/* A finite decimal number, all of s: true and *v, or false. */
bool cd_parse_double(const char *s, double *v);

/* A base-10 long, all of s, in range: true and *v, or false. */
bool cd_parse_long(const char *s, long *v);

#endif
