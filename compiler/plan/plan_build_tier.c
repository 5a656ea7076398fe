/* plan_build_tier.c — two-tier programs (hier, group, cola): SHIRO §6, Algorithm 1.
 *
 * Node of rank r: r / G; rail(N, r): the rank of node N with r's local index
 * (wrapping in a smaller last node). For a pair p ← q in different nodes:
 *   column side: q sends U(q, N) — the union of the B rows any rank of N
 *     needs from it — once, to rep = rail(N, q), which forwards each row to
 *     the ranks of N that need it (it uses its own directly);
 *   row side: the ranks of H = node(q) send their partial rows for p to
 *     agg = rail(H, p), which sums them per output row (its own partials are
 *     computed straight into the sums) and sends V(p, H), one row per output
 *     row, to p.
 * Pairs inside a node exchange directly, as in the flat plan. With hybrid's
 * routing (B->route, strategy.h) the blocks of a node pair it marks direct
 * exchange directly too (stage 0, as inside a node), and rep and agg are
 * its tables' ranks instead of the rail-aligned ones.
 *
 *   GATHER_B, PARTIAL_C        B rows and partials for stage 0 (and agg's own sums)
 *   START 0                    inter-node B, intra-node partials, direct pairs
 *   LOCAL                      overlaps stage 0
 *   WAIT 0
 *   FORWARD_B, AGGREGATE_C     S[...] = R[...] rows to forward; S[...] += R[...] partials
 *   START 1                    inter-node aggregated rows, intra-node forwarding
 *   REMOTE_B, ADD_C            from what stage 0 delivered (overlaps stage 1)
 *   WAIT 1
 *   REMOTE_B, ADD_C            from what stage 1 delivered
 */
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "error.h"
#include "plan_build.h"
#include "plan_builders.h"
#include "plan_deliver.h"
#include "prog_builder.h"
#include "prog_emit.h"
#include "sorted.h"
#include "strategy.h"

enum { K = PROG_MSG_KINDS };

static const int kind_stage[K] = {0, 0, 0, 1, 1}; /* DIRECT, INTER_B, AGG_PART: 0; FWD_B, AGG_C: 1 */

typedef struct tier {
  const sc_csr *A;
  const sc_partition *Prow, *Pcol;
  const sc_blocks *B;
  int32_t R, G, nodes;
  int32_t widest;            /* the most rows or columns of any block: a rank's scratch list (list_selected) */
  int64_t *blk;              /* [R*R] block of (p, q), -1 if none */
  int64_t *ncsel, *nrsel;    /* per block: selected columns / rows (a selected one's slot in a message:
                                how many selected come before it, counted as the block is walked) */
  int64_t **U, *nU;          /* [R*nodes] U(q, N): sorted global B rows q sends to node N */
  int64_t **V, *nV;          /* [R*nodes] V(p, H): sorted global C rows p receives aggregated from node H */
  int64_t *cnt;              /* [K*R*R] rows of the message of kind k from src to dst */
  int64_t *off_s, *off_r;    /* [K*R*R] its first row in the sender's S / the receiver's R */
  int64_t *secA, *secF;      /* per block: its section in the AGG_PART / FWD_B message */
  int64_t *s_rows, *r_rows;  /* [R] */
  int64_t *fwd_from_r;       /* [R*R] (rep, p): the R row where the FWD_B message starts when its rows are
                                one contiguous run of what rep received (sent from R, no copy), else -1 */
  sc_owner_index own;        /* owners of B rows (Pcol) */
  int64_t *nent;             /* [2R] each rank's partial-row / REMOTE_B entries (prog_emit_block_entries) */
  const uint8_t *direct;     /* hybrid: [nodes²] node pair (N rows <- H columns) direct; NULL: none is */
  const int32_t *rep, *agg;  /* hybrid: [R*nodes] the relays (strategy.h's sc_route); NULL: rail-aligned */
} tier;

/* Rank r's view of the B rows it receives, for REMOTE_B: per source q, the
 * R row each column of block (r, q) arrives in (-1: not sent) and the stage
 * that delivers it. */
typedef struct recv_map {
  int32_t *pool;   /* [Σ nc of r's blocks] storage of col */
  int32_t **col;   /* [R] per source q: R row of each block column, NULL when no block (r, q) */
  int8_t *stage;   /* [R] per source q: 0 or 1 */
  int64_t *edge;   /* [R] per source q: the block's next edge (emit_remote_b's cursor) */
  int any[2];      /* per stage: some B row arrives (REMOTE_B is emitted) */
} recv_map;

/* One thread's scratch, reused for every rank it builds. */
typedef struct rank_scratch {
  collector c;        /* ADD_C and AGGREGATE_C entries by destination row */
  int32_t *idx;       /* [widest + 1] list_selected's output */
  int32_t *later_n;   /* [rows_cap] per C row: its REMOTE_B entries of stage 1, held by the walk of stage 0 */
  int32_t *later_col; /* [cap] their sources (R rows), row after row */
  double *later_val;  /* [cap] their values */
  int64_t *later_src; /* [cap] their positions in A (val_src) */
  int64_t rows_cap, cap;
} rank_scratch;

