/* test_read_part.c — reading one part of a matrix file, as each process of
 * a distributed planner does: mm_read_part (Matrix Market and edge lists by
 * byte ranges) and csr_h5_read_rows (HDF5 CSR by rows).
 *   * the parts' triplets, concatenated in part order and built, are mm_read's
 *     matrix bit for bit, for nparts 1, 2, 3, 5, 7 and 40 (empty parts), on
 *     tests/data and generated files (blank lines, CRLF, no last '\n',
 *     skew-symmetric, integer, edge lists with comments, values, base 1);
 *   * a bad line anywhere gives mm_read's message, absolute line and all,
 *     from whichever part holds it, and no other part fails; the entry
 *     count is checked once the parts are summed; gzip is refused;
 *   * csr_h5_read_rows of several ranges (empty ones, [0, m)) are the rows
 *     of csr_h5_read's matrix, bit for bit; its errors name the global
 *     element, and ranges without the bad element read.
 *   test_read_part        (workdir tests/) the cases above
 *   test_read_part DIR    the plain .mtx of the shared set DIR and two of its
 *                         .gz decompressed; 77 (skipped) if DIR is absent
 * Returns 0, or prints each failure and returns 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csr.h"
#include "csr_h5.h"
#include "mm_read.h"
#include "mm_test_files.h"

static const int NPARTS[] = {1, 2, 3, 5, 7, 40};
#define N_NPARTS ((int)(sizeof NPARTS / sizeof NPARTS[0]))

/* True if rows [lo, lo + B->m) of A are B, bit for bit (B->k == A->k too). */
static bool same_rows(const sc_csr *A, int64_t lo, const sc_csr *B) {
  int64_t base = A->Ap[lo], n = B->m;
  if (A->k != B->k || lo + n > A->m || B->nnz != A->Ap[lo + n] - base) return false;
  for (int64_t i = 0; i <= n; i++)
    if (B->Ap[i] != A->Ap[lo + i] - base) return false;
  if (B->nnz && memcmp(B->Aj, A->Aj + base, (size_t)B->nnz * sizeof *B->Aj)) return false;
  return !B->nnz || !memcmp(B->Ax, A->Ax + base, (size_t)B->nnz * sizeof *B->Ax);
}

/* Reads path in nparts parts, finishes the header as a distributed caller
 * would, and builds the matrix from the concatenated triplets into *out.
 * Returns SHIRO_OK, or the first failing part's status (its message in
 * err); *bad gets the number of parts that failed, *most the most entry
 * lines a part held. */
static shiro_status read_in_parts(const char *path, const mm_read_options *o, int nparts, sc_csr **out,
                                  mm_header *h, int *bad, int64_t *most, shiro_error *err) {
  mm_coo_part *P = calloc((size_t)nparts, sizeof *P);
  sc_coo_seg *segs = calloc((size_t)nparts, sizeof *segs);
  int64_t entries = 0, lines = 0, mi = -1, mj = -1;
  shiro_status first = SHIRO_OK;
  *out = NULL;
  *bad = 0;
  *most = 0;
  for (int u = 0; u < nparts; u++) {
    shiro_error e = {{0}};
    shiro_status st = mm_read_part(path, o, u, nparts, &P[u], &e);
    if (st != SHIRO_OK) {
      if (first == SHIRO_OK) first = st, *err = e;
      ++*bad;
      continue;
    }
    entries += P[u].entries, lines += P[u].lines;
    *most = P[u].entries > *most ? P[u].entries : *most;
    mi = P[u].max_i > mi ? P[u].max_i : mi, mj = P[u].max_j > mj ? P[u].max_j : mj;
    segs[u] = (sc_coo_seg){P[u].n, P[u].Ti, P[u].Tj, NULL, NULL, P[u].Tx};
  }
  for (int u = 0; first == SHIRO_OK && u < nparts; u++) {
    first = mm_read_parts_finish(path, o, &P[u], entries, lines, mi, mj, err);
    CHECK(!memcmp(&P[u].h, &P[0].h, sizeof P[0].h) && P[u].first_line == P[0].first_line,
          "%s: part %d's header differs from part 0's", path, u);
  }
  if (first == SHIRO_OK) {
    *h = P[0].h;
    first = sc_csr_from_coo_segs(h->m, h->k, nparts, segs, SC_COO_AS_IS, 1, out, err);
  }
  for (int u = 0; u < nparts; u++) mm_coo_part_free(&P[u]);
  free(P);
  free(segs);
  return first;
}

