/* test_kernels.c — the CPU kernels (runtime/cpu_kernels.c) against a serial
 * reference that rounds every product and every sum on its own, bit for bit.
 *
 * That is the documented arithmetic (no fused multiply-add: the build pins
 * -ffp-contract=off, the AVX2 variants are compiled without "fma", and the
 * CUDA kernels use __fmul_rn/__fadd_rn), so the CPU and GPU give the same
 * bits. The values are chosen so that a fused a*b+c rounds differently from a
 * rounded product then a rounded sum: a kernel that was contracted fails here.
 *
 * Covered: every N with its own variant (1, 2, 4, ..., 128) and the tiled path
 * for other N (3, 7, 9, 33, 48, 100: tiles, single vectors and single values
 * at the end of a row); float and double; multiply, add (no values) and gather
 * (row copies, every row size and an odd one); assign and add; contiguous and
 * listed destination rows; the baseline and the AVX2 variants (where the CPU
 * has AVX2); 1 and 2 threads, with the threads' grain lowered so that even the
 * smallest op is split; mostly empty rows (skipped when adding); a row far heavier than the others (the split by
 * nonzeros); and the progress hook: polled between chunks, never inside a
 * parallel region, the same bits whether it asks for more polls or not. The
 * build also compiles this test with -march=native (test kernels-native):
 * where the CPU has FMA, that is where a compiler would contract. The
 * kernels of a 16-bit context that read its bfloat16 or float16 input in
 * place (cpu_src16.c) give the reference's bits on the widened rows (and,
 * where they assign 16-bit rows, those bits rounded once). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
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

/* BASE: the operator's entries start at position BASE of col / val, as a program's ops do (their
 * row pointers are absolute positions in the rank's arrays), so a kernel that assumed ptr[0] == 0
 * would read other entries. */
/* LONG_MIN..LONG_MAX: the long rows' entries, above the 16 a row from which the kernels of rows
 * of one vector take two rows at a time (cpu_kernels.c, PAIR_ROW_ENTRIES); MAXE's rows are below. */
enum { NROWS = 300,
       NSRC = 97,
       MAXE = 12,
       LONG_MIN = 17,
       LONG_MAX = 40,
       HEAVY = 2000,
       BASE = 5,
       MAXENT = BASE + NROWS * LONG_MAX + HEAVY };

typedef struct operator_ {
  int64_t ptr[NROWS + 1];
  int32_t col[MAXENT];
  int32_t rows[NROWS];
  double vd[MAXENT];
  float vf[MAXENT];
} operator_;

/* A random operator: row i has 0..MAXE entries (exactly one if one_per_row; row 7 HEAVY if heavy;
 * if sparse, 0 in 4 rows of 5 and 1..3 in the others: a remote op's shape, pairs of rows without
 * entries that the kernels skip when they add; if long_rows, LONG_MIN..LONG_MAX), destination rows
 * a permutation. */
