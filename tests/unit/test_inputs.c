/* test_inputs.c — the large-graph inputs: SNAP-style edge lists
 * (mm_read_ex, MM_FORMAT_EDGELIST) and HDF5 CSR files (csr_h5_read).
 * Each gives the same CSR matrix, bit for bit, as the Matrix Market file
 * listing the same entries (random matrices with duplicates, unsorted
 * rows, self loops, values; 0- and 1-based; plain, gzip and mapped in many
 * parts on two threads; int32 and int64 indices), and every error path
 * names the file and the line, or the dataset and the element.
 *   test_inputs     (workdir tests/) returns 0, or prints each failure and returns 1 */
#define _GNU_SOURCE
#include <hdf5.h>
#include <math.h>
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

/* True if A and B are the same matrix, bit for bit. */
static bool same_csr(const sc_csr *A, const sc_csr *B) {
  if (!A || !B || A->m != B->m || A->k != B->k || A->nnz != B->nnz) return false;
  if (memcmp(A->Ap, B->Ap, (size_t)(A->m + 1) * sizeof *A->Ap)) return false;
  if (A->nnz && memcmp(A->Aj, B->Aj, (size_t)A->nnz * sizeof *A->Aj)) return false;
  return !A->nnz || !memcmp(A->Ax, B->Ax, (size_t)A->nnz * sizeof *A->Ax);
}

/* A random matrix's entries, in the order the files list them. */
typedef struct ents {
  int64_t n, m, k;
  int64_t *i, *j;
  double *x;
  bool values;
} ents;

/* n entries of an m x k matrix, rows grouped (CSR order, columns not
 * sorted within a row, duplicates and diagonal entries likely). */
static ents make_ents(int64_t m, int64_t k, int64_t n, bool values) {
  ents E = {n, m, k, malloc((size_t)n * 8 + 8), malloc((size_t)n * 8 + 8), malloc((size_t)n * 8 + 8), values};
  for (int64_t t = 0; t < n; t++) {
    E.i[t] = rnd(m);
    E.j[t] = rnd(4) == 0 ? E.i[t] % k : rnd(k);
    E.x[t] = values ? (double)(rnd(2000001) - 1000000) / 1024.0 : 1.0;
  }
  /* a stable counting sort by row: rows grouped, columns as drawn */
  int64_t *at = calloc((size_t)m + 1, sizeof *at), *i2 = malloc((size_t)n * 8 + 8), *j2 = malloc((size_t)n * 8 + 8);
  double *x2 = malloc((size_t)n * 8 + 8);
  for (int64_t t = 0; t < n; t++) at[E.i[t] + 1]++;
  for (int64_t r = 0; r < m; r++) at[r + 1] += at[r];
  for (int64_t t = 0; t < n; t++) {
    int64_t w = at[E.i[t]]++;
    i2[w] = E.i[t], j2[w] = E.j[t], x2[w] = E.x[t];
  }
  free(at), free(E.i), free(E.j), free(E.x);
  E.i = i2, E.j = j2, E.x = x2;
  return E;
}

static void free_ents(ents *E) { free(E->i), free(E->j), free(E->x); }

/* Appends printf output to a growing string. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (b->s && (size_t)w < b->cap - b->n) {
      b->n += (size_t)w;
      return;
    }
    b->cap = b->cap * 2 + (size_t)w + 256;
    b->s = realloc(b->s, b->cap);
  }
}

/* The Matrix Market text of E. */
static sbuf mtx_text(const ents *E) {
  sbuf b = {0};
  sb_printf(&b, "%%%%MatrixMarket matrix coordinate %s general\n%lld %lld %lld\n", E->values ? "real" : "pattern",
            (long long)E->m, (long long)E->k, (long long)E->n);
  for (int64_t t = 0; t < E->n; t++) {
    if (E->values) sb_printf(&b, "%lld %lld %.17g\n", (long long)E->i[t] + 1, (long long)E->j[t] + 1, E->x[t]);
    else sb_printf(&b, "%lld %lld\n", (long long)E->i[t] + 1, (long long)E->j[t] + 1);
  }
  return b;
}

/* An edge list of E, ids from `base`, with comments, blank lines, tabs and
 * CRLF line ends sprinkled in (style: 0 plain; 1 all of that, and no '\n'
 * after the last line). */
