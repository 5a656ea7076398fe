/* dist_choose.c — auto's strategy chosen by the processes together (dist_choose.h). */
#include <string.h>
#include <stdlib.h>

#include "dist_choose.h"
#include "dist_price.h"
#include "error.h"
#include "plan_build.h"

int dist_auto_candidate(sc_strategy s) {
  return s == STRAT_COL || s == STRAT_JOINT || s == STRAT_HIER || s == STRAT_GROUP || s == STRAT_COLA;
}

/* plan_messages' sink: the message listed for pricing and, two-tier, counted. */
typedef struct msg_sink {
  dist_flows *flows;
  sc_volumes *vol; /* NULL: the volumes come from the selections (flat) */
} msg_sink;

static void take_msg(void *arg, const plan_msg *m) {
  msg_sink *s = arg;
  dist_flows_add_msg(s->flows, m);
  if (s->vol) plan_msg_volumes(m, s->vol);
}

shiro_status dist_price_strategy(const dist_comm *c, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                 sc_blocks *B, sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes,
                                 sc_volumes *vol, cost_pred *pred, shiro_error *err) {
  sc_volumes mine = {0};
  dist_flows fl = {0};
  const int two = strategy_is_two_tier(s);
  const int block = s == STRAT_BLOCK;
  shiro_status st = strategy_select(B, s, gpn, NULL, NULL, err);
  if (st == SHIRO_OK && !two) strategy_volumes(B, Pcol, s, gpn, &mine); /* as one process counts flat plans */
  msg_sink ms = {&fl, two ? &mine : NULL};
  int32_t nstages = 0;
  if (st == SHIRO_OK && m && (!block || c->rank == 0))
    st = plan_messages(A, Prow, Pcol, B, s, gpn, take_msg, &ms, &nstages, err);
  else if (st == SHIRO_OK && two)
    st = plan_messages(A, Prow, Pcol, B, s, gpn, take_msg, &ms, &nstages, err); /* the volumes */
  fl.nstages = nstages;
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && m) st = dist_price(c, &fl, m, Prow->parts, row_bytes, pred, err); /* frees the flows */
  free(fl.f);
  if (st == SHIRO_OK && block) *vol = mine;
  else if (st == SHIRO_OK && MPI_Allreduce(&mine, vol, 3, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the volumes failed");
  return dist_agree(c, st, err);
}

shiro_status dist_choose_strategy(const dist_comm *c, const sc_csr *A, const sc_partition *Prow,
                                  const sc_partition *Pcol, sc_blocks *B, int32_t gpn, const sc_machine *m,
                                  size_t row_bytes, sc_strategy given, int compare, int price_all,
                                  dist_choice *out, shiro_error *err) {
  memset(out, 0, sizeof *out);
  shiro_status st = given == STRAT_COUNT && !m ? shiro_fail(err, SHIRO_ERR_ARG, "auto needs a machine to price on") : SHIRO_OK;
  sc_strategy last = STRAT_COUNT;
  for (int s = 0; s < STRAT_COUNT && st == SHIRO_OK; s++) {
    if (!(compare ? s != STRAT_HYBRID : dist_auto_candidate((sc_strategy)s))) continue;
    const sc_machine *pm = m && (price_all || dist_auto_candidate((sc_strategy)s)) ? m : NULL;
    st = dist_price_strategy(c, A, Prow, Pcol, B, (sc_strategy)s, gpn, pm, row_bytes, &out->vol[s], &out->pred[s], err);
    out->have[s] = st == SHIRO_OK;
    out->priced[s] = st == SHIRO_OK && pm;
    last = (sc_strategy)s;
  }
  if (st != SHIRO_OK) return st;
  out->chosen = given != STRAT_COUNT ? given : STRAT_JOINT; /* auto: the fastest, joint where equal (plan_choose's rule) */
  for (int s = 0; given == STRAT_COUNT && s < STRAT_COUNT; s++)
    if (dist_auto_candidate((sc_strategy)s) && out->have[s] && out->pred[s].time_s < out->pred[out->chosen].time_s)
      out->chosen = (sc_strategy)s;
  if (out->chosen != last) st = dist_agree(c, strategy_select(B, out->chosen, gpn, NULL, NULL, err), err);
  return st;
}
