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

/* One message of the plan: kind k from src to dst (only those some block or
 * union makes exist; a pair without one moves nothing). */
typedef struct tmsg {
  int32_t src, dst, k;
  int64_t cnt; /* rows */
  int64_t off_s, off_r; /* its first row in the sender's S / the receiver's R */
  int64_t fwd; /* FWD_B: the R row it is sent from when its rows are one contiguous run of what
                           src received (no copy), else -1 */
} tmsg;

/* A union U(q, N) (sorted global B rows q sends to node N) or V(p, H)
 * (sorted global C rows p receives aggregated from node H), for the nodes
 * some block links the rank to. */
typedef struct tunion {
  int32_t node; /* N or H */
  int32_t rank; /* q or p */
  int64_t n; /* ids */
  int64_t *ids; /* [n + 1] */
  int64_t lo, hi; /* its blocks: U: qblk[lo .. hi), V: B->b[lo .. hi) */
} tunion;

typedef struct tier {
  const sc_csr *A;
  const sc_partition *Prow, *Pcol;
  const sc_blocks *B;
  int32_t R, G, nodes;
  int32_t widest; /* the most rows or columns of any block: a rank's scratch list (list_selected) */
  int64_t *qfirst, *qblk; /* [R+1], [n blocks]: the blocks of source q, p increasing, are
                                qblk[qfirst[q] .. qfirst[q+1]) */
  int64_t *ncsel, *nrsel; /* per block: selected columns / rows (a selected one's slot in a message:
                                how many selected come before it, counted as the block is walked) */
  tunion *U, *V; /* [nU], [nV]: rank r's unions are U[ufirst[r] .. ufirst[r+1]), node increasing */
  int64_t *ufirst, *vfirst; /* [R+1] each */
  int64_t *vnfirst, *vnidx; /* [nodes+1], [nV]: the unions V(p, H) of node H, p increasing, are
                                V[vnidx[vnfirst[H] .. vnfirst[H+1])]: whom H's aggregators sum for */
  int64_t nU, nV;
  tmsg *msg; /* [nmsg] the messages (cap: 3 per block + 1 per union) */
  int64_t nmsg;
  uint64_t *hkey; /* [hcap] open-addressing index (k, src, dst) -> msg: key + 1, 0 empty */
  int64_t *hval, hcap;
  int64_t *sfirst, *sidx; /* [R+1], [nmsg]: rank r's sends, (kind, dst) increasing: sidx[sfirst[r] ..) */
  int64_t *rfirst, *ridx; /* [R+1], [nmsg]: its receives, (kind, src) increasing */
  int64_t *secA, *secF; /* per block: its section in the AGG_PART / FWD_B message */
  int64_t *s_rows, *r_rows; /* [R] */
  sc_owner_index own; /* owners of B rows (Pcol) */
  int64_t *nent; /* [2R] each rank's partial-row / REMOTE_B entries (prog_emit_block_entries) */
  const sc_route *route; /* hybrid: which node pairs go direct, the relays (strategy.h); NULL: all relayed, rail-aligned */
} tier;

/* Rank r's view of the B rows it receives, for REMOTE_B: per source q, the
 * R row each column of block (r, q) arrives in (-1: not sent) and the stage
 * that delivers it. */
typedef struct recv_map {
  int32_t *pool; /* [Σ nc of r's blocks] storage of col */
  int32_t **col; /* [R] per source q: R row of each block column (set for r's blocks only) */
  int8_t *stage; /* [R] per source q: 0 or 1 (r's blocks only) */
  int64_t *edge; /* [R] per source q: the block's next edge (emit_remote_b's cursor) */
  int64_t *blk; /* [R] per source q: the block (r, q) (r's blocks only) */
  int any[2]; /* per stage: some B row arrives (REMOTE_B is emitted) */
} recv_map;

/* One thread's scratch, reused for every rank it builds. */
typedef struct rank_scratch {
  collector c; /* ADD_C and AGGREGATE_C entries by destination row */
  int32_t *idx; /* [widest + 1] list_selected's output */
  int32_t *later_n; /* [rows_cap] per C row: its REMOTE_B entries of stage 1, held by the walk of stage 0 */
  int32_t *later_col; /* [cap] their sources (R rows), row after row */
  double *later_val; /* [cap] their values */
  int64_t *later_src; /* [cap] their positions in A (val_src) */
  int64_t rows_cap, cap;
  void *per_q; /* [R] x (col, edge, blk, stage) of recv_map, one allocation, reused */
} rank_scratch;

static uint64_t msg_key(const tier *t, int k, int32_t src, int32_t dst) {
  return ((uint64_t)k * (uint64_t)t->R + (uint64_t)src) * (uint64_t)t->R + (uint64_t)dst;
}

static int64_t msg_slot(const tier *t, uint64_t key) {
  uint64_t h = key + 0x9E3779B97F4A7C15ull; /* splitmix64's finalizer */
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return (int64_t)((h ^ (h >> 31)) & (uint64_t)(t->hcap - 1));
}

/* The message of kind k from src to dst, NULL if none. */
static const tmsg *msg_get(const tier *t, int k, int32_t src, int32_t dst) {
  uint64_t key = msg_key(t, k, src, dst);
  for (int64_t h = msg_slot(t, key);; h = (h + 1) & (t->hcap - 1)) {
    if (t->hkey[h] == 0) return NULL;
    if (t->hkey[h] == key + 1) return &t->msg[t->hval[h]];
  }
}

