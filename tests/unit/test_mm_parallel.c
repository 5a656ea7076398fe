/* test_mm_parallel.c — the parallel Matrix Market reader and CSR builder:
 *
 *   - number scanners: the inline fast paths (8 digits at a time, Clinger,
 *     Eisel–Lemire) against strtod/strtoll bit for bit, and never a read
 *     past the readable end (a guard page);
 *   - the same CSR, bit for bit, for 1 thread and for 2, 3, 4 threads with
 *     parts of a few KiB, on every matrix of tests/data (gzip ones also
 *     unpacked, so that both input paths are compared) and on generated files (R-MAT pattern and real, 2-D and 3-D grids, whose
 *     shapes are also checked);
 *   - duplicates summed in file order, whatever the thread count;
 *   - parts of many copies (and a line longer than a copy): the gzip matrix;
 *   - errors in later parts: the same message and line as the sequential
 *     (gzip) reader, the first error in file order when several parts fail;
 *   - sc_csr_from_coo_segs: any split into runs, 32- or 64-bit indices, any
 *     thread count, the same matrix as sc_csr_from_coo.
 *   test_mm_parallel       all of the above (workdir tests/)
 *   test_mm_parallel DIR   the thread and gzip checks on every matrix of the
 *                          shared set DIR (../shared/data/matrices); exit 77
 *                          (the reason on stderr) if DIR is absent
 * Returns 0 on success, 1 on failure (each failure printed). A matrix that a
 * manifest lists but that is missing is a failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "csr.h"
#include "gen.h"
#include "mm_input.h"
#include "mm_read.h"
#include "mm_test_files.h"

/* Reads path with `threads` threads and parts of `chunk` bytes (0: auto). */
static shiro_status read_with(const char *path, int threads, size_t chunk, sc_csr **A, mm_header *h,
                              shiro_error *err) {
  mm_read_options o = {.threads = threads, .chunk_bytes = chunk};
  return mm_read_ex(path, &o, A, h, err);
}

/* True if A and B are the same matrix, bit for bit. */
static bool same_csr(const sc_csr *A, const sc_csr *B) {
  if (!A || !B || A->m != B->m || A->k != B->k || A->nnz != B->nnz) return false;
  return memcmp(A->Ap, B->Ap, (size_t)(A->m + 1) * sizeof *A->Ap) == 0 &&
      memcmp(A->Aj, B->Aj, (size_t)A->nnz * sizeof *A->Aj) == 0 &&
      memcmp(A->Ax, B->Ax, (size_t)A->nnz * sizeof *A->Ax) == 0;
}

/* The message after "PATH" (so that two files' messages compare). */
static const char *after_path(const char *msg, const char *path) {
  size_t n = strlen(path);
  return strncmp(msg, path, n) == 0 ? msg + n : msg;
}

/* ---- scanners ---- */

/* Random decimal strings of many shapes (long mantissas, every exponent,
 * digits next to halfway points): the fast scanner, the public one and
 * strtod must agree bit for bit. */
static void test_real_scanner(void) {
  char tok[128];
  int64_t bad = 0, n = 0;
  for (int t = 0; t < 400000; t++) {
    size_t o = 0;
    int kind = (int)(t % 4);
    if (kind == 0) { /* a double printed with 17 digits, its last digits nudged */
      double d;
      uint64_t bits = rng();
      memcpy(&d, &bits, sizeof d);
      if (!isfinite(d)) continue;
      o = (size_t)snprintf(tok, sizeof tok, "%.*e", 15 + (int)rnd(5), d);
      char *e = strchr(tok, 'e');
      if (e && e[-1] >= '0' && e[-1] <= '9') e[-1] = (char)('0' + rnd(10));
    } else if (kind == 1) { /* up to 19 digits, any exponent of the table */
      uint64_t w = rng() % 10000000000000000000u;
      o = (size_t)snprintf(tok, sizeof tok, "%s%llue%d", rnd(2) ? "-" : "", (unsigned long long)w,
                           (int)rnd(700) - 360);
    } else if (kind == 2) { /* fixed notation with a dot somewhere */
      int nd = 1 + (int)rnd(19), dot = (int)rnd(nd + 1);
      if (rnd(4) == 0) tok[o++] = '-';
      for (int d = 0; d < nd; d++) {
        if (d == dot) tok[o++] = '.';
        tok[o++] = (char)('0' + rnd(10));
      }
      if (dot == nd) tok[o++] = '.';
    } else { /* the midpoint of two neighbouring doubles, rounded to 19 digits */
      double d;
      uint64_t bits = rng() >> 2;
      memcpy(&d, &bits, sizeof d);
      long double mid = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
      o = (size_t)snprintf(tok, sizeof tok, "%.18Le", mid);
    }
    tok[o] = '\n';
    tok[o + 1] = '\0';
    double ref, v1 = 0, v2 = 0;
    char *q;
    const char *e1 = NULL, *e2 = NULL;
    ref = strtod(tok, &q);
    mm_scan r1 = mm_scan_real_fast(tok, tok + o + 1, &e1, &v1);
    mm_scan r2 = mm_scan_real(tok, &e2, &v2);
    bool ok = isinf(ref) ? (r1 == MM_SCAN_RANGE && r2 == MM_SCAN_RANGE)
                         : (r1 == MM_SCAN_OK && r2 == MM_SCAN_OK && memcmp(&v1, &ref, 8) == 0 &&
                            memcmp(&v2, &ref, 8) == 0 && e1 == q && e2 == q);
    n++;
    if (!ok && bad++ < 5)
      printf("real scan mismatch: '%.*s' -> %d %.17g / %d %.17g, strtod %.17g\n", (int)o, tok,
             (int)r1, v1, (int)r2, v2, ref);
  }
  CHECK(bad == 0, "%lld of %lld real scans differ from strtod", (long long)bad, (long long)n);
  /* Eisel–Lemire alone: whenever it decides, it agrees with strtod. */
  bad = 0;
  int64_t decided = 0;
  for (int t = 0; t < 200000; t++) {
    uint64_t w = 1 + rng() % 10000000000000000000u;
    int64_t q = rnd(700) - 350;
    double v, ref;
    snprintf(tok, sizeof tok, "%llue%lld", (unsigned long long)w, (long long)q);
    ref = strtod(tok, NULL);
    if (mm_decimal_to_double(w, q, &v)) {
      decided++;
      if (memcmp(&v, &ref, 8) != 0 && bad++ < 5)
        printf("Eisel-Lemire mismatch: %s -> %.17g, strtod %.17g\n", tok, v, ref);
    }
  }
  CHECK(bad == 0, "%lld Eisel-Lemire results differ from strtod", (long long)bad);
  CHECK(decided > 150000, "Eisel-Lemire decided only %lld of 200000", (long long)decided);
}

