/* dist_rows.h — a program of a renumbered matrix (--partition parts:FILE under several processes)
 * told in the file's numbering, as one process's plan tells it. */
#ifndef SHIRO_DIST_ROWS_H
#define SHIRO_DIST_ROWS_H

#include "dist_input.h"
#include "program.h"

/* For a program built from M renumbered by rn (dist_matrix_own, then the trade; its local matrix
 * the delivery's, from M's rows): records its rows' ids in the file (c_global, oldof of its rows;
 * with the columns renumbered, b_global too) and, with the columns renumbered, turns its local
 * matrix (a_ptr, a_col, a_val) into the file's columns in the file's order (M->dpos) and its
 * pattern digest into theirs: what plan_rank_set_rows records in one process's plan. Local;
 * SHIRO_ERR_NOMEM or SHIRO_OK. */
shiro_status dist_rank_file_rows(prog_rank *pr, const dist_matrix *M, const dist_renumber *rn, shiro_error *err);

#endif
