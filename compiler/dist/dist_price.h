/* dist_price.h — the distributed plan's predicted time on a machine (cost.h), from the messages its
 * programs send, gathered from every process and priced by the one cost model. */
#ifndef SHIRO_DIST_PRICE_H
#define SHIRO_DIST_PRICE_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "dist_comm.h"
#include "program.h"

/* One message a program sends (cost_add_rank's flow). */
typedef struct dist_flow {
  int32_t src, dst, stage, unused;
  int64_t rows;
} dist_flow;

/* The messages this process's programs send, in the order they were added. */
typedef struct dist_flows {
  dist_flow *f;
  int64_t n, cap;
  int32_t nstages; /* the most stages of any program added */
  int failed; /* an allocation failed */
} dist_flows;

/* Adds the messages program pr sends, as cost_add_rank reads them (its send records). Call once per
 * program, in rank order. */
void dist_flows_add_rank(dist_flows *F, const prog_rank *pr);

/* The prediction of the whole plan on machine m (rows of row_bytes each, R ranks) into *pred on
 * every process: the processes' flows gathered on process 0 in process order (the processes hold
 * increasing ranges of ranks, so this is rank order, as one process adds its programs) and priced
 * there (cost_predict). The same prediction one process makes for the same plan. Frees F's flows.
 * Collective; errors agreed. */
shiro_status dist_price(const dist_comm *c, dist_flows *F, const sc_machine *m, int32_t R, size_t row_bytes,
                        cost_pred *pred, shiro_error *err);

#endif