/* Integers: the fast scanner against strtoll, tokens of 1 to 22 digits. */
static void test_int_scanner(void) {
  char tok[64];
  int64_t bad = 0;
  for (int t = 0; t < 300000; t++) {
    size_t o = 0;
    int nd = 1 + (int)rnd(t % 2 ? 9 : 22);
    if (rnd(8) == 0) tok[o++] = rnd(2) ? '-' : '+';
    for (int d = 0; d < nd; d++) tok[o++] = (char)('0' + rnd(10));
    if (rnd(16) == 0) tok[o++] = 'x'; /* glued garbage */
    tok[o] = " \t\r\n"[rnd(4)];
    tok[o + 1] = '\n';
    int64_t v = 0;
    const char *end = NULL;
    char *q;
    errno = 0;
    long long ref = strtoll(tok, &q, 10);
    bool garbage = !mm_is_delim(*q);
    mm_scan r = mm_scan_int64_fast(tok, tok + o + 2, &end, &v);
    bool ok = garbage     ? r == MM_SCAN_BAD
        : errno == ERANGE ? r == MM_SCAN_RANGE
                          : (r == MM_SCAN_OK && v == ref && end == q);
    if (!ok && bad++ < 5)
      printf("int scan mismatch: '%.*s' -> %d %lld\n", (int)o, tok, (int)r, (long long)v);
  }
  CHECK(bad == 0, "%lld integer scans differ from strtoll", (long long)bad);
}

/* Tokens that end right at a guard page: the 8-byte loads stop at lim. */
static void test_scanner_bounds(void) {
  long pg = sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    CHECK(0, "mmap: %s", strerror(errno));
    return;
  }
  mprotect(m + pg, (size_t)pg, PROT_NONE);
  static const char *toks[] = {
      "1\n", "12345678\n", "123456789012345\n", "0.1234567890123456\n",
      "-1.5e-300\n", "7\n", "98765432109876543\n", "1e22\n"};
  for (size_t t = 0; t < sizeof toks / sizeof toks[0]; t++) {
    size_t n = strlen(toks[t]);
    char *p = m + pg - n, *lim = m + pg;
    const char *end = NULL;
    memcpy(p, toks[t], n);
    double v = 0, ref = strtod(toks[t], NULL);
    int64_t iv = 0;
    mm_scan r = mm_scan_real_fast(p, lim, &end, &v);
    CHECK(r == MM_SCAN_OK && v == ref && end == lim - 1, "bounded real '%s': %d %.17g", toks[t],
          (int)r, v);
    if (!strpbrk(toks[t], ".e-")) {
      r = mm_scan_int64_fast(p, lim, &end, &iv);
      CHECK(r == MM_SCAN_OK && iv == strtoll(toks[t], NULL, 10), "bounded int '%s'", toks[t]);
    }
  }
  munmap(m, (size_t)pg * 2);
}

/* ---- the same matrix for any thread count ---- */

/* Reads path with 1 thread (automatic parts) and with 2, 3, 4 threads and
 * parts of a few KiB; all must give the same matrix (and header), which is
 * returned in *ref (NULL if the file did not read). */
static void check_threads(const char *path, const char *name, sc_csr **ref) {
  static const size_t chunks[] = {0, 3000, 16384, 65536};
  mm_header h0, h;
  shiro_error err = {{0}};
  sc_csr *A = NULL;
  *ref = NULL;
  shiro_status st = read_with(path, 1, 0, &A, &h0, &err);
  CHECK(st == SHIRO_OK, "%s: 1 thread: %d (%s)", name, (int)st, err.message);
  if (st != SHIRO_OK) return;
  for (int T = 2; T <= 4; T++) {
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
      sc_csr *B = NULL;
      st = read_with(path, T, chunks[c], &B, &h, &err);
      CHECK(st == SHIRO_OK && same_csr(A, B) && memcmp(&h, &h0, sizeof h) == 0,
            "%s: %d threads, parts of %zu bytes: status %d (%s), not the 1-thread matrix", name, T,
            chunks[c], (int)st, st ? err.message : "");
      sc_csr_free(B);
    }
  }
  *ref = A;
}

/* Unpacks the gzip file src into dst; 0 on success. */
static int gunzip(const char *src, const char *dst) {
  gzFile g = gzopen(src, "rb");
  FILE *f = fopen(dst, "wb");
  char buf[1 << 16];
  int n, rc = 0;
  if (!g || !f) rc = -1;
  while (rc == 0 && (n = gzread(g, buf, sizeof buf)) > 0)
    if (fwrite(buf, 1, (size_t)n, f) != (size_t)n) rc = -1;
  if (g) gzclose(g);
  if (f && fclose(f) != 0) rc = -1;
  return rc;
}

/* Every matrix of dir/MANIFEST.tsv (the manifest and each matrix must be
 * there): threads agree; a gzip file unpacked (mapped, parallel) gives the
 * same matrix as the gzip stream (sequential). Returns how many. */
