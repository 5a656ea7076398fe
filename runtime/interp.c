/* interp.c — the interpreter: a rank's program decoded once, then walked on every call.
 *
 * At context creation every op is decoded into an rt_op and classified
 * (multiply, gather or add; start or wait), the plan's values are put in
 * the context's type once, and the exchange records are grouped by stage.
 * A call then walks the ops in program order and hands each one to the
 * backend's table (backend.h): the same walk for every backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Which kernel serves a compute op: MULTIPLY with values; GATHER when it only
 * copies one source row into each destination row; ADD for any other shape
 * without values (sums of rows, into listed rows or not, assigning or adding). */
static rt_op_kind compute_kind(const prog_rank *pr, const int64_t *rec) {
  if (rec[OPF_HAS_VAL]) return RT_MULTIPLY;
  if (rec[OPF_ACCUM]) return RT_ADD;
  const int64_t *ptr = pr->ptr + rec[OPF_PTR_OFF];
  for (int64_t i = 0; i < rec[OPF_NROWS]; i++)
    if (ptr[i + 1] - ptr[i] != 1) return RT_ADD;
  return RT_GATHER;
}

void interp_decode(const prog_rank *pr, int64_t o, rt_op *op) {
  const int64_t *rec = pr->ops + o * PROG_OP_WIDTH;
  memset(op, 0, sizeof *op);
  op->index = o;
  op->stage = (int32_t)rec[OPF_STAGE];
  switch (rec[OPF_KIND]) {
    case PROG_OP_START: op->kind = RT_START; return;
    case PROG_OP_WAIT: op->kind = RT_WAIT; return;
  }
  op->kind = compute_kind(pr, rec);
  op->dst_buf = (int)rec[OPF_DST_BUF];
  op->src_buf = (int)rec[OPF_SRC_BUF];
  op->dst_off = rec[OPF_DST_OFF];
  op->src_off = rec[OPF_SRC_OFF];
  op->nrows = rec[OPF_NROWS];
  op->ptr = pr->ptr + rec[OPF_PTR_OFF];
  op->col = pr->col;
  op->rows = rec[OPF_ROWS_OFF] >= 0 ? pr->rows + rec[OPF_ROWS_OFF] : NULL;
  op->accum = (int)rec[OPF_ACCUM];
}

shiro_status interp_prepare(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  rt_program *p = &c->prog[RT_FORWARD];
  p->nops = pr->nops;
  p->op = malloc((size_t)(pr->nops ? pr->nops : 1) * sizeof *p->op);
  if (!p->op) {
    snprintf(c->error, sizeof c->error, "out of memory (%lld ops)", (long long)pr->nops);
    return SHIRO_ERR_NOMEM;
  }
  c->val = pr->val;
  if (c->opts.dtype != SHIRO_FLOAT64 && pr->nval) { /* float32 and the 16-bit types: float32 values */
    c->valf = malloc((size_t)pr->nval * sizeof *c->valf);
    if (!c->valf) {
      snprintf(c->error, sizeof c->error, "out of memory (float copy of %lld values)", (long long)pr->nval);
      return SHIRO_ERR_NOMEM;
    }
    for (int64_t e = 0; e < pr->nval; e++) c->valf[e] = (float)pr->val[e];
    c->val = c->valf;
  }
  for (int64_t o = 0; o < pr->nops; o++) {
    interp_decode(pr, o, &p->op[o]);
    if (p->op[o].kind == RT_MULTIPLY) p->op[o].val = c->val;
  }
  transpose_extra_rows(pr, c->rows);
  return rt_stages_build(&p->stages, pr, c->error);
}

void interp_program_free(rt_program *p) {
  free(p->op);
  rt_stages_free(&p->stages);
  free(p->store.ptr);
  free(p->store.col);
  free(p->store.rows);
  free(p->store.val);
  free(p->store.vsrc);
  free(p->store.xchg);
  memset(p, 0, sizeof *p);
}

void interp_release(shiro_ctx *c) {
  interp_program_free(&c->prog[RT_FORWARD]);
  interp_program_free(&c->prog[RT_TRANSPOSE]);
  free(c->valf);
  c->valf = NULL;
  c->val = NULL;
}

/* One op through the backend's table. */
static shiro_status step(shiro_ctx *c, const rt_op *op, void *const *bufs) {
  const backend *be = c->be;
  const int32_t nstages = c->prog[c->dir].stages.nstages;
  switch (op->kind) { /* a program without exchanges may still start and wait its stage 0 */
    case RT_START: return op->stage < nstages ? be->start(c, op->stage) : SHIRO_OK;
    case RT_WAIT: return op->stage < nstages ? be->wait(c, op->stage) : SHIRO_OK;
    case RT_MULTIPLY: return be->multiply(c, op, bufs);
    case RT_GATHER: return be->gather(c, op, bufs);
    case RT_ADD: return be->add(c, op, bufs);
  }
  snprintf(c->error, sizeof c->error, "op %lld has an unknown kind %d", (long long)op->index, (int)op->kind);
  return SHIRO_ERR_INTERNAL;
}

shiro_status interp_ops(shiro_ctx *c, int dir, const void *in, void *out, int64_t lo, int64_t hi, interp_hook hook,
                        void *arg) {
  return interp_ops_skip(c, dir, in, out, lo, hi, 0, hook, arg);
}

shiro_status interp_ops_skip(shiro_ctx *c, int dir, const void *in, void *out, int64_t lo, int64_t hi, int skip,
                             interp_hook hook, void *arg) {
  const rt_program *p = &c->prog[dir];
  void *const fwd[PROG_NBUF] = {(void *)(uintptr_t)in, out, c->buf[PROG_BUF_S], c->buf[PROG_BUF_R]};
  void *const bwd[PROG_NBUF] = {out, (void *)(uintptr_t)in, c->buf[PROG_BUF_S], c->buf[PROG_BUF_R]};
  void *const *bufs = dir == RT_FORWARD ? fwd : bwd;
  c->dir = dir;
  shiro_status st = SHIRO_OK;
  for (int64_t o = lo; st == SHIRO_OK && o < hi && o < p->nops; o++) {
    const rt_op *op = &p->op[o];
    if (op->kind != RT_START && op->kind != RT_WAIT &&
        ((skip >> op->dst_buf & 1) || (op->kind == RT_MULTIPLY && (skip & INTERP_SKIP_MULTIPLY))))
      continue;
    st = step(c, op, bufs);
    if (st == SHIRO_OK && hook) st = hook(c, o, arg);
  }
  return st;
}

int64_t interp_first_wait(const rt_program *p) {
  for (int64_t o = 0; o < p->nops; o++)
    if (p->op[o].kind == RT_WAIT) return o;
  return p->nops;
}

shiro_status interp_begin(shiro_ctx *c, int dir, const void *in, void *out) {
  c->dir = dir;
  c->call_in = in;
  c->call_out = out;
  return c->be->begin ? c->be->begin(c) : SHIRO_OK;
}

shiro_status interp_run(shiro_ctx *c, int dir, const void *in, void *out, interp_hook hook, void *arg) {
  shiro_status st = interp_begin(c, dir, in, out);
  if (st == SHIRO_OK) st = interp_ops(c, dir, in, out, 0, c->prog[dir].nops, hook, arg);
  return c->be->finish ? c->be->finish(c, st) : st;
}