#define IDX(k, src, dst) (((int64_t)(k) * t->R + (src)) * t->R + (dst))

static int32_t node_of(const tier *t, int32_t r) { return r / t->G; }

static int32_t rail(const tier *t, int32_t node, int32_t r) { return sc_rail(node, r, t->G, t->R); }

/* 1 if node pair (N rows <- H columns) is relayed: different nodes, not marked direct. */
static int relayed(const tier *t, int32_t N, int32_t H) {
  return N != H && !(t->direct && t->direct[(int64_t)N * t->nodes + H]);
}

/* 1 if block (p, q) goes through relays (else p and q exchange directly, in stage 0). */
static int routed(const tier *t, int32_t p, int32_t q) { return relayed(t, node_of(t, p), node_of(t, q)); }

/* The rank of node N that receives U(q, N) and forwards it. */
static int32_t rep_of(const tier *t, int32_t N, int32_t q) {
  return t->rep ? t->rep[(int64_t)q * t->nodes + N] : rail(t, N, q);
}

/* The rank of node H that sums V(p, H) and sends it to p. */
static int32_t agg_of(const tier *t, int32_t H, int32_t p) {
  return t->agg ? t->agg[(int64_t)p * t->nodes + H] : rail(t, H, p);
}

/* How many of sel[0..n) are selected (1). */
static int64_t count_selected(const uint8_t *sel, int32_t n) {
  int64_t m = 0;
  for (int32_t x = 0; x < n; x++) m += sel[x];
  return m;
}

/* Appends to out the ids[x] whose sel[x] is 1, in order; returns how many.
 * out needs room for one more than that: every id is stored, and the count
 * advances over the selected ones only (no branch on the selection). */
static int64_t gather_selected(const int64_t *ids, const uint8_t *sel, int32_t n, int64_t *out) {
  int64_t m = 0;
  for (int32_t x = 0; x < n; x++) {
    out[m] = ids[x];
    m += sel[x];
  }
  return m;
}

/* idx[0..m) = the x with sel[x] = 1, increasing; returns m. idx has room
 * for n + 1: every x is stored, the count advances over the selected only,
 * so the loops that follow run over the selected without a branch on sel. */
static int32_t list_selected(const uint8_t *sel, int32_t n, int32_t *idx) {
  int32_t m = 0;
  for (int32_t x = 0; x < n; x++) {
    idx[m] = x;
    m += sel[x];
  }
  return m;
}

/* How many rows and columns of each block are selected, and the
 * per-(rank, node) unions U and V. */
static shiro_status selections(tier *t) {
  const sc_blocks *B = t->B;
  for (int64_t x = 0; x < (int64_t)t->R * t->R; x++) t->blk[x] = -1;
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    t->blk[(int64_t)k->p * t->R + k->q] = b;
    t->ncsel[b] = count_selected(k->csel, k->nc);
    t->nrsel[b] = count_selected(k->rsel, k->nr);
  }
  int64_t width = 1;  /* the widest part of rows or columns: the range of a U or V */
  for (int32_t r = 0; r < t->R; r++) {
    int64_t wc = t->Pcol->first[r + 1] - t->Pcol->first[r], wr = t->Prow->first[r + 1] - t->Prow->first[r];
    if (wc > width) width = wc;
    if (wr > width) width = wr;
  }
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    uint64_t *bits = calloc((size_t)(width / 64 + 1), sizeof *bits);
    failed = !bits;
#pragma omp for schedule(dynamic, 16)
    for (int64_t x = 0; x < (int64_t)t->R * t->nodes; x++) {
      int32_t r = (int32_t)(x / t->nodes), N = (int32_t)(x % t->nodes);
      if (failed || N == node_of(t, r)) continue;
      int u_on = relayed(t, N, node_of(t, r)), v_on = relayed(t, node_of(t, r), N);  /* U(r, N), V(r, N) exist */
      int64_t nu = 0, nv = 0;
      for (int32_t o = N * t->G; o < (N + 1) * t->G && o < t->R; o++) {
        int64_t bu = u_on ? t->blk[(int64_t)o * t->R + r] : -1, bv = v_on ? t->blk[(int64_t)r * t->R + o] : -1;
        if (bu >= 0) nu += t->ncsel[bu];
        if (bv >= 0) nv += t->nrsel[bv];
      }
      int64_t *u = malloc((size_t)(nu + 1) * sizeof *u), *v = malloc((size_t)(nv + 1) * sizeof *v);  /* + 1: gather_selected */
      if (!u || !v) { free(u); free(v); failed = 1; continue; }
      nu = nv = 0;
      for (int32_t o = N * t->G; o < (N + 1) * t->G && o < t->R; o++) {
        int64_t bu = u_on ? t->blk[(int64_t)o * t->R + r] : -1, bv = v_on ? t->blk[(int64_t)r * t->R + o] : -1;
        if (bu >= 0) nu += gather_selected(B->b[bu].cols, B->b[bu].csel, B->b[bu].nc, u + nu);
        if (bv >= 0) nv += gather_selected(B->b[bv].rows, B->b[bv].rsel, B->b[bv].nr, v + nv);
      }
      int64_t c0 = t->Pcol->first[r], r0 = t->Prow->first[r];
      t->U[x] = u; t->nU[x] = sc_sort_unique_range(u, nu, c0, t->Pcol->first[r + 1] - c0, bits);
      t->V[x] = v; t->nV[x] = sc_sort_unique_range(v, nv, r0, t->Prow->first[r + 1] - r0, bits);
    }
    free(bits);
  }
  return failed ? SHIRO_ERR_NOMEM : SHIRO_OK;
}

