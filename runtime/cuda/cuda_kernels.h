/* cuda_kernels.h — the backend's own kernels (cuda_kernels.cu), callable from C.
 *
 * One kernel family computes every compute op that cuSPARSE does not:
 * dst[rows] (+)= M · src with M a CSR operator, N values per row. Each
 * destination row is computed by one group of G threads (a power of two up
 * to a warp) that walks the row's entries in stored order and keeps the
 * sums in registers: no atomics, so the result is the same bits on every
 * call, and the same bits as the CPU kernel (products and sums are rounded
 * one by one, never fused). Rows are moved in 16-, 8- or 4-byte vectors,
 * the widest that the row length and both base addresses allow. */
#ifndef SHIRO_CUDA_KERNELS_H
#define SHIRO_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kept out of libshiro's exports (the C files get -fvisibility=hidden; nvcc's objects need this). */
#if defined(__GNUC__)
#define SHIRO_CUDA_HIDDEN __attribute__((visibility("hidden")))
#else
#define SHIRO_CUDA_HIDDEN
#endif

/* One launch of dst[rows] (+)= M · src. Every pointer is a device pointer. */
typedef struct cuda_mul {
  void *dst; /* destination row 0 (the op's DST_OFF already applied) */
  const void *src; /* source row 0 (SRC_OFF applied); may be NULL when M has no entries */
  const int32_t *ptr; /* [nrows+1] row pointers starting at 0, or NULL: row i has exactly entry i */
  const int32_t *col; /* [nnz] source row of each entry */
  const void *val; /* [nnz] values (float or double, as is_double), or NULL: every entry is 1 */
  const int32_t *rows; /* [nrows] destination row of M's row i, or NULL: row i */
  int64_t nrows; /* rows of M (>= 0) */
  int64_t n; /* values per row (>= 1) */
  int is_double; /* 1: double, 0: float */
  int accum; /* 1: dst += M·src; 0: dst = M·src (rows without entries become 0) */
} cuda_mul;

/* Enqueues the op on `stream`. Rows listed in `rows` must be distinct (no
 * two groups write one row) and dst must not overlap src. Returns the
 * launch's error (cudaSuccess when nothing was wrong or nrows == 0). */
SHIRO_CUDA_HIDDEN cudaError_t cuda_mul_launch(const cuda_mul *m, cudaStream_t stream);

/* The 16-bit types (bf = 1: bfloat16, 0: float16), rows × n values: widened from 16 bits at src
 * (value (i, j) at i·ld + j) into dense float32 rows at dst, or dense float32 rounded (to nearest
 * even) into 16 bits at dst (i·ld + j). The same integer steps as runtime/half.h, so the same bits as
 * the CPU backend's conversions. Enqueued on stream; returns the launch's error. */
SHIRO_CUDA_HIDDEN cudaError_t cuda_half_widen(int bf, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t ld,
                                              cudaStream_t stream);
SHIRO_CUDA_HIDDEN cudaError_t cuda_half_round(int bf, uint16_t *dst, int64_t ld, const float *src, int64_t rows, int64_t n,
                                              cudaStream_t stream);

/* The vector width in bytes (16, 8 or 4) and threads per row cuda_mul_launch picks for m. */
SHIRO_CUDA_HIDDEN void cuda_mul_shape(const cuda_mul *m, int *vec_bytes, int *group);

#ifdef __cplusplus
}
#endif
#endif