static int test_manifest(const char *dir) {
  char line[4096], path[4096];
  int n = 0;
  snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    CHECK(0, "%s: cannot open (%s)", path, strerror(errno));
    return 0;
  }
  while (fgets(line, sizeof line, f)) {
    char plain[512];
    char *name = strtok(line, "\t\n");
    sc_csr *A = NULL, *B = NULL;
    if (!name || !strcmp(name, "file")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, R_OK) != 0) {
      CHECK(0, "%s: listed in %s/MANIFEST.tsv but missing (%s)", path, dir, strerror(errno));
      continue;
    }
    check_threads(path, name, &A);
    size_t len = strlen(name);
    if (A && len > 3 && !strcmp(name + len - 3, ".gz")) {
      tmp_path(plain, sizeof plain, "unpacked.mtx");
      if (gunzip(path, plain) == 0) {
        check_threads(plain, name, &B);
        CHECK(B && same_csr(A, B), "%s: unpacked (mapped) and gzip (streamed) differ", name);
        sc_csr_free(B);
      }
      unlink(plain);
    }
    sc_csr_free(A);
    n++;
  }
  fclose(f);
  CHECK(n > 0, "%s/MANIFEST.tsv lists no matrix", dir);
  return n;
}

/* Generated files: threads agree, grids have their exact shape, and the
 * gzip stream of the same file gives the same matrix. */
static void test_generated(void) {
  struct {
    const char *name;
    gen_spec g;
    int64_t m, nnz; /* expected (-1: not checked) */
  } cases[] = {
      {"rmat-13-pattern", {.kind = GEN_RMAT, .scale = 13, .edge_factor = 8, .seed = 1}, 8192, -1},
      {"rmat-12-real",
       {.kind = GEN_RMAT, .scale = 12, .edge_factor = 16, .seed = 2, .real_values = true},
       4096,
       -1},
      {"rmat-11-unscrambled",
       {.kind = GEN_RMAT, .scale = 11, .edge_factor = 4, .seed = 3, .no_scramble = true},
       2048,
       -1},
      {"grid2d-sym",
       {.kind = GEN_GRID2D, .nx = 300, .ny = 200},
       60000,
       5 * 60000 - 2 * 300 - 2 * 200},
      {"grid2d-gen",
       {.kind = GEN_GRID2D, .nx = 7, .ny = 1000, .general = true},
       7000,
       5 * 7000 - 2 * 7 - 2 * 1000},
      {"grid3d-sym",
       {.kind = GEN_GRID3D, .nx = 30, .ny = 20, .nz = 25},
       15000,
       7 * 15000 - 2 * (20 * 25 + 30 * 25 + 30 * 20)},
      {"grid3d-gen",
       {.kind = GEN_GRID3D, .nx = 9, .ny = 8, .nz = 40, .general = true},
       2880,
       7 * 2880 - 2 * (8 * 40 + 9 * 40 + 9 * 8)},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char path[512], gz[512];
    shiro_error err = {{0}};
    sc_csr *A = NULL, *B = NULL;
    tmp_path(path, sizeof path, "gen.mtx");
    tmp_path(gz, sizeof gz, "gen.mtx.gz");
    FILE *f = fopen(path, "wb");
    shiro_status st = f ? gen_write(&cases[c].g, f, path, 2, &err) : SHIRO_ERR_IO;
    if (f) fclose(f);
    CHECK(st == SHIRO_OK, "%s: generate: %d (%s)", cases[c].name, (int)st, err.message);
    if (st != SHIRO_OK) continue;
    check_threads(path, cases[c].name, &A);
    if (A) {
      CHECK(
          A->m == cases[c].m && A->k == cases[c].m && (cases[c].nnz < 0 || A->nnz == cases[c].nnz),
          "%s: %lld x %lld, nnz %lld; expected %lld x %lld, nnz %lld", cases[c].name,
          (long long)A->m, (long long)A->k, (long long)A->nnz, (long long)cases[c].m,
          (long long)cases[c].m, (long long)cases[c].nnz);
      /* The gzip (sequential) path on the same bytes. */
      FILE *in = fopen(path, "rb");
      gzFile out = gzopen(gz, "wb1");
      char buf[1 << 16];
      size_t n;
      while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) gzwrite(out, buf, (unsigned)n);
      if (in) fclose(in);
      if (out) gzclose(out);
      st = read_with(gz, 1, 0, &B, NULL, &err);
      CHECK(st == SHIRO_OK && same_csr(A, B), "%s: gzip stream differs (%s)", cases[c].name,
            st ? err.message : "");
    }
    sc_csr_free(A);
    sc_csr_free(B);
    unlink(path);
    unlink(gz);
  }
}

/* ---- duplicates in file order ---- */

/* One entry (2,3) written many times, spread over many parts, with values
 * whose sum depends on the order (1e16, 1, -1e16, ...), amid other
 * entries: every thread count gives the file-order sum. Symmetric too. */
