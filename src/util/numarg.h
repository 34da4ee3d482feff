/*
 * numarg.h: a command-line number, whole or not at all (the subcommands'
 * option values: "-d 2.5", "-n 1000"), and the message for a bad one.
 */
#ifndef CD_UTIL_NUMARG_H
#define CD_UTIL_NUMARG_H

#include <stdbool.h>

/* A finite decimal number, all of s: true and *v, or false. */
bool cd_parse_double(const char *s, double *v);

/* A base-10 long, all of s, in range: true and *v, or false. */
bool cd_parse_long(const char *s, long *v);

/* A usage error of subcommand cmd, on stderr: "clockdoctor CMD: MESSAGE"
 * and where the options are told; returns CD_EXIT_USAGE. */
int cd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