/* The message of kind k from src to dst, made (0 rows) if new. Requires room (layout sizes msg, hkey). */
static tmsg *msg_add(tier *t, int k, int32_t src, int32_t dst) {
  uint64_t key = msg_key(t, k, src, dst);
  int64_t h = msg_slot(t, key);
  while (t->hkey[h] != 0 && t->hkey[h] != key + 1) h = (h + 1) & (t->hcap - 1);
  if (t->hkey[h] == 0) {
    t->hkey[h] = key + 1;
    t->hval[h] = t->nmsg;
    t->msg[t->nmsg++] = (tmsg){.src = src, .dst = dst, .k = k, .fwd = -1};
  }
  return &t->msg[t->hval[h]];
}

static int64_t msg_cnt(const tier *t, int k, int32_t src, int32_t dst) {
  const tmsg *m = msg_get(t, k, src, dst);
  return m ? m->cnt : 0;
}

/* A message's offsets; 0 for one that does not exist (moves nothing: never read for a row). */
static int64_t msg_off_s(const tier *t, int k, int32_t src, int32_t dst) {
  const tmsg *m = msg_get(t, k, src, dst);
  return m ? m->off_s : 0;
}

static int64_t msg_off_r(const tier *t, int k, int32_t src, int32_t dst) {
  const tmsg *m = msg_get(t, k, src, dst);
  return m ? m->off_r : 0;
}

static int64_t fwd_from_r(const tier *t, int32_t rep, int32_t p) {
  const tmsg *m = msg_get(t, PROG_MSG_FWD_B, rep, p);
  return m ? m->fwd : -1;
}

/* The block (p, q), -1 if none (blocks.h's binary search). */
static int64_t blk_of(const tier *t, int32_t p, int32_t q) { return blocks_find(t->B, p, q); }

/* Rank r's union with node N (U or V by first), NULL if no block links them. */
static const tunion *union_of(const tunion *u, const int64_t *first, int32_t r, int32_t N) {
  int64_t lo = first[r], hi = first[r + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (u[mid].node < N) lo = mid + 1;
    else hi = mid;
  }
  return lo < first[r + 1] && u[lo].node == N ? &u[lo] : NULL;
}

static int32_t node_of(const tier *t, int32_t r) { return r / t->G; }

static int32_t rail(const tier *t, int32_t node, int32_t r) { return sc_rail(node, r, t->G, t->R); }

/* 1 if node pair (N rows <- H columns) is relayed: different nodes, not marked direct. */
static int relayed(const tier *t, int32_t N, int32_t H) {
  return N != H && !(t->route && route_direct(t->route, N, H));
}

/* 1 if block (p, q) goes through relays (else p and q exchange directly, in stage 0). */
static int routed(const tier *t, int32_t p, int32_t q) { return relayed(t, node_of(t, p), node_of(t, q)); }

/* The rank of node N that receives U(q, N) and forwards it. */
static int32_t rep_of(const tier *t, int32_t N, int32_t q) {
  return t->route ? route_rep(t->route, q, N) : rail(t, N, q);
}

