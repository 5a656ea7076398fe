/* plan_build_flat.c — the flat per-rank program (strategies block, col, row, joint).
 *
 * Rank r's buffers: S holds, for each destination p != r in increasing order,
 * [the B rows r sends p][the partial C rows r computes for p]; R holds, for
 * each source q != r in increasing order, [B rows from q][partial C rows from
 * q]. One message per (peer, direction). The program is
 *   S[..] = B[gather]            (GATHER_B)
 *   S[..] = K_partial · B        (PARTIAL_C)
 *   START 0
 *   C  = K_local · B             (LOCAL, overlaps the exchange)
 *   WAIT 0
 *   C += K_remote · R            (REMOTE_B)
 *   C += Σ R[partials]           (ADD_C, fixed order: deterministic)
 */
#include <stdlib.h>

#include "error.h"
#include "plan_build.h"
#include "plan_builders.h"
#include "plan_deliver.h"
#include "prog_builder.h"
#include "prog_emit.h"

/* Where the rows of one block sit in the S buffer of its source and the R
 * buffer of its destination. */
typedef struct seg {
  int64_t nb; /* B rows moved */
  int64_t nc; /* partial C rows moved */
  int64_t s_off; /* first row in the source's S */
  int64_t r_off; /* first row in the destination's R */
} seg;

typedef struct flat_ctx {
  const sc_csr *A;
  const sc_partition *Prow, *Pcol;
  const sc_blocks *B;
  sc_strategy s;
  int32_t R, gpn;
  seg *sg; /* [n blocks] segment of block t's pair (p,q) (p destination, q source); the block
                     strategy's segments are computed (seg_at), every pair moving all of q's B rows */
  int64_t *qfirst, *qblk; /* [R+1], [n blocks]: the blocks of source q, p increasing, are
                     qblk[qfirst[q] .. qfirst[q+1]) (the transpose of B->first_p) */
  int32_t **cpos; /* [n blocks] position of each selected column within its B part, or -1 (into cpool) */
  int32_t *cpool; /* [Σ nc] the storage of cpos */
  sc_owner_index own; /* owners of B rows (Pcol) */
  int64_t *nent; /* [2R] per rank r: entries of its partial rows (nent[r]) and of its
                     REMOTE_B op (nent[R + r]): the program's size, known before it is built */
} flat_ctx;

static int64_t brows_of(const flat_ctx *f, int32_t q) { return f->Pcol->first[q + 1] - f->Pcol->first[q]; }

/* The segment of pair (p, q), p != q, whose block is t (-1: none). The block
 * strategy sends every pair all of q's B rows and no partial rows, so its
 * offsets follow from the partition: in q's S, destinations o != q before p
 * each take brows(q); in p's R, sources o != p before q take brows(o). */
static seg seg_at(const flat_ctx *f, int32_t p, int32_t q, int64_t t) {
  if (f->s == STRAT_BLOCK) {
    int64_t bq = brows_of(f, q), before = f->Pcol->first[q] - f->Pcol->first[0] - (q > p ? brows_of(f, p) : 0);
    return (seg){.nb = bq, .nc = 0, .s_off = (int64_t)(p - (p > q)) * bq, .r_off = before};
  }
  return t >= 0 ? f->sg[t] : (seg){0};
}

