/* time_balance.h — the `time` partition: contiguous rows over which no rank's links
 * carry much more of a call than the others', as the cost model predicts it. */
#ifndef SHIRO_TIME_BALANCE_H
#define SHIRO_TIME_BALANCE_H

#include "machine.h"
#include "work_balance.h"

/* balance_rounds (work_balance.h) with strategy s's covers and plan (gpn ranks per node;
 * hybrid's routing decided anew on each partition, on m's links, its candidates priced as
 * the plan) priced on machine m for rows of row_bytes: each rank's load is its time
 * (cost_predict_ranks: the busiest of its links, summed over the stages), floored at a
 * quarter of the mean so that a rank with little traffic takes rows but not all of them, in
 * nonzeros per mean time (so a rank of average nonzeros and average time keeps its rows);
 * the objective is the predicted time per call, infinite for a partition that leaves a rank
 * without rows where A has at least R (never kept). *rep in seconds. B's routing, if any, is
 * left without a price callback. Deterministic. */
shiro_status time_balance(const sc_csr *A, sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes,
                          int rounds, sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_balance *rep,
                          shiro_error *err);

#endif
