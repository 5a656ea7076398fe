/* half.c — rows of 16-bit values widened to float32 and float32 rounded back (half.h).
 *
 * Dense rows (the common case) run as flat loops: bfloat16's as AVX2 integer code where the CPU
 * has it (the same steps as half.h's, 8 values at a time), float16's with F16C's
 * VCVTPH2PS / VCVTPS2PH (round to nearest even) where the CPU has them, whose bits equal the
 * portable half.h functions' on every float (tests/unit/test_half.c checks all 2^32), and the
 * portable functions elsewhere. Strided rows (the caller's layouts) take the portable functions. */
#include "half.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HALF_X86 1
#else
#define HALF_X86 0
#endif

/* Branch-free bfloat16 rounding of one float's bits (NaN: quiet, as half_f32_to_bf16). */
static inline uint16_t bf16_round_bits(uint32_t u) {
  const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x40u;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

static void bf16_widen_base(float *d, const uint16_t *s, int64_t lo, int64_t hi) {
  for (int64_t k = lo; k < hi; k++) d[k] = half_bf16_to_f32(s[k]);
}
static void bf16_round_base(uint16_t *d, const float *s, int64_t lo, int64_t hi) {
  for (int64_t k = lo; k < hi; k++) d[k] = bf16_round_bits(half_f32_bits(s[k]));
}
#if HALF_X86
/* bfloat16 with AVX2, 8 values at a time: the same integer steps as bf16_round_bits. */
__attribute__((target("avx2"))) static void bf16_widen_avx2(float *d, const uint16_t *s, int64_t lo, int64_t hi) {
  int64_t k = lo;
  for (; k + 8 <= hi; k += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(s + k)));
    _mm256_storeu_si256((__m256i *)(void *)(d + k), _mm256_slli_epi32(w, 16));
  }
  bf16_widen_base(d, s, k, hi);
}
__attribute__((target("avx2"))) static void bf16_round_avx2(uint16_t *d, const float *s, int64_t lo, int64_t hi) {
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), abs = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000), quiet = _mm256_set1_epi32(0x40);
  int64_t k = lo;
  for (; k + 8 <= hi; k += 8) {
    const __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(s + k));
    const __m256i hi16 = _mm256_srli_epi32(u, 16);
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, bias), _mm256_and_si256(hi16, one)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);
    const __m256i v = _mm256_blendv_epi8(r, _mm256_or_si256(hi16, quiet), nan);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0x08); /* lanes 0 and 2 */
    _mm_storeu_si128((__m128i *)(void *)(d + k), _mm256_castsi256_si128(packed));
  }
  bf16_round_base(d, s, k, hi);
}

__attribute__((target("avx2,f16c"))) static void f16_widen_f16c(float *d, const uint16_t *s, int64_t lo, int64_t hi) {
  int64_t k = lo;
  for (; k + 8 <= hi; k += 8) _mm256_storeu_ps(d + k, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + k))));
  for (; k < hi; k++) d[k] = half_f16_to_f32(s[k]);
}
__attribute__((target("avx2,f16c"))) static void f16_round_f16c(uint16_t *d, const float *s, int64_t lo, int64_t hi) {
  int64_t k = lo;
  for (; k + 8 <= hi; k += 8)
    _mm_storeu_si128((__m128i *)(void *)(d + k), _mm256_cvtps_ph(_mm256_loadu_ps(s + k), _MM_FROUND_TO_NEAREST_INT));
  for (; k < hi; k++) d[k] = half_f32_to_f16(s[k]);
}
#endif
static void f16_widen_base(float *d, const uint16_t *s, int64_t lo, int64_t hi) {
  for (int64_t k = lo; k < hi; k++) d[k] = half_f16_to_f32(s[k]);
}
static void f16_round_base(uint16_t *d, const float *s, int64_t lo, int64_t hi) {
  for (int64_t k = lo; k < hi; k++) d[k] = half_f32_to_f16(s[k]);
}

