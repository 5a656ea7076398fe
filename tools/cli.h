/* cli.h — small helpers shared by the command-line tools (argument parsing, timing, RSS). */
#ifndef SHIRO_CLI_H
#define SHIRO_CLI_H

#include <stdint.h>

/* Parses a decimal integer argument in [lo, hi]; on error prints
 * "PROG: OPTION: expected an integer in [lo, hi], found 'TEXT'" and returns 0. */
int cli_int(const char *prog, const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out);

/* Returns the value of option argv[*i] (advancing *i), or prints "PROG: OPTION needs a value" and returns NULL. */
const char *cli_value(const char *prog, int argc, char **argv, int *i);

/* Wall-clock seconds since an arbitrary origin (monotonic). */
double cli_now(void);

/* Prints s as a JSON string literal (quotes, backslashes and control characters escaped). */
#include <stdio.h>
void cli_json_string(FILE *f, const char *s);

/* Progress of a planner phase on stderr, redrawn in place: only when stderr
 * is a terminal and enabled (cli_progress_enable); done == total ends the line. */
void cli_progress_enable(int on);
void cli_progress(const char *phase, int64_t done, int64_t total);

/* Peak resident set size of this process in bytes (0 if unknown). */
int64_t cli_peak_rss(void);

/* Makes SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporary files of the
 * outputs being written (out_file.h) before the process dies of them. */
void cli_remove_temps_on_signals(void);

/* Prints each line of lines (a plan's warnings) on stderr as "PROG: warning: LINE". */
void cli_print_warnings(const char *prog, const char *lines);

/* Sends stdout and stderr to /dev/null: a process whose report another process of the same
 * run gives (shiro-plan's processes other than 0). */
void cli_silence(void);

/* Flushes and closes stdout at the end of a tool: returns rc if every write
 * to it succeeded, else prints "PROG: error writing standard output: WHY" on
 * stderr and returns 1 (results lost on a full disk are a failure). */
int cli_finish_stdout(const char *prog, int rc);

/* --version: prints "PROG VERSION" (the project's, shiro_config.h) and the
 * plan format version on stdout; `plans` says what the tool does with plan
 * files ("writes", "reads"; NULL: none). */
void cli_version(const char *prog, const char *plans);

#endif
