/* transpose.c — the transposed product X = Aᵀ·Y, as a program derived from the plan's.
 *
 * The forward program is a straight line of linear steps over the buffers B,
 * C, S, R: compute ops dst[rows] (+)= M · src, and messages that copy rows of
 * S on one rank into R on another. Its adjoint, run backwards, computes
 * Aᵀ·Y with the same messages (so the same volumes, per tier and per stage):
 *
 *   - the ops in reverse order, START s and WAIT s swapped;
 *   - each compute op becomes src (+)= Mᵀ · dst: a B row that was gathered to
 *     be sent becomes a partial row summed here, a partial C row computed for
 *     a peer becomes a product with the Y row that peer sends back, a relay
 *     that forwarded B rows now sums partial rows before they cross, and one
 *     that summed partial C rows now forwards Y rows;
 *   - each message runs the other way, between the same rows: what was sent
 *     from S is received into S, what was received into R is sent from R.
 *
 * The buffers play their adjoint roles: Y takes C's place (read only), X
 * takes B's (written), S and R hold adjoint rows. Mᵀ is built once per op,
 * its rows in increasing order and each row's entries in the forward row
 * order, so the result is deterministic. Whether an op assigns or adds is
 * decided once, by following which rows are already written; rows whose first
 * use would read or add to nothing are cleared at the start of the call (one
 * clear op per buffer: no entries, assign, its rows listed). The first op
 * that writes X covers every row of X, those without entries too (contiguous
 * rows: it assigns all of X in one pass, zeros included, as the forward local
 * multiply does C; listed rows and a clear op per range of empty rows cost
 * R-MAT s18 at R = 2 some 33,000 calls per product); the later ones add to
 * the rows they reach, listed (a pass over all of X's rows for the 12,000 of
 * them that a partial-row add reaches cost 15.7 ms where the forward's gather
 * of the same rows took 8.9). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Rows of each buffer. */
static void buffer_rows(const prog_rank *pr, int64_t rows[PROG_NBUF]) {
  rows[PROG_BUF_B] = pr->b_rows;
  rows[PROG_BUF_C] = pr->c_rows;
  rows[PROG_BUF_S] = pr->s_rows;
  rows[PROG_BUF_R] = pr->r_rows;
}

/* Per row of every buffer: 1 once the adjoint program has written it. */
typedef struct written {
  uint8_t *row[PROG_NBUF];
} written;

/* The forward program may not assign a row it has written before (its adjoint
 * would need that row cleared in between): the planner never does, this says
 * so if a plan ever did. */
static shiro_status check_forward(const shiro_ctx *c, const int64_t rows[PROG_NBUF], char *msg) {
  const rt_program *f = &c->prog[RT_FORWARD];
  shiro_status st = SHIRO_OK;
  uint8_t *seen[PROG_NBUF] = {0};
  for (int b = 0; b < PROG_NBUF; b++) {
    seen[b] = calloc((size_t)rows[b] + 1, 1);
    if (!seen[b]) {
      st = SHIRO_ERR_NOMEM;
      snprintf(msg, SHIRO_MSG_LEN, "out of memory (transposed program)");
      goto done;
    }
  }
  for (int64_t o = 0; o < f->nops; o++) {
    const rt_op *op = &f->op[o];
    if (op->kind == RT_START || op->kind == RT_WAIT) continue;
    for (int64_t i = 0; i < op->nrows; i++) {
      const int64_t r = op->dst_off + (op->rows ? op->rows[i] : i);
      if (!op->accum && seen[op->dst_buf][r]) {
        st = SHIRO_ERR_UNSUPPORTED;
        snprintf(msg, SHIRO_MSG_LEN, "op %lld assigns row %lld of buffer %d after an earlier op wrote it: no transposed program",
                 (long long)o, (long long)r, op->dst_buf);
        goto done;
      }
      seen[op->dst_buf][r] = 1;
    }
  }
done:
  for (int b = 0; b < PROG_NBUF; b++) free(seen[b]);
  return st;
}

/* How many steps of the transposed program write each row of S and R: one receive per forward
 * send of the row, and one op per forward op that reads it. counts[b] ([rows of b], zeroed by the
 * caller) get the numbers; last[b] is scratch of the same size. */
