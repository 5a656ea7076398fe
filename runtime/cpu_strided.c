/* cpu_strided.c — the CPU kernels for B and C in the caller's layout: column-major, or row-major
 * with a leading dimension above N (shiro_spmm_layout). Value (i, j) of a buffer lies at
 * i·rs + j·cs values from its start. The sums are the dense kernels' sums (cpu_kernels.c): each
 * value starts from the destination's (accumulating) or from its first entry's term, then adds
 * every further entry's term in stored order, each product and each sum rounded on its own, so the
 * bits are the row-major call's. A row's values are summed 8 columns at a time (8 independent
 * sums per entry read, as the dense kernels' vectors do): summing one column at a time made each
 * row one chain of dependent adds, 8.6x the row-major call's time on bcsstk33 at N = 8. */
#include <string.h>

#include "cpu_kargs.h"

/* Columns c .. c+W-1 of rows lo .. hi-1 (W a constant: W independent sums per row, so that the adds
 * of one row do not wait for each other): acc = (accum ? d : the first term), then acc + term for
 * every further entry, in stored order. */
#define STRIDED_TILE(T, HV, W)                                                               \
  for (int64_t i = lo; i < hi; i++) {                                                        \
    T *d = d0 + (rows ? (int64_t)rows[i] : i) * drs + c * dcs;                               \
    const T *sc = s0 + c * scs;                                                              \
    int64_t e = ptr[i];                                                                      \
    const int64_t e1 = ptr[i + 1];                                                           \
    T x[W];                                                                                  \
    if (accum) {                                                                             \
      if (e == e1) continue;                                                                 \
      for (int k = 0; k < (W); k++) x[k] = d[k * dcs];                                       \
    } else if (e < e1) {                                                                     \
      const T *s = sc + (int64_t)col[e] * srs;                                               \
      for (int k = 0; k < (W); k++) x[k] = (HV) ? s[k * scs] * val[e] : s[k * scs];          \
      e++;                                                                                   \
    } else {                                                                                 \
      for (int k = 0; k < (W); k++) x[k] = 0;                                                \
    }                                                                                        \
    for (; e < e1; e++) {                                                                    \
      const T *s = sc + (int64_t)col[e] * srs;                                               \
      for (int k = 0; k < (W); k++) x[k] = x[k] + ((HV) ? s[k * scs] * val[e] : s[k * scs]); \
    }                                                                                        \
    for (int k = 0; k < (W); k++) d[k * dcs] = x[k];                                         \
  }

/* Rows lo .. hi-1, all N columns: tiles of 8 columns, then 4, 2, 1. */
/* clang-format off */
#define DEF_STRIDED(NAME, T, HV)                                                                  \
  static void NAME(const kargs *a, int64_t lo, int64_t hi) {                                      \
    const int64_t *ptr = a->ptr;                                                                  \
    const int32_t *col = a->col, *rows = a->rows;                                                 \
    const T *val = (const T *)a->val;                                                             \
    T *d0 = (T *)(void *)a->dst;                                                                  \
    const T *s0 = (const T *)(const void *)a->src;                                                \
    const int64_t n = a->n, drs = a->drs, dcs = a->dcs, srs = a->srs, scs = a->scs;               \
    const int accum = a->accum;                                                                   \
    (void)val;                                                                                    \
    int64_t c = 0;                                                                                \
    for (; c + 8 <= n; c += 8) { STRIDED_TILE(T, HV, 8) }                                         \
    if (c + 4 <= n) { STRIDED_TILE(T, HV, 4) c += 4; }                                            \
    if (c + 2 <= n) { STRIDED_TILE(T, HV, 2) c += 2; }                                            \
    if (c < n) { STRIDED_TILE(T, HV, 1) }                                                         \
  }
/* clang-format on */

DEF_STRIDED(strided_mul_d, double, 1)
DEF_STRIDED(strided_add_d, double, 0)
DEF_STRIDED(strided_mul_f, float, 1)
DEF_STRIDED(strided_add_f, float, 0)

/* Gathers: row i of dst is row col[ptr[0] + i] of src (one entry per row), value by value. */
#define DEF_STRIDED_GATHER(NAME, T)                                     \
  static void NAME(const kargs *a, int64_t lo, int64_t hi) {            \
    const int32_t *col = a->col + a->ptr[0], *rows = a->rows;           \
    T *d0 = (T *)(void *)a->dst;                                        \
    const T *s0 = (const T *)(const void *)a->src;                      \
    for (int64_t i = lo; i < hi; i++) {                                 \
      T *d = d0 + (rows ? (int64_t)rows[i] : i) * a->drs;               \
      const T *s = s0 + (int64_t)col[i] * a->srs;                       \
      for (int64_t j = 0; j < a->n; j++) d[j * a->dcs] = s[j * a->scs]; \
    }                                                                   \
  }

DEF_STRIDED_GATHER(strided_gather_d, double)
DEF_STRIDED_GATHER(strided_gather_f, float)

rows_fn cpu_strided_kernel(int kind_gather, int has_val, int is_double) {
  if (kind_gather) return is_double ? strided_gather_d : strided_gather_f;
  if (has_val) return is_double ? strided_mul_d : strided_mul_f;
  return is_double ? strided_add_d : strided_add_f;
}
