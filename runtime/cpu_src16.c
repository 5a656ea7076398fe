/* cpu_src16.c — the CPU kernels of a 16-bit context's ops that read the call's input in place: the
 * source rows bfloat16 or float16 (dense rows of n values), the destination float32.
 *
 * A 16-bit context computes in float32 (cpu_backend.c). Its input used to be widened into a float32
 * copy before the ops ran: a pass that wrote b_rows · N floats, which the ops then read back (on
 * soc-Slashdot0902 at N = 32 it was 14% of the call). These kernels widen each source value as it is
 * loaded instead. Widening is exact (bfloat16: the bits shifted left by 16; float16: every value is
 * a float), and every destination value is summed as the float32 kernels sum it (cpu_kernels.c):
 * from the destination's value (accumulating) or its first entry's term, then each further entry's
 * term in stored order, each product and each sum rounded on its own. So the bits are those of the
 * float32 kernels on the widened rows. A row's values are summed 64 columns at a time (8 vectors of
 * 8, in one walk over its entries: two walks of 32 had the 16-bit call at 0.73-0.79x float32's on
 * R-MAT s19 at N = 64), then 32, then 8, then one; the source rows of the entry 16 ahead are
 * prefetched, as the float32 kernels do. The op that alone assigns a one-rank plan's output (its
 * local product) may write 16-bit rows instead: each row summed into float32 on the stack, then
 * rounded into the caller's output (cpu_backend.c, sole_writer), which saves the rounding pass of
 * the whole output at the call's end. */
#include <string.h>

#include "cpu_src16.h"
#include "half.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SRC16_X86 1
#else
#define SRC16_X86 0
#endif

typedef float vf8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef uint16_t vh8 __attribute__((vector_size(16)));

enum { PREFETCH = 16 };

#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif /* entries ahead whose source rows are prefetched (cpu_kernels.c) */

/* 8 values at p widened: bfloat16 in portable vector code (the baseline kernels; with AVX2 the
 * intrinsics below, which GCC 12 did not make of this: bfloat16 then ran at 0.6x float16).
 * Macros, not functions: a function returning a 32-byte vector would change its ABI with the
 * instruction set (-Wpsabi). */
#define BF16_LOAD8(p)                                      \
  __extension__({                                          \
    vh8 h_;                                                \
    memcpy(&h_, (p), sizeof h_);                           \
    const vu8 w_ = __builtin_convertvector(h_, vu8) << 16; \
    vf8 f_;                                                \
    memcpy(&f_, &w_, sizeof f_);                           \
    f_;                                                    \
  })

/* float16, one value at a time (no F16C). */
#define F16_LOAD8_BASE(p)                                            \
  __extension__({                                                    \
    const uint16_t *q_ = (p);                                        \
    vf8 f_;                                                          \
    for (int k_ = 0; k_ < 8; k_++) f_[k_] = half_f16_to_f32(q_[k_]); \
    f_;                                                              \
  })

#define LDF(p) __extension__({ vf8 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define STF(p, x)                \
  do {                           \
    vf8 x_ = (x);                \
    memcpy((p), &x_, sizeof x_); \
  } while (0)

/* The term of entry e for K vectors at column c: widened source (times its value, HV). */
#define TERM16(LOAD8, HV, e, c, k) ((HV) ? LOAD8(s0 + (int64_t)col[e] * n + (c) + 8 * (k)) * val[e] \
                                         : LOAD8(s0 + (int64_t)col[e] * n + (c) + 8 * (k)))

/* Columns c .. c + 8K - 1 of one row: acc = (accum ? d : first term), then + every further term. */
#define TILE16(LOAD8, HV, K)                                                                   \
  do {                                                                                         \
    vf8 acc[K];                                                                                \
    int64_t e = e0;                                                                            \
    if (accum) {                                                                               \
      UNROLL for (int k = 0; k < (K); k++) acc[k] = LDF(d + c + 8 * k);                        \
    } else {                                                                                   \
      UNROLL for (int k = 0; k < (K); k++) acc[k] = TERM16(LOAD8, HV, e, c, k);                \
      e++;                                                                                     \
    }                                                                                          \
    for (; e < e1; e++) {                                                                      \
      if (n >= 32 && e + PREFETCH < elim) { /* each line of the tile's source: the last too */ \
        const uint16_t *p_ = s0 + (int64_t)col[e + PREFETCH] * n + c;                          \
        for (int b_ = 0; b_ < (K); b_ += 4) __builtin_prefetch(p_ + 8 * b_);                   \
        __builtin_prefetch(p_ + 8 * (K)-1);                                                    \
      }                                                                                        \
      UNROLL for (int k = 0; k < (K); k++) acc[k] = acc[k] + TERM16(LOAD8, HV, e, c, k);       \
    }                                                                                          \
    UNROLL for (int k = 0; k < (K); k++) STF(d + c + 8 * k, acc[k]);                           \
  } while (0)

