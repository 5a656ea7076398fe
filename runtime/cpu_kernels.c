/* cpu_kernels.c — the CPU kernels of the three compute shapes, on OpenMP threads.
 *
 * Each destination row is computed by one thread, entries in stored order,
 * so the bits do not depend on the thread count. */
#include <string.h>

#include "internal.h"

/* One row: d (+)= Σ_e v_e · src[col_e] (HAS_VAL) or Σ_e src[col_e], N values, entries in stored order. */
#define DEFINE_ROWS(NAME, T, HAS_VAL, PARAMS, VAL)                                                 \
  void NAME PARAMS {                                                                               \
    const int64_t nrows = op->nrows, *ptr = op->ptr;                                               \
    const int32_t *rows = op->rows, *col = op->col;                                                \
    const T *val = op->val; (void)val;                                                             \
    const int accum = op->accum;                                                                   \
    T *restrict d0 = dst + op->dst_off * n;                                                        \
    const T *restrict s0 = src + op->src_off * n;                                                  \
    _Pragma("omp parallel for schedule(dynamic, 64) if (nrows * n > 32768)")                       \
    for (int64_t i = 0; i < nrows; i++) {                                                          \
      T *restrict d = d0 + (rows ? rows[i] : i) * n;                                               \
      int64_t e = ptr[i], end = ptr[i + 1];                                                        \
      if (!accum) {                                                                                \
        if (e == end) { memset(d, 0, (size_t)n * sizeof(T)); continue; }                           \
        const T *restrict s = s0 + (int64_t)col[e] * n;                                            \
        if (HAS_VAL) { const T v = VAL; for (int64_t c = 0; c < n; c++) d[c] = v * s[c]; }         \
        else memcpy(d, s, (size_t)n * sizeof(T));                                                  \
        e++;                                                                                       \
      }                                                                                            \
      for (; e < end; e++) {                                                                       \
        const T *restrict s = s0 + (int64_t)col[e] * n;                                            \
        if (HAS_VAL) { const T v = VAL; for (int64_t c = 0; c < n; c++) d[c] += v * s[c]; }        \
        else for (int64_t c = 0; c < n; c++) d[c] += s[c];                                         \
      }                                                                                            \
    }                                                                                              \
  }

DEFINE_ROWS(cpu_multiply_f64, double, 1, (const rt_op *op, double *dst, const double *src, int64_t n), val[e])
DEFINE_ROWS(cpu_multiply_f32, float, 1, (const rt_op *op, float *dst, const float *src, int64_t n), val[e])
DEFINE_ROWS(cpu_add_f64, double, 0, (const rt_op *op, double *dst, const double *src, int64_t n), 1)
DEFINE_ROWS(cpu_add_f32, float, 0, (const rt_op *op, float *dst, const float *src, int64_t n), 1)

void cpu_gather(const rt_op *op, void *dst, const void *src, size_t row_bytes) {
  const int64_t nrows = op->nrows, *ptr = op->ptr;
  const int32_t *rows = op->rows, *col = op->col;
  char *restrict d0 = (char *)dst + (size_t)op->dst_off * row_bytes;
  const char *restrict s0 = (const char *)src + (size_t)op->src_off * row_bytes;
#pragma omp parallel for schedule(static) if ((size_t)nrows * row_bytes > 262144)
  for (int64_t i = 0; i < nrows; i++)
    memcpy(d0 + (size_t)(rows ? rows[i] : i) * row_bytes, s0 + (size_t)col[ptr[i]] * row_bytes, row_bytes);
}
