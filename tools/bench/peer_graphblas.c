/* peer-graphblas — SuiteSparse:GraphBLAS GrB_mxm on a matrix, the local
 * multiply's peer in tools/bench/bench_replay.sh (benchmark only: shiro does not
 * link GraphBLAS; the script builds this with -lgraphblas).
 *
 *   peer-graphblas MATRIX.mtx[.gz] [--n 32[,64...]] [--dtype double[,float]]
 *                  [--threads 1[,2...]] [--reps 5] [--ms 200]
 *
 * C = A·B with the PLUS_TIMES semiring, A sparse by row (CSR), B and C full
 * by row (N columns): what shiro's local multiply computes at R = 1. B holds
 * mtx_b_value(g, c). Two forms, each timed: C = A·B (mxm_ms: GraphBLAS makes
 * a new C each call, by its dot-product method here) and C += A·B into a full
 * C (accum_ms: in place, its saxpy5 kernel), often the faster; best_ms is the
 * better of the two, what the benchmark compares with. Each sample times as
 * many calls (GrB_mxm, then GrB_Matrix_wait) as fill about --ms ms; best of
 * --reps samples. One line per (dtype, N, threads): "peer-graphblas key=value
 * ...". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <GraphBLAS.h>

#include "mtx_lite.h"

#define MAX_LIST 8
#define OK(call)                                                                       \
  do {                                                                                 \
    GrB_Info info_ = (call);                                                           \
    if (info_ != GrB_SUCCESS) {                                                        \
      fprintf(stderr, "peer-graphblas: %s failed (GrB_Info %d)\n", #call, (int)info_); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Parses "a,b,c" into v (at most MAX_LIST values in [lo, hi]); returns the count, 0 on error. */
static int list(const char *s, long lo, long hi, long *v) {
  char buf[256];
  int k = 0;
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *end = NULL;
    long x = strtol(t, &end, 10);
    if (k >= MAX_LIST || *end || x < lo || x > hi) return 0;
    v[k++] = x;
  }
  return k;
}

/* The mean time of `calls` calls of C (accum)= A·B, each waited for. */
static double mean_call(GrB_Matrix C, GrB_BinaryOp accum, GrB_Semiring sr, GrB_Matrix A, GrB_Matrix B, int64_t calls) {
  double t = now();
  for (int64_t i = 0; i < calls; i++) {
    OK(GrB_mxm(C, NULL, accum, sr, A, B, NULL));
    OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
  }
  return (now() - t) / (double)calls;
}

