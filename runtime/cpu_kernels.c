/* cpu_kernels.c — the CPU kernels of the three compute shapes, on OpenMP threads.
 *
 *   multiply  dst[rows] (+)= S · src   entries with values
 *   add       dst[rows] (+)= S · src   entries without values (sums of rows)
 *   gather    dst[rows]   = src[col]   one entry per row (row copies)
 *
 * Each destination row is computed by one thread, entries in stored order,
 * every product and every sum rounded on its own, so the bits depend neither
 * on the thread count nor on the instruction set: the vectors run across a
 * row's N values, never across its entries. No FMA anywhere (the build pins
 * -ffp-contract=off and the AVX2 variants are compiled for "avx2" without
 * "fma"): a fused a·b+c rounds once where the CUDA kernels (__fmul_rn,
 * __fadd_rn) round twice, and CPU = GPU bit for bit is the promise.
 *
 * Speed: a row's N sums stay in registers, in tiles of up to 8 vectors (16
 * registers on x86-64: 8 sums, the loaded source and the product), for N a
 * compile-time constant (1, 2, 4, ..., 128: macro-expanded variants) or any
 * other N (full tiles, then single vectors, then single values). Threads take
 * contiguous tasks of equal cost (entries + rows, found by binary search in
 * the row pointers: nothing precomputed, nothing allocated) in row order, so
 * each walks rows, and memory, in the order they lie. */
#include <omp.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_src16.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CPU_HAVE_AVX2 1
#define ATTR_AVX2 __attribute__((target("avx2")))
#else
#define CPU_HAVE_AVX2 0
#endif
#define ATTR_BASE

#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif

