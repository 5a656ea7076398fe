/* blocks.h — the off-diagonal blocks A(p,q) as bipartite graphs. */
#ifndef SHIRO_BLOCKS_H
#define SHIRO_BLOCKS_H

#include <stdint.h>

#include "csr.h"
#include "partition.h"
#include "shiro.h"

/* One off-diagonal block A(p,q), q != p, with at least one nonzero: rows of
 * A owned by p (destination) × columns whose B rows q owns (source). */
typedef struct sc_block {
  int32_t p, q;    /* destination rank (owns the rows), source rank (owns the columns) */
  int32_t nr, nc;  /* distinct rows / distinct columns with a nonzero in the block */
  int64_t ne;      /* nonzeros in the block */
  int64_t *rows;   /* [nr] global row ids, increasing */
  int64_t *cols;   /* [nc] global column ids, increasing */
  int64_t *Gp;     /* [nr+1] edges of block row i: Gj/Ge[Gp[i] .. Gp[i+1]-1] */
  int32_t *Gj;     /* [ne] block column ids in [0, nc), increasing within a row */
  int64_t *Ge;     /* [ne] position of the nonzero in A's Aj/Ax */
  uint8_t *rsel;   /* [nr] 1: row i is sent as a partial C row (row side) */
  uint8_t *csel;   /* [nc] 1: column j's B row is sent (column side) */
  int64_t mu;      /* maximum matching size (= minimum cover size), -1 if not solved */
  int32_t *rmatch; /* [nr] column matched to row i or -1: the cover's certificate (NULL if none) */
} sc_block;

/* All off-diagonal blocks of A under partitions Prow (rows of A/C) and Pcol
 * (rows of B), ordered by (p, q). Built in parallel over p; the result does
 * not depend on the number of threads. */
typedef struct sc_blocks {
  int32_t parts;     /* R */
  int64_t n;         /* number of non-empty off-diagonal blocks */
  sc_block *b;       /* [n] */
  int64_t *first_p;  /* [R+1] blocks of destination p are b[first_p[p] .. first_p[p+1]-1] */
  int64_t ncert;     /* node-level certificate pairs (group strategy) */
  int64_t *cert;     /* [ncert × 2] global (i, j): maximum matchings of the node-pair blocks */
} sc_blocks;

/* Extracts every non-empty off-diagonal block. Requires A->m == Prow->n and
 * A->k == Pcol->n, same number of parts. */
shiro_status blocks_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                          sc_blocks *out, shiro_error *err);

/* Frees every block's arrays and the list. NULL is a no-op. */
void blocks_free(sc_blocks *B);

#endif