static void contributors(const prog_rank *pr, int32_t *const counts[PROG_NBUF], int64_t *const last[PROG_NBUF]) {
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *rec = pr->xchg + x * PROG_X_WIDTH;
    if (rec[XF_DIR] != 0) continue;
    for (int64_t k = 0; k < rec[XF_COUNT]; k++) counts[rec[XF_BUF]][rec[XF_OFF] + k]++;
  }
  for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++)
    for (int64_t r = 0; last[b] && r < (b == PROG_BUF_S ? pr->s_rows : pr->r_rows); r++) last[b][r] = -1;
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    const int b = (int)op[OPF_SRC_BUF];
    if (op[OPF_KIND] != PROG_OP_MUL || (b != PROG_BUF_S && b != PROG_BUF_R)) continue;
    const int64_t *ptr = pr->ptr + op[OPF_PTR_OFF];
    for (int64_t e = ptr[0]; e < ptr[op[OPF_NROWS]]; e++) {
      const int64_t r = op[OPF_SRC_OFF] + pr->col[e];
      if (last[b][r] != o) {
        last[b][r] = o;
        counts[b][r]++;
      }
    }
  }
}

/* The contributor counts of S and R rows (allocated; free both with free_counts). 0 on no memory. */
static int count_contributors(const prog_rank *pr, int32_t *counts[PROG_NBUF]) {
  int64_t *last[PROG_NBUF] = {0};
  int ok = 1;
  for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++) {
    const int64_t n = b == PROG_BUF_S ? pr->s_rows : pr->r_rows;
    counts[b] = calloc((size_t)n + 1, sizeof *counts[b]);
    last[b] = malloc(((size_t)n + 1) * sizeof *last[b]);
    ok &= counts[b] && last[b];
  }
  if (ok) contributors(pr, counts, last);
  free(last[PROG_BUF_S]);
  free(last[PROG_BUF_R]);
  return ok;
}

/* 1 if a forward send's rows have other contributions in the transposed program (so its
 * transposed receive goes through spare rows). */
static int shared_rows(const int64_t *rec, int32_t *const counts[PROG_NBUF]) {
  for (int64_t k = 0; k < rec[XF_COUNT]; k++)
    if (counts[rec[XF_BUF]][rec[XF_OFF] + k] > 1) return 1;
  return 0;
}

void transpose_extra_rows(const prog_rank *pr, int64_t rows[PROG_NBUF]) {
  buffer_rows(pr, rows);
  int32_t *counts[PROG_NBUF] = {0};
  if (count_contributors(pr, counts)) {
    /* a transposed receive into a row with another contribution lands in a spare row, then is added */
    for (int64_t x = 0; x < pr->nx; x++)
      if (pr->xchg[x * PROG_X_WIDTH + XF_DIR] == 0 && shared_rows(pr->xchg + x * PROG_X_WIDTH, counts))
        rows[pr->xchg[x * PROG_X_WIDTH + XF_BUF]] += pr->xchg[x * PROG_X_WIDTH + XF_COUNT];
  } else { /* no memory to count: room for every receive (interp_transpose will find out anyway) */
    for (int64_t x = 0; x < pr->nx; x++)
      if (pr->xchg[x * PROG_X_WIDTH + XF_DIR] == 0) rows[pr->xchg[x * PROG_X_WIDTH + XF_BUF]] += pr->xchg[x * PROG_X_WIDTH + XF_COUNT];
  }
  free(counts[PROG_BUF_S]);
  free(counts[PROG_BUF_R]);
}

/* The rows an op of f's transposed program covers when it is the first to write X: all of them
 * (x_rows less its offset), so that it assigns every row, zeros included, in one contiguous pass (as
 * the forward local multiply does C), rather than through listed rows and a clear op for the rest.
 * 0 for ops writing S or R: those cover only the rows their entries reach (as do the later ops
 * writing X: the caller passes 0 for them). */
static int64_t full_rows(const rt_op *f, int64_t x_rows) { return f->src_buf == PROG_BUF_B ? x_rows - f->src_off : 0; }

