/* plan_local_matrix.h — a program's local matrix (format 2.1: the rank's rows of A
 * in local order), set by plan_build.c's plan_rank_set_rows and by the delivery
 * (plan_deliver.c). A file of its own so that the delivery does not call back into
 * plan_build.c. */
#ifndef SHIRO_PLAN_LOCAL_MATRIX_H
#define SHIRO_PLAN_LOCAL_MATRIX_H

#include "csr.h"
#include "program.h"

/* Sets the rank's local matrix (format 2.1: a_ptr, a_col, a_val) to rows
 * list[0 .. c_rows-1] of A in that order (list NULL: rows first ..
 * first+c_rows-1), replacing any it had. SHIRO_ERR_NOMEM or SHIRO_OK. */
shiro_status plan_rank_local_matrix(prog_rank *pr, const sc_csr *A, const int64_t *list, int64_t first);

#endif