/* Vectors of k values (GCC/clang vector extensions; the compiler picks the registers). */
typedef double vd2 __attribute__((vector_size(16)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf2 __attribute__((vector_size(8)));
typedef float vf4 __attribute__((vector_size(16)));
typedef float vf8 __attribute__((vector_size(32)));

/* Unaligned load and store of a vector (or scalar) of type V. */
#define LD(V, p) __extension__({ V v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define ST(p, x)                           \
  do {                                     \
    __typeof__(x) x_ = (x);                \
    __builtin_memcpy((p), &x_, sizeof x_); \
  } while (0)

#include "cpu_kargs.h" /* kargs, rows_fn; the kernels of strided layouts (cpu_strided.c) */

/* Entries ahead whose source rows are prefetched (rows of 64 bytes or more): the source rows are
 * random reads, mostly from L3 or memory; 16 ahead halved the time of R-MAT s18 at N = 32. */
enum { PREFETCH = 16 };
/* Rows ahead whose listed destination rows are prefetched (for writing): the adds of received
 * partial rows into C and the gathers into S address rows in any order. */
enum { ROW_PREFETCH = 8 };

/* The term of entry e at p: v_e · src (HV) or src. */
#define TERM(V, p, HV, e) ((HV) ? LD(V, p) * val[e] : LD(V, p))

/* One tile of K vectors of L values at column c of a row of W values:
 * acc = (accum ? d : first term), then acc + term for every further entry,
 * in stored order; d, e0, e1, s0, col, val, accum in scope. */
#define TILE(T, V, L, K, HV, W, c)                                                                     \
  do {                                                                                                 \
    V acc_[K];                                                                                         \
    int64_t e_ = e0;                                                                                   \
    if (accum) {                                                                                       \
      UNROLL for (int k_ = 0; k_ < (K); k_++) acc_[k_] = LD(V, d + (c) + k_ * (L));                    \
    } else {                                                                                           \
      const T *s_ = s0 + (int64_t)col[e_] * (W) + (c);                                                 \
      UNROLL for (int k_ = 0; k_ < (K); k_++) acc_[k_] = TERM(V, s_ + k_ * (L), HV, e_);               \
      e_++;                                                                                            \
    }                                                                                                  \
    for (; e_ < e1; e_++) {                                                                            \
      const T *s_ = s0 + (int64_t)col[e_] * (W) + (c);                                                 \
      if ((W) * sizeof(T) >= 64 && e_ + PREFETCH < elim) {                                             \
        const char *q_ = (const char *)(s0 + (int64_t)col[e_ + PREFETCH] * (W) + (c));                 \
        UNROLL for (size_t b_ = 0; b_ < (K) * sizeof(V); b_ += 64) __builtin_prefetch(q_ + b_);        \
        __builtin_prefetch(q_ + (K) * sizeof(V) - 1); /* the last line of a row past a line's start */ \
      }                                                                                                \
      UNROLL for (int k_ = 0; k_ < (K); k_++) acc_[k_] = acc_[k_] + TERM(V, s_ + k_ * (L), HV, e_);    \
    }                                                                                                  \
    UNROLL for (int k_ = 0; k_ < (K); k_++) ST(d + (c) + k_ * (L), acc_[k_]);                          \
  } while (0)

/* The loop over rows, with the row's locals set up for TILE; BODY does the row's columns. */
#define ROWS_LOOP(T, W, BODY)                                                                   \
  const int64_t *ptr = a->ptr;                                                                  \
  const int32_t *col = a->col, *rows = a->rows;                                                 \
  const T *val = (const T *)a->val;                                                             \
  T *d0 = (T *)(void *)a->dst;                                                                  \
  const T *s0 = (const T *)(const void *)a->src;                                                \
  const int accum = a->accum;                                                                   \
  const int64_t elim = ptr[hi]; /* entries of the range: the prefetches stay below */           \
  (void)val;                                                                                    \
  for (int64_t i = lo; i < hi; i++) {                                                           \
    T *d = d0 + (rows ? (int64_t)rows[i] : i) * (W);                                            \
    if (rows && (W) * sizeof(T) >= 64 && i + ROW_PREFETCH < hi) { /* listed rows: random too */ \
      char *q_ = (char *)(d0 + (int64_t)rows[i + ROW_PREFETCH] * (W));                          \
      for (size_t b_ = 0; b_ < (W) * sizeof(T); b_ += 64) __builtin_prefetch(q_ + b_, 1);       \
    }                                                                                           \
    const int64_t e0 = ptr[i], e1 = ptr[i + 1];                                                 \
    if (e0 == e1) {                                                                             \
      if (!accum) memset(d, 0, sizeof(T) * (size_t)(W));                                        \
      continue;                                                                                 \
    }                                                                                           \
    BODY                                                                                        \
  }

/* Rows of N = NV·L values (a constant), NV vectors of L values, TV at a time (TV divides NV). */
#define DEF_FIXED(NAME, ATTR, T, V, L, NV, TV, HV)                                                             \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) {                                              \
    ROWS_LOOP(T, (NV) * (L), for (int t = 0; t < (NV); t += (TV)) TILE(T, V, L, TV, HV, (NV) * (L), t * (L));) \
  }

/* Rows of any N: tiles of TV vectors, then single vectors, then single values. */
#define DEF_ANY(NAME, ATTR, T, V, L, TV, HV)                                    \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) {               \
    const int64_t n = a->n;                                                     \
    ROWS_LOOP(T, n, {                                                           \
      int64_t c = 0;                                                            \
      for (; c + (TV) * (L) <= n; c += (TV) * (L)) TILE(T, V, L, TV, HV, n, c); \
      for (; c + (L) <= n; c += (L)) TILE(T, V, L, 1, HV, n, c);                \
      for (; c < n; c++) TILE(T, T, 1, 1, HV, n, c);                            \
    })                                                                          \
  }

/* NAME(a, lo, hi): NAME##_as with listed rows or not and accum or not as constants, one branch per
 * call (the kernels of rows of one vector are instantiated four times: at N = 1 a row is ~4 entries
 * and testing both flags in each row was a large part of its time). */
#define DEF_INSTANCES(NAME, ATTR)                                 \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) { \
    if (a->rows) {                                                \
      if (a->accum) NAME##_as(a, lo, hi, 1, 1);                   \
      else NAME##_as(a, lo, hi, 1, 0);                            \
    } else if (a->accum) {                                        \
      NAME##_as(a, lo, hi, 0, 1);                                 \
    } else {                                                      \
      NAME##_as(a, lo, hi, 0, 0);                                 \
    }                                                             \
  }

/* The head of NAME##_as, a kernel of rows of one vector V (listed and accum constants, for
 * DEF_INSTANCES), up to its opening brace and its locals: ptr, col, rows, val, d0 (dst), s0
 * (src), zero. The body and its closing brace follow. */
