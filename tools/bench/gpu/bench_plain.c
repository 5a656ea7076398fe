/* bench_plain.c — the references of shiro-bench-gpu: a plain cuSPARSE SpMM of
 * the whole matrix, and the own gather / scatter-add kernels on synthetic rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cusparse.h>

#include "bench.h"
#include "cuda_kernels.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

#define TRY(expr)                                                                                 \
  do {                                                                                            \
    cudaError_t e_ = (expr);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      snprintf(why, why_len, "%s:%d: %s: %s", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)
#define TRYSP(expr)                                                                                   \
  do {                                                                                                \
    cusparseStatus_t e_ = (expr);                                                                     \
    if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                              \
      snprintf(why, why_len, "%s:%d: %s: %s", __FILE__, __LINE__, #expr, cusparseGetErrorString(e_)); \
      goto done;                                                                                      \
    }                                                                                                 \
  } while (0)

int bench_plain_spmm(const bench_csr *A, int is_double, int64_t n, int alg, int warmup, int reps, void *C_out,
                     bench_plain *out, char *why, size_t why_len) {
  int rc = 1;
  const size_t esz = is_double ? 8 : 4;
  const cudaDataType t = is_double ? CUDA_R_64F : CUDA_R_32F;
  int32_t *hp = malloc((size_t)(A->m + 1) * sizeof *hp), *dp = NULL, *dj = NULL;
  void *hv = malloc((size_t)(A->nnz ? A->nnz : 1) * esz), *dv = NULL, *dB = NULL, *dC = NULL, *work = NULL;
  double *dev = calloc((size_t)reps, sizeof *dev), *host = calloc((size_t)reps, sizeof *host);
  cusparseHandle_t h = NULL;
  cusparseSpMatDescr_t mA = NULL;
  cusparseDnMatDescr_t mB = NULL, mC = NULL;
  cudaStream_t s = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void *alpha = is_double ? (const void *)&one_d : (const void *)&one_f;
  const void *beta = is_double ? (const void *)&zero_d : (const void *)&zero_f;
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  memset(out, 0, sizeof *out);
  if (!hp || !hv || !dev || !host || A->nnz > INT32_MAX) {
    snprintf(why, why_len, "out of memory or nnz > 2^31");
    goto done;
  }
  for (int64_t i = 0; i <= A->m; i++) hp[i] = (int32_t)A->Ap[i];
  for (int64_t e = 0; e < A->nnz; e++) {
    if (is_double) ((double *)hv)[e] = A->Ax[e];
    else ((float *)hv)[e] = (float)A->Ax[e];
  }
  TRY(cudaStreamCreate(&s));
  TRY(cudaEventCreate(&e0));
  TRY(cudaEventCreate(&e1));
  TRY(cudaMalloc((void **)&dp, (size_t)(A->m + 1) * sizeof *dp));
  TRY(cudaMalloc((void **)&dj, (size_t)(A->nnz ? A->nnz : 1) * sizeof *dj));
  TRY(cudaMalloc(&dv, (size_t)(A->nnz ? A->nnz : 1) * esz));
  TRY(cudaMalloc(&dB, (size_t)A->k * (size_t)n * esz));
  dC = C_out;
  if (!dC) TRY(cudaMalloc(&dC, (size_t)A->m * (size_t)n * esz));
  TRY(cudaMemcpy(dp, hp, (size_t)(A->m + 1) * sizeof *dp, cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(dj, A->Aj, (size_t)A->nnz * sizeof *dj, cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(dv, hv, (size_t)A->nnz * esz, cudaMemcpyHostToDevice));
  TRY(bench_fill(dB, (size_t)A->k * (size_t)n, is_double, 1, s)); /* the same B as the replay's (seed 1) */
  TRYSP(cusparseCreate(&h));
  TRYSP(cusparseSetStream(h, s));
  TRYSP(cusparseCreateCsr(&mA, A->m, A->k, A->nnz, dp, dj, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t));
  TRYSP(cusparseCreateDnMat(&mB, A->k, n, n, dB, t, CUSPARSE_ORDER_ROW));
  TRYSP(cusparseCreateDnMat(&mC, A->m, n, n, dC, t, CUSPARSE_ORDER_ROW));
  cusparseStatus_t cs = cusparseSpMM_bufferSize(h, nt, nt, alpha, mA, mB, beta, mC, t, (cusparseSpMMAlg_t)alg, &bytes);
  if (cs == CUSPARSE_STATUS_NOT_SUPPORTED || cs == CUSPARSE_STATUS_INVALID_VALUE) {
    snprintf(why, why_len, "cuSPARSE declined algorithm %d: %s", alg, cusparseGetErrorString(cs));
    rc = 0;
    goto done;
  }
  TRYSP(cs);
  TRY(cudaMalloc(&work, bytes ? bytes : 16));
  cs = cusparseSpMM_preprocess(h, nt, nt, alpha, mA, mB, beta, mC, t, (cusparseSpMMAlg_t)alg, work);
  if (cs != CUSPARSE_STATUS_SUCCESS && cs != CUSPARSE_STATUS_NOT_SUPPORTED) TRYSP(cs);
  for (int r = 0; r < warmup; r++) TRYSP(cusparseSpMM(h, nt, nt, alpha, mA, mB, beta, mC, t, (cusparseSpMMAlg_t)alg, work));
  TRY(cudaStreamSynchronize(s));
  for (int r = 0; r < reps; r++) {
    float ms = 0;
    double t0 = now_ms();
    TRY(cudaEventRecord(e0, s));
    TRYSP(cusparseSpMM(h, nt, nt, alpha, mA, mB, beta, mC, t, (cusparseSpMMAlg_t)alg, work));
    TRY(cudaEventRecord(e1, s));
    TRY(cudaStreamSynchronize(s));
    host[r] = now_ms() - t0;
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    dev[r] = ms;
  }
  out->dev_ms = bench_median(dev, reps);
  out->host_ms = bench_median(host, reps);
  out->ok = 1;
  rc = 0;
