/* plan_build.c — the plan compiler's entry points: plan_build_each picks the
 * flat or the two-tier builder (plan_builders.h) and hands it the delivery;
 * plan_build keeps every program in memory. Also the facts of a finished
 * program the tools use (its rows' digest, its original row ids, its
 * volumes). The builders never call back into this file. */
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "error.h"
#include "plan_build.h"
#include "plan_builders.h"
#include "plan_deliver.h"
#include "plan_local_matrix.h"

uint64_t plan_rows_digest(const sc_csr *A, const int64_t *list, int64_t first, int64_t n) {
  digest64 d;
  pattern_digest_begin(&d, n, A->k);
  for (int64_t x = 0; x < n; x++) {
    int64_t i = list ? list[x] : first + x;
    pattern_digest_row32(&d, 1, A->Ap[i + 1] - A->Ap[i], A->Aj + A->Ap[i]);
  }
  return d.h;
}

/* The first position >= lo of a column >= col in A's sorted columns lo .. hi-1. */
static int64_t lower_col(const int32_t *Aj, int64_t lo, int64_t hi, int64_t col) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (Aj[mid] < col) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The row of A that holds nonzero t (0 <= t < nnz). */
static int64_t row_of(const sc_csr *A, int64_t t) {
  int64_t lo = 0, hi = A->m; /* the last row i with Ap[i] <= t */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (A->Ap[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

shiro_status plan_rank_set_rows(prog_rank *pr, const sc_csr *A, const sc_csr *P, const int64_t *oldof, shiro_error *err) {
  pr->c_global = malloc((size_t)(pr->c_rows ? pr->c_rows : 1) * sizeof *pr->c_global);
  pr->b_global = malloc((size_t)(pr->b_rows ? pr->b_rows : 1) * sizeof *pr->b_global);
  if (!pr->c_global || !pr->b_global) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  for (int64_t i = 0; i < pr->c_rows; i++) pr->c_global[i] = oldof[pr->c_first + i];
  for (int64_t i = 0; i < pr->b_rows; i++) pr->b_global[i] = oldof[pr->b_first + i];
  pr->ncglobal = pr->c_rows;
  pr->nbglobal = pr->b_rows;
  pr->pattern_digest = plan_rows_digest(A, pr->c_global, 0, pr->c_rows);
  if (plan_rank_local_matrix(pr, A, pr->c_global, 0) != SHIRO_OK) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  /* val_src: position t in P -> P's row i (rank-ordered, so P->Ap[i] counts the nonzeros of the
   * rows before it, the ranks' local matrices before it included) + the place of the entry in
   * A's row oldof[i], whose columns are in the original order */
  for (int64_t e = 0; e < pr->nvalsrc; e++) {
    const int64_t t = pr->val_src[e];
    if (t < 0) continue;
    const int64_t i = row_of(P, t), i0 = oldof[i], j0 = oldof[P->Aj[t]];
    pr->val_src[e] = P->Ap[i] + lower_col(A->Aj, A->Ap[i0], A->Ap[i0 + 1], j0) - A->Ap[i0];
  }
  return SHIRO_OK;
}

void plan_rank_volumes(const prog_rank *pr, sc_volumes *v) {
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *rec = pr->xchg + x * PROG_X_WIDTH;
    if (rec[XF_DIR] != 0) continue;
    v->total_rows += rec[XF_COUNT];
    if (rec[XF_TIER]) v->inter_node_rows += rec[XF_COUNT];
    else v->intra_node_rows += rec[XF_COUNT];
  }
}

void plan_msg_volumes(const plan_msg *m, sc_volumes *v) {
  v->total_rows += m->rows;
  if (m->inter) v->inter_node_rows += m->rows;
  else v->intra_node_rows += m->rows;
}

/* plan_build's sink: keeps every program in the plan. */
static shiro_status keep_rank(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err) {
  (void)err;
  sc_plan *P = arg;
  P->meta = *meta;
  P->ranks[pr->rank] = *pr;
  return SHIRO_OK;
}

shiro_status plan_build_range(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                              const sc_blocks *B, sc_strategy s, int32_t gpn, int32_t first, int32_t end,
                              plan_sink_fn sink, void *arg, shiro_error *err) {
  /* hybrid with every node pair direct is joint's plan: the flat builder's, one stage */
  int flat = !strategy_is_two_tier(s) || (s == STRAT_HYBRID && route_all_direct(B, gpn));
  if (first < 0 || end > Prow->parts || first > end)
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "plan: ranks %d .. %d asked of a plan of %d", first, end - 1, Prow->parts);
  plan_deliver dv;
  shiro_status st = plan_deliver_init(&dv, A, Prow, B, s, gpn, first, end, sink, arg, err);
  if (st != SHIRO_OK) return st;
  st = flat ? plan_build_flat(A, Prow, Pcol, B, s, gpn, &dv, err) : plan_build_two_tier(A, Prow, Pcol, B, gpn, &dv, err);
  shiro_status delivered = plan_deliver_done(&dv);
  return st != SHIRO_OK ? st : delivered;
}

shiro_status plan_build_each(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, plan_sink_fn sink, void *arg,
                             shiro_error *err) {
  return plan_build_range(A, Prow, Pcol, B, s, gpn, 0, Prow->parts, sink, arg, err);
}

shiro_status plan_messages(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                           sc_strategy s, int32_t gpn, plan_msg_fn fn, void *arg, int32_t *nstages,
                           shiro_error *err) {
  int flat = !strategy_is_two_tier(s) || (s == STRAT_HYBRID && route_all_direct(B, gpn)); /* as plan_build_each */
  if (nstages) *nstages = flat ? 1 : 2;
  return flat ? plan_messages_flat(A, Prow, Pcol, B, s, gpn, fn, arg, err)
              : plan_messages_two_tier(A, Prow, Pcol, B, gpn, fn, arg, err);
}

shiro_status plan_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                        const sc_blocks *B, sc_strategy s, int32_t gpn, sc_plan *out, shiro_error *err) {
  memset(out, 0, sizeof *out);
  out->meta.ranks = Prow->parts;
  out->ranks = calloc((size_t)Prow->parts, sizeof *out->ranks);
  if (!out->ranks) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  shiro_status st = plan_build_each(A, Prow, Pcol, B, s, gpn, keep_rank, out, err);
  if (st != SHIRO_OK) plan_free(out);
  return st;
}

void plan_free(sc_plan *P) {
  if (!P || !P->ranks) return;
  for (int32_t r = 0; r < P->meta.ranks; r++) prog_rank_free(&P->ranks[r]);
  free(P->ranks);
  P->ranks = NULL;
}
