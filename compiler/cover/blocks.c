/* blocks.c — extraction of the off-diagonal blocks A(p,q) as bipartite graphs.
 *
 * Rank p's rows are read twice, in order. The first pass counts the edges
 * and rows of every block; one allocation then holds all of p's blocks, and
 * the second pass fills their rows and edges, an edge's column held for now
 * as its offset in the source rank's range, with its value. Then each block's columns are
 * made unique and sorted — a bitmap over the range, read in order — and
 * renumbered 0..nc-1 in place. Every table touched per nonzero is small
 * (the owner index; the marks of one block's range), nothing is allocated
 * per block, and each thread's scratch is sized once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "blocks.h"
#include "error.h"
#include "sorted.h"
#include "strategy.h"

/* A row's consecutive nonzeros owned by one source rank. */
typedef struct brun {
  int32_t q, n;
} brun;

/* One thread's scratch, reused for every rank it builds. */
typedef struct bscratch {
  int32_t *mark; /* [kq_max] a column offset's block-local id, for the block being renumbered */
  uint64_t *bits; /* [kq_max/64 + 1] zero, or the offsets seen in the block being renumbered */
  int64_t *uniq; /* [cap] the rank's distinct columns, block after block */
  int64_t *cnt; /* [3R] per source rank: edges, rows, fill position */
  int64_t *slot; /* [R] block of each source rank, or -1 */
  brun *runs; /* [cap] the rank's runs, row after row (count_rank), for fill_rank */
} bscratch;

static void scratch_free(bscratch *s) {
  free(s->mark);
  free(s->bits);
  free(s->uniq);
  free(s->cnt);
  free(s->slot);
  free(s->runs);
}

/* Scratch for ranges of up to kq_max columns, R ranks and up to cap nonzeros per rank. */
static shiro_status scratch_alloc(bscratch *s, int64_t kq_max, int32_t R, int64_t cap) {
  memset(s, 0, sizeof *s);
  s->mark = malloc((size_t)(kq_max ? kq_max : 1) * sizeof *s->mark);
  s->bits = calloc((size_t)(kq_max / 64 + 1), sizeof *s->bits);
  s->uniq = malloc((size_t)(cap ? cap : 1) * sizeof *s->uniq);
  s->cnt = malloc((size_t)R * 3 * sizeof *s->cnt);
  s->slot = malloc((size_t)R * sizeof *s->slot);
  s->runs = malloc((size_t)(cap ? cap : 1) * sizeof *s->runs); /* a run has a nonzero */
  if (!s->mark || !s->bits || !s->uniq || !s->cnt || !s->slot || !s->runs) return SHIRO_ERR_NOMEM;
  return SHIRO_OK;
}

/* Renumbers block b, whose Gj hold column offsets in [0, kq) from `first`:
 * its distinct columns, increasing, go to out[0..nc-1] (global ids) and Gj
 * becomes their ids. When the range is small next to the edges, marks every
 * edge's offset in a bitmap, without a branch, and reads the marks back in
 * order, word by word; else collects the distinct offsets and sorts them.
 * Returns nc. bits is clean on return. */
static int32_t renumber_block(sc_block *b, int64_t first, int64_t kq, bscratch *s, int64_t *out) {
  int64_t nc = 0;
  uint64_t *bits = s->bits;
  if (kq / 64 <= 8 * b->ne + 64) {
    for (int64_t e = 0; e < b->ne; e++) bits[b->Gj[e] >> 6] |= (uint64_t)1 << (b->Gj[e] & 63);
    nc = sc_bits_drain(bits, (kq - 1) / 64 + 1, first, out, s->mark);
  } else {
    for (int64_t e = 0; e < b->ne; e++) {
      int32_t o = b->Gj[e];
      if (!(bits[o >> 6] & ((uint64_t)1 << (o & 63)))) {
        bits[o >> 6] |= (uint64_t)1 << (o & 63);
        out[nc++] = o;
      }
    }
    qsort(out, (size_t)nc, sizeof *out, sc_cmp_i64);
    for (int64_t x = 0; x < nc; x++) {
      s->mark[out[x]] = (int32_t)x;
      bits[out[x] >> 6] = 0;
      out[x] += first;
    }
  }
  for (int64_t e = 0; e < b->ne; e++) b->Gj[e] = s->mark[b->Gj[e]];
  return (int32_t)nc;
}

