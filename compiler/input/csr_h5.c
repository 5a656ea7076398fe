/* csr_h5.c — the HDF5 CSR reader (csr_h5.h): each dataset checked for its
 * type and length, then a range of rows (all of them for csr_h5_read) read
 * by hyperslab with conversion to the CSR's own types (int64 indices,
 * double values: no second copy): its row pointers, then its entries only.
 * Every pointer, index and value read is checked, and rows that are not
 * strictly increasing sorted stably and their duplicates summed, packing
 * the rows in place. One path for both: csr_h5_read is rows [0, m). */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csr_h5.h"
#include "error.h"

/* Opens dataset `name` of f as a 1-D array of an integer (want_float false)
 * or a numeric (true) type; *len its length; *d -1 when absent and
 * `optional`. Returns SHIRO_OK or SHIRO_ERR_PARSE naming the dataset. */
static shiro_status open_1d(const char *path, hid_t f, const char *name, bool want_float, bool optional,
                            hid_t *d, int64_t *len, shiro_error *err) {
  *d = -1;
  htri_t there = H5Lexists(f, name, H5P_DEFAULT);
  if (there <= 0) {
    if (optional && there == 0) return SHIRO_OK;
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: no dataset %s (expected an HDF5 CSR file: /indptr, /indices, "
                                            "optional /data)",
                      path, name);
  }
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  if (ds < 0) return shiro_fail(err, SHIRO_ERR_PARSE, "%s: %s is not a dataset", path, name);
  hid_t ty = H5Dget_type(ds), sp = H5Dget_space(ds);
  H5T_class_t c = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
  int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  hsize_t dims[1] = {0};
  if (rank == 1) H5Sget_simple_extent_dims(sp, dims, NULL);
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  shiro_status st = SHIRO_OK;
  if (!(c == H5T_INTEGER || (want_float && c == H5T_FLOAT)))
    st = shiro_fail(err, SHIRO_ERR_PARSE, "%s: %s has the wrong type (expected %s)", path, name,
                    want_float ? "integer or floating-point numbers" : "integers");
  else if (rank != 1)
    st = shiro_fail(err, SHIRO_ERR_PARSE, "%s: %s has %d dimensions (expected 1)", path, name, rank);
  else if (dims[0] > (hsize_t)INT64_MAX / 8)
    st = shiro_fail(err, SHIRO_ERR_PARSE, "%s: %s is too long (%llu elements)", path, name,
                    (unsigned long long)dims[0]);
  if (st != SHIRO_OK) {
    H5Dclose(ds);
    return st;
  }
  *d = ds;
  *len = (int64_t)dims[0];
  return SHIRO_OK;
}

/* Reads elements [off, off + n) of the 1-D dataset d into buf[0 .. n-1] as
 * memory type mt (a hyperslab: nothing else of the dataset is read); n = 0
 * reads nothing. */
static shiro_status read_slab(const char *path, const char *name, hid_t d, hid_t mt, int64_t off, int64_t n,
                              void *buf, shiro_error *err) {
  hsize_t o[1] = {(hsize_t)off}, c[1] = {(hsize_t)n};
  hid_t fs = -1, ms = -1;
  bool ok = false;
  if (n == 0) return SHIRO_OK;
  fs = H5Dget_space(d);
  ms = H5Screate_simple(1, c, NULL);
  ok = fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, o, NULL, c, NULL) >= 0 &&
      H5Dread(d, mt, ms, fs, H5P_DEFAULT, buf) >= 0;
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (!ok)
    return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot read %s (a read error, or values that do not fit %s)", path,
                      name, mt == H5T_NATIVE_DOUBLE ? "a double" : "int64");
  return SHIRO_OK;
}

/* The root attribute "shape" into shape[2]: SHIRO_OK with *given false if
 * there is none, else checked to be two non-negative integers. */