/* path in every number of parts gives mm_read_ex's matrix and header, and
 * (where its lines are of about equal length: `even`) the parts about
 * equal shares of the entries. */
static void check_parts(const char *path, const mm_read_options *o, bool even) {
  sc_csr *A = NULL;
  mm_header ha = {0};
  shiro_error err = {{0}};
  if (mm_read_ex(path, o, &A, &ha, &err) != SHIRO_OK) {
    CHECK(false, "%s: mm_read_ex: %s", path, err.message);
    return;
  }
  for (int c = 0; c < N_NPARTS; c++) {
    sc_csr *B = NULL;
    mm_header hb = {0};
    int bad = 0;
    int64_t most = 0, n = NPARTS[c];
    shiro_status st = read_in_parts(path, o, NPARTS[c], &B, &hb, &bad, &most, &err);
    CHECK(st == SHIRO_OK, "%s in %d parts: %s", path, NPARTS[c], err.message);
    CHECK(st != SHIRO_OK || (B->m == A->m && same_rows(A, 0, B)), "%s in %d parts: not mm_read's matrix", path,
          NPARTS[c]);
    CHECK(st != SHIRO_OK || !memcmp(&ha, &hb, sizeof ha), "%s in %d parts: header differs from mm_read's", path,
          NPARTS[c]);
    CHECK(st != SHIRO_OK || !even || hb.entries < 100 * n || most * n <= 2 * hb.entries,
          "%s in %d parts: a part holds %lld of %lld entries (expected shares of about equal bytes)", path, NPARTS[c],
          (long long)most, (long long)hb.entries);
    sc_csr_free(B);
  }
  sc_csr_free(A);
}

/* A generated file's text, grown with add(). */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void add(text *T, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *T, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (T->n + (size_t)w + 1 > T->cap) {
    T->cap = (T->n + (size_t)w + 1) * 2;
    T->s = realloc(T->s, T->cap);
  }
  va_start(ap, fmt);
  vsnprintf(T->s + T->n, (size_t)w + 1, fmt, ap);
  va_end(ap);
  T->n += (size_t)w;
}

/* A random Matrix Market file of n entries: field/symmetry as given, with
 * blank lines, CRLF ends and padding mixed in, the last '\n' dropped if
 * `cut`; line `bad` (1-based, 0: none) replaced by a bad entry. */
static text make_mtx(const char *field, const char *sym, int64_t m, int64_t n, bool cut, int64_t bad) {
  text T = {0};
  bool skew = !strcmp(sym, "skew-symmetric"), mir = strcmp(sym, "general") != 0;
  int64_t line = 3;
  add(&T, "%%%%MatrixMarket matrix coordinate %s %s\n%% a comment\n%lld %lld %lld\n", field, sym, (long long)m,
      (long long)m, (long long)n);
  for (int64_t t = 0; t < n; t++, line++) {
    int64_t i = rnd(m) + 1, j = rnd(m) + 1;
    if (mir && j > i) {
      int64_t s = i;
      i = j, j = s;
    }
    if (skew && i == j) j = i == 1 ? 2 : i - 1;
    if (rnd(9) == 0 && line + 1 != bad) add(&T, rnd(2) ? "\n" : "  \r\n"), line++;
    if (line + 1 == bad) add(&T, "%lld x 1\n", (long long)i);
    else if (!strcmp(field, "pattern")) add(&T, "%lld %lld%s", (long long)i, (long long)j, rnd(5) ? "\n" : " \r\n");
    else if (!strcmp(field, "integer")) add(&T, "%lld  %lld %lld\n", (long long)i, (long long)j, (long long)rnd(99) - 49);
    else add(&T, "%lld %lld %.17g\n", (long long)i, (long long)j, (double)(rnd(2000001) - 1000000) / 1024.0);
  }
  if (cut && T.n && T.s[T.n - 1] == '\n') T.n--;
  return T;
}

