/* work_balance.c — the `work` partition (work_balance.h).
 *
 * A minimum cover decides which rank computes each nonzero of a block: on
 * delaunay_n16 at R = 2 the cover of both blocks is rank 0's boundary, so
 * rank 1 computes every nonzero between the two (244,753 entries against
 * 148,397) and the call waits for it. Moving the boundary row by row changes
 * the covers, so the partition is found by a few rounds of cover and rescale,
 * keeping the best one evaluated. */
#include <math.h>
#include <stdlib.h>

#include "error.h"
#include "work_balance.h"

void work_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_blocks *B, int64_t *w) {
  for (int32_t r = 0; r < Prow->parts; r++) w[r] = A->Ap[Prow->first[r + 1]] - A->Ap[Prow->first[r]];
  for (int64_t t = 0; t < B->n; t++) {
    const sc_block *b = &B->b[t];
    w[b->p] -= b->ne;  /* the block's nonzeros are computed by q (partial rows) or by p (REMOTE_B) */
    w[b->q] += b->ent_partial;
    w[b->p] += b->ent_remote;
  }
}

static int64_t most_of(const int64_t *w, int32_t R) {
  int64_t m = 0;
  for (int32_t r = 0; r < R; r++) m = w[r] > m ? w[r] : m;
  return m;
}

double work_imbalance(const sc_csr *A, const sc_partition *Prow, const sc_blocks *B) {
  int64_t *w = malloc((size_t)Prow->parts * sizeof *w);
  if (!w || !A->nnz) { free(w); return 1.0; }
  work_per_rank(A, Prow, B, w);
  const double most = (double)most_of(w, Prow->parts);
  free(w);
  return most * Prow->parts / (double)A->nnz;
}

/* The blocks of (Prow, Pcol) with strategy s's selections, and the work per rank they give. */
static shiro_status evaluate(const sc_csr *A, sc_strategy s, int32_t gpn, const sc_partition *Prow,
                             const sc_partition *Pcol, sc_blocks *B, int64_t *w, shiro_error *err) {
  shiro_status st = blocks_build(A, Prow, Pcol, B, err);
  if (st == SHIRO_OK) st = strategy_select(B, s, gpn, NULL, NULL, err);
  if (st == SHIRO_OK) work_per_rank(A, Prow, B, w);
  return st;
}

shiro_status work_balance(const sc_csr *A, sc_strategy s, int32_t gpn, int rounds, sc_partition *Prow,
                          sc_partition *Pcol, sc_blocks *B, sc_work *rep, shiro_error *err) {
  const int32_t R = Prow->parts;
  const int square = A->m == A->k;
  if (s == STRAT_HYBRID) return shiro_fail(err, SHIRO_ERR_ARG, "work partition: hybrid's covers need a machine; balance with joint's");
  int64_t *w = malloc((size_t)R * sizeof *w), *wbest = malloc((size_t)R * sizeof *wbest);
  double *scale = malloc((size_t)R * sizeof *scale);
  sc_partition next = {0}, nextc = {0};
  shiro_status st = (w && wbest && scale) ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "work partition: out of memory");
  if (st == SHIRO_OK) st = evaluate(A, s, gpn, Prow, Pcol, B, wbest, err);
  blocks_free(B);
  rep->most_start = rep->most = st == SHIRO_OK ? most_of(wbest, R) : 0;
  rep->mean = A->nnz / (R > 0 ? R : 1);
  rep->rounds = 1;
  double step = 1.0;  /* the exponent of the rescale: a full step, halved after each step that does not help */
  for (int k = 0; k < rounds && st == SHIRO_OK && R > 1; k++) {
    for (int32_t r = 0; r < R; r++) {  /* a row brings its rank's work per nonzero it owns */
      const int64_t own = A->Ap[Prow->first[r + 1]] - A->Ap[Prow->first[r]];
      scale[r] = own > 0 && wbest[r] > 0 ? pow((double)wbest[r] / (double)own, step) : 1.0;
    }
    st = part_scaled(A, Prow, scale, &next, err);
    if (st == SHIRO_OK && square) st = part_copy(&next, &nextc, err);
    if (st == SHIRO_OK) st = evaluate(A, s, gpn, &next, square ? &nextc : Pcol, B, w, err);
    blocks_free(B);
    rep->rounds++;
    if (st == SHIRO_OK && most_of(w, R) < rep->most) {  /* the best so far: the next step starts from it */
      rep->most = most_of(w, R);
      int64_t *t = wbest; wbest = w; w = t;
      part_free(Prow);
      *Prow = next;
      next = (sc_partition){0};
      if (square) {
        part_free(Pcol);
        *Pcol = nextc;
        nextc = (sc_partition){0};
      }
    } else {
      step *= 0.5;
    }
    part_free(&next);
    part_free(&nextc);
  }
  if (st == SHIRO_OK) st = blocks_build(A, Prow, Pcol, B, err);
  part_free(&next);
  part_free(&nextc);
  free(w);
  free(wbest);
  free(scale);
  return st;
}