/* Multiply (HV) or add of rows lo .. hi-1, any n. TO16 (a constant): the destination is 16-bit
 * (a->dst16, the caller's output, assigned: accum is 0) and each row is summed into a float32
 * scratch row on the stack, then rounded into it (half_round_row: the bits of the rounding pass
 * it replaces); else the destination is float32. */
#define DEF_ROWS16(NAME, ATTR, LOAD8, LOAD1, HV, TO16, TILE64, TILE32)                                       \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) {                                            \
    const int64_t n = a->n, *ptr = a->ptr, elim = a->ptr[hi];                                                \
    const int32_t *col = a->col, *rows = a->rows;                                                            \
    const float *val = (const float *)a->val;                                                                \
    float *d0 = (float *)(void *)a->dst;                                                                     \
    const uint16_t *s0 = (const uint16_t *)(const void *)a->src;                                             \
    const int accum = (TO16) ? 0 : a->accum, to16 = (TO16);                                                  \
    float scratch[(TO16) ? SRC16_ROW_MAX : 1];                                                               \
    (void)val, (void)scratch, (void)to16;                                                                    \
    for (int64_t i = lo; i < hi; i++) {                                                                      \
      const int64_t r = rows ? (int64_t)rows[i] : i;                                                         \
      float *d = (TO16) ? scratch : d0 + r * n;                                                              \
      const int64_t e0 = ptr[i], e1 = ptr[i + 1];                                                            \
      if (e0 == e1) {                                                                                        \
        if (TO16) memset(a->dst16 + r * n, 0, sizeof(uint16_t) * (size_t)n);                                 \
        else if (!accum) memset(d, 0, sizeof(float) * (size_t)n);                                            \
        continue;                                                                                            \
      }                                                                                                      \
      int64_t c = 0, done16 = 0; /* TO16: columns a tile rounded into dst16 itself */                        \
      (void)done16;                                                                                          \
      for (; c + 64 <= n; c += 64) TILE64(LOAD8, HV);                                                        \
      for (; c + 32 <= n; c += 32) TILE32(LOAD8, HV);                                                        \
      for (; c + 8 <= n; c += 8) TILE16(LOAD8, HV, 1);                                                       \
      for (; c < n; c++) {                                                                                   \
        int64_t e = e0;                                                                                      \
        float x;                                                                                             \
        if (accum) x = d[c];                                                                                 \
        else {                                                                                               \
          x = (HV) ? LOAD1(s0[(int64_t)col[e] * n + c]) * val[e]                                             \
                   : LOAD1(s0[(int64_t)col[e] * n + c]);                                                     \
          e++;                                                                                               \
        }                                                                                                    \
        for (; e < e1; e++)                                                                                  \
          x = x + ((HV) ? LOAD1(s0[(int64_t)col[e] * n + c]) * val[e] : LOAD1(s0[(int64_t)col[e] * n + c])); \
        d[c] = x;                                                                                            \
      }                                                                                                      \
      if (TO16) half_round_row(a->dt16, a->dst16 + r * n + done16, scratch + done16, n - done16);            \
    }                                                                                                        \
  }

/* Gathers: dst row i = src row col[ptr[0] + i], widened. */
#define DEF_GATHER16(NAME, ATTR, LOAD8, LOAD1)                    \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) { \
    const int64_t n = a->n;                                       \
    const int32_t *col = a->col + a->ptr[0], *rows = a->rows;     \
    float *d0 = (float *)(void *)a->dst;                          \
    const uint16_t *s0 = (const uint16_t *)(const void *)a->src;  \
    for (int64_t i = lo; i < hi; i++) {                           \
      float *d = d0 + (rows ? (int64_t)rows[i] : i) * n;          \
      const uint16_t *s = s0 + (int64_t)col[i] * n;               \
      int64_t c = 0;                                              \
      for (; c + 8 <= n; c += 8) STF(d + c, LOAD8(s + c));        \
      for (; c < n; c++) d[c] = LOAD1(s[c]);                      \
    }                                                             \
  }