/* Counts what each pair moves and lays out the S and R buffers: O(blocks + R). */
static shiro_status layout(flat_ctx *f) {
  int32_t R = f->R;
  int64_t total = 0;
  for (int64_t t = 0; t < f->B->n; t++) total += f->B->b[t].nc;
  f->cpool = malloc((size_t)(total ? total : 1) * sizeof *f->cpool);
  if (!f->cpool) return SHIRO_ERR_NOMEM;
  total = 0;
  for (int64_t t = 0; t < f->B->n; t++) {
    const sc_block *b = &f->B->b[t];
    int32_t *cpos = f->cpool + total;
    total += b->nc;
    f->cpos[t] = cpos;
    seg *g = &f->sg[t];
    for (int32_t j = 0; j < b->nc; j++) {
      if (f->s == STRAT_BLOCK) cpos[j] = (int32_t)(b->cols[j] - f->Pcol->first[b->q]);
      else cpos[j] = b->csel[j] ? (int32_t)g->nb++ : -1;
    }
    for (int32_t i = 0; i < b->nr; i++) g->nc += b->rsel[i] && f->s != STRAT_BLOCK;
  }
  prog_emit_block_entries(f->B, f->nent); /* the block strategy's counts: every edge is a REMOTE_B entry */
  for (int64_t t = 0; t < f->B->n; t++) f->qfirst[f->B->b[t].q + 1]++;
  for (int32_t q = 0; q < R; q++) f->qfirst[q + 1] += f->qfirst[q];
  for (int64_t t = 0; t < f->B->n; t++) f->qblk[f->qfirst[f->B->b[t].q]++] = t; /* t in (p, q) order: p increasing */
  for (int32_t q = R; q > 0; q--) f->qfirst[q] = f->qfirst[q - 1];
  f->qfirst[0] = 0;
  for (int32_t r = 0; r < R; r++) { /* pairs without a block move nothing: their offsets are never read */
    int64_t s_off = 0, r_off = 0;
    for (int64_t x = f->qfirst[r]; x < f->qfirst[r + 1]; x++) { /* r sends to o = p, increasing */
      seg *out = &f->sg[f->qblk[x]];
      out->s_off = s_off;
      s_off += out->nb + out->nc;
    }
    for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) { /* r receives from o = q, increasing */
      seg *in = &f->sg[t];
      in->r_off = r_off;
      r_off += in->nb + in->nc;
    }
  }
  return SHIRO_OK;
}

/* Ops run before the exchange: B rows gathered and partial C rows computed for every peer. */
static void emit_sends(const flat_ctx *f, int32_t r, prog_builder *pb) {
  int64_t b_first = f->Pcol->first[r];
  pb_mul_begin(pb, PROG_TAG_GATHER_B, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 0, 0);
  for (int32_t p = 0; p < f->R && f->s == STRAT_BLOCK; p++) {
    if (p == r) continue;
    seg g = seg_at(f, p, r, -1);
    for (int64_t j = 0; j < g.nb; j++) {
      pb_row(pb, (int32_t)(g.s_off + j));
      pb_entry(pb, (int32_t)j, 1.0);
    }
  }
  for (int64_t x = f->qfirst[r]; x < f->qfirst[r + 1] && f->s != STRAT_BLOCK; x++) { /* blocks (p, r), p increasing */
    int64_t t = f->qblk[x];
    const sc_block *b = &f->B->b[t];
    const seg *g = &f->sg[t];
    for (int32_t j = 0; j < b->nc; j++)
      if (b->csel[j]) {
        pb_row(pb, (int32_t)(g->s_off + f->cpos[t][j]));
        pb_entry(pb, (int32_t)(b->cols[j] - b_first), 1.0);
      }
  }
  pb_mul_end(pb);
  pb_mul_begin(pb, PROG_TAG_PARTIAL_C, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 1, 0);
  for (int64_t x = f->qfirst[r]; x < f->qfirst[r + 1] && f->s != STRAT_BLOCK; x++) {
    int64_t t = f->qblk[x];
    const sc_block *b = &f->B->b[t];
    const seg *g = &f->sg[t];
    int64_t slot = g->s_off + g->nb;
    for (int32_t i = 0; i < b->nr; i++) {
      if (!b->rsel[i]) continue;
      pb_row(pb, (int32_t)slot++);
      prog_emit_partial_row(pb, f->A, b, i, b_first);
    }
  }
  pb_mul_end(pb);
}

/* The message of rank r with peer o in direction dir (0: r sends), if it moves anything. */
static void emit_message(const flat_ctx *f, int32_t r, int32_t o, int dir, seg g, prog_builder *pb) {
  if (g.nb + g.nc == 0) return;
  pb_xchg(pb, 0, o, dir, dir == 0 ? PROG_BUF_S : PROG_BUF_R, dir == 0 ? g.s_off : g.r_off, g.nb + g.nc,
          (o / f->gpn) != (r / f->gpn), g.nb, PROG_MSG_DIRECT);
}

/* One message per peer and direction, sends first, peers in increasing order:
 * every peer for the block strategy, else the peers r shares a block with. */
