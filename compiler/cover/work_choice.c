/* work_choice.c — `--strategy auto-cpu` (work_choice.h).
 *
 * On CPU ranks of one node a call is its ranks' loops, and a message is a copy: joint's fewer
 * rows moved buy less than they do on a network, while its partial C rows are one more op row
 * on the source and an add on the destination; col moves more B rows but computes each entry
 * where its C row lies. Which costs less depends on the matrix (at N = 1, col's plan ran 0.87x
 * joint's time on mdual at R = 4 and 1.13x on delaunay_n16 at R = 4), so both are planned and
 * the cost of each one's busiest rank decides. */
#include <stdlib.h>

#include "error.h"
#include "work_choice.h"

void work_call_cost_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                             double row_entries, double move_entries, uint8_t *mark, int64_t *w, double *cost) {
  work_cost_per_rank(A, Prow, Pcol, B, row_entries, mark, w, cost);
  for (int64_t t = 0; t < B->n; t++) {
    const sc_block *b = &B->b[t];
    const double moved = move_entries * (double)block_rows_moved(b);
    cost[b->q] += moved;
    cost[b->p] += moved;
  }
}

/* One candidate: its partition (balanced or as given), covers, and busiest rank's cost. */
static shiro_status candidate(const sc_csr *A, sc_strategy s, int32_t gpn, int balance, int rounds, double row_entries,
                              double move_entries, sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_work *work,
                              double *most, shiro_error *err) {
  const int32_t R = Prow->parts;
  int64_t *w = malloc((size_t)R * sizeof *w);
  double *cost = malloc((size_t)R * sizeof *cost);
  uint8_t *mark = calloc((size_t)A->m + 1, 1);
  shiro_status st = w && cost && mark ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "auto-cpu: out of memory");
  if (st == SHIRO_OK)
    st = balance ? work_balance(A, s, gpn, rounds, row_entries, Prow, Pcol, B, work, err) : blocks_build(A, Prow, Pcol, B, err);
  if (st == SHIRO_OK) st = strategy_select(B, s, gpn, NULL, NULL, err);
  if (st == SHIRO_OK) {
    work_call_cost_per_rank(A, Prow, Pcol, B, row_entries, move_entries, mark, w, cost);
    *most = 0;
    for (int32_t r = 0; r < R; r++) *most = cost[r] > *most ? cost[r] : *most;
  }
  free(w);
  free(cost);
  free(mark);
  return st;
}

shiro_status work_choose(const sc_csr *A, int32_t gpn, int balance, int rounds, double row_entries, double move_entries,
                         sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_work_choice *rep, shiro_error *err) {
  const sc_strategy cand[WORK_CHOICES] = {STRAT_JOINT, STRAT_COL};
  sc_partition row2 = {0}, col2 = {0};
  sc_blocks B2 = {0};
  *rep = (sc_work_choice){.chosen = STRAT_JOINT};
  shiro_status st = part_copy(Prow, &row2, err);
  if (st == SHIRO_OK) st = part_copy(Pcol, &col2, err);
  if (st == SHIRO_OK)
    st = candidate(A, cand[WORK_CHOICE_JOINT], gpn, balance, rounds, row_entries, move_entries, Prow, Pcol, B,
                   &rep->work[WORK_CHOICE_JOINT], &rep->cost[WORK_CHOICE_JOINT], err);
  if (st == SHIRO_OK) {
    blocks_free(B); /* one candidate's blocks at a time: joint's are built again if it is kept */
    *B = (sc_blocks){0};
    st = candidate(A, cand[WORK_CHOICE_COL], gpn, balance, rounds, row_entries, move_entries, &row2, &col2, &B2,
                   &rep->work[WORK_CHOICE_COL], &rep->cost[WORK_CHOICE_COL], err);
  }
  if (st == SHIRO_OK && rep->cost[WORK_CHOICE_COL] <= WORK_CHOICE_GAIN * rep->cost[WORK_CHOICE_JOINT]) {
    sc_partition t = *Prow;
    *Prow = row2;
    row2 = t;
    t = *Pcol;
    *Pcol = col2;
    col2 = t;
    *B = B2;
    B2 = (sc_blocks){0};
    rep->chosen = STRAT_COL;
  } else if (st == SHIRO_OK) {
    st = blocks_build(A, Prow, Pcol, B, err);
  }
  part_free(&row2);
  part_free(&col2);
  blocks_free(&B2);
  return st;
}
