/* plan_transpose.c — the runtime's transposed program, re-encoded as a plan program.
 *
 * The derivation is runtime/transpose.c's (interp_prepare, then interp_transpose, on a context
 * that holds only the plan and the value type: no backend, no MPI), so what the dump counts and
 * proves is what libshiro runs, not a second implementation of the rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"
#include "plan_transpose.h"

/* Writes rt_op op of program p as a plan op record rec. */
static void encode(const rt_program *p, const rt_op *op, int64_t *rec) {
  memset(rec, 0, PROG_OP_WIDTH * sizeof *rec);
  rec[OPF_STAGE] = op->stage;
  if (op->kind == RT_START || op->kind == RT_WAIT) {
    rec[OPF_KIND] = op->kind == RT_START ? PROG_OP_START : PROG_OP_WAIT;
    return;
  }
  rec[OPF_KIND] = PROG_OP_MUL;
  rec[OPF_DST_BUF] = op->dst_buf;
  rec[OPF_DST_OFF] = op->dst_off;
  rec[OPF_SRC_BUF] = op->src_buf;
  rec[OPF_SRC_OFF] = op->src_off;
  rec[OPF_NROWS] = op->nrows;
  rec[OPF_PTR_OFF] = op->ptr - p->store.ptr;
  rec[OPF_ROWS_OFF] = op->rows ? op->rows - p->store.rows : -1;
  rec[OPF_HAS_VAL] = op->kind == RT_MULTIPLY;
  rec[OPF_ACCUM] = op->accum;
  rec[OPF_TAG] = PROG_TAG_NONE;
}

shiro_status plan_transpose_rank(const prog_rank *fwd, plan_transposed *out, shiro_error *err) {
  memset(out, 0, sizeof *out);
  shiro_ctx *c = calloc(1, sizeof *c);
  struct shiro_plan *plan = calloc(1, sizeof *plan);
  if (!c || !plan) {
    free(c);
    free(plan);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "transposed program of rank %d: out of memory", fwd->rank);
  }
  plan->pr = *fwd; /* borrowed arrays */
  c->plan = plan;
  c->opts.dtype = SHIRO_FLOAT64;
  c->esz = sizeof(double);
  c->vsz = sizeof(double);
  out->ctx = c;
  shiro_status st = interp_prepare(c);
  if (st == SHIRO_OK) st = interp_transpose(c);
  const rt_program *p = &c->prog[RT_TRANSPOSE];
  int64_t *ops = st == SHIRO_OK ? malloc((size_t)(p->nops + 1) * PROG_OP_WIDTH * sizeof *ops) : NULL;
  if (st == SHIRO_OK && !ops) {
    st = SHIRO_ERR_NOMEM;
    snprintf(c->error, sizeof c->error, "out of memory (%lld ops)", (long long)p->nops);
  }
  if (st != SHIRO_OK) {
    shiro_fail(err, st, "transposed program of rank %d: %s", fwd->rank, c->error);
    plan_transposed_free(out);
    return st;
  }
  for (int64_t o = 0; o < p->nops; o++) encode(p, &p->op[o], ops + o * PROG_OP_WIDTH);
  prog_rank *t = &out->pr;
  t->rank = fwd->rank;
  t->nstages = fwd->nstages;
  t->c_first = fwd->c_first;
  t->c_rows = fwd->c_rows;
  t->b_first = fwd->b_first;
  t->b_rows = fwd->b_rows;
  t->s_rows = c->rows[PROG_BUF_S];
  t->r_rows = c->rows[PROG_BUF_R];
  t->nops = p->nops;
  t->ops = ops;
  t->nx = fwd->nx;
  t->xchg = p->store.xchg;
  t->ptr = p->store.ptr;
  t->col = p->store.col;
  t->rows = p->store.rows;
  t->val = p->store.val;
  return SHIRO_OK;
}

void plan_transposed_free(plan_transposed *t) {
  if (!t) return;
  if (t->ctx) {
    interp_release(t->ctx);
    free(t->ctx->plan);
    free(t->ctx);
  }
  free(t->pr.ops);
  memset(t, 0, sizeof *t);
}