/* The rank of node H that sums V(p, H) and sends it to p. */
static int32_t agg_of(const tier *t, int32_t H, int32_t p) {
  return t->route ? route_agg(t->route, p, H) : rail(t, H, p);
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
static int64_t gather_selected(const int32_t *ids, const uint8_t *sel, int32_t n, int64_t *out) {
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

/* Lists rank r's unions with the other nodes its blocks reach through relays
 * (relayed: a pair hybrid sends direct has none): blocks [lo, hi) of a list
 * ordered by the peer (so by its node). Appends to u (when not NULL) and
 * returns how many. */
static int64_t list_unions(const tier *t, int32_t r, int64_t lo, int64_t hi, const int64_t *via, int peer_is_p,
                           tunion *u) {
  int64_t n = 0;
  for (int64_t x = lo; x < hi;) {
    const sc_block *k = &t->B->b[via ? via[x] : x];
    int32_t N = node_of(t, peer_is_p ? k->p : k->q);
    int64_t y = x + 1;
    while (y < hi) {
      const sc_block *k2 = &t->B->b[via ? via[y] : y];
      if (node_of(t, peer_is_p ? k2->p : k2->q) != N) break;
      y++;
    }
    if (peer_is_p ? relayed(t, N, node_of(t, r)) : relayed(t, node_of(t, r), N)) { /* U(r, N) / V(r, N) */
      if (u) u[n] = (tunion){.node = N, .rank = r, .lo = x, .hi = y};
      n++;
    }
    x = y;
  }
  return n;
}

/* A union's ids sized exactly once made unique (the union is often much smaller than
 * the lists it merged: rows that several ranks of the node need); + 1 as gather_selected
 * wants. They live until the rank's programs are built. Left as is if realloc fails. */
static void shrink_ids(int64_t **ids, int64_t n) {
  int64_t *p = realloc(*ids, (size_t)(n + 1) * sizeof **ids);
  if (p) *ids = p;
}

/* How many rows and columns of each block are selected, the blocks by
 * source, and the per-(rank, node) unions U and V of the pairs some block
 * links (the others are empty). */
static shiro_status selections(tier *t) {
  const sc_blocks *B = t->B;
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    t->ncsel[b] = count_selected(k->csel, k->nc);
    t->nrsel[b] = count_selected(k->rsel, k->nr);
    t->qfirst[k->q + 1]++;
  }
  for (int32_t q = 0; q < t->R; q++) t->qfirst[q + 1] += t->qfirst[q];
  for (int64_t b = 0; b < B->n; b++) t->qblk[t->qfirst[B->b[b].q]++] = b; /* b in (p, q) order: p increasing */
  for (int32_t q = t->R; q > 0; q--) t->qfirst[q] = t->qfirst[q - 1];
  t->qfirst[0] = 0;
  for (int32_t r = 0; r < t->R; r++) {
    t->ufirst[r + 1] = t->ufirst[r] + list_unions(t, r, t->qfirst[r], t->qfirst[r + 1], t->qblk, 1, NULL);
    t->vfirst[r + 1] = t->vfirst[r] + list_unions(t, r, B->first_p[r], B->first_p[r + 1], NULL, 0, NULL);
  }
  t->nU = t->ufirst[t->R];
  t->nV = t->vfirst[t->R];
  t->U = calloc((size_t)(t->nU ? t->nU : 1), sizeof *t->U);
  t->V = calloc((size_t)(t->nV ? t->nV : 1), sizeof *t->V);
  if (!t->U || !t->V) return SHIRO_ERR_NOMEM;
  for (int32_t r = 0; r < t->R; r++) {
    list_unions(t, r, t->qfirst[r], t->qfirst[r + 1], t->qblk, 1, t->U + t->ufirst[r]);
    list_unions(t, r, B->first_p[r], B->first_p[r + 1], NULL, 0, t->V + t->vfirst[r]);
  }
  t->vnfirst = calloc((size_t)t->nodes + 1, sizeof *t->vnfirst);
  t->vnidx = malloc((size_t)(t->nV ? t->nV : 1) * sizeof *t->vnidx);
  if (!t->vnfirst || !t->vnidx) return SHIRO_ERR_NOMEM;
  for (int64_t e = 0; e < t->nV; e++) t->vnfirst[t->V[e].node + 1]++;
  for (int32_t N = 0; N < t->nodes; N++) t->vnfirst[N + 1] += t->vnfirst[N];
  for (int64_t e = 0; e < t->nV; e++) t->vnidx[t->vnfirst[t->V[e].node]++] = e; /* e in (p, H) order: p increasing */
  for (int32_t N = t->nodes; N > 0; N--) t->vnfirst[N] = t->vnfirst[N - 1];
  t->vnfirst[0] = 0;
  int64_t width = 1; /* the widest part of rows or columns: the range of a U or V */
  for (int32_t r = 0; r < t->R; r++) {
    int64_t wc = t->Pcol->first[r + 1] - t->Pcol->first[r], wr = t->Prow->first[r + 1] - t->Prow->first[r];
    if (wc > width) width = wc;
    if (wr > width) width = wr;
  }
  int failed = 0;
#pragma omp parallel reduction(| \
                               : failed)
  {
    uint64_t *bits = calloc((size_t)(width / 64 + 1), sizeof *bits);
    failed = !bits;
#pragma omp for schedule(dynamic, 16)
    for (int32_t r = 0; r < t->R; r++) {
      int64_t c0 = t->Pcol->first[r], r0 = t->Prow->first[r];
      for (int64_t e = t->ufirst[r]; e < t->ufirst[r + 1] && !failed; e++) { /* U(r, N): r's columns node N needs */
        tunion *u = &t->U[e];
        int64_t nu = 0;
        for (int64_t x = u->lo; x < u->hi; x++) nu += t->ncsel[t->qblk[x]];
        u->ids = malloc((size_t)(nu + 1) * sizeof *u->ids); /* + 1: gather_selected */
        if (!u->ids) {
          failed = 1;
          break;
        }
        nu = 0;
        for (int64_t x = u->lo; x < u->hi; x++) {
          const sc_block *k = &B->b[t->qblk[x]];
          nu += gather_selected(k->cols, k->csel, k->nc, u->ids + nu);
        }
        u->n = sc_sort_unique_range(u->ids, nu, c0, t->Pcol->first[r + 1] - c0, bits);
        shrink_ids(&u->ids, u->n);
      }
      for (int64_t e = t->vfirst[r]; e < t->vfirst[r + 1] && !failed; e++) { /* V(r, H): r's rows node H sums */
        tunion *v = &t->V[e];
        int64_t nv = 0;
        for (int64_t x = v->lo; x < v->hi; x++) nv += t->nrsel[x];
        v->ids = malloc((size_t)(nv + 1) * sizeof *v->ids);
        if (!v->ids) {
          failed = 1;
          break;
        }
        nv = 0;
        for (int64_t x = v->lo; x < v->hi; x++) nv += gather_selected(B->b[x].rows, B->b[x].rsel, B->b[x].nr, v->ids + nv);
        v->n = sc_sort_unique_range(v->ids, nv, r0, t->Prow->first[r + 1] - r0, bits);
        shrink_ids(&v->ids, v->n);
      }
    }
    free(bits);
  }
  return failed ? SHIRO_ERR_NOMEM : SHIRO_OK;
}

