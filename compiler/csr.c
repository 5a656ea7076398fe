/* csr.c — lifetime of the compiler's CSR matrix, and its construction from triplets.
 *
 * The construction is a counting sort by row, parallel over contiguous
 * ranges ("parts") of the triplets, then a stable sort and summation of
 * each row, parallel over ranges of rows. Part t counts its triplets' rows
 * in its own counters H[t]; a prefix sum over (row, part) in that order
 * gives part t the slots of row i after those of parts < t, so every row
 * holds its entries in triplet order whatever the number of parts, and the
 * result is bit-identical for any thread count. */
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "csr.h"
#include "error.h"

void sc_csr_free(sc_csr *A) {
  if (!A) return;
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  free(A);
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
  while (a < mid && b < hi) {
    if (sj[b] < sj[a]) {
      dj[o] = sj[b];
      dx[o++] = sx[b++];
    } else {
      dj[o] = sj[a];
      dx[o++] = sx[a++];
    }
  }
  for (; a < mid; a++, o++) dj[o] = sj[a], dx[o] = sx[a];
  for (; b < hi; b++, o++) dj[o] = sj[b], dx[o] = sx[b];
}

/* Stable sort of j[0..n) with x[] alongside (bottom-up merge sort, no
 * recursion). tj/tx: workspace of n entries. Stability keeps duplicates in
 * triplet order, which fixes the order of their summation. */
static void sort_row(int64_t *j, double *x, int64_t n, int64_t *tj, double *tx) {
  int64_t *sj = j, *dj = tj;
  double *sx = x, *dx = tx;
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

/* malloc for the big arrays: where transparent huge pages are on request
 * (madvise mode), asks for them, so that filling the array takes a page
 * fault per 2 MiB instead of per 4 KiB. NULL when nbytes is 0 (bytes_of's
 * overflow) or out of memory. */
static void *big_malloc(size_t nbytes) {
  void *p = nbytes ? malloc(nbytes) : NULL;
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (p && nbytes >= 4 * huge) {
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + nbytes) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  }
#endif
  return p;
}

/* Most parts of a build (fixed arrays on the stack). */
#define SC_MAX_PARTS 256

/* Automatic thread counts: below these sizes one thread does the work. */
#define SC_PAR_TRIPLETS ((int64_t)1 << 16)
#define SC_PAR_ENTRIES ((int64_t)1 << 16)

typedef struct sc_build {
  int64_t m, k;               /* matrix size */
  int64_t nseg;               /* runs of triplets */
  const sc_coo_seg *segs;     /* [nseg] borrowed */
  const int64_t *seg0;        /* [nseg+1] number of the first triplet of each run */
  int64_t n;                  /* triplets in all */
  sc_coo_mirror mirror;       /* how off-diagonal triplets are mirrored */
  int parts;                  /* T: triplet parts, 1..SC_MAX_PARTS */
  int64_t *H[SC_MAX_PARTS];   /* [T][m] per-part row counters, then next slots; H[T-1] = Ap+1 */
  int64_t bad[SC_MAX_PARTS];  /* first out-of-range triplet of each part, or -1 */
  int rparts;                 /* R: row parts of the sort, 1..SC_MAX_PARTS */
  int64_t r0[SC_MAX_PARTS + 1];   /* first row of each row part (row parts of the prefix, then of the sort) */
  int64_t sum[SC_MAX_PARTS + 1];  /* prefix: entries of each row part; sort: start of its entries */
  int64_t len[SC_MAX_PARTS];      /* sort: entries of each row part after summing duplicates */
  int64_t nomem[SC_MAX_PARTS];    /* sort: length of a row whose workspace failed, or 0 */
  sc_csr *A;                  /* the matrix being built */
} sc_build;

typedef void (*sc_task)(sc_build *B, int u);

/* Runs f(B, u) for u = 0 .. parts-1, on up to `threads` OpenMP threads;
 * with one thread no parallel region is entered at all (so that tiny
 * inputs start no threads and allocate nothing in the OpenMP runtime).
 * Parts are dealt out by stride, so fewer threads than asked still do all. */
