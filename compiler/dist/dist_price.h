/* dist_price.h — the distributed plan's predicted time on a machine (cost.h), from the messages its
 * programs send, gathered from every process and priced by the one cost model. */
#ifndef SHIRO_DIST_PRICE_H
#define SHIRO_DIST_PRICE_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "dist_comm.h"
#include "plan_build.h"
#include "program.h"

/* One message a program sends (cost_add_rank's flow) and what it carries (PROG_MSG_*). */
typedef struct dist_flow {
  int32_t src, dst, stage, kind;
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

/* plan_messages' sink (arg: a dist_flows): adds one message as its send record would be added. The
 * messages of blocks held by different processes may be parts of one message (two-tier: a rank's
 * partial rows for several destination nodes' ranks go to one aggregating rank): dist_price joins
 * them. */
void dist_flows_add_msg(void *arg, const plan_msg *m);

/* The prediction of the whole plan on machine m (rows of row_bytes each, R ranks) into *pred on
 * every process: the processes' flows gathered on process 0, put in the programs' order (by
 * sender, kind, then receiver: emit_exchange's), the parts of one message (the same sender,
 * receiver, stage and kind) joined, and priced there (cost_predict). The same prediction one
 * process makes for the same plan. Frees F's flows. Collective; errors agreed. */
shiro_status dist_price(const dist_comm *c, dist_flows *F, const sc_machine *m, int32_t R, size_t row_bytes,
                        cost_pred *pred, shiro_error *err);

#endif