static sbuf el_text(const ents *E, int base, int style) {
  sbuf b = {0};
  if (style) sb_printf(&b, "# Directed graph (each unordered pair of nodes is saved once)\n# FromNodeId\tToNodeId\n\n");
  for (int64_t t = 0; t < E->n; t++) {
    const char *sep = style && t % 3 == 0 ? "\t" : " ", *eol = style && t % 5 == 1 ? "\r\n" : "\n";
    if (style && t % 7 == 3) sb_printf(&b, "%% a comment\n  \n");
    if (style && t == E->n - 1) eol = "";
    if (E->values)
      sb_printf(&b, "%s%lld%s%lld %.17g%s", style && t % 4 == 2 ? "  " : "", (long long)(E->i[t] + base), sep,
                (long long)(E->j[t] + base), E->x[t], eol);
    else
      sb_printf(&b, "%lld%s%lld%s%s", (long long)(E->i[t] + base), sep, (long long)(E->j[t] + base),
                style && t % 6 == 4 ? " \t" : "", eol);
  }
  return b;
}

/* Writes a 1-D dataset of n elements (memory type mt, file type ft). */
static void h5_put(hid_t f, const char *name, hid_t ft, hid_t mt, int64_t n, const void *buf) {
  hsize_t d[1] = {(hsize_t)n};
  hid_t sp = H5Screate_simple(1, d, NULL);
  hid_t ds = H5Dcreate2(f, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (n) H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  H5Dclose(ds);
  H5Sclose(sp);
}

/* Writes the root attribute shape (n integers). */
static void h5_shape(hid_t f, int n, const int64_t *v) {
  hsize_t d[1] = {(hsize_t)n};
  hid_t sp = H5Screate_simple(1, d, NULL);
  hid_t a = H5Acreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, v);
  H5Aclose(a);
  H5Sclose(sp);
}

/* E as an HDF5 CSR file: indices int32 or int64; shape written or not. */
static void write_csr_h5(const char *path, const ents *E, bool idx64, bool shape) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int64_t *Ap = calloc((size_t)E->m + 1, sizeof *Ap);
  int32_t *j32 = malloc((size_t)E->n * 4 + 4);
  for (int64_t t = 0; t < E->n; t++) Ap[E->i[t] + 1]++, j32[t] = (int32_t)E->j[t];
  for (int64_t i = 0; i < E->m; i++) Ap[i + 1] += Ap[i];
  h5_put(f, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, E->m + 1, Ap);
  if (idx64) h5_put(f, "indices", H5T_STD_I64LE, H5T_NATIVE_INT64, E->n, E->j);
  else h5_put(f, "indices", H5T_STD_I32LE, H5T_NATIVE_INT32, E->n, j32);
  if (E->values) h5_put(f, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, E->n, E->x);
  int64_t sh[2] = {E->m, E->k};
  if (shape) h5_shape(f, 2, sh);
  H5Fclose(f);
  free(Ap);
  free(j32);
}

/* The reference: the .mtx of E read by mm_read. */
static sc_csr *read_mtx(const ents *E) {
  char path[512];
  tmp_path(path, sizeof path, "ref.mtx");
  sbuf b = mtx_text(E);
  sc_csr *A = NULL;
  shiro_error err = {{0}};
  if (write_file(path, b.s, b.n, false) || mm_read(path, &A, NULL, &err) != SHIRO_OK)
    printf("FAIL reference: %s\n", err.message), failures++;
  free(b.s);
  unlink(path);
  return A;
}

/* Reads the edge list text in path with the options; checks it equals R. */
static void check_el(const char *what, const char *path, const mm_read_options *o, const sc_csr *R, bool pattern) {
  sc_csr *A = NULL;
  mm_header h;
  shiro_error err = {{0}};
  shiro_status st = mm_read_ex(path, o, &A, &h, &err);
  CHECK(st == SHIRO_OK, "%s: %s", what, err.message);
  CHECK(same_csr(A, R), "%s: not the matrix of the .mtx", what);
  if (st == SHIRO_OK) CHECK(h.field == (pattern ? MM_PATTERN : MM_REAL) && h.m == R->m, "%s: header", what);
  sc_csr_free(A);
}

