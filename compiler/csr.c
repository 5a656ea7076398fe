/* csr.c — lifetime of the compiler's CSR matrix, and its construction from triplets. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "error.h"

void sc_csr_free(sc_csr *A) {
  if (!A) return;
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  free(A);
}

/* Rows up to this length are sorted by insertion; longer ones by merging
 * insertion-sorted runs of this length. */
#define SC_RUN 32

/* Stable insertion sort of j[0..n) by value, x[] moving alongside. */
static void sort_insert(int64_t *j, double *x, int64_t n) {
  for (int64_t a = 1; a < n; a++) {
    int64_t cj = j[a], b = a;
    double cx = x[a];
    while (b > 0 && j[b - 1] > cj) {
      j[b] = j[b - 1];
      x[b] = x[b - 1];
      b--;
    }
    j[b] = cj;
    x[b] = cx;
  }
}

/* Stable merge of s[lo..mid) and s[mid..hi) into d[lo..hi); ties take the left. */
static void merge(const int64_t *sj, const double *sx, int64_t *dj, double *dx, int64_t lo,
                  int64_t mid, int64_t hi) {
  int64_t a = lo, b = mid, o = lo;
  while (a < mid && b < hi) {
    if (sj[b] < sj[a]) {
      dj[o] = sj[b];
      dx[o++] = sx[b++];
    } else {
      dj[o] = sj[a];
      dx[o++] = sx[a++];
    }
  }
  for (; a < mid; a++, o++) dj[o] = sj[a], dx[o] = sx[a];
  for (; b < hi; b++, o++) dj[o] = sj[b], dx[o] = sx[b];
}

/* Stable sort of j[0..n) with x[] alongside (bottom-up merge sort, no
 * recursion). tj/tx: workspace of n entries. Stability keeps duplicates in
 * triplet order, which fixes the order of their summation. */
static void sort_row(int64_t *j, double *x, int64_t n, int64_t *tj, double *tx) {
  int64_t *sj = j, *dj = tj;
  double *sx = x, *dx = tx;
  for (int64_t lo = 0; lo < n; lo += SC_RUN)
    sort_insert(j + lo, x + lo, n - lo < SC_RUN ? n - lo : SC_RUN);
  for (int64_t w = SC_RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      merge(sj, sx, dj, dx, lo, mid, hi);
    }
    int64_t *t = sj;
    double *u = sx;
    sj = dj, sx = dx, dj = t, dx = u;
  }
  if (sj != j) {
    memcpy(j, sj, (size_t)n * sizeof *j);
    memcpy(x, sx, (size_t)n * sizeof *x);
  }
}

/* True if j[0..n) is non-decreasing. */
static bool is_sorted(const int64_t *j, int64_t n) {
  for (int64_t a = 1; a < n; a++)
    if (j[a] < j[a - 1]) return false;
  return true;
}

/* Bytes of n elements of `size`, or 0 if that does not fit in size_t (or n < 0);
 * n == 0 gives `size`, so that malloc never sees 0. */
static size_t bytes_of(int64_t n, size_t size) {
  if (n < 0 || (uint64_t)n > SIZE_MAX / size) return 0;
  return n == 0 ? size : (size_t)n * size;
}

/* Sorts every row of the scattered matrix A by column and sums duplicates in
 * place; Ap[i+1] holds the end of row i on entry and on exit. */
static shiro_status sort_and_sum(sc_csr *A, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  int64_t *tj = NULL, *Ap = A->Ap, *Aj = A->Aj;
  double *tx = NULL, *Ax = A->Ax;
  int64_t wcap = 0, w = 0, p0 = 0;
  for (int64_t i = 0; i < A->m; i++) {
    int64_t p1 = Ap[i + 1], len = p1 - p0, rs = w;
    if (!is_sorted(Aj + p0, len)) {
      if (len > SC_RUN && len > wcap) {
        free(tj);
        free(tx);
        tj = malloc(bytes_of(len, sizeof *tj));
        tx = malloc(bytes_of(len, sizeof *tx));
        wcap = len;
        if (!tj || !tx) {
          st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory sorting a row of %lld entries",
                          (long long)len);
          goto done;
        }
      }
      sort_row(Aj + p0, Ax + p0, len, tj, tx);
    }
    for (int64_t p = p0; p < p1; p++) {
      if (w > rs && Aj[w - 1] == Aj[p]) {
        Ax[w - 1] += Ax[p];
      } else {
        Aj[w] = Aj[p];
        Ax[w++] = Ax[p];
      }
    }
    Ap[i + 1] = w;
    p0 = p1;
  }
  A->nnz = w;