static void test_duplicate_order(void) {
  for (int sym = 0; sym < 2; sym++) {
    size_t cap = 1 << 22, o = 0;
    char *t = malloc(cap), path[512];
    int64_t n = 60000, dups = 0;
    double want = 0.0, want_mirror = 0.0;
    if (!t) continue;
    o += (size_t)snprintf(t + o, cap - o,
                          "%%%%MatrixMarket matrix coordinate real %s\n%lld %lld %lld\n",
                          sym ? "symmetric" : "general", 100LL, 100LL, (long long)n);
    for (int64_t e = 0; e < n; e++) {
      static const double vals[] = {1e16, 1.0, -1e16, 3.0, 0.5, 1e-5, -7.25, 2e15};
      if (e % 7 == 3) { /* the duplicated entry, in every part */
        double v = vals[rnd(8)];
        o += (size_t)snprintf(t + o, cap - o, "%d %d %.17g\n", sym ? 3 : 2, sym ? 2 : 3, v);
        want += v;
        dups++;
      } else {
        int64_t i = 4 + rnd(96), j = 4 + rnd(96);
        if (sym && j > i) {
          int64_t s = i;
          i = j;
          j = s;
        }
        o += (size_t)snprintf(t + o, cap - o, "%lld %lld %.17g\n", (long long)i, (long long)j,
                              (double)rnd(1000) / 8);
      }
    }
    want_mirror = want;
    tmp_path(path, sizeof path, "dups.mtx");
    if (write_file(path, t, o, false) == 0) {
      for (int T = 1; T <= 4; T++) {
        for (int c = 0; c < 3; c++) {
          sc_csr *A = NULL;
          shiro_error err = {{0}};
          shiro_status st = read_with(path, T, c == 0 ? 0 : c == 1 ? 2048
                                                                   : 40000,
                                      &A, NULL, &err);
          double got = NAN, got_m = NAN;
          if (st == SHIRO_OK) {
            for (int64_t p = A->Ap[1]; p < A->Ap[2]; p++) /* row 2 (0-based 1) */
              if (A->Aj[p] == 2) got = A->Ax[p];
            if (sym)
              for (int64_t p = A->Ap[2]; p < A->Ap[3]; p++) /* row 3: the mirror */
                if (A->Aj[p] == 1) got_m = A->Ax[p];
          }
          CHECK(st == SHIRO_OK && memcmp(&got, &want, 8) == 0 &&
                    (!sym || memcmp(&got_m, &want_mirror, 8) == 0),
                "duplicates (%s, %d threads, variant %d): %.17g, expected %.17g (%lld copies)",
                sym ? "symmetric" : "general", T, c, got, want, (long long)dups);
          sc_csr_free(A);
        }
      }
    }
    unlink(path);
    free(t);
  }
}

/* ---- parts parsed from copies ---- */

static char *make_text(int64_t n, int64_t entries, size_t *len, int64_t *lines);
static char *replace_line(const char *t, size_t len, int64_t line, const char *repl, size_t *nlen);

/* Mapped parts of many copies' worth (the reader copies a part in pieces
 * of a few hundred KiB and carries the last line over), with a line longer
 * than a piece in the middle (that part is parsed from the mapping
 * instead): the same matrix as the gzip stream, on 1 to 3 threads, with
 * automatic parts and parts of 1 MiB. */
static void test_copies(void) {
  size_t len = 0, nlen = 0, blanks = (size_t)600 << 10;
  int64_t lines = 0;
  char *t = make_text(150000, 150000, &len, &lines), *u = NULL, *longl = malloc(blanks + 32);
  char plain[512], gz[512];
  sc_csr *R = NULL;
  shiro_error err = {{0}};
  if (t && longl) {
    memcpy(longl, "7 8", 3);
    memset(longl + 3, ' ', blanks);
    strcpy(longl + 3 + blanks, "2.5\n");
    u = replace_line(t, len, lines / 2, longl, &nlen);
  }
  tmp_path(plain, sizeof plain, "copies.mtx");
  tmp_path(gz, sizeof gz, "copies.mtx.gz");
  if (!u || write_file(plain, u, nlen, false) || write_file(gz, u, nlen, true)) {
    CHECK(0, "copies: cannot make the file");
    goto done;
  }
  shiro_status st = read_with(gz, 1, 0, &R, NULL, &err);
  CHECK(st == SHIRO_OK && R && R->nnz > 0, "copies (gzip): %d (%s)", (int)st, err.message);
  for (int T = 1; R && T <= 3; T++) {
    for (size_t c = 0; c < 2; c++) {
      sc_csr *A = NULL;
      st = read_with(plain, T, c ? (size_t)1 << 20 : 0, &A, NULL, &err);
      CHECK(st == SHIRO_OK && same_csr(A, R), "copies: %d threads, parts %s: %d (%s), not the gzip matrix",
            T, c ? "of 1 MiB" : "automatic", (int)st, st ? err.message : "");
      sc_csr_free(A);
    }
  }
done:
  sc_csr_free(R);
  unlink(plain);
  unlink(gz);
  free(longl);
  free(u);
  free(t);
}

/* ---- errors in later parts ---- */

/* A valid real general file of n entries with blank lines, CRLF and
 * comment-free lines of varied blanks; *lines gets its line count. */
static char *make_text(int64_t n, int64_t entries, size_t *len, int64_t *lines) {
  size_t cap = 256 + (size_t)n * 64, o = 0;
  char *t = malloc(cap);
  int64_t l = 2;
  if (!t) return NULL;
  o += (size_t)snprintf(t + o, cap - o,
                        "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", 1000LL,
                        1000LL, (long long)entries);
  for (int64_t e = 0; e < n; e++) {
    if (e % 997 == 5) o += (size_t)snprintf(t + o, cap - o, "\n"), l++;
    if (e % 1301 == 7) o += (size_t)snprintf(t + o, cap - o, "  \t \r\n"), l++;
    o += (size_t)snprintf(t + o, cap - o, "%s%lld %lld %.6g%s", e % 5 == 0 ? " " : "",
                          (long long)(e % 1000 + 1), (long long)(e * 7 % 1000 + 1), e * 0.25,
                          e % 3 == 0 ? "\r\n" : "\n");
    l++;
  }
  *len = o;
  *lines = l;
  return t;
}

/* Offset of the start of line `line` (1-based) in t. */
static size_t line_start(const char *t, size_t len, int64_t line) {
  size_t o = 0;
  for (int64_t l = 1; l < line && o < len; o++)
    if (t[o] == '\n') l++;
  return o;
}

/* Replaces line `line` of the text with `repl` (which ends in '\n'). */
static char *replace_line(const char *t, size_t len, int64_t line, const char *repl, size_t *nlen) {
  size_t a = line_start(t, len, line), b = a, r = strlen(repl);
  while (b < len && t[b] != '\n') b++;
  b++;
  char *u = malloc(len - (b - a) + r + 1);
  if (!u) return NULL;
  memcpy(u, t, a);
  memcpy(u + a, repl, r);
  memcpy(u + a + r, t + b, len - b);
  *nlen = len - (b - a) + r;
  return u;
}