/* Best times per call of GrB_mxm for one (type, N, threads): best[0] C = A·B, best[1] C += A·B. */
static void bench(const mtx_csr *M, int is_double, int64_t n, int threads, int reps, double ms, double best[2]) {
  const GrB_Type type = is_double ? GrB_FP64 : GrB_FP32;
  const size_t esz = is_double ? 8 : 4;
  GrB_Index *Ap = malloc((size_t)(M->m + 1) * sizeof *Ap), *Aj = malloc((size_t)(M->nnz ? M->nnz : 1) * sizeof *Aj);
  void *Ax = malloc((size_t)(M->nnz ? M->nnz : 1) * esz), *Bx = malloc((size_t)M->k * (size_t)n * esz);
  if (!Ap || !Aj || !Ax || !Bx) {
    fprintf(stderr, "peer-graphblas: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i <= M->m; i++) Ap[i] = (GrB_Index)M->Ap[i];
  for (int64_t e = 0; e < M->nnz; e++) {
    Aj[e] = (GrB_Index)M->Aj[e];
    if (is_double) ((double *)Ax)[e] = M->Ax[e];
    else ((float *)Ax)[e] = (float)M->Ax[e];
  }
  for (int64_t g = 0; g < M->k; g++)
    for (int64_t c = 0; c < n; c++) {
      const double v = mtx_b_value(g, c);
      if (is_double) ((double *)Bx)[g * n + c] = v;
      else ((float *)Bx)[g * n + c] = (float)v;
    }
  GrB_Matrix A = NULL, B = NULL, C = NULL;
  OK(GrB_Matrix_new(&A, type, (GrB_Index)M->m, (GrB_Index)M->k));
  OK(GxB_Matrix_pack_CSR(A, &Ap, &Aj, &Ax, (GrB_Index)(M->m + 1) * sizeof(GrB_Index),
                         (GrB_Index)(M->nnz ? M->nnz : 1) * sizeof(GrB_Index), (GrB_Index)(M->nnz ? M->nnz : 1) * esz,
                         false, false, NULL));
  OK(GrB_Matrix_new(&B, type, (GrB_Index)M->k, (GrB_Index)n));
  OK(GxB_set(B, GxB_FORMAT, GxB_BY_ROW));
  OK(GxB_Matrix_pack_FullR(B, &Bx, (GrB_Index)M->k * (GrB_Index)n * esz, false, NULL));
  OK(GrB_Matrix_new(&C, type, (GrB_Index)M->m, (GrB_Index)n));
  OK(GxB_set(C, GxB_FORMAT, GxB_BY_ROW));
  OK(GxB_set(GxB_NTHREADS, threads));
  const GrB_Semiring sr = is_double ? GrB_PLUS_TIMES_SEMIRING_FP64 : GrB_PLUS_TIMES_SEMIRING_FP32;
  const GrB_BinaryOp plus = is_double ? GrB_PLUS_FP64 : GrB_PLUS_FP32;
  for (int v = 0; v < 2; v++) { /* C = A·B (a new C each call), then C += A·B into a full C (in place: saxpy5) */
    const GrB_BinaryOp accum = v ? plus : NULL;
    if (v) {
      OK(GrB_Matrix_assign_FP64(C, NULL, NULL, 0.0, GrB_ALL, (GrB_Index)M->m, GrB_ALL, (GrB_Index)n, NULL));
      OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
    }
    /* calls per sample: two untimed calls (the first is cold), then as many as last 2 ms or more,
     * doubled until they do (as shiro-bench-cpu counts: samples of the same length) */
    (void)mean_call(C, accum, sr, A, B, 2);
    int64_t k = 1;
    double t = mean_call(C, accum, sr, A, B, k);
    while (t * (double)k < 2e-3 && k < 100000) t = mean_call(C, accum, sr, A, B, k *= 2);
    int64_t calls = t > 0 ? (int64_t)(ms * 1e-3 / t) : 1000;
    if (calls < 1) calls = 1;
    best[v] = 1e300;
    for (int r = 0; r < reps; r++) {
      t = now();
      for (int64_t i = 0; i < calls; i++) {
        OK(GrB_mxm(C, NULL, accum, sr, A, B, NULL));
        OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
      }
      t = (now() - t) / (double)calls;
      if (t < best[v]) best[v] = t;
    }
  }
  GrB_Matrix_free(&A);
  GrB_Matrix_free(&B);
  GrB_Matrix_free(&C);
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long n[MAX_LIST] = {32}, th[MAX_LIST] = {1}, dt[MAX_LIST] = {1};
  int nn = 1, nth = 1, ndt = 1, reps = 5;
  double ms = 200;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      path = a;
      continue;
    }
    if (!v) {
      fprintf(stderr, "peer-graphblas: %s needs a value\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--n")) {
      if (!(nn = list(v, 1, 4096, n))) {
        fprintf(stderr, "peer-graphblas: --n: bad list '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--threads")) {
      if (!(nth = list(v, 1, 1024, th))) {
        fprintf(stderr, "peer-graphblas: --threads: bad list '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--dtype")) {
      ndt = 0;
      char buf[64];
      snprintf(buf, sizeof buf, "%s", v);
      for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (ndt >= MAX_LIST || (strcmp(t, "double") && strcmp(t, "float"))) {
          fprintf(stderr, "peer-graphblas: --dtype: expected float or double, found '%s'\n", t);
          return 2;
        }
        dt[ndt++] = !strcmp(t, "double");
      }
    } else if (!strcmp(a, "--reps")) reps = atoi(v);
    else if (!strcmp(a, "--ms")) ms = atof(v);
    else {
      fprintf(stderr, "peer-graphblas: unknown option '%s'\n", a);
      return 2;
    }
  }
  if (!path || reps < 1 || !(ms > 0)) {
    fprintf(stderr, "usage: peer-graphblas MATRIX.mtx[.gz] [--n 32,...] [--dtype double,float] [--threads 1,2] [--reps 5] [--ms 200]\n");
    return 2;
  }
  mtx_csr M;
  if (mtx_read(path, &M)) return 1;
  OK(GrB_init(GrB_NONBLOCKING));
  for (int d = 0; d < ndt; d++)
    for (int j = 0; j < nn; j++)
      for (int t = 0; t < nth; t++) {
        double s[2];
        bench(&M, (int)dt[d], n[j], (int)th[t], reps, ms, s);
        printf("peer-graphblas matrix=%s nnz=%lld threads=%ld dtype=%s n=%ld mxm_ms=%.4f accum_ms=%.4f best_ms=%.4f\n", path,
               (long long)M.nnz, th[t], dt[d] ? "double" : "float", n[j], 1e3 * s[0], 1e3 * s[1], 1e3 * (s[0] < s[1] ? s[0] : s[1]));
        fflush(stdout);
      }
  GrB_finalize();
  mtx_free(&M);
  return 0;
}
