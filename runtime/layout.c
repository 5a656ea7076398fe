/* layout.c — B and C in the caller's layout (shiro_spmm_layout, shiro_spmm_transpose_layout):
 * row-major with a leading dimension, or column-major.
 *
 * The call copies its input (B, or Y) into dense rows kept by the context, runs the row-major call
 * on them and copies the output (C, or X) back into the caller's layout (layout_copy.c): the same
 * kernels, messages and bits as shiro_spmm, for two copies of b_rows·N + c_rows·N values. The
 * staging rows are made at the context's first call in another layout and kept until it is
 * destroyed. Kernels that read and write the caller's layout in place (cpu_strided.c) read one
 * value per column of every entry's row, where the dense kernels read whole vectors: 1.9x the
 * row-major call's time at N = 8 and 2.8x at N = 32 on bcsstk33 (one rank), against 2-4% for the
 * copies; they remain for a context that cannot get the staging memory. With one column (N = 1)
 * column-major is dense rows already and nothing is copied. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "layout_copy.h"

void layout_reset(shiro_ctx *c) {
  for (int k = 0; k < PROG_NBUF; k++) {
    c->rs[k] = c->n;
    c->cs[k] = 1;
  }
  c->strided = 0;
}

/* Sets buffer k's strides for rows × N values of leading dimension ld in `layout`; checks ld
 * (named `name`). Returns 0 with c->error set if ld is too small. */
static int set_one(shiro_ctx *c, int k, shiro_layout layout, int64_t ld, int64_t rows, const char *call,
                   const char *name) {
  const int64_t least = layout == SHIRO_COL_MAJOR ? (rows > 1 ? rows : 1) : c->n;
  if (ld < least) {
    snprintf(c->error, sizeof c->error, "%s: %s = %lld, expected at least %lld (%s: %s)", call, name, (long long)ld,
             (long long)least, layout == SHIRO_COL_MAJOR ? "column-major" : "row-major",
             layout == SHIRO_COL_MAJOR ? "the rows this rank owns" : "N");
    return 0;
  }
  c->rs[k] = layout == SHIRO_COL_MAJOR ? 1 : ld;
  c->cs[k] = layout == SHIRO_COL_MAJOR && c->n > 1 ? ld : 1; /* one column: where it starts is all */
  if (c->rs[k] != c->n || c->cs[k] != 1) c->strided = 1;
  return 1;
}

/* The call's layout of buffers B (b_rows rows, ld_b) and C (c_rows rows, ld_c), checked. Local;
 * on failure c->error says why and the layout is the dense one. */
static shiro_status set_layout(shiro_ctx *c, shiro_layout layout, int64_t ld_b, const char *nb, int64_t ld_c,
                               const char *nc, const char *call) {
  const prog_rank *pr = &c->plan->pr;
  layout_reset(c);
  if (layout != SHIRO_ROW_MAJOR && layout != SHIRO_COL_MAJOR) {
    snprintf(c->error, sizeof c->error, "%s: layout %d, expected SHIRO_ROW_MAJOR or SHIRO_COL_MAJOR", call, (int)layout);
    return SHIRO_ERR_ARG;
  }
  if (!set_one(c, PROG_BUF_B, layout, ld_b, pr->b_rows, call, nb) || !set_one(c, PROG_BUF_C, layout, ld_c, pr->c_rows, call, nc)) {
    layout_reset(c);
    return SHIRO_ERR_ARG;
  }
  if (c->strided && c->opts.backend == SHIRO_BACKEND_CUDA) {
    layout_reset(c);
    snprintf(c->error, sizeof c->error, "%s: the CUDA backend takes row-major B and C with ld = N only", call);
    return SHIRO_ERR_UNSUPPORTED;
  }
  return SHIRO_OK;
}

void layout_release(shiro_ctx *c) {
  for (int k = 0; k < 2; k++) {
    free(c->stage[k]);
    c->stage[k] = NULL;
  }
}

/* 1 if the staging rows exist (made now if not: b_rows × N and c_rows × N values), 0 when out of
 * memory. */
static int stage_ready(shiro_ctx *c) {
  if (c->stage[0] && c->stage[1]) return 1;
  const prog_rank *pr = &c->plan->pr;
  const int64_t rows[2] = {pr->b_rows, pr->c_rows};
  for (int k = 0; k < 2; k++)
    if (!c->stage[k]) c->stage[k] = malloc((size_t)(rows[k] > 0 ? rows[k] : 1) * (size_t)c->opts.n * c->esz);
  if (c->stage[0] && c->stage[1]) return 1;
  layout_release(c);
  return 0;
}

/* The call of program dir with its input `in` and output `out` in the layout set (c->rs, c->cs):
 * through the staging rows (see the top of this file), or in place where they cannot be made.
 * split: only its begin (split.c), the output copied at its end (layout_split_end); the layout of
 * an in-place begin stays the context's until then. */
