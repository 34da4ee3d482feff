/* SPDX-License-Identifier: MIT */
/*
 * numarg.h: what every subcommand's command line shares: the option loop
 * (getopt_long with --help, the messages for a bad option and a stray
 * operand), a number, whole or not at all (option values: "-d 2.5"), a
 * folder or a file named by an option, the message for a usage error,
 * and the end of the report (exit statuses: commands.h).  Each
 * subcommand's file holds only its own options.
 */
#ifndef CD_UTIL_NUMARG_H
#define CD_UTIL_NUMARG_H

#include <stdbool.h>
#include <stdio.h>

/* A finite decimal number, all of s: true and *v, or false. */
bool cd_parse_double(const char *s, double *v);

/* A base-10 long, all of s, in range: true and *v, or false. */
bool cd_parse_long(const char *s, long *v);

/* cd_parse_double, from lo to hi (both included): true and *v, or false
 * with *v untouched. */
bool cd_parse_number(const char *s, double lo, double hi, double *v);

/* A whole number from lo to hi written any way cd_parse_double reads
 * ("1e3" is 1000, "5.0" is 5): true and *v, or false with *v untouched. */
bool cd_parse_whole(const char *s, double lo, double hi, long long *v);

/* A usage error of subcommand cmd, on stderr: "clockdoctor CMD: MESSAGE"
 * and where the options are told; returns CD_EXIT_USAGE. */
int cd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A short option that meant something else before the options were made
 * one scheme (-p is a PID everywhere): says which option it is now and
 * returns CD_EXIT_USAGE. */
int cd_moved_option(const char *cmd, char old, const char *now);

/* The value of the hidden --list-options every command takes (its options,
 * one a line: numarg.c); the commands' own long-only options take values
 * from 256 up, below this. */
#define CD_OPT_LIST_OPTIONS 0x10000

struct option;
/* A subcommand's own options, for cd_parse_options.  -h and --help are
 * every command's and are added here. */
struct cd_options {
	const char *cmd;                /* "check": the messages' */
	const char *shorts;             /* getopt's optstring without 'h'; a "+" first: the
	                                 * options end at the first operand */
	const struct option *longs;     /* ending in a zero entry, without "help" */
	void (*usage)(FILE *out);       /* the --help text */
	/* Takes one option, ch as getopt_long returns it and arg its value
	 * (NULL: none): -1 to go on, else the exit status to end with. */
	int (*take)(void *ctx, int ch, char *arg);
	bool operands;                  /* the operands are the command's; else each one is a usage error */
};

/* Reads argv's options from argv[1] on, passing each to o->take with ctx.
 * --help prints o->usage on stdout and returns cd_report_written's status;
 * an unknown option ("unknown option '-x'"), one without its value ("option
 * -d needs a value") or, unless o->operands, an operand ("unexpected
 * argument 'x'") is a usage error, said in one line and the --help hint.
 * Returns -1 to go on (optind: the first operand), else the exit status. */
int cd_parse_options(const struct cd_options *o, int argc, char **argv, void *ctx);

/* An option's folder (opt "--root", path its value): -1 when path is one,
 * else the usage error "--root PATH: not a folder". */
int cd_folder_arg(const char *cmd, const char *opt, const char *path);

/* An option's file to write (opt "--prometheus-file"): -1 when path can
 * name one (not empty, not ending in '/'), else the usage error
 * "--prometheus-file takes a file name, not 'PATH'". */
int cd_file_arg(const char *cmd, const char *opt, const char *path);

/* The end of a subcommand's report: stdout flushed; when it could not be
 * written (closed, full), says so on stderr and returns CD_EXIT_UNKNOWN,
 * else status. */
int cd_report_written(const char *cmd, int status);

#endif