/* First pass over rank p's rows [r0, r1): edges and rows of every block, and
 * the runs, in order, for the second. A row's nonzeros of one source rank are
 * consecutive (columns increase): the owner is looked up once per run, not
 * per nonzero. */
static void count_rank(const sc_csr *A, const sc_owner_index *own, int32_t p, int64_t r0, int64_t r1, int32_t R,
                       bscratch *s) {
  int64_t *ce = s->cnt, *cr = s->cnt + R;
  brun *run = s->runs;
  memset(s->cnt, 0, (size_t)R * 2 * sizeof *s->cnt);
  for (int64_t i = r0; i < r1; i++)
    for (int64_t t = A->Ap[i], end = A->Ap[i + 1]; t < end;) {
      int32_t q = part_owner_at(own, A->Aj[t]);
      int64_t lim = own->first[q + 1], t0 = t;
      while (t < end && A->Aj[t] < lim) t++;
      *run++ = (brun){q, (int32_t)(t - t0)}; /* within q's columns: below 2^31 (blocks_build) */
      if (q == p) continue;
      ce[q] += t - t0;
      cr[q]++;
    }
}

/* Carves rank p's blocks (all but their columns) out of one allocation *arena.
 * SHIRO_ERR_UNSUPPORTED: a block of 2^31 nonzeros or more (Gp is 32-bit). */
static shiro_status carve_rank(int32_t p, int32_t R, bscratch *s, sc_block **list, int64_t *nlist, void **arena) {
  int64_t *ce = s->cnt, *cr = s->cnt + R, *cf = s->cnt + 2 * R;
  int64_t nb = 0, NR = 0, NE = 0;
  for (int32_t q = 0; q < R; q++) {
    if (ce[q] > INT32_MAX) return SHIRO_ERR_UNSUPPORTED;
    s->slot[q] = ce[q] ? nb++ : -1;
    NR += cr[q];
    NE += ce[q];
  }
  /* the 4-byte arrays, then the selections: every array aligned */
  size_t bytes = (size_t)(NR + nb) * 4 + (size_t)NR * 4 + (size_t)NE * 4 + (size_t)NR;
  char *m = malloc(bytes ? bytes : 1);
  sc_block *blk = calloc((size_t)(nb ? nb : 1), sizeof *blk);
  if (!m || !blk) {
    free(m);
    free(blk);
    return SHIRO_ERR_NOMEM;
  }
  sc_big_populate(m, 0, bytes); /* every byte is written next: one call, not a fault per page */
  int32_t *Gp = (int32_t *)m, *rows = Gp + NR + nb, *Gj = rows + NR;
  uint8_t *rsel = (uint8_t *)(Gj + NE);
  memset(rsel, 0, (size_t)NR);
  for (int32_t q = 0; q < R; q++) {
    if (s->slot[q] < 0) continue;
    sc_block *b = &blk[s->slot[q]];
    b->p = p;
    b->q = q;
    b->ne = ce[q];
    b->mu = -1;
    b->rows = rows;
    b->Gp = Gp;
    b->Gj = Gj;
    b->rsel = rsel;
    rows += cr[q];
    Gp += cr[q] + 1;
    Gj += ce[q];
    rsel += cr[q];
    cf[q] = 0;
  }
  *list = blk;
  *nlist = nb;
  *arena = m;
  return SHIRO_OK;
}

/* Second pass: rows, and edges (column offsets), one run of the
 * first pass at a time. */
static void fill_rank(const sc_csr *A, const sc_owner_index *own, int32_t p, int64_t r0, int64_t r1, int32_t R,
                      bscratch *s, sc_block *blk) {
  int64_t *cf = s->cnt + 2 * R;
  const brun *run = s->runs;
  for (int64_t i = r0; i < r1; i++)
    for (int64_t t = A->Ap[i], end = A->Ap[i + 1]; t < end; run++) {
      int32_t q = run->q, n = run->n;
      if (q == p) {
        t += n;
        continue;
      }
      int64_t first = own->first[q];
      sc_block *b = &blk[s->slot[q]];
      int64_t e = cf[q];
      b->Gp[b->nr] = (int32_t)e; /* a block's edges: below 2^31 (carve_rank) */
      b->rows[b->nr++] = (int32_t)i; /* m <= INT32_MAX (blocks_build) */
      for (int32_t k = 0; k < n; k++) b->Gj[e + k] = (int32_t)(A->Aj[t + k] - first);
      cf[q] = e + n;
      t += n;
    }
}