/* Calls fn(arg, dst_slot_in_message, src_row_in_R) for every row rep forwards to p, in message order,
 * until fn returns 0. */
static void for_each_forward(const tier *t, int32_t rep, int32_t p, int (*fn)(void *, int64_t, int64_t), void *arg) {
  int32_t me = node_of(t, rep);
  for (int64_t b = t->B->first_p[p]; b < t->B->first_p[p + 1]; b++) { /* sources q increasing */
    const sc_block *k = &t->B->b[b];
    int32_t q = k->q;
    if (!routed(t, p, q) || rep_of(t, me, q) != rep) continue;
    int64_t src = msg_off_r(t, PROG_MSG_INTER_B, q, rep), y = 0;
    const int64_t *U = union_of(t->U, t->ufirst, q, me)->ids; /* block (p, q) is one of U(q, me)'s */
    for (int32_t j = 0, pos = 0; j < k->nc; j++)
      if (k->csel[j]) { /* U(q, me) holds every selected column, both increasing */
        y = sc_seek(U, y, k->cols[j]);
        if (!fn(arg, t->secF[b] + pos++, src + y)) return;
      }
  }
}

typedef struct run_state {
  int64_t first;
  int started, ok;
} run_state;

static int run_step(void *arg, int64_t slot, int64_t src) {
  run_state *st = arg;
  if (!st->started) {
    st->first = src - slot;
    st->started = 1;
  }
  st->ok &= st->first >= 0 && src == st->first + slot;
  return st->ok; /* one row out of line settles it */
}

/* The R row the FWD_B message rep → p starts at if it is one contiguous run there, else -1. */
static int64_t forward_run(const tier *t, int32_t rep, int32_t p) {
  if (rep == p || node_of(t, rep) != node_of(t, p) || msg_cnt(t, PROG_MSG_FWD_B, rep, p) == 0) return -1;
  run_state st = {0, 0, 1};
  for_each_forward(t, rep, p, run_step, &st);
  return st.ok ? st.first : -1;
}

/* A message's place in one rank's list: by (rank, kind, peer). */
typedef struct msg_order {
  int32_t rank, k, peer;
  int64_t m;
} msg_order;

static int msg_order_cmp(const void *a, const void *b) {
  const msg_order *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return x->peer < y->peer ? -1 : x->peer > y->peer;
}

/* first[R+1] and idx[nmsg]: the messages by sender (send) or receiver, then
 * kind, then peer. Kinds in increasing order are stages in increasing order
 * (kind_stage), so this is the buffers' (stage, kind, peer) order. */
static shiro_status order_messages(tier *t, int send, int64_t *first, int64_t *idx) {
  msg_order *o = malloc((size_t)(t->nmsg ? t->nmsg : 1) * sizeof *o);
  if (!o) return SHIRO_ERR_NOMEM;
  for (int64_t x = 0; x < t->nmsg; x++) {
    const tmsg *m = &t->msg[x];
    o[x] = (msg_order){send ? m->src : m->dst, m->k, send ? m->dst : m->src, x};
  }
  qsort(o, (size_t)t->nmsg, sizeof *o, msg_order_cmp);
  for (int64_t x = 0; x < t->nmsg; x++) {
    idx[x] = o[x].m;
    first[o[x].rank + 1]++;
  }
  for (int32_t r = 0; r < t->R; r++) first[r + 1] += first[r];
  free(o);
  return SHIRO_OK;
}

/* Message sizes, sections and buffer offsets of every rank: O(blocks + unions + R). */
static shiro_status layout(tier *t) {
  const sc_blocks *B = t->B;
  int64_t cap = 3 * B->n + t->nU + t->nV + 1;
  t->msg = malloc((size_t)cap * sizeof *t->msg);
  for (t->hcap = 16; t->hcap < 2 * cap; t->hcap *= 2) {}
  t->hkey = calloc((size_t)t->hcap, sizeof *t->hkey);
  t->hval = malloc((size_t)t->hcap * sizeof *t->hval);
  t->sidx = malloc((size_t)cap * sizeof *t->sidx);
  t->ridx = malloc((size_t)cap * sizeof *t->ridx);
  if (!t->msg || !t->hkey || !t->hval || !t->sidx || !t->ridx) return SHIRO_ERR_NOMEM;
  for (int64_t b = 0; b < B->n; b++) { /* blocks in (p, q) order: sections ordered by p (AGG_PART) and q (FWD_B) */
    const sc_block *k = &B->b[b];
    int32_t p = k->p, q = k->q;
    if (!routed(t, p, q)) {
      msg_add(t, PROG_MSG_DIRECT, q, p)->cnt = t->ncsel[b] + t->nrsel[b];
      continue;
    }
    int32_t agg = agg_of(t, node_of(t, q), p), rep = rep_of(t, node_of(t, p), q);
    if (agg != q) {
      tmsg *m = msg_add(t, PROG_MSG_AGG_PART, q, agg);
      t->secA[b] = m->cnt;
      m->cnt += t->nrsel[b];
    }
    if (rep != p) {
      tmsg *m = msg_add(t, PROG_MSG_FWD_B, rep, p);
      t->secF[b] = m->cnt;
      m->cnt += t->ncsel[b];
    }
  }
  for (int32_t r = 0; r < t->R; r++) {
    for (int64_t e = t->ufirst[r]; e < t->ufirst[r + 1]; e++) /* r sends U(r, N) */
      msg_add(t, PROG_MSG_INTER_B, r, rep_of(t, t->U[e].node, r))->cnt = t->U[e].n;
    for (int64_t e = t->vfirst[r]; e < t->vfirst[r + 1]; e++) /* r receives V(r, N) */
      msg_add(t, PROG_MSG_AGG_C, agg_of(t, t->V[e].node, r), r)->cnt = t->V[e].n;
  }
  shiro_status st = order_messages(t, 1, t->sfirst, t->sidx);
  if (st == SHIRO_OK) st = order_messages(t, 0, t->rfirst, t->ridx);
  if (st != SHIRO_OK) return st;
  for (int32_t r = 0; r < t->R; r++) { /* receive buffers first: forwarding reads them */
    int64_t q = 0;
    for (int64_t x = t->rfirst[r]; x < t->rfirst[r + 1]; x++) {
      tmsg *m = &t->msg[t->ridx[x]];
      m->off_r = q;
      q += m->cnt;
    }
    t->r_rows[r] = q;
  }
  for (int64_t x = 0; x < t->nmsg; x++)
    if (t->msg[x].k == PROG_MSG_FWD_B) t->msg[x].fwd = forward_run(t, t->msg[x].src, t->msg[x].dst);
  for (int32_t r = 0; r < t->R; r++) {
    int64_t s = 0;
    for (int64_t x = t->sfirst[r]; x < t->sfirst[r + 1]; x++) {
      tmsg *m = &t->msg[t->sidx[x]];
      m->off_s = s;
      if (m->k != PROG_MSG_FWD_B || m->fwd < 0) s += m->cnt;
    }
    t->s_rows[r] = s;
  }
  return SHIRO_OK;
}