static shiro_status read_shape(const char *path, hid_t f, int64_t shape[2], bool *given, shiro_error *err) {
  *given = false;
  htri_t there = H5Aexists(f, "shape");
  if (there <= 0) return SHIRO_OK;
  hid_t a = H5Aopen(f, "shape", H5P_DEFAULT);
  hid_t ty = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  bool ok = ty >= 0 && H5Tget_class(ty) == H5T_INTEGER && n == 2 &&
      H5Aread(a, H5T_NATIVE_INT64, shape) >= 0;
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  if (a >= 0) H5Aclose(a);
  if (!ok)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: attribute shape is not two integers (expected (rows, columns))",
                      path);
  if (shape[0] < 0 || shape[1] < 0)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: attribute shape is negative (%lld, %lld)", path,
                      (long long)shape[0], (long long)shape[1]);
  *given = true;
  return SHIRO_OK;
}

/* Checks P[0 .. hi-lo] = /indptr[lo .. hi] of a file of m rows and nnz
 * entries: /indptr[0] = 0, nondecreasing, /indptr[m] = nnz, and (for the
 * pointers of a range that stops short of either end) within [0, nnz], so
 * that the range's entries can be read. Messages name the global element. */
static shiro_status check_indptr(const char *path, const int64_t *P, int64_t lo, int64_t hi, int64_t m,
                                 int64_t nnz, shiro_error *err) {
  int64_t n = hi - lo;
  if (lo == 0 && P[0] != 0)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr[0] is %lld (expected 0)", path, (long long)P[0]);
  if (P[0] < 0 || P[0] > nnz)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr[%lld] = %lld out of range (expected 0..%lld, the entries "
                                            "of /indices)",
                      path, (long long)lo, (long long)P[0], (long long)nnz);
  for (int64_t i = 0; i < n; i++)
    if (P[i + 1] < P[i])
      return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr[%lld] = %lld is below /indptr[%lld] = %lld (expected "
                                              "nondecreasing row pointers)",
                        path, (long long)(lo + i + 1), (long long)P[i + 1],
                        (long long)(lo + i), (long long)P[i]);
  if (hi == m && P[n] != nnz)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr[%lld] = %lld but /indices has %lld entries (expected "
                                            "equal)",
                      path, (long long)m, (long long)P[n], (long long)nnz);
  if (P[n] > nnz)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr[%lld] = %lld out of range (expected 0..%lld, the entries "
                                            "of /indices)",
                      path, (long long)hi, (long long)P[n], (long long)nnz);
  return SHIRO_OK;
}

/* Checks every column of the n rows Ap (0-based in Aj, Ax) in [0, k)
 * (k < 0: only >= 0) and every value finite; *most gets the largest column
 * (-1 if none). The rows are the file's from row lo and entry base on:
 * messages name the file's element and row. */
static shiro_status check_entries(const char *path, const int64_t *Ap, int64_t n, int64_t lo, int64_t base,
                                  const int64_t *Aj, const double *Ax, int64_t k, int64_t *most, shiro_error *err) {
  int64_t big = -1;
  for (int64_t i = 0; i < n; i++)
    for (int64_t t = Ap[i]; t < Ap[i + 1]; t++) {
      if (Aj[t] < 0 || (k >= 0 && Aj[t] >= k))
        return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indices[%lld] = %lld (row %lld) out of range (expected "
                                                "0..%lld)",
                          path, (long long)(base + t), (long long)Aj[t], (long long)(lo + i),
                          (long long)(k >= 0 ? k - 1 : INT64_MAX));
      if (Aj[t] > big) big = Aj[t];
      if (Ax && !isfinite(Ax[t]))
        return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /data[%lld] (row %lld) is not a finite number", path,
                          (long long)(base + t), (long long)(lo + i));
    }
  *most = big;
  return SHIRO_OK;
}

typedef struct ent {
  int64_t j, t;
} ent; /* a column and its place in the file */

/* Sorts the n keys of a (unique: column << lb | place) with an LSD radix
 * sort of 8-bit digits over the `bits` low bits, using tmp[n]. */
static void radix_sort(uint64_t *a, uint64_t *tmp, int64_t n, int bits) {
  for (int sh = 0; sh < bits; sh += 8) {
    int64_t c[257] = {0};
    for (int64_t t = 0; t < n; t++) c[((a[t] >> sh) & 255) + 1]++;
    for (int d = 0; d < 256; d++) c[d + 1] += c[d];
    for (int64_t t = 0; t < n; t++) tmp[c[(a[t] >> sh) & 255]++] = a[t];
    memcpy(a, tmp, (size_t)n * sizeof *a);
  }
}