/* 1 + the largest source row of forward op f (relative to its src_off): the rows of Mᵀ. */
static int64_t col_span(const rt_op *f) {
  int64_t span = 0;
  for (int64_t e = f->ptr[0]; e < f->ptr[f->nrows]; e++)
    if (f->col[e] + 1 > span) span = f->col[e] + 1;
  return span;
}

/* 1 + the largest destination row of forward op f: the columns of Mᵀ (its source rows). */
static int64_t row_span(const rt_op *f) {
  if (!f->rows) return f->nrows;
  int64_t span = 0;
  for (int64_t i = 0; i < f->nrows; i++)
    if (f->rows[i] + 1 > span) span = f->rows[i] + 1;
  return span;
}

/* Bytes of source rows per block of a split transposed op (split_blocks): a share of the last-level
 * cache that the block's random reads hit. */
enum { SPLIT_BYTES = 4 << 20 };

/* Tests only: $SHIRO_TRANSPOSE_SPLIT, bytes of source rows per block, splits every transposed op
 * that does not cover all of X, few rows or not (so that small matrices exercise split_op); 0 when
 * unset or not a positive number. */
static size_t split_test_bytes(void) {
  const char *v = getenv("SHIRO_TRANSPOSE_SPLIT");
  char *end;
  const long long b = v ? strtoll(v, &end, 10) : 0;
  return v && *v && !*end && b > 0 ? (size_t)b : 0;
}

int64_t transpose_split_count(int64_t mt_rows, int64_t mt_cols, size_t row_bytes, size_t block_bytes, int forced,
                              int64_t *brows) {
  *brows = row_bytes >= block_bytes ? 1 : (int64_t)(block_bytes / (row_bytes ? row_bytes : 1));
  if (!forced && mt_rows * 4 > mt_cols) return 1;
  return (mt_cols + *brows - 1) / *brows;
}

/* How many ops the transposed op of forward op f becomes (1: not split), and the source rows of each
 * (*brows): transpose_split_count for Mᵀ's nsrc rows (the distinct source rows of f) and its
 * columns. Its rows are few (at most a quarter of its columns: the products with Y of the B rows the
 * peers sent, R-MAT s18 at R = 2: 11,987 rows over 131,072 rows of Y) and its columns span more than
 * SPLIT_BYTES of rows: its rows would read the source at random from memory, all of it once per row
 * (790,000 entries took 133 ms where the forward's product of the same entries took 69). Split by
 * ranges of source rows, each op reads one cache-sized block at random and adds to Mᵀ's rows, which
 * are few; each row still takes its terms in order (the entries of a row of Mᵀ are in increasing
 * source rows when f's rows are, so the blocks take them in order). Mᵀ's rows are counted, not
 * spanned: at R = 4 the B rows three peers sent lie among the partial rows they sent in R, 13,500
 * of them over 32,900 rows of R, products with 65,536 rows of Y (the span, over a quarter, left
 * that op whole: 24 ms against the forward's 17 for its 566,000 entries). `full`: the op covers
 * all of X (never split). */
static int64_t split_blocks(const rt_op *f, size_t row_bytes, int64_t full, int64_t nsrc, int64_t *brows) {
  const size_t test = split_test_bytes();
  const int64_t k = transpose_split_count(nsrc, row_span(f), row_bytes, test ? test : SPLIT_BYTES, test != 0, brows);
  return full ? 1 : k;
}

/* The distinct source rows of forward op f (the rows of Mᵀ), with stamp[span] (scratch of its
 * col_span rows, holding values other than `mark` or mark from an earlier op: each op its own). */
static int64_t distinct_src(const rt_op *f, int64_t *stamp, int64_t mark) {
  int64_t n = 0;
  for (int64_t e = f->ptr[0]; e < f->ptr[f->nrows]; e++)
    if (stamp[f->col[e]] != mark) {
      stamp[f->col[e]] = mark;
      n++;
    }
  return n;
}

/* Sizes of the transposed operators: entries (= the forward ones), rows (distinct source rows, or
 * full_rows; those of the split ops counted once per block) and the ops a split adds. 0 on no
 * memory (for the scratch of distinct_src). */
