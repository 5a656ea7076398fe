/* mm_test_files.h — what the Matrix Market reader's tests share: a private
 * temporary folder, files written into it (plain or gzip), and a
 * deterministic random stream for generated inputs, and the CHECK counters. */
#ifndef SHIRO_MM_TEST_FILES_H
#define SHIRO_MM_TEST_FILES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int failures = 0;
static int checks = 0;
static char tmpdir[256];

/* Counts a check; prints and counts a failed one, and goes on. */
#define CHECK(cond, ...)                          \
  do {                                            \
    checks++;                                     \
    if (!(cond)) {                                \
      failures++;                                 \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

/* Makes tmpdir: $TMPDIR (or /tmp)/NAME_XXXXXX. Returns 0, or prints why and returns -1. */
static int tmpdir_make(const char *name) {
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/%s_XXXXXX", base && *base ? base : "/tmp", name);
  if (mkdtemp(tmpdir)) return 0;
  printf("FAIL: mkdtemp %s: %s\n", tmpdir, strerror(errno));
  return -1;
}

/* out = tmpdir/name. */
static void tmp_path(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", tmpdir, name);
}

/* Writes text[0..len) to path, gzip-compressed if gz. Returns 0 on success. */
static int write_file(const char *path, const char *text, size_t len, bool gz) {
  if (gz) {
    gzFile g = gzopen(path, "wb1");
    if (!g) return -1;
    if (len && gzwrite(g, text, (unsigned)len) != (int)len) {
      gzclose(g);
      return -1;
    }
    return gzclose(g) == Z_OK ? 0 : -1;
  }
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(text, 1, len, f);
  return (fclose(f) == 0 && w == len) ? 0 : -1;
}

/* xorshift64*: the same stream on every platform; each test seeds it once. */
static uint64_t rng_state = 1;
static void rng_seed(uint64_t seed) { rng_state = seed ? seed : 1; }
static uint64_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1du;
}

/* Uniform-ish in [0, n), n > 0. */
static int64_t rnd(int64_t n) { return (int64_t)(rng() % (uint64_t)n); }

#endif