/* Reads text mapped in parallel (several thread counts and part sizes) and
 * as a gzip stream (sequential): the status and the message after the path
 * must be the same everywhere, and the message must contain `needle`. */
static void check_error(const char *name, const char *text, size_t len, const char *needle) {
  char plain[512], gz[512], ref[512] = "";
  shiro_status ref_st = SHIRO_OK;
  tmp_path(plain, sizeof plain, "err.mtx");
  tmp_path(gz, sizeof gz, "err.mtx.gz");
  if (write_file(plain, text, len, false) || write_file(gz, text, len, true)) {
    CHECK(0, "%s: cannot write", name);
    return;
  }
  {
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    ref_st = read_with(gz, 1, 0, &A, NULL, &err);
    snprintf(ref, sizeof ref, "%s", after_path(err.message, gz));
    CHECK(ref_st != SHIRO_OK && strstr(ref, needle),
          "%s (gzip): status %d, message '%s' lacks '%s'", name, (int)ref_st, ref, needle);
    sc_csr_free(A);
  }
  static const size_t chunks[] = {0, 1000, 4096, 100000};
  for (int T = 1; T <= 4; T++) {
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
      sc_csr *A = (sc_csr *)plain; /* must be set to NULL */
      shiro_error err = {{0}};
      shiro_status st = read_with(plain, T, chunks[c], &A, NULL, &err);
      CHECK(st == ref_st && A == NULL && !strcmp(after_path(err.message, plain), ref),
            "%s (%d threads, parts of %zu): status %d, '%s'; the sequential reader says %d, '%s'",
            name, T, chunks[c], (int)st, after_path(err.message, plain), (int)ref_st, ref);
    }
  }
  unlink(plain);
  unlink(gz);
}

static void test_errors(void) {
  size_t len = 0, nlen = 0;
  int64_t n = 40000, lines = 0;
  char *t = make_text(n, n, &len, &lines), *u, *v, needle[128];
  if (!t) return;
  {
    sc_csr *A = NULL;
    char path[512];
    shiro_error err = {{0}};
    tmp_path(path, sizeof path, "valid.mtx");
    write_file(path, t, len, false);
    CHECK(read_with(path, 3, 2000, &A, NULL, &err) == SHIRO_OK && A && A->m == 1000,
          "the valid base text reads (%s)", err.message);
    sc_csr_free(A);
    unlink(path);
  }
  /* One bad line, late in the file (many parts before it). */
  static const struct {
    const char *name, *line, *needle;
  } bad[] = {
      {"row out of range", "1001 5 1.0\n",
       "row index out of range (expected 1..1000, found '1001')"},
      {"bad value", "5 5 1.0x\n", "expected real value, found '1.0x'"},
      {"missing column", "5\n", "expected column index, found end of line"},
      {"trailing garbage", "5 5 1 2\n", "trailing garbage on the entry line"},
      {"comment among entries", "% late\n", "expected row index, found '%'"},
      {"value overflow", "5 5 1e999\n", "real value overflows double"},
      {"lone CR", "5 5 1\r5\n", "trailing garbage on the entry line"},
  };
  int64_t at[] = {lines - 3, lines / 2 + 1, 10};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
      char name[128];
      if (!(u = replace_line(t, len, at[a], bad[b].line, &nlen))) continue;
      snprintf(needle, sizeof needle, ":%lld: %s", (long long)at[a], bad[b].needle);
      snprintf(name, sizeof name, "%s at line %lld", bad[b].name, (long long)at[a]);
      check_error(name, u, nlen, needle);
      free(u);
    }
  }
  /* Two bad lines in different parts: the first one is reported. */
  if ((u = replace_line(t, len, lines - 10, "0 1 1\n", &nlen)) != NULL) {
    if ((v = replace_line(u, nlen, lines / 3, "1 0 1\n", &nlen)) != NULL) {
      snprintf(needle, sizeof needle, ":%lld: column index out of range", (long long)(lines / 3));
      check_error("two errors", v, nlen, needle);
      free(v);
    }
    free(u);
  }
  /* More entries than the size line says: the overflow is in a late part. */
  {
    char *w = strdup(t);
    const char *nl;
    if (w) {
      /* size line "1000 1000 N" -> "1000 1000 M", M = n - 100 (same width or less) */
      char *s = strchr(w, '\n') + 1;
      nl = strchr(s, '\n');
      char sz[64];
      int k = snprintf(sz, sizeof sz, "1000 1000 %lld", (long long)(n - 100));
      memset(s, ' ', (size_t)(nl - s));
      memcpy(s, sz, (size_t)k);
      snprintf(needle, sizeof needle, "more entries than the size line says (expected %lld",
               (long long)(n - 100));
      check_error("more entries", w, len, needle);
      free(w);
    }
  }
  /* More entries, and the line one too many is also malformed: the count
   * is checked before the line is parsed, so "more entries" it is, in
   * whichever part the line falls (fuzzing found this one). */
  {
    char *w = strdup(t);
    if (w) {
      char *s = strchr(w, '\n') + 1, *nl = strchr(s, '\n'), sz[64];
      int64_t keep = n - 1 - (n - 1) % 97, over = lines; /* size line: keep entries */
      int k = snprintf(sz, sizeof sz, "1000 1000 %lld", (long long)keep);
      memset(s, ' ', (size_t)(nl - s));
      memcpy(s, sz, (size_t)k);
      /* the line of entry keep+1: find it (blank lines do not count) */
      for (int64_t l = 3, e = 0; l <= lines; l++) {
        const char *ls = w + line_start(w, len, l);
        while (*ls == ' ' || *ls == '\t') ls++;
        if (*ls == '\n' || (*ls == '\r' && ls[1] == '\n')) continue;
        if (++e == keep + 1) {
          over = l;
          break;
        }
      }
      if ((u = replace_line(w, len, over, "5 5 1 x\n", &nlen)) != NULL) {
        snprintf(needle, sizeof needle, ":%lld: more entries than the size line says (expected %lld, found '5')",
                 (long long)over, (long long)keep);
        check_error("more entries on a malformed line", u, nlen, needle);
        free(u);
      }
      free(w);
    }
  }
  {
    static const char small[] =
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 3\n2 2 4 x\n";
    check_error("more entries on a malformed line (small)", small, sizeof small - 1,
                ":4: more entries than the size line says (expected 1, found '2')");
  }
  /* Fewer entries: the file ends early (no final newline either). */
  {
    size_t cut = line_start(t, len, lines - 20) - 1; /* drop the last 21 lines and the '\n' */
    snprintf(needle, sizeof needle, ":%lld: unexpected end of file: fewer entries",
             (long long)(lines - 20));
    check_error("fewer entries", t, cut, needle);
  }
  /* A line too long, late in the file (and one in the middle of a part). */
  {
    size_t big = (4u << 20) + 10, a = line_start(t, len, lines - 5);
    char *w = malloc(len + big + 2);
    if (w) {
      memcpy(w, t, a);
      memset(w + a, ' ', big);
      w[a + big] = '\n';
      memcpy(w + a + big + 1, t + a, len - a);
      snprintf(needle, sizeof needle, ":%lld: line too long", (long long)(lines - 5));
      check_error("line too long", w, len + big + 1, needle);
      /* and the file's unterminated last line too long */
      memcpy(w, t, len);
      memset(w + len, '7', big);
      snprintf(needle, sizeof needle, ":%lld: line too long", (long long)(lines + 1));
      check_error("last line too long", w, len + big, needle);
      free(w);
    }
  }
  /* Skew-symmetric: a diagonal entry late in the file. */
  {
    size_t cap = 64 + (size_t)n * 32, o = 0;
    char *w = malloc(cap);
    if (w) {
      o += (size_t)snprintf(
          w + o, cap - o,
          "%%%%MatrixMarket matrix coordinate integer skew-symmetric\n500 500 %lld\n",
          (long long)n);
      for (int64_t e = 0; e < n; e++)
        o += (size_t)snprintf(w + o, cap - o, "%lld %lld %lld\n", (long long)(e % 499 + 2),
                              (long long)(e == n - 50 ? e % 499 + 2 : 1), (long long)e);
      snprintf(needle, sizeof needle, ":%lld: diagonal entry in a skew-symmetric matrix",
               (long long)(n - 50 + 3));
      check_error("skew diagonal", w, o, needle);
      free(w);
    }
  }
  free(t);
}

