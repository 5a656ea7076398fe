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
    w[b->p] -= b->ne; /* the block's nonzeros are computed by q (partial rows) or by p (REMOTE_B) */
    w[b->q] += b->ent_partial;
    w[b->p] += b->ent_remote;
  }
}

double work_row_entries(int64_t n) { return 4.0 + 4.0 / (double)(n > 0 ? n : 1); }

void work_cost_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                        double row_entries, uint8_t *mark, int64_t *w, double *cost) {
  const int32_t R = Prow->parts;
  work_per_rank(A, Prow, B, w);
  for (int32_t r = 0; r < R; r++) {
    int64_t rows = 0; /* the local multiply's: rows with an entry in r's own columns */
    const int64_t lo = Pcol->first[r], hi = Pcol->first[r + 1];
    for (int64_t i = Prow->first[r]; i < Prow->first[r + 1]; i++)
      for (int64_t e = A->Ap[i]; e < A->Ap[i + 1]; e++)
        if (A->Aj[e] >= lo && A->Aj[e] < hi) {
          rows++;
          break;
        }
    cost[r] = (double)w[r] + row_entries * (double)rows;
  }
  for (int64_t t = 0; t < B->n; t++) {
    const sc_block *b = &B->b[t];
    int64_t partial = 0, remote = 0;
    for (int32_t i = 0; i < b->nr; i++) {
      int64_t sel = 0;
      for (int32_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) sel += b->csel[b->Gj[e]];
      partial += b->rsel[i] && sel < b->Gp[i + 1] - b->Gp[i]; /* q's partial row for p */
      if (sel && !mark[b->rows[i]]) {
        mark[b->rows[i]] = 1;
        remote++;
      } /* p's remote multiply visits it once */
    }
    cost[b->p] += row_entries * (double)remote;
    cost[b->q] += row_entries * (double)partial;
  }
  for (int64_t t = 0; t < B->n; t++)
    for (int32_t i = 0; i < B->b[t].nr; i++) mark[B->b[t].rows[i]] = 0;
}

static int64_t most_of(const int64_t *w, int32_t R) {
  int64_t m = 0;
  for (int32_t r = 0; r < R; r++) m = w[r] > m ? w[r] : m;
  return m;
}

double work_imbalance(const sc_csr *A, const sc_partition *Prow, const sc_blocks *B) {
  int64_t *w = malloc((size_t)Prow->parts * sizeof *w);
  if (!w || !A->nnz) {
    free(w);
    return 1.0;
  }
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
  double step = 1.0; /* a full step, halved after each step that does not help */
  for (int k = 0; k < rounds && st == SHIRO_OK && R > 1; k++) {
    const double e = shorten == BALANCE_SHORTEN_EXPONENT ? step : 1.0;
    for (int32_t r = 0; r < R; r++) { /* a row brings its rank's load per nonzero it owns */
      const int64_t own = A->Ap[Prow->first[r + 1]] - A->Ap[Prow->first[r]];
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
    if (st == SHIRO_OK && obj < rep->best) { /* the best so far: the next step starts from it */
      rep->best = obj;
      double *t = wbest;
      wbest = w;
      w = t;
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

/* balance_rounds' evaluation for the work partition: strategy s's covers, the cost per rank
 * (work_cost_per_rank), the most of them. Notes the most entries a rank computes in the
 * partition of least objective so far (the earliest of equals, as balance_rounds keeps), for
 * the report; best starts at INFINITY for each search. */
typedef struct work_eval {
  const sc_csr *A;
  sc_strategy s;
  int32_t gpn;
  double row_entries;
  int64_t *w; /* [R] entries per rank */
  uint8_t *mark; /* [m] zero between calls */
  double best; /* least objective so far */
  int64_t most; /* its most entries */
  double balance; /* its most cost / the mean */
  int64_t first; /* the most entries of the search's start (its first evaluation) */
  int evals;
} work_eval;

static shiro_status eval_work(void *arg, const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B,
                              double *load, double *objective, shiro_error *err) {
  work_eval *we = arg;
  shiro_status st = strategy_select(B, we->s, we->gpn, NULL, NULL, err);
  if (st != SHIRO_OK) return st;
  work_cost_per_rank(we->A, Prow, Pcol, B, we->row_entries, we->mark, we->w, load);
  double most = 0;
  for (int32_t r = 0; r < Prow->parts; r++) most = load[r] > most ? load[r] : most;
  *objective = most;
  const int64_t entries = most_of(we->w, Prow->parts);
  if (!we->evals++) we->first = entries;
  if (most < we->best) {
    double sum = 0;
    for (int32_t r = 0; r < Prow->parts; r++) sum += load[r];
    we->best = most;
    we->most = entries;
    we->balance = sum > 0 ? most * Prow->parts / sum : 1.0;
  }
  return SHIRO_OK;
}

shiro_status work_balance(const sc_csr *A, sc_strategy s, int32_t gpn, int rounds, double row_entries,
                          sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_work *rep, shiro_error *err) {
  if (s == STRAT_HYBRID) return shiro_fail(err, SHIRO_ERR_ARG, "work partition: hybrid's covers need a machine; balance with joint's");
  work_eval we = {A, s, gpn, row_entries, malloc((size_t)Prow->parts * sizeof(int64_t)), calloc((size_t)A->m + 1, 1), INFINITY, 0, 1.0, 0, 0};
  if (!we.w || !we.mark) {
    free(we.w);
    free(we.mark);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "work partition: out of memory");
  }
  /* Both searches from the same start; the exponent's partition is kept unless the move's is
   * strictly better. */
  sc_partition row2 = {0}, col2 = {0};
  sc_blocks B2 = {0};
  sc_balance b = {0}, b2 = {0};
  shiro_status st = part_copy(Prow, &row2, err);
  if (st == SHIRO_OK) st = part_copy(Pcol, &col2, err);
  if (st == SHIRO_OK) st = balance_rounds(A, rounds, BALANCE_SHORTEN_EXPONENT, eval_work, &we, Prow, Pcol, B, &b, err);
  const int64_t start_most = we.first;
  int64_t most = we.most;
  double balance = we.balance;
  we.best = INFINITY;
  blocks_free(B); /* one partition's blocks at a time: the winner's are built again if it is the first */
  *B = (sc_blocks){0};
  if (st == SHIRO_OK) st = balance_rounds(A, rounds, BALANCE_SHORTEN_MOVE, eval_work, &we, &row2, &col2, &B2, &b2, err);
  if (st == SHIRO_OK && b2.best < b.best) {
    sc_partition t = *Prow;
    *Prow = row2;
    row2 = t;
    t = *Pcol;
    *Pcol = col2;
    col2 = t;
    *B = B2;
    B2 = (sc_blocks){0};
    b.best = b2.best;
    most = we.most;
    balance = we.balance;
  } else if (st == SHIRO_OK) {
    st = blocks_build(A, Prow, Pcol, B, err);
  }
  part_free(&row2);
  part_free(&col2);
  blocks_free(&B2);
  free(we.w);
  free(we.mark);
  rep->cost_start = b.start;
  rep->cost = b.best;
  rep->cost_balance = balance;
  rep->most_start = start_most;
  rep->most = most;
  rep->mean = A->nnz / (Prow->parts > 0 ? Prow->parts : 1);
  rep->rounds = b.rounds + b2.rounds;
  return st;
}