static void run_parts(int parts, int threads, sc_task f, sc_build *B) {
  if (threads <= 1 || parts <= 1) {
    for (int u = 0; u < parts; u++) f(B, u);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    for (int u = id; u < parts; u += nt) f(B, u);
  }
}

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

/* Part t: checks its triplets and counts their rows (mirrored ones too). */
static void count_part(sc_build *B, int t) {
  const bool mir = B->mirror != SC_COO_AS_IS;
  const uint64_t m = (uint64_t)B->m, k = (uint64_t)B->k;
  int64_t a = part_lo(B->n, t, B->parts), b = part_lo(B->n, t + 1, B->parts);
  int64_t *H = B->H[t];
  B->bad[t] = -1;
  for (int64_t s = a < b ? seg_of(B, a) : 0, g = a; g < b; s++) {
    const sc_coo_seg *S = &B->segs[s];
    const int64_t *Ti = S->Ti, *Tj = S->Tj;
    int64_t o = g - B->seg0[s], e = S->n - o < b - g ? S->n : o + (b - g);
    for (; o < e; o++, g++) {
      int64_t i = Ti[o], j = Tj[o];
      if ((uint64_t)i >= m || (uint64_t)j >= k) {
        B->bad[t] = g;
        return;
      }
      H[i]++;
      if (mir && i != j) H[j]++;
    }
  }
}

/* Row part r of the prefix: the entries of its rows over all parts. */
static void prefix_sum_part(sc_build *B, int r) {
  int64_t c = 0;
  for (int64_t i = B->r0[r]; i < B->r0[r + 1]; i++)
    for (int t = 0; t < B->parts; t++) c += B->H[t][i];
  B->sum[r] = c;
}

/* Row part r of the prefix: turns counts into first slots, row by row and
 * within a row part by part (sum[r]: the first slot of the row part). */
static void prefix_slot_part(sc_build *B, int r) {
  int64_t run = B->sum[r];
  for (int64_t i = B->r0[r]; i < B->r0[r + 1]; i++)
    for (int t = 0; t < B->parts; t++) {
      int64_t c = B->H[t][i];
      B->H[t][i] = run;
      run += c;
    }
}

/* Part t: puts its triplets (and mirrored copies) into their rows' slots. */
static void scatter_part(sc_build *B, int t) {
  const bool mir = B->mirror != SC_COO_AS_IS, skew = B->mirror == SC_COO_SKEW;
  int64_t a = part_lo(B->n, t, B->parts), b = part_lo(B->n, t + 1, B->parts);
  int64_t *H = B->H[t], *Aj = B->A->Aj;
  double *Ax = B->A->Ax;
  for (int64_t s = a < b ? seg_of(B, a) : 0, g = a; g < b; s++) {
    const sc_coo_seg *S = &B->segs[s];
    const int64_t *Ti = S->Ti, *Tj = S->Tj;
    const double *Tx = S->Tx;
    int64_t o = g - B->seg0[s], e = S->n - o < b - g ? S->n : o + (b - g);
    for (; o < e; o++, g++) {
      int64_t i = Ti[o], j = Tj[o], p = H[i]++;
      double v = Tx ? Tx[o] : 1.0;
      Aj[p] = j;
      Ax[p] = v;
      if (mir && i != j) {
        p = H[j]++;
        Aj[p] = i;
        Ax[p] = skew ? -v : v;
      }
    }
  }
}

/* Row part r of the sort: sorts each of its rows by column and sums
 * duplicates, packing its rows from its first slot on; Ap[i+1] becomes the
 * packed end of row i and len[r] the packed size. */
