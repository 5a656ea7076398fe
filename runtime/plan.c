/* plan.c — the plan handle: one rank's part of a plan file, mapped. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"

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
  if (!pr->ncglobal || !pr->nbglobal) {  /* contiguous rows: their ids, so that shiro_plan_info always has them */
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
