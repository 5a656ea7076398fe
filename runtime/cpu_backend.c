/* cpu_backend.c — the CPU backend's table: host buffers, OpenMP kernels, the MPI transport. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "mpi_xport.h"

static void cpu_destroy(shiro_ctx *c) {
  mpi_xport *x = c->state;
  if (x) mpi_xport_destroy(x);
  free(x);
  free(c->buf[PROG_BUF_S]);
  free(c->buf[PROG_BUF_R]);
  c->buf[PROG_BUF_S] = c->buf[PROG_BUF_R] = NULL;
  c->state = NULL;
}

static shiro_status cpu_setup(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  const size_t n = (size_t)c->opts.n;
  c->buf[PROG_BUF_S] = calloc((size_t)(pr->s_rows ? pr->s_rows : 1) * n, c->esz);
  c->buf[PROG_BUF_R] = calloc((size_t)(pr->r_rows ? pr->r_rows : 1) * n, c->esz);
  c->state = calloc(1, sizeof(mpi_xport));
  if (!c->buf[PROG_BUF_S] || !c->buf[PROG_BUF_R] || !c->state) {
    snprintf(c->error, sizeof c->error, "out of memory (send and receive buffers: %lld and %lld rows of %zu bytes)",
             (long long)pr->s_rows, (long long)pr->r_rows, n * c->esz);
    return SHIRO_ERR_NOMEM;
  }
  return mpi_xport_setup(c->state, &c->stages, c->comm, c->opts.dtype, c->opts.n, c->buf, c->error);
}

static shiro_status cpu_multiply(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  if (c->opts.dtype == SHIRO_FLOAT64) cpu_multiply_f64(op, bufs[op->dst_buf], bufs[op->src_buf], c->opts.n);
  else cpu_multiply_f32(op, bufs[op->dst_buf], bufs[op->src_buf], c->opts.n);
  return SHIRO_OK;
}

static shiro_status cpu_add(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  if (c->opts.dtype == SHIRO_FLOAT64) cpu_add_f64(op, bufs[op->dst_buf], bufs[op->src_buf], c->opts.n);
  else cpu_add_f32(op, bufs[op->dst_buf], bufs[op->src_buf], c->opts.n);
  return SHIRO_OK;
}

static shiro_status cpu_gather_op(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  cpu_gather(op, bufs[op->dst_buf], bufs[op->src_buf], (size_t)c->opts.n * c->esz);
  return SHIRO_OK;
}

static shiro_status cpu_start(shiro_ctx *c, int32_t stage) { return mpi_xport_start(c->state, stage, c->error); }
static shiro_status cpu_wait(shiro_ctx *c, int32_t stage) { return mpi_xport_wait(c->state, stage, c->error); }

const backend cpu_backend = {
    .name = "cpu",
    .setup = cpu_setup,
    .multiply = cpu_multiply,
    .gather = cpu_gather_op,
    .add = cpu_add,
    .start = cpu_start,
    .wait = cpu_wait,
    .destroy = cpu_destroy,
};
