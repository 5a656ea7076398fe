/* csr.c — lifetime of the compiler's CSR matrix, and its construction from triplets.
 *
 * The construction is a two-level counting sort by row, then a stable
 * sort by column and summation of duplicates in each row:
 *
 *   1. The rows are cut into buckets of 2^sh consecutive rows, sized so
 *      that one bucket's entries fit in a core's L2 cache. Contiguous
 *      ranges ("parts") of the triplets count, in parallel, their entries
 *      per bucket; a prefix sum over (bucket, part) in that order gives
 *      part t the slots of bucket b after those of parts < t.
 *   2. Each part puts its triplets (and their mirrored copies) into their
 *      buckets' slots: column and value in Aj/Ax, the row within the bucket
 *      in the high 32 bits of Aj when the columns fit the low 32 (else in
 *      an array Rb). Few buckets, so the writes stream, not scatter.
 *   3. Buckets are finished in parallel, each in a thread's workspace while
 *      it sits in cache: counting sort by row (stable), stable sort of each
 *      row by column, duplicates summed in order; each is written back
 *      over its own slots. No thread waits for another (a bucket's final
 *      place depends on the buckets before it, so handing places out in
 *      order would stall all threads behind a slow one).
 *   4. The buckets are packed to the left in order, where duplicates were
 *      summed (one sequential pass; nothing moves where none were).
 *
 * Every step keeps triplet order among equal keys, so a row holds its
 * entries in triplet order and sums them in that order whatever the number
 * of threads or buckets: the result is bit-identical for any thread count. */
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "csr.h"
#include "error.h"

void sc_csr_free(sc_csr *A) {
  if (!A) return;
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  free(A->Xbit);
  free(A->Xrank);
  free(A->Xv);
  free(A);
}

int32_t *sc_csr_narrow_cols(int64_t *wide, int64_t n) {
  int32_t *narrow = (int32_t *)wide;
  /* in order: narrow[t] ends at byte 4t + 4 <= 8t for t >= 1, before any wide[t'] not yet read */
  for (int64_t t = 0; t < n; t++) narrow[t] = (int32_t)wide[t];
  int32_t *shrunk = realloc(wide, (size_t)(n ? n : 1) * sizeof *shrunk);
  return shrunk ? shrunk : narrow;
}

int sc_csr_all_ones(const sc_csr *A) {
  if (!A->Ax) {
    for (int64_t w = 0; A->Xbit && w < A->nnz / 64 + 1; w++)
      if (A->Xbit[w]) return 0;
    return 1;
  }
  for (int64_t t = 0; t < A->nnz; t++)
    if (A->Ax[t] != 1.0) return 0;
  return 1;
}

int sc_csr_compact_values(sc_csr *A) {
  if (!A || !A->Ax) return 0;
  const int64_t nnz = A->nnz, words = nnz / 64 + 1;
  int64_t flagged = 0;
  for (int64_t t = 0; t < nnz; t++) flagged += A->Ax[t] != 1.0;
  if (flagged > nnz / 16) return 0;
  uint64_t *bit = calloc((size_t)words, sizeof *bit);
  int64_t *rank = malloc((size_t)words * sizeof *rank);
  double *xv = malloc((size_t)(flagged ? flagged : 1) * sizeof *xv);
  if (!bit || !rank || !xv) {
    free(bit);
    free(rank);
    free(xv);
    return 0;
  }
  int64_t n = 0;
  for (int64_t w = 0; w < words; w++) {
    rank[w] = n;
    for (int64_t t = w * 64, end = t + 64 < nnz ? t + 64 : nnz; t < end; t++)
      if (A->Ax[t] != 1.0) { /* -0.0, NaN and every other value kept as they are */
        bit[w] |= (uint64_t)1 << (t & 63);
        xv[n++] = A->Ax[t];
      }
  }
  free(A->Ax);
  A->Ax = NULL;
  A->Xbit = bit;
  A->Xrank = rank;
  A->Xv = xv;
  return 1;
}

/* Rows up to this length are sorted by insertion; longer ones by merging
 * insertion-sorted runs of this length. */
#define SC_RUN 32