static void sort_part(sc_build *B, int r) {
  int64_t *tj = NULL, *Ap = B->A->Ap, *Aj = B->A->Aj;
  double *tx = NULL, *Ax = B->A->Ax;
  int64_t wcap = 0, p0 = B->sum[r], w = p0;
  B->nomem[r] = 0;
  for (int64_t i = B->r0[r]; i < B->r0[r + 1]; i++) {
    int64_t p1 = Ap[i + 1], len = p1 - p0, rs = w;
    if (!is_sorted(Aj + p0, len)) {
      if (len > SC_RUN && len > wcap) {
        free(tj);
        free(tx);
        tj = malloc(bytes_of(len, sizeof *tj));
        tx = malloc(bytes_of(len, sizeof *tx));
        wcap = len;
        if (!tj || !tx) {
          B->nomem[r] = len;
          goto done;
        }
      }
      sort_row(Aj + p0, Ax + p0, len, tj, tx);
    }
    for (int64_t p = p0; p < p1; p++) {
      if (w > rs && Aj[w - 1] == Aj[p]) {
        Ax[w - 1] += Ax[p];
      } else {
        Aj[w] = Aj[p];
        Ax[w++] = Ax[p];
      }
    }
    Ap[i + 1] = w;
    p0 = p1;
  }
done:
  B->len[r] = w - B->sum[r];
  free(tj);
  free(tx);
}

/* Splits rows [0, m) into R parts of about equal entries (Ap: row starts
 * before packing) into r0[0..R]. */
static void split_rows(sc_build *B, int R) {
  const int64_t *Ap = B->A->Ap, m = B->m, nz = Ap[m];
  B->rparts = R;
  B->r0[0] = 0;
  for (int r = 1; r < R; r++) { /* first row starting at or after the r-th share */
    int64_t goal = part_lo(nz, r, R), lo = B->r0[r - 1], hi = m;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (Ap[mid] < goal) lo = mid + 1;
      else hi = mid;
    }
    B->r0[r] = lo;
  }
  B->r0[R] = m;
}

/* Sorts rows and sums duplicates on `threads` threads; packs the row parts
 * together. */
static shiro_status sort_and_sum(sc_build *B, int threads, shiro_error *err) {
  sc_csr *A = B->A;
  int64_t *Ap = A->Ap, w = 0;
  split_rows(B, threads);
  for (int r = 0; r < B->rparts; r++) B->sum[r] = Ap[B->r0[r]];
  run_parts(B->rparts, threads, sort_part, B);
  for (int r = 0; r < B->rparts; r++)
    if (B->nomem[r])
      return shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory sorting a row of %lld entries",
                        (long long)B->nomem[r]);
  /* Pack: each part moves left to the end of the previous one, in order
   * (a part's target may overlap the unmoved data of the one before). */
  for (int r = 0; r < B->rparts; r++) {
    int64_t from = B->sum[r], shift = from - w;
    if (shift) {
      memmove(A->Aj + w, A->Aj + from, (size_t)B->len[r] * sizeof *A->Aj);
      memmove(A->Ax + w, A->Ax + from, (size_t)B->len[r] * sizeof *A->Ax);
      for (int64_t i = B->r0[r]; i < B->r0[r + 1]; i++) Ap[i + 1] -= shift;
    }
    w += B->len[r];
  }
  A->nnz = w;
  return SHIRO_OK;
}

/* Triplet parts and row-sort threads for `threads` asked (<= 0: automatic). */
static void choose_parts(sc_build *B, int threads, int *rthreads) {
  int64_t T = threads > 0 ? threads : omp_get_max_threads();
  int64_t R = T;
  if (T > SC_MAX_PARTS) T = R = SC_MAX_PARTS;
  if (T < 1) T = R = 1;
  if (threads <= 0 && B->n < SC_PAR_TRIPLETS) T = 1;
  if (threads <= 0 && B->n < SC_PAR_ENTRIES) R = 1;
  /* T-1 counter arrays of m entries each: no more than the triplets themselves. */
  if (T > 1 + B->n / (B->m + 1)) T = 1 + B->n / (B->m + 1);
  B->parts = (int)T;
  *rthreads = (int)R;
}

