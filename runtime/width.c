/* width.c — calls of any width n <= N (shiro_spmm_n, shiro_spmm_transpose_n).
 *
 * A context is made for N columns: its send and receive buffers hold rows of N values and its
 * persistent requests move rows of N values. A call of width n runs the same program with
 * c->n = n: the kernels take rows of n values, and S and R hold the rows packed at n values each
 * (row i at i · n), which fits in what was allocated for N. The messages are the same records
 * (the same rows between the same ranks, in the same stages) of n values a row: at n = N the
 * persistent requests, else MPI_Isend / MPI_Irecv into requests allocated at set-up
 * (mpi_xport.c), so nothing is allocated per call either way. Each row of C is the same sums in
 * the same order as in a context made for n, so the bits are that context's (CPU backend).
 * The CUDA backend runs a call of width n < N on its own kernels (its cuSPARSE descriptors are made
 * for N; cuda_ops_run) and NCCL or the staged MPI copies move n-value rows: compiled, not yet run
 * on a device. */
#include <stdio.h>

#include "internal.h"

/* Runs call(c, in, out) at width n, then the context's width N again. n is checked against
 * 1 .. N on this rank only (named `what`): every rank that passes the same bad n fails the same
 * way; shiro_spmm_checked agrees n across the ranks. */
static shiro_status at_width(shiro_ctx *c, int64_t n, const void *in, void *out,
                             shiro_status (*call)(shiro_ctx *, const void *, void *), const char *what) {
  if (!c) return SHIRO_ERR_ARG;
  if (n == c->opts.n) return call(c, in, out);
  shiro_status st = split_busy(c, what);
  if (st != SHIRO_OK) return st;
  if (n < 1 || n > c->opts.n) {
    snprintf(c->error, sizeof c->error, "%s: n = %lld, expected 1 .. %lld (the context was made for N = %lld)", what,
             (long long)n, (long long)c->opts.n, (long long)c->opts.n);
    return SHIRO_ERR_ARG;
  }
  c->n = n;
  layout_reset(c);
  st = call(c, in, out);
  c->n = c->opts.n;
  layout_reset(c);
  return st;
}

shiro_status shiro_spmm_n(shiro_ctx *c, const void *B_local, void *C_local, int64_t n) {
  return at_width(c, n, B_local, C_local, shiro_spmm, "shiro_spmm_n");
}

shiro_status shiro_spmm_transpose_n(shiro_ctx *c, const void *Y_local, void *X_local, int64_t n) {
  return at_width(c, n, Y_local, X_local, shiro_spmm_transpose, "shiro_spmm_transpose_n");
}