static int count_transposed(const rt_program *f, int64_t x_rows, size_t row_bytes, int64_t *nent, int64_t *nrows,
                            int64_t *span_max, int64_t *nsplit) {
  *nent = *nrows = *span_max = *nsplit = 0;
  for (int64_t o = 0; o < f->nops; o++) {
    const rt_op *op = &f->op[o];
    if (op->kind == RT_START || op->kind == RT_WAIT || op->nrows == 0) continue;
    const int64_t span = col_span(op);
    if (span > *span_max) *span_max = span;
  }
  int64_t *stamp = malloc(((size_t)*span_max + 1) * sizeof *stamp);
  if (!stamp) return 0;
  for (int64_t r = 0; r <= *span_max; r++) stamp[r] = -1;
  for (int64_t o = 0; o < f->nops; o++) {
    const rt_op *op = &f->op[o];
    if (op->kind == RT_START || op->kind == RT_WAIT || op->nrows == 0) continue;
    const int64_t span = col_span(op);
    int64_t brows;
    const int64_t k = split_blocks(op, row_bytes, 0, distinct_src(op, stamp, o), &brows); /* (full or not: room for the larger) */
    *nent += op->ptr[op->nrows] - op->ptr[0];
    *nrows += span > full_rows(op, x_rows) ? span : full_rows(op, x_rows); /* at most span rows have entries */
    if (k > 1) {
      *nrows += k * span;
      *nsplit += k;
    }
  }
  free(stamp);
  return 1;
}

/* Replaces transposed op *t (Mᵀ, listed rows) by k ops, block b taking its entries of source rows
 * [b·brows, (b+1)·brows) and only the rows that have some: the entries rewritten in place in block
 * order (col, val and vsrc moved together: shiro_ctx_set_values follows), the ops' row pointers and
 * rows appended to the store at *at_ptr and *row. The ops go to body[*nb ...] (t is body[*nb - 1]).
 * tmp: scratch for t's entries (col, val, vsrc). */
static void split_op(rt_op *body, int64_t *nb, int64_t k, int64_t brows, rt_program *p, int64_t *row, int64_t *at_ptr,
                     size_t esz, int32_t *tcol, char *tval, int64_t *tsrc) {
  const rt_op base = body[--*nb];
  const int64_t e0 = base.ptr[0], e1 = base.ptr[base.nrows];
  memcpy(tcol, p->store.col + e0, (size_t)(e1 - e0) * sizeof *tcol);
  memcpy(tval, (char *)p->store.val + (size_t)e0 * esz, (size_t)(e1 - e0) * esz);
  memcpy(tsrc, p->store.vsrc + e0, (size_t)(e1 - e0) * sizeof *tsrc);
  int64_t at = e0;
  for (int64_t b = 0; b < k; b++) {
    const int64_t lo = b * brows, hi = lo + brows;
    int64_t *ptr = p->store.ptr + *at_ptr;
    int32_t *rows = p->store.rows + *row;
    int64_t n = 0;
    for (int64_t j = 0; j < base.nrows; j++) {
      const int64_t c0 = at;
      for (int64_t e = base.ptr[j] - e0; e < base.ptr[j + 1] - e0; e++) {
        if (tcol[e] < lo || tcol[e] >= hi) continue;
        p->store.col[at] = tcol[e];
        memcpy((char *)p->store.val + (size_t)at * esz, tval + (size_t)e * esz, esz);
        p->store.vsrc[at] = tsrc[e];
        at++;
      }
      if (at > c0) {
        rows[n] = base.rows[j];
        ptr[n++] = c0;
      }
    }
    ptr[n] = at;
    if (!n) continue;
    rt_op op = base;
    op.nrows = n;
    op.ptr = ptr;
    op.rows = rows;
    body[(*nb)++] = op;
    *row += n;
    *at_ptr += n + 1;
  }
}

/* Builds Mᵀ of forward op f into t, appending to the store at *ent (entries), *row (rows) and
 * *at_ptr (row pointers: each op takes its rows + 1). cnt: scratch of span_max + 2 counters. */
