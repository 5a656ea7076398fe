/* test_half.c — the 16-bit conversions (runtime/half.h) against a reference in double arithmetic:
 *
 *   - float32 -> bfloat16 and -> float16 equal the nearest value, ties to even, computed by
 *     nearbyint on the exact quotient by the target's spacing (subnormals, overflow to inf, -0);
 *     on every 251st float and on every float whose dropped bits sit at a tie or next to one;
 *   - NaN stays NaN (quiet, same sign), infinities stay infinities;
 *   - every 16-bit value widens to a float that rounds back to the same bits (NaN: to a NaN);
 *   - where the CPU has F16C, float16's rounding equals VCVTPS2PH's on every float32 (all 2^32);
 *   - the row conversions (half_widen / half_round), dense and strided, on 1 and 2 threads. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "half.h"
#include "test_util.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_F16C_TEST 1
__attribute__((target("f16c"))) static uint16_t hw_f16(float f) {
  return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0);
}
#else
#define HAVE_F16C_TEST 0
#endif

/* x rounded to a binary format of p significand bits, least normal exponent emin, largest emax;
 * ties to even (the default rounding mode). */
static double ref_round(double x, int p, int emin, int emax) {
  if (x == 0 || isinf(x)) return x;
  int e = 0;
  (void)frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
  const int q = (e - p > emin - p + 1 ? e - p : emin - p + 1); /* exponent of the spacing */
  const double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) >= ldexp(1.0, emax + 1) ? copysign(INFINITY, x) : r;
}

static double bf_val(uint16_t h) { return (double)half_bf16_to_f32(h); }
static double f16_val(uint16_t h) { return (double)half_f16_to_f32(h); }

static long checked;

static void check_one(uint32_t u) {
  const float f = half_bits_f32(u);
  const uint16_t b = half_f32_to_bf16(f), h = half_f32_to_f16(f);
  checked++;
  if (isnan(f)) {
    EXPECT(isnan(bf_val(b)) && (b & 0x0040) && (b >> 15) == (u >> 31), "bf16(NaN %08x) = %04x", u, b);
    EXPECT(isnan(f16_val(h)) && (h & 0x0200) && (h >> 15) == (u >> 31), "f16(NaN %08x) = %04x", u, h);
    return;
  }
  const double rb = ref_round((double)f, 8, -126, 127), rh = ref_round((double)f, 11, -14, 15);
  EXPECT(bf_val(b) == rb && !signbit(bf_val(b)) == !signbit(f), "bf16(%08x = %a) = %04x = %a, expected %a", u, (double)f,
         b, bf_val(b), rb);
  EXPECT(f16_val(h) == rh && !signbit(f16_val(h)) == !signbit(f), "f16(%08x = %a) = %04x = %a, expected %a", u,
         (double)f, h, f16_val(h), rh);
}

static void check_rows(void) {
  enum { R = 37,
         N = 5 };
  float f[R * N], back[R * N];
  uint16_t h[R * N * 3];
  for (int t = 0; t < 2; t++) {
    const shiro_dtype dt = t ? SHIRO_FLOAT16 : SHIRO_BFLOAT16;
    for (int i = 0; i < R * N; i++) f[i] = (float)sin(i * 0.37) * 100.0f;
    for (int threads = 1; threads <= 2; threads++) {
      /* dense */
      half_round(dt, h, N, 1, f, R, N, threads);
      half_widen(dt, back, h, R, N, N, 1, threads);
      for (int i = 0; i < R * N; i++) {
        const uint16_t want = t ? half_f32_to_f16(f[i]) : half_f32_to_bf16(f[i]);
        EXPECT(h[i] == want, "dense round %d", i);
        EXPECT(back[i] == (t ? half_f16_to_f32(want) : half_bf16_to_f32(want)), "dense widen %d", i);
      }
      /* column-major with ld = R + 2 */
      for (int i = 0; i < R * N * 3; i++) h[i] = 0xabcd;
      half_round(dt, h, 1, R + 2, f, R, N, threads);
      half_widen(dt, back, h, R, N, 1, R + 2, threads);
      for (int i = 0; i < R; i++)
        for (int j = 0; j < N; j++) {
          const uint16_t want = t ? half_f32_to_f16(f[i * N + j]) : half_f32_to_bf16(f[i * N + j]);
          EXPECT(h[i + j * (R + 2)] == want, "strided round (%d, %d)", i, j);
          EXPECT(back[i * N + j] == (t ? half_f16_to_f32(want) : half_bf16_to_f32(want)), "strided widen");
        }
      EXPECT(h[R] == 0xabcd && h[R + 1] == 0xabcd, "the padding of ld is not touched");
    }
  }
}

/* The dense row conversions (vector paths: AVX2, F16C) against the scalar functions on floats of
 * every kind: a stride through all 2^32 bit patterns (NaN, inf, subnormals) and bfloat16's ties. */
