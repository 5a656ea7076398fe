/* plan_floor_plan.c — the floors of a written plan, from its ranks' local matrices
 * (plan_floor_plan.h). */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plan_floor_plan.h"

static shiro_status nomem(shiro_error *err) {
  return shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory collecting the plan's matrix for its floors");
}

shiro_status plan_floor_input_init(const prog_meta *meta, plan_floor_input *in, shiro_error *err) {
  memset(in, 0, sizeof *in);
  if (meta->ranks < 1 || meta->m < 0 || meta->k < 0 || meta->k > SC_CSR_MAX_COLS || meta->nnz < 0)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: the plan's shape (%lld x %lld, %d ranks) cannot be rebuilt",
                      (long long)meta->m, (long long)meta->k, (int)meta->ranks);
  in->ranks = meta->ranks;
  in->gpn = meta->gpus_per_node > 0 ? meta->gpus_per_node : 1;
  in->A = calloc(1, sizeof *in->A);
  in->Prow.first = calloc((size_t)meta->ranks + 1, sizeof *in->Prow.first);
  in->Pcol.first = calloc((size_t)meta->ranks + 1, sizeof *in->Pcol.first);
  in->cnew = malloc((size_t)(meta->k > 0 ? meta->k : 1) * sizeof *in->cnew);
  if (in->A) {
    in->A->Ap = calloc((size_t)meta->m + 1, sizeof *in->A->Ap);
    in->A->Aj = malloc((size_t)(meta->nnz > 0 ? meta->nnz : 1) * sizeof *in->A->Aj);
  }
  if (!in->A || !in->A->Ap || !in->A->Aj || !in->Prow.first || !in->Pcol.first || !in->cnew) {
    plan_floor_input_free(in);
    return nomem(err);
  }
  in->A->m = meta->m;
  in->A->k = meta->k;
  in->A->nnz = meta->nnz; /* the capacity of Aj, and what the ranks must add up to */
  in->Prow.parts = in->Pcol.parts = meta->ranks;
  in->Prow.n = meta->m;
  in->Pcol.n = meta->k;
  for (int64_t j = 0; j < meta->k; j++) in->cnew[j] = -1;
  return SHIRO_OK;
}

shiro_status plan_floor_input_add(plan_floor_input *in, const prog_rank *pr, shiro_error *err) {
  const int32_t p = in->added;
  sc_csr *A = in->A;
  if (p >= in->ranks || pr->rank != p)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d's program given where rank %d's was expected", (int)pr->rank,
                      (int)p);
  if (!pr->naptr && pr->c_rows > 0)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d has no local matrix (a format 2.0 plan: re-plan it)", (int)p);
  const int64_t r0 = in->Prow.first[p], b0 = in->Pcol.first[p];
  if (pr->c_first != r0 || pr->b_first != b0 || pr->c_rows < 0 || pr->b_rows < 0 || pr->c_rows > A->m - r0 ||
      pr->b_rows > A->k - b0)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d's rows (C from %lld, B from %lld) do not follow rank %d's",
                      (int)p, (long long)pr->c_first, (long long)pr->b_first, (int)p - 1);
  const int64_t have = A->Ap[r0], add = pr->c_rows ? pr->a_ptr[pr->c_rows] : 0;
  if (add != pr->nacol || add > A->nnz - have)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d's local matrix holds %lld nonzeros, more than the plan's %lld",
                      (int)p, (long long)add, (long long)A->nnz);
  for (int64_t t = 0; t < add; t++) {
    const int64_t j = pr->a_col[t];
    if (j < 0 || j >= A->k)
      return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d's column %lld is outside 0..%lld", (int)p, (long long)j,
                        (long long)A->k - 1);
    A->Aj[have + t] = (int32_t)j;
  }
  for (int64_t x = 0; x < pr->c_rows; x++) A->Ap[r0 + x + 1] = have + pr->a_ptr[x + 1];
  for (int64_t i = 0; i < pr->b_rows; i++) {
    const int64_t j = pr->nbglobal ? pr->b_global[i] : b0 + i;
    if (j < 0 || j >= A->k || in->cnew[j] >= 0)
      return shiro_fail(err, SHIRO_ERR_FORMAT, "floors: rank %d's B row %lld is outside 0..%lld or owned twice", (int)p,
                        (long long)j, (long long)A->k - 1);
    in->cnew[j] = (int32_t)(b0 + i);
  }
  in->Prow.first[p + 1] = r0 + pr->c_rows;
  in->Pcol.first[p + 1] = b0 + pr->b_rows;
  in->added++;
  return SHIRO_OK;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

shiro_status plan_floor_of_input(plan_floor_input *in, int threads, plan_floor *f, shiro_error *err) {
  memset(f, 0, sizeof *f);
  sc_csr *A = in->A;
  if (in->added != in->ranks || in->Prow.first[in->ranks] != A->m || in->Pcol.first[in->ranks] != A->k ||
      A->Ap[A->m] != A->nnz)
    return shiro_fail(err, SHIRO_ERR_FORMAT,
                      "floors: %d of %d ranks added, holding %lld of %lld rows, %lld of %lld B rows, %lld of %lld nonzeros",
                      (int)in->added, (int)in->ranks, (long long)in->Prow.first[in->added], (long long)A->m,
                      (long long)in->Pcol.first[in->added], (long long)A->k, (long long)A->Ap[in->Prow.first[in->added]],
                      (long long)A->nnz);
  for (int64_t t = 0; t < A->nnz; t++) A->Aj[t] = in->cnew[A->Aj[t]]; /* every column owned: counted above */
  for (int64_t i = 0; i < A->m; i++)
    qsort(A->Aj + A->Ap[i], (size_t)(A->Ap[i + 1] - A->Ap[i]), sizeof *A->Aj, cmp_i32);
  return plan_floor_rows(A, &in->Prow, &in->Pcol, in->gpn, threads, f, err);
}

void plan_floor_input_free(plan_floor_input *in) {
  sc_csr_free(in->A);
  part_free(&in->Prow);
  part_free(&in->Pcol);
  free(in->cnew);
  memset(in, 0, sizeof *in);
}