#define VEC_ROWS_AS(NAME, ATTR, T, V)                                                                      \
  ATTR static inline __attribute__((always_inline)) void NAME##_as(const kargs *a, int64_t lo, int64_t hi, \
                                                                   const int listed, const int accum) {    \
    VEC_ROWS_LOCALS(T, V)
#define VEC_ROWS_LOCALS(T, V)                    \
  const int64_t *ptr = a->ptr;                   \
  const int32_t *col = a->col, *rows = a->rows;  \
  const T *val = (const T *)a->val;              \
  T *d0 = (T *)(void *)a->dst;                   \
  const T *s0 = (const T *)(const void *)a->src; \
  const V zero = {0};                            \
  (void)val, (void)zero, (void)ptr, (void)col, (void)rows, (void)d0, (void)s0;

/* Rows of one vector V of L values (N = L: 1, 2, 4 or 8 values), two rows at a time. A row's sum is
 * then one chain of dependent adds, so a row alone waits an add's latency per entry; two rows'
 * chains interleaved fill the gaps. Each row still sums its own entries in stored order. NAME##_as
 * is instantiated four times, listed rows or not and accum or not as constants: at N = 1 a row is
 * ~4 entries and its tests are a large part of it (mdual, one thread: 5-10% faster, interleaved). */
#define DEF_PAIR(NAME, ATTR, T, V, L, HV)                                              \
  VEC_ROWS_AS(NAME, ATTR, T, V)                                                        \
  int64_t i = lo;                                                                      \
  for (; i + 1 < hi; i += 2) {                                                         \
    int64_t ea = ptr[i], eb = ptr[i + 1];                                              \
    const int64_t ea1 = ptr[i + 1], eb1 = ptr[i + 2];                                  \
    if (accum && ea == eb1) continue; /* two rows without entries: nothing to add */   \
    T *da = d0 + (listed ? (int64_t)rows[i] : i) * (L);                                \
    T *db = d0 + (listed ? (int64_t)rows[i + 1] : i + 1) * (L);                        \
    V xa, xb;                                                                          \
    if (accum) {                                                                       \
      xa = LD(V, da);                                                                  \
      xb = LD(V, db);                                                                  \
    } else { /* the first term, or 0 for a row without entries */                      \
      xa = ea < ea1 ? TERM(V, s0 + (int64_t)col[ea] * (L), HV, ea) : zero;             \
      xb = eb < eb1 ? TERM(V, s0 + (int64_t)col[eb] * (L), HV, eb) : zero;             \
      ea += ea < ea1;                                                                  \
      eb += eb < eb1;                                                                  \
    }                                                                                  \
    const int64_t both = ea1 - ea < eb1 - eb ? ea1 - ea : eb1 - eb;                    \
    for (int64_t t = 0; t < both; t++, ea++, eb++) {                                   \
      xa = xa + TERM(V, s0 + (int64_t)col[ea] * (L), HV, ea);                          \
      xb = xb + TERM(V, s0 + (int64_t)col[eb] * (L), HV, eb);                          \
    }                                                                                  \
    for (; ea < ea1; ea++) xa = xa + TERM(V, s0 + (int64_t)col[ea] * (L), HV, ea);     \
    for (; eb < eb1; eb++) xb = xb + TERM(V, s0 + (int64_t)col[eb] * (L), HV, eb);     \
    ST(da, xa);                                                                        \
    ST(db, xb);                                                                        \
  }                                                                                    \
  if (i < hi && !(accum && ptr[i] == ptr[i + 1])) { /* the last row of an odd range */ \
    T *d = d0 + (listed ? (int64_t)rows[i] : i) * (L);                                 \
    int64_t e = ptr[i];                                                                \
    const int64_t e1 = ptr[i + 1];                                                     \
    V x = accum ? LD(V, d) : e < e1 ? TERM(V, s0 + (int64_t)col[e] * (L), HV, e)       \
                                    : zero;                                            \
    e += !accum && e < e1;                                                             \
    for (; e < e1; e++) x = x + TERM(V, s0 + (int64_t)col[e] * (L), HV, e);            \
    ST(d, x);                                                                          \
  }                                                                                    \
  }                                                                                    \
  DEF_INSTANCES(NAME, ATTR)
#define DEF_PAIR2(NAME, ATTR, T, V, L) DEF_PAIR(NAME##_mul, ATTR, T, V, L, 1) DEF_PAIR(NAME##_add, ATTR, T, V, L, 0)