static void make(operator_ *A, int one_per_row, int heavy, int sparse, int long_rows) {
  for (int k = 0; k < BASE; k++) { /* another op's entries */
    A->col[k] = (int32_t)(rnd() % NSRC);
    A->vd[k] = value();
    A->vf[k] = (float)value();
  }
  A->ptr[0] = BASE;
  for (int i = 0; i < NROWS; i++) {
    int len = one_per_row ? 1 : heavy && i == 7 ? HEAVY
        : sparse                                ? (rnd() % 5 ? 0 : 1 + (int)(rnd() % 3))
        : long_rows                             ? LONG_MIN + (int)(rnd() % (LONG_MAX - LONG_MIN + 1))
                                                : (int)(rnd() % (MAXE + 1));
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
#define DEFINE_REF(NAME, T)                                                                                    \
  static void NAME(const operator_ *A, const T *val, int listed, int accum, T *dst, const T *src, int64_t n) { \
    for (int i = 0; i < NROWS; i++) {                                                                          \
      T *d = dst + (listed ? A->rows[i] : i) * n;                                                              \
      for (int64_t c = 0; c < n; c++) {                                                                        \
        volatile T acc = accum ? d[c] : 0;                                                                     \
        for (int64_t e = A->ptr[i]; e < A->ptr[i + 1]; e++) {                                                  \
          volatile T p = val ? val[e] * src[A->col[e] * n + c] : src[A->col[e] * n + c];                       \
          acc = (accum || e > A->ptr[i]) ? acc + p : p;                                                        \
        }                                                                                                      \
        d[c] = acc;                                                                                            \
      }                                                                                                        \
    }                                                                                                          \
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
  op.val = kind != RT_MULTIPLY ? NULL : is_double ? (const void *)A->vd
                                                  : (const void *)A->vf;
  op.rows = listed ? A->rows : NULL;
  op.accum = accum;
  return op;
}

/* A progress hook: counts its calls, notes any inside a parallel region, asks for more or not. */
typedef struct poller {
  int calls, in_parallel, more;
} poller;
static int poll_fn(void *arg) {
  poller *p = arg;
  p->calls++;
  p->in_parallel += omp_in_parallel();
  return !p->more;
}

static int64_t grain_chunk = 256; /* the chunk set by cpu_kernels_set_grain (0: the default) */

static const char *isa_name(int isa) { return isa == CPU_ISA_AVX2 ? "avx2" : "base"; }

/* Runs one kernel on 1 and 2 threads, each instruction set, with and without a progress hook, and
 * compares with the reference, bit for bit. */
static void check(const char *what, const operator_ *A, rt_op_kind kind, int is_double, int listed, int accum,
                  int64_t n, int nisa, int polled) {
  const size_t esz = is_double ? 8 : 4, cells = (size_t)NROWS * (size_t)n;
  char *src = malloc(NSRC * (size_t)n * esz), *init = malloc(cells * esz), *want = malloc(cells * esz), *got = malloc(cells * esz);
  for (int64_t i = 0; i < NSRC * n; i++) {
    if (is_double) ((double *)src)[i] = value();
    else ((float *)src)[i] = (float)value();
  }
  for (size_t i = 0; i < cells; i++) {
    if (is_double) ((double *)init)[i] = value();
    else ((float *)init)[i] = (float)value();
  }
  memcpy(want, init, cells * esz);
  const int with_val = kind == RT_MULTIPLY;
  if (is_double) ref_f64(A, with_val ? A->vd : NULL, listed, accum, (double *)want, (const double *)src, n);
  else ref_f32(A, with_val ? A->vf : NULL, listed, accum, (float *)want, (const float *)src, n);
  rt_op op = op_of(A, kind, is_double, listed, accum);
  for (int isa = 0; isa < nisa; isa++) {
    EXPECT(cpu_kernels_force_isa(isa) == isa, "could not select the %s kernels", isa_name(isa));
    for (int run = 0; run < (polled ? 4 : 2); run++) { /* threads 1, 2; then 2 with a hook asking for more polls, or not */
      const int threads = run ? 2 : 1;
      omp_set_num_threads(threads);
      memcpy(got, init, cells * esz);
      poller pl = {0, 0, run == 2};
      const cpu_progress pg = {poll_fn, &pl};
      if (run >= 2) cpu_kernel_run(&op, got, src, is_double, n, 0, NULL, &pg);
      else if (kind == RT_GATHER) cpu_gather(&op, got, src, (size_t)n * esz);
      else if (kind == RT_ADD && is_double) cpu_add_f64(&op, (double *)got, (const double *)src, n);
      else if (kind == RT_ADD) cpu_add_f32(&op, (float *)got, (const float *)src, n);
      else if (is_double) cpu_multiply_f64(&op, (double *)got, (const double *)src, n);
      else cpu_multiply_f32(&op, (float *)got, (const float *)src, n);
      size_t bad = 0;
      for (size_t i = 0; i < cells; i++) bad += memcmp(got + i * esz, want + i * esz, esz) != 0;
      EXPECT(bad == 0, "%s (%s, N = %lld, %s, %s, %s kernels, %d thread%s%s): %zu of %zu values differ from the separately "
                       "rounded reference",
             what, is_double ? "double" : "float", (long long)n, listed ? "listed rows" : "contiguous",
             accum ? "+=" : "=", isa_name(isa), threads, threads > 1 ? "s" : "",
             run == 2 ? ", polled" : run == 3 ? ", polled once"
                                              : "",
             bad, cells);
      if (run >= 2) {
        EXPECT(pl.in_parallel == 0, "%s: the progress hook was called inside a parallel region", what);
        /* chunks of the op (cpu_kernels.c: cost = entries + rows, times N); a poll after each but the last */
        int64_t chunks = (A->ptr[NROWS] - A->ptr[0] + NROWS) * n / (grain_chunk ? grain_chunk : 1 << 18), want_calls;
        chunks = chunks > 64 ? 64 : chunks;
        want_calls = chunks < 2 ? 0 : run == 2 ? chunks - 1
                                               : 1;
        EXPECT(pl.calls == want_calls, "%s (N = %lld): %d polls, expected %lld (hook asking for %s)", what, (long long)n,
               pl.calls, (long long)want_calls, run == 2 ? "more" : "none");
      }
    }
  }
  free(src);
  free(init);
  free(want);
  free(got);
}

/* A 16-bit context's kernels reading its 16-bit input in place (cpu_kernel_run_src16: bfloat16, or
 * float16 where is_f16) against the reference on the widened rows (widening is exact), bit for bit:
 * 1 and 2 threads, each instruction set, polled. */
static void check16(const char *what, const operator_ *A, rt_op_kind kind, int is_f16, int listed, int accum,
                    int64_t n, int nisa, int to16) {
  const size_t cells = (size_t)NROWS * (size_t)n;
  uint16_t *src16 = malloc(NSRC * (size_t)n * sizeof *src16);
  float *src = malloc(NSRC * (size_t)n * sizeof *src), *init = malloc(cells * sizeof *init);
  float *want = malloc(cells * sizeof *want), *got = malloc(cells * sizeof *got);
  uint16_t *want16 = malloc(cells * sizeof *want16), *got16 = malloc(cells * sizeof *got16);
  for (int64_t i = 0; i < NSRC * n; i++) {
    /* float16 subnormals too; and 1 in 64 huge, so that products and sums overflow: infinities of
     * both signs, NaN where they meet (the rounding's special cases) */
    const float x = (float)value() * (rnd() % 64 == 0 ? 0x1p127f : rnd() % 4 ? 1.0f
                                                                             : 0x1p-20f);
    src16[i] = is_f16 ? half_f32_to_f16(x) : half_f32_to_bf16(x);
    src[i] = is_f16 ? half_f16_to_f32(src16[i]) : half_bf16_to_f32(src16[i]);
  }
  for (size_t i = 0; i < cells; i++) init[i] = (float)value();
  memcpy(want, init, cells * sizeof *want);
  ref_f32(A, kind == RT_MULTIPLY ? A->vf : NULL, listed, accum, want, src, n);
  for (size_t i = 0; i < cells; i++) want16[i] = is_f16 ? half_f32_to_f16(want[i]) : half_f32_to_bf16(want[i]);
  rt_op op = op_of(A, kind, 0, listed, accum);
  for (int isa = 0; isa < nisa; isa++) {
    EXPECT(cpu_kernels_force_isa(isa) == isa, "could not select the %s kernels", isa_name(isa));
    for (int run = 0; run < 3; run++) { /* threads 1, 2; 2 polled */
      omp_set_num_threads(run ? 2 : 1);
      memcpy(got, init, cells * sizeof *got);
      memset(got16, 0xff, cells * sizeof *got16);
      poller pl = {0, 0, 1};
      const cpu_progress pg = {poll_fn, &pl};
      cpu_kernel_run_src16(&op, got, to16 ? got16 : NULL, src16, is_f16 ? SHIRO_FLOAT16 : SHIRO_BFLOAT16, n, 0,
                           run == 2 ? &pg : NULL);
      size_t bad = 0;
      for (size_t i = 0; i < cells; i++)
        bad += to16 ? got16[i] != want16[i] : memcmp(got + i, want + i, sizeof *got) != 0;
      EXPECT(bad == 0, "%s (%s source%s, N = %lld, %s, %s, %s kernels, run %d): %zu of %zu values differ from the "
                       "float32 reference on the widened rows",
             what, is_f16 ? "float16" : "bfloat16", to16 ? " and destination" : "", (long long)n, listed ? "listed rows" : "contiguous",
             accum ? "+=" : "=", isa_name(isa), run, bad, cells);
      EXPECT(run < 2 || pl.in_parallel == 0, "%s: the progress hook was called inside a parallel region", what);
    }
  }
  free(src16);
  free(want16);
  free(got16);
  free(src);
  free(init);
  free(want);
  free(got);
}

/* Gathers of rows of any byte size (here 6: neither a float nor a power of two), 1 and 2 threads. */
static void check_gather_bytes(const operator_ *G) {
  enum { RB = 6 };
  unsigned char src[NSRC * RB], want[NROWS * RB], got[NROWS * RB];
  for (int i = 0; i < NSRC * RB; i++) src[i] = (unsigned char)rnd();
  for (int i = 0; i < NROWS; i++) memcpy(want + G->rows[i] * RB, src + G->col[G->ptr[i]] * RB, RB);
  rt_op op = op_of(G, RT_GATHER, 0, 1, 0);
  for (int t = 1; t <= 2; t++) {
    omp_set_num_threads(t);
    memset(got, 0, sizeof got);
    cpu_gather(&op, got, src, RB);
    EXPECT(!memcmp(got, want, sizeof got), "gather of %d-byte rows on %d thread(s) is not a row copy", RB, t);
  }
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
  static const int64_t ns[] = {1, 2, 4, 8, 16, 32, 64, 128, 3, 7, 9, 33, 48, 100};
  const int nn = (int)(sizeof ns / sizeof ns[0]);
  operator_ *A = malloc(sizeof *A), *G = malloc(sizeof *G), *H = malloc(sizeof *H), *Z = malloc(sizeof *Z);
  operator_ *L = malloc(sizeof *L);
  make(A, 0, 0, 0, 0);
  make(G, 1, 0, 0, 0);
  make(H, 0, 1, 0, 0);
  make(Z, 0, 0, 1, 0);
  make(L, 0, 0, 0, 1);
  check_values_discriminate();
  const int nisa = cpu_kernels_force_isa(CPU_ISA_AVX2) == CPU_ISA_AVX2 ? 2 : 1;
  if (nisa == 1) printf("note: this CPU has no AVX2; the baseline kernels only\n");
  cpu_kernels_set_grain(1, grain_chunk); /* every op split between the threads, and polled in many chunks */
  for (int j = 0; j < nn; j++) {
    const int polled = ns[j] == 1 || ns[j] == 7 || ns[j] == 32; /* each a parallel region per chunk: a few N */
    for (int d = 0; d < 2; d++)
      for (int listed = 0; listed < 2; listed++) {
        for (int accum = 0; accum < 2; accum++) {
          check("multiply", A, RT_MULTIPLY, d, listed, accum, ns[j], nisa, polled);
          check("add", A, RT_ADD, d, listed, accum, ns[j], nisa, polled);
          check("multiply, mostly empty rows", Z, RT_MULTIPLY, d, listed, accum, ns[j], nisa, 0);
          check("add, mostly empty rows", Z, RT_ADD, d, listed, accum, ns[j], nisa, 0);
          check("multiply, long rows", L, RT_MULTIPLY, d, listed, accum, ns[j], nisa, 0);
          check("add, long rows", L, RT_ADD, d, listed, accum, ns[j], nisa, 0);
        }
        check("gather", G, RT_GATHER, d, listed, 0, ns[j], nisa, polled);
      }
  }
  static const int64_t ns16[] = {1, 5, 8, 13, 40, 100}; /* scalar, tail only, whole vectors, both; several */
  for (int j = 0; j < (int)(sizeof ns16 / sizeof ns16[0]); j++)
    for (int f16 = 0; f16 < 2; f16++)
      for (int listed = 0; listed < 2; listed++) {
        for (int accum = 0; accum < 2; accum++) {
          check16("multiply", A, RT_MULTIPLY, f16, listed, accum, ns16[j], nisa, 0);
          check16("add", A, RT_ADD, f16, listed, accum, ns16[j], nisa, 0);
          check16("multiply, mostly empty rows", Z, RT_MULTIPLY, f16, listed, accum, ns16[j], nisa, 0);
          check16("multiply, long rows", L, RT_MULTIPLY, f16, listed, accum, ns16[j], nisa, 0);
        }
        check16("gather", G, RT_GATHER, f16, listed, 0, ns16[j], nisa, 0);
        check16("multiply into 16-bit rows", A, RT_MULTIPLY, f16, listed, 0, ns16[j], nisa, 1);
        check16("multiply into 16-bit rows, mostly empty rows", Z, RT_MULTIPLY, f16, listed, 0, ns16[j], nisa, 1);
      }
  for (int d = 0; d < 2; d++) check("multiply, one heavy row", H, RT_MULTIPLY, d, 1, 1, 32, nisa, 1);
  check_gather_bytes(G);
  cpu_kernels_set_grain(0, 0);
  grain_chunk = 0;
  for (int d = 0; d < 2; d++) check("multiply, default grain", A, RT_MULTIPLY, d, 0, 0, 32, nisa, 1);
  free(A);
  free(G);
  free(H);
  free(Z);
  free(L);
  printf("%s: %d failures\n", test_failures ? "FAIL" : "ok", test_failures);
  return test_failures != 0;
}