/* Calls fn(arg, dst_slot_in_message, src_row_in_R) for every row rep forwards to p, in message order,
 * until fn returns 0. */
static void for_each_forward(const tier *t, int32_t rep, int32_t p, int (*fn)(void *, int64_t, int64_t), void *arg) {
  int32_t me = node_of(t, rep);
  for (int32_t q = 0; q < t->R; q++) {
    int64_t b = t->blk[(int64_t)p * t->R + q];
    if (b < 0 || !routed(t, p, q) || rep_of(t, me, q) != rep) continue;
    const sc_block *k = &t->B->b[b];
    int64_t x = (int64_t)q * t->nodes + me, src = t->off_r[IDX(PROG_MSG_INTER_B, q, rep)], y = 0;
    const int64_t *U = t->U[x];
    for (int32_t j = 0, pos = 0; j < k->nc; j++)
      if (k->csel[j]) {  /* U(q, me) holds every selected column, both increasing */
        y = sc_seek(U, y, k->cols[j]);
        if (!fn(arg, t->secF[b] + pos++, src + y)) return;
      }
  }
}

typedef struct run_state { int64_t first; int started, ok; } run_state;

static int run_step(void *arg, int64_t slot, int64_t src) {
  run_state *st = arg;
  if (!st->started) { st->first = src - slot; st->started = 1; }
  st->ok &= st->first >= 0 && src == st->first + slot;
  return st->ok;  /* one row out of line settles it */
}

/* The R row the FWD_B message rep → p starts at if it is one contiguous run there, else -1. */
static int64_t forward_run(const tier *t, int32_t rep, int32_t p) {
  if (rep == p || node_of(t, rep) != node_of(t, p) || t->cnt[IDX(PROG_MSG_FWD_B, rep, p)] == 0) return -1;
  run_state st = {0, 0, 1};
  for_each_forward(t, rep, p, run_step, &st);
  return st.ok ? st.first : -1;
}

/* Message sizes, sections and buffer offsets of every rank. */
static void layout(tier *t) {
  const sc_blocks *B = t->B;
  for (int64_t b = 0; b < B->n; b++) {  /* blocks in (p, q) order: sections ordered by p (AGG_PART) and q (FWD_B) */
    const sc_block *k = &B->b[b];
    int32_t p = k->p, q = k->q;
    if (!routed(t, p, q)) {
      t->cnt[IDX(PROG_MSG_DIRECT, q, p)] = t->ncsel[b] + t->nrsel[b];
      continue;
    }
    int32_t agg = agg_of(t, node_of(t, q), p), rep = rep_of(t, node_of(t, p), q);
    if (agg != q) { t->secA[b] = t->cnt[IDX(PROG_MSG_AGG_PART, q, agg)]; t->cnt[IDX(PROG_MSG_AGG_PART, q, agg)] += t->nrsel[b]; }
    if (rep != p) { t->secF[b] = t->cnt[IDX(PROG_MSG_FWD_B, rep, p)]; t->cnt[IDX(PROG_MSG_FWD_B, rep, p)] += t->ncsel[b]; }
  }
  for (int32_t r = 0; r < t->R; r++)
    for (int32_t N = 0; N < t->nodes; N++) {
      if (N == node_of(t, r)) continue;
      int64_t x = (int64_t)r * t->nodes + N;
      if (t->nU[x]) t->cnt[IDX(PROG_MSG_INTER_B, r, rep_of(t, N, r))] = t->nU[x];  /* r sends U(r, N) */
      if (t->nV[x]) t->cnt[IDX(PROG_MSG_AGG_C, agg_of(t, N, r), r)] = t->nV[x];    /* r receives V(r, N) */
    }
  for (int32_t r = 0; r < t->R; r++) {  /* receive buffers first: forwarding reads them */
    int64_t q = 0;
    for (int stage = 0; stage < 2; stage++)
      for (int k = 0; k < K; k++)
        for (int32_t o = 0; o < t->R && kind_stage[k] == stage; o++) {
          t->off_r[IDX(k, o, r)] = q;
          q += t->cnt[IDX(k, o, r)];
        }
    t->r_rows[r] = q;
  }
  for (int64_t x = 0; x < (int64_t)t->R * t->R; x++) t->fwd_from_r[x] = forward_run(t, (int32_t)(x / t->R), (int32_t)(x % t->R));
  for (int32_t r = 0; r < t->R; r++) {
    int64_t s = 0;
    for (int stage = 0; stage < 2; stage++)
      for (int k = 0; k < K; k++)
        for (int32_t o = 0; o < t->R && kind_stage[k] == stage; o++) {
          t->off_s[IDX(k, r, o)] = s;
          if (k != PROG_MSG_FWD_B || t->fwd_from_r[(int64_t)r * t->R + o] < 0) s += t->cnt[IDX(k, r, o)];
        }
    t->s_rows[r] = s;
  }
}