/* A random edge list of n edges (ids from base, below m), with comments. */
static text make_el(int64_t m, int64_t n, int base, bool values, bool cut) {
  text T = {0};
  add(&T, "# a SNAP header\n%% KONECT too\n\n");
  for (int64_t t = 0; t < n; t++) {
    if (rnd(11) == 0) add(&T, rnd(2) ? "# c\n" : "\n");
    int64_t u = rnd(m) + base, v = rnd(m) + base;
    if (values) add(&T, "%lld\t%lld %.17g\n", (long long)u, (long long)v, (double)rnd(1000) / 8.0);
    else add(&T, "%lld %lld\n", (long long)u, (long long)v);
  }
  if (cut && T.n && T.s[T.n - 1] == '\n') T.n--;
  return T;
}

/* Makes a line of T near its middle `len` bytes longer: `pad` spaces
 * before its '\n' (after a digit), or, pad '#', a comment line of that
 * length inserted before it. Returns T's new length. */
static size_t long_line(text *T, size_t len, char pad) {
  char *e = strchr(T->s + T->n / 2, '\n');
  while (e[-1] < '0' || e[-1] > '9') e = strchr(e + 1, '\n');
  size_t at = (size_t)(e - T->s) + (pad == '#');
  T->s = realloc(T->s, T->n + len + 2);
  memmove(T->s + at + len, T->s + at, T->n - at);
  memset(T->s + at, pad == '#' ? 'c' : ' ', len);
  if (pad == '#') T->s[at] = '#', T->s[at + len - 1] = '\n';
  return T->n + len;
}

static void put(const char *path, text *T) {
  CHECK(write_file(path, T->s ? T->s : "", T->n, false) == 0, "cannot write %s", path);
  free(T->s);
}

static void test_mtx_files(void) {
  static const char *files[] = {"Stranke94.mtx", "bcspwr10.mtx", "bcsstk01.mtx", "ca-GrQc.mtx",
                                "email-Eu-core.mtx", "karate.mtx", "lp_afiro.mtx", "lp_ship04l.mtx",
                                "tech-routers-rf.mtx", "west0067.mtx"};
  char path[512];
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    snprintf(path, sizeof path, "data/%s", files[f]);
    check_parts(path, NULL, true);
  }
  static const struct {
    const char *field, *sym;
    int64_t m, n;
    bool cut;
  } gen[] = {{"real", "general", 50, 3000, false}, {"integer", "symmetric", 40, 2000, true}, {"pattern", "skew-symmetric", 30, 1500, true}, {"real", "skew-symmetric", 60, 2500, false}, {"pattern", "general", 20, 0, false}, {"real", "hermitian", 10, 3, true}};
  tmp_path(path, sizeof path, "g.mtx");
  for (size_t g = 0; g < sizeof gen / sizeof gen[0]; g++) {
    text T = make_mtx(gen[g].field, gen[g].sym, gen[g].m, gen[g].n, gen[g].cut, 0);
    put(path, &T);
    check_parts(path, NULL, true);
  }
  for (int v = 0; v < 4; v++) { /* edge lists: pattern or values, base 0 or 1, size from ids or given */
    mm_read_options o = {.format = MM_FORMAT_EDGELIST, .el_base = v & 1};
    if (v == 3) o.el_rows = 300, o.el_cols = 310;
    text T = make_el(200, 4000, v & 1, v & 2, v & 1);
    put(path, &T);
    check_parts(path, &o, true);
  }
  mm_read_options o = {.format = MM_FORMAT_EDGELIST};
  text L = make_mtx("real", "general", 50, 3000, false, 0); /* lines past a chunk (256 KiB) */
  L.n = long_line(&L, 300000, ' ');
  put(path, &L);
  check_parts(path, NULL, false);
  L = make_el(100, 3000, 0, true, false);
  L.n = long_line(&L, 300000, '#');
  put(path, &L);
  check_parts(path, &o, false);
  text T = make_el(10, 0, 0, false, false); /* comments only: 0 x 0 */
  put(path, &T);
  check_parts(path, &o, true);
  unlink(path);
}