/* Stable insertion sort of j[0..n) by value, x[] moving alongside. */
static void sort_insert(int64_t *j, double *x, int64_t n) {
  for (int64_t a = 1; a < n; a++) {
    int64_t cj = j[a], b = a;
    double cx = x[a];
    while (b > 0 && j[b - 1] > cj) {
      j[b] = j[b - 1];
      x[b] = x[b - 1];
      b--;
    }
    j[b] = cj;
    x[b] = cx;
  }
}

/* Stable merge of s[lo..mid) and s[mid..hi) into d[lo..hi); ties take the left. */
static void merge(const int64_t *sj, const double *sx, int64_t *dj, double *dx, int64_t lo,
                  int64_t mid, int64_t hi) {
  int64_t a = lo, b = mid, o = lo;
  while (a < mid && b < hi) { /* branch-free: a data-dependent branch mispredicts half the time */
    bool tb = sj[b] < sj[a];
    int64_t from = tb ? b : a;
    dj[o] = sj[from];
    dx[o++] = sx[from];
    b += tb;
    a += !tb;
  }
  for (; a < mid; a++, o++) dj[o] = sj[a], dx[o] = sx[a];
  for (; b < hi; b++, o++) dj[o] = sj[b], dx[o] = sx[b];
}

/* Rows of at least this many entries are sorted by radix when their
 * columns span at most SC_RADIX_BITS bits. */
#define SC_RADIX_MIN 256
#define SC_RADIX_DIGIT 11
#define SC_RADIX_BITS (3 * SC_RADIX_DIGIT)

/* Stable LSD radix sort of j[0..n) by j - min(j), SC_RADIX_DIGIT bits per
 * pass, x[] alongside; tj/tx: workspace of n entries. False (nothing
 * changed) if the columns span more than SC_RADIX_BITS bits. */
static bool sort_radix(int64_t *j, double *x, int64_t n, int64_t *tj, double *tx) {
  enum { R = 1 << SC_RADIX_DIGIT };
  uint32_t cnt[R];
  int64_t lo = j[0], hi = j[0], *sj = j, *dj = tj;
  double *sx = x, *dx = tx;
  int bits;
  if (n >= ((int64_t)1 << 32)) return false;
  for (int64_t a = 1; a < n; a++) {
    lo = j[a] < lo ? j[a] : lo;
    hi = j[a] > hi ? j[a] : hi;
  }
  bits = 64 - __builtin_clzll((uint64_t)(hi - lo) | 1);
  if (bits > SC_RADIX_BITS) return false;
  for (int sh = 0; sh < bits; sh += SC_RADIX_DIGIT) {
    uint32_t run = 0;
    memset(cnt, 0, sizeof cnt);
    for (int64_t a = 0; a < n; a++) cnt[((uint64_t)(sj[a] - lo) >> sh) & (R - 1)]++;
    for (int d = 0; d < R; d++) {
      uint32_t c = cnt[d];
      cnt[d] = run;
      run += c;
    }
    for (int64_t a = 0; a < n; a++) {
      uint32_t q = cnt[((uint64_t)(sj[a] - lo) >> sh) & (R - 1)]++;
      dj[q] = sj[a];
      dx[q] = sx[a];
    }
    int64_t *t = sj;
    double *u = sx;
    sj = dj, sx = dx, dj = t, dx = u;
  }
  if (sj != j) {
    memcpy(j, sj, (size_t)n * sizeof *j);
    memcpy(x, sx, (size_t)n * sizeof *x);
  }
  return true;
}

/* Stable sort of j[0..n) with x[] alongside: radix for long rows of narrow
 * column range, else a bottom-up merge sort of insertion-sorted runs (no
 * recursion). tj/tx: workspace of n entries. Stability keeps duplicates in
 * triplet order, which fixes the order of their summation. */
static void sort_row(int64_t *j, double *x, int64_t n, int64_t *tj, double *tx) {
  int64_t *sj = j, *dj = tj;
  double *sx = x, *dx = tx;
  if (n >= SC_RADIX_MIN && sort_radix(j, x, n, tj, tx)) return;
  for (int64_t lo = 0; lo < n; lo += SC_RUN)
    sort_insert(j + lo, x + lo, n - lo < SC_RUN ? n - lo : SC_RUN);
  for (int64_t w = SC_RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      merge(sj, sx, dj, dx, lo, mid, hi);
    }
    int64_t *t = sj;
    double *u = sx;
    sj = dj, sx = dx, dj = t, dx = u;
  }
  if (sj != j) {
    memcpy(j, sj, (size_t)n * sizeof *j);
    memcpy(x, sx, (size_t)n * sizeof *x);
  }
}

