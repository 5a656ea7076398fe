/* mm-read-time — times mm_read on one file, for the benchmark.
 *
 *   mm-read-time FILE [--threads T] [--repeat R]
 *
 * Reads FILE R times (default 1) with mm_read_ex on T threads (default:
 * OpenMP's number) and prints, for the fastest run, one line:
 *   mm_read FILE bytes B threads T nnz N wall_s W cpu_s C mb_per_s R
 * (cpu_s: CPU time of the whole process during that run, all threads).
 * Exit status 1 with the reader's message if the file cannot be read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "mm_read.h"

static const char *prog = "mm-read-time";

static double clock_s(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const char *path = NULL, *val;
  mm_read_options o = {0};
  int64_t reps = 1, v, nnz = 0;
  double best_w = 1e300, best_c = 0;
  struct stat sb;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, "--threads", val, 1, 4096, &v))
        return 2;
      o.threads = (int)v;
    } else if (!strcmp(argv[i], "--repeat")) {
      if (!(val = cli_value(prog, argc, argv, &i)) ||
          !cli_int(prog, "--repeat", val, 1, 1000, &reps))
        return 2;
    } else if (!path && argv[i][0] != '-') {
      path = argv[i];
    } else {
      fprintf(stderr, "usage: mm-read-time FILE [--threads T] [--repeat R]\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: mm-read-time FILE [--threads T] [--repeat R]\n");
    return 2;
  }
  if (stat(path, &sb) != 0) {
    perror(path);
    return 1;
  }
  for (int64_t r = 0; r < reps; r++) {
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (mm_read_ex(path, &o, &A, NULL, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      return 1;
    }
    double w = clock_s(CLOCK_MONOTONIC) - w0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (w < best_w) best_w = w, best_c = c;
    nnz = A->nnz;
    sc_csr_free(A);
  }
  printf("mm_read %s bytes %lld threads %d nnz %lld wall_s %.6f cpu_s %.6f mb_per_s %.1f\n", path,
         (long long)sb.st_size, o.threads, (long long)nnz, best_w, best_c,
         (double)sb.st_size / best_w / 1e6);
  return 0;
}