/* A bad line gives mm_read's message from the one part that holds it. */
static void expect_same_error(const char *path, const mm_read_options *o, const char *what, bool header) {
  sc_csr *A = NULL;
  shiro_error want = {{0}}, got = {{0}};
  shiro_status sw = mm_read_ex(path, o, &A, NULL, &want);
  CHECK(sw != SHIRO_OK, "%s: mm_read_ex accepted it", what);
  for (int c = 0; c < N_NPARTS; c++) {
    sc_csr *B = NULL;
    mm_header h;
    int bad = 0;
    int64_t most = 0;
    shiro_status sg = read_in_parts(path, o, NPARTS[c], &B, &h, &bad, &most, &got);
    CHECK(sg == sw && !strcmp(got.message, want.message), "%s in %d parts: '%s' (%d), mm_read: '%s' (%d)", what,
          NPARTS[c], got.message, (int)sg, want.message, (int)sw);
    CHECK(header || bad <= 1, "%s in %d parts: %d parts failed (expected at most the one with the line)", what, NPARTS[c],
          bad);
    sc_csr_free(B);
  }
}

static void test_mtx_errors(void) {
  char path[512], what[128];
  tmp_path(path, sizeof path, "bad.mtx");
  static const int64_t lines[] = {5, 400, 1234, 2001};
  for (size_t b = 0; b < sizeof lines / sizeof lines[0]; b++) {
    text T = make_mtx("real", "general", 50, 2000, false, lines[b]);
    put(path, &T);
    snprintf(what, sizeof what, "bad entry at line %lld", (long long)lines[b]);
    expect_same_error(path, NULL, what, false);
  }
  text T = make_mtx("real", "general", 50, 2000, false, 0); /* the count: fewer, then more entries */
  T.s[T.n - 1] = '\0';
  T.n = (size_t)(strrchr(T.s, '\n') - T.s) + 1;
  put(path, &T);
  expect_same_error(path, NULL, "one entry short", false);
  T = make_mtx("pattern", "symmetric", 50, 2000, true, 0);
  add(&T, "\n3 2\n");
  put(path, &T);
  sc_csr *A = NULL;
  mm_header h;
  int bad = 0;
  int64_t most = 0;
  shiro_error err = {{0}};
  for (int c = 0; c < N_NPARTS; c++)
    CHECK(read_in_parts(path, NULL, NPARTS[c], &A, &h, &bad, &most, &err) == SHIRO_ERR_PARSE &&
              strstr(err.message, "more entries than the size line says (expected 2000, found 2001)"),
          "one entry too many in %d parts: '%s'", NPARTS[c], err.message);
  T = (text){0};
  add(&T, "%%%%MatrixMarket matrix coordinate real general\n");
  put(path, &T);
  expect_same_error(path, NULL, "no size line", true);
  mm_read_options o = {.format = MM_FORMAT_EDGELIST};
  T = make_el(100, 3000, 0, true, false);
  char *mid = strstr(T.s + T.n / 2, "\n");
  mid[1] = 'z';
  put(path, &T);
  expect_same_error(path, &o, "edge list: a bad id mid-file", false);
  T = make_el(100, 3000, 0, false, false);
  T.n = long_line(&T, (size_t)5 << 20, '#');
  put(path, &T);
  expect_same_error(path, &o, "edge list: a line of 5 MiB", false);
  unlink(path);
  tmp_path(path, sizeof path, "g.mtx.gz");
  T = make_mtx("real", "general", 5, 5, false, 0);
  CHECK(write_file(path, T.s, T.n, true) == 0, "cannot write %s", path);
  free(T.s);
  mm_coo_part p;
  CHECK(mm_read_part(path, NULL, 0, 2, &p, &err) == SHIRO_ERR_UNSUPPORTED && strstr(err.message, path) &&
            strstr(err.message, "decompress") && p.n == 0 && p.Ti == NULL,
        "gzip: '%s'", err.message);
  CHECK(mm_read_part(path, NULL, 2, 2, &p, &err) == SHIRO_ERR_ARG, "part 2 of 2 accepted");
  unlink(path);
}

