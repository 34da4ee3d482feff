/* SPDX-License-Identifier: MIT */
/*
 * commands.h: one function per subcommand, each in its own file, and the
 * exit statuses they share (docs/exit-codes.md is the table for people).
 *
 * 0-3 follow the Nagios plugin convention that `check` reports in: 0 ok,
 * 1 warning, 2 critical, 3 unknown.  Every subcommand keeps to it: 1 and 2
 * are its own milder and worse results (a clock that went backwards, a step
 * that failed), and 3 means it could not do its job at all, so no result
 * is to be read from it: a usage error (Nagios' own rule for bad
 * arguments), not being allowed, or a report that could not be written
 * (stdout closed or full).  A monitor then never mistakes a bad invocation
 * or a lost report for a verdict.  `run` alone differs: it passes its
 * program's status through, as env(1) and nice(1) do, so its own failures
 * take 125-127 where no program's status is expected.  Ctrl-C (SIGINT)
 * ends top, watch, bench and accuracy with their report, at their usual
 * status; the others die of the signal, which a shell shows as 130.
 */
#ifndef CD_COMMANDS_H
#define CD_COMMANDS_H

#define CD_EXIT_OK 0
#define CD_EXIT_WARNING 1       /* check: warning; the others: their milder bad result */
#define CD_EXIT_FAILED 2        /* check: critical; the others: their worse bad result */
#define CD_EXIT_UNKNOWN 3       /* could not tell or could not run: no result to read */
#define CD_EXIT_USAGE CD_EXIT_UNKNOWN

int cd_cmd_check(int argc, char **argv);
int cd_cmd_snapshot(int argc, char **argv);
int cd_cmd_bench(int argc, char **argv);
int cd_cmd_tsc(int argc, char **argv);
int cd_cmd_top(int argc, char **argv);
int cd_cmd_fix(int argc, char **argv);
int cd_cmd_watch(int argc, char **argv);
int cd_cmd_run(int argc, char **argv);
int cd_cmd_accuracy(int argc, char **argv);
int cd_cmd_report(int argc, char **argv);

#endif