/* Gives rank p's blocks their columns, in one more allocation *colarena. */
static shiro_status columns_rank(const sc_partition *Pcol, bscratch *s, sc_block *blk, int64_t nb, void **colarena) {
  int64_t NC = 0;
  for (int64_t x = 0; x < nb; x++) {
    sc_block *b = &blk[x];
    b->Gp[b->nr] = (int32_t)b->ne;
    int64_t first = Pcol->first[b->q];
    b->nc = renumber_block(b, first, Pcol->first[b->q + 1] - first, s, s->uniq + NC);
    NC += b->nc;
  }
  int32_t *cols = malloc((size_t)NC * 4 + (size_t)NC + 1);
  if (!cols) return SHIRO_ERR_NOMEM;
  sc_big_populate(cols, 0, (size_t)NC * 5);
  for (int64_t x = 0; x < NC; x++) cols[x] = (int32_t)s->uniq[x]; /* k <= INT32_MAX (blocks_build) */
  uint8_t *csel = (uint8_t *)(cols + NC);
  memset(csel, 0, (size_t)NC);
  for (int64_t x = 0; x < nb; x++) {
    blk[x].cols = cols;
    blk[x].csel = csel;
    cols += blk[x].nc;
    csel += blk[x].nc;
  }
  *colarena = blk[0].cols;
  return SHIRO_OK;
}

/* Builds the blocks A(p, q) for every q != p into *list (*nlist entries), their arrays in arena[0..1]. */
static shiro_status blocks_of_rank(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                   const sc_owner_index *own, int32_t p, bscratch *s, sc_block **list,
                                   int64_t *nlist, void **arena) {
  int32_t R = Prow->parts;
  int64_t r0 = Prow->first[p], r1 = Prow->first[p + 1];
  count_rank(A, own, p, r0, r1, R, s);
  shiro_status st = carve_rank(p, R, s, list, nlist, &arena[0]);
  if (st != SHIRO_OK || *nlist == 0) return st;
  fill_rank(A, own, p, r0, r1, R, s, *list);
  return columns_rank(Pcol, s, *list, *nlist, &arena[1]);
}

/* The most nonzeros any rank's rows hold, and the widest column range. */
static void scratch_sizes(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int64_t *cap,
                          int64_t *kq_max) {
  *cap = *kq_max = 0;
  for (int32_t p = 0; p < Prow->parts; p++) {
    int64_t n = A->Ap[Prow->first[p + 1]] - A->Ap[Prow->first[p]], kq = Pcol->first[p + 1] - Pcol->first[p];
    if (n > *cap) *cap = n;
    if (kq > *kq_max) *kq_max = kq;
  }
}

/* Copies the per-rank lists into out->b, in rank order. */
static shiro_status gather_lists(sc_block **lists, const int64_t *counts, int32_t R, sc_blocks *out) {
  out->first_p = malloc(((size_t)R + 1) * sizeof *out->first_p);
  if (!out->first_p) return SHIRO_ERR_NOMEM;
  out->first_p[0] = 0;
  for (int32_t p = 0; p < R; p++) out->first_p[p + 1] = out->first_p[p] + counts[p];
  out->b = malloc((size_t)(out->first_p[R] ? out->first_p[R] : 1) * sizeof *out->b);
  if (!out->b) return SHIRO_ERR_NOMEM;
  for (int32_t p = 0; p < R; p++)
    if (counts[p]) memcpy(out->b + out->first_p[p], lists[p], (size_t)counts[p] * sizeof *out->b);
  out->n = out->first_p[R];
  return SHIRO_OK;
}

