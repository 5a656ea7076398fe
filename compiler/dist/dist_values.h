/* dist_values.h — a matrix's values built straight into the compacted form sc_csr_val reads
 * (csr.h: Xbit, Xrank, Xv), from values given entry by entry in any order, in two passes: never an
 * array of a double per entry, which the distributed planner's matrices would hold only to
 * compact it. */
#ifndef SHIRO_DIST_VALUES_H
#define SHIRO_DIST_VALUES_H

#include <stdint.h>

#include "csr.h"

typedef struct dist_values {
  int64_t nnz;
  uint64_t *bit; /* [nnz/64 + 1] bit t: entry t's value is not 1.0 */
  int64_t *rank; /* [nnz/64 + 1] flagged entries before word w (set by dist_values_ranks) */
  double *xv; /* [flagged] their values, in entry order */
} dist_values;

/* Room for nnz entries, every value 1.0 until marked. 0 when out of memory (V then holds nothing). */
int dist_values_init(dist_values *V, int64_t nnz);

/* Pass 1: entry t's value is v (every entry whose value is not 1.0 is marked, once). */
static inline void dist_values_mark(dist_values *V, int64_t t, double v) {
  if (v != 1.0) V->bit[t >> 6] |= (uint64_t)1 << (t & 63); /* -0.0, NaN: kept as they are */
}

/* Between the passes: the ranks, and room for the values marked. 0 when out of memory. */
int dist_values_ranks(dist_values *V);

/* Pass 2: entry t's value is v again (the value marked). */
static inline void dist_values_put(dist_values *V, int64_t t, double v) {
  const uint64_t w = V->bit[t >> 6], below = w & (((uint64_t)1 << (t & 63)) - 1);
  if (v != 1.0) V->xv[V->rank[t >> 6] + __builtin_popcountll(below)] = v;
}

/* Gives A (whose nnz is V's) the values: its value array, if any, is freed. V is emptied. */
void dist_values_install(dist_values *V, sc_csr *A);

/* Frees what V holds (after a failure). */
void dist_values_free(dist_values *V);

#endif