/* Edge lists and HDF5 CSR files equal to the .mtx of random matrices. */
static void test_equal(void) {
  static const struct {
    int64_t m, n;
    bool values;
  } cases[] = {
      {1, 1, false}, {7, 30, false}, {7, 30, true}, {50, 400, false}, {300, 5000, true}, {2000, 60000, false}, {3, 5000, true}, {2, 3000, false}}; /* the last two: long rows (the radix sort) */
  char path[512];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ents E = make_ents(cases[c].m, cases[c].m, cases[c].n, cases[c].values);
    E.i[E.n - 1] = E.j[E.n - 1] = E.m - 1; /* max id + 1 = m: the size the edge list infers */
    sc_csr *R = read_mtx(&E);
    for (int base = 0; base < 2; base++)
      for (int style = 0; style < 2; style++)
        for (int gz = 0; gz < 2; gz++) {
          char what[128];
          snprintf(what, sizeof what, "case %zu base %d style %d gz %d", c, base, style, gz);
          tmp_path(path, sizeof path, "g.txt");
          sbuf b = el_text(&E, base, style);
          CHECK(write_file(path, b.s, b.n, gz) == 0, "%s: write", what);
          free(b.s);
          mm_read_options o = {.format = MM_FORMAT_EDGELIST, .el_base = base};
          check_el(what, path, &o, R, !E.values);
          o.threads = 2, o.chunk_bytes = 64; /* many parts, two threads */
          check_el(what, path, &o, R, !E.values);
          o.el_rows = o.el_cols = E.m; /* the size given: 32-bit indices still */
          check_el(what, path, &o, R, !E.values);
          unlink(path);
        }
    for (int v = 0; v < 4; v++) {
      char what[64];
      snprintf(what, sizeof what, "case %zu h5 variant %d", c, v);
      tmp_path(path, sizeof path, "g.h5");
      write_csr_h5(path, &E, v & 1, v & 2);
      sc_csr *A = NULL;
      mm_header h;
      shiro_error err = {{0}};
      CHECK(csr_h5_read(path, &A, &h, &err) == SHIRO_OK, "%s: %s", what, err.message);
      CHECK(same_csr(A, R), "%s: not the matrix of the .mtx", what);
      CHECK(h.field == (E.values ? MM_REAL : MM_PATTERN) && h.entries == E.n, "%s: header", what);
      sc_csr_free(A);
      unlink(path);
    }
    sc_csr_free(R);
    free_ents(&E);
  }
}

/* Sizes: given sizes larger than the ids, empty lists, shape wider than the columns. */
static void test_sizes(void) {
  char path[512];
  sc_csr *A = NULL;
  shiro_error err = {{0}};
  tmp_path(path, sizeof path, "s.txt");
  write_file(path, "# nothing\n", 10, false);
  mm_read_options o = {.format = MM_FORMAT_EDGELIST};
  CHECK(mm_read_ex(path, &o, &A, NULL, &err) == SHIRO_OK && A->m == 0 && A->k == 0 && A->nnz == 0,
        "empty edge list: %s", err.message);
  sc_csr_free(A), A = NULL;
  write_file(path, "1 2\n", 4, false);
  o.el_rows = 5, o.el_cols = 9;
  CHECK(mm_read_ex(path, &o, &A, NULL, &err) == SHIRO_OK && A->m == 5 && A->k == 9 && A->nnz == 1 &&
            A->Aj[0] == 2 && A->Ap[2] == 1,
        "given size: %s", err.message);
  sc_csr_free(A), A = NULL;
  o.el_rows = 4, o.el_cols = SC_CSR_MAX_COLS; /* the widest matrix: 32-bit column indices */
  CHECK(mm_read_ex(path, &o, &A, NULL, &err) == SHIRO_OK && A->k == o.el_cols && A->nnz == 1 && A->Aj[0] == 2,
        "widest size: %s", err.message);
  sc_csr_free(A), A = NULL;
  o.el_cols = (int64_t)1 << 33; /* wider: refused, saying why */
  CHECK(mm_read_ex(path, &o, &A, NULL, &err) == SHIRO_ERR_UNSUPPORTED && A == NULL &&
            strstr(err.message, "8589934592 columns") && strstr(err.message, "32-bit"),
        "2^33 columns: expected a refusal naming the size, got: %s", err.message);
  sc_csr_free(A), A = NULL;
  unlink(path);
  tmp_path(path, sizeof path, "s.h5");
  ents E = make_ents(6, 3, 10, false);
  write_csr_h5(path, &E, false, false);
  CHECK(csr_h5_read(path, &A, NULL, &err) == SHIRO_OK && A->m == 6 && A->k == 6, "h5 without shape: %s",
        err.message);
  sc_csr_free(A), A = NULL;
  free_ents(&E);
  unlink(path);
}

/* ---- errors ---- */

