/* dist_values.c — compacted values built in two passes. */
#include <stdlib.h>
#include <string.h>

#include "dist_values.h"

int dist_values_init(dist_values *V, int64_t nnz) {
  memset(V, 0, sizeof *V);
  V->nnz = nnz;
  V->bit = calloc((size_t)(nnz / 64 + 1), sizeof *V->bit);
  V->rank = malloc((size_t)(nnz / 64 + 1) * sizeof *V->rank);
  if (V->bit && V->rank) return 1;
  dist_values_free(V);
  return 0;
}

int dist_values_ranks(dist_values *V) {
  int64_t n = 0;
  for (int64_t w = 0; w <= V->nnz / 64; w++) {
    V->rank[w] = n;
    n += __builtin_popcountll(V->bit[w]);
  }
  V->xv = malloc((size_t)(n ? n : 1) * sizeof *V->xv);
  return V->xv != NULL;
}

void dist_values_install(dist_values *V, sc_csr *A) {
  free(A->Ax);
  free(A->Xbit);
  free(A->Xrank);
  free(A->Xv);
  A->Ax = NULL;
  A->Xbit = V->bit;
  A->Xrank = V->rank;
  A->Xv = V->xv;
  memset(V, 0, sizeof *V);
}

void dist_values_free(dist_values *V) {
  free(V->bit);
  free(V->rank);
  free(V->xv);
  memset(V, 0, sizeof *V);
}
