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

/* Builds the flat (single-stage, direct) program of every rank for strategy
 * s (block, col, row or joint) from blocks whose selections are set. Ranks
 * are built in parallel; the result does not depend on the thread count.
 * gpn = ranks per node (classifies each message's tier). */
shiro_status plan_build_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, sc_plan *out,
                             shiro_error *err);

/* Frees every program of a plan built in memory. NULL is a no-op. */
void plan_free(sc_plan *P);

#endif