static void emit_exchange(const flat_ctx *f, int32_t r, prog_builder *pb) {
  if (f->s == STRAT_BLOCK) {
    for (int dir = 0; dir < 2; dir++)
      for (int32_t o = 0; o < f->R; o++)
        if (o != r) emit_message(f, r, o, dir, dir == 0 ? seg_at(f, o, r, -1) : seg_at(f, r, o, -1), pb);
    return;
  }
  for (int64_t x = f->qfirst[r]; x < f->qfirst[r + 1]; x++) emit_message(f, r, f->B->b[f->qblk[x]].p, 0, f->sg[f->qblk[x]], pb);
  for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) emit_message(f, r, f->B->b[t].q, 1, f->sg[t], pb);
}

/* Per-thread state of emit_remote, for the blocks (r, q) of one rank. */
typedef struct walk {
  int64_t *blk; /* [R] per source q: the block (r, q), -1 if none (set for one rank at a time) */
  int64_t *at; /* [R] per source q: the block row reached (index into rows) */
  int64_t *edge; /* [R] per source q: the next edge of the block */
  int64_t *slot; /* [R] per source q: the R row of the next partial row */
  int32_t *add_li; /* [cap] ADD_C entries in op order: destination row */
  int32_t *add_pos; /* [cap] and source row in R */
  int64_t cap;
} walk;

/* Whether any block (r, q) receives a B row (REMOTE_B is then emitted with every row). */
static int receives_b(const flat_ctx *f, int32_t r) {
  for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++)
    for (int32_t j = 0; j < f->B->b[t].nc; j++)
      if (f->cpos[t][j] >= 0) return 1;
  return 0;
}

/* C += K_remote · R (column side of every block (r, q)) and C += Σ R[partials],
 * walking r's rows of A once, in order. A row's nonzeros with owner q are the
 * block row's edges, consecutive and in edge order; sources come in column
 * order, which is rank order: so the entries come in the order the plan
 * fixes (per row: sources in increasing order, then edges), and each block is
 * read front to back through its cursors. */
static shiro_status emit_remote(const flat_ctx *f, int32_t r, prog_builder *pb, walk *w) {
  const sc_csr *A = f->A;
  int64_t c_first = f->Prow->first[r], c_rows = f->Prow->first[r + 1] - c_first, nadd = 0;
  const int64_t *blk = w->blk;
  for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) {
    int32_t q = f->B->b[t].q;
    seg g = seg_at(f, r, q, t);
    w->blk[q] = t;
    w->at[q] = 0;
    w->edge[q] = 0;
    w->slot[q] = g.r_off + g.nb;
    nadd += f->B->b[t].nr;
  }
  if (nadd > w->cap) {
    free(w->add_li);
    free(w->add_pos);
    w->cap = nadd;
    w->add_li = malloc((size_t)nadd * sizeof *w->add_li);
    w->add_pos = malloc((size_t)nadd * sizeof *w->add_pos);
    if (!w->add_li || !w->add_pos) {
      w->cap = 0;
      return SHIRO_ERR_NOMEM;
    }
  }
  nadd = 0;
  int rows_b = receives_b(f, r);
  pb_mul_begin(pb, PROG_TAG_REMOTE_B, 0, PROG_BUF_C, 0, PROG_BUF_R, 0, 0, 1, 1);
  for (int64_t li = 0; li < c_rows; li++) {
    int64_t i = c_first + li;
    if (rows_b) pb_row(pb, 0);
    for (int64_t t = A->Ap[i], end = A->Ap[i + 1]; t < end;) { /* one run per source q: a block row */
      int32_t q = part_owner_at(&f->own, A->Aj[t]);
      int64_t lim = f->Pcol->first[q + 1];
      if (q == r) {
        while (t < end && A->Aj[t] < lim) t++;
        continue;
      }
      const sc_block *b = &f->B->b[blk[q]];
      if (b->rsel[w->at[q]++] && f->s != STRAT_BLOCK) { /* its partial row, then its edges */
        w->add_li[nadd] = (int32_t)li;
        w->add_pos[nadd++] = (int32_t)w->slot[q]++;
      }
      const int32_t *gj = b->Gj + w->edge[q], *cpos = f->cpos[blk[q]];
      int64_t r_off = seg_at(f, r, q, blk[q]).r_off, t0 = t;
      while (t < end && A->Aj[t] < lim) t++;
      prog_emit_run(pb, gj, cpos, (int32_t)r_off, A, t0, t - t0);
      w->edge[q] += t - t0;
    }
  }
  pb_mul_end(pb);
  pb_mul_begin(pb, PROG_TAG_ADD_C, 0, PROG_BUF_C, 0, PROG_BUF_R, 0, 1, 0, 1);
  for (int64_t x = 0; x < nadd; x++) {
    if (x == 0 || w->add_li[x] != w->add_li[x - 1]) pb_row(pb, w->add_li[x]);
    pb_entry(pb, w->add_pos[x], 1.0);
  }
  pb_mul_end(pb);
  return SHIRO_OK;
}