/* Rows of one vector V of L values, one row at a time: the sum starts from the first term (or
 * the destination's value, accum), then adds each further entry in stored order. For short rows
 * (DEF_ROWS1 picks it): below ~16 entries a row the pair's second chain hides little latency
 * and its three loops per pair cost a mispredicted exit each. */
#define DEF_ONE(NAME, ATTR, T, V, L, HV)                                    \
  VEC_ROWS_AS(NAME, ATTR, T, V)                                             \
  int64_t e = ptr[lo];                                                      \
  for (int64_t i = lo; i < hi; i++) {                                       \
    const int64_t e1 = ptr[i + 1];                                          \
    T *d = d0 + (listed ? (int64_t)rows[i] : i) * (L);                      \
    if (accum && e == e1) continue;                                         \
    V x;                                                                    \
    if (accum) {                                                            \
      x = LD(V, d);                                                         \
    } else if (e < e1) {                                                    \
      x = TERM(V, s0 + (int64_t)col[e] * (L), HV, e);                       \
      e++;                                                                  \
    } else {                                                                \
      x = zero;                                                             \
    }                                                                       \
    for (; e < e1; e++) x = x + TERM(V, s0 + (int64_t)col[e] * (L), HV, e); \
    ST(d, x);                                                               \
  }                                                                         \
  }                                                                         \
  DEF_INSTANCES(NAME, ATTR)

/* Rows of one vector: the pair kernel where a range's rows average PAIR_ROW_ENTRIES entries or
 * more, else one row at a time (the same bits either way: each row sums in stored order). */
