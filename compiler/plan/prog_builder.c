/* prog_builder.c — growable construction of a rank's program. */
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "prog_builder.h"

/* Grows *arr (elements of `size` bytes) so that it holds at least `need`. */
static int grow(prog_builder *b, void **arr, int64_t *cap, int64_t need, size_t size) {
  if (b->failed) return 0;
  if (need <= *cap) return 1;
  int64_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *p = realloc(*arr, (size_t)n * size);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  *arr = p;
  *cap = n;
  return 1;
}

void pb_init(prog_builder *b, prog_rank *pr) {
  memset(b, 0, sizeof *b);
  b->pr = pr;
  b->cur = -1;
}

/* Makes *arr (elements of `size` bytes, capacity *cap) hold exactly `need`
 * if it holds less, and maps what is new with `map`. */
static int reserve(prog_builder *b, void **arr, int64_t *cap, int64_t need, size_t size, int map) {
  if (b->failed) return 0;
  if (need <= *cap) return 1;
  void *p = realloc(*arr, (size_t)need * size);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  if (map) sc_big_populate(p, (size_t)*cap * size, (size_t)(need - *cap) * size);
  *arr = p;
  *cap = need;
  return 1;
}

void pb_reserve(prog_builder *b, int64_t nptr, int64_t ncol, int64_t nrows, int map) {
  prog_rank *pr = b->pr;
  int64_t cap = b->cap_col; /* col, val and val_src grow together */
  if (!reserve(b, (void **)&pr->ptr, &b->cap_ptr, nptr, sizeof *pr->ptr, map) ||
      !reserve(b, (void **)&pr->rows, &b->cap_rows, nrows, sizeof *pr->rows, map) ||
      !reserve(b, (void **)&pr->col, &cap, ncol, sizeof *pr->col, map))
    return;
  cap = b->cap_col;
  if (!reserve(b, (void **)&pr->val, &cap, ncol, sizeof *pr->val, map)) return;
  cap = b->cap_col;
  if (!reserve(b, (void **)&pr->val_src, &cap, ncol, sizeof *pr->val_src, map)) return;
  b->cap_col = cap;
}

static int64_t *new_op(prog_builder *b) {
  prog_rank *pr = b->pr;
  if (!grow(b, (void **)&pr->ops, &b->cap_ops, (pr->nops + 1) * PROG_OP_WIDTH, sizeof *pr->ops)) return NULL;
  int64_t *op = pr->ops + pr->nops * PROG_OP_WIDTH;
  memset(op, 0, PROG_OP_WIDTH * sizeof *op);
  pr->nops++;
  return op;
}

void pb_sync(prog_builder *b, int64_t kind, int64_t stage) {
  int64_t *op = new_op(b);
  if (!op) return;
  op[OPF_KIND] = kind;
  op[OPF_STAGE] = stage;
  op[OPF_ROWS_OFF] = -1;
  if (stage + 1 > b->pr->nstages) b->pr->nstages = (int32_t)(stage + 1);
}

void pb_mul_begin(prog_builder *b, int64_t tag, int64_t stage, int64_t dst_buf, int64_t dst_off,
                  int64_t src_buf, int64_t src_off, int with_rowidx, int has_val, int accum) {
  prog_rank *pr = b->pr;
  int64_t *op = new_op(b);
  if (!op || !grow(b, (void **)&pr->ptr, &b->cap_ptr, pr->nptr + 1, sizeof *pr->ptr)) return;
  op[OPF_KIND] = PROG_OP_MUL;
  op[OPF_STAGE] = stage;
  op[OPF_DST_BUF] = dst_buf;
  op[OPF_DST_OFF] = dst_off;
  op[OPF_SRC_BUF] = src_buf;
  op[OPF_SRC_OFF] = src_off;
  op[OPF_PTR_OFF] = pr->nptr;
  op[OPF_ROWS_OFF] = with_rowidx ? pr->nrowidx : -1;
  op[OPF_HAS_VAL] = has_val;
  op[OPF_ACCUM] = accum;
  op[OPF_TAG] = tag;
  pr->ptr[pr->nptr++] = pr->ncol; /* ptr[PTR_OFF] = start of row 0 */
  b->cur = pr->nops - 1;
  b->with_rows = with_rowidx != 0;
}

/* Brings the open row's end pointer and nval up to the entries appended
 * (pb_entry leaves them behind). */
static void close_row(prog_rank *pr) {
  pr->ptr[pr->nptr - 1] = pr->ncol;
  pr->nval = pr->nvalsrc = pr->ncol;
}

void pb_row_slow(prog_builder *b, int32_t dst_row) {
  prog_rank *pr = b->pr;
  if (b->failed || b->cur < 0) return;
  if (!grow(b, (void **)&pr->ptr, &b->cap_ptr, pr->nptr + 1, sizeof *pr->ptr)) return;
  if (b->with_rows && !grow(b, (void **)&pr->rows, &b->cap_rows, pr->nrowidx + 1, sizeof *pr->rows)) return;
  pb_row(b, dst_row); /* now with room: the inline path */
}

void pb_entry_slow(prog_builder *b, int32_t src_row, double val, int64_t src) {
  prog_rank *pr = b->pr;
  if (b->failed || b->cur < 0) return;
  if (pr->ncol + 1 > b->cap_col) { /* col, val and val_src grow together: aligned with col */
    int64_t cap = b->cap_col;
    if (!grow(b, (void **)&pr->col, &cap, pr->ncol + 1, sizeof *pr->col)) return;
    double *v = realloc(pr->val, (size_t)cap * sizeof *v);
    if (v) pr->val = v;
    int64_t *o = v ? realloc(pr->val_src, (size_t)cap * sizeof *o) : NULL;
    if (o) pr->val_src = o;
    if (!v || !o) {
      b->failed = 1;
      return;
    }
    b->cap_col = cap;
  }
  pr->col[pr->ncol] = src_row;
  pr->val[pr->ncol] = val;
  pr->val_src[pr->ncol] = src;
  pr->ncol++;
}

void pb_mul_end(prog_builder *b) {
  prog_rank *pr = b->pr;
  if (b->failed || b->cur < 0) return;
  int64_t *op = pr->ops + b->cur * PROG_OP_WIDTH;
  close_row(pr);
  if (op[OPF_NROWS] == 0) { /* drop an empty op and its single pointer */
    pr->nptr = op[OPF_PTR_OFF];
    pr->nops--;
  }
  b->cur = -1;
}

void pb_xchg(prog_builder *b, int64_t stage, int64_t peer, int64_t dir, int64_t buf, int64_t off,
             int64_t count, int64_t tier, int64_t brows, int64_t kind) {
  prog_rank *pr = b->pr;
  if (!grow(b, (void **)&pr->xchg, &b->cap_x, (pr->nx + 1) * PROG_X_WIDTH, sizeof *pr->xchg)) return;
  int64_t *x = pr->xchg + pr->nx * PROG_X_WIDTH;
  x[XF_STAGE] = stage;
  x[XF_PEER] = peer;
  x[XF_DIR] = dir;
  x[XF_BUF] = buf;
  x[XF_OFF] = off;
  x[XF_COUNT] = count;
  x[XF_TIER] = tier;
  x[XF_BROWS] = brows;
  x[XF_KIND] = kind;
  pr->nx++;
}

shiro_status pb_status(const prog_builder *b) {
  return b->failed ? SHIRO_ERR_NOMEM : SHIRO_OK;
}
