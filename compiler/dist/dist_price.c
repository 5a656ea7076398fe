/* dist_price.c — the distributed plan priced on a machine: flows gathered, one cost model. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist_price.h"
#include "error.h"

/* Appends one flow (F->failed set where there is no memory). */
static void add_flow(dist_flows *F, dist_flow fl) {
  if (F->failed) return;
  if (F->n == F->cap) {
    const int64_t cap = F->cap ? 2 * F->cap : 1024;
    dist_flow *f = realloc(F->f, (size_t)cap * sizeof *f);
    if (!f) {
      F->failed = 1;
      return;
    }
    F->f = f;
    F->cap = cap;
  }
  F->f[F->n++] = fl;
}

void dist_flows_add_rank(dist_flows *F, const prog_rank *pr) {
  if (pr->nstages > F->nstages) F->nstages = (int32_t)pr->nstages;
  for (int64_t x = 0; x < pr->nx && !F->failed; x++) {
    const int64_t *rec = pr->xchg + x * PROG_X_WIDTH;
    if (rec[XF_DIR] != 0) continue; /* cost_add_rank's filters on the rest */
    add_flow(F, (dist_flow){pr->rank, (int32_t)rec[XF_PEER], (int32_t)rec[XF_STAGE], (int32_t)rec[XF_KIND], rec[XF_COUNT]});
  }
}

void dist_flows_add_msg(void *arg, const plan_msg *m) {
  add_flow(arg, (dist_flow){m->src, m->dst, m->stage, m->kind, m->rows});
}

/* Flows in the programs' order: sender, kind, receiver (then stage: a kind has one). */
static int flow_cmp(const void *a, const void *b) {
  const dist_flow *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  return (x->stage > y->stage) - (x->stage < y->stage);
}

/* Sorts f[0..n) into the programs' order and joins the parts of one message; returns how many. */
static int64_t join_flows(dist_flow *f, int64_t n) {
  if (n == 0) return 0;
  qsort(f, (size_t)n, sizeof *f, flow_cmp);
  int64_t w = 0;
  for (int64_t x = 1; x < n; x++) {
    if (flow_cmp(&f[w], &f[x]) == 0) f[w].rows += f[x].rows;
    else f[++w] = f[x];
  }
  return w + 1;
}

shiro_status dist_price(const dist_comm *c, dist_flows *F, const sc_machine *m, int32_t R, size_t row_bytes,
                        cost_pred *pred, shiro_error *err) {
  const int P = c->size;
  memset(pred, 0, sizeof *pred);
  shiro_status st = F->failed ? shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory listing the plan's messages") : SHIRO_OK;
  if (F->n > INT_MAX) st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 messages on one process to price");
  int *cnt = c->rank == 0 ? malloc((size_t)P * 2 * sizeof *cnt) : NULL, *dsp = cnt ? cnt + P : NULL;
  int32_t nstages = 0;
  if (c->rank == 0 && !cnt) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  st = dist_agree(c, st, err);
  MPI_Datatype ft = MPI_DATATYPE_NULL;
  if (st == SHIRO_OK && (MPI_Type_contiguous((int)sizeof(dist_flow), MPI_BYTE, &ft) != MPI_SUCCESS || MPI_Type_commit(&ft) != MPI_SUCCESS))
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Type_contiguous failed");
  st = dist_agree(c, st, err); /* no process gathers while another has no type */
  int mine = (int)F->n;
  if (st == SHIRO_OK && (MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, c->comm) != MPI_SUCCESS || MPI_Reduce(&F->nstages, &nstages, 1, MPI_INT32_T, MPI_MAX, 0, c->comm) != MPI_SUCCESS))
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Gather of the message counts failed");
  int64_t total = 0;
  for (int d = 0; st == SHIRO_OK && cnt && d < P; d++) {
    dsp[d] = (int)total;
    total += cnt[d];
  }
  dist_flow *all = NULL;
  if (st == SHIRO_OK && c->rank == 0) {
    if (total > INT_MAX) st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 messages to price");
    else if (!(all = malloc((size_t)(total ? total : 1) * sizeof *all))) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  }
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && MPI_Gatherv(F->f, mine, ft, all, cnt, dsp, ft, 0, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Gatherv of the plan's messages failed");
  free(F->f);
  F->f = NULL;
  F->n = F->cap = 0;
  if (st == SHIRO_OK && c->rank == 0) { /* one process's pricing of the same programs (cost_add_rank) */
    cost_model cm;
    st = cost_init(&cm, m, R, row_bytes, err);
    if (st == SHIRO_OK) {
      total = join_flows(all, total);
      if (nstages > cm.nstages) cm.nstages = nstages;
      for (int64_t x = 0; x < total; x++) cost_add_flow(&cm, all[x].src, all[x].dst, all[x].stage, all[x].rows);
      st = cost_predict(&cm, pred, err);
      cost_free(&cm);
    }
  }
  free(all);
  free(cnt);
  if (ft != MPI_DATATYPE_NULL) MPI_Type_free(&ft);
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && MPI_Bcast(pred, (int)sizeof *pred, MPI_BYTE, 0, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Bcast of the prediction failed"), err);
  return st;
}
