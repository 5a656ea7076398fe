/* cpu_backend.c — the CPU backend's table: host buffers, OpenMP kernels, the MPI transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "mpi_xport.h"

/* The CPU backend's state: the persistent requests of each program (RT_FORWARD, RT_TRANSPOSE). */
typedef struct cpu_state {
  mpi_xport x[2];
} cpu_state;

/* A zeroed host buffer of rows x row_bytes bytes (at least one row), NULL when out of memory. From
 * 2 MiB on it is 2 MiB-aligned and asked for transparent huge pages (madvise; a hint the kernel may
 * ignore): the buffers are what shared-memory MPI copies into and out of, and Open MPI's single
 * copy (CMA) moved 2.5 MB at 19-23 GB/s between huge pages against 9-10 GB/s between 4 KiB ones on
 * this VM; the kernels' random reads of received rows take fewer TLB misses too. Freed with free(). */
static void *host_buffer(int64_t rows, size_t row_bytes) {
  enum { HUGE = 2 << 20 };
  size_t bytes = (size_t)(rows > 0 ? rows : 1) * row_bytes;
  if (bytes < HUGE) return calloc(1, bytes);
  size_t whole = (bytes + HUGE - 1) / HUGE * HUGE;
  void *p = aligned_alloc(HUGE, whole);
  if (!p) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, whole, MADV_HUGEPAGE);
#endif
  memset(p, 0, whole);
  return p;
}

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
  c->buf[PROG_BUF_S] = host_buffer(c->rows[PROG_BUF_S], n * c->esz);
  c->buf[PROG_BUF_R] = host_buffer(c->rows[PROG_BUF_R], n * c->esz);
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

/* A compute op (multiply, gather or add, as op->kind says) on the kernels (cpu_kernels.c); while a
 * stage is in flight they poll its requests between chunks of rows, so that its messages move during
 * the multiply (not only in the wait). */
static shiro_status cpu_compute(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  mpi_xport *x = &((cpu_state *)c->state)->x[c->dir];
  const cpu_progress pg = {mpi_xport_poll, x};
  cpu_kernel_run(op, bufs[op->dst_buf], bufs[op->src_buf], c->opts.dtype == SHIRO_FLOAT64, c->opts.n,
                 mpi_xport_in_flight(x) ? &pg : NULL);
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
    .multiply = cpu_compute,  /* the kernel follows op->kind */
    .gather = cpu_compute,
    .add = cpu_compute,
    .start = cpu_start,
    .wait = cpu_wait,
    .destroy = cpu_destroy,
};