static void transpose_op(const rt_op *f, rt_op *t, rt_program *p, int64_t *ent, int64_t *row, int64_t *at_ptr, int64_t *cnt,
                         size_t esz, int64_t full) {
  const int64_t e0 = f->ptr[0], e1 = f->ptr[f->nrows];
  int64_t span = 0;
  for (int64_t e = e0; e < e1; e++)
    if (f->col[e] + 1 > span) span = f->col[e] + 1;
  memset(cnt, 0, (size_t)(span + 1) * sizeof *cnt);
  for (int64_t e = e0; e < e1; e++) cnt[f->col[e] + 1]++;
  /* the rows of Mᵀ: the source rows that have entries, increasing */
  int64_t *ptr = p->store.ptr + *at_ptr;
  int32_t *rows = p->store.rows + *row;
  /* (full: every row 0 .. max(span, full)-1, contiguous, those without entries too) */
  const int64_t nr = full > span ? full : span;
  int64_t n = 0, at = *ent;
  for (int64_t s = 0; s < nr; s++) {
    const int64_t c = s < span ? cnt[s + 1] : 0;
    if (!c && !full) continue;
    if (!full) rows[n] = (int32_t)s;
    ptr[n] = at;
    at += c;
    n++;
  }
  ptr[n] = at;
  /* place the entries: cnt[s] becomes the next free slot of row s */
  for (int64_t k = 0, s = 0; k < n; k++) {
    s = full ? k : rows[k];
    if (s < span) cnt[s] = ptr[k];
  }
  const int has_val = f->kind == RT_MULTIPLY;
  for (int64_t i = 0; i < f->nrows; i++) {
    const int32_t d = f->rows ? f->rows[i] : (int32_t)i;
    for (int64_t e = f->ptr[i]; e < f->ptr[i + 1]; e++) {
      const int64_t slot = cnt[f->col[e]]++;
      p->store.col[slot] = d;
      if (has_val) memcpy((char *)p->store.val + (size_t)slot * esz, (const char *)f->val + (size_t)e * esz, esz);
      p->store.vsrc[slot] = has_val ? e : -1; /* where shiro_ctx_set_values refreshes it from */
    }
  }
  memset(t, 0, sizeof *t);
  t->kind = has_val ? RT_MULTIPLY : RT_ADD; /* GATHER decided with the accumulation, below */
  t->stage = f->stage;
  t->dst_buf = f->src_buf;
  t->dst_off = f->src_off;
  t->src_buf = f->dst_buf;
  t->src_off = f->dst_off;
  t->nrows = n;
  t->ptr = ptr;
  t->col = p->store.col;
  t->val = has_val ? p->store.val : NULL;
  t->rows = full ? NULL : rows;
  *ent = at;
  *row += full ? 0 : n;
  *at_ptr += n + 1;
}

/* A clear op: rows [first, first+count) of buffer b assigned zero (no entries; ptr points at zeros). */
static rt_op clear_op(int b, int64_t first, int64_t count, const int64_t *zeros) {
  rt_op op;
  memset(&op, 0, sizeof op);
  op.kind = RT_ADD;
  op.dst_buf = op.src_buf = b;
  op.dst_off = first;
  op.nrows = count;
  op.ptr = zeros;
  return op;
}

/* Decides assign or add for the transposed compute op t from which of its rows are written,
 * marks rows that need clearing first, and marks its rows written. */
static void settle(rt_op *t, written *w, uint8_t *const clear[PROG_NBUF]) {
  int any = 0;
  uint8_t *m = w->row[t->dst_buf];
  for (int64_t i = 0; i < t->nrows; i++) any |= m[t->dst_off + (t->rows ? t->rows[i] : i)];
  t->accum = any;
  for (int64_t i = 0; i < t->nrows; i++) {
    const int64_t r = t->dst_off + (t->rows ? t->rows[i] : i);
    if (any && !m[r]) clear[t->dst_buf][r] = 1; /* added to: must start from zero */
    m[r] = 1;
  }
  if (t->kind == RT_ADD && !t->accum) { /* one source row per row, assigning: a row copy */
    int one = 1;
    for (int64_t i = 0; one && i < t->nrows; i++) one = t->ptr[i + 1] - t->ptr[i] == 1;
    if (one) t->kind = RT_GATHER;
  }
}