/* Matrices with empty rows, empty buckets, no columns: read in parts.
 * Under a 2 GiB address-space limit (not with ASan, whose shadow memory
 * needs more), so that a reservation out of proportion to the input (the
 * row counters of a bucket once took 4 GiB for a tall, nearly empty
 * matrix) fails here instead of passing unnoticed. */
static void test_degenerate(void) {
#ifndef __SANITIZE_ADDRESS__
  struct rlimit old, lim;
  bool limited = getrlimit(RLIMIT_AS, &old) == 0 && old.rlim_cur == RLIM_INFINITY;
  lim = old;
  lim.rlim_cur = (rlim_t)2 << 30;
  if (limited) limited = setrlimit(RLIMIT_AS, &lim) == 0;
#endif
  static const char *texts[] = {
      "%%MatrixMarket matrix coordinate real general\n1 0 0\n",
      "%%MatrixMarket matrix coordinate real general\n0 5 0\n",
      "%%MatrixMarket matrix coordinate pattern general\n100000 3 2\n1 1\n100000 3\n",
      "%%MatrixMarket matrix coordinate real symmetric\n70000 70000 1\n70000 1 2.5\n",
  };
  for (size_t c = 0; c < sizeof texts / sizeof texts[0]; c++) {
    char path[512], name[32];
    sc_csr *A = NULL;
    tmp_path(path, sizeof path, "degenerate.mtx");
    snprintf(name, sizeof name, "degenerate %zu", c);
    if (write_file(path, texts[c], strlen(texts[c]), false) == 0) {
      check_threads(path, name, &A);
      CHECK(A != NULL, "%s: not read", name);
    }
    sc_csr_free(A);
    unlink(path);
  }
#ifndef __SANITIZE_ADDRESS__
  if (limited) setrlimit(RLIMIT_AS, &old);
#endif
}

/* Small valid files, mangled at random (bytes replaced, removed, lines
 * doubled, the count changed), read as a gzip stream, in one part, and in
 * parts of 1 to 64 bytes on 3 threads: the same status, message and matrix. */