/* Bits needed to hold v >= 0. */
static int bits_of(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

static int ent_cmp(const void *a, const void *b) {
  const ent *x = a, *y = b;
  return x->j != y->j ? (x->j > y->j) - (x->j < y->j) : (x->t > y->t) - (x->t < y->t);
}

/* Sorts each row of the m x k matrix by column (stable: ties keep the file's order), sums
 * duplicates in that order and packs the rows to the front, updating Ap;
 * *nnz becomes the entries kept. Rows already strictly increasing only
 * move. Returns SHIRO_ERR_NOMEM if a row's scratch cannot be had. */
static shiro_status pack_rows(int64_t *Ap, int64_t m, int64_t k, int64_t *Aj, double *Ax, int64_t *nnz,
                              shiro_error *err) {
  ent *s = NULL;
  double *x = NULL;
  int64_t cap = 0, w = 0;
  for (int64_t i = 0; i < m; i++) {
    int64_t a = Ap[i], b = Ap[i + 1], n = b - a;
    bool sorted = true;
    for (int64_t t = a + 1; t < b && sorted; t++) sorted = Aj[t] > Aj[t - 1];
    Ap[i] = w;
    if (sorted) {
      if (w != a) {
        memmove(Aj + w, Aj + a, (size_t)n * sizeof *Aj);
        memmove(Ax + w, Ax + a, (size_t)n * sizeof *Ax);
      }
      w += n;
      continue;
    }
    if (n > cap) {
      free(s);
      free(x);
      cap = n;
      s = malloc((size_t)cap * sizeof *s);
      x = malloc((size_t)cap * sizeof *x);
      if (!s || !x) {
        free(s);
        free(x);
        return shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory sorting a row of %lld entries", (long long)n);
      }
    }
    for (int64_t t = 0; t < n; t++) s[t] = (ent){Aj[a + t], t}, x[t] = Ax[a + t];
    if (n <= 32) { /* insertion sort: stable, and quicker than qsort on the short rows of graphs */
      for (int64_t t = 1; t < n; t++) {
        ent e = s[t];
        int64_t u = t;
        for (; u > 0 && s[u - 1].j > e.j; u--) s[u] = s[u - 1];
        s[u] = e;
      }
    } else if (bits_of((uint64_t)k) + bits_of((uint64_t)n) <= 64) { /* keys column << lb | place */
      int lb = bits_of((uint64_t)n);
      uint64_t *key = (uint64_t *)s, *tmp = key + n; /* s holds 2n words */
      for (int64_t t = 0; t < n; t++) key[t] = (uint64_t)Aj[a + t] << lb | (uint64_t)t;
      radix_sort(key, tmp, n, bits_of((uint64_t)k) + lb);
      for (int64_t t = n - 1; t >= 0; t--) /* back to (column, place), from the end: no overlap */
        s[t] = (ent){(int64_t)(key[t] >> lb), (int64_t)(key[t] & (((uint64_t)1 << lb) - 1))};
    } else {
      qsort(s, (size_t)n, sizeof *s, ent_cmp); /* (column, place): the same order, stably */
    }
    for (int64_t t = 0; t < n; t++) {
      if (t > 0 && s[t].j == s[t - 1].j) {
        Ax[w - 1] += x[s[t].t];
      } else {
        Aj[w] = s[t].j;
        Ax[w] = x[s[t].t];
        w++;
      }
    }
  }
  Ap[m] = w;
  *nnz = w;
  free(s);
  free(x);
  return SHIRO_OK;
}

/* An open HDF5 CSR file: its datasets and what their metadata say. */
typedef struct h5_csr {
  hid_t dp, di, dx; /* /indptr, /indices, /data (-1: none, a pattern matrix) */
  int64_t m; /* rows: len(/indptr) - 1 */
  int64_t nnz; /* entries stored: len(/indices) */
  int64_t shape[2]; /* attribute shape (m, k) when given */
  bool given; /* the attribute is there */
} h5_csr;

static void close_csr(h5_csr *F) {
  if (F->dp >= 0) H5Dclose(F->dp);
  if (F->di >= 0) H5Dclose(F->di);
  if (F->dx >= 0) H5Dclose(F->dx);
  F->dp = F->di = F->dx = -1;
}

/* Opens the datasets of f and checks their types and lengths and the
 * shape attribute against each other; reads no element. F is closed by
 * the caller (close_csr) whatever the result. */
static shiro_status open_csr(const char *path, hid_t f, h5_csr *F, shiro_error *err) {
  int64_t np = 0, nx = 0;
  shiro_status st = open_1d(path, f, "/indptr", false, false, &F->dp, &np, err);
  if (st == SHIRO_OK) st = open_1d(path, f, "/indices", false, false, &F->di, &F->nnz, err);
  if (st == SHIRO_OK) st = open_1d(path, f, "/data", true, true, &F->dx, &nx, err);
  if (st == SHIRO_OK) st = read_shape(path, f, F->shape, &F->given, err);
  if (st != SHIRO_OK) return st;
  if (np < 1)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /indptr is empty (expected rows + 1 >= 1 entries)", path);
  if (F->dx >= 0 && nx != F->nnz)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: /data has %lld entries but /indices %lld (expected equal)", path,
                      (long long)nx, (long long)F->nnz);
  if (F->given && F->shape[0] != np - 1)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: attribute shape says %lld rows but /indptr has %lld entries "
                                            "(expected rows + 1)",
                      path, (long long)F->shape[0], (long long)np);
  F->m = np - 1;
  return SHIRO_OK;
}