/* True if j[0..n) is non-decreasing. */
static bool is_sorted(const int64_t *j, int64_t n) {
  for (int64_t a = 1; a < n; a++)
    if (j[a] < j[a - 1]) return false;
  return true;
}

/* Bytes of n elements of `size`, or 0 if that does not fit in size_t (or n < 0);
 * n == 0 gives `size`, so that malloc never sees 0. */
static size_t bytes_of(int64_t n, size_t size) {
  if (n < 0 || (uint64_t)n > SIZE_MAX / size) return 0;
  return n == 0 ? size : (size_t)n * size;
}

/* Most parts of a build (fixed arrays on the stack). */
#define SC_MAX_PARTS 256

/* Entries per bucket aimed at: their columns and values (16 bytes each),
 * twice, fit in a 1 MiB L2 cache. */
#define SC_BUCKET_ENTRIES ((int64_t)1 << 14)

/* Automatic thread count: below this many triplets one thread does the work. */
#define SC_PAR_TRIPLETS ((int64_t)1 << 16)

typedef struct sc_build {
  int64_t m, k; /* matrix size */
  int64_t nseg; /* runs of triplets */
  const sc_coo_seg *segs; /* [nseg] borrowed */
  const int64_t *seg0; /* [nseg+1] number of the first triplet of each run */
  int64_t n; /* triplets in all */
  sc_coo_mirror mirror; /* how off-diagonal triplets are mirrored */
  int parts; /* T: triplet parts and threads, 1..SC_MAX_PARTS */
  int sh; /* bucket b holds rows [b << sh, (b+1) << sh) */
  int64_t nb; /* buckets */
  int64_t *cnt; /* [T][nb] entries per (part, bucket), then next slots */
  int64_t *bs; /* [nb+1] first slot of each bucket (before summing) */
  int64_t *len; /* [nb] entries of each bucket after summing, -1: no memory */
  bool packed; /* rows within buckets in Aj's high 32 bits (k <= 2^32) */
  uint32_t *Rb; /* [nz] row within its bucket of each slot, unless packed */
  int64_t bad[SC_MAX_PARTS]; /* first out-of-range triplet of each part, or -1 */
  int64_t run; /* entries of the matrix, once packed */
  int64_t nomem; /* 1 + entries of a bucket whose workspace failed, or 0 */
  sc_csr *A; /* the matrix being built */
  int64_t *Aj; /* [nz] its columns while it is built (64 bits: the packed rows);
                                 narrowed into A->Aj at the end */
} sc_build;

/* A thread's workspace for finishing buckets, grown to the largest bucket. */
typedef struct sc_ws {
  int64_t cap; /* entries of wj, wx, sj, sx */
  int64_t *wj, *sj; /* [cap] bucket columns sorted by row; sort_row's workspace */
  double *wx, *sx; /* [cap] their values; sort_row's workspace */
  int64_t *rc; /* [min(2^sh, m) + 1] row counters of a bucket */
} sc_ws;

/* First triplet of part t of T over n. */
static int64_t part_lo(int64_t n, int t, int T) {
  return (int64_t)((unsigned __int128)n * (unsigned)t / (unsigned)T);
}

