/* mtx_lite.h — a small Matrix Market reader for the benchmark's peer programs
 * (peer_graphblas.c, peer_petsc.c), which do not link shiro. Header-only.
 *
 * Reads coordinate real | integer | pattern, general | symmetric |
 * skew-symmetric | hermitian, plain or gzip (zlib reads both), into a CSR
 * with columns increasing in each row and duplicates summed — the matrix
 * shiro-plan reads (pattern entries are 1). Errors go to stderr with the
 * file and line; the programs then exit. */
#ifndef SHIRO_MTX_LITE_H
#define SHIRO_MTX_LITE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

typedef struct mtx_csr {
  int64_t m, k, nnz;
  int64_t *Ap; /* [m+1] */
  int64_t *Aj; /* [nnz], increasing within a row */
  double *Ax; /* [nnz] */
} mtx_csr;

static void mtx_free(mtx_csr *A) {
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  memset(A, 0, sizeof *A);
}

typedef struct mtx_ent {
  int64_t i, j;
  double v;
} mtx_ent;

static int mtx_cmp(const void *a, const void *b) {
  const mtx_ent *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return x->j < y->j ? -1 : x->j > y->j;
}

/* Reads path into *A. Returns 0 on success, 1 (after a message) on failure. */
static int mtx_read(const char *path, mtx_csr *A) {
  memset(A, 0, sizeof *A);
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 1;
  }
  char line[1024];
  long long lineno = 1;
  int pattern = 0, sym = 0, skew = 0, rc = 1;
  mtx_ent *e = NULL;
  int64_t ne = 0, cap = 0, m = 0, k = 0, nz = 0;
  if (!gzgets(f, line, sizeof line) || strncasecmp(line, "%%MatrixMarket matrix coordinate", 32)) {
    fprintf(stderr, "%s:1: expected '%%%%MatrixMarket matrix coordinate ...'\n", path);
    goto done;
  }
  pattern = strstr(line, "pattern") != NULL;
  skew = strstr(line, "skew-symmetric") != NULL;
  sym = skew || strstr(line, " symmetric") != NULL || strstr(line, "hermitian") != NULL;
  if (strstr(line, "complex")) {
    fprintf(stderr, "%s:1: complex matrices are not supported\n", path);
    goto done;
  }
  while (gzgets(f, line, sizeof line)) {
    lineno++;
    if (line[0] == '%' || line[0] == '\n') continue;
    long long a, b, c;
    if (sscanf(line, "%lld %lld %lld", &a, &b, &c) != 3 || a < 0 || b < 0 || c < 0) {
      fprintf(stderr, "%s:%lld: expected 'rows cols nonzeros'\n", path, lineno);
      goto done;
    }
    m = a;
    k = b;
    nz = c;
    break;
  }
  cap = (sym ? 2 : 1) * nz + 1;
  e = malloc((size_t)cap * sizeof *e);
  if (!e) {
    fprintf(stderr, "%s: out of memory\n", path);
    goto done;
  }
  for (int64_t t = 0; t < nz; t++) {
    if (!gzgets(f, line, sizeof line)) {
      fprintf(stderr, "%s:%lld: %lld of %lld entries\n", path, lineno, (long long)t, (long long)nz);
      goto done;
    }
    lineno++;
    long long i, j;
    double v = 1;
    int got = sscanf(line, "%lld %lld %lf", &i, &j, &v);
    if (got < (pattern ? 2 : 3) || i < 1 || i > m || j < 1 || j > k) {
      fprintf(stderr, "%s:%lld: bad entry\n", path, lineno);
      goto done;
    }
    if (pattern) v = 1;
    e[ne++] = (mtx_ent){i - 1, j - 1, v};
    if (sym && i != j) e[ne++] = (mtx_ent){j - 1, i - 1, skew ? -v : v};
  }
  qsort(e, (size_t)ne, sizeof *e, mtx_cmp);
  A->m = m;
  A->k = k;
  A->Ap = calloc((size_t)m + 1, sizeof *A->Ap);
  A->Aj = malloc((size_t)(ne ? ne : 1) * sizeof *A->Aj);
  A->Ax = malloc((size_t)(ne ? ne : 1) * sizeof *A->Ax);
  if (!A->Ap || !A->Aj || !A->Ax) {
    fprintf(stderr, "%s: out of memory\n", path);
    goto done;
  }
  for (int64_t t = 0; t < ne; t++) {
    if (A->nnz && e[t].i == e[t - 1].i && e[t].j == e[t - 1].j) {
      A->Ax[A->nnz - 1] += e[t].v;
      continue;
    }
    A->Aj[A->nnz] = e[t].j;
    A->Ax[A->nnz++] = e[t].v;
    A->Ap[e[t].i + 1]++;
  }
  for (int64_t i = 0; i < m; i++) A->Ap[i + 1] += A->Ap[i];
  rc = 0;
done:
  free(e);
  gzclose(f);
  if (rc) mtx_free(A);
  return rc;
}

/* The value of B at global row g, column c: ±(1 + h/256), the same in every program. */
static double mtx_b_value(int64_t g, int64_t c) {
  uint64_t h = (uint64_t)g * 0x9E3779B97F4A7C15ull + (uint64_t)c * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  double v = 1.0 + (double)(h & 255) / 256.0;
  return (h & 256) ? v : -v;
}

#endif
