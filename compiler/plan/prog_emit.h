/* prog_emit.h — what both plan builders (plan_build_flat.c,
 * plan_build_tier.c) emit into a rank's program, and the entry counts they
 * size it by. Internal to plan/. */
#ifndef SHIRO_PROG_EMIT_H
#define SHIRO_PROG_EMIT_H

#include <stdint.h>

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "prog_builder.h"
#include "program.h"

/* Zeroes *pr and sets rank r's owned rows of C and B from the partitions. */
void prog_emit_rank_init(prog_rank *pr, int32_t r, const sc_partition *Prow, const sc_partition *Pcol);

/* Appends rank r's local product op, C = A(r, r) · B (shared by the builders). */
void prog_emit_local(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t r,
                     prog_builder *pb);

/* Appends block k's row i as a partial row's entries: its edges whose column
 * is not selected (those the destination does not compute itself), each
 * (column's B row - b_first, value, its position in A: val_src). A is the
 * matrix the blocks were cut from. Shared by the builders. */
void prog_emit_partial_row(prog_builder *pb, const sc_csr *A, const sc_block *k, int32_t i, int64_t b_first);

/* Stores one run of a block row's edges as REMOTE_B entries at cd/vd/od
 * (room for n): edge e gives (base + map[gj[e]], its value sc_csr_val(A, t0 + e),
 * t0 + e: the edge is A's nonzero t0 + e) and is kept only where map[gj[e]] >= 0
 * (that B row is received). Every candidate is stored and the count advances over
 * the kept ones, without a branch; returns how many were kept. */
static inline int64_t prog_run_entries(const int32_t *gj, const int32_t *map, int32_t base, const sc_csr *A,
                                       int64_t t0, int64_t n, int32_t *cd, double *vd, int64_t *od) {
  int64_t kept = 0;
  for (int64_t e = 0; e < n; e++) {
    int32_t src = map[gj[e]];
    cd[kept] = base + src;
    vd[kept] = sc_csr_val(A, t0 + e);
    od[kept] = t0 + e;
    kept += src >= 0;
  }
  return kept;
}

/* Appends one run of a block row's edges as REMOTE_B entries: edge e
 * (column gj[e], A's nonzero t0 + e, value sc_csr_val(A, t0 + e)) reads source row
 * base + map[gj[e]], and is left out where map[gj[e]] < 0 (that B row is
 * not received). */
void prog_emit_run(prog_builder *pb, const int32_t *gj, const int32_t *map, int32_t base, const sc_csr *A,
                   int64_t t0, int64_t n);

/* The entries each rank's programs will hold for the blocks, from their
 * selections: per rank r, nent[r] = the edges of blocks (p, r) in selected
 * rows whose column is not selected (r computes them as partials) and
 * nent[R + r] = the edges of blocks (r, q) whose column is selected (r
 * multiplies the B rows it receives). nent: [2R], zeroed by the caller.
 * Sums the blocks' counts (block_count_entries, set by strategy_select). */
void prog_emit_block_entries(const sc_blocks *B, int64_t *nent);

#endif