static shiro_status run_in_layout(shiro_ctx *c, int dir, const void *in, void *out, int split, const char *what) {
  const int fwd = dir == RT_FORWARD;
  shiro_status st;
  if (!c->strided || !stage_ready(c)) {
    if (!split) return fwd ? shiro_spmm(c, in, out) : shiro_spmm_transpose(c, in, out);
    st = split_begin(c, dir, in, out, what);
    if (st == SHIRO_OK) c->split.relayout = 1;
    return st;
  }
  const prog_rank *pr = &c->plan->pr;
  const int kin = fwd ? PROG_BUF_B : PROG_BUF_C, kout = fwd ? PROG_BUF_C : PROG_BUF_B;
  const int64_t in_rows = fwd ? pr->b_rows : pr->c_rows, out_rows = fwd ? pr->c_rows : pr->b_rows;
  const int64_t rs_in = c->rs[kin], cs_in = c->cs[kin], rs_out = c->rs[kout], cs_out = c->cs[kout];
  st = ctx_check_buffers(c, dir, in, out, what); /* the caller's buffers, in their layout */
  if (st != SHIRO_OK) return st;
  void *s_in = c->stage[fwd ? 0 : 1], *s_out = c->stage[fwd ? 1 : 0];
  if (in_rows > 0) layout_copy(s_in, in, in_rows, c->n, rs_in, cs_in, 1, c->esz, c->threads);
  layout_reset(c);
  if (split) {
    st = split_begin(c, dir, s_in, s_out, what);
    if (st == SHIRO_OK) {
      c->split.relayout = 1;
      c->split.user_out = out;
      c->split.out_rs = rs_out;
      c->split.out_cs = cs_out;
    }
    return st;
  }
  st = fwd ? shiro_spmm(c, s_in, s_out) : shiro_spmm_transpose(c, s_in, s_out);
  if (st == SHIRO_OK && out_rows > 0) layout_copy(out, s_out, out_rows, c->n, rs_out, cs_out, 0, c->esz, c->threads);
  return st;
}

shiro_status layout_split_end(shiro_ctx *c, shiro_status st) {
  const prog_rank *pr = &c->plan->pr;
  const int fwd = c->split.dir == RT_FORWARD;
  const int64_t out_rows = fwd ? pr->c_rows : pr->b_rows;
  if (st == SHIRO_OK && c->split.user_out && out_rows > 0)
    layout_copy(c->split.user_out, c->stage[fwd ? 1 : 0], out_rows, c->n, c->split.out_rs, c->split.out_cs, 0, c->esz,
                c->threads);
  c->split.user_out = NULL;
  c->split.relayout = 0;
  layout_reset(c);
  return st;
}

/* A layout call (split: its begin) of program dir: the checks, then run_in_layout. */
static shiro_status layout_call(shiro_ctx *c, int dir, shiro_layout layout, const void *in, int64_t ld_in, void *out,
                                int64_t ld_out, int split, const char *what) {
  if (!c) return SHIRO_ERR_ARG;
  shiro_status st = split_busy(c, what); /* the call in progress runs on the context's layout */
  if (st != SHIRO_OK) return st;
  const int fwd = dir == RT_FORWARD;
  /* B's layout is ld_in's forward, ld_out's (X's) transposed */
  st = fwd ? set_layout(c, layout, ld_in, "ldb", ld_out, "ldc", what) : set_layout(c, layout, ld_out, "ldx", ld_in, "ldy", what);
  if (st == SHIRO_OK) st = run_in_layout(c, dir, in, out, split, what);
  if (!split || st != SHIRO_OK) layout_reset(c);
  return st;
}

shiro_status shiro_spmm_layout(shiro_ctx *c, shiro_layout layout, const void *B_local, int64_t ldb, void *C_local,
                               int64_t ldc) {
  return layout_call(c, RT_FORWARD, layout, B_local, ldb, C_local, ldc, 0, "shiro_spmm_layout");
}

shiro_status shiro_spmm_transpose_layout(shiro_ctx *c, shiro_layout layout, const void *Y_local, int64_t ldy,
                                         void *X_local, int64_t ldx) {
  return layout_call(c, RT_TRANSPOSE, layout, Y_local, ldy, X_local, ldx, 0, "shiro_spmm_transpose_layout");
}

shiro_status shiro_spmm_layout_begin(shiro_ctx *c, shiro_layout layout, const void *B_local, int64_t ldb, void *C_local,
                                     int64_t ldc) {
  return layout_call(c, RT_FORWARD, layout, B_local, ldb, C_local, ldc, 1, "shiro_spmm_layout_begin");
}

shiro_status shiro_spmm_transpose_layout_begin(shiro_ctx *c, shiro_layout layout, const void *Y_local, int64_t ldy,
                                               void *X_local, int64_t ldx) {
  return layout_call(c, RT_TRANSPOSE, layout, Y_local, ldy, X_local, ldx, 1, "shiro_spmm_transpose_layout_begin");
}
