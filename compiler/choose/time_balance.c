/* time_balance.c — the `time` partition (time_balance.h).
 *
 * A contiguous partition balances what a rank owns; the call waits for the
 * rank whose links are busiest. On power-law matrices that rank holds the
 * rows many others need (it sends them) or needs many (it receives them), and
 * its share of the nonzeros says little about either. Each round prices the
 * plan and moves rows away from the ranks whose links take longest. */
#include <math.h>
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
  const cost_hybrid hp = {te->A, Prow, Pcol, te->gpn, te->m, te->row_bytes};
  /* hybrid: its routing is decided on this partition, on the machine's links */
  shiro_status st = te->s == STRAT_HYBRID ? cost_route_hybrid(B, &hp, err) : SHIRO_OK;
  if (st == SHIRO_OK) st = strategy_select(B, te->s, te->gpn, NULL, NULL, err);
  if (B->route) B->route->price = NULL, B->route->machine = NULL; /* hp ends here */
  if (st == SHIRO_OK)
    st = cost_plan(te->A, Prow, Pcol, B, te->s, te->gpn, te->m, te->row_bytes, NULL, &pred, te->rank_s, err);
  if (st != SHIRO_OK) return st;
  double mean = 0;
  for (int32_t r = 0; r < R; r++) mean += te->rank_s[r];
  mean /= R;
  const double per = mean > 0 ? (double)te->A->nnz / R / mean : 0; /* nonzeros per second at the mean */
  for (int32_t r = 0; r < R; r++) {
    const double t = te->rank_s[r] > 0.25 * mean ? te->rank_s[r] : 0.25 * mean;
    load[r] = per > 0 ? t * per : 0; /* no traffic anywhere: every rank keeps its rows */
  }
  *objective = pred.time_s;
  /* A partition that leaves a rank without rows (where there are enough of them) is never
   * kept: the rank would still take part in every call and hold nothing, which a user of
   * the default plan does not expect (as-caida20071105 at R = 128 asked for one). */
  for (int32_t r = 0; r < R && te->A->m >= R; r++)
    if (Prow->first[r + 1] == Prow->first[r]) *objective = INFINITY;
  return SHIRO_OK;
}

shiro_status time_balance(const sc_csr *A, sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes,
                          int rounds, sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_balance *rep,
                          shiro_error *err) {
  time_eval te = {A, s, gpn, m, row_bytes, malloc((size_t)Prow->parts * sizeof(double))};
  if (!te.rank_s) return shiro_fail(err, SHIRO_ERR_NOMEM, "time partition: out of memory");
  shiro_status st = balance_rounds(A, rounds, BALANCE_SHORTEN_EXPONENT, eval_time, &te, Prow, Pcol, B, rep, err);
  free(te.rank_s);
  return st;
}
