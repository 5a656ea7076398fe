/* plan_build.h — from blocks with selections to every rank's program. */
#ifndef SHIRO_PLAN_BUILD_H
#define SHIRO_PLAN_BUILD_H

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "program.h"
#include "strategy.h"

/* A whole plan in memory: what the format writes. */
typedef struct sc_plan {
  prog_meta meta;     /* root facts */
  prog_rank *ranks;   /* [meta.ranks] programs */
} sc_plan;

/* Receives each finished program of plan_build_each, in rank order (0 ..
 * R-1), one call at a time (from whichever thread built it). The sink owns
 * *pr from then on: it keeps it or frees it (prog_rank_free). meta, the
 * plan's root facts, is complete from the first call on. A status other
 * than SHIRO_OK (err filled) stops the build. */
typedef shiro_status (*plan_sink_fn)(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err);

/* Builds every rank's program for strategy s from blocks whose selections
 * are set (flat for block, col, row, joint; two-tier for hier, group), each
 * with its certificate and pattern digest, and hands them to `sink` one by
 * one, so that a caller that writes and frees them never holds the whole
 * plan. Ranks are built in parallel; the programs do not depend on the
 * thread count. gpn = ranks per node. */
shiro_status plan_build_each(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, plan_sink_fn sink, void *arg,
                             shiro_error *err);

/* plan_build_each into memory: the whole plan in *out (plan_free). */
shiro_status plan_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                        const sc_blocks *B, sc_strategy s, int32_t gpn, sc_plan *out, shiro_error *err);

/* The builders behind plan_build_each (plan_build.c: the flat, single-stage,
 * direct program; plan_build_tier.c: the two-tier one, where B rows cross to
 * the destination node's rail-aligned rank and are forwarded inside it, and
 * partial C rows are summed at the source node's rail-aligned rank before
 * they cross). Each delivers its programs to e; a failure before any rank is
 * built is returned (err filled). */
struct plan_emit;
shiro_status plan_build_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, struct plan_emit *e,
                             shiro_error *err);
shiro_status plan_build_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                 const sc_blocks *B, int32_t gpn, struct plan_emit *e, shiro_error *err);

/* For a program of the permuted matrix P·A·Pᵀ (metis partition): records
 * the rank's original row ids (oldof[new] = old) and its digest over the
 * ORIGINAL matrix A (its rows in local order), which is what applications
 * hold. The caller names the partition in the meta and sets its matrix
 * digest to A's (shiro_pattern_digest). */
shiro_status plan_rank_set_rows(prog_rank *pr, const sc_csr *A, const int64_t *oldof, shiro_error *err);

/* shiro_pattern_digest of rows list[0..n-1] of A in that order (list NULL:
 * rows first .. first+n-1): the digest applications compute over their rows. */
uint64_t plan_rows_digest(const sc_csr *A, const int64_t *list, int64_t first, int64_t n);

/* Adds the rows one program sends per call to *v, from its exchange
 * records (every hop counted): summed over the ranks, a plan's volumes. */
void plan_rank_volumes(const prog_rank *pr, sc_volumes *v);

/* Zeroes *pr and sets rank r's owned rows of C and B from the partitions. */
void plan_rank_init(prog_rank *pr, int32_t r, const sc_partition *Prow, const sc_partition *Pcol);

/* Appends rank r's local product op, C = A(r, r) · B (shared by the builders). */
struct prog_builder;
void plan_emit_local(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t r,
                     struct prog_builder *pb);

/* Appends block k's row i as a partial row's entries: its edges whose column
 * is not selected (those the destination does not compute itself), each
 * (column's B row - b_first, value). Shared by the builders. */
void plan_emit_partial_row(struct prog_builder *pb, const sc_block *k, int32_t i, int64_t b_first);

/* Stores one run of a block row's edges as REMOTE_B entries at cd/vd (room
 * for n): edge e gives (base + map[gj[e]], x[e]) and is kept only where
 * map[gj[e]] >= 0 (that B row is received). Every candidate is stored and
 * the count advances over the kept ones, without a branch; returns how many
 * were kept. */
static inline int64_t plan_run_entries(const int32_t *gj, const int32_t *map, int32_t base, const double *x,
                                       int64_t n, int32_t *cd, double *vd) {
  int64_t kept = 0;
  for (int64_t e = 0; e < n; e++) {
    int32_t src = map[gj[e]];
    cd[kept] = base + src;
    vd[kept] = x[e];
    kept += src >= 0;
  }
  return kept;
}

/* Appends one run of a block row's edges as REMOTE_B entries: edge e
 * (column gj[e], value x[e]) reads source row base + map[gj[e]], and is
 * left out where map[gj[e]] < 0 (that B row is not received). */
void plan_emit_run(struct prog_builder *pb, const int32_t *gj, const int32_t *map, int32_t base, const double *x,
                   int64_t n);

/* The entries each rank's programs will hold for the blocks, from their
 * selections: per rank r, nent[r] = the edges of blocks (p, r) in selected
 * rows whose column is not selected (r computes them as partials) and
 * nent[R + r] = the edges of blocks (r, q) whose column is selected (r
 * multiplies the B rows it receives). nent: [2R], zeroed by the caller.
 * Sums the blocks' counts (block_count_entries, set by strategy_select). */
void plan_block_entries(const sc_blocks *B, int64_t *nent);

/* Frees every program of a plan built in memory. NULL is a no-op. */
void plan_free(sc_plan *P);

#endif
