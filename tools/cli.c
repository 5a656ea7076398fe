/* cli.c — helpers shared by the command-line tools. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "plan_file.h"
#include "shiro_config.h"
#include "out_file.h"

void cli_version(const char *prog, const char *plans) {
  printf("%s %s (shiro)\n", prog, SHIRO_VERSION);
  if (!plans) printf("plan format %d.%d (this tool handles no plan files)\n", PLAN_VERSION_MAJOR, PLAN_VERSION_MINOR);
  else if (!strcmp(plans, "writes")) printf("plan format %d.%d: writes %d.%d\n", PLAN_VERSION_MAJOR, PLAN_VERSION_MINOR,
                                            PLAN_VERSION_MAJOR, PLAN_VERSION_MINOR);
  else printf("plan format %d.%d: reads %d.x (any minor version of major %d)\n", PLAN_VERSION_MAJOR, PLAN_VERSION_MINOR,
              PLAN_VERSION_MAJOR, PLAN_VERSION_MAJOR);
}

int cli_int(const char *prog, const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = text ? strtoll(text, &end, 10) : 0;
  if (!text || end == text || *end != 0 || errno == ERANGE || v < lo || v > hi) {
    fprintf(stderr, "%s: %s: expected an integer in [%lld, %lld], found '%s'\n", prog, opt, (long long)lo,
            (long long)hi, text ? text : "");
    return 0;
  }
  *out = v;
  return 1;
}

const char *cli_value(const char *prog, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: %s needs a value\n", prog, argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t cli_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (int64_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
}

void cli_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static int progress_on, line_open;

void cli_progress_enable(int on) {
  if (!on && line_open) fputc('\n', stderr); /* close a bar left open by a failure */
  line_open = 0;
  progress_on = on && isatty(2);
}

void cli_progress(const char *phase, int64_t done, int64_t total) {
  if (!progress_on) return;
  int width = 30, fill = total > 0 ? (int)((double)done / (double)total * width) : width;
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
  bar[width] = 0;
  fprintf(stderr, "\r  %-9s [%s] %lld/%lld%s", phase, bar, (long long)done, (long long)total, done >= total ? "\n" : "");
  line_open = done < total;
  fflush(stderr);
}

/* Removes the outputs' temporaries, then dies of the signal as it would have. */
static void on_fatal_signal(int sig) {
  out_file_remove_temps(); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

void cli_remove_temps_on_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_fatal_signal);
}

int cli_finish_stdout(const char *prog, int rc) {
  int failed = ferror(stdout) != 0, e = 0;
  /* A write that failed before (output past the buffer: glibc drops what it could not write, so
   * the flush below succeeds) left its reason in errno; kept where it is a write's error. */
  if (failed && (errno == ENOSPC || errno == EPIPE || errno == EIO || errno == EFBIG || errno == EDQUOT)) e = errno;
  errno = 0;
  if (fflush(stdout) != 0) failed = 1, e = errno;
  /* EBADF with nothing lost: stdout was closed (>&-) and never written to. */
  if (fclose(stdout) != 0 && (failed || errno != EBADF)) failed = 1, e = e ? e : errno;
  if (!failed) return rc;
  if (e) fprintf(stderr, "%s: error writing standard output: %s\n", prog, strerror(e));
  else fprintf(stderr, "%s: error writing standard output\n", prog);
  return 1;
}

void cli_silence(void) {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  fflush(stdout);
  fflush(stderr);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  close(fd);
}

void cli_print_warnings(const char *prog, const char *lines) {
  for (const char *l = lines; *l;) {
    const char *e = strchr(l, '\n');
    int len = e ? (int)(e - l) : (int)strlen(l);
    fprintf(stderr, "%s: warning: %.*s\n", prog, len, l);
    l += len + (e != NULL);
  }
}
