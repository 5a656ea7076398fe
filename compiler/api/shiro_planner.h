/* shiro_planner.h — the plan compiler as one call (libshiro_planner): a matrix given as
 * arrays in memory (CSR or COO, 64-bit indices, double values or none) planned for R ranks
 * and written to a plan file, with the decisions shiro-plan makes by default and the same
 * bytes shiro-plan writes for the same matrix and options. No MPI; local to the caller. */
#ifndef SHIRO_PLANNER_H
#define SHIRO_PLANNER_H

#include <stdint.h>

#include "shiro_status.h" /* SHIRO_API, shiro_status, shiro_error */

#ifdef __cplusplus
extern "C" {
#endif

/* The m x k matrix A: nnz entries (i, cols[t], values[t]), 0-based. Rows either as CSR
 * row pointers (rowptr[m + 1]: rowptr[0] = 0, nondecreasing, rowptr[m] = nnz) or, with
 * rowptr NULL, one row per entry (rows[nnz], COO). Columns need not be sorted;
 * duplicates are summed in entry order and explicit zeros kept, as shiro-plan reads a
 * file listing the same entries. values NULL: a pattern (every value 1.0; the plan says
 * so). Borrowed, not modified. */
typedef struct shiro_planner_matrix {
  int64_t m, k, nnz;
  const int64_t *rowptr; /* [m + 1], or NULL: rows */
  const int64_t *rows; /* [nnz] when rowptr is NULL */
  const int64_t *cols; /* [nnz] in [0, k); k at most 2^31 - 1 */
  const double *values; /* [nnz] finite, or NULL */
} shiro_planner_matrix;

/* shiro-plan's options (its man page says what each does); start from
 * shiro_planner_options_default(). Strings are borrowed; NULL means the default. */
typedef struct shiro_planner_options {
  int32_t ranks; /* R, required (>= 1) */
  int32_t gpus_per_node; /* G (default 1) */
  const char *strategy; /* block, col, row, joint, hier, group, cola, hybrid, auto, auto-cpu;
                           NULL: auto when 1 < G < R, else joint */
  const char *partition; /* block, nnz, work, time, metis, parts (with `parts`), parts:FILE;
                            NULL: shiro-plan's default */
  const int32_t *parts; /* [m] the rank (0..R-1) of each row, for partition "parts" (NULL: none) */
  const char *effort; /* fast (NULL) or exhaustive */
  const char *machine; /* a built-in machine or a JSON machine file; NULL: tsubame4's links where needed */
  int64_t n; /* the columns of B predictions are for (0: 64) */
  int dtype_double; /* 1: predictions for double rows, 0: float */
  int threads; /* planner threads for this call (0: OpenMP's current number); restored after */
} shiro_planner_options;

/* What was planned, and the warnings (the plan is still written). */
typedef struct shiro_planner_result {
  char strategy[16]; /* the plan's strategy (auto: the one chosen) */
  char partition[16]; /* the partition kept */
  int32_t nwarnings; /* lines in warnings */
  char warnings[2048]; /* one warning per line, no "warning:" prefix; truncated to fit */
} shiro_planner_result;

/* The defaults: ranks 0 (to be set), gpus_per_node 1, everything else as shiro-plan. */
SHIRO_API shiro_planner_options shiro_planner_options_default(void);

/* Plans A for o->ranks ranks as shiro-plan would with the same options, and writes the plan
 * file `out` (a temporary file renamed into place: a failure leaves nothing there). res may
 * be NULL. On failure returns the status, err->message naming the argument (for an entry:
 * the array and its index, e.g. "cols[17] = 40 is out of range (expected 0..33)"). Prints
 * nothing. Local (OpenMP threads, no MPI). */
SHIRO_API shiro_status shiro_plan_compile_csr(const shiro_planner_matrix *A, const shiro_planner_options *o,
                                              const char *out, shiro_planner_result *res, shiro_error *err);

#ifdef __cplusplus
}
#endif

#endif
