/* mm-fscanf-baseline — the plain way to read a Matrix Market file, as a yardstick.
 *
 *   mm-fscanf-baseline FILE.mtx
 *
 * fgets for the banner, comments and size line, then one fscanf per entry
 * ("%lld %lld %lf", or "%lld %lld" for pattern files) into triplet arrays.
 * No CSR is built and nothing is checked beyond what fscanf checks, so it
 * does less than mm_read. Plain files only. Prints one line:
 *   fscanf FILE bytes B entries N wall_s W cpu_s C mb_per_s R
 * Exit status 1 if the file cannot be read as a coordinate matrix. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double clock_s(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  char line[4096];
  long long m, k, nz, i, j;
  double x;
  struct stat sb;
  int pattern;
  if (argc != 2) {
    fprintf(stderr, "usage: mm-fscanf-baseline FILE.mtx\n");
    return 2;
  }
  if (stat(argv[1], &sb) != 0) {
    perror(argv[1]);
    return 1;
  }
  double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  FILE *f = fopen(argv[1], "r");
  if (!f || !fgets(line, sizeof line, f) || strncmp(line, "%%MatrixMarket", 14) != 0) {
    fprintf(stderr, "mm-fscanf-baseline: %s: not a Matrix Market file\n", argv[1]);
    return 1;
  }
  pattern = strstr(line, "pattern") != NULL;
  do {
    if (!fgets(line, sizeof line, f)) {
      fprintf(stderr, "mm-fscanf-baseline: %s: no size line\n", argv[1]);
      return 1;
    }
  } while (line[0] == '%');
  if (sscanf(line, "%lld %lld %lld", &m, &k, &nz) != 3 || nz < 0) {
    fprintf(stderr, "mm-fscanf-baseline: %s: bad size line\n", argv[1]);
    return 1;
  }
  int64_t *I = malloc((size_t)(nz > 0 ? nz : 1) * sizeof *I),
          *J = malloc((size_t)(nz > 0 ? nz : 1) * sizeof *J);
  double *X = malloc((size_t)(nz > 0 ? nz : 1) * sizeof *X);
  if (!I || !J || !X) {
    fprintf(stderr, "mm-fscanf-baseline: out of memory\n");
    return 1;
  }
  for (long long e = 0; e < nz; e++) {
    int got = pattern ? fscanf(f, "%lld %lld", &i, &j) : fscanf(f, "%lld %lld %lf", &i, &j, &x);
    if (got != (pattern ? 2 : 3)) {
      fprintf(stderr, "mm-fscanf-baseline: %s: bad entry %lld\n", argv[1], e + 1);
      return 1;
    }
    I[e] = i - 1;
    J[e] = j - 1;
    X[e] = pattern ? 1.0 : x;
  }
  fclose(f);
  double w = clock_s(CLOCK_MONOTONIC) - w0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  printf("fscanf %s bytes %lld entries %lld wall_s %.6f cpu_s %.6f mb_per_s %.1f\n", argv[1],
         (long long)sb.st_size, nz, w, c, (double)sb.st_size / w / 1e6);
  free(I);
  free(J);
  free(X);
  return 0;
}
