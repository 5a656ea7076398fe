/* layout_copy.c — copies between the caller's layout of B or C (column-major, or row-major with a
 * leading dimension) and dense rows (row-major, ld = N): the staging of shiro_spmm_layout (layout.c).
 *
 * Values move as bits of their size (8, 4 or 2 bytes). Value (i, j) of the caller's buffer lies at i·rs + j·cs values from its start. Column-major
 * (rs = 1) is transposed in tiles of 4 × 4 values (2 × 2 for 8-byte values) in
 * registers: vector loads, shuffles, vector stores; row-major with a leading dimension (cs = 1) is one memcpy per row.
 * Values are copied, never computed: the bits are unchanged. Rows are split among `threads`
 * OpenMP threads. */
#include <stdint.h>
#include <string.h>

#include "layout_copy.h"

/* Vectors of values of each size, moved as bits. */
typedef uint64_t v2x8 __attribute__((vector_size(16)));
typedef uint32_t v4x4 __attribute__((vector_size(16)));
typedef uint16_t v4x2 __attribute__((vector_size(8)));

#define LD4(V, p) __extension__({ V v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define ST4(p, x)                          \
  do {                                     \
    __typeof__(x) x_ = (x);                \
    __builtin_memcpy((p), &x_, sizeof x_); \
  } while (0)

/* The 4 × 4 tile at a (4 vectors of stride sa values) transposed into b (stride sb): b[i][j] = a[j][i]. */
#define TILE4(V, b, sb, a, sa)                                        \
  do {                                                                \
    const V a0 = LD4(V, (a)), a1 = LD4(V, (a) + (sa));                \
    const V a2 = LD4(V, (a) + 2 * (sa)), a3 = LD4(V, (a) + 3 * (sa)); \
    const V t0 = __builtin_shufflevector(a0, a1, 0, 4, 2, 6);         \
    const V t1 = __builtin_shufflevector(a0, a1, 1, 5, 3, 7);         \
    const V t2 = __builtin_shufflevector(a2, a3, 0, 4, 2, 6);         \
    const V t3 = __builtin_shufflevector(a2, a3, 1, 5, 3, 7);         \
    ST4((b), __builtin_shufflevector(t0, t2, 0, 1, 4, 5));            \
    ST4((b) + (sb), __builtin_shufflevector(t1, t3, 0, 1, 4, 5));     \
    ST4((b) + 2 * (sb), __builtin_shufflevector(t0, t2, 2, 3, 6, 7)); \
    ST4((b) + 3 * (sb), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)); \
  } while (0)

/* The 2 × 2 tile at a (2 vectors of stride sa values) transposed into b (stride sb). */
#define TILE2(V, b, sb, a, sa)                              \
  do {                                                      \
    const V a0 = LD4(V, (a)), a1 = LD4(V, (a) + (sa));      \
    ST4((b), __builtin_shufflevector(a0, a1, 0, 2));        \
    ST4((b) + (sb), __builtin_shufflevector(a0, a1, 1, 3)); \
  } while (0)

/* Column-major (rows × n, column stride ld) to or from dense rows (rows × n), values of type T
 * (vectors V of K = 4 or 2): to_rows, d (dense) from s (column-major); else d
 * (column-major) from s (dense). Tiles of K rows × K columns, each row band's tiles in column order
 * (the dense rows are walked as they lie); what is left of K value by value. */
/* clang-format off */
#define DEF_TRANSPOSE(NAME, T, V, K)                                                                     \
  static void NAME(T *restrict d, const T *restrict s, int64_t rows, int64_t n, int64_t ld, int to_rows, \
                   int threads) {                                                                        \
    const int64_t bands = (rows + (K) - 1) / (K);                                                        \
    _Pragma("omp parallel for num_threads(threads) schedule(static) if (threads > 1)")                    \
    for (int64_t t = 0; t < bands; t++) {                                                                \
      const int64_t i0 = (K) * t, ni = rows - i0 < (K) ? rows - i0 : (K);                                \
      int64_t j0 = 0;                                                                                    \
      if (ni == (K)) {                                                                                   \
        for (; j0 + (K) <= n; j0 += (K)) {                                                               \
          if (to_rows) TILE##K(V, d + i0 * n + j0, n, s + j0 * ld + i0, ld);                             \
          else TILE##K(V, d + j0 * ld + i0, ld, s + i0 * n + j0, n);                                     \
        }                                                                                                \
      }                                                                                                  \
      for (int64_t i = i0; i < i0 + ni; i++)                                                             \
        for (int64_t j = j0; j < n; j++) {                                                               \
          if (to_rows) d[i * n + j] = s[j * ld + i];                                                     \
          else d[j * ld + i] = s[i * n + j];                                                             \
        }                                                                                                \
    }                                                                                                    \
  }

/* clang-format on */

/* 8-byte values in 2 × 2 tiles of 16-byte vectors: 4 × 4 tiles of 32-byte ones ran 1.5x slower
 * without AVX2 and 5-15% faster with it (not worth a second variant). */
DEF_TRANSPOSE(transpose_8, uint64_t, v2x8, 2)
DEF_TRANSPOSE(transpose_4, uint32_t, v4x4, 4)
DEF_TRANSPOSE(transpose_2, uint16_t, v4x2, 4)

/* Row-major with row stride ld to or from dense rows: one memcpy of n values per row. */
static void copy_rows(char *d, const char *s, int64_t rows, int64_t n, int64_t ld, int to_rows, size_t esz,
                      int threads) {
  const size_t bytes = (size_t)n * esz;
  const int64_t dstride = to_rows ? n : ld, sstride = to_rows ? ld : n;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t i = 0; i < rows; i++) memcpy(d + (size_t)(i * dstride) * esz, s + (size_t)(i * sstride) * esz, bytes);
}

void layout_copy(void *dst, const void *src, int64_t rows, int64_t n, int64_t rs, int64_t cs, int to_rows, size_t esz,
                 int threads) {
  if (rows <= 0 || n <= 0) return;
  if (cs == 1) { /* row-major with a leading dimension rs */
    copy_rows(dst, src, rows, n, rs, to_rows, esz, threads);
  } else if (esz == 8) { /* column-major: rs = 1, cs = ld; values moved as bits of their size */
    transpose_8(dst, src, rows, n, cs, to_rows, threads);
  } else if (esz == 4) {
    transpose_4(dst, src, rows, n, cs, to_rows, threads);
  } else {
    transpose_2(dst, src, rows, n, cs, to_rows, threads);
  }
}
