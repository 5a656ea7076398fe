/* backend.h — what a backend supplies to the interpreter: buffers, kernels, a transport.
 *
 * The interpreter (interp.c) walks a rank's program once per call and does
 * everything that is the same for every backend: it prepares each compute op
 * once (rt_op, below), keeps the plan's values in the context's type, groups
 * the exchange records by stage (stages.h), agrees on statuses across ranks,
 * and checks the calls. A backend is then this table and nothing more:
 *
 *   setup     allocate the context's S and R buffers (c->buf[PROG_BUF_S/R]) and
 *             what its kernels and transport share (once, at context creation)
 *   load      prepare kernels and transport for program d of c->prog (the forward
 *             one at creation, the transposed one before its first call); local
 *   multiply  dst[rows] (+)= A · src, with values         (rt_op.kind RT_MULTIPLY)
 *   gather    dst[i] = src[col_i], one source row per row  (RT_GATHER)
 *   add       dst[rows] (+)= Σ src rows, no values          (RT_ADD)
 *   start     post stage s's sends and receives (of program c->dir)
 *   wait      complete stage s's sends and receives
 *   begin     (optional) before a call's first op, e.g. make the device current
 *   finish    (optional) after its last op: make the call complete for the caller
 *   values    (optional) program d's values changed (shiro_ctx_set_values): take them from its
 *             ops' val again (a backend that copied them at load re-uploads; NULL: the kernels
 *             read op->val on every call, as the CPU backend's do); local, may allocate
 *   destroy   free what setup made (also after a partial setup)
 *
 * Every function returns a status and, on failure, writes why into c->error.
 * Kernels and transport calls must not allocate. */
#ifndef SHIRO_BACKEND_H
#define SHIRO_BACKEND_H

#include <stdint.h>

#include "program.h"
#include "shiro.h"

/* What an op of the program does, as the interpreter classified it. */
typedef enum rt_op_kind {
  RT_START = 0, /* begin stage `stage`'s exchanges */
  RT_WAIT = 1, /* complete them */
  RT_MULTIPLY = 2, /* dst[rows] (+)= A · src, entries with values */
  RT_GATHER = 3, /* dst[i] = src[col[ptr[i]]]: no values, one entry per row, assigns */
  RT_ADD = 4 /* dst[rows] (+)= sums of src rows: no values (any other shape without values) */
} rt_op_kind;

/* One op of a program, decoded once. Compute ops (MULTIPLY, GATHER, ADD): row
 * i of the operator has entries ptr[i] .. ptr[i+1]-1 of col[] (source rows
 * relative to src_off) and, for MULTIPLY, of val[] (values of the context's
 * type); it writes dst row dst_off + (rows ? rows[i] : i). The arrays are the
 * plan's (the forward program) or the context's own (the transposed one). */
typedef struct rt_op {
  int64_t index; /* position in the program's ops */
  rt_op_kind kind;
  int32_t stage; /* START/WAIT: the stage; compute ops: the stage they belong to */
  int dst_buf, src_buf; /* PROG_BUF_* */
  int64_t dst_off, src_off;
  int64_t nrows; /* rows of the operator */
  const int64_t *ptr; /* [nrows+1] row pointers (absolute positions in col / val) */
  const int32_t *col; /* the entries' source rows (indexed through ptr) */
  const void *val; /* MULTIPLY: the entries' values, float or double as the context (through ptr); else NULL */
  const int32_t *rows; /* [nrows] destination rows relative to dst_off, or NULL: contiguous */
  int accum; /* 1: dst +=, 0: dst = */
} rt_op;

typedef struct backend {
  const char *name;
  shiro_status (*setup)(shiro_ctx *c);
  shiro_status (*load)(shiro_ctx *c, int d);
  shiro_status (*multiply)(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]);
  shiro_status (*gather)(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]);
  shiro_status (*add)(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]);
  shiro_status (*start)(shiro_ctx *c, int32_t stage);
  shiro_status (*wait)(shiro_ctx *c, int32_t stage);
  shiro_status (*begin)(shiro_ctx *c);
  shiro_status (*finish)(shiro_ctx *c, shiro_status st);
  shiro_status (*values)(shiro_ctx *c, int d);
  void (*destroy)(shiro_ctx *c);
} backend;

extern const backend cpu_backend; /* cpu_backend.c */
extern const backend cuda_backend; /* cuda/backend_cuda.c, when built with CUDA */
extern const backend sim_backend; /* sim_backend.c, in the simulation build only (SHIRO_HAVE_SIM) */

#endif
