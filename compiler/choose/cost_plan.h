/* cost_plan.h — a strategy's plan priced (and counted) from its messages:
 * no program is built, nothing is written. */
#ifndef SHIRO_COST_PLAN_H
#define SHIRO_COST_PLAN_H

#include "cost.h"
#include "plan_build.h"

/* Strategy s's plan from blocks whose selections are set for s (strategy_select), priced on a
 * cost model of machine m for rows of row_bytes into *pred: its messages (plan_messages, no
 * program built; the prediction of the built programs exactly, a test's check); with vol
 * non-NULL also their volumes added to *vol (as plan_rank_volumes counts the built ones), and
 * with rank_s non-NULL each rank's time (cost_predict_ranks, rank_s[R]). On failure (err
 * filled) *pred is unspecified. */
shiro_status cost_plan(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                       sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes, sc_volumes *vol,
                       cost_pred *pred, double *rank_s, shiro_error *err);

/* Hybrid's candidates priced as its plan will be: the plan of blocks B and a routing priced on
 * machine m (cost_plan) over the partition (Prow, Pcol). */
typedef struct cost_hybrid {
  const sc_csr *A;
  const sc_partition *Prow, *Pcol;
  int32_t gpn;
  const sc_machine *m;
  size_t row_bytes;
} cost_hybrid;

/* Sets B's routing up on hp->m's links (strategy_route_links) and prices hybrid's candidates
 * on hp->m from their messages (the route's machine; *hp's built plans, the route's price, when
 * checking them), which must outlive every strategy_select of B with hybrid (NULL the route's
 * price and machine before it ends). */
shiro_status cost_route_hybrid(sc_blocks *B, const cost_hybrid *hp, shiro_error *err);

#endif