enum { PAIR_ROW_ENTRIES = 16 };
#define DEF_ROWS1(NAME, ATTR, T, V, L, HV)                                               \
  DEF_PAIR(NAME##_pair, ATTR, T, V, L, HV)                                               \
  DEF_ONE(NAME##_one, ATTR, T, V, L, HV)                                                 \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) {                        \
    if (a->ptr[hi] - a->ptr[lo] >= PAIR_ROW_ENTRIES * (hi - lo)) NAME##_pair(a, lo, hi); \
    else NAME##_one(a, lo, hi);                                                          \
  }
#define DEF_ROWS12(NAME, ATTR, T, V, L) DEF_ROWS1(NAME##_mul, ATTR, T, V, L, 1) DEF_ROWS1(NAME##_add, ATTR, T, V, L, 0)

/* Multiply (values) and add (no values) of one shape. */
#define DEF_FIXED2(NAME, ATTR, T, V, L, NV, TV)   \
  DEF_FIXED(NAME##_mul, ATTR, T, V, L, NV, TV, 1) \
  DEF_FIXED(NAME##_add, ATTR, T, V, L, NV, TV, 0)
#define DEF_ANY2(NAME, ATTR, T, V, L, TV) DEF_ANY(NAME##_mul, ATTR, T, V, L, TV, 1) DEF_ANY(NAME##_add, ATTR, T, V, L, TV, 0)

/* Gathers of rows of BYTES bytes (a constant), moved as vectors of type V. A gather has one entry
 * per row (compute_kind, transpose.c), so row i's is entry ptr[0] + i: the row pointers are not
 * read (at N = 1 they were 8 of the 24 bytes a row's copy reads). */
#define DEF_GATHER(NAME, ATTR, V, BYTES)                                                                       \
  ATTR static void NAME(const kargs *a, int64_t lo, int64_t hi) {                                              \
    const int32_t *col = a->col + a->ptr[0], *rows = a->rows;                                                  \
    for (int64_t i = lo; i < hi; i++) {                                                                        \
      char *d = a->dst + (rows ? (int64_t)rows[i] : i) * (int64_t)(BYTES);                                     \
      const char *s = a->src + (int64_t)col[i] * (int64_t)(BYTES);                                             \
      if ((BYTES) >= 64 && i + PREFETCH < hi) {                                                                \
        const char *q_ = a->src + (int64_t)col[i + PREFETCH] * (int64_t)(BYTES);                               \
        UNROLL for (size_t b_ = 0; b_ < (BYTES); b_ += 64) __builtin_prefetch(q_ + b_);                        \
        __builtin_prefetch(q_ + (BYTES)-1);                                                                    \
        if (rows) {                                                                                            \
          char *w_ = a->dst + (int64_t)rows[i + PREFETCH] * (int64_t)(BYTES);                                  \
          UNROLL for (size_t b_ = 0; b_ < (BYTES); b_ += 64) __builtin_prefetch(w_ + b_, 1);                   \
        }                                                                                                      \
      }                                                                                                        \
      UNROLL for (size_t k = 0; k < (BYTES) / sizeof(V); k++) ST(d + k * sizeof(V), LD(V, s + k * sizeof(V))); \
    }                                                                                                          \
  }

/* Gathers of rows of any size. */
static void gather_any(const kargs *a, int64_t lo, int64_t hi) {
  const size_t rb = a->row_bytes;
  const int32_t *col = a->col + a->ptr[0];
  for (int64_t i = lo; i < hi; i++)
    memcpy(a->dst + (size_t)(a->rows ? (int64_t)a->rows[i] : i) * rb, a->src + (size_t)col[i] * rb, rb);
}

/* Every kernel of one instruction set: rows[has_val][is_double][log2 N, or 8 for any other N];
 * gather[log2(row bytes / 4), or 9 for any other size]. */
typedef struct kset {
  rows_fn rows[2][2][9];
  rows_fn gather[10];
} kset;

/* The variants of one instruction set: P the name prefix, VD/LD_ the widest double vector and its
 * lanes, VF/LF the widest float vector and its lanes. */
#define DEF_SET(P, ATTR)                  \
  DEF_GATHER(P##_g4, ATTR, uint32_t, 4)   \
  DEF_GATHER(P##_g8, ATTR, uint64_t, 8)   \
  DEF_GATHER(P##_g16, ATTR, vd2, 16)      \
  DEF_GATHER(P##_g32, ATTR, P##_vb, 32)   \
  DEF_GATHER(P##_g64, ATTR, P##_vb, 64)   \
  DEF_GATHER(P##_g128, ATTR, P##_vb, 128) \
  DEF_GATHER(P##_g256, ATTR, P##_vb, 256) \
  DEF_GATHER(P##_g512, ATTR, P##_vb, 512) \
  DEF_GATHER(P##_g1024, ATTR, P##_vb, 1024)

/* Baseline (SSE2 on x86-64): 16-byte vectors. */
typedef vd2 base_vb;
DEF_SET(base, ATTR_BASE)
DEF_ROWS12(base_d1, ATTR_BASE, double, double, 1)
DEF_PAIR2(base_d2, ATTR_BASE, double, vd2, 2)
DEF_FIXED2(base_d4, ATTR_BASE, double, vd2, 2, 2, 2)
DEF_FIXED2(base_d8, ATTR_BASE, double, vd2, 2, 4, 4)
DEF_FIXED2(base_d16, ATTR_BASE, double, vd2, 2, 8, 8)
DEF_FIXED2(base_d32, ATTR_BASE, double, vd2, 2, 16, 8)
DEF_FIXED2(base_d64, ATTR_BASE, double, vd2, 2, 32, 8)
DEF_FIXED2(base_d128, ATTR_BASE, double, vd2, 2, 64, 8)
DEF_ANY2(base_dany, ATTR_BASE, double, vd2, 2, 8)
DEF_ROWS12(base_f1, ATTR_BASE, float, float, 1)
DEF_PAIR2(base_f2, ATTR_BASE, float, vf2, 2)
DEF_PAIR2(base_f4, ATTR_BASE, float, vf4, 4)
DEF_FIXED2(base_f8, ATTR_BASE, float, vf4, 4, 2, 2)
DEF_FIXED2(base_f16, ATTR_BASE, float, vf4, 4, 4, 4)
DEF_FIXED2(base_f32, ATTR_BASE, float, vf4, 4, 8, 8)
DEF_FIXED2(base_f64, ATTR_BASE, float, vf4, 4, 16, 8)
DEF_FIXED2(base_f128, ATTR_BASE, float, vf4, 4, 32, 8)
DEF_ANY2(base_fany, ATTR_BASE, float, vf4, 4, 8)

#define KSET(P)                                                                                       \
  {                                                                                                   \
    .rows = {{{P##_f1_add, P##_f2_add, P##_f4_add, P##_f8_add, P##_f16_add, P##_f32_add, P##_f64_add, \
               P##_f128_add, P##_fany_add},                                                           \
              {P##_d1_add, P##_d2_add, P##_d4_add, P##_d8_add, P##_d16_add, P##_d32_add, P##_d64_add, \
               P##_d128_add, P##_dany_add}},                                                          \
             {{P##_f1_mul, P##_f2_mul, P##_f4_mul, P##_f8_mul, P##_f16_mul, P##_f32_mul, P##_f64_mul, \
               P##_f128_mul, P##_fany_mul},                                                           \
              {P##_d1_mul, P##_d2_mul, P##_d4_mul, P##_d8_mul, P##_d16_mul, P##_d32_mul, P##_d64_mul, \
               P##_d128_mul, P##_dany_mul}}},                                                         \
    .gather = {P##_g4, P##_g8, P##_g16, P##_g32, P##_g64, P##_g128, P##_g256, P##_g512, P##_g1024,    \
               gather_any},                                                                           \
  }

static const kset set_base = KSET(base);

#if CPU_HAVE_AVX2
/* AVX2 (no FMA): 32-byte vectors. */
typedef vd4 avx2_vb;
DEF_SET(avx2, ATTR_AVX2)
DEF_ROWS12(avx2_d1, ATTR_AVX2, double, double, 1)
DEF_ROWS12(avx2_d2, ATTR_AVX2, double, vd2, 2)
DEF_ROWS12(avx2_d4, ATTR_AVX2, double, vd4, 4)
DEF_FIXED2(avx2_d8, ATTR_AVX2, double, vd4, 4, 2, 2)
DEF_FIXED2(avx2_d16, ATTR_AVX2, double, vd4, 4, 4, 4)
DEF_FIXED2(avx2_d32, ATTR_AVX2, double, vd4, 4, 8, 8)
DEF_FIXED2(avx2_d64, ATTR_AVX2, double, vd4, 4, 16, 8)
DEF_FIXED2(avx2_d128, ATTR_AVX2, double, vd4, 4, 32, 8)
DEF_ANY2(avx2_dany, ATTR_AVX2, double, vd4, 4, 8)
DEF_ROWS12(avx2_f1, ATTR_AVX2, float, float, 1)
DEF_ROWS12(avx2_f2, ATTR_AVX2, float, vf2, 2)
DEF_ROWS12(avx2_f4, ATTR_AVX2, float, vf4, 4)
DEF_ROWS12(avx2_f8, ATTR_AVX2, float, vf8, 8)
DEF_FIXED2(avx2_f16, ATTR_AVX2, float, vf8, 8, 2, 2)
DEF_FIXED2(avx2_f32, ATTR_AVX2, float, vf8, 8, 4, 4)
DEF_FIXED2(avx2_f64, ATTR_AVX2, float, vf8, 8, 8, 8)
DEF_FIXED2(avx2_f128, ATTR_AVX2, float, vf8, 8, 16, 8)
DEF_ANY2(avx2_fany, ATTR_AVX2, float, vf8, 8, 8)
static const kset set_avx2 = KSET(avx2);
#endif

static int isa_used = -1; /* CPU_ISA_*, -1 until detected */

static int isa_detect(void) {
#if CPU_HAVE_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return CPU_ISA_AVX2;
#endif
  return CPU_ISA_BASE;
}

int cpu_kernels_isa(void) {
  int isa = __atomic_load_n(&isa_used, __ATOMIC_RELAXED);
  if (isa < 0) {
    isa = isa_detect();
    __atomic_store_n(&isa_used, isa, __ATOMIC_RELAXED);
  }
  return isa;
}

int cpu_kernels_force_isa(int isa) {
  __atomic_store_n(&isa_used, isa == CPU_ISA_AVX2 && isa_detect() == CPU_ISA_AVX2 ? CPU_ISA_AVX2 : CPU_ISA_BASE,
                   __ATOMIC_RELAXED);
  return cpu_kernels_isa();
}

static const kset *kernels(void) {
#if CPU_HAVE_AVX2
  if (cpu_kernels_isa() == CPU_ISA_AVX2) return &set_avx2;
#endif
  return &set_base;
}

/* log2 of x if x is 2^j with j < lim, else lim. */
static int log2_below(uint64_t x, int lim) {
  for (int j = 0; j < lim; j++)
    if (x == (uint64_t)1 << j) return j;
  return lim;
}

/* The cost of rows lo .. i-1: their entries plus one per row (its start and its store). */
static inline int64_t cost(const int64_t *ptr, int64_t lo, int64_t i) { return ptr[i] - ptr[lo] + (i - lo); }

/* The first row i in [lo, hi] with cost(lo .. i-1) >= target (binary search; cost grows with i). */
static int64_t row_at_cost(const int64_t *ptr, int64_t lo, int64_t hi, int64_t target) {
  int64_t a = lo, b = hi;
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    if (cost(ptr, lo, mid) < target) a = mid + 1;
    else b = mid;
  }
  return a;
}

/* Grain (values touched = cost · N): below par_min one thread runs an op alone; with a progress
 * hook, chunks of about chunk_work (~0.1 ms) between two polls, at most MAX_CHUNKS. */
enum { PAR_MIN = 1 << 16,
       CHUNK_WORK = 1 << 18,
       MAX_CHUNKS = 64 };
/* Tasks of a parallel range: up to TASKS_PER_THREAD per thread, of at least TASK_WORK values each. */
enum { TASKS_PER_THREAD = 16,
       TASK_WORK = 1 << 14 };
static int64_t par_min = PAR_MIN, chunk_work = CHUNK_WORK, task_work = TASK_WORK;

void cpu_kernels_set_grain(int64_t par, int64_t chunk) {
  par_min = par > 0 ? par : PAR_MIN;
  chunk_work = chunk > 0 ? chunk : CHUNK_WORK;
  task_work = chunk > 0 ? chunk : TASK_WORK;
}

/* Rows lo .. hi-1 on a team of par threads (par >= 2) or on this thread. The rows are cut into up to TASKS_PER_THREAD
 * contiguous tasks of equal cost per thread, taken in order by whichever thread is free: balanced by
 * nonzeros, and still balanced when a thread starts late or is preempted (on a shared machine a
 * thread woken for a region often waits a scheduler tick, 4 ms, for its core; with one fixed range
 * per thread the others would then wait for it). Each row is still computed by one thread. */
static void run_range(const kargs *a, rows_fn fn, int64_t lo, int64_t hi, int par) {
  if (par < 2) {
    if (lo < hi) fn(a, lo, hi);
    return;
  }
  const int64_t total = cost(a->ptr, lo, hi), work = total * a->n;
  int64_t ntasks = (int64_t)par * TASKS_PER_THREAD;
  if (ntasks > work / task_work) ntasks = work / task_work;
  if (ntasks < 2) ntasks = 2;
#pragma omp parallel for schedule(dynamic, 1) num_threads(par)
  for (int64_t k = 0; k < ntasks; k++) {
    const int64_t b0 = k == 0 ? lo : row_at_cost(a->ptr, lo, hi, total * k / ntasks);
    const int64_t b1 = k == ntasks - 1 ? hi : row_at_cost(a->ptr, lo, hi, total * (k + 1) / ntasks);
    if (b0 < b1) fn(a, b0, b1);
  }
}

/* All nrows rows of a on `threads` threads (0: omp_get_max_threads()), polling pg (if any) between
 * chunks of equal cost. */
static void run(const kargs *a, rows_fn fn, int64_t nrows, int threads, const cpu_progress *pg) {
  if (nrows <= 0) return;
  const int64_t total = cost(a->ptr, 0, nrows), work = total * a->n;
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const int par = work >= par_min && team > 1 && !omp_in_parallel() ? team : 1; /* threads of a parallel range */
  int64_t chunks = pg && pg->poll ? work / chunk_work : 1;
  if (chunks > MAX_CHUNKS) chunks = MAX_CHUNKS;
  int64_t lo = 0;
  for (int64_t k = 1; k < chunks; k++) {
    const int64_t hi = row_at_cost(a->ptr, 0, nrows, total * k / chunks);
    run_range(a, fn, lo, hi, par);
    lo = hi;
    if (pg->poll(pg->arg)) break; /* nothing left to progress: the rest in one go */
  }
  run_range(a, fn, lo, nrows, par);
}

/* What a kernel of op reads: its entries, dst and src its rows 0, n values a row of row_bytes. */
static kargs op_args(const rt_op *op, char *dst, const char *src, int64_t n, size_t row_bytes) {
  const kargs a = {.dst = dst,
                   .src = src,
                   .ptr = op->ptr,
                   .col = op->col,
                   .rows = op->rows,
                   .val = op->val,
                   .accum = op->accum,
                   .n = n,
                   .row_bytes = row_bytes};
  return a;
}

/* Op of kind `kind` (the kernel, whatever op->kind says) with buffers resolved. */
static void run_kind(const rt_op *op, rt_op_kind kind, void *dst, const void *src, int is_double, int64_t n,
                     int threads, const cpu_layout *lay, const cpu_progress *pg) {
  const size_t esz = is_double ? sizeof(double) : sizeof(float), row_bytes = (size_t)n * esz;
  if (lay) { /* the caller's layout of B or C: the strided kernels */
    kargs a = op_args(op, (char *)dst + (size_t)(op->dst_off * lay->dst_rs) * esz,
                      (const char *)src + (size_t)(op->src_off * lay->src_rs) * esz, n, row_bytes);
    a.drs = lay->dst_rs, a.dcs = lay->dst_cs, a.srs = lay->src_rs, a.scs = lay->src_cs;
    run(&a, cpu_strided_kernel(kind == RT_GATHER, kind == RT_MULTIPLY, is_double), op->nrows, threads, pg);
    return;
  }
  const kargs a = op_args(op, (char *)dst + (size_t)op->dst_off * row_bytes,
                          (const char *)src + (size_t)op->src_off * row_bytes, n, row_bytes);
  const kset *ks = kernels();
  rows_fn fn = kind == RT_GATHER ? ks->gather[row_bytes % 4 ? 9 : log2_below(row_bytes / 4, 9)]
                                 : ks->rows[kind == RT_MULTIPLY][is_double != 0][log2_below((uint64_t)n, 8)];
  run(&a, fn, op->nrows, threads, pg);
}

void cpu_kernel_run(const rt_op *op, void *dst, const void *src, int is_double, int64_t n, int threads,
                    const cpu_layout *lay, const cpu_progress *pg) {
  run_kind(op, op->kind, dst, src, is_double, n, threads, lay, pg);
}

void cpu_kernel_run_src16(const rt_op *op, float *dst, uint16_t *dst16, const uint16_t *src, int dt, int64_t n,
                          int threads, const cpu_progress *pg) {
  kargs a = op_args(op, dst16 ? NULL : (char *)(dst + op->dst_off * n), (const char *)(src + op->src_off * n), n,
                    (size_t)n * sizeof(float));
  a.dst16 = dst16 ? dst16 + op->dst_off * n : NULL;
  a.dt16 = dt;
  run(&a,
      cpu_src16_kernel(op->kind == RT_GATHER, op->kind == RT_MULTIPLY, dt == SHIRO_FLOAT16,
                       cpu_kernels_isa() == CPU_ISA_AVX2, dst16 != NULL),
      op->nrows, threads, pg);
}

void cpu_multiply_f64(const rt_op *op, double *dst, const double *src, int64_t n) {
  run_kind(op, RT_MULTIPLY, dst, src, 1, n, 0, NULL, NULL);
}
void cpu_multiply_f32(const rt_op *op, float *dst, const float *src, int64_t n) {
  run_kind(op, RT_MULTIPLY, dst, src, 0, n, 0, NULL, NULL);
}
void cpu_add_f64(const rt_op *op, double *dst, const double *src, int64_t n) { run_kind(op, RT_ADD, dst, src, 1, n, 0, NULL, NULL); }
void cpu_add_f32(const rt_op *op, float *dst, const float *src, int64_t n) { run_kind(op, RT_ADD, dst, src, 0, n, 0, NULL, NULL); }

void cpu_gather(const rt_op *op, void *dst, const void *src, size_t row_bytes) {
  /* any row size: the kernels see it as row_bytes / 4 floats (or bytes, through gather_any) */
  const size_t rb4 = row_bytes % 4 ? 0 : row_bytes / 4;
  if (!rb4) {
    const kargs a = {.dst = (char *)dst + (size_t)op->dst_off * row_bytes,
                     .src = (const char *)src + (size_t)op->src_off * row_bytes,
                     .ptr = op->ptr,
                     .col = op->col,
                     .rows = op->rows,
                     .n = (int64_t)row_bytes,
                     .row_bytes = row_bytes};
    run(&a, gather_any, op->nrows, 0, NULL);
    return;
  }
  run_kind(op, RT_GATHER, dst, src, 0, (int64_t)rb4, 0, NULL, NULL);
}