/* The next of node me's unions V(p, me) from position *x on whose aggregator
 * agg_of(me, p) is r, NULL when none is left; *x moves past it. */
static const tunion *next_aggregated(const tier *t, int32_t me, int32_t r, int64_t *x) {
  for (; *x < t->vnfirst[me + 1]; (*x)++) {
    const tunion *v = &t->V[t->vnidx[*x]];
    if (agg_of(t, me, v->rank) == r) {
      (*x)++;
      return v;
    }
  }
  return NULL;
}

/* Stage-0 sends: B rows gathered, partial rows computed (and own sums started). */
static void emit_sends(const tier *t, int32_t r, prog_builder *pb, int32_t *idx) {
  const sc_blocks *B = t->B;
  int64_t b_first = t->Pcol->first[r];
  int32_t me = node_of(t, r);
  pb_mul_begin(pb, PROG_TAG_GATHER_B, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 0, 0);
  for (int64_t x = t->qfirst[r]; x < t->qfirst[r + 1]; x++) { /* r's blocks, p increasing: the direct ones */
    int64_t b = t->qblk[x];
    int32_t p = B->b[b].p;
    if (p == r || routed(t, p, r)) continue;
    int64_t base = msg_off_s(t, PROG_MSG_DIRECT, r, p);
    for (int32_t y = 0, n = list_selected(B->b[b].csel, B->b[b].nc, idx); y < n; y++) {
      pb_row(pb, (int32_t)(base + y));
      pb_entry(pb, (int32_t)(B->b[b].cols[idx[y]] - b_first), 1.0);
    }
  }
  for (int64_t e = t->ufirst[r]; e < t->ufirst[r + 1]; e++) { /* nodes N != me, increasing */
    const tunion *u = &t->U[e];
    int64_t base = msg_off_s(t, PROG_MSG_INTER_B, r, rep_of(t, u->node, r));
    for (int64_t y = 0; y < u->n; y++) {
      pb_row(pb, (int32_t)(base + y));
      pb_entry(pb, (int32_t)(u->ids[y] - b_first), 1.0);
    }
  }
  pb_mul_end(pb);
  pb_mul_begin(pb, PROG_TAG_PARTIAL_C, 0, PROG_BUF_S, 0, PROG_BUF_B, 0, 1, 1, 0);
  /* the p that put anything here, increasing: those of the blocks (p, r), and those whose V(p, me)
   * r aggregates (a p of neither sends nothing: no block, or no union r sums) */
  int64_t xq = t->qfirst[r], xv = t->vnfirst[me];
  const tunion *vnext = next_aggregated(t, me, r, &xv);
  for (;;) {
    int32_t pb_ = xq < t->qfirst[r + 1] ? B->b[t->qblk[xq]].p : t->R, pv = vnext ? vnext->rank : t->R;
    int32_t p = pb_ < pv ? pb_ : pv;
    if (p >= t->R) break;
    int64_t b = pb_ == p ? t->qblk[xq++] : -1;
    const tunion *v = pv == p ? vnext : NULL;
    if (v) vnext = next_aggregated(t, me, r, &xv);
    int inter = routed(t, p, r);
    int32_t agg = inter ? agg_of(t, me, p) : -1;
    if (inter && agg == r) { /* r sums V(p, me): every slot, own partial or zero */
      int64_t base = msg_off_s(t, PROG_MSG_AGG_C, r, p), nv = v ? v->n : 0;
      const sc_block *k = b >= 0 ? &B->b[b] : NULL;
      int32_t i = 0;
      for (int64_t y = 0; y < nv; y++) {
        pb_row(pb, (int32_t)(base + y));
        while (k && i < k->nr && k->rows[i] < v->ids[y]) i++;
        if (!k || i >= k->nr || k->rows[i] != v->ids[y] || !k->rsel[i]) continue;
        prog_emit_partial_row(pb, t->A, k, i, b_first);
      }
      continue;
    }
    if (b < 0) continue;
    const sc_block *k = &B->b[b];
    int64_t base = inter ? msg_off_s(t, PROG_MSG_AGG_PART, r, agg) + t->secA[b]
                         : msg_off_s(t, PROG_MSG_DIRECT, r, p) + t->ncsel[b];
    for (int32_t y = 0, n = list_selected(k->rsel, k->nr, idx); y < n; y++) {
      pb_row(pb, (int32_t)(base + y));
      prog_emit_partial_row(pb, t->A, k, idx[y], b_first);
    }
  }
  pb_mul_end(pb);
}

