/* half.h — the 16-bit value types (bfloat16, IEEE float16) as bits, and their conversions to and
 * from float32: portable C, round-to-nearest-even, NaN kept NaN (made quiet), infinities and
 * subnormals exact. The same bits as F16C's VCVTPS2PH with RNE and as CUDA's __float2half_rn /
 * __float2bfloat16_rn (NaN payloads aside: a NaN becomes a quiet NaN of the same sign).
 *
 * half.c converts rows: the 16-bit contexts (shiro.h's SHIRO_BFLOAT16, SHIRO_FLOAT16) keep B and C
 * and the rows on the wire in 16 bits and compute in float32 (cpu_backend.c). */
#ifndef SHIRO_HALF_H
#define SHIRO_HALF_H

#include <stdint.h>
#include <string.h>

#include "shiro.h"

static inline uint32_t half_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float half_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* bfloat16 -> float32: exact (the upper half of the float's bits). */
static inline float half_bf16_to_f32(uint16_t h) { return half_bits_f32((uint32_t)h << 16); }

/* float32 -> bfloat16, rounded to nearest even; a NaN stays a (quiet) NaN. */
static inline uint16_t half_f32_to_bf16(float f) {
  uint32_t u = half_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* float16 -> float32: exact (subnormals normalized); a NaN is made quiet, as F16C's VCVTPH2PS does. */
static inline float half_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, m = h & 0x3ffu;
  uint32_t e = (h >> 10) & 0x1fu;
  if (e == 0x1f) return half_bits_f32(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  if (e) return half_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
  if (!m) return half_bits_f32(sign);
  uint32_t mm = m; /* subnormal: m · 2^-24, normalized */
  e = 113;
  while (!(mm & 0x400u)) {
    mm <<= 1;
    e--;
  }
  return half_bits_f32(sign | (e << 23) | ((mm & 0x3ffu) << 13));
}

/* float32 -> float16, rounded to nearest even (overflow to ±inf, underflow to subnormals and ±0);
 * a NaN stays a (quiet) NaN. */
static inline uint16_t half_f32_to_f16(float f) {
  const uint32_t x = half_f32_bits(f), ax = x & 0x7fffffffu;
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (and inf): inf */
  if (ax < 0x38800000u) { /* below 2^-14: a subnormal float16, or 0 */
    if (ax <= 0x33000000u) return sign; /* <= 2^-25: 0 (2^-25 ties to the even 0) */
    const uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e; /* 14 .. 24 */
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    uint32_t q = m >> shift;
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = ax - 0x38000000u; /* exponent rebiased from 127 to 15 */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

/* 1 for SHIRO_BFLOAT16 and SHIRO_FLOAT16. */
static inline int half_is16(shiro_dtype dt) { return dt == SHIRO_BFLOAT16 || dt == SHIRO_FLOAT16; }

/* Widens rows × n 16-bit values of type dt at src (value (i, j) at i·srs + j·scs) into dense
 * float32 rows at dst (i·n + j). Exact. Runs on `threads` OpenMP threads (1: this one). */
void half_widen(shiro_dtype dt, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t srs, int64_t scs,
                int threads);
/* Rounds dense float32 rows (i·n + j) into rows × n 16-bit values of type dt at dst (value (i, j)
 * at i·drs + j·dcs), each rounded once to nearest even. */
void half_round(shiro_dtype dt, uint16_t *dst, int64_t drs, int64_t dcs, const float *src, int64_t rows, int64_t n,
                int threads);
/* 1 where this CPU runs AVX2 and F16C (the dense float16 loops use VCVTPH2PS / VCVTPS2PH), else 0. */
int half_cpu_has_f16c(void);

/* One row of n float32 values rounded into 16-bit dst (type dt), with the vector loops of
 * half_round (the same bits); on the calling thread. */
void half_round_row(shiro_dtype dt, uint16_t *dst, const float *src, int64_t n);

#endif
