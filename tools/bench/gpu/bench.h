/* bench.h — pieces of shiro-bench-gpu (tools/bench/gpu): the GPU benchmark of the CUDA backend.
 *
 *   bench_gpu.c    command line, the replay and its per-op breakdown, the table
 *   bench_plain.c  plain cuSPARSE SpMM of the whole CSR, gather and scatter-add kernels
 *   bench_rmat.c   an R-MAT matrix made in memory (when no Matrix Market file is given)
 *   bench_fill.cu  device fill of dense buffers
 *
 * Times are medians over repeated runs after a warm-up: device intervals by
 * CUDA events, whole calls by the host clock around a synchronous call. */
#ifndef SHIRO_BENCH_H
#define SHIRO_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A CSR matrix on the host, 32-bit columns (what cuSPARSE and the program take). */
typedef struct bench_csr {
  int64_t m, k, nnz;
  int64_t *Ap; /* [m+1] */
  int32_t *Aj; /* [nnz] increasing within each row */
  double *Ax; /* [nnz] */
} bench_csr;

/* Frees A's arrays and zeroes it; a zeroed A is a no-op. */
void bench_csr_free(bench_csr *A);

/* R-MAT graph of 2^scale vertices and edge_factor · 2^scale generated edges
 * (a, b, c, d = 0.57, 0.19, 0.19, 0.05; directed; duplicates merged, value 1).
 * Deterministic for a seed, whatever the thread count. Returns 0 on success. */
int bench_rmat(int scale, int edge_factor, uint64_t seed, bench_csr *out);

/* Fills count values (float or double) at p with ±(1 + h/256), h a hash of (seed, index). */
cudaError_t bench_fill(void *p, size_t count, int is_double, uint64_t seed, cudaStream_t stream);

/* Median of n values (sorts v). */
double bench_median(double *v, int n);

/* Plain cuSPARSE SpMM C = A·B of the whole CSR (row-major B and C, N columns):
 * device-timed (events) and host-timed (call + synchronize) medians in ms,
 * for algorithm alg (a cusparseSpMMAlg_t). ok = 0 if cuSPARSE declined the
 * algorithm (then the times are 0). If C_out is not NULL, the final C is
 * left there (device, m × N). Returns 0 unless a CUDA call failed. */
typedef struct bench_plain {
  double dev_ms, host_ms;
  int ok;
} bench_plain;
int bench_plain_spmm(const bench_csr *A, int is_double, int64_t n, int alg, int warmup, int reps, void *C_out,
                     bench_plain *out, char *why, size_t why_len);

/* Own-kernel bandwidths over a synthetic `rows` × N buffer, 25% of the rows
 * chosen at random: gather (S = B[idx], bytes = 2 · moved rows), and the
 * deterministic scatter-add C[rows] += Σ of k rows of R each (bytes = moved
 * rows · (k + 2)). GB/s medians (1e9 bytes per second). */
typedef struct bench_bw {
  double gather_gbs, add1_gbs, add4_gbs;
  int vec_bytes, group; /* the gather's vector width and threads per row */
} bench_bw;
int bench_kernels(int64_t rows, int is_double, int64_t n, int warmup, int reps, uint64_t seed, bench_bw *out, char *why,
                  size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
