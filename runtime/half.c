/* half.c — rows of 16-bit values widened to float32 and float32 rounded back (half.h). Portable C;
 * dense rows (the common case) run as one flat loop the compiler vectorizes for bfloat16. */
#include "half.h"

void half_widen(shiro_dtype dt, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t srs, int64_t scs,
                int threads) {
  const int bf = dt == SHIRO_BFLOAT16;
  if (scs == 1 && srs == n) { /* dense rows: one flat loop */
    const int64_t all = rows * n;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && all >= (1 << 16))
    for (int64_t k = 0; k < all; k++) dst[k] = bf ? half_bf16_to_f32(src[k]) : half_f16_to_f32(src[k]);
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
    const int64_t all = rows * n;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && all >= (1 << 16))
    for (int64_t k = 0; k < all; k++) dst[k] = bf ? half_f32_to_bf16(src[k]) : half_f32_to_f16(src[k]);
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
  return dtype == SHIRO_BFLOAT16 ? half_f32_to_bf16(x) : dtype == SHIRO_FLOAT16 ? half_f32_to_f16(x) : 0;
}

float shiro_16_to_float(shiro_dtype dtype, uint16_t h) {
  return dtype == SHIRO_BFLOAT16 ? half_bf16_to_f32(h) : dtype == SHIRO_FLOAT16 ? half_f16_to_f32(h) : 0.0f;
}