#define TILE64_PLAIN(LOAD8, HV) TILE16(LOAD8, HV, 8)
#define TILE32_PLAIN(LOAD8, HV) TILE16(LOAD8, HV, 4)

#define DEF_SET16(P, ATTR, LOAD8, LOAD1, TILE64, TILE32)          \
  DEF_ROWS16(P##_mul, ATTR, LOAD8, LOAD1, 1, 0, TILE64, TILE32)   \
  DEF_ROWS16(P##_add, ATTR, LOAD8, LOAD1, 0, 0, TILE64, TILE32)   \
  DEF_ROWS16(P##_mul16, ATTR, LOAD8, LOAD1, 1, 1, TILE64, TILE32) \
  DEF_GATHER16(P##_gather, ATTR, LOAD8, LOAD1)

DEF_SET16(bf_base, , BF16_LOAD8, half_bf16_to_f32, TILE64_PLAIN, TILE32_PLAIN)
DEF_SET16(f16_base, , F16_LOAD8_BASE, half_f16_to_f32, TILE64_PLAIN, TILE32_PLAIN)

#if SRC16_X86
#define ATTR_AVX2 __attribute__((target("avx2")))
#define ATTR_F16C __attribute__((target("avx2,f16c")))
#define BF16_LOAD8_AVX2(p) \
  ((vf8)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#define F16_LOAD8_F16C(p) ((vf8)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
/* bfloat16, 32 columns with AVX2: two 32-byte loads widened by interleaving zeros below each value
 * (unpacklo/hi: one instruction for 8 floats, where zero-extending and shifting take two), which
 * leaves the columns of each 128-bit lane in the order 0-3 8-11 | 4-7 12-15 (of each 16): the sums
 * run in that order, and the destination rows are permuted into it and back (_mm256_permute2f128_ps)
 * once per tile. Each column's sum is the same sequence of operations: the same bits. */
#define BF16_PERM(x, y, lo, hi)                      \
  do {                                               \
    const __m256 x_ = (__m256)(x), y_ = (__m256)(y); \
    lo = (vf8)_mm256_permute2f128_ps(x_, y_, 0x20);  \
    hi = (vf8)_mm256_permute2f128_ps(x_, y_, 0x31);  \
  } while (0)
/* 16 values at p as two 16-byte loads: a 32-byte load crosses a cache line every other time in a
 * row that starts 16 bytes past a line (as glibc's malloc returns large blocks), which had
 * bfloat16 at 1.30-1.45x float16's time on the same rows (1.04-1.08x from a 64-byte start). */
#define LOAD2X16(p) _mm256_loadu2_m128i((const __m128i *)(const void *)((p) + 8), (const __m128i *)(const void *)(p))
#define BF16_TERMS(e, t, h)                                            \
  do {                                                                 \
    const uint16_t *q_ = s0 + (int64_t)col[e] * n + c + 32 * (h);      \
    const __m256i a_ = LOAD2X16(q_);                                   \
    const __m256i b_ = LOAD2X16(q_ + 16);                              \
    t[0] = (vf8)_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero_, a_)); \
    t[1] = (vf8)_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero_, a_)); \
    t[2] = (vf8)_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero_, b_)); \
    t[3] = (vf8)_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero_, b_)); \
  } while (0)
/* Two vectors of sums, x the columns 0-3 8-11 and y 4-7 12-15 of 16 (the unpacked order), rounded
 * to bfloat16 with half.c's integer steps (nearest even; NaN kept quiet) and stored in column order:
 * _mm256_packus_epi32 takes 4 values of x, 4 of y, per 128-bit lane. */
#define BF16_ROUND1(u)                                                                                      \
  _mm256_blendv_epi8(                                                                                       \
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),                    \
                                         _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1))), \
                        16),                                                                                \
      _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)),                                   \
      _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000)))
#define BF16_ROUND_STORE(p, x, y)                                                                         \
  do {                                                                                                    \
    const __m256i ux_ = _mm256_castps_si256((__m256)(x)), uy_ = _mm256_castps_si256((__m256)(y));         \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm256_packus_epi32(BF16_ROUND1(ux_), BF16_ROUND1(uy_))); \
  } while (0)
/* H (1 or 2) runs of 32 columns, all summed in one walk over the row's entries; to16 (a constant of
 * DEF_ROWS16): rounded into the 16-bit destination row here (done16: the columns written). */