/* Rows of a source buffer that the adjoint reads before anything wrote them: cleared first. */
static void reads(const rt_op *t, written *w, uint8_t *const clear[PROG_NBUF]) {
  if (t->src_buf == PROG_BUF_C) return; /* Y: the input */
  uint8_t *m = w->row[t->src_buf];
  for (int64_t i = 0; i < t->nrows; i++)
    for (int64_t e = t->ptr[i]; e < t->ptr[i + 1]; e++) {
      const int64_t r = t->src_off + t->col[e];
      if (!m[r]) clear[t->src_buf][r] = m[r] = 1;
    }
}

/* An add op: rows [first, first+count) of buffer b (+)= its spare rows [spare, spare+count), one each.
 * ptr and col: storage for count + 1 pointers and count entries. */
static rt_op spare_add_op(int b, int64_t first, int64_t spare, int64_t count, int64_t *ptr, int32_t *col, int64_t at) {
  rt_op op;
  memset(&op, 0, sizeof op);
  op.kind = RT_ADD;
  op.dst_buf = op.src_buf = b;
  op.dst_off = first;
  op.nrows = count;
  for (int64_t i = 0; i <= count; i++) ptr[i] = at + i;
  for (int64_t i = 0; i < count; i++) col[at + i] = (int32_t)(spare + i);
  op.ptr = ptr;
  op.col = col;
  return op;
}