static void expect_error(const char *what, shiro_status st, shiro_status want, const shiro_error *err,
                         const char *path, const char *msg) {
  CHECK(st == want, "%s: status %d, expected %d (%s)", what, (int)st, (int)want, err->message);
  CHECK(strstr(err->message, path) == err->message, "%s: message does not start with the file: '%s'", what,
        err->message);
  CHECK(strstr(err->message, msg) != NULL, "%s: message '%s' lacks '%s'", what, err->message, msg);
}

static void test_el_errors(void) {
  static const struct {
    const char *text;
    int base;
    int64_t rows, cols;
    const char *msg;
  } bad[] = {
      {"0 1 2 3\n", 0, 0, 0, ":1: expected an edge 'u v' or 'u v value' (2 or 3 fields), found 4 fields"},
      {"# c\n\n0\n", 0, 0, 0, ":3: expected an edge 'u v' or 'u v value' (2 or 3 fields), found 1 fields"},
      {"0 1\n1 2 3\n", 0, 0, 0, ":2: a third field where the first edge line has 2 ('u v') (expected end of line, found '3')"},
      {"0 1 1.5\n1 2\n", 0, 0, 0, ":2: expected a value (the first edge line has 3 fields: 'u v value'), found end of line"},
      {"0 1 1.5\n1 2 3 4\n", 0, 0, 0, ":2: trailing garbage on the edge line (expected end of line, found '4')"},
      {"0 x\n", 0, 0, 0, ":1: expected target vertex id, found 'x'"},
      {"a 1\n", 0, 0, 0, ":1: expected source vertex id, found 'a'"},
      {"% c\n-1 0\n", 0, 0, 0, ":2: source vertex id out of range (expected 0..2147483646, found '-1')"},
      {"1 1\n0 1\n", 1, 0, 0, ":2: source vertex id out of range (expected 1..2147483647, found '0')"},
      {"0 2147483647\n", 0, 0, 0, ":1: target vertex id out of range (expected 0..2147483646, found '2147483647')"},
      {"0 3\n", 0, 3, 3, ":1: target vertex id out of range (expected 0..2, found '3')"},
      {"4 1\n", 1, 3, 4, ":1: source vertex id out of range (expected 1..3, found '4')"},
      {"0 1 abc\n", 0, 0, 0, ":1: expected real value, found 'abc'"},
      {"0 1 1e999\n", 0, 0, 0, ":1: real value overflows double (found '1e999')"},
      {"0 1 nan\n", 0, 0, 0, ":1: expected real value, found 'nan'"},
      {"99999999999999999999 1\n", 0, 0, 0, ":1: source vertex id out of range"},
  };
  char path[512];
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    for (int gz = 0; gz < 2; gz++) {
      char what[64];
      snprintf(what, sizeof what, "edge list error %zu gz %d", c, gz);
      tmp_path(path, sizeof path, "bad.txt");
      write_file(path, bad[c].text, strlen(bad[c].text), gz);
      mm_read_options o = {.format = MM_FORMAT_EDGELIST, .el_base = bad[c].base, .el_rows = bad[c].rows, .el_cols = bad[c].cols};
      sc_csr *A = (sc_csr *)&o;
      shiro_error err = {{0}};
      shiro_status st = mm_read_ex(path, &o, &A, NULL, &err);
      expect_error(what, st, SHIRO_ERR_PARSE, &err, path, bad[c].msg);
      CHECK(A == NULL, "%s: *out not NULL on failure", what);
      unlink(path);
    }
  }
  /* An error far into a file cut into many parts is placed on its exact line. */
  sbuf b = {0};
  for (int t = 0; t < 5000; t++) sb_printf(&b, t % 100 == 0 ? "# c %d\n" : "%d 7\n", t);
  sb_printf(&b, "12 x\n1 2\n");
  tmp_path(path, sizeof path, "late.txt");
  write_file(path, b.s, b.n, false);
  free(b.s);
  mm_read_options o = {.format = MM_FORMAT_EDGELIST, .threads = 2, .chunk_bytes = 100};
  sc_csr *A = NULL;
  shiro_error err = {{0}};
  expect_error("late error", mm_read_ex(path, &o, &A, NULL, &err), SHIRO_ERR_PARSE, &err, path,
               ":5001: expected target vertex id, found 'x'");
  o.el_base = 2;
  expect_error("base 2", mm_read_ex(path, &o, &A, NULL, &err), SHIRO_ERR_ARG, &err, path, "0- or 1-based");
  unlink(path);
  o.el_base = 0;
  expect_error("no file", mm_read_ex(path, &o, &A, NULL, &err), SHIRO_ERR_IO, &err, path, "cannot open");
}