static shiro_status build_rank(const flat_ctx *f, int32_t r, prog_rank *pr, walk *w) {
  prog_emit_rank_init(pr, r, f->Prow, f->Pcol);
  /* the exact entries: gathered rows, partial rows, the local op (r's
   * nonzeros outside its blocks), REMOTE_B, one per partial row received */
  int64_t gather = 0, sent_c = 0, recv_c = 0, local = f->A->Ap[pr->c_first + pr->c_rows] - f->A->Ap[pr->c_first];
  if (f->s == STRAT_BLOCK) { /* all of r's B rows to every peer, all of every peer's from them */
    int64_t bq = brows_of(f, r), all = f->Pcol->first[f->R] - f->Pcol->first[0];
    pr->s_rows = gather = (int64_t)(f->R - 1) * bq;
    pr->r_rows = all - bq;
  } else {
    for (int64_t x = f->qfirst[r]; x < f->qfirst[r + 1]; x++) {
      const seg *g = &f->sg[f->qblk[x]];
      pr->s_rows += g->nb + g->nc;
      gather += g->nb;
      sent_c += g->nc;
    }
    for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) {
      pr->r_rows += f->sg[t].nb + f->sg[t].nc;
      recv_c += f->sg[t].nc;
    }
  }
  prog_builder pb;
  pb_init(&pb, pr);
  for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) local -= f->B->b[t].ne;
  pb_reserve(&pb, 2 * pr->c_rows + pr->s_rows + recv_c + 5,
             gather + f->nent[r] + local + f->nent[f->R + r] + recv_c, gather + sent_c + recv_c, 1);
  emit_sends(f, r, &pb);
  pb_sync(&pb, PROG_OP_START, 0);
  prog_emit_local(f->A, f->Prow, f->Pcol, r, &pb); /* overlaps the exchange */
  pb_sync(&pb, PROG_OP_WAIT, 0);
  shiro_status st = emit_remote(f, r, &pb, w);
  for (int64_t t = f->B->first_p[r]; t < f->B->first_p[r + 1]; t++) w->blk[f->B->b[t].q] = -1;
  emit_exchange(f, r, &pb);
  return st != SHIRO_OK ? st : pb_status(&pb);
}

/* The context's tables and layout (f's matrix, partitions, blocks, strategy and ranks set). */
static shiro_status flat_setup(flat_ctx *f, shiro_error *err) {
  const int32_t R = f->R;
  for (int32_t p = 0; p < R; p++)
    if (f->Prow->first[p + 1] - f->Prow->first[p] > INT32_MAX || f->Pcol->first[p + 1] - f->Pcol->first[p] > INT32_MAX)
      return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "plan: rank %d owns more than 2^31-1 rows; use more ranks", p);
  size_t nb = (size_t)(f->B->n ? f->B->n : 1);
  f->sg = calloc(nb, sizeof *f->sg);
  f->qfirst = calloc((size_t)R + 1, sizeof *f->qfirst);
  f->qblk = malloc(nb * sizeof *f->qblk);
  f->cpos = calloc(nb, sizeof *f->cpos);
  f->nent = calloc((size_t)R * 2, sizeof *f->nent);
  shiro_status st = SHIRO_ERR_NOMEM;
  if (f->sg && f->qfirst && f->qblk && f->cpos && f->nent && (st = part_owner_index(f->Pcol, &f->own, NULL)) == SHIRO_OK)
    st = layout(f);
  return st == SHIRO_ERR_NOMEM ? shiro_fail(err, st, "plan: out of memory") : st;
}

static void flat_free(flat_ctx *f) {
  free(f->cpool);
  free(f->cpos);
  free(f->nent);
  free(f->sg);
  free(f->qfirst);
  free(f->qblk);
  part_owner_index_free(&f->own);
}

