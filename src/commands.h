/*
 * commands.h: one function per subcommand, each in its own file.  A
 * subcommand returns the process exit status; usage errors return
 * CD_EXIT_USAGE, which is 3 ("unknown" in the Nagios convention that the
 * statuses follow: monitoring reads a bad invocation as "could not tell").
 */
#ifndef CD_COMMANDS_H
#define CD_COMMANDS_H

#define CD_EXIT_USAGE 3

int cd_cmd_check(int argc, char **argv);
int cd_cmd_snapshot(int argc, char **argv);
int cd_cmd_bench(int argc, char **argv);
int cd_cmd_tsc(int argc, char **argv);
int cd_cmd_top(int argc, char **argv);
int cd_cmd_fix(int argc, char **argv);
int cd_cmd_watch(int argc, char **argv);
int cd_cmd_run(int argc, char **argv);
int cd_cmd_accuracy(int argc, char **argv);

#endif
