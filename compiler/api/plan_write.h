/* plan_write.h — the plan kept by plan_choose, built rank by rank and written to a plan
 * file (or only counted and priced): what shiro-plan and shiro_plan_compile_csr both run
 * after plan_choose, so that both write the same bytes for the same matrix and request. */
#ifndef SHIRO_PLAN_WRITE_H
#define SHIRO_PLAN_WRITE_H

#include "cost.h"
#include "plan_choose.h"

/* What plan_write does with the programs of choice c as they are built. */
typedef struct plan_write_args {
  const char *path; /* plan file (a temporary file renamed into place when sealed); NULL: none written */
  int pattern; /* 1: the input had no values: the plan stores none for the local matrices, unless
                  duplicate entries were summed into values other than 1 (then it stores them) */
  sc_volumes *vol; /* two-tier: each program's volumes summed here; else NULL */
  cost_model *cost; /* each program priced here (cost_add_rank); else NULL */
  plan_progress_fn progress; /* "programs" and "write" as they go; NULL: none */
} plan_write_args;

/* Builds the programs of c's strategy on c's blocks (plan_build_each), completes each
 * (metis and parts: the original row ids; a pattern: no values), counts and prices it as
 * `a` asks, writes it when a->path is set and frees it, rank by rank: the whole plan is
 * never in memory. Certificates in c->B are freed as their programs go out (c cannot be
 * built again). *build_s and *write_s (may be NULL) get the seconds spent building and
 * writing. A failed write leaves no file at a->path. Returns SHIRO_OK or the failure,
 * err naming it. Prints nothing. */
shiro_status plan_write(plan_choice *c, int32_t gpn, const plan_write_args *a, double *build_s, double *write_s,
                        shiro_error *err);

/* The warnings of a plan kept (the plan stays valid): ranks that own no rows of A and C or
 * of B, each one line (no "warning:" prefix, no newline) appended to buf[cap] after a '\n'
 * when buf is not empty; truncated to fit. Returns the number of warnings. */
int plan_warn_empty_ranks(const plan_choice *c, int32_t ranks, char *buf, size_t cap);

/* plan_warn_empty_ranks for a partition given as it is (Prow of A's m rows, Pcol of B's k rows,
 * partition its name): the distributed planner's, which holds no plan_choice. */
int plan_warn_empty_parts(const sc_partition *Prow, const sc_partition *Pcol, int64_t m, int64_t k,
                          const char *partition, int32_t ranks, char *buf, size_t cap);

/* The warning for G > R (one node holds every rank), as plan_warn_empty_ranks appends;
 * returns 1 if there is one. */
int plan_warn_node_size(int32_t ranks, int32_t gpn, char *buf, size_t cap);

#endif
