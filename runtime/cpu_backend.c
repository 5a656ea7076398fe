/* cpu_backend.c — the CPU backend's table: host buffers, OpenMP kernels, the MPI transport. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "mpi_xport.h"

/* The CPU backend's state: the persistent requests of each program (RT_FORWARD, RT_TRANSPOSE). */
typedef struct cpu_state {
  mpi_xport x[2];
} cpu_state;

static void cpu_destroy(shiro_ctx *c) {
  cpu_state *s = c->state;
  if (s) {
    mpi_xport_destroy(&s->x[0]);
    mpi_xport_destroy(&s->x[1]);
  }
  free(s);
  free(c->buf[PROG_BUF_S]);
  free(c->buf[PROG_BUF_R]);
  c->buf[PROG_BUF_S] = c->buf[PROG_BUF_R] = NULL;
  c->state = NULL;
}

static shiro_status cpu_setup(shiro_ctx *c) {
  const size_t n = (size_t)c->opts.n;
  c->buf[PROG_BUF_S] = calloc((size_t)(c->rows[PROG_BUF_S] ? c->rows[PROG_BUF_S] : 1) * n, c->esz);
  c->buf[PROG_BUF_R] = calloc((size_t)(c->rows[PROG_BUF_R] ? c->rows[PROG_BUF_R] : 1) * n, c->esz);
  c->state = calloc(1, sizeof(cpu_state));
  if (!c->buf[PROG_BUF_S] || !c->buf[PROG_BUF_R] || !c->state) {
    snprintf(c->error, sizeof c->error, "out of memory (send and receive buffers: %lld and %lld rows of %zu bytes)",
             (long long)c->rows[PROG_BUF_S], (long long)c->rows[PROG_BUF_R], n * c->esz);
    return SHIRO_ERR_NOMEM;
  }
  return SHIRO_OK;
}

static shiro_status cpu_load(shiro_ctx *c, int d) {
  cpu_state *s = c->state;
  return mpi_xport_setup(&s->x[d], &c->prog[d].stages, c->comm, c->opts.dtype, c->opts.n, c->buf, c->error);
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

static shiro_status cpu_start(shiro_ctx *c, int32_t stage) {
  return mpi_xport_start(&((cpu_state *)c->state)->x[c->dir], stage, c->error);
}
static shiro_status cpu_wait(shiro_ctx *c, int32_t stage) {
  return mpi_xport_wait(&((cpu_state *)c->state)->x[c->dir], stage, c->error);
}

const backend cpu_backend = {
    .name = "cpu",
    .setup = cpu_setup,
    .load = cpu_load,
    .multiply = cpu_multiply,
    .gather = cpu_gather_op,
    .add = cpu_add,
    .start = cpu_start,
    .wait = cpu_wait,
    .destroy = cpu_destroy,
};
