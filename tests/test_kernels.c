/* test_kernels.c — the CPU kernels (runtime/cpu_kernels.c) against a serial
 * reference that rounds every product and every sum on its own, bit for bit.
 *
 * That is the documented arithmetic (no fused multiply-add: the build pins
 * -ffp-contract=off, and the CUDA kernels use __fmul_rn/__fadd_rn), so the
 * CPU and GPU give the same bits. The values are chosen so that a fused
 * a*b+c rounds differently from a rounded product then a rounded sum: a
 * kernel that was contracted fails here. Also: the same bits for 1 and 2
 * threads, gathers are row copies, sums without values, assign vs add,
 * listed destination rows. The build also compiles this test with
 * -march=native (test kernels-native): where the CPU has FMA, that is where
 * a compiler would contract. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test_util.h"

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return seed;
}
/* In [1, 2) with a random full mantissa and a random sign: the exact product of two such values needs
 * twice the mantissa bits, so a fused multiply-add (one rounding) and a rounded product plus a
 * rounded sum (two) differ often, in float and in double. */
static double value(void) { return (1.0 + (double)(rnd() >> 12) * 0x1p-52) * (rnd() & 1 ? 1 : -1); }

enum { NROWS = 300, NSRC = 97, N = 9, MAXE = 12 };

typedef struct operator_ {
  int64_t ptr[NROWS + 1];
  int32_t col[NROWS * MAXE];
  int32_t rows[NROWS];
  double vd[NROWS * MAXE];
  float vf[NROWS * MAXE];
} operator_;

/* A random operator: row i has 0..MAXE entries (exactly one if one_per_row), destination rows a permutation. */
static void make(operator_ *A, int one_per_row) {
  A->ptr[0] = 0;
  for (int i = 0; i < NROWS; i++) {
    int len = one_per_row ? 1 : (int)(rnd() % (MAXE + 1));
    for (int e = 0; e < len; e++) {
      int64_t k = A->ptr[i] + e;
      A->col[k] = (int32_t)(rnd() % NSRC);
      A->vd[k] = value();
      A->vf[k] = (float)value();
    }
    A->ptr[i + 1] = A->ptr[i] + len;
    A->rows[i] = i;
  }
  for (int i = NROWS - 1; i > 0; i--) {
    int j = (int)(rnd() % (uint64_t)(i + 1)), t = A->rows[i];
    A->rows[i] = A->rows[j];
    A->rows[j] = t;
  }
}

/* The reference: every product and every sum rounded on its own (volatile stops contraction). */
#define DEFINE_REF(NAME, T)                                                                                  \
  static void NAME(const operator_ *A, const T *val, int listed, int accum, T *dst, const T *src) {        \
    for (int i = 0; i < NROWS; i++) {                                                                        \
      T *d = dst + (listed ? A->rows[i] : i) * N;                                                            \
      for (int c = 0; c < N; c++) {                                                                          \
        volatile T acc = accum ? d[c] : 0;                                                                   \
        for (int64_t e = A->ptr[i]; e < A->ptr[i + 1]; e++) {                                                \
          volatile T p = val ? val[e] * src[A->col[e] * N + c] : src[A->col[e] * N + c];                     \
          acc = (accum || e > A->ptr[i]) ? acc + p : p;                                                      \
        }                                                                                                    \
        d[c] = acc;                                                                                          \
      }                                                                                                      \
    }                                                                                                        \
  }
DEFINE_REF(ref_f64, double)
DEFINE_REF(ref_f32, float)

static rt_op op_of(const operator_ *A, rt_op_kind kind, int is_double, int listed, int accum) {
  rt_op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.nrows = NROWS;
  op.ptr = A->ptr;
  op.col = A->col;
  op.val = kind != RT_MULTIPLY ? NULL : is_double ? (const void *)A->vd : (const void *)A->vf;
  op.rows = listed ? A->rows : NULL;
  op.accum = accum;
  return op;
}

/* Runs one kernel on 1 and on 2 threads and compares both with the reference, bit for bit. */
static void check(const char *what, const operator_ *A, rt_op_kind kind, int is_double, int listed, int accum) {
  const size_t esz = is_double ? 8 : 4;
  char *src = malloc(NSRC * N * esz), *init = malloc(NROWS * N * esz), *want = malloc(NROWS * N * esz);
  char *got[2] = {malloc(NROWS * N * esz), malloc(NROWS * N * esz)};
  for (int i = 0; i < NSRC * N; i++) {
    if (is_double) ((double *)src)[i] = value(); else ((float *)src)[i] = (float)value();
  }
  for (int i = 0; i < NROWS * N; i++) {
    if (is_double) ((double *)init)[i] = value(); else ((float *)init)[i] = (float)value();
  }
  memcpy(want, init, NROWS * N * esz);
  const int with_val = kind == RT_MULTIPLY;
  if (is_double) ref_f64(A, with_val ? A->vd : NULL, listed, accum, (double *)want, (const double *)src);
  else ref_f32(A, with_val ? A->vf : NULL, listed, accum, (float *)want, (const float *)src);
  rt_op op = op_of(A, kind, is_double, listed, accum);
  for (int t = 0; t < 2; t++) {
    omp_set_num_threads(t + 1);
    memcpy(got[t], init, NROWS * N * esz);
    if (kind == RT_GATHER) cpu_gather(&op, got[t], src, N * esz);
    else if (kind == RT_ADD && is_double) cpu_add_f64(&op, (double *)got[t], (const double *)src, N);
    else if (kind == RT_ADD) cpu_add_f32(&op, (float *)got[t], (const float *)src, N);
    else if (is_double) cpu_multiply_f64(&op, (double *)got[t], (const double *)src, N);
    else cpu_multiply_f32(&op, (float *)got[t], (const float *)src, N);
    int64_t bad = 0;
    for (int64_t i = 0; i < NROWS * N; i++) bad += memcmp(got[t] + i * esz, want + i * esz, esz) != 0;
    EXPECT(bad == 0, "%s (%s, %s, %s, %d thread%s): %lld of %d values differ from the separately rounded reference", what,
           is_double ? "double" : "float", listed ? "listed rows" : "contiguous", accum ? "+=" : "=", t + 1, t ? "s" : "",
           (long long)bad, NROWS * N);
  }
  free(src); free(init); free(want); free(got[0]); free(got[1]);
}

/* The reference is sensitive: on these values a fused multiply-add differs from it somewhere. */
static void check_values_discriminate(void) {
  int differ = 0;
  for (int i = 0; i < 1000 && !differ; i++) {
    double a = value(), b = value(), c = value();
    volatile double p = a * b;
    volatile double s = p + c;
    differ = s != fma(a, b, c);
  }
  EXPECT(differ, "no value triple distinguishes a fused multiply-add: the test could not catch a contraction");
}

int main(void) {
  operator_ *A = malloc(sizeof *A), *G = malloc(sizeof *G);
  make(A, 0);
  make(G, 1);
  check_values_discriminate();
  for (int d = 0; d < 2; d++)
    for (int listed = 0; listed < 2; listed++)
      for (int accum = 0; accum < 2; accum++) {
        check("multiply", A, RT_MULTIPLY, d, listed, accum);
        check("add", A, RT_ADD, d, listed, accum);
      }
  for (int d = 0; d < 2; d++)
    for (int listed = 0; listed < 2; listed++) check("gather", G, RT_GATHER, d, listed, 0);
  free(A);
  free(G);
  printf("%s: %d failures\n", test_failures ? "FAIL" : "ok", test_failures);
  return test_failures != 0;
}
