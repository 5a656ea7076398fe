/* blocks.h — the off-diagonal blocks A(p,q) as bipartite graphs. */
#ifndef SHIRO_BLOCKS_H
#define SHIRO_BLOCKS_H

#include <stdint.h>

#include "csr.h"
#include "partition.h"
#include "shiro_status.h"

/* One off-diagonal block A(p,q), q != p, with at least one nonzero: rows of
 * A owned by p (destination) × columns whose B rows q owns (source). */
typedef struct sc_block {
  int32_t p, q; /* destination rank (owns the rows), source rank (owns the columns) */
  int32_t nr, nc; /* distinct rows / distinct columns with a nonzero in the block */
  int64_t ne; /* nonzeros in the block */
  int32_t *rows; /* [nr] global row ids, increasing (A has at most 2^31-1 rows: blocks_build) */
  int32_t *cols; /* [nc] global column ids, increasing (and at most 2^31-1 columns) */
  int32_t *Gp; /* [nr+1] edges of block row i: Gj[Gp[i] .. Gp[i+1]-1] (ne < 2^31: blocks_build) */
  int32_t *Gj; /* [ne] block column ids in [0, nc), increasing within a row */
  uint8_t *rsel; /* [nr] 1: row i is sent as a partial C row (row side) */
  uint8_t *csel; /* [nc] 1: column j's B row is sent (column side) */
  int64_t mu; /* maximum matching size (= minimum cover size), -1 if not solved */
  int64_t ent_partial; /* entries the selection puts in programs (block_count_entries): nonzeros of
                          selected rows in unselected columns (the partial rows q computes) */
  int64_t ent_remote; /* and nonzeros in selected columns (p's REMOTE_B entries) */
  int32_t *rmatch; /* [nr] column matched to row i or -1: the cover's certificate (NULL if none;
                      malloc'ed on its own, the other arrays live in their rank's arena) */
} sc_block;

/* All off-diagonal blocks of A under partitions Prow (rows of A/C) and Pcol
 * (rows of B), ordered by (p, q). Built in parallel over p; the result does
 * not depend on the number of threads. */
typedef struct sc_blocks {
  int32_t parts; /* R */
  int64_t n; /* number of non-empty off-diagonal blocks */
  sc_block *b; /* [n] */
  int64_t *first_p; /* [R+1] blocks of destination p are b[first_p[p] .. first_p[p+1]-1] */
  int32_t cert_nodes, cert_gpn; /* group strategy: nodes and ranks per node of the certificate below */
  int64_t **cert; /* [nodes²] node pair (N, H) at N * nodes + H: its maximum matching as
                        global (i, j) pairs, rows by owner rank (N * gpn + x, x increasing),
                        then increasing; NULL when it has none */
  int64_t *cert_at; /* [nodes² × (gpn + 1)]: pair y's pairs of rank N * gpn + x are
                        cert[y][cert_at[y * (gpn + 1) + x] .. cert_at[y * (gpn + 1) + x + 1]) */
  struct sc_route *route; /* hybrid's links and routing (strategy.h), NULL until set */
  void **arena; /* [2R] two allocations per destination rank p holding its blocks' arrays:
                        arena[2p] rows, Gp, Gj, rsel; arena[2p+1] cols, csel */
} sc_blocks;

/* Extracts every non-empty off-diagonal block, rsel and csel zeroed. Requires
 * A->m == Prow->n and A->k == Pcol->n, same number of parts, and at most
 * 2^31-1 rows and columns and no block of more than 2^31-1 nonzeros
 * (SHIRO_ERR_UNSUPPORTED: block ids and edge offsets are 32-bit). Memory: per thread
 * the widest part of Pcol (5 bytes a row) and the largest rank's nonzeros
 * (16 bytes each: distinct columns, runs) of scratch, sized once; two
 * allocations per rank.
 * Memory: 4 bytes per edge (no values: a block row's edges are a run of A's row, whose
 * values the programs read from A), 9 per block row, 5 per block column. */
shiro_status blocks_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                          sc_blocks *out, shiro_error *err);

/* The index of block (p, q) in B->b, -1 if there is none: a binary search of p's blocks (q
 * increasing), O(log of p's blocks), no R x R table. */
static inline int64_t blocks_find(const sc_blocks *B, int32_t p, int32_t q) {
  int64_t lo = B->first_p[p], hi = B->first_p[p + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (B->b[mid].q < q) lo = mid + 1;
    else hi = mid;
  }
  return lo < B->first_p[p + 1] && B->b[lo].q == q ? lo : -1;
}

/* Sets b->ent_partial and b->ent_remote from b's rsel and csel: what its
 * rows and columns put in the programs. Strategies call it once a block's
 * selection is final, while the block is still in cache. */
void block_count_entries(sc_block *b);

/* The rows b's selection moves from q to p: its selected columns' B rows and its selected rows'
 * partial C rows (the block's share of a flat strategy's volume). */
int64_t block_rows_moved(const sc_block *b);

/* Frees group's node-pair certificate (cert, cert_at), if any. */
void blocks_drop_cert(sc_blocks *B);

/* Frees every block's arrays and the list. NULL is a no-op. */
void blocks_free(sc_blocks *B);

#endif
