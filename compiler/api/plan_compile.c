/* plan_compile.c — shiro_plan_compile_csr (shiro_planner.h): the arrays checked, each bad
 * entry named by array and index, made the compiler's CSR matrix (sc_csr_from_coo_segs:
 * duplicates summed in entry order, as the file readers do), then shiro-plan's defaults,
 * plan_choose and plan_write. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "error.h"
#include "machine.h"
#include "partition.h"
#include "plan_choose.h"
#include "plan_write.h"
#include "shiro_planner.h"
#include "strategy.h"

shiro_planner_options shiro_planner_options_default(void) {
  shiro_planner_options o;
  memset(&o, 0, sizeof o);
  o.gpus_per_node = 1;
  return o;
}

/* Checks the entries of A (rows, columns, values), naming the first bad one. */
static shiro_status check_matrix(const shiro_planner_matrix *A, shiro_error *err) {
  const char *f = "shiro_plan_compile_csr";
  if (A->m < 0 || A->k < 0 || A->nnz < 0)
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: m = %lld, k = %lld, nnz = %lld (expected >= 0)", f, (long long)A->m,
                      (long long)A->k, (long long)A->nnz);
  if (A->k > SC_CSR_MAX_COLS)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: the matrix has %lld columns; at most %lld are supported "
                                                  "(32-bit column indices)",
                      f, (long long)A->k, (long long)SC_CSR_MAX_COLS);
  if (A->nnz && (!A->cols || (!A->rowptr && !A->rows)))
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: cols and one of rowptr, rows are required", f);
  if (A->rowptr) {
    if (A->rowptr[0] != 0)
      return shiro_fail(err, SHIRO_ERR_ARG, "%s: rowptr[0] = %lld (expected 0)", f, (long long)A->rowptr[0]);
    for (int64_t i = 0; i < A->m; i++)
      if (A->rowptr[i + 1] < A->rowptr[i])
        return shiro_fail(err, SHIRO_ERR_ARG, "%s: rowptr[%lld] = %lld is below rowptr[%lld] = %lld (expected "
                                              "nondecreasing row pointers)",
                          f, (long long)(i + 1), (long long)A->rowptr[i + 1], (long long)i, (long long)A->rowptr[i]);
    if (A->rowptr[A->m] != A->nnz)
      return shiro_fail(err, SHIRO_ERR_ARG, "%s: rowptr[%lld] = %lld but nnz = %lld (expected equal)", f,
                        (long long)A->m, (long long)A->rowptr[A->m], (long long)A->nnz);
  } else {
    for (int64_t t = 0; t < A->nnz; t++)
      if (A->rows[t] < 0 || A->rows[t] >= A->m)
        return shiro_fail(err, SHIRO_ERR_ARG, "%s: rows[%lld] = %lld is out of range (expected 0..%lld)", f,
                          (long long)t, (long long)A->rows[t], (long long)A->m - 1);
  }
  for (int64_t t = 0; t < A->nnz; t++) {
    if (A->cols[t] < 0 || A->cols[t] >= A->k)
      return shiro_fail(err, SHIRO_ERR_ARG, "%s: cols[%lld] = %lld is out of range (expected 0..%lld)", f,
                        (long long)t, (long long)A->cols[t], (long long)A->k - 1);
    if (A->values && !isfinite(A->values[t]))
      return shiro_fail(err, SHIRO_ERR_ARG, "%s: values[%lld] is not a finite number", f, (long long)t);
  }
  return SHIRO_OK;
}

/* The compiler's CSR matrix of A (CSR rows expanded to one row per entry for the builder). */
static shiro_status to_csr(const shiro_planner_matrix *A, int threads, sc_csr **out, shiro_error *err) {
  int64_t *rows = NULL;
  if (A->rowptr) {
    rows = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *rows);
    if (!rows) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_plan_compile_csr: out of memory (%lld entries)", (long long)A->nnz);
    for (int64_t i = 0; i < A->m; i++)
      for (int64_t t = A->rowptr[i]; t < A->rowptr[i + 1]; t++) rows[t] = i;
  }
  sc_coo_seg seg = {.n = A->nnz, .Ti = rows ? rows : A->rows, .Tj = A->cols, .Tx = A->values};
  shiro_status st = sc_csr_from_coo_segs(A->m, A->k, 1, &seg, SC_COO_AS_IS, threads, out, err);
  free(rows);
  return st;
}

/* shiro-plan's option defaults and checks (tools/shiro_plan.c's parse) on o, into *r; *mach
 * is loaded when the request prices plans. */