/* Stage-0 sends: B rows gathered, partial rows computed (and own sums started). */
static void emit_sends(const tier *t, int32_t r, prog_builder *pb, int32_t *idx) {
  const sc_blocks *B = t->B;
  int64_t b_first = t->Pcol->first[r];
  int32_t me = node_of(t, r);
  pb_mul_begin(pb, PROG_TAG_GATHER_B, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 0, 0);
  int32_t p_lo = t->direct ? 0 : me * t->G, p_hi = t->direct ? t->R : (me + 1) * t->G;  /* who r may send direct */
  for (int32_t p = p_lo; p < p_hi && p < t->R; p++) {
    int64_t b = t->blk[(int64_t)p * t->R + r];
    if (p == r || b < 0 || routed(t, p, r)) continue;
    int64_t base = t->off_s[IDX(PROG_MSG_DIRECT, r, p)];
    for (int32_t y = 0, n = list_selected(B->b[b].csel, B->b[b].nc, idx); y < n; y++) {
      pb_row(pb, (int32_t)(base + y));
      pb_entry(pb, (int32_t)(B->b[b].cols[idx[y]] - b_first), 1.0);
    }
  }
  for (int32_t N = 0; N < t->nodes; N++) {
    int64_t x = (int64_t)r * t->nodes + N;
    if (N == me || !t->nU[x]) continue;
    int64_t base = t->off_s[IDX(PROG_MSG_INTER_B, r, rep_of(t, N, r))];
    for (int64_t y = 0; y < t->nU[x]; y++) { pb_row(pb, (int32_t)(base + y)); pb_entry(pb, (int32_t)(t->U[x][y] - b_first), 1.0); }
  }
  pb_mul_end(pb);
  pb_mul_begin(pb, PROG_TAG_PARTIAL_C, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 1, 0);
  for (int32_t p = 0; p < t->R; p++) {
    int64_t b = t->blk[(int64_t)p * t->R + r];
    if (p == r) continue;
    int inter = routed(t, p, r);
    int32_t agg = inter ? agg_of(t, me, p) : -1;
    if (inter && agg == r) {  /* r sums V(p, me): every slot, own partial or zero */
      int64_t x = (int64_t)p * t->nodes + me, base = t->off_s[IDX(PROG_MSG_AGG_C, r, p)];
      const sc_block *k = b >= 0 ? &B->b[b] : NULL;
      int32_t i = 0;
      for (int64_t y = 0; y < t->nV[x]; y++) {
        pb_row(pb, (int32_t)(base + y));
        while (k && i < k->nr && k->rows[i] < t->V[x][y]) i++;
        if (!k || i >= k->nr || k->rows[i] != t->V[x][y] || !k->rsel[i]) continue;
        prog_emit_partial_row(pb, t->A, k, i, b_first);
      }
      continue;
    }
    if (b < 0) continue;
    const sc_block *k = &B->b[b];
    int64_t base = inter ? t->off_s[IDX(PROG_MSG_AGG_PART, r, agg)] + t->secA[b]
                         : t->off_s[IDX(PROG_MSG_DIRECT, r, p)] + t->ncsel[b];
    for (int32_t y = 0, n = list_selected(k->rsel, k->nr, idx); y < n; y++) {
      pb_row(pb, (int32_t)(base + y));
      prog_emit_partial_row(pb, t->A, k, idx[y], b_first);
    }
  }
  pb_mul_end(pb);
}

typedef struct forward_gather { prog_builder *pb; int64_t base; } forward_gather;

static int gather_step(void *arg, int64_t slot, int64_t src) {
  forward_gather *fg = arg;
  pb_row(fg->pb, (int32_t)(fg->base + slot));
  pb_entry(fg->pb, (int32_t)src, 1.0);
  return 1;
}