/* ---- HDF5 CSR ---- */

/* Writes 1-D dataset `name` of n elements of buf (memory type mt) as file type ft. */
static void put_1d(hid_t f, const char *name, hid_t ft, hid_t mt, int64_t n, const void *buf) {
  hsize_t len[1] = {(hsize_t)n};
  hid_t sp = H5Screate_simple(1, len, NULL), d = H5Dcreate2(f, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (n) H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  H5Dclose(d);
  H5Sclose(sp);
}

/* A random m-row CSR file (rows unsorted, duplicates, explicit zeros;
 * int32 or int64 indices, values or pattern, shape attribute or not);
 * entry `bad` (>= 0) gets column -3, and row pointer `badp` (> 0) drops below
 * the one before. */
static void write_h5(const char *path, int64_t m, int64_t k, int v, int64_t bad, int64_t badp) {
  int64_t *Ap = malloc((size_t)(m + 1) * sizeof *Ap), n = 0;
  Ap[0] = 0;
  for (int64_t i = 0; i < m; i++) Ap[i + 1] = Ap[i] + (rnd(7) == 0 ? 0 : rnd(12));
  n = Ap[m];
  int64_t *Aj = malloc((size_t)n * 8 + 8);
  int32_t *Aj32 = malloc((size_t)n * 4 + 4);
  double *Ax = malloc((size_t)n * 8 + 8);
  for (int64_t t = 0; t < n; t++) {
    Aj[t] = rnd(k), Aj32[t] = (int32_t)Aj[t];
    Ax[t] = rnd(5) == 0 ? 0.0 : (double)(rnd(2001) - 1000) / 3.0;
  }
  if (bad >= 0 && bad < n) Aj[bad] = -3, Aj32[bad] = -3;
  if (badp > 0) Ap[badp] = Ap[badp - 1] - 1;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  put_1d(f, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, m + 1, Ap);
  if (v & 1) put_1d(f, "indices", H5T_STD_I64LE, H5T_NATIVE_INT64, n, Aj);
  else put_1d(f, "indices", H5T_STD_I32LE, H5T_NATIVE_INT32, n, Aj32);
  if (v & 2) put_1d(f, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, Ax);
  if (v & 4) {
    int64_t shape[2] = {m, k + 3};
    hsize_t two[1] = {2};
    hid_t sp = H5Screate_simple(1, two, NULL), a = H5Acreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, shape);
    H5Aclose(a);
    H5Sclose(sp);
  }
  H5Fclose(f);
  free(Ap), free(Aj), free(Aj32), free(Ax);
}