/* What the metadata of F say (k -1 if there is no shape attribute). */
static mm_header header_of(const h5_csr *F) {
  mm_header h = {F->dx >= 0 ? MM_REAL : MM_PATTERN, MM_GENERAL, F->m, F->given ? F->shape[1] : -1, F->nnz};
  return h;
}

/* Reads rows [lo, hi) of F into A (hi - lo rows, Ap from 0): their row
 * pointers and entries only, by hyperslab, checked, sorted and summed. */
static shiro_status read_rows(const char *path, const h5_csr *F, int64_t lo, int64_t hi, sc_csr *A,
                              mm_header *h, shiro_error *err) {
  int64_t n = hi - lo, base = 0, ni = 0, most = -1;
  int64_t *Aj = NULL; /* [ni] the columns as read, 64-bit until checked and packed; then A->Aj */
  shiro_status st = SHIRO_OK;
  A->m = n;
  A->Ap = malloc((size_t)(n + 1) * sizeof *A->Ap);
  if (!A->Ap) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for %lld rows", path, (long long)n);
    goto done;
  }
  SHIRO_CHECK_GOTO(read_slab(path, "/indptr", F->dp, H5T_NATIVE_INT64, lo, n + 1, A->Ap, err), st);
  SHIRO_CHECK_GOTO(check_indptr(path, A->Ap, lo, hi, F->m, F->nnz, err), st);
  base = A->Ap[0];
  ni = A->Ap[n] - base;
  for (int64_t i = 0; i <= n; i++) A->Ap[i] -= base;
  Aj = malloc((size_t)(ni ? ni : 1) * sizeof *Aj);
  A->Ax = malloc((size_t)(ni ? ni : 1) * sizeof *A->Ax);
  if (!Aj || !A->Ax) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for %lld entries", path, (long long)ni);
    goto done;
  }
  SHIRO_CHECK_GOTO(read_slab(path, "/indices", F->di, H5T_NATIVE_INT64, base, ni, Aj, err), st);
  if (F->dx >= 0) SHIRO_CHECK_GOTO(read_slab(path, "/data", F->dx, H5T_NATIVE_DOUBLE, base, ni, A->Ax, err), st);
  SHIRO_CHECK_GOTO(check_entries(path, A->Ap, n, lo, base, Aj, F->dx >= 0 ? A->Ax : NULL,
                                 F->given ? F->shape[1] : -1, &most, err),
                   st);
  if (F->dx < 0)
    for (int64_t t = 0; t < ni; t++) A->Ax[t] = 1.0;
  A->k = F->given ? F->shape[1] : (most + 1 > F->m ? most + 1 : F->m);
  if (A->k > SC_CSR_MAX_COLS) {
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: the matrix has %lld columns; at most %lld are supported "
                                                "(32-bit column indices)",
                    path, (long long)A->k, (long long)SC_CSR_MAX_COLS);
    goto done;
  }
  SHIRO_CHECK_GOTO(pack_rows(A->Ap, n, A->k, Aj, A->Ax, &A->nnz, err), st);
  A->Aj = sc_csr_narrow_cols(Aj, A->nnz); /* sized exactly: what the duplicates took is given back */
  Aj = NULL;
  if (A->nnz < ni && A->nnz > 0) {
    double *ax = realloc(A->Ax, (size_t)A->nnz * sizeof *ax);
    if (ax) A->Ax = ax;
  }
  *h = header_of(F);
  h->k = A->k;
