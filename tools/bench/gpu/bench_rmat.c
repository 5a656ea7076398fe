/* bench_rmat.c — an R-MAT graph in memory, and the benchmark's small helpers. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_csr_free(bench_csr *A) {
  if (!A) return;
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  memset(A, 0, sizeof *A);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

int bench_rmat(int scale, int edge_factor, uint64_t seed, bench_csr *out) {
  const int64_t n = (int64_t)1 << scale, ne = (int64_t)edge_factor << scale;
  int32_t *src = malloc((size_t)ne * sizeof *src), *dst = malloc((size_t)ne * sizeof *dst), *col = NULL;
  int64_t *cnt = calloc((size_t)n + 1, sizeof *cnt), *pos = NULL;
  memset(out, 0, sizeof *out);
  if (!src || !dst || !cnt || scale < 1 || scale > 30) goto fail;
    /* Edge e draws from its own stream (seed, e): the same graph for any thread count. */
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < ne; e++) {
    uint64_t s = seed * 0xD1342543DE82EF95ull + (uint64_t)e * 0x2545F4914F6CDD1Dull;
    int64_t i = 0, j = 0;
    for (int l = 0; l < scale; l++) {
      const double u = (double)(splitmix(&s) >> 11) * 0x1.0p-53;
      const int bi = u >= 0.57 + 0.19, bj = (u >= 0.57 && u < 0.76) || u >= 0.95; /* a | b | c | d */
      i = 2 * i + bi;
      j = 2 * j + bj;
    }
    src[e] = (int32_t)i;
    dst[e] = (int32_t)j;
  }
  for (int64_t e = 0; e < ne; e++) cnt[src[e] + 1]++;
  for (int64_t i = 0; i < n; i++) cnt[i + 1] += cnt[i];
  pos = malloc((size_t)n * sizeof *pos);
  col = malloc((size_t)ne * sizeof *col);
  if (!pos || !col) goto fail;
  memcpy(pos, cnt, (size_t)n * sizeof *pos);
  for (int64_t e = 0; e < ne; e++) col[pos[src[e]]++] = dst[e];
  free(src);
  free(dst);
  src = dst = NULL;
  /* Sort and deduplicate each row in place; pos[i] becomes row i's distinct count. */
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t i = 0; i < n; i++) {
    int32_t *r = col + cnt[i];
    int64_t len = cnt[i + 1] - cnt[i], k = 0;
    qsort(r, (size_t)len, sizeof *r, cmp_i32);
    for (int64_t t = 0; t < len; t++)
      if (k == 0 || r[t] != r[k - 1]) r[k++] = r[t];
    pos[i] = k;
  }
  out->m = out->k = n;
  out->Ap = malloc((size_t)(n + 1) * sizeof *out->Ap);
  if (!out->Ap) goto fail;
  out->Ap[0] = 0;
  for (int64_t i = 0; i < n; i++) out->Ap[i + 1] = out->Ap[i] + pos[i];
  out->nnz = out->Ap[n];
  out->Aj = malloc((size_t)(out->nnz ? out->nnz : 1) * sizeof *out->Aj);
  out->Ax = malloc((size_t)(out->nnz ? out->nnz : 1) * sizeof *out->Ax);
  if (!out->Aj || !out->Ax) goto fail;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    memcpy(out->Aj + out->Ap[i], col + cnt[i], (size_t)pos[i] * sizeof *col);
    for (int64_t t = out->Ap[i]; t < out->Ap[i + 1]; t++) out->Ax[t] = 1.0;
  }
  free(col);
  free(cnt);
  free(pos);
  return 0;
fail:
  free(src);
  free(dst);
  free(col);
  free(cnt);
  free(pos);
  bench_csr_free(out);
  return 1;
}