done:
  if (mA) cusparseDestroySpMat(mA);
  if (mB) cusparseDestroyDnMat(mB);
  if (mC) cusparseDestroyDnMat(mC);
  if (h) cusparseDestroy(h);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (s) cudaStreamDestroy(s);
  cudaFree(dp);
  cudaFree(dj);
  cudaFree(dv);
  cudaFree(dB);
  if (dC != C_out) cudaFree(dC);
  cudaFree(work);
  free(hp);
  free(hv);
  free(dev);
  free(host);
  return rc;
}

/* Median device time in ms of `reps` launches of m (after warm-up). */
static int time_mul(const cuda_mul *m, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int warmup, int reps, double *ms_out,
                    char *why, size_t why_len) {
  int rc = 1;
  double *v = calloc((size_t)reps, sizeof *v);
  if (!v) {
    snprintf(why, why_len, "out of memory");
    return 1;
  }
  for (int r = 0; r < warmup; r++) TRY(cuda_mul_launch(m, s));
  for (int r = 0; r < reps; r++) {
    float ms = 0;
    TRY(cudaEventRecord(e0, s));
    TRY(cuda_mul_launch(m, s));
    TRY(cudaEventRecord(e1, s));
    TRY(cudaEventSynchronize(e1));
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    v[r] = ms;
  }
  *ms_out = bench_median(v, reps);
  rc = 0;
done:
  free(v);
  return rc;
}