/* The run holding triplet g (the last run starting at or before g). */
static int64_t seg_of(const sc_build *B, int64_t g) {
  int64_t lo = 0, hi = B->nseg; /* seg0[lo] <= g < seg0[hi] */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (B->seg0[mid] <= g) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* The loops over triplets go run by run; each *_as function is inlined
 * with the run's index width, the mirroring and the presence of values as
 * constants, so the inner loops test nothing per triplet that a run fixes. */

/* Counts the entries of triplets [o, e) of run S per bucket into C; returns
 * the first out-of-range triplet's offset in the run, or -1. */
static inline __attribute__((always_inline)) int64_t count_run_as(
    const sc_build *B, const sc_coo_seg *S, int64_t o, int64_t e, int64_t *C, const bool w32,
    const bool mir) {
  const uint64_t m = (uint64_t)B->m, k = (uint64_t)B->k;
  const int sh = B->sh;
  for (; o < e; o++) {
    int64_t i = w32 ? S->Ti32[o] : S->Ti[o], j = w32 ? S->Tj32[o] : S->Tj[o];
    if ((uint64_t)i >= m || (uint64_t)j >= k) return o;
    C[i >> sh]++;
    if (mir && i != j) C[j >> sh]++;
  }
  return -1;
}

/* Part t: checks its triplets and counts their entries (mirrored ones too)
 * per bucket. */
static void count_part(sc_build *B, int t) {
  const bool mir = B->mirror != SC_COO_AS_IS;
  int64_t a = part_lo(B->n, t, B->parts), b = part_lo(B->n, t + 1, B->parts);
  int64_t *C = B->cnt + (size_t)t * (size_t)B->nb;
  B->bad[t] = -1;
  for (int64_t s = a < b ? seg_of(B, a) : 0, g = a; g < b; s++) {
    const sc_coo_seg *S = &B->segs[s];
    int64_t o = g - B->seg0[s], e = S->n - o < b - g ? S->n : o + (b - g), bad;
    bool w32 = !S->Ti;
    if (w32)
      bad = mir ? count_run_as(B, S, o, e, C, true, true)
                : count_run_as(B, S, o, e, C, true, false);
    else
      bad = mir ? count_run_as(B, S, o, e, C, false, true)
                : count_run_as(B, S, o, e, C, false, false);
    if (bad >= 0) {
      B->bad[t] = B->seg0[s] + bad;
      return;
    }
    g += e - o;
  }
}

/* Puts triplets [o, e) of run S (and mirrored copies) into their buckets'
 * slots, C holding the next slot of each bucket. */
static inline __attribute__((always_inline)) void scatter_run_as(
    sc_build *B, const sc_coo_seg *S, int64_t o, int64_t e, int64_t *C, const bool w32,
    const sc_coo_mirror mirror, const bool values, const bool packed) {
  const int sh = B->sh;
  const int64_t mask = ((int64_t)1 << sh) - 1;
  int64_t *Aj = B->Aj;
  double *Ax = B->A->Ax;
  uint32_t *Rb = B->Rb;
  for (; o < e; o++) {
    int64_t i = w32 ? S->Ti32[o] : S->Ti[o], j = w32 ? S->Tj32[o] : S->Tj[o], p = C[i >> sh]++;
    double v = values ? S->Tx[o] : 1.0;
    if (packed) {
      Aj[p] = (int64_t)((uint64_t)(i & mask) << 32 | (uint64_t)j);
    } else {
      Aj[p] = j;
      Rb[p] = (uint32_t)(i & mask);
    }
    Ax[p] = v;
    if (mirror != SC_COO_AS_IS && i != j) {
      p = C[j >> sh]++;
      if (packed) {
        Aj[p] = (int64_t)((uint64_t)(j & mask) << 32 | (uint64_t)i);
      } else {
        Aj[p] = i;
        Rb[p] = (uint32_t)(j & mask);
      }
      Ax[p] = mirror == SC_COO_SKEW ? -v : v;
    }
  }
}

/* Part t: puts its triplets (and mirrored copies) into their buckets' slots. */
static void scatter_part(sc_build *B, int t) {
  int64_t a = part_lo(B->n, t, B->parts), b = part_lo(B->n, t + 1, B->parts);
  int64_t *C = B->cnt + (size_t)t * (size_t)B->nb;
  for (int64_t s = a < b ? seg_of(B, a) : 0, g = a; g < b; s++) {
    const sc_coo_seg *S = &B->segs[s];
    int64_t o = g - B->seg0[s], e = S->n - o < b - g ? S->n : o + (b - g);
    int kind = (((!S->Ti) * 3 + (int)B->mirror) * 2 + (S->Tx != NULL)) * 2 + B->packed;
    switch (kind) {
/* clang-format off */
#define SC_CASE(w, y, v, k) \
  case (((w) * 3 + (y)) * 2 + (v)) * 2 + (k): scatter_run_as(B, S, o, e, C, w, y, v, k); break;
#define SC_CASES(w, y) \
  SC_CASE(w, y, 0, 0) SC_CASE(w, y, 0, 1) SC_CASE(w, y, 1, 0) SC_CASE(w, y, 1, 1)
      /* clang-format on */
      SC_CASES(0, SC_COO_AS_IS)
      SC_CASES(0, SC_COO_SYMMETRIC)
      SC_CASES(0, SC_COO_SKEW)
      SC_CASES(1, SC_COO_AS_IS)
      SC_CASES(1, SC_COO_SYMMETRIC)
      SC_CASES(1, SC_COO_SKEW)
#undef SC_CASES
#undef SC_CASE
    }
    g += e - o;
  }
}

/* Grows W to hold a bucket of n entries and `rows` rows (the row counters
 * are made once, for the tallest bucket); false when out of memory (W
 * stays valid for ws_free). */
static bool ws_reserve(sc_ws *W, int64_t n, int64_t rows) {
  if (!W->rc && !(W->rc = malloc(bytes_of(rows + 1, sizeof *W->rc)))) return false;
  if (n <= W->cap) return true;
  free(W->wj), free(W->wx), free(W->sj), free(W->sx);
  W->wj = malloc(bytes_of(n, sizeof *W->wj));
  W->wx = malloc(bytes_of(n, sizeof *W->wx));
  W->sj = malloc(bytes_of(n, sizeof *W->sj));
  W->sx = malloc(bytes_of(n, sizeof *W->sx));
  W->cap = (W->wj && W->wx && W->sj && W->sx) ? n : 0;
  return W->cap > 0;
}

static void ws_free(sc_ws *W) {
  free(W->wj), free(W->wx), free(W->sj), free(W->sx), free(W->rc);
  memset(W, 0, sizeof *W);
}

/* Rows of bucket b (all but the last bucket have 2^sh). */
static int64_t bucket_rows(const sc_build *B, int64_t b) {
  int64_t r0 = b << B->sh, full = (int64_t)1 << B->sh;
  return B->m - r0 < full ? B->m - r0 : full;
}

/* Bucket b: sorts its entries by row into W (counting sort, stable), each
 * row by column there (stable), and sums duplicates, packing the rows at
 * the start of the bucket's own slots (which the counting sort has emptied:
 * no copy back); W->rc[r] becomes the packed end of the bucket's row r.
 * Returns the packed entries, or -1 when out of memory for the workspace. */
static inline __attribute__((always_inline)) int64_t bucket_sort_as(sc_build *B, int64_t b,
                                                                    sc_ws *W,
                                                                    const bool packed) {
  const int64_t s0 = B->bs[b], s1 = B->bs[b + 1], n = s1 - s0;
  const int64_t nr = bucket_rows(B, b);
  if (n == 0) { /* nothing to sort, and maybe no workspace arrays at all */
    if (!W->rc && !(W->rc = malloc(bytes_of(bucket_rows(B, 0) + 1, sizeof *W->rc)))) return -1;
    memset(W->rc, 0, (size_t)(nr + 1) * sizeof *W->rc);
    return 0;
  }
  int64_t *Aj = B->Aj + s0;
  double *Ax = B->A->Ax + s0;
  const uint32_t *Rb = packed ? NULL : B->Rb + s0;
  int64_t *rc, *wj, w = 0, lo = 0;
  double *wx;
  if (!ws_reserve(W, n, bucket_rows(B, 0))) return -1; /* the first bucket is a tallest */
  rc = W->rc, wj = W->wj, wx = W->wx;
  memset(rc, 0, (size_t)(nr + 1) * sizeof *rc);
  for (int64_t p = 0; p < n; p++) rc[(packed ? (uint64_t)Aj[p] >> 32 : Rb[p]) + 1]++;
  for (int64_t r = 0; r < nr; r++) rc[r + 1] += rc[r]; /* rc[r] = first slot of row r */
  for (int64_t p = 0; p < n; p++) {
    int64_t q = rc[packed ? (uint64_t)Aj[p] >> 32 : Rb[p]]++; /* then rc[r] = end of row r */
    wj[q] = packed ? (int64_t)((uint64_t)Aj[p] & UINT32_MAX) : Aj[p];
    wx[q] = Ax[p];
  }
  for (int64_t r = 0; r < nr; r++) {
    int64_t hi = rc[r], len = hi - lo, rs = w;
    if (!is_sorted(wj + lo, len)) sort_row(wj + lo, wx + lo, len, W->sj, W->sx);
    for (int64_t p = lo; p < hi; p++) { /* w <= p: the slots written are read no more */
      if (w > rs && Aj[w - 1] == wj[p]) {
        Ax[w - 1] += wx[p];
      } else {
        Aj[w] = wj[p];
        Ax[w++] = wx[p];
      }
    }
    rc[r] = w;
    lo = hi;
  }
  return w;
}

static int64_t bucket_sort(sc_build *B, int64_t b, sc_ws *W) {
  return B->packed ? bucket_sort_as(B, b, W, true) : bucket_sort_as(B, b, W, false);
}

/* Bucket b: finished (bucket_sort), packed at the start of its own slots;
 * Ap[i+1] becomes the end of row i there. len[b] is its packed size, or -1
 * when out of memory. */
static void bucket_finish(sc_build *B, int64_t b, sc_ws *W) {
  const int64_t r0 = b << B->sh, nr = bucket_rows(B, b), s0 = B->bs[b];
  int64_t len = bucket_sort(B, b, W), *Ap = B->A->Ap;
  B->len[b] = len;
  if (len < 0) return;
  for (int64_t r = 0; r < nr; r++) Ap[r0 + r + 1] = s0 + W->rc[r];
}

/* Finishes every bucket on `threads` threads (no order among them: a
 * thread never waits for another), then packs the buckets to the left in
 * bucket order: each moves right after the previous one, and its row
 * pointers with it (nothing moves where no duplicates were summed). */
static void finish_buckets(sc_build *B, int threads) {
  int64_t w = 0, *Ap = B->A->Ap;
  B->nomem = 0;
  if (threads <= 1 || B->nb <= 1) {
    sc_ws W = {0};
    for (int64_t b = 0; b < B->nb; b++) {
      bucket_finish(B, b, &W);
      if (B->len[b] < 0) break; /* the packing below stops there */
    }
    ws_free(&W);
  } else {
#pragma omp parallel num_threads(threads)
    {
      sc_ws W = {0};
#pragma omp for schedule(dynamic, 1)
      for (int64_t b = 0; b < B->nb; b++) bucket_finish(B, b, &W);
      ws_free(&W);
    }
  }
  for (int64_t b = 0; b < B->nb; b++) {
    int64_t s0 = B->bs[b], len = B->len[b], r0 = b << B->sh, nr = bucket_rows(B, b);
    if (len < 0) {
      B->nomem = B->bs[b + 1] - s0 + 1;
      return;
    }
    if (w != s0 && len > 0) {
      memmove(B->Aj + w, B->Aj + s0, (size_t)len * sizeof *B->Aj);
      memmove(B->A->Ax + w, B->A->Ax + s0, (size_t)len * sizeof *B->A->Ax);
    }
    if (w != s0)
      for (int64_t r = 0; r < nr; r++) Ap[r0 + r + 1] -= s0 - w;
    w += len;
  }
  B->run = w;
}

/* Part t: maps its share of the output arrays in (see sc_big_populate). */
static void populate_part(sc_build *B, int t) {
  int64_t nz = B->bs[B->nb], a = part_lo(nz, t, B->parts), b = part_lo(nz, t + 1, B->parts);
  sc_big_populate(B->Aj, (size_t)a * sizeof *B->Aj, (size_t)(b - a) * sizeof *B->Aj);
  sc_big_populate(B->A->Ax, (size_t)a * sizeof *B->A->Ax, (size_t)(b - a) * sizeof *B->A->Ax);
  if (B->Rb) sc_big_populate(B->Rb, (size_t)a * sizeof *B->Rb, (size_t)(b - a) * sizeof *B->Rb);
  a = part_lo(B->m + 1, t, B->parts), b = part_lo(B->m + 1, t + 1, B->parts);
  sc_big_populate(B->A->Ap, (size_t)a * sizeof *B->A->Ap, (size_t)(b - a) * sizeof *B->A->Ap);
}

/* Runs f(B, t) for the T parts, one per thread; with one part no parallel
 * region is entered at all (tiny inputs start no threads and allocate
 * nothing in the OpenMP runtime). Parts are dealt out by stride, so fewer
 * threads than asked still do them all. */
static void run_parts(sc_build *B, void (*f)(sc_build *, int)) {
  if (B->parts <= 1) {
    f(B, 0);
    return;
  }
#pragma omp parallel num_threads(B->parts)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    for (int t = id; t < B->parts; t += nt) f(B, t);
  }
}

