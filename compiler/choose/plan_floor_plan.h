/* plan_floor_plan.h — the floors of a written plan (plan_floor.h), from the programs themselves:
 * the ranks' local matrices (format 2.1) give A's pattern and the rows each rank owns, so a plan
 * file is enough to say how far it is from the limit (shiro-plan-dump --machine).
 *
 * The ranks are added one at a time, in rank order, so a reader need map only one at a time. The
 * matrix is rebuilt in the programs' numbering (rank p's C rows c_first .. c_first + c_rows − 1,
 * its B rows b_first .. b_first + b_rows − 1; with row lists, c_global and b_global map them back);
 * the floors do not depend on the numbering inside a rank, only on which rank owns which row. */
#ifndef SHIRO_PLAN_FLOOR_PLAN_H
#define SHIRO_PLAN_FLOOR_PLAN_H

#include <stdint.h>

#include "csr.h"
#include "partition.h"
#include "plan_floor.h"
#include "program.h"

/* A plan's matrix and partitions, collected rank by rank. */
typedef struct plan_floor_input {
  int32_t ranks, gpn, added; /* R, G, ranks added so far */
  sc_csr *A; /* rows in the programs' numbering; columns in the original one until finished */
  sc_partition Prow, Pcol; /* first[p]: rank p's c_first (b_first) */
  int32_t *cnew; /* [k] the programs' number of original column j, -1 until its owner is added */
} plan_floor_input;

/* Starts collecting the plan of meta (R ranks, A of m × k with nnz nonzeros). Memory: 8 bytes a
 * row, 4 a column and 4 a nonzero. SHIRO_ERR_NOMEM (err filled) when out of memory. */
shiro_status plan_floor_input_init(const prog_meta *meta, plan_floor_input *in, shiro_error *err);

/* Adds rank in->added's program pr (checked by plan_check_rank): its local matrix's rows, its C
 * and B rows. SHIRO_ERR_FORMAT when pr is not that rank, has no local matrix (a 2.0 plan), or its
 * rows do not follow the previous rank's; SHIRO_ERR_NOMEM. */
shiro_status plan_floor_input_add(plan_floor_input *in, const prog_rank *pr, shiro_error *err);

/* The floors of the collected plan (every rank added) into *f, on `threads` threads
 * (plan_floor_rows); renumbers A's columns into the programs' numbering first. SHIRO_ERR_FORMAT
 * when ranks are missing or a column has no owner; SHIRO_ERR_NOMEM. Prints nothing. */
shiro_status plan_floor_of_input(plan_floor_input *in, int threads, plan_floor *f, shiro_error *err);

/* Frees what *in owns. */
void plan_floor_input_free(plan_floor_input *in);

#endif