shiro_status plan_build_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, plan_deliver *dv,
                             shiro_error *err) {
  int32_t R = Prow->parts;
  flat_ctx f = {.A = A, .Prow = Prow, .Pcol = Pcol, .B = B, .s = s, .R = R, .gpn = gpn};
  shiro_status st = flat_setup(&f, err);
  if (st != SHIRO_OK) goto done;
#pragma omp parallel
  {
    walk w = {0};
    w.at = malloc((size_t)R * 4 * sizeof *w.at);
    w.edge = w.at ? w.at + R : NULL;
    w.slot = w.at ? w.at + 2 * R : NULL;
    w.blk = w.at ? w.at + 3 * R : NULL;
    for (int32_t q = 0; w.blk && q < R; q++) w.blk[q] = -1;
#pragma omp for schedule(dynamic, 1) /* increasing order: plan_deliver_rank's queue */
    for (int32_t r = dv->first; r < dv->end; r++) {
      prog_rank pr = {0};
      shiro_status rst = SHIRO_ERR_NOMEM;
      if (w.at && !plan_deliver_stopped(dv)) {
        rst = build_rank(&f, r, &pr, &w);
        if (rst == SHIRO_OK) rst = plan_deliver_finish(dv, &pr);
      }
      plan_deliver_rank(dv, r, &pr, rst);
    }
    free(w.at);
    free(w.add_li);
    free(w.add_pos);
  }
done:
  flat_free(&f);
  return st;
}

/* Rank r's message to peer o (emit_message's, as a send), if it moves anything. */
static void flat_message(const flat_ctx *f, int32_t r, int32_t o, seg g, plan_msg_fn fn, void *arg) {
  if (g.nb + g.nc == 0) return;
  const plan_msg m = {r, o, 0, (o / f->gpn) != (r / f->gpn), g.nb + g.nc, PROG_MSG_DIRECT};
  fn(arg, &m);
}

shiro_status plan_messages_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                const sc_blocks *B, sc_strategy s, int32_t gpn, plan_msg_fn fn, void *arg,
                                shiro_error *err) {
  flat_ctx f = {.A = A, .Prow = Prow, .Pcol = Pcol, .B = B, .s = s, .R = Prow->parts, .gpn = gpn};
  shiro_status st = flat_setup(&f, err);
  for (int32_t r = 0; r < f.R && st == SHIRO_OK; r++) { /* emit_exchange's sends */
    if (s == STRAT_BLOCK) {
      for (int32_t o = 0; o < f.R; o++)
        if (o != r) flat_message(&f, r, o, seg_at(&f, o, r, -1), fn, arg);
      continue;
    }
    for (int64_t x = f.qfirst[r]; x < f.qfirst[r + 1]; x++) flat_message(&f, r, B->b[f.qblk[x]].p, f.sg[f.qblk[x]], fn, arg);
  }
  flat_free(&f);
  return st;
}

uint64_t plan_pair_table_bytes(int32_t R, int32_t gpn, sc_strategy s) {
  if (!strategy_is_two_tier(s)) return (uint64_t)R * 64; /* nent, qfirst, per thread walk */
  int32_t G = gpn < R ? gpn : R;
  uint64_t nodes = (uint64_t)((R + G - 1) / G);
  /* tier: first-index arrays, rows, nent, recv_map per thread; group: cert, cert_at per node pair */
  uint64_t bytes = (uint64_t)R * 128 + nodes * nodes * 8 * ((uint64_t)G + 2);
  /* hybrid (hybrid.c): intra-node tables [R·G] and the links' loads and trees; its routing is per
   * node pair with blocks (grows with the blocks, not counted here) */
  if (s == STRAT_HYBRID) bytes += (uint64_t)R * G * 16 + (uint64_t)R * 1000;
  return bytes;
}

shiro_status plan_pair_table_fail(int32_t R, int32_t gpn, sc_strategy s, const char *than, shiro_error *err) {
  static const char *unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  double v = (double)plan_pair_table_bytes(R, gpn, s);
  int u = 0;
  while (v >= 1000 && u < 6) v /= 1000, u++;
  int two = strategy_is_two_tier(s);
  return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: R = %d needs %.3g %s for the per-rank%s tables of a %s plan, more than %s; "
                                          "plan for fewer ranks%s",
                    R, v, unit[u], two ? " and node-pair" : "", two ? "two-tier" : "flat",
                    than ? than : "could be allocated", two ? " or more per node" : "");
}
