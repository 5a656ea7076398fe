/* cost_plan.c — a plan priced from its messages (cost_plan.h). */
#include "cost_plan.h"

typedef struct price_sink {
  cost_model *cm;
  sc_volumes *vol; /* NULL: not counted */
} price_sink;

/* plan_messages' sink: each message priced (and counted), as its send record would be. */
static void price_msg(void *arg, const plan_msg *m) {
  price_sink *ps = arg;
  cost_add_flow(ps->cm, m->src, m->dst, m->stage, m->rows);
  if (ps->vol) plan_msg_volumes(m, ps->vol);
}

shiro_status cost_plan(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                       sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes, sc_volumes *vol,
                       cost_pred *pred, double *rank_s, shiro_error *err) {
  cost_model cm;
  shiro_status st = cost_init(&cm, m, Prow->parts, row_bytes, err);
  if (st != SHIRO_OK) return st;
  price_sink ps = {&cm, vol};
  int32_t nstages = 0;
  st = plan_messages(A, Prow, Pcol, B, s, gpn, price_msg, &ps, &nstages, err);
  if (nstages > cm.nstages) cm.nstages = nstages; /* as the built programs have them, empty or not */
  if (st == SHIRO_OK) st = cost_predict_ranks(&cm, pred, rank_s, err);
  cost_free(&cm);
  return st;
}

/* strategy.h's route price callback: *arg is a cost_hybrid. */
static shiro_status price_hybrid(void *arg, const sc_blocks *B, double *time_s, shiro_error *err) {
  const cost_hybrid *hp = arg;
  cost_pred pred;
  shiro_status st = cost_plan(hp->A, hp->Prow, hp->Pcol, B, STRAT_HYBRID, hp->gpn, hp->m, hp->row_bytes, NULL, &pred,
                              NULL, err);
  if (st == SHIRO_OK) *time_s = pred.time_s;
  return st;
}

shiro_status cost_route_hybrid(sc_blocks *B, const cost_hybrid *hp, shiro_error *err) {
  const sc_machine *m = hp->m;
  sc_links lk = {hp->gpn, m->nics_per_node, m->nvlink_Bps, m->nvlink_lat_s, m->nic_Bps, m->nic_lat_s, m->core_lat_s,
                 m->ideal, (double)hp->row_bytes};
  shiro_status st = strategy_route_links(B, &lk, err);
  if (st != SHIRO_OK) return st;
  B->route->price = price_hybrid;
  B->route->price_arg = (void *)hp;
  B->route->machine = hp->m; /* candidates priced from their messages (hybrid.c); price_hybrid checks them */
  B->route->row_bytes = hp->row_bytes;
  return SHIRO_OK;
}
