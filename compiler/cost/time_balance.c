/* time_balance.c — the `time` partition (time_balance.h).
 *
 * A contiguous partition balances what a rank owns; the call waits for the
 * rank whose links are busiest. On power-law matrices that rank holds the
 * rows many others need (it sends them) or needs many (it receives them), and
 * its share of the nonzeros says little about either. Each round prices the
 * plan and moves rows away from the ranks whose links take longest. */
#include <stdlib.h>

#include "cost_plan.h"
#include "error.h"
#include "time_balance.h"

typedef struct time_eval {
  const sc_csr *A;
  sc_strategy s;
  int32_t gpn;
  const sc_machine *m;
  size_t row_bytes;
  double *rank_s;
} time_eval;

static shiro_status eval_time(void *arg, const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B,
                              double *load, double *objective, shiro_error *err) {
  const time_eval *te = arg;
  const int32_t R = Prow->parts;
  cost_pred pred;
  shiro_status st = strategy_select(B, te->s, te->gpn, NULL, NULL, err);
  if (st == SHIRO_OK)
    st = cost_plan(te->A, Prow, Pcol, B, te->s, te->gpn, te->m, te->row_bytes, NULL, &pred, te->rank_s, err);
  if (st != SHIRO_OK) return st;
  double mean = 0;
  for (int32_t r = 0; r < R; r++) mean += te->rank_s[r];
  mean /= R;
  const double per = mean > 0 ? (double)te->A->nnz / R / mean : 0;  /* nonzeros per second at the mean */
  for (int32_t r = 0; r < R; r++) {
    const double t = te->rank_s[r] > 0.25 * mean ? te->rank_s[r] : 0.25 * mean;
    load[r] = per > 0 ? t * per : 0;  /* no traffic anywhere: every rank keeps its rows */
  }
  *objective = pred.time_s;
  return SHIRO_OK;
}

shiro_status time_balance(const sc_csr *A, sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes,
                          int rounds, sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_balance *rep,
                          shiro_error *err) {
  if (s == STRAT_HYBRID) return shiro_fail(err, SHIRO_ERR_ARG, "time partition: hybrid routes on a partition; balance with another strategy");
  time_eval te = {A, s, gpn, m, row_bytes, malloc((size_t)Prow->parts * sizeof(double))};
  if (!te.rank_s) return shiro_fail(err, SHIRO_ERR_NOMEM, "time partition: out of memory");
  shiro_status st = balance_rounds(A, rounds, eval_time, &te, Prow, Pcol, B, rep, err);
  free(te.rank_s);
  return st;
}
