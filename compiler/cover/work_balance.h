/* work_balance.h — the `work` partition: contiguous rows over which every rank
 * computes about as many entries of A as the others, under a strategy's covers. */
#ifndef SHIRO_WORK_BALANCE_H
#define SHIRO_WORK_BALANCE_H

#include <stdint.h>

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "shiro_status.h"
#include "strategy.h"

/* What work_balance did: the most a rank costs (work_cost_per_rank) and the most entries a
 * rank computes with the partition it started from and with the one it kept, the kept one's
 * most cost over its mean cost, the mean entries (nonzeros / R), and the partitions it
 * evaluated (the start included). */
typedef struct sc_work {
  double cost_start, cost, cost_balance;
  int64_t most_start, most, mean;
  int rounds;
} sc_work;

/* What a row costs a multiply op, in entries, at n columns of B and C: 4 + 4 / n (8 at
 * n = 1, 4.125 at 32). A row brings the loop's end, its pointers and the write of its C row.
 * Measured on one core (shiro-bench-cpu --only ops, R = 2, email-Enron and cit-HepTh, op time =
 * a · entries + b · rows fitted over the ops): b / a was 10-17 at N = 1 and 4-10 at N = 32; the
 * whole call, alternating plans balanced with 3, 4.25, 8 and 12 (R = 2 and 4; email-Enron,
 * cit-HepTh, soc-Slashdot0902, delaunay_n16, mdual), was fastest near 8 at N = 1 and near 4 at
 * N = 32 (soc-Slashdot0902 at R = 2, N = 32: 8.1 ms balanced with 3, 9.1 with entries alone,
 * 9.6-10.4 with 8). */
double work_row_entries(int64_t n);

/* The entries each rank computes under B's current selections (w[R]): its
 * nonzeros in its own columns, the partial rows it computes for other ranks
 * (ent_partial of the blocks it is the source of) and its REMOTE_B entries
 * (ent_remote of the blocks it is the destination of). A cover moves work: a
 * row of block (p, q) in the cover is computed on q, a column on p. */
void work_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_blocks *B, int64_t *w);

/* What each rank's multiplies cost under B's current selections (cost[R]), in entries:
 * work_per_rank's entries (also left in w[R]) plus row_entries for each row each of its
 * multiply ops visits with an entry: its local multiply's rows (an entry in its own columns,
 * Pcol), its partial rows (one per block and selected row with an unselected column), its
 * REMOTE_B rows (a row with an entry in a selected column of any of its blocks, counted once).
 * mark[A->m] is scratch, zero on entry and on return. */
void work_cost_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                        double row_entries, uint8_t *mark, int64_t *w, double *cost);

/* max / mean of work_per_rank over the ranks (1 for a matrix without nonzeros, or out of memory). */
double work_imbalance(const sc_csr *A, const sc_partition *Prow, const sc_blocks *B);

/* One evaluation for balance_rounds: B holds the blocks of (Prow, Pcol), built and not
 * selected; fills load[R], what each rank carries (a rank of more load per nonzero it owns
 * gives rows away), and *objective, the partition's score (lower is better). */
typedef shiro_status (*sc_balance_eval)(void *arg, const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B,
                                        double *load, double *objective, shiro_error *err);

/* What balance_rounds did: the objective of the partition it started from and of the one it
 * kept, and the partitions it evaluated (the start included). */
typedef struct sc_balance {
  double start, best;
  int rounds;
} sc_balance;

/* How balance_rounds shortens its step after a step that does not lower the objective:
 * BALANCE_SHORTEN_EXPONENT halves the exponent e of the scales, which gives the rescale's own
 * partition of flatter weights (near the nnz partition wherever the search stands);
 * BALANCE_SHORTEN_MOVE halves how far each boundary moves from the best partition's toward the
 * rescale's (e stays 1). Neither finds the better partition everywhere: on cit-HepTh at R = 2
 * every full step crosses the balance, and the exponent stops at 1.19x the mean entries where
 * the move reaches 1.003x; at R = 32 (4 per node) the exponent does better on email-Enron
 * (1.19x against 1.37x) and soc-Slashdot0902 (1.16x against 1.39x). The work partition runs
 * both (work_balance); the time partition halves the exponent (the move, at R = 32 with 4 per
 * node, was predicted faster on 5 of 12 shared matrices and slower on 3, by as much). */
typedef enum sc_balance_shorten { BALANCE_SHORTEN_EXPONENT,
                                  BALANCE_SHORTEN_MOVE } sc_balance_shorten;

/* From *Prow and *Pcol (for a square A the same partition; a rectangular A's Pcol is kept),
 * `rounds` steps of: a new contiguous partition of the rows of the best one so far, each
 * rank's rows weighted by (its load / its rows' nonzeros)^e (part_scaled), shortened as
 * `shorten` says, its blocks and eval's load and objective. A step starts full (e = 1, every
 * boundary moved all the way) and halves after each step that does not lower the objective.
 * Keeps the evaluated partition of least objective (the earliest of equals, the start
 * included): *Prow and *Pcol are replaced, and *B holds its blocks, built and not selected (B
 * empty on entry). Deterministic if eval is. */
shiro_status balance_rounds(const sc_csr *A, int rounds, sc_balance_shorten shorten, sc_balance_eval eval, void *arg,
                            sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_balance *rep, shiro_error *err);

/* balance_rounds with strategy s's covers (gpn ranks per node; not hybrid): the load is the
 * cost per rank (work_cost_per_rank, a row costing row_entries), the objective its most;
 * *rep says it in cost and in entries (their mean: nonzeros / R). Two searches of `rounds`
 * steps from the same start, one per sc_balance_shorten; keeps the exponent's partition
 * unless the move's is strictly better (rep->rounds counts both, the start twice). */
shiro_status work_balance(const sc_csr *A, sc_strategy s, int32_t gpn, int rounds, double row_entries,
                          sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_work *rep, shiro_error *err);

#endif