static shiro_status request_of(const shiro_planner_options *o, const shiro_planner_matrix *A, plan_request *r,
                               sc_machine *mach, shiro_error *err) {
  const char *f = "shiro_plan_compile_csr";
  memset(r, 0, sizeof *r);
  if (o->ranks < 1 || o->ranks > (1 << 20))
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: ranks = %d (expected 1..%d)", f, o->ranks, 1 << 20);
  if (o->gpus_per_node < 1 || o->gpus_per_node > (1 << 20))
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: gpus_per_node = %d (expected 1..%d)", f, o->gpus_per_node, 1 << 20);
  if (o->n < 0 || o->n > (1 << 20)) return shiro_fail(err, SHIRO_ERR_ARG, "%s: n = %lld (expected 0..%d)", f, (long long)o->n, 1 << 20);
  r->ranks = o->ranks;
  r->gpn = o->gpus_per_node;
  r->strategy = STRAT_COUNT;
  r->partition = "block";
  r->n = o->n ? o->n : 64;
  r->row_bytes = (size_t)r->n * (o->dtype_double ? sizeof(double) : sizeof(float));
  if (o->effort && strcmp(o->effort, "fast") && strcmp(o->effort, "exhaustive"))
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: effort '%s' (expected fast or exhaustive)", f, o->effort);
  r->effort = o->effort && !strcmp(o->effort, "exhaustive") ? PLAN_EFFORT_EXHAUSTIVE : PLAN_EFFORT_FAST;
  if (o->strategy) {
    r->auto_strategy = !strcmp(o->strategy, "auto");
    r->cpu_auto = !strcmp(o->strategy, "auto-cpu");
    if (r->cpu_auto) r->strategy = STRAT_JOINT; /* until work_choose decides */
    else if (!r->auto_strategy) {
      shiro_error e;
      if (strategy_parse(o->strategy, &r->strategy, &e) != SHIRO_OK)
        return shiro_fail(err, SHIRO_ERR_ARG, "%s: strategy: %s", f, e.message);
    }
  }
  if (o->partition) {
    if (!strncmp(o->partition, "parts:", 6) && o->partition[6]) {
      r->parts_file = o->partition + 6;
      r->partition = "parts";
    } else if (!strcmp(o->partition, "parts")) {
      if (!o->parts) return shiro_fail(err, SHIRO_ERR_ARG, "%s: partition 'parts' without a parts array", f);
      for (int64_t i = 0; i < A->m; i++)
        if (o->parts[i] < 0 || o->parts[i] >= o->ranks)
          return shiro_fail(err, SHIRO_ERR_ARG, "%s: parts[%lld] = %d is not a rank (expected 0..%d)", f, (long long)i,
                            o->parts[i], o->ranks - 1);
      r->parts = o->parts;
      r->partition = "parts";
    } else if (!plan_partition_known(o->partition)) {
      return shiro_fail(err, SHIRO_ERR_ARG, "%s: partition '%s' (expected " PLAN_PARTITION_NAMES ", parts with a "
                                            "parts array, or parts:FILE)",
                        f, o->partition);
    } else {
      r->partition = o->partition;
    }
    r->partition_given = 1;
  } else if (o->parts) {
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: a parts array without partition 'parts'", f);
  }
  if (r->strategy == STRAT_COUNT && !r->auto_strategy) { /* shiro-plan's default */
    if (r->gpn > 1 && r->gpn < r->ranks) r->auto_strategy = 1;
    else r->strategy = STRAT_JOINT;
  }
  if (r->cpu_auto && !r->partition_given) r->partition = "work";
  if (r->cpu_auto && !strcmp(r->partition, "time"))
    return shiro_fail(err, SHIRO_ERR_ARG, "%s: strategy auto-cpu: partition time balances a network's links, auto-cpu "
                                          "the ranks' CPU work; give work (its default), nnz, block, metis or parts",
                      f);
  const int time_part = (r->auto_strategy && !r->partition_given) || !strcmp(r->partition, "time");
  if (o->machine || r->auto_strategy || time_part) { /* shiro-plan's load_machine */
    shiro_status st = machine_load(o->machine ? o->machine : "tsubame4", mach, err);
    if (st != SHIRO_OK) return st;
    if (!o->machine) mach->gpus_per_node = mach->nics_per_node = r->gpn;
    r->m = mach;
    r->machine_given = o->machine != NULL;
  }
  return SHIRO_OK;
}

shiro_status shiro_plan_compile_csr(const shiro_planner_matrix *A, const shiro_planner_options *o, const char *out,
                                    shiro_planner_result *res, shiro_error *err) {
  if (!A || !o || !out || !*out) {
    const char *what = !A ? "A" : !o ? "o"
                                     : "out";
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_compile_csr: %s is NULL or empty", what);
  }
  if (res) memset(res, 0, sizeof *res);
  plan_request r;
  sc_machine mach;
  shiro_status st = check_matrix(A, err);
  if (st == SHIRO_OK) st = request_of(o, A, &r, &mach, err);
  if (st != SHIRO_OK) return st;
  const int threads0 = omp_get_max_threads();
  if (o->threads > 0) omp_set_num_threads(o->threads);
  sc_csr *M = NULL;
  plan_choice c;
  memset(&c, 0, sizeof c);
  st = to_csr(A, o->threads, &M, err);
  if (st == SHIRO_OK) st = plan_choose(&r, M, &c, err); /* M is c's from here */
  if (st == SHIRO_OK) {
    plan_write_args wa = {.path = out, .pattern = A->values == NULL};
    st = plan_write(&c, r.gpn, &wa, NULL, NULL, err);
  }
  if (st == SHIRO_OK && res) {
    res->nwarnings = plan_warn_node_size(r.ranks, r.gpn, res->warnings, sizeof res->warnings);
    res->nwarnings += plan_warn_empty_ranks(&c, r.ranks, res->warnings, sizeof res->warnings);
    strncpy(res->strategy, strategy_name(c.strategy), sizeof res->strategy - 1);
    strncpy(res->partition, c.partition, sizeof res->partition - 1);
  }
  plan_choice_free(&c);
  omp_set_num_threads(threads0);
  return st;
}
