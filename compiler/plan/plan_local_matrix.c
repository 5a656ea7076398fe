/* plan_local_matrix.c — a program's local matrix (plan_local_matrix.h). */
#include <stdlib.h>

#include "big_alloc.h"
#include "plan_local_matrix.h"

shiro_status plan_rank_local_matrix(prog_rank *pr, const sc_csr *A, const int64_t *list, int64_t first) {
  free(pr->a_ptr);
  free(pr->a_col);
  free(pr->a_val);
  pr->a_ptr = NULL;
  pr->a_col = NULL;
  pr->a_val = NULL;
  pr->naptr = pr->nacol = pr->naval = 0;
  int64_t n = 0;
  for (int64_t x = 0; x < pr->c_rows; x++) {
    const int64_t i = list ? list[x] : first + x;
    n += A->Ap[i + 1] - A->Ap[i];
  }
  pr->a_ptr = malloc((size_t)(pr->c_rows + 1) * sizeof *pr->a_ptr);
  pr->a_col = malloc((size_t)(n ? n : 1) * sizeof *pr->a_col);
  pr->a_val = malloc((size_t)(n ? n : 1) * sizeof *pr->a_val);
  if (!pr->a_ptr || !pr->a_col || !pr->a_val) return SHIRO_ERR_NOMEM;
  /* Every byte is written next: mapped in one call each, not a page fault per page (a process
   * without shiro-plan's huge-page heap, such as Python's, pays for each fault). */
  sc_big_populate(pr->a_ptr, 0, (size_t)(pr->c_rows + 1) * sizeof *pr->a_ptr);
  sc_big_populate(pr->a_col, 0, (size_t)n * sizeof *pr->a_col);
  sc_big_populate(pr->a_val, 0, (size_t)n * sizeof *pr->a_val);
  pr->a_ptr[0] = 0;
  for (int64_t x = 0, at = 0; x < pr->c_rows; x++) {
    const int64_t i = list ? list[x] : first + x, len = A->Ap[i + 1] - A->Ap[i];
    for (int64_t t = 0; t < len; t++) pr->a_col[at + t] = A->Aj[A->Ap[i] + t];
    for (int64_t t = 0; t < len; t++) pr->a_val[at + t] = sc_csr_val(A, A->Ap[i] + t);
    at += len;
    pr->a_ptr[x + 1] = at;
  }
  pr->naptr = pr->c_rows + 1;
  pr->nacol = pr->naval = n;
  return SHIRO_OK;
}
