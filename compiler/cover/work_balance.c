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

/* Moves each boundary of *to (a partition of the same rows as from) back toward from's: to's
 * part p starts at from's start + floor(step · (to's start − from's start)), 0 < step <= 1, which
 * is floor((1 − step) · from's + step · to's). The starts stay in order, and parts that are not
 * empty in both stay so: the blend's starts are at least 1 apart where both partitions' are.
 *
 * A full step is the rescale's own guess, and it overshoots where the covers move work with the
 * rows: on cit-HepTh at R = 2 rank 0's work grows 2.6 entries per nonzero it takes on near the
 * balance, so every full step from either side lands on the other side. Halving the exponent of
 * the scales instead does not shorten the step: scales near 1 put the boundaries back near the
 * nnz partition, wherever the search stands. */
static void step_toward(const sc_partition *from, double step, sc_partition *to) {
  for (int32_t p = 1; p < from->parts; p++)
    to->first[p] = from->first[p] + (int64_t)floor(step * (double)(to->first[p] - from->first[p]));
}

shiro_status balance_rounds(const sc_csr *A, int rounds, sc_balance_shorten shorten, sc_balance_eval eval, void *arg,
                            sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_balance *rep, shiro_error *err) {
  const int32_t R = Prow->parts;
  const int square = A->m == A->k;
  double *w = malloc((size_t)R * sizeof *w), *wbest = malloc((size_t)R * sizeof *wbest);
  double *scale = malloc((size_t)R * sizeof *scale);
  sc_partition next = {0}, nextc = {0};
  shiro_status st = (w && wbest && scale) ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "balanced partition: out of memory");
  double obj = 0;
  if (st == SHIRO_OK) st = blocks_build(A, Prow, Pcol, B, err);
  if (st == SHIRO_OK) st = eval(arg, Prow, Pcol, B, wbest, &obj, err);
  blocks_free(B);
  rep->start = rep->best = obj;
  rep->rounds = 1;
  double step = 1.0;  /* a full step, halved after each step that does not help */
  for (int k = 0; k < rounds && st == SHIRO_OK && R > 1; k++) {
    for (int32_t r = 0; r < R; r++) {  /* a row brings its rank's load per nonzero it owns */
      const int64_t own = A->Ap[Prow->first[r + 1]] - A->Ap[Prow->first[r]];
      const double e = shorten == BALANCE_SHORTEN_EXPONENT ? step : 1.0;
      scale[r] = own > 0 && wbest[r] > 0 ? pow(wbest[r] / (double)own, e) : 1.0;
    }
    st = part_scaled(A, Prow, scale, &next, err);
    if (st == SHIRO_OK && shorten == BALANCE_SHORTEN_MOVE) step_toward(Prow, step, &next);
    if (st == SHIRO_OK && square) st = part_copy(&next, &nextc, err);
    const sc_partition *nc = square ? &nextc : Pcol;
    if (st == SHIRO_OK) st = blocks_build(A, &next, nc, B, err);
    if (st == SHIRO_OK) st = eval(arg, &next, nc, B, w, &obj, err);
    blocks_free(B);
    rep->rounds++;
    if (st == SHIRO_OK && obj < rep->best) {  /* the best so far: the next step starts from it */
      rep->best = obj;
      double *t = wbest; wbest = w; w = t;
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

/* balance_rounds' evaluation for the work partition: strategy s's covers, the work per rank,
 * the most of them. */
typedef struct work_eval { const sc_csr *A; sc_strategy s; int32_t gpn; int64_t *w; } work_eval;

static shiro_status eval_work(void *arg, const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B,
                              double *load, double *objective, shiro_error *err) {
  (void)Pcol;
  const work_eval *we = arg;
  shiro_status st = strategy_select(B, we->s, we->gpn, NULL, NULL, err);
  if (st != SHIRO_OK) return st;
  work_per_rank(we->A, Prow, B, we->w);
  for (int32_t r = 0; r < Prow->parts; r++) load[r] = (double)we->w[r];
  *objective = (double)most_of(we->w, Prow->parts);
  return SHIRO_OK;
}

shiro_status work_balance(const sc_csr *A, sc_strategy s, int32_t gpn, int rounds, sc_partition *Prow,
                          sc_partition *Pcol, sc_blocks *B, sc_work *rep, shiro_error *err) {
  if (s == STRAT_HYBRID) return shiro_fail(err, SHIRO_ERR_ARG, "work partition: hybrid's covers need a machine; balance with joint's");
  work_eval we = {A, s, gpn, malloc((size_t)Prow->parts * sizeof(int64_t))};
  if (!we.w) return shiro_fail(err, SHIRO_ERR_NOMEM, "work partition: out of memory");
  /* Both searches from the same start; the exponent's partition is kept unless the move's is
   * strictly better. */
  sc_partition row2 = {0}, col2 = {0};
  sc_blocks B2 = {0};
  sc_balance b = {0}, b2 = {0};
  shiro_status st = part_copy(Prow, &row2, err);
  if (st == SHIRO_OK) st = part_copy(Pcol, &col2, err);
  if (st == SHIRO_OK) st = balance_rounds(A, rounds, BALANCE_SHORTEN_EXPONENT, eval_work, &we, Prow, Pcol, B, &b, err);
  blocks_free(B);  /* one partition's blocks at a time: the winner's are built again if it is the first */
  *B = (sc_blocks){0};
  if (st == SHIRO_OK) st = balance_rounds(A, rounds, BALANCE_SHORTEN_MOVE, eval_work, &we, &row2, &col2, &B2, &b2, err);
  if (st == SHIRO_OK && b2.best < b.best) {
    sc_partition t = *Prow; *Prow = row2; row2 = t;
    t = *Pcol; *Pcol = col2; col2 = t;
    *B = B2;
    B2 = (sc_blocks){0};
    b.best = b2.best;
  } else if (st == SHIRO_OK) {
    blocks_free(&B2);
    B2 = (sc_blocks){0};
    st = blocks_build(A, Prow, Pcol, B, err);
  }
  part_free(&row2);
  part_free(&col2);
  blocks_free(&B2);
  free(we.w);
  rep->most_start = (int64_t)b.start;
  rep->most = (int64_t)b.best;
  rep->mean = A->nnz / (Prow->parts > 0 ? Prow->parts : 1);
  rep->rounds = b.rounds + b2.rounds;
  return st;
}
