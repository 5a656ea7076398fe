/* csr.h — the sparse matrix of the compiler: compressed sparse rows, 64-bit
 * row pointers and 32-bit column indices (at most 2^31-1 columns). */
#ifndef SHIRO_CSR_H
#define SHIRO_CSR_H

#include <stdint.h>

#include "shiro_status.h"

typedef struct sc_csr {
  int64_t m; /* rows */
  int64_t k; /* columns, at most SC_CSR_MAX_COLS */
  int64_t nnz; /* stored entries (after symmetric expansion and summing duplicates) */
  int64_t *Ap; /* [m+1] row pointers, Ap[0] = 0, Ap[m] = nnz */
  int32_t *Aj; /* [nnz] column indices in [0,k), strictly increasing within a row */
  double *Ax; /* [nnz] values (1.0 for pattern matrices), or NULL when compacted (below) */
  /* Compacted values (sc_csr_compact_values), set only when Ax is NULL: most
   * entries are 1.0 (a pattern file's, but for summed duplicates), so only
   * the others are stored. Read every value through sc_csr_val. */
  uint64_t *Xbit; /* [nnz/64 + 1] bit t: entry t's value is not 1.0 */
  int64_t *Xrank; /* [nnz/64 + 1] flagged entries in the words before word w */
  double *Xv; /* [flagged] the flagged entries' values, in entry order */
} sc_csr;

/* The value of A's entry t (0 <= t < nnz), whether A's values are an array
 * or compacted. Local, O(1). */
static inline double sc_csr_val(const sc_csr *A, int64_t t) {
  if (A->Ax) return A->Ax[t];
  const uint64_t w = A->Xbit[t >> 6], bit = (uint64_t)1 << (t & 63);
  if (!(w & bit)) return 1.0;
  return A->Xv[A->Xrank[t >> 6] + __builtin_popcountll(w & (bit - 1))];
}

/* Replaces A's value array by the compacted form above when at most one
 * entry in 16 differs from 1.0 (then it is at most 2 bits + 1/2 byte per
 * entry instead of 8 bytes); otherwise, or when out of memory, leaves A as
 * it is: either way A's values, as sc_csr_val reads them, are unchanged.
 * Code that reads A->Ax directly must not be given a compacted matrix.
 * Returns 1 if A was compacted. Local. */
int sc_csr_compact_values(sc_csr *A);

/* 1 if every value of A is 1.0 (sc_csr_val), 0 if one is not: a pattern file whose duplicate
 * entries were summed has values of 2 and more. Local, O(nnz) (compacted: O(nnz/64)). */
int sc_csr_all_ones(const sc_csr *A);

/* The most columns a matrix may have: its column indices are 32-bit (half the
 * memory of 64-bit ones, 4 bytes per nonzero). Wider matrices are refused with
 * SHIRO_ERR_UNSUPPORTED. */
#define SC_CSR_MAX_COLS ((int64_t)INT32_MAX)

/* Narrows the n 64-bit column indices wide[0..n-1] (each in [0, 2^31)) to
 * 32 bits in place, in the front of the same block, and shrinks the block;
 * returns it as int32_t[n] (the block itself if shrinking fails). Local. */
int32_t *sc_csr_narrow_cols(int64_t *wide, int64_t n);

/* Frees A and its arrays; NULL is a no-op. */
void sc_csr_free(sc_csr *A);

/* How sc_csr_from_coo mirrors off-diagonal triplets. */
typedef enum sc_coo_mirror {
  SC_COO_AS_IS = 0, /* every triplet once */
  SC_COO_SYMMETRIC = 1, /* (i,j,v) with i != j also gives (j,i,v) */
  SC_COO_SKEW = 2 /* (i,j,v) with i != j also gives (j,i,-v) */
} sc_coo_mirror;

/* Builds a new m × k CSR matrix *out from n triplets (Ti[t], Tj[t], Tx[t]),
 * 0-based; Tx == NULL means every value is 1.0. Diagonal triplets are never
 * mirrored. Duplicate coordinates are summed into one entry in triplet order
 * (a mirrored copy counts at the place of its triplet), so the result does
 * not depend on anything but the input; explicit zeros are kept; columns are
 * strictly increasing within each row. Time O(n + m) plus the sorting of
 * rows that are not already in column order; memory O(n + m).
 * Inputs are borrowed and not modified. Requires m, k, n >= 0, and m == k
 * when mirroring. Returns SHIRO_OK, SHIRO_ERR_ARG (bad sizes, an index out
 * of range: err says which triplet) or SHIRO_ERR_NOMEM; on failure *out is
 * NULL. */
shiro_status sc_csr_from_coo(int64_t m, int64_t k, int64_t n, const int64_t *Ti,
                             const int64_t *Tj, const double *Tx, sc_coo_mirror mirror,
                             sc_csr **out, shiro_error *err);

/* A run of triplets: (Ti[t], Tj[t], Tx[t]) for t < n, with 64-bit indices
 * (Ti, Tj) or 32-bit ones (Ti32, Tj32, used when Ti is NULL: half the
 * bandwidth where the matrix allows); Tx == NULL means 1.0. */
typedef struct sc_coo_seg {
  int64_t n; /* triplets in the run */
  const int64_t *Ti; /* [n] 0-based rows, or NULL (borrowed) */
  const int64_t *Tj; /* [n] 0-based columns, or NULL (borrowed) */
  const int32_t *Ti32; /* [n] 0-based rows when Ti is NULL (borrowed) */
  const int32_t *Tj32; /* [n] 0-based columns when Tj is NULL (borrowed) */
  const double *Tx; /* [n] values, or NULL for all 1.0 (borrowed) */
} sc_coo_seg;

/* sc_csr_from_coo over the concatenation of nseg runs (triplet numbers in
 * messages count through the runs), with `threads` threads (<= 0: OpenMP's
 * current number; the builder uses fewer where there is too little work or
 * a thread's per-row counters would outweigh the triplets). The result is
 * bit-identical whatever the number of threads: rows are filled in triplet
 * order (a counting sort that gives each thread the rows' slots after those
 * of the threads with earlier triplets), sorted stably and summed in that
 * order. Requires nseg >= 0 and segs != NULL when nseg > 0. Collective over
 * the threads it starts; local to the caller. */
shiro_status sc_csr_from_coo_segs(int64_t m, int64_t k, int64_t nseg, const sc_coo_seg *segs,
                                  sc_coo_mirror mirror, int threads, sc_csr **out,
                                  shiro_error *err);

#endif