/* Parts (threads) for `threads` asked (<= 0: OpenMP's number, one for tiny
 * inputs), and the bucket size for nz entries. */
static void choose_shape(sc_build *B, int threads, int64_t nz) {
  int64_t T = threads > 0 ? threads : omp_get_max_threads(), rows;
  if (T > SC_MAX_PARTS) T = SC_MAX_PARTS;
  if (T < 1 || (threads <= 0 && B->n < SC_PAR_TRIPLETS)) T = 1;
  B->parts = (int)T;
  /* Rows per bucket: about SC_BUCKET_ENTRIES entries, a power of two; a
   * row index within a bucket must fit Rb's 32 bits. */
  rows = nz > 0 ? (int64_t)((unsigned __int128)(B->m + 1) * SC_BUCKET_ENTRIES / (uint64_t)nz)
                : B->m;
  if (rows > B->m) rows = B->m; /* a bucket no taller than the matrix (its counters are per row) */
  B->sh = 0;
  while (B->sh < 32 && ((int64_t)1 << (B->sh + 1)) <= rows) B->sh++;
  B->nb = B->m > 0 ? ((B->m - 1) >> B->sh) + 1 : 0;
}

shiro_status sc_csr_from_coo_segs(int64_t m, int64_t k, int64_t nseg, const sc_coo_seg *segs,
                                  sc_coo_mirror mirror, int threads, sc_csr **out,
                                  shiro_error *err) {
  shiro_status st = SHIRO_OK;
  sc_build *B = NULL;
  sc_csr *A = NULL;
  int64_t *seg0 = NULL, bad = -1, nz = 0, nest;
  bool mir = (mirror == SC_COO_SYMMETRIC || mirror == SC_COO_SKEW), args_ok;
  if (!out) return shiro_fail(err, SHIRO_ERR_ARG, "sc_csr_from_coo: out is NULL");
  *out = NULL;
  args_ok = m >= 0 && k >= 0 && nseg >= 0 && (nseg == 0 || segs) && !(mir && m != k) &&
      (mirror == SC_COO_AS_IS || mir);
  for (int64_t s = 0; args_ok && s < nseg; s++)
    args_ok = segs[s].n >= 0 && (segs[s].n == 0 || (segs[s].Ti && segs[s].Tj) || (!segs[s].Ti && !segs[s].Tj && segs[s].Ti32 && segs[s].Tj32));
  if (args_ok && k > SC_CSR_MAX_COLS) {
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED,
                    "the matrix has %lld columns; at most %lld are supported (32-bit column indices)",
                    (long long)k, (long long)SC_CSR_MAX_COLS);
    goto done;
  }
  if (!args_ok) {
    int64_t n = 0;
    for (int64_t s = 0; segs && s < nseg && n >= 0; s++) n += segs[s].n;
    st = shiro_fail(err, SHIRO_ERR_ARG,
                    "sc_csr_from_coo: bad arguments (m=%lld, k=%lld, n=%lld, mirror=%d)",
                    (long long)m, (long long)k, (long long)n, (int)mirror);
    goto done;
  }
  B = calloc(1, sizeof *B);
  seg0 = malloc(bytes_of(nseg + 1, sizeof *seg0));
  if (!B || !seg0) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory building a CSR matrix");
    goto done;
  }
  seg0[0] = 0;
  for (int64_t s = 0; s < nseg; s++) seg0[s + 1] = seg0[s] + segs[s].n;
  B->m = m, B->k = k, B->nseg = nseg, B->segs = segs, B->seg0 = seg0, B->n = seg0[nseg];
  B->mirror = mirror;
  nest = mir && B->n <= INT64_MAX / 2 ? 2 * B->n : B->n; /* entries, at most */
  choose_shape(B, threads, nest);
  A = calloc(1, sizeof *A);
  if (!A || m == INT64_MAX || !(A->Ap = malloc(bytes_of(m + 1, sizeof *A->Ap)))) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for the row pointers of %lld rows",
                    (long long)m);
    goto done;
  }
  A->Ap[0] = 0; /* the rest is set bucket by bucket */
  A->m = m;
  A->k = k;
  B->A = A;
  B->cnt = calloc(1, bytes_of((int64_t)B->parts * B->nb, sizeof *B->cnt));
  B->bs = malloc(bytes_of(B->nb + 1, sizeof *B->bs));
  B->len = malloc(bytes_of(B->nb, sizeof *B->len));
  if (!B->cnt || !B->bs || !B->len) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for the counters of %lld buckets",
                    (long long)B->nb);
    goto done;
  }
  /* 1. Count the entries of each bucket, per part. */
  run_parts(B, count_part);
  for (int t = 0; t < B->parts && bad < 0; t++) bad = B->bad[t];
  if (bad >= 0) {
    const sc_coo_seg *S = &segs[seg_of(B, bad)];
    int64_t o = bad - seg0[S - segs];
    st = shiro_fail(err, SHIRO_ERR_ARG,
                    "sc_csr_from_coo: triplet %lld is (%lld, %lld), outside the %lld x %lld "
                    "matrix",
                    (long long)bad, (long long)(S->Ti ? S->Ti[o] : S->Ti32[o]),
                    (long long)(S->Tj ? S->Tj[o] : S->Tj32[o]), (long long)m, (long long)k);
    goto done;
  }
  /* cnt[t][b] = first slot of part t in bucket b; bs[b] = first of bucket b. */
  for (int64_t b = 0; b < B->nb; b++) {
    B->bs[b] = nz;
    for (int t = 0; t < B->parts; t++) {
      int64_t *c = &B->cnt[(size_t)t * (size_t)B->nb + (size_t)b], v = *c;
      *c = nz;
      nz += v;
    }
  }
  B->bs[B->nb] = nz;
  B->Aj = malloc(bytes_of(nz, sizeof *B->Aj));
  A->Ax = malloc(bytes_of(nz, sizeof *A->Ax));
  B->packed = k <= ((int64_t)1 << 32) && B->sh <= 31;
  if (!B->packed) B->Rb = malloc(bytes_of(nz, sizeof *B->Rb));
  if (!B->Aj || !A->Ax || (!B->packed && !B->Rb)) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for a CSR matrix of %lld entries",
                    (long long)nz);
    goto done;
  }
  /* huge pages (big_alloc.h): the scatter below writes to as many places at once as there
   * are buckets, and on 4 KiB pages those writes miss the TLB */
  sc_big_huge(B->Aj, (size_t)nz * sizeof *B->Aj);
  sc_big_huge(A->Ax, (size_t)nz * sizeof *A->Ax);
  if (B->Rb) sc_big_huge(B->Rb, (size_t)nz * sizeof *B->Rb);
  run_parts(B, populate_part);
  /* 2. Scatter in triplet order into the buckets. */
  run_parts(B, scatter_part);
  /* 3. Rows within buckets, columns within rows, duplicates summed. */
  finish_buckets(B, B->parts);
  if (B->nomem) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory sorting a bucket of %lld entries",
                    (long long)(B->nomem - 1));
    goto done;
  }
  A->nnz = B->run;
  A->Aj = sc_csr_narrow_cols(B->Aj, A->nnz); /* k <= SC_CSR_MAX_COLS: every column fits */
  B->Aj = NULL;
  if (A->nnz < nz) { /* give back what summing duplicates freed; keep the arrays if that fails */
    double *x2 = realloc(A->Ax, bytes_of(A->nnz, sizeof *x2));
    if (x2) A->Ax = x2;
  }
done:
  if (B) {
    free(B->cnt);
    free(B->bs);
    free(B->len);
    free(B->Rb);
    free(B->Aj);
  }
  free(B);
  free(seg0);
  if (st != SHIRO_OK) {
    sc_csr_free(A);
    A = NULL;
  }
  *out = A;
  return st;
}

shiro_status sc_csr_from_coo(int64_t m, int64_t k, int64_t n, const int64_t *Ti,
                             const int64_t *Tj, const double *Tx, sc_coo_mirror mirror,
                             sc_csr **out, shiro_error *err) {
  sc_coo_seg seg = {n, Ti, Tj, NULL, NULL, Tx};
  if (n < 0) {
    if (out) *out = NULL;
    return shiro_fail(err, SHIRO_ERR_ARG,
                      "sc_csr_from_coo: bad arguments (m=%lld, k=%lld, n=%lld, mirror=%d)",
                      (long long)m, (long long)k, (long long)n, (int)mirror);
  }
  return sc_csr_from_coo_segs(m, k, 1, &seg, mirror, 0, out, err);
}
