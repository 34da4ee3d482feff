/*
 * numarg.h: what every subcommand's command line shares: a number, whole
 * or not at all (option values: "-d 2.5"), the message for a bad one or a
 * bad option, and the end of the report (exit statuses: commands.h).
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

struct option;
/* getopt_long returned '?' or ':' (call with opterr = 0): one line naming
 * the unknown option or the one missing its value, and the --help hint;
 * returns CD_EXIT_USAGE.  optstring and lo are the ones getopt was given. */
int cd_bad_option(const char *cmd, const char *optstring, const struct option *lo, char **argv);

/* A short option that meant something else before the options were made
 * one scheme (-p is a PID everywhere): says which option it is now and
 * returns CD_EXIT_USAGE. */
int cd_moved_option(const char *cmd, char old, const char *now);

/* The end of a subcommand's report: stdout flushed; when it could not be
 * written (closed, full), says so on stderr and returns CD_EXIT_UNKNOWN,
 * else status. */
int cd_report_written(const char *cmd, int status);

#endif