int half_cpu_has_f16c(void) {
#if HALF_X86
  /* F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports knows no "f16c". */
  unsigned a = 0, b = 0, c = 0, d = 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
#else
  return 0;
#endif
}

typedef void (*widen_fn)(float *, const uint16_t *, int64_t, int64_t);
typedef void (*round_fn)(uint16_t *, const float *, int64_t, int64_t);

/* The dense loops for this CPU: [0] bfloat16, [1] float16. */
static void pick(widen_fn w[2], round_fn r[2]) {
  w[0] = bf16_widen_base, r[0] = bf16_round_base, w[1] = f16_widen_base, r[1] = f16_round_base;
#if HALF_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) w[0] = bf16_widen_avx2, r[0] = bf16_round_avx2;
  if (half_cpu_has_f16c()) w[1] = f16_widen_f16c, r[1] = f16_round_f16c;
#endif
}

void half_round_row(shiro_dtype dt, uint16_t *dst, const float *src, int64_t n) {
  static round_fn r[2]; /* picked once: every thread that calls picks the same */
  if (!__atomic_load_n(&r[1], __ATOMIC_ACQUIRE)) {
    widen_fn w[2];
    round_fn p[2];
    pick(w, p);
    __atomic_store_n(&r[0], p[0], __ATOMIC_RELAXED);
    __atomic_store_n(&r[1], p[1], __ATOMIC_RELEASE);
  }
  r[dt != SHIRO_BFLOAT16](dst, src, 0, n);
}

/* Pieces of a dense conversion on `threads` threads: contiguous, at least 2^15 values each. */
static int pieces(int64_t all, int threads) {
  const int64_t most = all >> 15;
  return threads > 1 && most > 1 ? (int)(most < threads ? most : threads) : 1;
}

void half_widen(shiro_dtype dt, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t srs, int64_t scs,
                int threads) {
  const int bf = dt == SHIRO_BFLOAT16;
  if (scs == 1 && srs == n) { /* dense rows: one flat range */
    widen_fn w[2];
    round_fn r[2];
    pick(w, r);
    const int64_t all = rows * n;
    const int np = pieces(all, threads);
#pragma omp parallel for schedule(static) num_threads(np) if (np > 1)
    for (int p = 0; p < np; p++) w[!bf](dst, src, all * p / np, all * (p + 1) / np);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows * n >= (1 << 16))
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++) {
      const uint16_t h = src[i * srs + j * scs];
      dst[i * n + j] = bf ? half_bf16_to_f32(h) : half_f16_to_f32(h);
    }
}

void half_round(shiro_dtype dt, uint16_t *dst, int64_t drs, int64_t dcs, const float *src, int64_t rows, int64_t n,
                int threads) {
  const int bf = dt == SHIRO_BFLOAT16;
  if (dcs == 1 && drs == n) {
    widen_fn w[2];
    round_fn r[2];
    pick(w, r);
    const int64_t all = rows * n;
    const int np = pieces(all, threads);
#pragma omp parallel for schedule(static) num_threads(np) if (np > 1)
    for (int p = 0; p < np; p++) r[!bf](dst, src, all * p / np, all * (p + 1) / np);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows * n >= (1 << 16))
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++) {
      const float f = src[i * n + j];
      dst[i * drs + j * dcs] = bf ? half_f32_to_bf16(f) : half_f32_to_f16(f);
    }
}

uint16_t shiro_float_to_16(shiro_dtype dtype, float x) {
  return dtype == SHIRO_BFLOAT16 ? half_f32_to_bf16(x) : dtype == SHIRO_FLOAT16 ? half_f32_to_f16(x)
                                                                                : 0;
}

float shiro_16_to_float(shiro_dtype dtype, uint16_t h) {
  return dtype == SHIRO_BFLOAT16 ? half_bf16_to_f32(h) : dtype == SHIRO_FLOAT16 ? half_f16_to_f32(h)
                                                                                : 0.0f;
}