/* Between the stages: rows to forward gathered from R, partials summed from R. */
static shiro_status emit_relays(const tier *t, int32_t r, prog_builder *pb, collector *c, int32_t *idx) {
  const sc_blocks *B = t->B;
  int32_t me = node_of(t, r);
  pb_mul_begin(pb, PROG_TAG_FORWARD_B, 1, PROG_BUF_S, 0, PROG_BUF_R, 0, 1, 0, 0);
  for (int32_t p = me * t->G; p < (me + 1) * t->G && p < t->R; p++) {
    if (p == r || t->fwd_from_r[(int64_t)r * t->R + p] >= 0) continue;  /* sent straight from R */
    forward_gather fg = {pb, t->off_s[IDX(PROG_MSG_FWD_B, r, p)]};
    for_each_forward(t, r, p, gather_step, &fg);
  }
  pb_mul_end(pb);
  coll_begin(c, t->s_rows[r]);
  for (int32_t p = 0; p < t->R; p++) {
    if (!relayed(t, node_of(t, p), me) || agg_of(t, me, p) != r) continue;
    int64_t x = (int64_t)p * t->nodes + me, dst = t->off_s[IDX(PROG_MSG_AGG_C, r, p)];
    for (int32_t q = me * t->G; q < (me + 1) * t->G && q < t->R; q++) {  /* sources in rank order */
      int64_t b = t->blk[(int64_t)p * t->R + q];
      if (q == r || b < 0) continue;
      int64_t src = t->off_r[IDX(PROG_MSG_AGG_PART, q, r)] + t->secA[b], y = 0;
      const int64_t *V = t->V[x];
      for (int32_t z = 0, n = list_selected(B->b[b].rsel, B->b[b].nr, idx); z < n; z++) {
        y = sc_seek(V, y, B->b[b].rows[idx[z]]);  /* V(p, me) holds every selected row, both increasing */
        coll_add(c, dst + y, (int32_t)(src + z));
      }
    }
  }
  pb_mul_begin(pb, PROG_TAG_AGGREGATE_C, 1, PROG_BUF_S, 0, PROG_BUF_R, 0, 1, 0, 1);
  shiro_status st = coll_emit(c, pb, 0);
  pb_mul_end(pb);
  return st;
}

/* Fills M for rank r: where each received B row lands, once per selected
 * column (not per edge), U(q, me) walked along the block's increasing
 * columns. */
static shiro_status recv_map_build(const tier *t, int32_t r, recv_map *M) {
  const sc_blocks *B = t->B;
  int64_t total = 0;
  int32_t me = node_of(t, r);
  memset(M, 0, sizeof *M);
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1]; b++) total += B->b[b].nc;
  M->pool = malloc((size_t)(total ? total : 1) * sizeof *M->pool);
  M->col = calloc((size_t)t->R, sizeof *M->col);
  M->stage = calloc((size_t)t->R, sizeof *M->stage);
  M->edge = calloc((size_t)t->R, sizeof *M->edge);
  if (!M->pool || !M->col || !M->stage || !M->edge) return SHIRO_ERR_NOMEM;
  total = 0;
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1]; b++) {
    const sc_block *k = &B->b[b];
    int32_t q = k->q, *col = M->pool + total;
    int inter = routed(t, r, q);
    int32_t rep = inter ? rep_of(t, me, q) : r;
    int64_t x = (int64_t)q * t->nodes + me, y = 0;
    total += k->nc;
    M->col[q] = col;
    M->stage[q] = (int8_t)(inter && rep != r);
    M->any[M->stage[q]] |= t->ncsel[b] > 0;
    for (int32_t j = 0, pos = -1; j < k->nc; j++) {
      if (!k->csel[j]) { col[j] = -1; continue; }
      pos++;
      if (!inter) {
        col[j] = (int32_t)(t->off_r[IDX(PROG_MSG_DIRECT, q, r)] + pos);
      } else if (rep == r) {  /* U(q, me) holds every selected column, both increasing */
        y = sc_seek(t->U[x], y, k->cols[j]);
        col[j] = (int32_t)(t->off_r[IDX(PROG_MSG_INTER_B, q, r)] + y);
      } else {
        col[j] = (int32_t)(t->off_r[IDX(PROG_MSG_FWD_B, rep, r)] + t->secF[b] + pos);
      }
    }
  }
  return SHIRO_OK;
}

static void recv_map_free(recv_map *M) {
  free(M->pool); free(M->col); free(M->stage); free(M->edge);
}

/* Makes room in ls for rank r's REMOTE_B entries of stage 1: at most one per
 * nonzero of its rows. 0 when out of memory. */
static int later_reserve(rank_scratch *ls, int64_t rows, int64_t nnz) {
  if (rows > ls->rows_cap) {
    int32_t *n = realloc(ls->later_n, (size_t)rows * sizeof *n);
    if (!n) return 0;
    ls->later_n = n;
    ls->rows_cap = rows;
  }
  if (nnz > ls->cap) {
    int32_t *c = realloc(ls->later_col, (size_t)nnz * sizeof *c);
    if (c) ls->later_col = c;
    double *v = c ? realloc(ls->later_val, (size_t)nnz * sizeof *v) : NULL;
    if (v) ls->later_val = v;
    int64_t *o = v ? realloc(ls->later_src, (size_t)nnz * sizeof *o) : NULL;
    if (!o) return 0;
    ls->later_src = o;
    ls->cap = nnz;
  }
  return 1;
}

