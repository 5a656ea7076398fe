/* test_heatmap.c — heatmap_write_svg: content of small images, escaping, large
 * rank counts, argument errors, atomic writes (no temporary file left behind).
 *
 *   test_heatmap [OUT_DIR]
 *
 * Writes its images into OUT_DIR (default: a fresh directory under /tmp, removed
 * at the end) so that tests/format/heatmap_check.py can parse them as XML afterwards. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan_heatmap.h"
#include "test_util.h"

static char dir[512];

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Occurrences of needle in s. A plain loop: sanitizers' strstr interceptor
 * measures the whole haystack on every call, quadratic on a 15 MB image. */
static int count(const char *s, const char *needle) {
  size_t k = strlen(needle);
  int n = 0;
  for (const char *p = s; *p; p++)
    if (*p == needle[0] && strncmp(p, needle, k) == 0) n++, p += k - 1;
  return n;
}

/* Writes rows to DIR/name and returns the file's text (caller frees), NULL on failure. */
static char *write_and_read(const char *name, int32_t R, int32_t G, const int64_t *rows, const char *title,
                            heatmap_scale scale) {
  char path[600], err[256] = "";
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int rc = heatmap_write_svg(path, R, G, rows, title, scale, err, sizeof err);
  EXPECT(rc == 0, "%s: heatmap_write_svg failed: %s", name, err);
  return rc == 0 ? slurp(path) : NULL;
}

static void test_small(void) {
  /* 4 ranks, 2 per node: rows[p*4+q] = rows q -> p. */
  const int64_t rows[16] = {0, 5, 7, 0, /* rank 0 receives 5 from 1 (intra), 7 from 2 (inter) */
                            5, 0, 0, 1, /* rank 1: 5 from 0, 1 from 3 (inter) */
                            0, 0, 0, 123456789, /* rank 2: from 3 (intra) */
                            2, 0, 0, 0};
  char *s = write_and_read("four.svg", 4, 2, rows, "karate, 4 ranks", HEATMAP_LOG);
  if (!s) return;
  EXPECT(strncmp(s, "<?xml", 5) == 0 && strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""), "not an SVG document");
  EXPECT(strstr(s, "rank 1 &#8594; rank 0: 5 rows per call, intra-node"), "intra-node pair title");
  EXPECT(strstr(s, "rank 2 &#8594; rank 0: 7 rows per call, inter-node"), "inter-node pair title");
  EXPECT(strstr(s, "rank 3 &#8594; rank 1: 1 row per call, inter-node"), "singular 'row'");
  EXPECT(strstr(s, "rank 3 &#8594; rank 2: 123456789 rows per call, intra-node"), "exact large count");
  EXPECT(strstr(s, "rank 0 &#8594; rank 1: 5 rows"), "transposed pair is its own cell");
  EXPECT(count(s, "<title>rank ") == 16, "every cell has a title up to 64 ranks (found %d)", count(s, "<title>rank "));
  EXPECT(count(s, ": itself") == 4, "diagonal cells marked");
  EXPECT(strstr(s, "123456789 (max)"), "legend maximum");
  EXPECT(strstr(s, "123456789 rows per call") && strstr(s, "largest pair 123456789"), "subtitle");
  EXPECT(strstr(s, ">1M</text>") && strstr(s, ">10k</text>"), "decade ticks of the legend");
  EXPECT(strstr(s, ">log scale</text>"), "the scale is named");
  EXPECT(strstr(s, ">123M</text>") && strstr(s, ">7</text>") && strstr(s, ">5</text>"), "counts printed in the cells");
  /* one node boundary each way at rank 2 */
  EXPECT(count(s, "<line x1=") >= 2, "node boundaries");
  EXPECT(strstr(s, "</svg>\n") && s[strlen(s) - 1] == '\n', "document complete");
  free(s);
}

static void test_escaping_and_partial_node(void) {
  int64_t rows[13 * 13] = {0};
  for (int p = 0; p < 13; p++) rows[p * 13 + (p + 1) % 13] = p + 1;
  char *s = write_and_read("thirteen.svg", 13, 4, rows, "a<b & \"c\" 'd' >\x01", HEATMAP_LINEAR);
  if (!s) return;
  EXPECT(strstr(s, "a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt;<"), "title escaped, control byte dropped");
  EXPECT(!strstr(s, "a<b"), "raw '<' from the title");
  EXPECT(strstr(s, "13 ranks, 4 per node (4 nodes)"), "partial last node counted");
  free(s);
}