int bench_kernels(int64_t rows, int is_double, int64_t n, int warmup, int reps, uint64_t seed, bench_bw *out, char *why,
                  size_t why_len) {
  int rc = 1;
  const size_t esz = is_double ? 8 : 4, row_bytes = (size_t)n * esz;
  const int64_t sel = rows / 4;
  int32_t *perm = malloc((size_t)rows * sizeof *perm), *hptr = malloc((size_t)(sel + 1) * sizeof *hptr), *hcol4 = NULL;
  int32_t *d_idx = NULL, *d_rows = NULL, *d_ptr4 = NULL, *d_col4 = NULL, *d_iota = NULL;
  void *dB = NULL, *dS = NULL, *dR = NULL;
  cudaStream_t s = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double ms = 0;
  memset(out, 0, sizeof *out);
  hcol4 = malloc((size_t)(4 * sel + 1) * sizeof *hcol4);
  if (!perm || !hptr || !hcol4 || sel < 1) {
    snprintf(why, why_len, "out of memory (or too few rows)");
    goto done;
  }
  /* Random distinct rows: a prefix of a seeded shuffle. */
  uint64_t x = seed | 1;
  for (int64_t i = 0; i < rows; i++) perm[i] = (int32_t)i;
  for (int64_t i = rows - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t j = (int64_t)(x % (uint64_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  TRY(cudaStreamCreate(&s));
  TRY(cudaEventCreate(&e0));
  TRY(cudaEventCreate(&e1));
  TRY(cudaMalloc(&dB, (size_t)rows * row_bytes));
  TRY(cudaMalloc(&dS, (size_t)sel * row_bytes));
  TRY(cudaMalloc(&dR, (size_t)4 * sel * row_bytes));
  TRY(cudaMalloc((void **)&d_idx, (size_t)sel * sizeof *d_idx));
  TRY(cudaMalloc((void **)&d_iota, (size_t)sel * sizeof *d_iota));
  TRY(cudaMalloc((void **)&d_rows, (size_t)sel * sizeof *d_rows));
  TRY(cudaMalloc((void **)&d_ptr4, (size_t)(sel + 1) * sizeof *d_ptr4));
  TRY(cudaMalloc((void **)&d_col4, (size_t)4 * sel * sizeof *d_col4));
  TRY(bench_fill(dB, (size_t)rows * (size_t)n, is_double, seed, s));
  TRY(bench_fill(dR, (size_t)4 * sel * (size_t)n, is_double, seed + 1, s));
  TRY(cudaMemcpy(d_idx, perm, (size_t)sel * sizeof *d_idx, cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(d_rows, perm + sel, (size_t)sel * sizeof *d_rows, cudaMemcpyHostToDevice));
  for (int64_t i = 0; i < sel; i++) hcol4[i] = (int32_t)i; /* one R row per destination, in order */
  TRY(cudaMemcpy(d_iota, hcol4, (size_t)sel * sizeof *d_iota, cudaMemcpyHostToDevice));
  for (int64_t i = 0; i <= sel; i++) hptr[i] = (int32_t)(4 * i);
  for (int64_t i = 0; i < 4 * sel; i++) hcol4[i] = (int32_t)((i % 4) * sel + i / 4); /* 4 R rows, far apart */
  TRY(cudaMemcpy(d_ptr4, hptr, (size_t)(sel + 1) * sizeof *d_ptr4, cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(d_col4, hcol4, (size_t)4 * sel * sizeof *d_col4, cudaMemcpyHostToDevice));
  { /* gather: S = B[idx] */
    cuda_mul m = {dS, dB, NULL, d_idx, NULL, NULL, sel, n, is_double, 0};
    cuda_mul_shape(&m, &out->vec_bytes, &out->group);
    if (time_mul(&m, s, e0, e1, warmup, reps, &ms, why, why_len)) goto done;
    out->gather_gbs = 2.0 * (double)sel * (double)row_bytes / (ms * 1e6);
  }
  { /* scatter-add, one row each: B[rows] += R[i] (B stands in for C) */
    cuda_mul m = {dB, dR, NULL, d_iota, NULL, d_rows, sel, n, is_double, 1};
    if (time_mul(&m, s, e0, e1, warmup, reps, &ms, why, why_len)) goto done;
    out->add1_gbs = 3.0 * (double)sel * (double)row_bytes / (ms * 1e6);
  }
  { /* scatter-add, four rows each, summed in order */
    cuda_mul m = {dB, dR, d_ptr4, d_col4, NULL, d_rows, sel, n, is_double, 1};
    if (time_mul(&m, s, e0, e1, warmup, reps, &ms, why, why_len)) goto done;
    out->add4_gbs = 6.0 * (double)sel * (double)row_bytes / (ms * 1e6);
  }
  rc = 0;
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (s) cudaStreamDestroy(s);
  cudaFree(dB);
  cudaFree(dS);
  cudaFree(dR);
  cudaFree(d_idx);
  cudaFree(d_iota);
  cudaFree(d_rows);
  cudaFree(d_ptr4);
  cudaFree(d_col4);
  free(perm);
  free(hptr);
  free(hcol4);
  return rc;
}