/* C += K_remote · R for the B rows received, both stages from one walk of
 * r's rows of A, in order, every row listed. A row's nonzeros with owner q
 * are the edges of block (r, q)'s row, consecutive and in edge order, and
 * sources come in column order, which is rank order: so each row's entries
 * come sources in increasing order, then edges — the order the plan fixes —
 * and each block is read front to back through its cursor. Stage 0's
 * entries go into its REMOTE_B op now; stage 1's are held in ls, row by
 * row, for emit_remote_b_later (its op comes after WAIT 1). */
static shiro_status emit_remote_b(const tier *t, int32_t r, recv_map *M, prog_builder *pb, rank_scratch *ls) {
  const sc_csr *A = t->A;
  int64_t c_first = t->Prow->first[r], c_rows = t->Prow->first[r + 1] - c_first;
  const int64_t *blk = t->blk + (int64_t)r * t->R;
  int now = M->any[0], later = M->any[1];
  if (later && !later_reserve(ls, c_rows, A->Ap[c_first + c_rows] - A->Ap[c_first])) return SHIRO_ERR_NOMEM;
  for (int32_t q = 0; q < t->R; q++) M->edge[q] = 0;
  if (now) pb_mul_begin(pb, PROG_TAG_REMOTE_B, 0, PROG_BUF_C, 0, PROG_BUF_R, 0, 0, 1, 1);
  int64_t held = 0;
  for (int64_t li = 0; li < c_rows; li++) {
    if (now) pb_row(pb, (int32_t)li);
    int64_t row_held = held;
    for (int64_t e = A->Ap[c_first + li], end = A->Ap[c_first + li + 1]; e < end;) {  /* one run per source q */
      int32_t q = part_owner_at(&t->own, A->Aj[e]);
      int64_t lim = t->Pcol->first[q + 1], e0 = e;
      while (e < end && A->Aj[e] < lim) e++;
      if (q == r) continue;
      const int32_t *gj = t->B->b[blk[q]].Gj + M->edge[q], *map = M->col[q];
      const double *x = A->Ax + e0;
      M->edge[q] += e - e0;
      if (M->stage[q] == 0) {
        if (now) prog_emit_run(pb, gj, map, 0, A, e0, e - e0);
        continue;
      }
      if (later)
        held += prog_run_entries(gj, map, 0, x, e0, e - e0, ls->later_col + held, ls->later_val + held, ls->later_src + held);
    }
    if (later) ls->later_n[li] = (int32_t)(held - row_held);
  }
  if (now) pb_mul_end(pb);
  return SHIRO_OK;
}

/* REMOTE_B of stage 1, from the entries emit_remote_b held. */
static void emit_remote_b_later(const tier *t, int32_t r, const rank_scratch *ls, prog_builder *pb) {
  int64_t c_rows = t->Prow->first[r + 1] - t->Prow->first[r], at = 0;
  pb_mul_begin(pb, PROG_TAG_REMOTE_B, 1, PROG_BUF_C, 0, PROG_BUF_R, 0, 0, 1, 1);
  for (int64_t li = 0; li < c_rows; li++) {
    int64_t n = ls->later_n[li];
    pb_row(pb, (int32_t)li);
    if (pb_has_room(pb, n)) {
      prog_rank *pr = pb->pr;
      memcpy(pr->col + pr->ncol, ls->later_col + at, (size_t)n * sizeof *pr->col);
      memcpy(pr->val + pr->ncol, ls->later_val + at, (size_t)n * sizeof *pr->val);
      memcpy(pr->val_src + pr->ncol, ls->later_src + at, (size_t)n * sizeof *pr->val_src);
      pr->ncol += n;
    } else {
      for (int64_t k = 0; k < n; k++) pb_entry_src(pb, ls->later_col[at + k], ls->later_val[at + k], ls->later_src[at + k]);
    }
    at += n;
  }
  pb_mul_end(pb);
}