done:
  free(Aj);
  return st;
}

/* Opens the file at path with HDF5's error printing off and reads its
 * metadata into *h, then, if A is not NULL, its rows [lo, hi) into A
 * (hi < 0: all of them). */
static shiro_status read_h5(const char *path, int64_t lo, int64_t hi, sc_csr *A, mm_header *h, shiro_error *err) {
  FILE *probe = fopen(path, "rb");
  if (!probe) return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  fclose(probe);
  H5E_auto2_t func = NULL;
  void *data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  shiro_status st = SHIRO_OK;
  h5_csr F = {.dp = -1, .di = -1, .dx = -1};
  hid_t f = -1;
  if (H5Fis_hdf5(path) <= 0 || (f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: not an HDF5 file (expected an HDF5 CSR file: /indptr, /indices, "
                                       "optional /data)",
                    path);
    goto done;
  }
  SHIRO_CHECK_GOTO(open_csr(path, f, &F, err), st);
  *h = header_of(&F);
  if (hi < 0) hi = F.m;
  if (A && hi > F.m) {
    st = shiro_fail(err, SHIRO_ERR_ARG, "%s: rows [%lld, %lld) asked of a matrix of %lld rows", path,
                    (long long)lo, (long long)hi, (long long)F.m);
    goto done;
  }
  if (A) st = read_rows(path, &F, lo, hi, A, h, err);
done:
  close_csr(&F);
  if (f >= 0 && H5Fclose(f) < 0 && st == SHIRO_OK) st = shiro_fail(err, SHIRO_ERR_IO, "%s: close failed", path);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  return st;
}

/* csr_h5_read (hi < 0) or csr_h5_read_rows. */
static shiro_status read_part(const char *path, int64_t lo, int64_t hi, sc_csr **out, mm_header *hdr,
                              shiro_error *err) {
  mm_header h = {0};
  sc_csr *A = calloc(1, sizeof *A);
  shiro_status st = A ? read_h5(path, lo, hi, A, &h, err) : shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  if (st != SHIRO_OK) {
    sc_csr_free(A);
    return st;
  }
  *out = A;
  if (hdr) *hdr = h;
  return SHIRO_OK;
}

shiro_status csr_h5_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err) {
  if (!out || !path) return shiro_fail(err, SHIRO_ERR_ARG, "csr_h5_read: path or out is NULL");
  *out = NULL;
  return read_part(path, 0, -1, out, hdr, err);
}

shiro_status csr_h5_read_rows(const char *path, int64_t lo, int64_t hi, sc_csr **out, mm_header *hdr,
                              shiro_error *err) {
  if (!out || !path) return shiro_fail(err, SHIRO_ERR_ARG, "csr_h5_read_rows: path or out is NULL");
  *out = NULL;
  if (lo < 0 || hi < lo)
    return shiro_fail(err, SHIRO_ERR_ARG, "csr_h5_read_rows: bad row range [%lld, %lld)", (long long)lo,
                      (long long)hi);
  return read_part(path, lo, hi, out, hdr, err);
}

shiro_status csr_h5_read_shape(const char *path, mm_header *hdr, shiro_error *err) {
  mm_header h = {0};
  if (!path || !hdr) return shiro_fail(err, SHIRO_ERR_ARG, "csr_h5_read_shape: path or hdr is NULL");
  shiro_status st = read_h5(path, 0, -1, NULL, &h, err);
  if (st == SHIRO_OK) *hdr = h;
  return st;
}