static void check_dense_paths(void) {
  enum { M = 1 << 16 };
  static float f[M], back[M];
  static uint16_t h[M];
  for (int i = 0; i < M; i++)
    f[i] = half_bits_f32(i % 3 == 0 ? (uint32_t)i * 65521u : i % 3 == 1 ? ((uint32_t)i << 16) | 0x8000u
                                                                        : (uint32_t)i * 2654435761u);
  for (int t = 0; t < 2; t++) {
    const shiro_dtype dt = t ? SHIRO_FLOAT16 : SHIRO_BFLOAT16;
    for (int threads = 1; threads <= 2; threads++) {
      half_round(dt, h, M - 3, 1, f, 1, M - 3, threads); /* M - 3: a tail after the vectors */
      int bad = 0;
      for (int i = 0; i < M - 3; i++) bad += h[i] != (t ? half_f32_to_f16(f[i]) : half_f32_to_bf16(f[i]));
      EXPECT(!bad, "dense %s rounding: %d values differ from the scalar function's", t ? "float16" : "bfloat16", bad);
      for (int i = 0; i < M; i++) h[i] = (uint16_t)(i * 40503u);
      half_widen(dt, back, h, 1, M - 3, M - 3, 1, threads);
      bad = 0;
      for (int i = 0; i < M - 3; i++) {
        const float want = t ? half_f16_to_f32(h[i]) : half_bf16_to_f32(h[i]);
        bad += half_f32_bits(back[i]) != half_f32_bits(want);
      }
      EXPECT(!bad, "dense %s widening: %d values differ", t ? "float16" : "bfloat16", bad);
    }
  }
}

int main(void) {
  fesetround(FE_TONEAREST);
  for (uint64_t u = 0; u <= 0xffffffffu; u += 251) check_one((uint32_t)u);
  for (uint32_t hi = 0; hi < 0x10000u; hi++) /* bfloat16 drops 16 bits: at and around its ties */
    for (uint32_t lo = 0x7ffe; lo <= 0x8002; lo++) check_one(hi << 16 | lo);
  for (uint32_t hi = 0; hi < (1u << 19); hi++) { /* float16 drops 13 bits (more below 2^-14) */
    check_one(hi << 13 | 0xfff);
    check_one(hi << 13 | 0x1000);
    check_one(hi << 13 | 0x1001);
  }
  for (uint32_t e = 0x33; e <= 0x38; e++) /* float16's subnormal range: its ties lie elsewhere */
    for (uint32_t m = 0; m < (1u << 23); m += 7) check_one(e << 23 | m);
  for (uint32_t v = 0; v < 0x10000u; v++) {
    const uint16_t h = (uint16_t)v;
    const float b = half_bf16_to_f32(h), f = half_f16_to_f32(h);
    if (isnan(b)) EXPECT(isnan(bf_val(half_f32_to_bf16(b))), "bf16 NaN %04x", h);
    else EXPECT(half_f32_to_bf16(b) == h, "bf16 %04x round trip", h);
    if (isnan(f)) EXPECT(isnan(f16_val(half_f32_to_f16(f))), "f16 NaN %04x", h);
    else EXPECT(half_f32_to_f16(f) == h, "f16 %04x round trip: %a -> %04x", h, (double)f, half_f32_to_f16(f));
  }
  EXPECT(half_f32_to_f16(65504.0f) == 0x7bff && half_f32_to_f16(65519.0f) == 0x7bff && half_f32_to_f16(65520.0f) == 0x7c00,
         "float16 overflow");
  EXPECT(half_f32_to_bf16(INFINITY) == 0x7f80 && half_f32_to_bf16(-INFINITY) == 0xff80, "bfloat16 infinities");
  EXPECT(half_f32_to_f16(0x1p-24f) == 1 && half_f32_to_f16(0x1p-25f) == 0 && half_f32_to_f16(0x1.8p-24f) == 2,
         "float16 least subnormals");
  long hw = 0;
#if HAVE_F16C_TEST
  if (half_cpu_has_f16c()) {
    for (uint64_t u = 0; u <= 0xffffffffu; u++) {
      const float f = half_bits_f32((uint32_t)u);
      const uint16_t mine = half_f32_to_f16(f), theirs = hw_f16(f);
      if (mine != theirs) {
        EXPECT(mine == theirs, "f16(%08x): %04x, F16C %04x", (unsigned)u, mine, theirs);
        if (test_failures > 20) break;
      }
      hw++;
    }
  }
#endif
  check_rows();
  check_dense_paths();
  printf("%s: %ld values against the reference, %ld against F16C, %d failures\n", test_failures ? "FAIL" : "ok",
         checked, hw, test_failures);
  return test_failures != 0;
}