shiro_status blocks_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                          sc_blocks *out, shiro_error *err) {
  memset(out, 0, sizeof *out);
  if (A->m != Prow->n || A->k != Pcol->n || Prow->parts != Pcol->parts)
    return shiro_fail(err, SHIRO_ERR_ARG, "blocks: partitions do not match the matrix");
  if (A->m > INT32_MAX || A->k > INT32_MAX) /* block rows and columns are held in 32 bits */
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "blocks: the matrix is %lld x %lld; at most 2^31-1 rows and columns "
                                                  "are supported",
                      (long long)A->m, (long long)A->k);
  int32_t R = Prow->parts;
  shiro_status st = SHIRO_OK;
  sc_owner_index own = {0};
  sc_block **lists = calloc((size_t)R, sizeof *lists);
  int64_t *counts = calloc((size_t)R, sizeof *counts);
  out->parts = R;
  out->arena = calloc((size_t)R * 2, sizeof *out->arena);
  if (!lists || !counts || !out->arena) {
    st = SHIRO_ERR_NOMEM;
    goto done;
  }
  if (part_owner_index(Pcol, &own, err) != SHIRO_OK) {
    st = SHIRO_ERR_NOMEM;
    goto done;
  }
  int64_t cap, kq_max;
  scratch_sizes(A, Prow, Pcol, &cap, &kq_max);
  int failed = 0;
#pragma omp parallel reduction(| \
                               : failed)
  {
    bscratch s;
    failed = scratch_alloc(&s, kq_max, R, cap) != SHIRO_OK;
#pragma omp for schedule(dynamic, 1)
    for (int32_t p = 0; p < R; p++)
      if (!failed) {
        shiro_status bs = blocks_of_rank(A, Prow, Pcol, &own, p, &s, &lists[p], &counts[p], &out->arena[2 * p]);
        failed = bs == SHIRO_OK ? 0 : bs == SHIRO_ERR_UNSUPPORTED ? 2
                                                                  : 1;
      }
    scratch_free(&s);
  }
  if (failed & 2) {
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "blocks: a block A(p, q) has 2^31 nonzeros or more; use more ranks");
    goto done;
  }
  if (failed) {
    st = SHIRO_ERR_NOMEM;
    goto done;
  }
  st = gather_lists(lists, counts, R, out);
done:
  if (lists)
    for (int32_t p = 0; p < R; p++) free(lists[p]);
  free(lists);
  free(counts);
  part_owner_index_free(&own);
  if (st != SHIRO_OK) {
    out->n = 0; /* the blocks' arrays are in the arenas: nothing else to free */
    blocks_free(out);
    return st == SHIRO_ERR_NOMEM ? shiro_fail(err, st, "blocks: out of memory") : st;
  }
  return SHIRO_OK;
}

void block_count_entries(sc_block *b) {
  int64_t np = 0, nr = 0;
  for (int32_t i = 0; i < b->nr; i++) {
    int64_t sel = 0, n = b->Gp[i + 1] - b->Gp[i];
    for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) sel += b->csel[b->Gj[e]];
    nr += sel;
    if (b->rsel[i]) np += n - sel;
  }
  b->ent_partial = np;
  b->ent_remote = nr;
}

int64_t block_rows_moved(const sc_block *b) {
  int64_t rows = 0;
  for (int32_t i = 0; i < b->nr; i++) rows += b->rsel[i];
  for (int32_t j = 0; j < b->nc; j++) rows += b->csel[j];
  return rows;
}

void blocks_drop_cert(sc_blocks *B) {
  for (int64_t y = 0; B->cert && y < (int64_t)B->cert_nodes * B->cert_nodes; y++) free(B->cert[y]);
  free(B->cert);
  free(B->cert_at);
  B->cert = NULL;
  B->cert_at = NULL;
  B->cert_nodes = B->cert_gpn = 0;
}

void blocks_free(sc_blocks *B) {
  if (!B) return;
  for (int64_t t = 0; t < B->n; t++) free(B->b[t].rmatch);
  if (B->arena)
    for (int64_t x = 0; x < 2 * (int64_t)B->parts; x++) free(B->arena[x]);
  free(B->arena);
  free(B->b);
  free(B->first_p);
  blocks_drop_cert(B);
  if (B->route) route_drop_tables(B->route);
  free(B->route);
  memset(B, 0, sizeof *B);
}