static void test_random_mangled(void) {
  static const char *fields[] = {"real", "integer", "pattern"};
  static const char *syms[] = {"general", "symmetric", "skew-symmetric"};
  static const char alphabet[] = "0123456789 \t\r\n.-+eEx%";
  char text[4096], path[512], gz[512];
  int64_t bad = 0, trials = 0;
  tmp_path(path, sizeof path, "mangled.mtx");
  tmp_path(gz, sizeof gz, "mangled.mtx.gz");
  for (int trial = 0; trial < 3000; trial++) {
    int f = (int)rnd(3), y = (int)rnd(3);
    int64_t m = 1 + rnd(6), k = y ? m : 1 + rnd(6), ne = rnd(12);
    size_t o = 0;
    o += (size_t)snprintf(text + o, sizeof text - o, "%%%%MatrixMarket matrix coordinate %s %s\n%s%lld %lld %lld\n",
                          fields[f], syms[y], rnd(3) ? "" : "% c\n", (long long)m, (long long)k,
                          (long long)(ne + (rnd(4) == 0 ? rnd(3) - 1 : 0)));
    for (int64_t e = 0; e < ne && o < sizeof text - 128; e++) {
      int64_t i = 1 + rnd(m), j = 1 + rnd(k);
      if (y == 2 && i == j) i = i % m + 1;
      if (rnd(6) == 0) o += (size_t)snprintf(text + o, sizeof text - o, rnd(2) ? "\n" : " \r\n");
      o += (size_t)snprintf(text + o, sizeof text - o, "%lld %lld", (long long)i, (long long)j);
      if (f == 0) o += (size_t)snprintf(text + o, sizeof text - o, " %.*g", 1 + (int)rnd(17), (double)rng() / 1e15);
      if (f == 1) o += (size_t)snprintf(text + o, sizeof text - o, " %lld", (long long)rnd(100) - 50);
      o += (size_t)snprintf(text + o, sizeof text - o, rnd(5) ? "\n" : "\r\n");
    }
    for (int mut = (int)rnd(4); mut > 0 && o > 2; mut--) {
      size_t at = (size_t)rnd((int64_t)o);
      switch (rnd(3)) {
        case 0: text[at] = alphabet[rnd(sizeof alphabet - 1)]; break;
        case 1: memmove(text + at, text + at + 1, o - at - 1), o--; break;
        default: { /* double the line holding byte at */
          size_t a = at, b = at;
          while (a > 0 && text[a - 1] != '\n') a--;
          while (b < o && text[b] != '\n') b++;
          if (b < o && o + (b + 1 - a) < sizeof text) {
            memmove(text + b + 1 + (b + 1 - a), text + b + 1, o - b - 1);
            memcpy(text + b + 1, text + a, b + 1 - a);
            o += b + 1 - a;
          }
        }
      }
    }
    if (rnd(8) == 0 && o > 0 && text[o - 1] == '\n') o--; /* no final newline */
    if (write_file(path, text, o, false) || write_file(gz, text, o, true)) continue;
    sc_csr *R = NULL, *A = NULL, *B = NULL;
    shiro_error e0 = {{0}}, e1 = {{0}}, e2 = {{0}};
    shiro_status s0 = read_with(gz, 1, 0, &R, NULL, &e0);
    shiro_status s1 = read_with(path, 1, 0, &A, NULL, &e1);
    shiro_status s2 = read_with(path, 3, (size_t)(1 + rnd(64)), &B, NULL, &e2);
    bool same = s0 == s1 && s1 == s2 &&
        (s0 == SHIRO_OK ? same_csr(R, A) && same_csr(R, B)
                        : !strcmp(after_path(e0.message, gz), after_path(e1.message, path)) &&
                 !strcmp(after_path(e1.message, path), after_path(e2.message, path)));
    trials++;
    if (!same && bad++ < 3)
      printf("mangled trial %d disagrees:\n  gzip: %d %s\n  one part: %d %s\n  parts: %d %s\n---\n%.*s\n---\n",
             trial, (int)s0, e0.message, (int)s1, e1.message, (int)s2, e2.message, (int)o, text);
    sc_csr_free(R), sc_csr_free(A), sc_csr_free(B);
  }
  CHECK(bad == 0, "%lld of %lld mangled files read differently in parts", (long long)bad, (long long)trials);
  unlink(path);
  unlink(gz);
}

/* ---- the builder alone ---- */

/* A reference builder: every entry (mirrored copies at their triplet's
 * place) sorted by (row, column, place), then equal coordinates summed in
 * that order. Brute force, no shared code. */
typedef struct ref_entry {
  int64_t i, j, place;
  double v;
} ref_entry;

static int ref_cmp(const void *a, const void *b) {
  const ref_entry *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  if (x->j != y->j) return x->j < y->j ? -1 : 1;
  return x->place < y->place ? -1 : x->place > y->place;
}

static sc_csr *ref_build(int64_t m, int64_t k, int64_t n, const int64_t *Ti, const int64_t *Tj,
                         const double *Tx, sc_coo_mirror mir) {
  ref_entry *e = malloc((size_t)(2 * n + 1) * sizeof *e);
  sc_csr *A = calloc(1, sizeof *A);
  int64_t ne = 0, w = 0;
  if (!e || !A) return NULL;
  for (int64_t t = 0; t < n; t++) {
    double v = Tx ? Tx[t] : 1.0;
    e[ne++] = (ref_entry){Ti[t], Tj[t], 2 * t, v};
    if (mir != SC_COO_AS_IS && Ti[t] != Tj[t])
      e[ne++] = (ref_entry){Tj[t], Ti[t], 2 * t + 1, mir == SC_COO_SKEW ? -v : v};
  }
  qsort(e, (size_t)ne, sizeof *e, ref_cmp);
  A->m = m, A->k = k;
  A->Ap = calloc((size_t)m + 1, sizeof *A->Ap);
  A->Aj = malloc((size_t)(ne + 1) * sizeof *A->Aj);
  A->Ax = malloc((size_t)(ne + 1) * sizeof *A->Ax);
  for (int64_t p = 0; p < ne; p++) {
    if (w > 0 && p > 0 && e[p].i == e[p - 1].i && e[p].j == e[p - 1].j) {
      A->Ax[w - 1] += e[p].v;
    } else {
      A->Aj[w] = e[p].j;
      A->Ax[w++] = e[p].v;
      A->Ap[e[p].i + 1]++;
    }
  }
  for (int64_t i = 0; i < m; i++) A->Ap[i + 1] += A->Ap[i];
  A->nnz = w;
  free(e);
  return A;
}

/* Random triplets with many duplicates, split into runs at random, 32- or
 * 64-bit, built with 1..4 threads: always the reference matrix, as is
 * sc_csr_from_coo's. */