/* C += contributions delivered by stage `stage`: B rows (REMOTE_B) and partial rows (ADD_C). */
static shiro_status emit_receives(const tier *t, int32_t r, int stage, recv_map *M, prog_builder *pb,
                                  rank_scratch *ls) {
  const sc_blocks *B = t->B;
  collector *cc = &ls->c;
  int64_t c_first = t->Prow->first[r], c_rows = t->Prow->first[r + 1] - c_first;
  int32_t me = node_of(t, r);
  if (stage == 0 && (M->any[0] || M->any[1])) {
    shiro_status st = emit_remote_b(t, r, M, pb, ls);
    if (st != SHIRO_OK) return st;
  }
  if (stage == 1 && M->any[1]) emit_remote_b_later(t, r, ls, pb);
  coll_begin(cc, c_rows);
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1] && stage == 0; b++) {  /* sources in rank order */
    const sc_block *k = &B->b[b];
    int32_t q = k->q;
    if (routed(t, r, q)) continue;
    int64_t src = t->off_r[IDX(PROG_MSG_DIRECT, q, r)] + t->ncsel[b];
    for (int32_t i = 0; i < k->nr; i++)  /* partial rows straight from a rank of this node */
      if (k->rsel[i]) coll_add(cc, k->rows[i] - c_first, (int32_t)src++);
  }
  for (int32_t H = 0; H < t->nodes && stage == 1; H++) {  /* aggregated rows, node order */
    if (!relayed(t, me, H)) continue;
    int64_t x = (int64_t)r * t->nodes + H, src = t->off_r[IDX(PROG_MSG_AGG_C, agg_of(t, H, r), r)];
    for (int64_t y = 0; y < t->nV[x]; y++) coll_add(cc, t->V[x][y] - c_first, (int32_t)(src + y));
  }
  shiro_status st = SHIRO_OK;
  if (cc->n) {
    pb_mul_begin(pb, PROG_TAG_ADD_C, stage, PROG_BUF_C, 0, PROG_BUF_R, 0, 1, 0, 1);
    st = coll_emit(cc, pb, 0);
    pb_mul_end(pb);
  } else if (cc->failed) {
    st = SHIRO_ERR_NOMEM;
  }
  return st;
}

static void emit_exchange(const tier *t, int32_t r, prog_builder *pb) {
  for (int k = 0; k < K; k++)
    for (int dir = 0; dir < 2; dir++)
      for (int32_t o = 0; o < t->R; o++) {
        int64_t n = dir == 0 ? t->cnt[IDX(k, r, o)] : t->cnt[IDX(k, o, r)];
        if (n == 0) continue;
        int64_t off = dir == 0 ? t->off_s[IDX(k, r, o)] : t->off_r[IDX(k, o, r)];
        int64_t buf = dir == 0 ? PROG_BUF_S : PROG_BUF_R;
        if (k == PROG_MSG_FWD_B && dir == 0 && t->fwd_from_r[(int64_t)r * t->R + o] >= 0) {
          off = t->fwd_from_r[(int64_t)r * t->R + o];  /* forwarded without a copy */
          buf = PROG_BUF_R;
        }
        int64_t brows = n;
        if (k == PROG_MSG_DIRECT) brows = t->ncsel[dir == 0 ? t->blk[(int64_t)o * t->R + r] : t->blk[(int64_t)r * t->R + o]];
        if (k == PROG_MSG_AGG_PART || k == PROG_MSG_AGG_C) brows = 0;
        pb_xchg(pb, kind_stage[k], o, dir, buf, off, n,
                node_of(t, o) != node_of(t, r), brows, k);
      }
}

static shiro_status build_rank(const tier *t, int32_t r, prog_rank *pr, rank_scratch *ls) {
  prog_emit_rank_init(pr, r, t->Prow, t->Pcol);
  pr->s_rows = t->s_rows[r];
  pr->r_rows = t->r_rows[r];
  prog_builder pb;
  pb_init(&pb, pr);
  /* every entry: a local nonzero, a received B row's or partial row's edge
   * (exact), or one per buffer row (gather, forward, add: a bound, so the
   * pages are left to be touched as filled) */
  int64_t ne = t->A->Ap[pr->c_first + pr->c_rows] - t->A->Ap[pr->c_first] + t->nent[r] + t->nent[t->R + r];
  for (int64_t b = t->B->first_p[r]; b < t->B->first_p[r + 1]; b++) ne -= t->B->b[b].ne;
  pb_reserve(&pb, 2 * pr->c_rows + pr->s_rows + pr->r_rows + 16, ne + pr->s_rows + pr->r_rows,
             pr->s_rows + pr->r_rows, 0);
  emit_sends(t, r, &pb, ls->idx);
  pb_sync(&pb, PROG_OP_START, 0);
  prog_emit_local(t->A, t->Prow, t->Pcol, r, &pb);
  pb_sync(&pb, PROG_OP_WAIT, 0);
  recv_map M = {0};
  shiro_status st = emit_relays(t, r, &pb, &ls->c, ls->idx);
  if (st == SHIRO_OK) st = recv_map_build(t, r, &M);
  pb_sync(&pb, PROG_OP_START, 1);
  if (st == SHIRO_OK) st = emit_receives(t, r, 0, &M, &pb, ls);
  pb_sync(&pb, PROG_OP_WAIT, 1);
  if (st == SHIRO_OK) st = emit_receives(t, r, 1, &M, &pb, ls);
  emit_exchange(t, r, &pb);
  recv_map_free(&M);
  return st != SHIRO_OK ? st : pb_status(&pb);
}

