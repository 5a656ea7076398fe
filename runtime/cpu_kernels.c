/* cpu_kernels.c — the one compute shape of a plan, dst[rows] (+)= M · src, on CPU threads. */
#include <string.h>

#include "internal.h"

/* One row: d (+)= Σ_e v_e · src[col_e], N values, entries in stored order. */
#define DEFINE_MUL(NAME, T)                                                                        \
  void NAME(const prog_rank *pr, const int64_t *op, const T *val, T *dst, const T *src, int64_t n) { \
    const int64_t nrows = op[OPF_NROWS];                                                           \
    const int64_t *ptr = pr->ptr + op[OPF_PTR_OFF];                                                \
    const int32_t *rows = op[OPF_ROWS_OFF] >= 0 ? pr->rows + op[OPF_ROWS_OFF] : NULL;             \
    const int32_t *col = pr->col;                                                                  \
    const int has_val = (int)op[OPF_HAS_VAL], accum = (int)op[OPF_ACCUM];                          \
    T *restrict d0 = dst + op[OPF_DST_OFF] * n;                                                    \
    const T *restrict s0 = src + op[OPF_SRC_OFF] * n;                                              \
    _Pragma("omp parallel for schedule(dynamic, 64) if (nrows * n > 32768)")                       \
    for (int64_t i = 0; i < nrows; i++) {                                                          \
      T *restrict d = d0 + (rows ? rows[i] : i) * n;                                               \
      int64_t e = ptr[i], end = ptr[i + 1];                                                        \
      if (!accum) {                                                                                \
        if (e == end) { memset(d, 0, (size_t)n * sizeof(T)); continue; }                           \
        const T *restrict s = s0 + (int64_t)col[e] * n;                                            \
        if (has_val) { const T v = val[e]; for (int64_t c = 0; c < n; c++) d[c] = v * s[c]; }      \
        else memcpy(d, s, (size_t)n * sizeof(T));                                                  \
        e++;                                                                                       \
      }                                                                                            \
      for (; e < end; e++) {                                                                       \
        const T *restrict s = s0 + (int64_t)col[e] * n;                                            \
        if (has_val) { const T v = val[e]; for (int64_t c = 0; c < n; c++) d[c] += v * s[c]; }     \
        else for (int64_t c = 0; c < n; c++) d[c] += s[c];                                         \
      }                                                                                            \
    }                                                                                              \
  }

DEFINE_MUL(cpu_mul_f64, double)
DEFINE_MUL(cpu_mul_f32, float)
