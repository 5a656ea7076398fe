/* blocks.c — extraction of the off-diagonal blocks A(p,q) as bipartite graphs. */
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "error.h"
#include "sorted.h"

static void block_free(sc_block *b) {
  free(b->rows); free(b->cols); free(b->Gp); free(b->Gj); free(b->Ge);
  free(b->rsel); free(b->csel); free(b->rmatch);
  memset(b, 0, sizeof *b);
}

/* Renumbers the block's columns (held as global ids in gcol[ne]) to 0..nc-1 in
 * increasing global order; mark[] is a scratch array over the source rank's
 * B rows, all -1 on entry and on return. */
static shiro_status compact_columns(sc_block *b, const int64_t *gcol, int64_t base, int32_t *mark) {
  int64_t nc = 0;
  int64_t *uniq = malloc((size_t)(b->ne ? b->ne : 1) * sizeof *uniq);
  if (!uniq) return SHIRO_ERR_NOMEM;
  for (int64_t e = 0; e < b->ne; e++) {
    int64_t j = gcol[e] - base;
    if (mark[j] < 0) { mark[j] = 0; uniq[nc++] = gcol[e]; }
  }
  qsort(uniq, (size_t)nc, sizeof *uniq, sc_cmp_i64);
  for (int64_t t = 0; t < nc; t++) mark[uniq[t] - base] = (int32_t)t;
  for (int64_t e = 0; e < b->ne; e++) b->Gj[e] = mark[gcol[e] - base];
  for (int64_t t = 0; t < nc; t++) mark[uniq[t] - base] = -1;
  int64_t *shrunk = realloc(uniq, (size_t)(nc ? nc : 1) * sizeof *uniq);
  b->cols = shrunk ? shrunk : uniq;
  b->nc = (int32_t)nc;
  return SHIRO_OK;
}

/* Builds the blocks A(p, q) for every q != p into *list (malloc'ed, *nlist entries). */
static shiro_status blocks_of_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                   const int32_t *owner, int32_t p, sc_block **list, int64_t *nlist) {
  shiro_status st = SHIRO_OK;
  int32_t R = Prow->parts;
  int64_t r0 = Prow->first[p], r1 = Prow->first[p + 1];
  int64_t *cnt_e = calloc((size_t)R, sizeof *cnt_e);
  int64_t *cnt_r = calloc((size_t)R, sizeof *cnt_r);
  int64_t *last = malloc((size_t)R * sizeof *last);
  int64_t *slot = malloc((size_t)R * sizeof *slot);
  int64_t *fill_e = calloc((size_t)R, sizeof *fill_e);
  int64_t **gcol = calloc((size_t)R, sizeof *gcol);
  int32_t *mark = NULL;
  sc_block *blk = NULL;
  int64_t nb = 0;
  if (!cnt_e || !cnt_r || !last || !slot || !fill_e || !gcol) { st = SHIRO_ERR_NOMEM; goto done; }
  for (int32_t q = 0; q < R; q++) last[q] = -1;
  for (int64_t i = r0; i < r1; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      int32_t q = owner[A->Aj[t]];
      if (q == p) continue;
      cnt_e[q]++;
      if (last[q] != i) { last[q] = i; cnt_r[q]++; }
    }
  int64_t kq_max = 0;
  for (int32_t q = 0; q < R; q++) {
    slot[q] = cnt_e[q] ? nb++ : -1;
    int64_t kq = Pcol->first[q + 1] - Pcol->first[q];
    if (cnt_e[q] && kq > kq_max) kq_max = kq;
  }
  blk = calloc((size_t)(nb ? nb : 1), sizeof *blk);
  mark = malloc((size_t)(kq_max ? kq_max : 1) * sizeof *mark);
  if (!blk || !mark) { st = SHIRO_ERR_NOMEM; goto done; }
  for (int64_t j = 0; j < kq_max; j++) mark[j] = -1;
  for (int32_t q = 0; q < R; q++) {
    if (slot[q] < 0) continue;
    sc_block *b = &blk[slot[q]];
    b->p = p; b->q = q; b->ne = cnt_e[q]; b->nr = (int32_t)cnt_r[q]; b->mu = -1;
    b->rows = malloc((size_t)cnt_r[q] * sizeof *b->rows);
    b->Gp = malloc(((size_t)cnt_r[q] + 1) * sizeof *b->Gp);
    b->Gj = malloc((size_t)cnt_e[q] * sizeof *b->Gj);
    b->Ge = malloc((size_t)cnt_e[q] * sizeof *b->Ge);
    gcol[q] = malloc((size_t)cnt_e[q] * sizeof **gcol);
    if (!b->rows || !b->Gp || !b->Gj || !b->Ge || !gcol[q]) { st = SHIRO_ERR_NOMEM; goto done; }
    b->Gp[0] = 0;
    b->nr = 0;
    last[q] = -1;
  }
  for (int64_t i = r0; i < r1; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      int32_t q = owner[A->Aj[t]];
      if (q == p) continue;
      sc_block *b = &blk[slot[q]];
      if (last[q] != i) { last[q] = i; b->rows[b->nr++] = i; }
      int64_t e = fill_e[q]++;
      b->Gp[b->nr] = e + 1;
      b->Ge[e] = t;
      gcol[q][e] = A->Aj[t];
    }
  for (int32_t q = 0; q < R; q++) {
    if (slot[q] < 0) continue;
    sc_block *b = &blk[slot[q]];
    SHIRO_CHECK_GOTO(compact_columns(b, gcol[q], Pcol->first[q], mark), st);
    b->rsel = calloc((size_t)b->nr ? (size_t)b->nr : 1, 1);
    b->csel = calloc((size_t)b->nc ? (size_t)b->nc : 1, 1);
    if (!b->rsel || !b->csel) { st = SHIRO_ERR_NOMEM; goto done; }
  }
done:
  if (gcol) for (int32_t q = 0; q < R; q++) free(gcol[q]);
  free(gcol); free(cnt_e); free(cnt_r); free(last); free(slot); free(fill_e); free(mark);
  if (st != SHIRO_OK && blk) {
    for (int64_t t = 0; t < nb; t++) block_free(&blk[t]);
    free(blk);
    blk = NULL; nb = 0;
  }
  *list = blk;
  *nlist = nb;
  return st;
}

