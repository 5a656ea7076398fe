/* dist_blocks.h — what each process needs of the blocks other processes solved: the send side of
 * every block (p, q) whose source q is one of its ranks, and the rows of A those sends read. */
#ifndef SHIRO_DIST_BLOCKS_H
#define SHIRO_DIST_BLOCKS_H

#include "blocks.h"
#include "dist_comm.h"
#include "dist_input.h"

/* Where each entry of the process's A sits in the whole matrix: its own rows are one stretch,
 * entries own_t0 .. own_t1-1 at own_g0 on; the other rows' entries are runs, a row's edges in
 * one source q's columns (consecutive in the whole matrix too), listed per q: an entry t of q's
 * is the whole matrix's entry g0 + (t - t0) of q's run (t0, g0) with the largest t0 <= t. */
typedef struct dist_positions {
  int64_t own_t0, own_t1, own_g0;
  int64_t (*run)[2]; /* [n] (t0, g0): q's are run[first[q] .. first[q+1]), t0 increasing */
  int64_t *first; /* [R+2] */
  int64_t n;
  const int32_t *dpos; /* the matrix's dpos (dist_input.h; not freed here), added to the position:
                          the place in the file's column order; NULL: none */
} dist_positions;

/* The whole matrix's position of entry t of the process's A, an entry of its own rows or of a run
 * of source q's (the rank whose program reads it). *hint (start at -1) is the run found last: the
 * runs of a program's rows, read in row order, are found in O(1) each. */
int64_t dist_position(const dist_positions *X, int64_t t, int32_t q, int64_t *hint);

/* After this process solved the blocks B of its ranks first .. (built from M's rows, the ranks'
 * rows, selections set; the processes own increasing ranges of ranks): sends each block (p, q) whose source q another process owns
 * (proc[q]) its send side (the selected columns; the selected rows with their edges, values and
 * positions in the whole matrix) and adds to B the blocks (p, r) the others send for its ranks
 * r, each with rows = the selected rows, cols = the selected columns and the columns of those
 * rows' edges, and their selections and entry counts (no certificate); M->A gets those rows'
 * edges (in their source's column range) so that the builders read their values there. X: where
 * every entry of the new M->A is in the whole matrix. Collective; errors agreed. */
shiro_status dist_blocks_trade(const dist_comm *c, const int32_t *proc, int32_t first, dist_matrix *M, sc_blocks *B,
                               dist_positions *X, shiro_error *err);

#endif