shiro_status interp_transpose(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  const rt_program *f = &c->prog[RT_FORWARD];
  rt_program *p = &c->prog[RT_TRANSPOSE];
  const int64_t *rows = c->rows; /* S and R with their spare rows */
  shiro_status st = check_forward(c, rows, c->error);
  if (st != SHIRO_OK) return st;
  const size_t row_bytes = c->vsz * (size_t)c->opts.n;
  int64_t nent, nrows_t, span_max, nsplit, ncompute = 0, nrecv = 0, nrecv_rows = 0;
  if (!count_transposed(f, rows[PROG_BUF_B], row_bytes, &nent, &nrows_t, &span_max, &nsplit)) {
    snprintf(c->error, sizeof c->error, "out of memory (transposed program)");
    return SHIRO_ERR_NOMEM;
  }
  for (int64_t o = 0; o < f->nops; o++) ncompute += f->op[o].kind != RT_START && f->op[o].kind != RT_WAIT;
  ncompute += nsplit;
  for (int64_t x = 0; x < pr->nx; x++)
    if (pr->xchg[x * PROG_X_WIDTH + XF_DIR] == 0) {
      nrecv++;
      nrecv_rows += pr->xchg[x * PROG_X_WIDTH + XF_COUNT];
    }
  int64_t maxrows = 0;
  for (int b = 0; b < PROG_NBUF; b++) maxrows = rows[b] > maxrows ? rows[b] : maxrows;
  /* clear ops: at most one per cleared range; worst case every other row of three buffers */
  const int64_t nclear_max = rows[PROG_BUF_B] + rows[PROG_BUF_S] + rows[PROG_BUF_R] + 3;
  /* row pointers: the transposed operators', the spare adds', then zeros for the clear ops */
  const int64_t nptr_ops = nrows_t + ncompute, nptr_spare = nrecv_rows + nrecv;
  written w = {{0}};
  uint8_t *clear[PROG_NBUF] = {0};
  int32_t *counts[PROG_NBUF] = {0};
  int64_t *cnt = calloc((size_t)span_max + 2, sizeof *cnt);
  rt_op *body = malloc((size_t)(f->nops + nsplit + nrecv + 1) * sizeof *body);
  int64_t split_ent = 0; /* the largest op's entries: scratch for split_op */
  for (int64_t o = 0; o < f->nops; o++)
    if (f->op[o].kind != RT_START && f->op[o].kind != RT_WAIT && f->op[o].ptr[f->op[o].nrows] - f->op[o].ptr[0] > split_ent)
      split_ent = f->op[o].ptr[f->op[o].nrows] - f->op[o].ptr[0];
  if (!nsplit) split_ent = 0;
  int32_t *tcol = malloc((size_t)(split_ent + 1) * sizeof *tcol);
  char *tval = malloc((size_t)(split_ent + 1) * c->vsz);
  int64_t *tsrc = malloc((size_t)(split_ent + 1) * sizeof *tsrc);
  p->store.ptr = calloc((size_t)(nptr_ops + nptr_spare + maxrows + 2), sizeof *p->store.ptr);
  p->store.col = malloc((size_t)(nent + nrecv_rows + 1) * sizeof *p->store.col);
  /* rows: the transposed operators', then the clear ops' lists (at most every row of B, S, R) */
  p->store.rows = malloc((size_t)(nrows_t + rows[PROG_BUF_B] + rows[PROG_BUF_S] + rows[PROG_BUF_R] + 1) * sizeof *p->store.rows);
  p->store.val = malloc((size_t)(nent + 1) * c->vsz);
  p->store.vsrc = malloc((size_t)(nent + 1) * sizeof *p->store.vsrc);
  p->store.xchg = malloc((size_t)(pr->nx + 1) * PROG_X_WIDTH * sizeof *p->store.xchg);
  p->op = malloc((size_t)(f->nops + nsplit + nrecv + nclear_max + 1) * sizeof *p->op);
  int ok = cnt && body && tcol && tval && tsrc && p->store.ptr && p->store.col && p->store.rows && p->store.val && p->store.vsrc && p->store.xchg && p->op &&
      count_contributors(pr, counts);
  for (int b = 0; ok && b < PROG_NBUF; b++) {
    w.row[b] = calloc((size_t)rows[b] + 1, 1);
    clear[b] = calloc((size_t)rows[b] + 1, 1);
    ok = w.row[b] && clear[b];
  }
  if (!ok) {
    st = SHIRO_ERR_NOMEM;
    snprintf(c->error, sizeof c->error, "out of memory (transposed program of %lld entries)", (long long)nent);
    goto done;
  }
  /* 1. the messages the other way: the same rows, stage, peer and kind; a receive into rows that
   *    something else also adds to lands in spare rows (added after its stage's WAIT) */
  if (pr->nx > 0) memcpy(p->store.xchg, pr->xchg, (size_t)pr->nx * PROG_X_WIDTH * sizeof *p->store.xchg);
  int64_t spare[PROG_NBUF] = {0, 0, pr->s_rows, pr->r_rows};
  for (int64_t x = 0; x < pr->nx; x++) {
    int64_t *rec = p->store.xchg + x * PROG_X_WIDTH;
    rec[XF_DIR] ^= 1;
    if (rec[XF_DIR] == 1 && shared_rows(rec, counts)) {
      const int64_t b = rec[XF_BUF];
      rec[XF_OFF] = spare[b]; /* the original rows are in pr->xchg[x]: the add below goes there */
      spare[b] += rec[XF_COUNT];
    }
  }
  /* 2. the ops backwards, each compute op transposed; START and WAIT swapped; after a WAIT, the adds
   *    of its stage's receives that went to spare rows */
  int64_t ent = 0, row = 0, at_ptr = 0, nb = 0, at_spare = nptr_ops, col_spare = nent;
  const int64_t *zeros = p->store.ptr + nptr_ops + nptr_spare; /* maxrows + 2 zeros, for clear ops */
  int x_seen = 0;
  for (int64_t o = f->nops - 1; o >= 0; o--) {
    const rt_op *fo = &f->op[o];
    if (fo->kind == RT_START || fo->kind == RT_WAIT) {
      rt_op *t = &body[nb++];
      *t = *fo;
      t->kind = fo->kind == RT_START ? RT_WAIT : RT_START;
      for (int64_t x = 0; t->kind == RT_WAIT && x < pr->nx; x++) {
        const int64_t *rec = p->store.xchg + x * PROG_X_WIDTH, *orig = pr->xchg + x * PROG_X_WIDTH;
        if (rec[XF_STAGE] != t->stage || rec[XF_DIR] != 1 || rec[XF_OFF] == orig[XF_OFF]) continue;
        body[nb++] = spare_add_op((int)rec[XF_BUF], orig[XF_OFF], rec[XF_OFF], rec[XF_COUNT], p->store.ptr + at_spare,
                                  p->store.col, col_spare);
        at_spare += rec[XF_COUNT] + 1;
        col_spare += rec[XF_COUNT];
      }
      continue;
    }
    if (fo->nrows == 0) continue;
    /* only the first op writing X covers all of it: the later ones add, to the rows they reach */
    const int64_t full = x_seen ? 0 : full_rows(fo, rows[PROG_BUF_B]);
    transpose_op(fo, &body[nb++], p, &ent, &row, &at_ptr, cnt, c->vsz, full);
    x_seen |= fo->src_buf == PROG_BUF_B;
    int64_t brows; /* (not full: Mᵀ's rows are fo's distinct source rows) */
    const int64_t k = split_blocks(fo, row_bytes, full, body[nb - 1].nrows, &brows);
    if (k > 1) split_op(body, &nb, k, brows, p, &row, &at_ptr, c->vsz, tcol, tval, tsrc);
  }
  /* 3. assign or add, and which rows must start from zero: follow the writes in program order.
   *    A WAIT of the transposed program completes its stage's receives: they write their rows. */
  for (int64_t k = 0; k < nb; k++) {
    rt_op *t = &body[k];
    if (t->kind == RT_START) { /* its sends read R rows: any not yet written is cleared first */
      for (int64_t x = 0; x < pr->nx; x++) {
        const int64_t *rec = p->store.xchg + x * PROG_X_WIDTH;
        if (rec[XF_STAGE] != t->stage || rec[XF_DIR] != 0) continue;
        for (int64_t i = 0; i < rec[XF_COUNT]; i++) {
          uint8_t *m = &w.row[rec[XF_BUF]][rec[XF_OFF] + i];
          if (!*m) clear[rec[XF_BUF]][rec[XF_OFF] + i] = *m = 1;
        }
      }
    } else if (t->kind == RT_WAIT) {
      for (int64_t x = 0; x < pr->nx; x++) {
        const int64_t *rec = p->store.xchg + x * PROG_X_WIDTH;
        if (rec[XF_STAGE] == t->stage && rec[XF_DIR] == 1)
          memset(w.row[rec[XF_BUF]] + rec[XF_OFF], 1, (size_t)rec[XF_COUNT]);
      }
    } else {
      reads(t, &w, clear);
      settle(t, &w, clear);
    }
  }
  for (int64_t r = 0; r < rows[PROG_BUF_B]; r++) /* X rows nothing writes: zero */
    if (!w.row[PROG_BUF_B][r]) clear[PROG_BUF_B][r] = 1;
  /* 4. the program: one clear op per buffer (its cleared rows, listed unless they are one range:
   *    a clear op per range was one call per range, tens of thousands of them where X has many
   *    rows without local entries), then the body */
  p->nops = 0;
  const int bufs[3] = {PROG_BUF_B, PROG_BUF_S, PROG_BUF_R};
  for (int k = 0; k < 3; k++) {
    const int b = bufs[k];
    int32_t *list = p->store.rows + row;
    int64_t n = 0;
    for (int64_t r = 0; r < rows[b]; r++)
      if (clear[b][r]) list[n++] = (int32_t)r;
    if (!n) continue;
    rt_op op = clear_op(b, list[0], n, zeros);
    if (list[n - 1] - list[0] + 1 != n) { /* not one range: the listed rows */
      op.dst_off = 0;
      op.rows = list;
      row += n;
    }
    p->op[p->nops++] = op;
  }
  for (int64_t k = 0; k < nb; k++) p->op[p->nops++] = body[k];
  for (int64_t o = 0; o < p->nops; o++) p->op[o].index = o;
  /* 5. the stages of the reversed messages */
  prog_rank shadow = *pr;
  shadow.xchg = p->store.xchg;
  st = rt_stages_build(&p->stages, &shadow, c->error);
done:
  for (int b = 0; b < PROG_NBUF; b++) {
    free(w.row[b]);
    free(clear[b]);
    free(counts[b]);
  }
  free(cnt);
  free(body);
  free(tcol);
  free(tval);
  free(tsrc);
  return st;
}