/* A CSR file built by hand: indptr (n_p int64 or doubles), indices, data, shape. */
typedef struct h5case {
  const char *msg; /* expected in the message */
  shiro_status want;
  int np;
  int64_t p[6]; /* /indptr, np < 0: none */
  bool p_float, p_2d; /* /indptr as doubles / as a 2-D array */
  int ni;
  int64_t i[6]; /* /indices, ni < 0: none */
  int nx;
  double x[6]; /* /data, nx < 0: none */
  bool x_string; /* /data as strings */
  int nshape;
  int64_t shape[3]; /* root attribute shape, nshape 0: none */
} h5case;

static void write_h5case(const char *path, const h5case *c) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (c->np >= 0) {
    if (c->p_2d) {
      hsize_t d[2] = {1, (hsize_t)c->np};
      hid_t sp = H5Screate_simple(2, d, NULL);
      hid_t ds = H5Dcreate2(f, "indptr", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->p);
      H5Dclose(ds), H5Sclose(sp);
    } else if (c->p_float) {
      double p[6];
      for (int t = 0; t < c->np; t++) p[t] = (double)c->p[t];
      h5_put(f, "indptr", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c->np, p);
    } else {
      h5_put(f, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, c->np, c->p);
    }
  }
  if (c->ni >= 0) h5_put(f, "indices", H5T_STD_I64LE, H5T_NATIVE_INT64, c->ni, c->i);
  if (c->nx >= 0 && !c->x_string) h5_put(f, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c->nx, c->x);
  if (c->x_string) {
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 4);
    h5_put(f, "data", st, st, 1, "abc");
    H5Tclose(st);
  }
  if (c->nshape) h5_shape(f, c->nshape, c->shape);
  H5Fclose(f);
}

static void test_h5_errors(void) {
  static const h5case bad[] = {
      {"no dataset /indptr", SHIRO_ERR_PARSE, -1, {0}, 0, 0, 1, {0}, -1, {0}, 0, 0, {0}},
      {"no dataset /indices", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 0, -1, {0}, -1, {0}, 0, 0, {0}},
      {"/indptr has the wrong type (expected integers)", SHIRO_ERR_PARSE, 2, {0, 1}, 1, 0, 1, {0}, -1, {0}, 0, 0, {0}},
      {"/indptr has 2 dimensions (expected 1)", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 1, 1, {0}, -1, {0}, 0, 0, {0}},
      {"/indptr is empty", SHIRO_ERR_PARSE, 0, {0}, 0, 0, 0, {0}, -1, {0}, 0, 0, {0}},
      {"/indptr[0] is 1 (expected 0)", SHIRO_ERR_PARSE, 3, {1, 1, 2}, 0, 0, 2, {0, 1}, -1, {0}, 0, 0, {0}},
      {"/indptr[2] = 1 is below /indptr[1] = 2", SHIRO_ERR_PARSE, 4, {0, 2, 1, 3}, 0, 0, 3, {0, 1, 2}, -1, {0}, 0, 0, {0}},
      {"/indptr[2] = 3 but /indices has 2 entries", SHIRO_ERR_PARSE, 3, {0, 1, 3}, 0, 0, 2, {0, 1}, -1, {0}, 0, 0, {0}},
      {"/indices[1] = -1 (row 0) out of range", SHIRO_ERR_PARSE, 3, {0, 2, 2}, 0, 0, 2, {0, -1}, -1, {0}, 0, 0, {0}},
      {"/indices[2] = 3 (row 1) out of range (expected 0..2)", SHIRO_ERR_PARSE, 3, {0, 2, 3}, 0, 0, 3, {0, 1, 3}, -1, {0}, 0, 2, {2, 3}},
      {"/data has 2 entries but /indices 3", SHIRO_ERR_PARSE, 3, {0, 2, 3}, 0, 0, 3, {0, 1, 0}, 2, {1, 2}, 0, 0, {0}},
      {"/data[1] (row 0) is not a finite number", SHIRO_ERR_PARSE, 2, {0, 2}, 0, 0, 2, {0, 1}, 2, {1, NAN}, 0, 0, {0}},
      {"/data[0] (row 0) is not a finite number", SHIRO_ERR_PARSE, 2, {0, 2}, 0, 0, 2, {0, 1}, 2, {INFINITY, 1}, 0, 0, {0}},
      {"/data has the wrong type (expected integer or floating-point numbers)", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 0, 1, {0}, 1, {0}, 1, 0, {0}},
      {"attribute shape is not two integers", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 0, 1, {0}, -1, {0}, 0, 3, {1, 1, 1}},
      {"attribute shape says 2 rows but /indptr has 2 entries", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 0, 1, {0}, -1, {0}, 0, 2, {2, 2}},
      {"attribute shape is negative (1, -1)", SHIRO_ERR_PARSE, 2, {0, 1}, 0, 0, 1, {0}, -1, {0}, 0, 2, {1, -1}},
      {"the matrix has 8589934592 columns; at most 2147483647 are supported (32-bit column indices)",
       SHIRO_ERR_UNSUPPORTED,
       2,
       {0, 1},
       0,
       0,
       1,
       {0},
       -1,
       {0},
       0,
       2,
       {1, (int64_t)1 << 33}},
      {"the matrix has 2147483648 columns; at most 2147483647", SHIRO_ERR_UNSUPPORTED, 2, {0, 1}, 0, 0, 1, {2147483647}, -1, {0}, 0, 0, {0}},
  };
  char path[512];
  tmp_path(path, sizeof path, "bad.h5");
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    char what[64];
    snprintf(what, sizeof what, "h5 error %zu", c);
    write_h5case(path, &bad[c]);
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    expect_error(what, csr_h5_read(path, &A, NULL, &err), bad[c].want, &err, path, bad[c].msg);
    CHECK(A == NULL, "%s: *out not NULL on failure", what);
    unlink(path);
  }
  sc_csr *A = NULL;
  shiro_error err = {{0}};
  expect_error("h5 missing", csr_h5_read(path, &A, NULL, &err), SHIRO_ERR_IO, &err, path, "cannot open");
  write_file(path, "0 1\n", 4, false);
  expect_error("not h5", csr_h5_read(path, &A, NULL, &err), SHIRO_ERR_IO, &err, path, "not an HDF5 file");
  unlink(path);
}

