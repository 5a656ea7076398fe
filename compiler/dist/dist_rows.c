/* dist_rows.c — a program of a renumbered matrix, told in the file's numbering. */
#include <stdlib.h>

#include "digest.h"
#include "dist_rows.h"
#include "error.h"

/* ids[i] = oldof[first + i], i < n, into a new array. */
static int64_t *file_ids(const int64_t *oldof, int64_t first, int64_t n) {
  int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
  for (int64_t i = 0; ids && i < n; i++) ids[i] = oldof[first + i];
  return ids;
}

shiro_status dist_rank_file_rows(prog_rank *pr, const dist_matrix *M, const dist_renumber *rn, shiro_error *err) {
  if (!(pr->c_global = file_ids(rn->oldof, pr->c_first, pr->c_rows))) goto nomem;
  pr->ncglobal = pr->c_rows;
  if (!rn->columns) return SHIRO_OK; /* the rows renumbered only: the local matrix is the file's rows */
  if (!(pr->b_global = file_ids(rn->oldof, pr->b_first, pr->b_rows))) goto nomem;
  pr->nbglobal = pr->b_rows;
  const int64_t n = pr->c_rows ? pr->a_ptr[pr->c_rows] : 0;
  int64_t *col = malloc((size_t)(n ? n : 1) * sizeof *col);
  double *val = pr->a_val ? malloc((size_t)(n ? n : 1) * sizeof *val) : NULL;
  if (!col || (pr->a_val && !val)) {
    free(col);
    goto nomem;
  }
  digest64 d;
  pattern_digest_begin(&d, pr->c_rows, M->k);
  for (int64_t x = 0; x < pr->c_rows; x++) { /* entry y of the row here is entry y + dpos of the file's */
    const int64_t at = pr->a_ptr[x], len = pr->a_ptr[x + 1] - at, t = M->A->Ap[pr->c_first + x];
    for (int64_t y = 0; y < len; y++) {
      const int64_t to = at + y + M->dpos[t + y];
      col[to] = rn->oldof[pr->a_col[at + y]];
      if (val) val[to] = pr->a_val[at + y];
    }
    pattern_digest_row(&d, 1, len, col + at);
  }
  free(pr->a_col);
  free(pr->a_val);
  pr->a_col = col;
  pr->a_val = val;
  pr->pattern_digest = d.h;
  return SHIRO_OK;
nomem:
  return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
}