done:
  free(tj);
  free(tx);
  return st;
}

shiro_status sc_csr_from_coo(int64_t m, int64_t k, int64_t n, const int64_t *Ti,
                             const int64_t *Tj, const double *Tx, sc_coo_mirror mirror,
                             sc_csr **out, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  sc_csr *A = NULL;
  int64_t nz = 0, *Ap;
  bool mir = (mirror == SC_COO_SYMMETRIC || mirror == SC_COO_SKEW);
  if (!out) return shiro_fail(err, SHIRO_ERR_ARG, "sc_csr_from_coo: out is NULL");
  *out = NULL;
  if (m < 0 || k < 0 || n < 0 || (mir && m != k) || (n > 0 && (!Ti || !Tj)) ||
      (mirror != SC_COO_AS_IS && !mir)) {
    st = shiro_fail(err, SHIRO_ERR_ARG,
                    "sc_csr_from_coo: bad arguments (m=%lld, k=%lld, n=%lld, mirror=%d)",
                    (long long)m, (long long)k, (long long)n, (int)mirror);
    goto done;
  }
  A = calloc(1, sizeof *A);
  if (!A || m == INT64_MAX || !bytes_of(m + 1, sizeof *A->Ap) ||
      !(A->Ap = calloc(1, bytes_of(m + 1, sizeof *A->Ap)))) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for the row pointers of %lld rows",
                    (long long)m);
    goto done;
  }
  A->m = m;
  A->k = k;
  Ap = A->Ap;
  /* Count the entries of each row into Ap[i+1]. */
  for (int64_t t = 0; t < n; t++) {
    int64_t i = Ti[t], j = Tj[t];
    if ((uint64_t)i >= (uint64_t)m || (uint64_t)j >= (uint64_t)k) {
      st = shiro_fail(err, SHIRO_ERR_ARG,
                      "sc_csr_from_coo: triplet %lld is (%lld, %lld), outside the %lld x %lld "
                      "matrix",
                      (long long)t, (long long)i, (long long)j, (long long)m, (long long)k);
      goto done;
    }
    Ap[i + 1]++;
    if (mir && i != j) Ap[j + 1]++;
  }
  /* Ap[i+1] = start of row i; the scatter below advances it to the row's end. */
  for (int64_t i = 0; i < m; i++) {
    int64_t c = Ap[i + 1];
    Ap[i + 1] = nz;
    nz += c;
  }
  A->Aj = malloc(bytes_of(nz, sizeof *A->Aj));
  A->Ax = malloc(bytes_of(nz, sizeof *A->Ax));
  if (!A->Aj || !A->Ax) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for a CSR matrix of %lld entries",
                    (long long)nz);
    goto done;
  }
  /* Scatter in triplet order: a stable counting sort by row. */
  for (int64_t t = 0; t < n; t++) {
    int64_t i = Ti[t], j = Tj[t], p = Ap[i + 1]++;
    double v = Tx ? Tx[t] : 1.0;
    A->Aj[p] = j;
    A->Ax[p] = v;
    if (mir && i != j) {
      p = Ap[j + 1]++;
      A->Aj[p] = i;
      A->Ax[p] = mirror == SC_COO_SKEW ? -v : v;
    }
  }
  SHIRO_CHECK_GOTO(sort_and_sum(A, err), st);
  if (A->nnz < nz) { /* give back what summing duplicates freed; keep the arrays if that fails */
    int64_t *j2 = realloc(A->Aj, bytes_of(A->nnz, sizeof *j2));
    if (j2) A->Aj = j2;
    double *x2 = realloc(A->Ax, bytes_of(A->nnz, sizeof *x2));
    if (x2) A->Ax = x2;
  }
done:
  if (st != SHIRO_OK) {
    sc_csr_free(A);
    A = NULL;
  }
  *out = A;
  return st;
}