static void test_empty_and_single(void) {
  int64_t zero[64 * 64] = {0};
  char *s = write_and_read("empty.svg", 64, 8, zero, NULL, HEATMAP_LINEAR);
  if (s) {
    EXPECT(strstr(s, "no traffic") && !strstr(s, "url(#ramp0)\""), "empty matrix: no colour bar");
    EXPECT(strstr(s, "<title>shiro plan: rows moved per call</title>"), "default title");
    free(s);
  }
  int64_t one = 0;
  s = write_and_read("one.svg", 1, 1, &one, "one rank", HEATMAP_LOG);
  if (s) {
    EXPECT(count(s, ": itself") == 1, "single rank");
    free(s);
  }
}

static void test_large(int32_t R, int32_t G, const char *name) {
  int64_t *rows = calloc((size_t)R * R, sizeof *rows);
  if (!rows) return;
  uint64_t x = 12345;
  int64_t nonzero = 0;
  for (int32_t p = 0; p < R; p++)
    for (int32_t q = 0; q < R; q++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      int near = abs(p - q) <= 2 * G;
      if (p != q && (near || (x >> 60) == 0)) {
        rows[(size_t)p * R + q] = (int64_t)((x >> 33) % 100000);
        nonzero += rows[(size_t)p * R + q] > 0;
      }
    }
  char *s = write_and_read(name, R, G, rows, name, R % 2 ? HEATMAP_LOG : HEATMAP_LINEAR);
  if (s) {
    EXPECT(!strstr(s, "pointer-events=\"none\""), "%s: no counts in the cells above %d ranks", name,
           HEATMAP_NUMBERS_MAX_RANKS);
    EXPECT(count(s, "<title>rank ") == nonzero + R, "%s: %d cell titles, expected %lld", name,
           count(s, "<title>rank "), (long long)(nonzero + R));
    EXPECT(strlen(s) < (size_t)R * R * 160 + 200000, "%s: %zu bytes", name, strlen(s));
    free(s);
  }
  free(rows);
}

/* Close counts (386, 704 of at most 1000): the linear scale names its ticks
 * (0, 200, ... and the maximum) and prints every count in its cell; the log
 * one too, with decades. heatmap_check.py compares their colours. */
static void test_scales(void) {
  const int64_t rows[16] = {0, 12, 386, 704, /* rank 0 receives 386 and 704 rows across nodes */
                            12, 0, 0, 1000,
                            386, 0, 0, 0,
                            704, 1000, 0, 0};
  heatmap_scale sc = HEATMAP_LOG;
  EXPECT(heatmap_scale_parse("linear", &sc) == 0 && sc == HEATMAP_LINEAR, "parse linear");
  EXPECT(heatmap_scale_parse("log", &sc) == 0 && sc == HEATMAP_LOG, "parse log");
  EXPECT(heatmap_scale_parse("Log", &sc) == -1 && heatmap_scale_parse("", &sc) == -1 && heatmap_scale_parse(NULL, &sc) == -1 &&
             sc == HEATMAP_LOG,
         "parse rejects anything else, *out untouched");
  char *s = write_and_read("close-linear.svg", 4, 2, rows, "close counts, linear", HEATMAP_LINEAR);
  if (s) {
    EXPECT(strstr(s, ">linear scale</text>") && strstr(s, "rows / max (linear scale)"), "linear scale named");
    EXPECT(strstr(s, ">1000 (max)</text>") && strstr(s, ">0</text>") && strstr(s, ">200</text>") &&
               strstr(s, ">800</text>"),
           "linear ticks 0, 200, ..., 800 and the maximum");
    EXPECT(strstr(s, ">386</text>") && strstr(s, ">704</text>") && strstr(s, ">1000</text>") && strstr(s, ">12</text>"),
           "counts in the cells");
    free(s);
  }
  s = write_and_read("close-log.svg", 4, 2, rows, "close counts, log", HEATMAP_LOG);
  if (s) {
    EXPECT(strstr(s, ">log scale</text>") && strstr(s, ">100</text>") && strstr(s, ">1000 (max)</text>"), "log ticks");
    free(s);
  }
  char err[256], path[600];
  snprintf(path, sizeof path, "%s/badscale.svg", dir);
  EXPECT(heatmap_write_svg(path, 4, 2, rows, NULL, (heatmap_scale)7, err, sizeof err) == -1 && strstr(err, "unknown scale 7") &&
             access(path, F_OK) != 0,
         "unknown scale refused, nothing written: %s", err);
}

