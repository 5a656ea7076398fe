/* dist_floor.h — the floors of a partition (compiler/choose/plan_floor.h) computed by the planner's
 * processes together, each holding its ranks' rows. */
#ifndef SHIRO_DIST_FLOOR_H
#define SHIRO_DIST_FLOOR_H

#include <stdint.h>

#include "csr.h"
#include "dist_comm.h"
#include "partition.h"
#include "plan_floor.h"

/* plan_floor_rows of the whole matrix, from the rows each process holds: ranks first .. end-1 of
 * Prow are this process's (proc[r]: the process of rank r; the processes hold increasing ranges),
 * and A holds their rows whole (other rows of A are not read). Per level (nodes of gpn ranks, then
 * ranks) and direction, each process sends every cross nonzero of its rows (row and column in
 * different groups) to the process of the first rank of the group whose stripe holds it, 16 bytes
 * each, in rounds of groups that each move at most an eighth of a process's nonzeros where its
 * groups allow; that process solves the group's matching (plan_floor_covers), and every process gets every
 * group's floor. The same numbers as one process's plan_floor_rows. Collective; errors agreed. */
shiro_status dist_floor_rows(const dist_comm *c, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             int32_t gpn, const int32_t *proc, int32_t first, int32_t end, int threads, plan_floor *f,
                             shiro_error *err);

/* Sets the most cross nonzeros of one process a round moves (0: the default, an eighth of its
 * nonzeros and at least 2^20), for tests that make the rounds many. Every process must set the
 * same. Not thread-safe. */
void dist_floor_set_round_edges(int64_t edges);

#endif