shiro_status blocks_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                          sc_blocks *out, shiro_error *err) {
  memset(out, 0, sizeof *out);
  if (A->m != Prow->n || A->k != Pcol->n || Prow->parts != Pcol->parts)
    return shiro_fail(err, SHIRO_ERR_ARG, "blocks: partitions do not match the matrix");
  int32_t R = Prow->parts;
  shiro_status st = SHIRO_OK;
  int32_t *owner = malloc((size_t)(A->k ? A->k : 1) * sizeof *owner);
  sc_block **lists = calloc((size_t)R, sizeof *lists);
  int64_t *counts = calloc((size_t)R, sizeof *counts);
  int64_t *first = malloc(((size_t)R + 1) * sizeof *first);
  if (!owner || !lists || !counts || !first) { st = SHIRO_ERR_NOMEM; goto done; }
  part_owner_table(Pcol, owner);
  int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
  for (int32_t p = 0; p < R; p++)
    failed |= blocks_of_rank(A, Prow, Pcol, owner, p, &lists[p], &counts[p]) != SHIRO_OK;
  if (failed) { st = SHIRO_ERR_NOMEM; goto done; }
  first[0] = 0;
  for (int32_t p = 0; p < R; p++) first[p + 1] = first[p] + counts[p];
  out->b = malloc((size_t)(first[R] ? first[R] : 1) * sizeof *out->b);
  if (!out->b) { st = SHIRO_ERR_NOMEM; goto done; }
  for (int32_t p = 0; p < R; p++)
    if (counts[p]) memcpy(out->b + first[p], lists[p], (size_t)counts[p] * sizeof *out->b);
  out->n = first[R];
  out->parts = R;
  out->first_p = first;
  first = NULL;
  for (int32_t p = 0; p < R; p++) { free(lists[p]); lists[p] = NULL; counts[p] = 0; }
done:
  if (lists)
    for (int32_t p = 0; p < R; p++) {
      for (int64_t t = 0; t < counts[p]; t++) block_free(&lists[p][t]);
      free(lists[p]);
    }
  free(lists); free(counts); free(owner); free(first);
  if (st == SHIRO_ERR_NOMEM) return shiro_fail(err, st, "blocks: out of memory");
  return st;
}

void blocks_free(sc_blocks *B) {
  if (!B) return;
  for (int64_t t = 0; t < B->n; t++) block_free(&B->b[t]);
  free(B->b);
  free(B->first_p);
  free(B->cert);
  memset(B, 0, sizeof *B);
}