#define TILE_BF16_AVX2(HV, H)                                                                               \
  do {                                                                                                      \
    const __m256i zero_ = _mm256_setzero_si256();                                                           \
    vf8 acc[4 * (H)], t[4];                                                                                 \
    int64_t e = e0;                                                                                         \
    if (accum) {                                                                                            \
      UNROLL for (int h = 0; h < (H); h++) {                                                                \
        BF16_PERM(LDF(d + c + 32 * h), LDF(d + c + 32 * h + 8), acc[4 * h], acc[4 * h + 1]);                \
        BF16_PERM(LDF(d + c + 32 * h + 16), LDF(d + c + 32 * h + 24), acc[4 * h + 2], acc[4 * h + 3]);      \
      }                                                                                                     \
    } else {                                                                                                \
      UNROLL for (int h = 0; h < (H); h++) {                                                                \
        BF16_TERMS(e, t, h);                                                                                \
        UNROLL for (int k = 0; k < 4; k++) acc[4 * h + k] = (HV) ? t[k] * val[e] : t[k];                    \
      }                                                                                                     \
      e++;                                                                                                  \
    }                                                                                                       \
    for (; e < e1; e++) {                                                                                   \
      if (e + PREFETCH < elim) {                                                                            \
        const uint16_t *p_ = s0 + (int64_t)col[e + PREFETCH] * n + c;                                       \
        UNROLL for (int h = 0; h < (H); h++) __builtin_prefetch(p_ + 32 * h);                               \
        __builtin_prefetch(p_ + 32 * (H)-1); /* the last line, where the row starts past a line's start */  \
      }                                                                                                     \
      UNROLL for (int h = 0; h < (H); h++) {                                                                \
        BF16_TERMS(e, t, h);                                                                                \
        UNROLL for (int k = 0; k < 4; k++) acc[4 * h + k] = acc[4 * h + k] + ((HV) ? t[k] * val[e] : t[k]); \
      }                                                                                                     \
    }                                                                                                       \
    if (to16) { /* packing lo and hi restores the columns' order: no permutation */                         \
      uint16_t *o16_ = a->dst16 + r * n + c;                                                                \
      UNROLL for (int h = 0; h < 2 * (H); h++) BF16_ROUND_STORE(o16_ + 16 * h, acc[2 * h], acc[2 * h + 1]); \
      done16 = c + 32 * (H);                                                                                \
    } else {                                                                                                \
      UNROLL for (int h = 0; h < (H); h++) {                                                                \
        vf8 o_[4];                                                                                          \
        BF16_PERM(acc[4 * h], acc[4 * h + 1], o_[0], o_[1]);                                                \
        BF16_PERM(acc[4 * h + 2], acc[4 * h + 3], o_[2], o_[3]);                                            \
        UNROLL for (int k = 0; k < 4; k++) STF(d + c + 32 * h + 8 * k, o_[k]);                              \
      }                                                                                                     \
    }                                                                                                       \
  } while (0)
#define TILE64_BF16_AVX2(LOAD8, HV) TILE_BF16_AVX2(HV, 2)
#define TILE32_BF16_AVX2(LOAD8, HV) TILE_BF16_AVX2(HV, 1)
DEF_SET16(bf_avx2, ATTR_AVX2, BF16_LOAD8_AVX2, half_bf16_to_f32, TILE64_BF16_AVX2, TILE32_BF16_AVX2)
DEF_SET16(f16_avx2, ATTR_F16C, F16_LOAD8_F16C, half_f16_to_f32, TILE64_PLAIN, TILE32_PLAIN)
#endif

rows_fn cpu_src16_kernel(int kind_gather, int has_val, int is_f16, int avx2, int to16) {
  rows_fn set[2][4] = {{bf_base_gather, bf_base_add, bf_base_mul, bf_base_mul16},
                       {f16_base_gather, f16_base_add, f16_base_mul, f16_base_mul16}};
#if SRC16_X86
  if (avx2 && !is_f16) set[0][0] = bf_avx2_gather, set[0][1] = bf_avx2_add, set[0][2] = bf_avx2_mul, set[0][3] = bf_avx2_mul16;
  if (avx2 && is_f16 && half_cpu_has_f16c())
    set[1][0] = f16_avx2_gather, set[1][1] = f16_avx2_add, set[1][2] = f16_avx2_mul, set[1][3] = f16_avx2_mul16;
#else
  (void)avx2;
#endif
  if (to16) return has_val && !kind_gather ? set[is_f16 != 0][3] : NULL;
  return set[is_f16 != 0][kind_gather ? 0 : has_val ? 2
                                                    : 1];
}