static void test_h5_rows(void) {
  char path[512];
  tmp_path(path, sizeof path, "r.h5");
  for (int v = 0; v < 8; v++) {
    const int64_t m = 300, k = 40;
    sc_csr *A = NULL;
    mm_header ha = {0}, hs = {0};
    shiro_error err = {{0}};
    write_h5(path, m, k, v, -1, 0);
    CHECK(csr_h5_read(path, &A, &ha, &err) == SHIRO_OK, "h5 variant %d: %s", v, err.message);
    if (!A) continue;
    CHECK(csr_h5_read_shape(path, &hs, &err) == SHIRO_OK && hs.m == m && hs.entries == ha.entries &&
              hs.field == ha.field && hs.k == ((v & 4) ? ha.k : -1),
          "h5 variant %d: read_shape: m %lld entries %lld k %lld (%s)", v, (long long)hs.m, (long long)hs.entries,
          (long long)hs.k, err.message);
    const int64_t ranges[][2] = {{0, 0}, {m, m}, {0, m}, {0, 1}, {m - 1, m}, {17, 17}, {5, 150}, {150, 300}, {99, 213}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
      sc_csr *B = NULL;
      mm_header hb = {0};
      int64_t lo = ranges[r][0], hi = ranges[r][1];
      CHECK(csr_h5_read_rows(path, lo, hi, &B, &hb, &err) == SHIRO_OK, "h5 variant %d rows [%lld, %lld): %s", v,
            (long long)lo, (long long)hi, err.message);
      if (!B) continue;
      if (!(v & 4)) { /* no shape: k is the part's; a full cover's maximum is the file's */
        CHECK(B->k <= A->k && (hi - lo < m || B->k == A->k), "h5 variant %d rows [%lld, %lld): k %lld of %lld", v,
              (long long)lo, (long long)hi, (long long)B->k, (long long)A->k);
        B->k = A->k;
      }
      CHECK(B->m == hi - lo && same_rows(A, lo, B), "h5 variant %d rows [%lld, %lld): not csr_h5_read's rows", v,
            (long long)lo, (long long)hi);
      CHECK(hb.m == m && hb.entries == ha.entries && hb.field == ha.field, "h5 variant %d: header", v);
      sc_csr_free(B);
    }
    sc_csr *B = NULL;
    CHECK(csr_h5_read_rows(path, 10, m + 1, &B, NULL, &err) == SHIRO_ERR_ARG && !B, "rows past m accepted");
    CHECK(csr_h5_read_rows(path, 10, 9, &B, NULL, &err) == SHIRO_ERR_ARG && !B, "rows [10, 9) accepted");
    sc_csr_free(A);
  }
  /* A bad column at entry 700 and a bad pointer at 250: the whole file's
   * message from a range that holds it, no error from one that does not. */
  for (int which = 0; which < 2; which++) {
    sc_csr *A = NULL, *B = NULL;
    shiro_error want = {{0}}, got = {{0}};
    write_h5(path, 300, 40, 2, which ? -1 : 700, which ? 250 : 0);
    CHECK(csr_h5_read(path, &A, NULL, &want) == SHIRO_ERR_PARSE, "bad h5 %d accepted", which);
    const char *r = strstr(want.message, "(row "); /* the row of entry 700 */
    int64_t row = which ? 250 : r ? strtoll(r + 5, NULL, 10)
                                  : 3;
    CHECK(csr_h5_read_rows(path, row - 3, row + 4, &B, NULL, &got) == SHIRO_ERR_PARSE &&
              !strcmp(got.message, want.message),
          "bad h5 %d: rows around %lld say '%s', csr_h5_read '%s'", which, (long long)row, got.message, want.message);
    CHECK(csr_h5_read_rows(path, 0, row - 3, &B, NULL, &got) == SHIRO_OK, "bad h5 %d: rows before: %s", which,
          got.message);
    sc_csr_free(B);
  }
  unlink(path);
}

/* The shared set: its plain .mtx, and two .gz decompressed into plain files. */
static int test_shared(const char *dir) {
  DIR *d = opendir(dir);
  char path[1024];
  if (!d) {
    printf("SKIP: the shared matrix set %s is absent (%s): its matrices are not read in parts\n", dir,
           strerror(errno));
    return 77;
  }
  static const char *plain[] = {"lp_ship04l.mtx", "ca-GrQc.mtx", "email-Eu-core.mtx"};
  for (size_t f = 0; f < sizeof plain / sizeof plain[0]; f++) {
    snprintf(path, sizeof path, "%s/%s", dir, plain[f]);
    if (access(path, R_OK) == 0) check_parts(path, NULL, true);
  }
  static const char *gz[] = {"bcsstk13.mtx.gz", "f855_mat9_I.mtx.gz"};
  for (size_t f = 0; f < sizeof gz / sizeof gz[0]; f++) {
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", dir, gz[f]);
    gzFile g = gzopen(src, "rb");
    if (!g) continue;
    text T = {0};
    char buf[1 << 16];
    int got;
    while ((got = gzread(g, buf, sizeof buf)) > 0) add(&T, "%.*s", got, buf);
    gzclose(g);
    tmp_path(path, sizeof path, "shared.mtx");
    put(path, &T);
    check_parts(path, NULL, true);
    unlink(path);
  }
  closedir(d);
  return -1;
}

int main(int argc, char **argv) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  rng_seed(0x9a27);
  if (tmpdir_make("shiro_read_part")) return 1;
  int rc = -1;
  if (argc == 2) {
    rc = test_shared(argv[1]);
  } else {
    test_mtx_files();
    test_mtx_errors();
    test_h5_rows();
  }
  rmdir(tmpdir);
  if (rc == 77) return 77;
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