static void tier_free(tier *t) {
  if (t->U) for (int64_t x = 0; x < (int64_t)t->R * t->nodes; x++) { free(t->U[x]); free(t->V[x]); }
  free(t->blk); free(t->ncsel); free(t->nrsel); free(t->U); free(t->nU); free(t->V);
  free(t->nV); free(t->cnt); free(t->off_s); free(t->off_r); free(t->secA); free(t->secF); free(t->s_rows);
  free(t->r_rows); free(t->fwd_from_r);
  part_owner_index_free(&t->own);
  free(t->nent);
}

shiro_status plan_build_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                 const sc_blocks *B, int32_t gpn, plan_deliver *dv, shiro_error *err) {
  int32_t R = Prow->parts, G = gpn < R ? gpn : R;
  tier tt = {.A = A, .Prow = Prow, .Pcol = Pcol, .B = B, .R = R, .G = G, .nodes = (R + G - 1) / G};
  tier *t = &tt;
  shiro_status st = SHIRO_OK;
  const sc_route *rt = B->route;
  if (rt && rt->direct && rt->nodes == t->nodes && rt->gpn == G) {  /* hybrid's routing */
    t->direct = rt->direct;
    t->rep = rt->rep;
    t->agg = rt->agg;
  }
  size_t nb = (size_t)(B->n ? B->n : 1), rn = (size_t)R * (size_t)t->nodes, kk = (size_t)K * R * R;
  t->blk = malloc((size_t)R * R * sizeof *t->blk);
  t->ncsel = calloc(nb, sizeof *t->ncsel); t->nrsel = calloc(nb, sizeof *t->nrsel);
  t->secA = calloc(nb, sizeof *t->secA); t->secF = calloc(nb, sizeof *t->secF);
  t->U = calloc(rn, sizeof *t->U); t->nU = calloc(rn, sizeof *t->nU);
  t->V = calloc(rn, sizeof *t->V); t->nV = calloc(rn, sizeof *t->nV);
  t->cnt = calloc(kk, sizeof *t->cnt); t->off_s = calloc(kk, sizeof *t->off_s); t->off_r = calloc(kk, sizeof *t->off_r);
  t->s_rows = calloc((size_t)R, sizeof *t->s_rows); t->r_rows = calloc((size_t)R, sizeof *t->r_rows);
  t->fwd_from_r = malloc((size_t)R * R * sizeof *t->fwd_from_r);
  t->nent = calloc((size_t)R * 2, sizeof *t->nent);
  if (!t->blk || !t->cnt || !t->off_s || !t->off_r || !t->fwd_from_r || !t->U || !t->nU || !t->V || !t->nV) {
    tier_free(t);  /* what R alone costs: say how much */
    return plan_pair_table_fail(R, gpn, STRAT_HIER, NULL, err);
  }
  if (!t->blk || !t->ncsel || !t->nrsel || !t->secA || !t->secF || !t->U || !t->nU || !t->V ||
      !t->nV || !t->cnt || !t->off_s || !t->off_r || !t->s_rows || !t->r_rows || !t->fwd_from_r || !t->nent) {
    st = SHIRO_ERR_NOMEM;
    goto done;
  }
  SHIRO_CHECK_GOTO(part_owner_index(Pcol, &t->own, NULL), st);
  SHIRO_CHECK_GOTO(selections(t), st);
  for (int64_t b = 0; b < B->n; b++) {
    if (B->b[b].nr > t->widest) t->widest = B->b[b].nr;
    if (B->b[b].nc > t->widest) t->widest = B->b[b].nc;
  }
  prog_emit_block_entries(B, t->nent);
  layout(t);
  for (int32_t r = 0; r < R; r++)
    if (t->s_rows[r] > INT32_MAX || t->r_rows[r] > INT32_MAX) {
      st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "plan: rank %d exchanges more than 2^31-1 rows", r);
      goto done;
    }
#pragma omp parallel
  {
    rank_scratch ls = {0};
    coll_init(&ls.c);
    ls.idx = malloc(((size_t)t->widest + 1) * sizeof *ls.idx);
#pragma omp for ordered schedule(dynamic, 1)
    for (int32_t r = 0; r < R; r++) {
      prog_rank pr = {0};
      shiro_status rst = SHIRO_ERR_NOMEM;
      if (!plan_deliver_stopped(dv)) {
        rst = ls.idx ? build_rank(t, r, &pr, &ls) : SHIRO_ERR_NOMEM;
        if (rst == SHIRO_OK) rst = plan_deliver_finish(dv, &pr);
      }
#pragma omp ordered
      plan_deliver_rank(dv, &pr, rst);
    }
    coll_free(&ls.c);
    free(ls.idx); free(ls.later_n); free(ls.later_col); free(ls.later_val); free(ls.later_src);
  }
done:
  tier_free(t);
  if (st == SHIRO_ERR_NOMEM) return shiro_fail(err, st, "plan: out of memory");
  return st;
}
