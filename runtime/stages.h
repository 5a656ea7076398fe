/* stages.h — a program's exchange records grouped by stage, in posting order.
 *
 * Every transport posts a stage's messages in the same order on both sides:
 * by peer, then message kind, then direction. NCCL needs that (it matches a
 * pair's sends and receives in posting order; it has no tags), and MPI then
 * gets the same order for free. A plan has at most one message per (stage,
 * peer, direction, kind), so the order is total. Messages of zero rows are
 * left out on both sides. For transports that copy rows in and out of
 * staging memory, each stage also lists the rows of S and R it sends and
 * receives, merged into disjoint ranges. */
#ifndef SHIRO_STAGES_H
#define SHIRO_STAGES_H

#include <stdint.h>

#include "program.h"
#include "shiro_status.h"

/* Rows [row, row+count) of buffer buf (PROG_BUF_S or PROG_BUF_R). */
typedef struct rt_range {
  int buf;
  int64_t row, count;
} rt_range;

/* What one stage moves. */
typedef struct rt_stage {
  int64_t x_first, nx; /* its records: xs[x_first .. x_first+nx-1] */
  int sends; /* 1 if it sends anything */
  int64_t out_first, nout; /* ranges it sends: ranges[out_first .. out_first+nout-1] */
  int64_t in_first, nin; /* ranges it receives: ranges[in_first ..] */
} rt_stage;

typedef struct rt_stages {
  int32_t nstages; /* the program's stages */
  rt_stage *stage; /* [nstages] */
  int64_t nx; /* records with COUNT > 0 */
  const int64_t **xs; /* [nx] those records (into the program), by (stage, peer, kind, direction) */
  rt_range *ranges; /* every stage's ranges */
} rt_stages;

/* Builds s from pr (the program must have passed plan_check_rank). Local.
 * On failure msg (512 bytes) says why; rt_stages_free either way. */
shiro_status rt_stages_build(rt_stages *s, const prog_rank *pr, char *msg);

/* Frees what rt_stages_build made and zeroes s. */
void rt_stages_free(rt_stages *s);

#endif