shiro_status sc_csr_from_coo_segs(int64_t m, int64_t k, int64_t nseg, const sc_coo_seg *segs,
                                  sc_coo_mirror mirror, int threads, sc_csr **out,
                                  shiro_error *err) {
  shiro_status st = SHIRO_OK;
  sc_build *B = NULL;
  sc_csr *A = NULL;
  int64_t *seg0 = NULL, bad = -1, nz;
  int R = 1;
  bool mir = (mirror == SC_COO_SYMMETRIC || mirror == SC_COO_SKEW), args_ok;
  if (!out) return shiro_fail(err, SHIRO_ERR_ARG, "sc_csr_from_coo: out is NULL");
  *out = NULL;
  args_ok = m >= 0 && k >= 0 && nseg >= 0 && (nseg == 0 || segs) && !(mir && m != k) &&
            (mirror == SC_COO_AS_IS || mir);
  for (int64_t s = 0; args_ok && s < nseg; s++)
    args_ok = segs[s].n >= 0 && (segs[s].n == 0 || (segs[s].Ti && segs[s].Tj));
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
  choose_parts(B, threads, &R);
  A = calloc(1, sizeof *A);
  if (!A || m == INT64_MAX || !bytes_of(m + 1, sizeof *A->Ap) ||
      !(A->Ap = calloc(1, bytes_of(m + 1, sizeof *A->Ap)))) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for the row pointers of %lld rows",
                    (long long)m);
    goto done;
  }
  A->m = m;
  A->k = k;
  B->A = A;
  for (int t = 0; t + 1 < B->parts; t++) {
    if (!(B->H[t] = calloc(1, bytes_of(m, sizeof *B->H[t])))) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for the row counters of %lld rows",
                      (long long)m);
      goto done;
    }
  }
  B->H[B->parts - 1] = A->Ap + 1;
  /* Count the entries of each row, per part. */
  run_parts(B->parts, B->parts, count_part, B);
  for (int t = 0; t < B->parts && bad < 0; t++) bad = B->bad[t];
  if (bad >= 0) {
    const sc_coo_seg *S = &segs[seg_of(B, bad)];
    int64_t o = bad - seg0[S - segs];
    st = shiro_fail(err, SHIRO_ERR_ARG,
                    "sc_csr_from_coo: triplet %lld is (%lld, %lld), outside the %lld x %lld "
                    "matrix",
                    (long long)bad, (long long)S->Ti[o], (long long)S->Tj[o], (long long)m,
                    (long long)k);
    goto done;
  }
  /* H[t][i] = first slot of part t in row i; row i then ends at H[T-1][i] = Ap[i+1]. */
  if (B->parts == 1) {
    nz = 0;
    for (int64_t i = 0; i < m; i++) {
      int64_t c = A->Ap[i + 1];
      A->Ap[i + 1] = nz;
      nz += c;
    }
  } else {
    int RP = B->parts;
    B->r0[0] = 0;
    for (int r = 1; r <= RP; r++) B->r0[r] = part_lo(m, r, RP);
    run_parts(RP, B->parts, prefix_sum_part, B);
    nz = 0;
    for (int r = 0; r < RP; r++) {
      int64_t c = B->sum[r];
      B->sum[r] = nz;
      nz += c;
    }
    run_parts(RP, B->parts, prefix_slot_part, B);
  }
  A->Aj = big_malloc(bytes_of(nz, sizeof *A->Aj));
  A->Ax = big_malloc(bytes_of(nz, sizeof *A->Ax));
  if (!A->Aj || !A->Ax) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory for a CSR matrix of %lld entries",
                    (long long)nz);
    goto done;
  }
  /* Scatter in triplet order: a stable counting sort by row. */
  run_parts(B->parts, B->parts, scatter_part, B);
  SHIRO_CHECK_GOTO(sort_and_sum(B, R, err), st);
  if (A->nnz < nz) { /* give back what summing duplicates freed; keep the arrays if that fails */
    int64_t *j2 = realloc(A->Aj, bytes_of(A->nnz, sizeof *j2));
    if (j2) A->Aj = j2;
    double *x2 = realloc(A->Ax, bytes_of(A->nnz, sizeof *x2));
    if (x2) A->Ax = x2;
  }
done:
  if (B)
    for (int t = 0; t + 1 < B->parts; t++) free(B->H[t]);
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
  sc_coo_seg seg = {n, Ti, Tj, Tx};
  if (n < 0) {
    if (out) *out = NULL;
    return shiro_fail(err, SHIRO_ERR_ARG,
                      "sc_csr_from_coo: bad arguments (m=%lld, k=%lld, n=%lld, mirror=%d)",
                      (long long)m, (long long)k, (long long)n, (int)mirror);
  }
  return sc_csr_from_coo_segs(m, k, 1, &seg, mirror, 0, out, err);
}