static void test_builder(void) {
  for (int trial = 0; trial < 60; trial++) {
    int64_t m = 1 + rnd(trial % 3 == 0 ? 5 : 3000), k = trial % 2 ? m : 1 + rnd(3000);
    int64_t n = rnd(trial % 5 == 0 ? 10 : 200000);
    sc_coo_mirror mir = (sc_coo_mirror)(m == k ? rnd(3) : 0);
    int64_t *Ti = malloc((size_t)(n + 1) * 8), *Tj = malloc((size_t)(n + 1) * 8);
    int32_t *Ti32 = malloc((size_t)(n + 1) * 4), *Tj32 = malloc((size_t)(n + 1) * 4);
    double *Tx = malloc((size_t)(n + 1) * 8);
    sc_coo_seg segs[8];
    sc_csr *R = NULL;
    shiro_error err = {{0}};
    if (!Ti || !Tj || !Ti32 || !Tj32 || !Tx) goto next;
    for (int64_t t = 0; t < n; t++) {
      Ti[t] = rnd(m), Tj[t] = rnd(k);
      if (rnd(3) == 0) Ti[t] = rnd(1 + m / 50), Tj[t] = rnd(1 + k / 50); /* dense corner */
      if (mir == SC_COO_SKEW && Ti[t] == Tj[t]) Tj[t] = (Tj[t] + 1) % k;
      if (mir == SC_COO_SKEW && Ti[t] == Tj[t]) Ti[t] = Tj[t] = 0, Tj[t] = k > 1;
      Ti32[t] = (int32_t)Ti[t], Tj32[t] = (int32_t)Tj[t];
      Tx[t] = rnd(4) ? (double)(rnd(2001) - 1000) / 16 : (double)rng() / 1e3;
    }
    R = ref_build(m, k, n, Ti, Tj, trial % 4 ? Tx : NULL, mir);
    if (!R) goto next;
    {
      sc_csr *A = NULL;
      shiro_status st = sc_csr_from_coo(m, k, n, Ti, Tj, trial % 4 ? Tx : NULL, mir, &A, &err);
      CHECK(st == SHIRO_OK && same_csr(A, R), "builder trial %d: sc_csr_from_coo: %d (%s)", trial,
            (int)st, st ? err.message : "not the reference matrix");
      sc_csr_free(A);
    }
    for (int T = 1; T <= 4; T++) {
      int ns = 1 + (int)rnd(8);
      int64_t cut[9];
      cut[0] = 0;
      cut[ns] = n;
      for (int s = 1; s < ns; s++) cut[s] = rnd(n + 1);
      for (int s = 1; s < ns; s++) /* sort the cuts */
        for (int u = s; u > 1 && cut[u - 1] > cut[u]; u--) {
          int64_t x = cut[u];
          cut[u] = cut[u - 1];
          cut[u - 1] = x;
        }
      bool w32 = rnd(2);
      for (int s = 0; s < ns; s++) {
        int64_t a = cut[s], len = cut[s + 1] - cut[s];
        segs[s] = (sc_coo_seg){len,
                               w32 ? NULL : Ti + a,
                               w32 ? NULL : Tj + a,
                               w32 ? Ti32 + a : NULL,
                               w32 ? Tj32 + a : NULL,
                               trial % 4 ? Tx + a : NULL};
      }
      sc_csr *A = NULL;
      shiro_status st = sc_csr_from_coo_segs(m, k, ns, segs, mir, T, &A, &err);
      CHECK(st == SHIRO_OK && same_csr(A, R),
            "builder trial %d (%lld x %lld, n %lld, mirror %d): %d threads, %d runs, %s indices: "
            "status %d (%s), not the reference matrix",
            trial, (long long)m, (long long)k, (long long)n, (int)mir, T, ns,
            w32 ? "32-bit" : "64-bit", (int)st, st ? err.message : "");
      sc_csr_free(A);
    }
    /* An index out of range in a late run: the first bad triplet is named. */
    if (n > 10) {
      int64_t b1 = n - 3, b2 = n / 2;
      Tj[b1] = k;
      Ti[b2] = -1;
      sc_coo_seg two[2] = {{n / 3, Ti, Tj, NULL, NULL, Tx},
                           {n - n / 3, Ti + n / 3, Tj + n / 3, NULL, NULL, Tx + n / 3}};
      sc_csr *A = (sc_csr *)Ti;
      char want[64];
      snprintf(want, sizeof want, "triplet %lld is", (long long)b2);
      shiro_status st = sc_csr_from_coo_segs(m, k, 2, two, mir, 3, &A, &err);
      CHECK(st == SHIRO_ERR_ARG && A == NULL && strstr(err.message, want),
            "builder trial %d: bad triplets: %d (%s)", trial, (int)st, err.message);
    }
  next:
    sc_csr_free(R);
    free(Ti), free(Tj), free(Ti32), free(Tj32), free(Tx);
  }
}

int main(int argc, char **argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: test_mm_parallel [SHARED_MATRICES_DIR]\n");
    return 1;
  }
  if (argc == 2 && access(argv[1], F_OK) != 0) {
    fprintf(stderr, "SKIP: the shared matrix set %s is absent (%s): its matrices are not read\n", argv[1],
            strerror(errno));
    return 77;
  }
  rng_seed(0x243f6a8885a308d3u);
  if (tmpdir_make("shiro_mmp")) return 1;
  if (argc == 2) {
    int n = test_manifest(argv[1]);
    rmdir(tmpdir);
    printf("%d matrices of %s, %d checks, %d failures\n", n, argv[1], checks, failures);
    return failures ? 1 : 0;
  }
  test_real_scanner();
  test_int_scanner();
  test_scanner_bounds();
  test_builder();
  test_degenerate();
  test_random_mangled();
  test_duplicate_order();
  test_errors();
  test_copies();
  test_generated();
  int nshipped = test_manifest("data");
  rmdir(tmpdir);
  printf("%d shipped matrices (tests/data), %d checks, %d failures\n", nshipped, checks, failures);
  return failures ? 1 : 0;
}