typedef struct forward_gather {
  prog_builder *pb;
  int64_t base;
} forward_gather;

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
    if (p == r || fwd_from_r(t, r, p) >= 0) continue; /* sent straight from R */
    forward_gather fg = {pb, msg_off_s(t, PROG_MSG_FWD_B, r, p)};
    for_each_forward(t, r, p, gather_step, &fg);
  }
  pb_mul_end(pb);
  coll_begin(c, t->s_rows[r]);
  int64_t xv = t->vnfirst[me];
  for (const tunion *v; (v = next_aggregated(t, me, r, &xv));) { /* p increasing, agg_of(me, p) = r */
    int32_t p = v->rank;
    int64_t dst = msg_off_s(t, PROG_MSG_AGG_C, r, p);
    for (int32_t q = me * t->G; q < (me + 1) * t->G && q < t->R; q++) { /* sources in rank order */
      int64_t b = q == r ? -1 : blk_of(t, p, q);
      if (b < 0) continue;
      int64_t src = msg_off_r(t, PROG_MSG_AGG_PART, q, r) + t->secA[b], y = 0;
      const int64_t *V = v->ids;
      for (int32_t z = 0, n = list_selected(B->b[b].rsel, B->b[b].nr, idx); z < n; z++) {
        y = sc_seek(V, y, B->b[b].rows[idx[z]]); /* V(p, me) holds every selected row, both increasing */
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
static shiro_status recv_map_build(const tier *t, int32_t r, recv_map *M, rank_scratch *ls) {
  const sc_blocks *B = t->B;
  int64_t total = 0;
  int32_t me = node_of(t, r);
  memset(M, 0, sizeof *M);
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1]; b++) total += B->b[b].nc;
  M->pool = malloc((size_t)(total ? total : 1) * sizeof *M->pool);
  if (!ls->per_q) ls->per_q = malloc((size_t)t->R * (2 * sizeof(int64_t) + sizeof(int32_t *) + 1));
  if (!M->pool || !ls->per_q) return SHIRO_ERR_NOMEM;
  M->col = ls->per_q; /* entries of r's blocks only are set, and only they are read */
  M->edge = (int64_t *)(M->col + t->R);
  M->blk = M->edge + t->R;
  M->stage = (int8_t *)(M->blk + t->R);
  total = 0;
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1]; b++) {
    const sc_block *k = &B->b[b];
    int32_t q = k->q, *col = M->pool + total;
    int inter = routed(t, r, q);
    int32_t rep = inter ? rep_of(t, me, q) : r;
    const tunion *U = inter && rep == r ? union_of(t->U, t->ufirst, q, me) : NULL; /* block (r, q) is one of its */
    int64_t y = 0;
    total += k->nc;
    M->col[q] = col;
    M->blk[q] = b;
    M->edge[q] = 0;
    M->stage[q] = (int8_t)(inter && rep != r);
    M->any[M->stage[q]] |= t->ncsel[b] > 0;
    for (int32_t j = 0, pos = -1; j < k->nc; j++) {
      if (!k->csel[j]) {
        col[j] = -1;
        continue;
      }
      pos++;
      if (!inter) {
        col[j] = (int32_t)(msg_off_r(t, PROG_MSG_DIRECT, q, r) + pos);
      } else if (rep == r) { /* U(q, me) holds every selected column, both increasing */
        y = sc_seek(U->ids, y, k->cols[j]);
        col[j] = (int32_t)(msg_off_r(t, PROG_MSG_INTER_B, q, r) + y);
      } else {
        col[j] = (int32_t)(msg_off_r(t, PROG_MSG_FWD_B, rep, r) + t->secF[b] + pos);
      }
    }
  }
  return SHIRO_OK;
}

