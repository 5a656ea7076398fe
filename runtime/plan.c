/* plan.c — the plan handle: one rank's part of a plan file, mapped. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"
#include "plan_file.h"

shiro_status shiro_plan_open(const char *path, int rank, shiro_plan **plan, shiro_error *err) {
  if (!plan) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_open: plan is NULL");
  *plan = NULL;
  if (!path) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_open: path is NULL");
  shiro_plan *p = calloc(1, sizeof *p);
  if (!p) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_plan_open: out of memory");
  shiro_status st = plan_file_map_rank(path, rank, &p->meta, &p->pr, &p->map, err);
  if (st != SHIRO_OK) {
    free(p);
    return st;
  }
  const prog_rank *pr = &p->pr;
  if (!pr->ncglobal || !pr->nbglobal) { /* contiguous rows: their ids, so that shiro_plan_info always has them */
    const int64_t nids = pr->c_rows + pr->b_rows;
    p->ids = malloc((size_t)(nids + 1) * sizeof *p->ids);
    if (!p->ids) {
      plan_file_unmap(&p->map);
      free(p);
      return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_plan_open: out of memory (%lld row ids)", (long long)nids);
    }
    for (int64_t i = 0; i < pr->c_rows; i++) p->ids[i] = pr->c_first + i;
    for (int64_t i = 0; i < pr->b_rows; i++) p->ids[pr->c_rows + i] = pr->b_first + i;
  }
  *plan = p;
  return SHIRO_OK;
}

shiro_status shiro_plan_get_info(const shiro_plan *plan, shiro_plan_info *info) {
  if (!plan || !info) return SHIRO_ERR_ARG;
  memset(info, 0, sizeof *info);
  info->ranks = plan->meta.ranks;
  info->gpus_per_node = plan->meta.gpus_per_node;
  info->rank = plan->pr.rank;
  info->m = plan->meta.m;
  info->k = plan->meta.k;
  info->nnz = plan->meta.nnz;
  info->c_rows = plan->pr.c_rows;
  info->b_rows = plan->pr.b_rows;
  info->c_first = plan->pr.c_first;
  info->b_first = plan->pr.b_first;
  info->strategy = plan->meta.strategy;
  info->partition = plan->meta.partition;
  info->c_global = plan->pr.ncglobal ? plan->pr.c_global : plan->ids;
  info->b_global = plan->pr.nbglobal ? plan->pr.b_global : plan->ids + plan->pr.c_rows;
  return SHIRO_OK;
}

void shiro_plan_close(shiro_plan **plan) {
  if (!plan || !*plan) return;
  plan_file_unmap(&(*plan)->map);
  free((*plan)->ids);
  free(*plan);
  *plan = NULL;
}

shiro_status shiro_plan_check_pattern(shiro_plan *plan, uint64_t digest, shiro_error *err) {
  if (!plan) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_check_pattern: plan is NULL");
  if (digest == plan->pr.pattern_digest) return SHIRO_OK;
  plan->pattern_mismatch = 1;
  return shiro_fail(err, SHIRO_ERR_MISMATCH,
                    "rank %d: the matrix rows passed (pattern digest %016llx) are not those the plan was made for (%016llx)",
                    plan->pr.rank, (unsigned long long)digest, (unsigned long long)plan->pr.pattern_digest);
}

/* Once per plan: every array's checksum, then every index against its bounds (what
 * shiro_ctx_create checks before anything runs the program). */
static shiro_status check_once(shiro_plan *plan, shiro_error *err) {
  if (plan->checked) return SHIRO_OK;
  shiro_status st = plan_verify_checksums(&plan->pr, err);
  if (st == SHIRO_OK) st = plan_check_rank(&plan->meta, &plan->pr, err);
  if (st == SHIRO_OK) plan->checked = 1;
  return st;
}

shiro_status shiro_plan_get_local_matrix(shiro_plan *plan, int64_t *nnz, int *has_values, int64_t *rowptr, int64_t *colind,
                                         double *values, shiro_error *err) {
  if (!plan || !nnz) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_get_local_matrix: %s is NULL", plan ? "nnz" : "plan");
  const prog_rank *pr = &plan->pr;
  if (pr->naptr == 0)
    return shiro_fail(err, SHIRO_ERR_VERSION,
                      "shiro_plan_get_local_matrix: the plan is format %d.%lld, which stores no local matrices (since %d.1): "
                      "plan the matrix again with this shiro-plan",
                      PLAN_VERSION_MAJOR, (long long)plan->meta.version_minor,
                      PLAN_VERSION_MAJOR);
  shiro_status st = check_once(plan, err);
  if (st != SHIRO_OK) return st;
  *nnz = pr->nacol;
  if (has_values) *has_values = pr->naval > 0 || pr->nacol == 0;
  if (rowptr) memcpy(rowptr, pr->a_ptr, (size_t)pr->naptr * sizeof *rowptr);
  if (colind && pr->nacol) memcpy(colind, pr->a_col, (size_t)pr->nacol * sizeof *colind);
  for (int64_t t = 0; values && t < pr->nacol; t++) values[t] = pr->naval ? pr->a_val[t] : 1.0;
  return SHIRO_OK;
}
