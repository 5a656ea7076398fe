/* layout.c — B and C in the caller's layout (shiro_spmm_layout, shiro_spmm_transpose_layout):
 * row-major with a leading dimension, or column-major, used in place. The call's strides of B and C
 * go into the context for the one call (c->rs, c->cs), the CPU backend hands them to the kernels
 * (cpu_strided.c: the same sums in the same order, so the same bits as dense rows), and the
 * context's own buffers S and R keep dense rows, so the messages are the row-major call's. */
#include <stdio.h>

#include "internal.h"

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
  c->cs[k] = layout == SHIRO_COL_MAJOR ? ld : 1;
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

shiro_status shiro_spmm_layout(shiro_ctx *c, shiro_layout layout, const void *B_local, int64_t ldb, void *C_local,
                               int64_t ldc) {
  if (!c) return SHIRO_ERR_ARG;
  shiro_status st = split_busy(c, "shiro_spmm_layout"); /* the call in progress runs on the context's layout */
  if (st != SHIRO_OK) return st;
  st = set_layout(c, layout, ldb, "ldb", ldc, "ldc", "shiro_spmm_layout");
  if (st == SHIRO_OK) st = shiro_spmm(c, B_local, C_local);
  layout_reset(c);
  return st;
}

shiro_status shiro_spmm_transpose_layout(shiro_ctx *c, shiro_layout layout, const void *Y_local, int64_t ldy,
                                         void *X_local, int64_t ldx) {
  if (!c) return SHIRO_ERR_ARG;
  shiro_status st = split_busy(c, "shiro_spmm_transpose_layout");
  if (st != SHIRO_OK) return st;
  /* X takes B's place (b_rows rows), Y takes C's (c_rows rows) */
  st = set_layout(c, layout, ldx, "ldx", ldy, "ldy", "shiro_spmm_transpose_layout");
  if (st == SHIRO_OK) st = shiro_spmm_transpose(c, Y_local, X_local);
  layout_reset(c);
  return st;
}
