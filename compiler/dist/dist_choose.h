/* dist_choose.h — auto's strategy chosen by the processes together: every candidate priced from
 * the messages of the blocks each process solved, before any block moves between processes. */
#ifndef SHIRO_DIST_CHOOSE_H
#define SHIRO_DIST_CHOOSE_H

#include <stddef.h>
#include <stdint.h>

#include "blocks.h"
#include "cost.h"
#include "dist_comm.h"
#include "partition.h"
#include "strategy.h"

/* What auto or --compare weighed: per strategy, whether it was counted (have) and priced (priced),
 * the whole plan's volumes and its prediction (one process's cost_plan of the same plan); the
 * strategy kept. */
typedef struct dist_choice {
  int have[STRAT_COUNT], priced[STRAT_COUNT];
  sc_volumes vol[STRAT_COUNT];
  cost_pred pred[STRAT_COUNT];
  sc_strategy chosen;
} dist_choice;

/* 1 for the strategies auto weighs with several processes: col, joint, hier, group and cola
 * (one process's auto candidates but hybrid, whose routing is one process's search). */
int dist_auto_candidate(sc_strategy s);

/* Strategy s selected on the blocks B this process solves and counted over the processes: the whole
 * plan's volumes and, on m (NULL: not priced), its prediction (one process's for the same plan).
 * block's messages and volumes follow from the partition alone: process 0 lists them all, and
 * every process counts the whole plan's. Collective; errors agreed. */
shiro_status dist_price_strategy(const dist_comm *c, const sc_csr *A, const sc_partition *Prow,
                                 const sc_partition *Pcol, sc_blocks *B, sc_strategy s, int32_t gpn,
                                 const sc_machine *m, size_t row_bytes, sc_volumes *vol, cost_pred *pred,
                                 shiro_error *err);

/* On the blocks B this process solves (blocks_build of its ranks' rows of A; the ranks are whole
 * nodes, so that the two-tier strategies' node-pair covers are its own), each strategy weighed —
 * auto's candidates (dist_auto_candidate), or with compare every strategy but hybrid — has its
 * selection made, its messages listed (plan_messages: each block's and node pair's messages are
 * listed by the one process that holds them), its volumes counted and, on m (NULL: none), its
 * plan priced by dist_price (auto's candidates, and with price_all every one: one process prices
 * the others only on a machine given), in strategy order. The kept strategy is given, or for auto (given =
 * STRAT_COUNT, m needed) the one predicted fastest, joint where equal (one process's rule); its
 * selection is left in B. Volumes and predictions are one process's for the same plans.
 * Collective; errors agreed. */
shiro_status dist_choose_strategy(const dist_comm *c, const sc_csr *A, const sc_partition *Prow,
                                  const sc_partition *Pcol, sc_blocks *B, int32_t gpn, const sc_machine *m,
                                  size_t row_bytes, sc_strategy given, int compare, int price_all,
                                  dist_choice *out, shiro_error *err);

#endif
