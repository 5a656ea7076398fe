/* spmm_cpu.c — one SpMM call on the CPU backend: interpret the rank's program. */
#include <stdio.h>

#include "internal.h"

/* Base address of a program buffer for this call. */
static void *buffer(shiro_ctx *c, int64_t buf, const void *B, void *C) {
  switch (buf) {
    case PROG_BUF_B: return (void *)B;
    case PROG_BUF_C: return C;
    case PROG_BUF_S: return c->S;
    case PROG_BUF_R: return c->R;
  }
  return NULL;
}

static shiro_status fail(shiro_ctx *c, shiro_status s, const char *what) {
  snprintf(c->error, sizeof c->error, "shiro_spmm: %s", what);
  return s;
}

shiro_status shiro_spmm(shiro_ctx *c, const void *B, void *C) {
  if (!c) return SHIRO_ERR_ARG;
  const prog_rank *pr = &c->plan->pr;
  if ((!B && pr->b_rows > 0) || (!C && pr->c_rows > 0)) return fail(c, SHIRO_ERR_ARG, "B_local or C_local is NULL");
  c->error[0] = 0;
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    int64_t s = op[OPF_STAGE];
    MPI_Request *rq = c->req + c->stage_first[s];
    int nrq = (int)(c->stage_first[s + 1] - c->stage_first[s]);
    if (op[OPF_KIND] == PROG_OP_START) {
      if (nrq && MPI_Startall(nrq, rq) != MPI_SUCCESS) return fail(c, SHIRO_ERR_MPI, "MPI_Startall failed");
    } else if (op[OPF_KIND] == PROG_OP_WAIT) {
      if (nrq && MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return fail(c, SHIRO_ERR_MPI, "MPI_Waitall failed");
    } else {
      void *dst = buffer(c, op[OPF_DST_BUF], B, C);
      const void *src = buffer(c, op[OPF_SRC_BUF], B, C);
      if (c->opts.dtype == SHIRO_FLOAT64) cpu_mul_f64(pr, op, pr->val, dst, src, c->opts.n);
      else cpu_mul_f32(pr, op, c->valf, dst, src, c->opts.n);
    }
  }
  return SHIRO_OK;
}