static void test_errors(void) {
  char err[256], path[600];
  int64_t rows[4] = {0, 1, 1, 0};
  snprintf(path, sizeof path, "%s/bad.svg", dir);
  EXPECT(heatmap_write_svg(path, 0, 1, rows, NULL, HEATMAP_LINEAR, err, sizeof err) == -1 && strstr(err, "0 ranks"), "ranks 0: %s", err);
  EXPECT(heatmap_write_svg(path, HEATMAP_MAX_RANKS + 1, 1, rows, NULL, HEATMAP_LINEAR, err, sizeof err) == -1, "too many ranks");
  EXPECT(heatmap_write_svg(path, 2, 0, rows, NULL, HEATMAP_LINEAR, err, sizeof err) == -1 && strstr(err, "per node"), "G 0: %s", err);
  EXPECT(heatmap_write_svg(path, 2, 1, NULL, NULL, HEATMAP_LINEAR, err, sizeof err) == -1, "NULL rows");
  EXPECT(heatmap_write_svg(NULL, 2, 1, rows, NULL, HEATMAP_LINEAR, NULL, 0) == -1, "NULL path, NULL errbuf");
  int64_t neg[4] = {0, -3, 1, 0};
  EXPECT(heatmap_write_svg(path, 2, 1, neg, NULL, HEATMAP_LINEAR, err, sizeof err) == -1 && strstr(err, "negative count -3"),
         "negative count: %s", err);
  EXPECT(access(path, F_OK) != 0, "nothing written on argument errors");
  char nodir[700];
  snprintf(nodir, sizeof nodir, "%s/no/such/dir/x.svg", dir);
  EXPECT(heatmap_write_svg(nodir, 2, 1, rows, NULL, HEATMAP_LINEAR, err, sizeof err) == -1 && strstr(err, nodir) &&
             strstr(err, "No such file"),
         "missing directory: %s", err);
  /* An existing file is replaced only by a complete image. */
  snprintf(path, sizeof path, "%s/keep.svg", dir);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs("old", f);
    fclose(f);
  }
  EXPECT(heatmap_write_svg(path, 2, 1, neg, NULL, HEATMAP_LINEAR, err, sizeof err) == -1, "refused");
  char *s = slurp(path);
  EXPECT(s && strcmp(s, "old") == 0, "existing file untouched by a failed write");
  free(s);
  EXPECT(heatmap_write_svg(path, 2, 1, rows, NULL, HEATMAP_LINEAR, err, sizeof err) == 0, "overwrite: %s", err);
  s = slurp(path);
  EXPECT(s && strstr(s, "</svg>"), "existing file replaced by a complete image");
  free(s);
  unlink(path);
}

static void check_no_temporaries(void) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)))
    EXPECT(!strstr(e->d_name, ".tmp."), "temporary file left: %s", e->d_name);
  closedir(d);
}

int main(int argc, char **argv) {
  int own = argc < 2;
  if (own) {
    snprintf(dir, sizeof dir, "/tmp/test_heatmap.XXXXXX");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      return 1;
    }
  } else {
    snprintf(dir, sizeof dir, "%s", argv[1]);
  }
  test_small();
  test_escaping_and_partial_node();
  test_empty_and_single();
  test_scales();
  test_large(256, 4, "r256-g4.svg");
  test_large(100, 1, "r100-g1.svg");
  test_large(1000, 8, "r1000-g8.svg");
  test_errors();
  check_no_temporaries();
  if (own) {
    const char *names[] = {"four.svg", "thirteen.svg", "empty.svg", "one.svg", "r256-g4.svg", "r100-g1.svg",
                           "r1000-g8.svg", "close-linear.svg", "close-log.svg"};
    char path[600];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      unlink(path);
    }
    rmdir(dir);
  }
  if (test_failures) fprintf(stderr, "%d failure(s)\n", test_failures);
  else printf("heatmap: all checks passed\n");
  return test_failures ? 1 : 0;
}
