/* work_choice.h — `--strategy auto-cpu`: of joint and col, the plan whose busiest rank costs
 * least on CPU ranks, each on its own work partition (or on the partition given). */
#ifndef SHIRO_WORK_CHOICE_H
#define SHIRO_WORK_CHOICE_H

#include <stdint.h>

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "shiro_status.h"
#include "strategy.h"
#include "work_balance.h"

/* What a row moved costs each of its two ranks, in entries, at any N: its sender gathers it
 * (a B row) or writes it (a partial C row) and hands it to MPI, its receiver takes it from MPI
 * and reads it (a B row) or adds it into C (a partial row). At N = 1 one thread (shiro-bench-cpu
 * --only ops, R = 2, cit-HepTh and email-Enron) gathered a row in 2.7 ns and added one in
 * 1.7 ns, against 0.5-0.7 ns an entry; at N = 32 a row is 256 bytes copied two or three
 * times against an entry's 32 products. Chosen from plans timed side by side (docs/performance.md,
 * "auto-cpu"): 3, 4 and 6 ranked joint and col alike on 17 of 18 cases (R = 2, 4; N = 1, 32),
 * the cost of the sender alone (a gather or an add, 4 + 4/N) on 9 fewer. */
#define WORK_MOVE_ROW_ENTRIES 4.0

/* col is kept only where its busiest rank costs at most this much of joint's: joint moves the
 * fewest rows, and the cost ranks near ties no better than the noise (luxembourg_osm,
 * bcsstk33: costs within 0.3%, times within 2% either way). */
#define WORK_CHOICE_GAIN 0.97

/* What each rank's share of a call costs under B's current selections (cost[R]), in entries:
 * work_cost_per_rank's (its multiplies) plus move_entries for each row it sends and each row
 * it receives (block_rows_moved: the B rows and partial C rows of its blocks). The network is not priced: this is one node's
 * ranks, where a message is a copy. w[R] gets the entries (work_per_rank); mark[A->m] is
 * scratch, zero on entry and on return. */
void work_call_cost_per_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                             double row_entries, double move_entries, uint8_t *mark, int64_t *w, double *cost);

/* The candidates' places in sc_work_choice (joint is kept unless col wins by WORK_CHOICE_GAIN). */
enum { WORK_CHOICE_JOINT = 0,
       WORK_CHOICE_COL = 1,
       WORK_CHOICES = 2 };

/* What work_choose did: the strategy kept, and per candidate the busiest rank's call cost
 * (work_call_cost_per_rank) and, when it balanced, what its work partition did. */
typedef struct sc_work_choice {
  sc_strategy chosen;
  double cost[WORK_CHOICES];
  sc_work work[WORK_CHOICES];
} sc_work_choice;

/* For each of joint and col (gpn ranks per node): from copies of *Prow and *Pcol, its work
 * partition (work_balance: `rounds`, row_entries) if `balance`, else the partition as given;
 * its covers; the most any rank costs (work_call_cost_per_rank, move_entries a row moved).
 * Keeps joint unless col costs at most WORK_CHOICE_GAIN of it: *Prow, *Pcol become the kept candidate's
 * partition and *B (empty on entry) its blocks, built and not selected. Deterministic. */
shiro_status work_choose(const sc_csr *A, int32_t gpn, int balance, int rounds, double row_entries, double move_entries,
                         sc_partition *Prow, sc_partition *Pcol, sc_blocks *B, sc_work_choice *rep, shiro_error *err);

#endif