static void recv_map_free(recv_map *M) {
  free(M->pool); /* the per-source arrays are the thread's (rank_scratch) */
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
  const int64_t *blk = M->blk;
  int now = M->any[0], later = M->any[1];
  if (later && !later_reserve(ls, c_rows, A->Ap[c_first + c_rows] - A->Ap[c_first])) return SHIRO_ERR_NOMEM;
  if (now) pb_mul_begin(pb, PROG_TAG_REMOTE_B, 0, PROG_BUF_C, 0, PROG_BUF_R, 0, 0, 1, 1);
  int64_t held = 0;
  for (int64_t li = 0; li < c_rows; li++) {
    if (now) pb_row(pb, (int32_t)li);
    int64_t row_held = held;
    for (int64_t e = A->Ap[c_first + li], end = A->Ap[c_first + li + 1]; e < end;) { /* one run per source q */
      int32_t q = part_owner_at(&t->own, A->Aj[e]);
      int64_t lim = t->Pcol->first[q + 1], e0 = e;
      while (e < end && A->Aj[e] < lim) e++;
      if (q == r) continue;
      const int32_t *gj = t->B->b[blk[q]].Gj + M->edge[q], *map = M->col[q];
      M->edge[q] += e - e0;
      if (M->stage[q] == 0) {
        if (now) prog_emit_run(pb, gj, map, 0, A, e0, e - e0);
        continue;
      }
      if (later)
        held += prog_run_entries(gj, map, 0, A, e0, e - e0, ls->later_col + held, ls->later_val + held, ls->later_src + held);
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
  if (stage == 0 && (M->any[0] || M->any[1])) {
    shiro_status st = emit_remote_b(t, r, M, pb, ls);
    if (st != SHIRO_OK) return st;
  }
  if (stage == 1 && M->any[1]) emit_remote_b_later(t, r, ls, pb);
  coll_begin(cc, c_rows);
  for (int64_t b = B->first_p[r]; b < B->first_p[r + 1] && stage == 0; b++) { /* sources in rank order */
    const sc_block *k = &B->b[b];
    int32_t q = k->q;
    if (routed(t, r, q)) continue;
    int64_t src = msg_off_r(t, PROG_MSG_DIRECT, q, r) + t->ncsel[b];
    for (int32_t i = 0; i < k->nr; i++) /* partial rows straight from a rank of this node */
      if (k->rsel[i]) coll_add(cc, k->rows[i] - c_first, (int32_t)src++);
  }
  for (int64_t e = t->vfirst[r]; e < t->vfirst[r + 1] && stage == 1; e++) { /* aggregated rows, node order */
    const tunion *v = &t->V[e];
    int64_t src = msg_off_r(t, PROG_MSG_AGG_C, agg_of(t, v->node, r), r);
    for (int64_t y = 0; y < v->n; y++) coll_add(cc, v->ids[y] - c_first, (int32_t)(src + y));
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

/* One message of r's exchange (dir 0: r sends m), if it moves anything. */
static void emit_message(const tier *t, int32_t r, const tmsg *m, int dir, prog_builder *pb) {
  int64_t n = m->cnt;
  if (n == 0) return;
  int32_t o = dir == 0 ? m->dst : m->src;
  int64_t off = dir == 0 ? m->off_s : m->off_r;
  int64_t buf = dir == 0 ? PROG_BUF_S : PROG_BUF_R;
  if (m->k == PROG_MSG_FWD_B && dir == 0 && m->fwd >= 0) {
    off = m->fwd; /* forwarded without a copy */
    buf = PROG_BUF_R;
  }
  int64_t brows = n;
  if (m->k == PROG_MSG_DIRECT) brows = t->ncsel[dir == 0 ? blk_of(t, o, r) : blk_of(t, r, o)];
  if (m->k == PROG_MSG_AGG_PART || m->k == PROG_MSG_AGG_C) brows = 0;
  pb_xchg(pb, kind_stage[m->k], o, dir, buf, off, n, node_of(t, o) != node_of(t, r), brows, m->k);
}

/* Per kind: r's sends, then its receives, peers increasing. */
static void emit_exchange(const tier *t, int32_t r, prog_builder *pb) {
  int64_t xs = t->sfirst[r], xr = t->rfirst[r];
  for (int k = 0; k < K; k++) {
    for (; xs < t->sfirst[r + 1] && t->msg[t->sidx[xs]].k == k; xs++) emit_message(t, r, &t->msg[t->sidx[xs]], 0, pb);
    for (; xr < t->rfirst[r + 1] && t->msg[t->ridx[xr]].k == k; xr++) emit_message(t, r, &t->msg[t->ridx[xr]], 1, pb);
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
  if (st == SHIRO_OK) st = recv_map_build(t, r, &M, ls);
  pb_sync(&pb, PROG_OP_START, 1);
  if (st == SHIRO_OK) st = emit_receives(t, r, 0, &M, &pb, ls);
  pb_sync(&pb, PROG_OP_WAIT, 1);
  if (st == SHIRO_OK) st = emit_receives(t, r, 1, &M, &pb, ls);
  emit_exchange(t, r, &pb);
  recv_map_free(&M);
  return st != SHIRO_OK ? st : pb_status(&pb);
}

static void tier_free(tier *t) {
  for (int64_t x = 0; t->U && x < t->nU; x++) free(t->U[x].ids);
  for (int64_t x = 0; t->V && x < t->nV; x++) free(t->V[x].ids);
  free(t->U);
  free(t->V);
  free(t->ufirst);
  free(t->vfirst);
  free(t->vnfirst);
  free(t->vnidx);
  free(t->qfirst);
  free(t->qblk);
  free(t->ncsel);
  free(t->nrsel);
  free(t->msg);
  free(t->hkey);
  free(t->hval);
  free(t->sfirst);
  free(t->sidx);
  free(t->rfirst);
  free(t->ridx);
  free(t->secA);
  free(t->secF);
  free(t->s_rows);
  free(t->r_rows);
  part_owner_index_free(&t->own);
  free(t->nent);
}

/* The tier's tables and layout: everything but the programs. A failure is returned with err
 * filled; *t is then to be freed all the same (tier_free). */
static shiro_status tier_setup(tier *t, shiro_error *err) {
  const sc_blocks *B = t->B;
  const int32_t R = t->R;
  shiro_status st = SHIRO_OK;
  const sc_route *rt = B->route;
  if (rt && rt->direct && rt->nodes == t->nodes && rt->gpn == t->G) t->route = rt; /* hybrid's routing */
  size_t nb = (size_t)(B->n ? B->n : 1), r1 = (size_t)R + 1;
  t->qfirst = calloc(r1, sizeof *t->qfirst);
  t->qblk = malloc(nb * sizeof *t->qblk);
  t->ufirst = calloc(r1, sizeof *t->ufirst);
  t->vfirst = calloc(r1, sizeof *t->vfirst);
  t->sfirst = calloc(r1, sizeof *t->sfirst);
  t->rfirst = calloc(r1, sizeof *t->rfirst);
  t->ncsel = calloc(nb, sizeof *t->ncsel);
  t->nrsel = calloc(nb, sizeof *t->nrsel);
  t->secA = calloc(nb, sizeof *t->secA);
  t->secF = calloc(nb, sizeof *t->secF);
  t->s_rows = calloc((size_t)R, sizeof *t->s_rows);
  t->r_rows = calloc((size_t)R, sizeof *t->r_rows);
  t->nent = calloc((size_t)R * 2, sizeof *t->nent);
  if (!t->qfirst || !t->qblk || !t->ufirst || !t->vfirst || !t->sfirst || !t->rfirst || !t->ncsel || !t->nrsel ||
      !t->secA || !t->secF || !t->s_rows || !t->r_rows || !t->nent) {
    st = SHIRO_ERR_NOMEM;
    goto done;
  }
  SHIRO_CHECK_GOTO(part_owner_index(t->Pcol, &t->own, NULL), st);
  SHIRO_CHECK_GOTO(selections(t), st);
  for (int64_t b = 0; b < B->n; b++) {
    if (B->b[b].nr > t->widest) t->widest = B->b[b].nr;
    if (B->b[b].nc > t->widest) t->widest = B->b[b].nc;
  }
  prog_emit_block_entries(B, t->nent);
  SHIRO_CHECK_GOTO(layout(t), st);
  for (int32_t r = 0; r < R; r++)
    if (t->s_rows[r] > INT32_MAX || t->r_rows[r] > INT32_MAX)
      return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "plan: rank %d exchanges more than 2^31-1 rows", r);
done:
  if (st == SHIRO_ERR_NOMEM) return shiro_fail(err, st, "plan: out of memory");
  return st;
}

shiro_status plan_build_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                 const sc_blocks *B, int32_t gpn, plan_deliver *dv, shiro_error *err) {
  int32_t R = Prow->parts, G = gpn < R ? gpn : R;
  tier tt = {.A = A, .Prow = Prow, .Pcol = Pcol, .B = B, .R = R, .G = G, .nodes = (R + G - 1) / G};
  tier *t = &tt;
  shiro_status st = tier_setup(t, err);
  if (st != SHIRO_OK) goto done;
#pragma omp parallel
  {
    rank_scratch ls = {0};
    coll_init(&ls.c);
    ls.idx = malloc(((size_t)t->widest + 1) * sizeof *ls.idx);
#pragma omp for schedule(dynamic, 1) /* increasing order: plan_deliver_rank's queue */
    for (int32_t r = dv->first; r < dv->end; r++) {
      prog_rank pr = {0};
      shiro_status rst = SHIRO_ERR_NOMEM;
      if (!plan_deliver_stopped(dv)) {
        rst = ls.idx ? build_rank(t, r, &pr, &ls) : SHIRO_ERR_NOMEM;
        if (rst == SHIRO_OK) rst = plan_deliver_finish(dv, &pr);
      }
      plan_deliver_rank(dv, r, &pr, rst);
    }
    coll_free(&ls.c);
    free(ls.idx);
    free(ls.later_n);
    free(ls.later_col);
    free(ls.later_val);
    free(ls.later_src);
    free(ls.per_q);
  }
done:
  tier_free(t);
  return st;
}

shiro_status plan_messages_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                    const sc_blocks *B, int32_t gpn, plan_msg_fn fn, void *arg, shiro_error *err) {
  int32_t R = Prow->parts, G = gpn < R ? gpn : R;
  tier tt = {.A = A, .Prow = Prow, .Pcol = Pcol, .B = B, .R = R, .G = G, .nodes = (R + G - 1) / G};
  tier *t = &tt;
  shiro_status st = tier_setup(t, err);
  for (int32_t r = 0; r < R && st == SHIRO_OK; r++) /* emit_exchange's sends: by kind, then peer */
    for (int64_t x = t->sfirst[r]; x < t->sfirst[r + 1]; x++) {
      const tmsg *m = &t->msg[t->sidx[x]];
      if (m->cnt == 0) continue;
      const plan_msg pm = {r, m->dst, kind_stage[m->k], node_of(t, m->dst) != node_of(t, r), m->cnt, m->k};
      fn(arg, &pm);
    }
  tier_free(t);
  return st;
}