/* sc_csr_compact_values: every value read back through sc_csr_val, bit for bit
 * (-0.0, 2.0 and a NaN among ones, across word boundaries); a matrix with too
 * many values other than 1.0 is left as it was. */
static void test_compact_values(void) {
  enum { N = 1000 };
  sc_csr *A = calloc(1, sizeof *A);
  double *want = malloc(N * sizeof *want);
  CHECK(A && want, "out of memory");
  if (!A || !want) {
    free(A);
    free(want);
    return;
  }
  A->m = 1, A->k = N, A->nnz = N;
  A->Ax = malloc(N * sizeof *A->Ax);
  CHECK(A->Ax != NULL, "out of memory");
  for (int64_t t = 0; A->Ax && t < N; t++) A->Ax[t] = t == 63 ? -0.0 : t == 64 ? NAN
      : t % 97 == 5                                                            ? 2.0 + t
                                                                               : 1.0;
  if (A->Ax) memcpy(want, A->Ax, N * sizeof *want);
  CHECK(A->Ax && sc_csr_compact_values(A) == 1 && A->Ax == NULL, "compacted: %d of %d values are not 1.0", 12, N);
  int bad = 0;
  for (int64_t t = 0; !A->Ax && t < N; t++) {
    double v = sc_csr_val(A, t);
    bad += memcmp(&v, &want[t], sizeof v) != 0;
  }
  CHECK(bad == 0, "compacted values: %d of %d differ", bad, N);
  CHECK(sc_csr_compact_values(A) == 0, "compacting twice: a no-op");
  sc_csr_free(A);
  A = calloc(1, sizeof *A);
  if (!A) {
    free(want);
    return;
  }
  A->m = 1, A->k = N, A->nnz = N; /* every tenth value not 1.0: more than one in 16 */
  A->Ax = malloc(N * sizeof *A->Ax);
  for (int64_t t = 0; A->Ax && t < N; t++) A->Ax[t] = t % 10 ? 1.0 : 0.5;
  CHECK(A->Ax && sc_csr_compact_values(A) == 0 && A->Ax != NULL && sc_csr_val(A, 10) == 0.5 && sc_csr_val(A, 11) == 1.0,
        "a matrix of many values is left as an array");
  sc_csr_free(A);
  free(want);
}

int main(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the mangled files' writes need not print */
  rng_seed(0x5eed);
  if (tmpdir_make("shiro_inputs")) return 1;
  test_equal();
  test_sizes();
  test_el_errors();
  test_h5_errors();
  test_compact_values();
  rmdir(tmpdir);
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
