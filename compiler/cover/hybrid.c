/* hybrid.c — the `hybrid` strategy: per ordered node pair (N rows <- H
 * columns) one of three modes: joint's per-block covers sent direct in
 * stage 0, as the flat plans do (ROUTE_DIRECT); group's node-pair cover
 * through relays (ROUTE_RELAYED_GROUP; plan_build_tier.c: U(q, N) to a rep of
 * N that forwards, partials to an agg of H that sums V(p, H)); or joint's
 * covers through the relays, hier's way (ROUTE_RELAYED_JOINT: U and V the
 * unions of joint's selections) — and the relays themselves, whichever lowers
 * an estimate of the call's time.
 *
 * The estimate is the cost model's (compiler/cost/README.md) without its
 * schedule: per stage, per link (each GPU's NVLink port, each NIC, both
 * directions), the longest latency of its messages plus their bytes paid at
 * the link's bandwidth (cost_message_factors: small messages pay more);
 * a stage takes its slowest link, the call the two stages one after the other.
 * Every message of a configuration is known from counts alone: a direct
 * block sends joint's rows; a relayed pair sends |U(q, N)| rows q -> rep,
 * forwards each block's selected columns rep -> p, partials q -> agg and
 * |V(p, H)| rows agg -> p (the intra-node forwards and partials of one
 * (sender, receiver) are one message, summed over pairs, as the plan has it).
 * Links keep their loads and a count of messages per latency class, so a
 * pair's messages are taken out and put back in O(its messages); a tree over
 * the links per stage (the slowest and the sum of each subtree) gives the
 * estimate in O(1) after O(log links) per changed link. Everything is over
 * the node pairs that have blocks (sc_route's pair list), never nodes² or
 * R · nodes.
 *
 * The decision, deterministic:
 *   1. three starts: every pair direct (joint's plan), every pair relayed
 *      with group's cover on rail-aligned relays (group's plan), every pair
 *      relayed with joint's covers on them (hier's plan);
 *   2. from each, sweeps over the pairs in index order: a pair takes the mode
 *      of the three with the lowest estimate if it falls (or stays and the
 *      links' summed time falls);
 *   3. relays by load: for each relayed pair, each q's rep and each p's agg
 *      is moved to the rank of its node that gives the lowest estimate
 *      (the rail-aligned one kept on ties); then one more sweep of 2;
 *   4. of the six candidates (the three starts, the three greedy results) the
 *      one priced fastest, the first of equals: priced on the caller's machine
 *      (sc_route.machine) from the candidate's messages alone, as the built
 *      plan would post them (cost.h's cost_add_flow: the cost model's
 *      prediction of the built plan, without building a program), else by the
 *      caller's price (sc_route.price: the cost model on the built programs);
 *      without either, the lowest estimate. With a price hybrid is never
 *      predicted slower than joint, hier or group: their plans are candidates (an all-direct hybrid
 *      sends joint's messages, an all-relayed one on the rail is group's plan
 *      with group's covers, hier's with joint's).
 * O(sweeps · pairs · G² · log links), and O(pairs · G³ · log links) for the relays.
 *
 * Group's covers in the relayed mode: before step 1, its fewest-hop minimum
 * covers or the ones strategy_select_group_balanced finds among the minimum
 * covers (the freedom of their Dulmage–Mendelsohn structure: which end of
 * each matched pair, which strongly connected part) to lower the busiest NIC
 * of each stage, whichever prices faster all relayed (group_covers). */
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "error.h"
#include "sorted.h"
#include "strategy.h"

enum { CLASSES = 10,
       STAGES = 2,
       NCAND = 2 * ROUTE_MODES };
/* A mixed routing (a greedy candidate) is kept only when priced at least this fraction below the
 * best of the three pure ones (joint's, group's and hier's plans): the cost model's error against
 * the simulator on mixed plans is of that order (tsubame4, R = 32: R-MAT s19's mixed plan priced
 * 1.8% below group's simulated 3% above it; cit-HepTh's and sx-mathoverflow's, priced 4.4% and 4.8%
 * below, simulated 3.3% and 2.7% below). */
#define MIXED_MARGIN 0.03
/* Sweeps of the NIC balancing of group's covers (most of its gain is in the first two). */
enum { BALANCE_ROUNDS = 4 };

/* What a block moves under each choice. */
typedef struct hblock {
  int64_t joint; /* joint's rows (columns + rows selected), direct */
  int64_t gcols; /* group's selected columns (forwarded rep -> p unless rep = p) */
  int64_t grows; /* group's selected rows (partials q -> agg unless agg = q) */
  int64_t jcols, jrows; /* joint's selected columns and rows (relayed joint: hier's way) */
} hblock;

/* The links' state. */
typedef struct hmodel {
  const sc_blocks *B;
  sc_links L;
  int32_t R, G, nodes;
  int64_t nlinks, P; /* links; leaves of each stage's tree (a power of two >= nlinks) */
  int64_t np; /* node pairs with blocks (rt->pair) */
  int64_t *pfirst, *pblk; /* [np + 1], [blocks]: pair y's blocks, (p, q) increasing, are pblk[pfirst[y] .. pfirst[y + 1]) */
  double *load; /* [STAGES * nlinks] bytes paid */
  double *mx, *sm; /* [STAGES * 2P] per stage the tree: node i's slowest link and summed time */
  int32_t *cls; /* [STAGES * nlinks * CLASSES] messages per latency class */
  uint8_t *dirty; /* [STAGES * nlinks] 1: the link changed since its tree was last updated */
  int64_t *dlist, ndirty; /* [STAGES * nlinks] the changed links (stage * nlinks + link), ndirty of them */
  double lat_of[2][CLASSES]; /* [inter][class] the latency of a message of that class */
  hblock *hb; /* [B->n] */
  int64_t *nUj, *nVj; /* the same under joint's selection */
  int64_t *nU, *nV; /* [np * G] at pair y = (N, H): |U(q, N)| of q in H, |V(p, H)| of p in N (slot rank - node's first) */
  int64_t *fwd, *part; /* [R * G] rows of the intra-node message src -> node's rank x: forwards (stage 1), partials (stage 0) */
  sc_route *rt;
} hmodel;

static int32_t node_of(const hmodel *h, int32_t r) { return r / h->G; }

/* The latency class of a message of `bytes` (the factor table's row). */
static int msg_class(double bytes) {
  static const double from[CLASSES - 1] = {65472, 15424, 9376, 5776, 3484, 1426, 732, 257, 0};
  for (int c = 0; c < CLASSES - 1; c++)
    if (bytes >= from[c]) return c;
  return CLASSES - 2;
}

static int64_t nic_link(const hmodel *h, int32_t r, int dir) {
  int32_t k = r / h->G;
  int64_t nic = (int64_t)k * h->L.nics_per_node + (r - k * h->G) % h->L.nics_per_node;
  return 2 * (int64_t)h->R + 2 * nic + dir;
}

/* Link l of stage s after a change: its time (the longest latency of its messages plus its
 * load; 0 when it carries none) into the stage's tree, and up to the root. */
static void link_set(hmodel *h, int s, int64_t l) {
  int64_t li = (int64_t)s * h->nlinks + l;
  const int32_t *c = h->cls + li * CLASSES;
  const double *lat_of = h->lat_of[l >= 2 * h->R];
  double lat = 0, t = 0;
  for (int k = 0; k < CLASSES; k++)
    if (c[k] > 0 && lat_of[k] > lat) lat = lat_of[k];
  if (lat != 0 || h->load[li] > 0) t = lat + h->load[li];
  double *mx = h->mx + (int64_t)s * 2 * h->P, *sm = h->sm + (int64_t)s * 2 * h->P;
  int64_t i = h->P + l;
  mx[i] = sm[i] = t;
  for (i >>= 1; i >= 1; i >>= 1) {
    mx[i] = mx[2 * i] > mx[2 * i + 1] ? mx[2 * i] : mx[2 * i + 1];
    sm[i] = sm[2 * i] + sm[2 * i + 1];
  }
}

/* A message of rows from src to dst in stage s added to (sign 1) or taken out of (-1) its links'
 * loads and latency classes, the links marked for their trees' update (estimate); 0 if it moves
 * nothing. */
static int msg_load(hmodel *h, int s, int32_t src, int32_t dst, int64_t rows, int sign) {
  if (rows <= 0 || src == dst) return 0;
  double bytes = (double)rows * h->L.row_bytes, paid, latf;
  cost_message_factors(h->L.ideal, bytes, &paid, &latf);
  int inter = node_of(h, src) != node_of(h, dst), c = msg_class(bytes);
  int64_t up = inter ? nic_link(h, src, 0) : src, down = inter ? nic_link(h, dst, 1) : h->R + dst;
  double bw = inter ? h->L.nic_Bps : h->L.nvlink_Bps;
  for (int d = 0; d < 2; d++) {
    int64_t li = (int64_t)s * h->nlinks + (d ? down : up);
    h->load[li] += sign * bytes / (paid * bw);
    h->cls[li * CLASSES + c] += sign;
    if (!h->dirty[li]) {
      h->dirty[li] = 1;
      h->dlist[h->ndirty++] = li;
    }
  }
  return 1;
}

/* Adds (sign 1) or takes out (sign -1) a message of rows from src to dst in stage s. */
static void msg(hmodel *h, int s, int32_t src, int32_t dst, int64_t rows, int sign) { msg_load(h, s, src, dst, rows, sign); }

/* Changes the intra-node message src -> dst of table tab (fwd or part) by delta rows in stage s. */
static void intra(hmodel *h, int64_t *tab, int s, int32_t src, int32_t dst, int64_t delta) {
  if (delta == 0 || src == dst) return;
  int64_t *n = &tab[(int64_t)src * h->G + dst % h->G];
  msg_load(h, s, src, dst, *n, -1);
  *n += delta;
  msg_load(h, s, src, dst, *n, 1);
}

/* The estimate: Σ over stages of the slowest link's time; *sum = Σ of every link's time. */
static double estimate(hmodel *h, double *sum) {
  for (int64_t x = 0; x < h->ndirty; x++) { /* the trees of the links changed since */
    int64_t li = h->dlist[x];
    h->dirty[li] = 0;
    link_set(h, (int)(li / h->nlinks), li % h->nlinks);
  }
  h->ndirty = 0;
  double total = 0, all = 0;
  for (int s = 0; s < STAGES; s++) {
    total += h->mx[(int64_t)s * 2 * h->P + 1];
    all += h->sm[(int64_t)s * 2 * h->P + 1];
  }
  if (sum) *sum = all;
  return total;
}

/* The rank of node N with r's local index (wrapping in a smaller last node). */
static int32_t rail(const hmodel *h, int32_t N, int32_t r) { return sc_rail(N, r, h->G, h->R); }

/* Node pair y's rows node N and columns node H. */
static int32_t pair_N(const hmodel *h, int64_t y) { return (int32_t)(h->rt->pair[y] / h->nodes); }
static int32_t pair_H(const hmodel *h, int64_t y) { return (int32_t)(h->rt->pair[y] % h->nodes); }

/* Node N's ranks: first and one past the last. */
static int32_t first_of(const hmodel *h, int32_t N) { return N * h->G; }
static int32_t end_of(const hmodel *h, int32_t N) { return (N + 1) * h->G < h->R ? (N + 1) * h->G : h->R; }

/* The |U(q, N)| table (rep = 0) or |V(p, H)| table (1) of node pair y's current mode: joint's unions
 * when it is relayed with joint's covers, group's otherwise. */
static const int64_t *unions_of(const hmodel *h, int64_t y, int agg) {
  int j = h->rt->direct[y] == ROUTE_RELAYED_JOINT;
  return agg ? (j ? h->nVj : h->nV) : (j ? h->nUj : h->nU);
}

/* q's relayed messages to node N of pair y = (N, H = q's node): U(q, N) to its rep and the forwards
 * rep -> p (sign 1 adds, -1 removes). */
static void rep_msgs(hmodel *h, int64_t y, int32_t q, int sign) {
  int j = h->rt->direct[y] == ROUTE_RELAYED_JOINT;
  int64_t x = y * h->G + (q - first_of(h, node_of(h, q)));
  int32_t rep = h->rt->rep[x];
  msg(h, 0, q, rep, unions_of(h, y, 0)[x], sign);
  for (int64_t e = h->pfirst[y]; e < h->pfirst[y + 1]; e++) { /* the blocks (p, q), p increasing */
    int64_t b = h->pblk[e];
    if (h->B->b[b].q == q) intra(h, h->fwd, 1, rep, h->B->b[b].p, sign * (j ? h->hb[b].jcols : h->hb[b].gcols));
  }
}

/* p's relayed messages from node H of pair y = (N = p's node, H): the partials q -> agg and
 * V(p, H) agg -> p. */
static void agg_msgs(hmodel *h, int64_t y, int32_t p, int sign) {
  int j = h->rt->direct[y] == ROUTE_RELAYED_JOINT;
  int64_t x = y * h->G + (p - first_of(h, node_of(h, p)));
  int32_t agg = h->rt->agg[x];
  msg(h, 1, agg, p, unions_of(h, y, 1)[x], sign);
  for (int64_t e = h->pfirst[y]; e < h->pfirst[y + 1]; e++) { /* the blocks (p, q), q increasing */
    int64_t b = h->pblk[e];
    if (h->B->b[b].p == p) intra(h, h->part, 0, h->B->b[b].q, agg, sign * (j ? h->hb[b].jrows : h->hb[b].grows));
  }
}

/* Node pair y's messages under its current choice, added or removed. */
static void pair_msgs(hmodel *h, int64_t y, int sign) {
  int32_t N = pair_N(h, y), H = pair_H(h, y);
  if (h->rt->direct[y] == ROUTE_DIRECT) {
    for (int64_t e = h->pfirst[y]; e < h->pfirst[y + 1]; e++) /* (p, q) increasing */
      msg(h, 0, h->B->b[h->pblk[e]].q, h->B->b[h->pblk[e]].p, h->hb[h->pblk[e]].joint, sign);
    return;
  }
  for (int32_t q = first_of(h, H); q < end_of(h, H); q++) rep_msgs(h, y, q, sign);
  for (int32_t p = first_of(h, N); p < end_of(h, N); p++) agg_msgs(h, y, p, sign);
}

/* 1 if (t, s) is better than (t0, s0): a lower estimate, or the same and a lower sum. */
static int better(double t, double s, double t0, double s0) {
  double eps = 1e-12 * (t0 > 0 ? t0 : 1);
  if (t < t0 - eps) return 1;
  return t <= t0 + eps && s < s0 - 1e-12 * (s0 > 0 ? s0 : 1);
}

/* One sweep of step 2 (the pairs in index order); returns how many pairs changed side. */
static int64_t sweep(hmodel *h, double *t, double *s) {
  int64_t moved = 0;
  for (int64_t y = 0; y < h->np; y++) {
    uint8_t *d = &h->rt->direct[y], m0 = *d, best = m0;
    double bt = *t, bs = *s;
    for (uint8_t alt = 0; alt < ROUTE_MODES; alt++) {
      if (alt == m0) continue;
      pair_msgs(h, y, -1);
      *d = alt;
      pair_msgs(h, y, 1);
      double s1, t1 = estimate(h, &s1);
      if (better(t1, s1, bt, bs)) {
        bt = t1;
        bs = s1;
        best = alt;
      }
      pair_msgs(h, y, -1);
      *d = m0;
      pair_msgs(h, y, 1);
    }
    if (best != m0) {
      pair_msgs(h, y, -1);
      *d = best;
      pair_msgs(h, y, 1);
      *t = bt;
      *s = bs;
      moved++;
    }
  }
  return moved;
}

/* Moves relay slot x of pair y (side 0: the rep of q = r in N; 1: the agg of p = r in H) to rank c. */
static void move_relay(hmodel *h, int64_t y, int side, int32_t r, int32_t c) {
  int64_t x = y * h->G + (r - first_of(h, node_of(h, r)));
  if (side) agg_msgs(h, y, r, -1);
  else rep_msgs(h, y, r, -1);
  (side ? h->rt->agg : h->rt->rep)[x] = c;
  if (side) agg_msgs(h, y, r, 1);
  else rep_msgs(h, y, r, 1);
}

/* Step 3: each relay of a relayed pair moved to the rank of its node with the lowest estimate. */
static void place_relays(hmodel *h, double *t, double *s) {
  for (int64_t y = 0; y < h->np; y++) {
    if (h->rt->direct[y] == ROUTE_DIRECT) continue;
    int32_t N = pair_N(h, y), H = pair_H(h, y);
    for (int side = 0; side < 2; side++) { /* 0: reps of H's ranks in N; 1: aggs of N's ranks in H */
      int32_t from = side ? N : H, in = side ? H : N;
      for (int32_t r = first_of(h, from); r < end_of(h, from); r++) {
        int64_t x = y * h->G + (r - first_of(h, from));
        if (unions_of(h, y, side)[x] == 0) continue;
        int32_t best = (side ? h->rt->agg : h->rt->rep)[x];
        for (int32_t c = first_of(h, in); c < end_of(h, in); c++) {
          if (c == best) continue;
          move_relay(h, y, side, r, c);
          double s1, t1 = estimate(h, &s1);
          if (better(t1, s1, *t, *s)) {
            *t = t1;
            *s = s1;
            best = c;
            continue;
          }
          move_relay(h, y, side, r, best);
        }
      }
    }
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* How many distinct values list[0..n) holds (sorted in place). */
static int64_t distinct(int64_t *list, int64_t n) {
  if (n == 0) return 0;
  qsort(list, (size_t)n, sizeof *list, cmp_i64);
  int64_t u = 1;
  for (int64_t x = 1; x < n; x++) u += list[x] != list[x - 1];
  return u;
}

/* How many distinct selected columns (cols 1) of node pair y's blocks (p, q) of source q = r, or
 * selected rows (cols 0) of its blocks of destination p = r; list is scratch for all of them. */
static int64_t sel_union(const hmodel *h, int64_t *list, int64_t y, int32_t r, int cols) {
  int64_t n = 0;
  for (int64_t e = h->pfirst[y]; e < h->pfirst[y + 1]; e++) {
    const sc_block *k = &h->B->b[h->pblk[e]];
    if (cols && k->q == r) {
      for (int32_t j = 0; j < k->nc; j++)
        if (k->csel[j]) list[n++] = k->cols[j];
    } else if (!cols && k->p == r) {
      for (int32_t i = 0; i < k->nr; i++)
        if (k->rsel[i]) list[n++] = k->rows[i];
    }
  }
  return distinct(list, n);
}

/* |U(q, N)| and |V(p, H)| of every pair (N, H) from the blocks' (group's) selections. 0: out of memory. */
static int unions(hmodel *h, int64_t *nU, int64_t *nV) {
  const sc_blocks *B = h->B;
  int64_t cap = 1;
  for (int64_t b = 0; b < B->n; b++) cap += B->b[b].nc + B->b[b].nr;
  int64_t *list = malloc((size_t)cap * sizeof *list);
  if (!list) return 0;
  for (int64_t y = 0; y < h->np; y++) {
    int32_t N = pair_N(h, y), H = pair_H(h, y);
    for (int32_t q = first_of(h, H); q < end_of(h, H); q++)
      nU[y * h->G + (q - first_of(h, H))] = sel_union(h, list, y, q, 1);
    for (int32_t p = first_of(h, N); p < end_of(h, N); p++)
      nV[y * h->G + (p - first_of(h, N))] = sel_union(h, list, y, p, 0);
  }
  free(list);
  return 1;
}

/* The inter-node node pairs with blocks, N * nodes + H increasing, into rt->pair. 0: out of memory. */
static int list_pairs(sc_route *rt, const sc_blocks *B, int32_t G) {
  int64_t n = 0;
  int64_t *key = malloc((size_t)(B->n ? B->n : 1) * sizeof *key);
  if (!key) return 0;
  for (int64_t b = 0; b < B->n; b++) {
    int32_t N = B->b[b].p / G, H = B->b[b].q / G;
    if (N != H) key[n++] = (int64_t)N * rt->nodes + H;
  }
  qsort(key, (size_t)n, sizeof *key, cmp_i64);
  int64_t u = 0;
  for (int64_t x = 0; x < n; x++)
    if (u == 0 || key[x] != key[u - 1]) key[u++] = key[x];
  rt->pair = key;
  rt->npairs = u;
  return 1;
}

/* Each node pair's blocks into h->pfirst, h->pblk, (p, q) increasing as B has them. 0: out of
 * memory. */
static int pair_blocks(hmodel *h) {
  const sc_blocks *B = h->B;
  h->pfirst = calloc((size_t)h->np + 1, sizeof *h->pfirst);
  h->pblk = malloc((size_t)(B->n ? B->n : 1) * sizeof *h->pblk);
  int64_t *at = malloc((size_t)(h->np ? h->np : 1) * sizeof *at);
  if (!h->pfirst || !h->pblk || !at) {
    free(at);
    return 0;
  }
  for (int64_t b = 0; b < B->n; b++) {
    int32_t N = node_of(h, B->b[b].p), H = node_of(h, B->b[b].q);
    if (N != H) h->pfirst[route_pair(h->rt, N, H) + 1]++;
  }
  for (int64_t y = 0; y < h->np; y++) {
    h->pfirst[y + 1] += h->pfirst[y];
    at[y] = h->pfirst[y];
  }
  for (int64_t b = 0; b < B->n; b++) {
    int32_t N = node_of(h, B->b[b].p), H = node_of(h, B->b[b].q);
    if (N != H) h->pblk[at[route_pair(h->rt, N, H)]++] = b;
  }
  free(at);
  return 1;
}

/* Sets every pair to mode (ROUTE_DIRECT, ROUTE_RELAYED_GROUP or ROUTE_RELAYED_JOINT). */
static void set_all(hmodel *h, int mode) { memset(h->rt->direct, mode, (size_t)h->np); }

/* The model of every message of the current choice, from empty links. */
static void rebuild(hmodel *h) {
  memset(h->load, 0, (size_t)STAGES * h->nlinks * sizeof *h->load);
  memset(h->cls, 0, (size_t)STAGES * h->nlinks * CLASSES * sizeof *h->cls);
  memset(h->mx, 0, (size_t)STAGES * 2 * h->P * sizeof *h->mx);
  memset(h->sm, 0, (size_t)STAGES * 2 * h->P * sizeof *h->sm);
  memset(h->fwd, 0, (size_t)h->R * h->G * sizeof *h->fwd);
  memset(h->part, 0, (size_t)h->R * h->G * sizeof *h->part);
  memset(h->dirty, 0, (size_t)STAGES * h->nlinks);
  h->ndirty = 0;
  for (int64_t b = 0; b < h->B->n; b++) { /* pairs inside a node: joint's rows over NVLink */
    const sc_block *k = &h->B->b[b];
    if (node_of(h, k->p) == node_of(h, k->q)) msg(h, 0, k->q, k->p, h->hb[b].joint, 1);
  }
  for (int64_t y = 0; y < h->np; y++) pair_msgs(h, y, 1);
}

/* A selection sel[0..n) (0/1 bytes) kept as a bitmap; NULL: out of memory. */
static uint8_t *pack_sel(const uint8_t *sel, int32_t n) {
  uint8_t *bits = calloc((size_t)n / 8 + 1, 1);
  if (bits)
    for (int32_t i = 0; i < n; i++) bits[i >> 3] |= (uint8_t)((sel[i] != 0) << (i & 7));
  return bits;
}

/* The selection of bitmap bits back into sel[0..n). */
static void unpack_sel(uint8_t *sel, const uint8_t *bits, int32_t n) {
  for (int32_t i = 0; i < n; i++) sel[i] = (uint8_t)((bits[i >> 3] >> (i & 7)) & 1);
}

/* The joint selection of a block, kept while group's is made (selections as bitmaps). */
typedef struct saved {
  uint8_t *rsel, *csel;
  int32_t *rmatch;
  int64_t mu, ent_partial, ent_remote; /* joint's */
  uint8_t *grsel, *gcsel;
  int64_t gent_partial, gent_remote; /* group's (the covers hybrid relays with) */
  uint8_t *orsel, *ocsel;
  int64_t oent_partial, oent_remote; /* group's other covers, while group_covers decides */
} saved;

/* One routing: the node pairs' sides and the relays. */
typedef struct cand {
  uint8_t *direct;
  int32_t *rep, *agg;
  double est;
} cand;

/* Rail-aligned relays everywhere. */
static void rail_relays(hmodel *h) {
  for (int64_t y = 0; y < h->np; y++) {
    int32_t N = pair_N(h, y), H = pair_H(h, y);
    for (int32_t i = 0; i < h->G; i++) {
      h->rt->rep[y * h->G + i] = rail(h, N, first_of(h, H) + i);
      h->rt->agg[y * h->G + i] = rail(h, H, first_of(h, N) + i);
    }
  }
}

/* Copies the route's tables into c (save 1) or c's into the route (save 0). */
static void cand_copy(hmodel *h, cand *c, int save) {
  size_t np = (size_t)h->np, rn = (size_t)h->np * h->G * sizeof(int32_t);
  if (save) {
    memcpy(c->direct, h->rt->direct, np);
    memcpy(c->rep, h->rt->rep, rn);
    memcpy(c->agg, h->rt->agg, rn);
  } else {
    memcpy(h->rt->direct, c->direct, np);
    memcpy(h->rt->rep, c->rep, rn);
    memcpy(h->rt->agg, c->agg, rn);
  }
}

/* 1 if a and b route the same way. */
static int cand_same(const hmodel *h, const cand *a, const cand *b) {
  size_t np = (size_t)h->np, rn = (size_t)h->np * h->G * sizeof(int32_t);
  return !memcmp(a->direct, b->direct, np) && !memcmp(a->rep, b->rep, rn) && !memcmp(a->agg, b->agg, rn);
}

/* Steps 1-3 into the six candidates c[0..6): all direct, all relayed with group's covers, all
 * relayed with joint's, then greedy from each of the three. */
static void decide(hmodel *h, cand *c) {
  sc_route *rt = h->rt;
  for (int k = 0; k < NCAND; k++) {
    double t, s;
    static const uint8_t start[ROUTE_MODES] = {ROUTE_DIRECT, ROUTE_RELAYED_GROUP, ROUTE_RELAYED_JOINT};
    set_all(h, start[k % ROUTE_MODES]);
    rail_relays(h);
    rebuild(h);
    t = estimate(h, &s);
    if (k >= ROUTE_MODES) {
      for (int w = 0; w < 4 && sweep(h, &t, &s) > 0; w++) {}
      place_relays(h, &t, &s);
      sweep(h, &t, &s);
    }
    c[k].est = t;
    cand_copy(h, &c[k], 1);
  }
  rt->est_direct_s = c[0].est;
  rt->est_relayed_s = c[1].est;
  rt->est_relayed_joint_s = c[2].est;
}

/* The blocks' selections as route rt has them: joint's in pairs direct or relayed with joint's covers,
 * group's in pairs relayed with group's
 * (certificates left out: set once the choice is final). */
static void apply_selections(sc_blocks *B, const sc_route *rt, const saved *sv, int32_t G) {
  for (int64_t b = 0; b < B->n; b++) {
    sc_block *k = &B->b[b];
    if (k->p / G == k->q / G) continue;
    int64_t y = route_pair(rt, k->p / G, k->q / G);
    int d = rt->direct[y] != ROUTE_RELAYED_GROUP; /* joint's covers, direct or relayed */
    unpack_sel(k->rsel, d ? sv[b].rsel : sv[b].grsel, k->nr);
    unpack_sel(k->csel, d ? sv[b].csel : sv[b].gcsel, k->nc);
    k->ent_partial = d ? sv[b].ent_partial : sv[b].gent_partial;
    k->ent_remote = d ? sv[b].ent_remote : sv[b].gent_remote;
    k->mu = -1;
  }
}

/* Group's counts of the blocks' current selections into h: each block's selected rows and columns,
 * and each node pair's unions |U(q, N)|, |V(p, H)|. 0: out of memory. */
static int group_counts(hmodel *h, const sc_blocks *B) {
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    h->hb[b].grows = h->hb[b].gcols = 0;
    for (int32_t i = 0; i < k->nr; i++) h->hb[b].grows += k->rsel[i];
    for (int32_t c = 0; c < k->nc; c++) h->hb[b].gcols += k->csel[c];
  }
  return unions(h, h->nU, h->nV);
}

/* The inter-node blocks' current selections into sv: group's (other 0) or the other covers (1). 0: out
 * of memory. */
static int snap(const sc_blocks *B, int32_t G, saved *sv, int other) {
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    if (k->p / G == k->q / G) continue;
    uint8_t **r = other ? &sv[b].orsel : &sv[b].grsel, **c = other ? &sv[b].ocsel : &sv[b].gcsel;
    free(*r);
    free(*c);
    *r = pack_sel(k->rsel, k->nr);
    *c = pack_sel(k->csel, k->nc);
    if (!*r || !*c) return 0;
    *(other ? &sv[b].oent_partial : &sv[b].gent_partial) = k->ent_partial;
    *(other ? &sv[b].oent_remote : &sv[b].gent_remote) = k->ent_remote;
  }
  return 1;
}

/* The selections snap kept (other 0: group's, 1: the other ones) back into the inter-node blocks. */
static void unsnap(sc_blocks *B, int32_t G, const saved *sv, int other) {
  for (int64_t b = 0; b < B->n; b++) {
    sc_block *k = &B->b[b];
    if (k->p / G == k->q / G) continue;
    unpack_sel(k->rsel, other ? sv[b].orsel : sv[b].grsel, k->nr);
    unpack_sel(k->csel, other ? sv[b].ocsel : sv[b].gcsel, k->nc);
    k->ent_partial = other ? sv[b].oent_partial : sv[b].gent_partial;
    k->ent_remote = other ? sv[b].oent_remote : sv[b].gent_remote;
  }
}

/* A message of a candidate's plan, for price_messages. */
typedef struct hflow {
  int32_t src, kind, dst;
  int64_t rows;
} hflow;

static int hflow_cmp(const void *a, const void *b) { /* the programs' order: sender, kind, receiver */
  const hflow *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Appends a message of rows > 0 between two ranks to f[*n] (a program posts no other). */
static void add_flow(hflow *f, int64_t *n, int32_t src, int32_t kind, int32_t dst, int64_t rows) {
  if (rows > 0 && src != dst) f[(*n)++] = (hflow){src, kind, dst, rows};
}

/* The plan of the current routing (the model rebuilt for it) priced on rt->machine from its
 * messages, as plan_build_tier.c lays them out (plan_build_flat.c's, all direct): one per block
 * exchanged directly (PROG_MSG_DIRECT, its covers' rows), per relayed pair one U(q, N) per q to its
 * rep and one V(p, H) per p from its agg (INTER_B, AGG_C), and per (sender, receiver) in a node the
 * partials to an agg and the forwards from a rep, summed over pairs (AGG_PART, FWD_B); stage 0
 * but FWD_B and AGG_C; added to the cost model in the programs' order. */
static shiro_status price_messages(hmodel *h, double *time_s, shiro_error *err) {
  const sc_blocks *B = h->B;
  const sc_route *rt = h->rt;
  int64_t cap = B->n + 2 * h->np * h->G + 2 * (int64_t)h->R * h->G + 1, n = 0;
  hflow *f = malloc((size_t)cap * sizeof *f);
  if (!f) return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory pricing a candidate");
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    int32_t N = node_of(h, k->p), H = node_of(h, k->q);
    if (N == H || rt->direct[route_pair(rt, N, H)] == ROUTE_DIRECT) add_flow(f, &n, k->q, PROG_MSG_DIRECT, k->p, h->hb[b].joint);
  }
  for (int64_t y = 0; y < h->np; y++) {
    if (rt->direct[y] == ROUTE_DIRECT) continue;
    int32_t N = pair_N(h, y), H = pair_H(h, y);
    for (int32_t q = first_of(h, H); q < end_of(h, H); q++) {
      int64_t x = y * h->G + (q - first_of(h, H));
      add_flow(f, &n, q, PROG_MSG_INTER_B, rt->rep[x], unions_of(h, y, 0)[x]);
    }
    for (int32_t p = first_of(h, N); p < end_of(h, N); p++) {
      int64_t x = y * h->G + (p - first_of(h, N));
      add_flow(f, &n, rt->agg[x], PROG_MSG_AGG_C, p, unions_of(h, y, 1)[x]);
    }
  }
  for (int32_t r = 0; r < h->R; r++)
    for (int32_t d = first_of(h, node_of(h, r)); d < end_of(h, node_of(h, r)); d++) {
      add_flow(f, &n, r, PROG_MSG_AGG_PART, d, h->part[(int64_t)r * h->G + d % h->G]);
      add_flow(f, &n, r, PROG_MSG_FWD_B, d, h->fwd[(int64_t)r * h->G + d % h->G]);
    }
  qsort(f, (size_t)n, sizeof *f, hflow_cmp);
  cost_model cm;
  shiro_status st = cost_init(&cm, rt->machine, h->R, rt->row_bytes, err);
  if (st == SHIRO_OK) {
    for (int64_t i = 0; i < n; i++)
      cost_add_flow(&cm, f[i].src, f[i].dst, f[i].kind == PROG_MSG_FWD_B || f[i].kind == PROG_MSG_AGG_C, f[i].rows);
    cost_pred pred;
    st = cost_predict(&cm, &pred, err);
    if (st == SHIRO_OK) *time_s = pred.time_s;
    cost_free(&cm);
  }
  free(f);
  return st;
}

/* The price of the current routing with the blocks' current selections (the model's counts and
 * unions theirs): from its messages on rt->machine, else rt->price's (the built plan's). With
 * rt->price_check, both, and their largest relative difference into rt->price_check_rel. */
static shiro_status price_of(hmodel *h, sc_blocks *B, double *time_s, shiro_error *err) {
  sc_route *rt = h->rt;
  shiro_status st;
  rt->prices++;
  if (!rt->machine) return rt->price(rt->price_arg, B, time_s, err);
  rebuild(h);
  st = price_messages(h, time_s, err);
  if (st != SHIRO_OK || !rt->price_check || !rt->price) return st;
  double built;
  st = rt->price(rt->price_arg, B, &built, err);
  double rel = built > 0 ? (*time_s - built) / built : *time_s;
  if (rel < 0) rel = -rel;
  if (rel > rt->price_check_rel) rt->price_check_rel = rel;
  return st;
}

/* strategy_select_group_own_balanced's hook: group's own covers kept as sv's other selections. */
typedef struct own_snap {
  saved *sv;
  int32_t G;
} own_snap;

static shiro_status snap_own(void *arg, const sc_blocks *B, shiro_error *err) {
  const own_snap *o = arg;
  return snap(B, o->G, o->sv, 1) ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping group's covers");
}

/* Group's covers for the relayed mode, into the blocks, their selections into sv's g fields and their
 * counts into h: its own (fewest hops among the minimum covers) or the NIC-balanced ones
 * (strategy_select_group_balanced: the same cardinality and certificates; both come from one
 * call, and switching is a copy), whichever prices faster all relayed on the rail (the price in
 * rt->price_group_s, price_group_balanced_s): the balanced ones only when MIXED_MARGIN faster (the
 * model's error on such changes is of that order: R-MAT s18 and s19 at R = 32 on tsubame4, priced
 * 0.6% and 0.5% below, simulated 0.14% above; R-MAT s18 at R = 128, priced 4.3% below, simulated
 * 3.7% below). Without a price, the balanced ones (their NIC estimate is never higher). */
static shiro_status group_covers(hmodel *h, sc_blocks *B, int32_t G, saved *sv, shiro_error *err) {
  sc_route *rt = h->rt;
  const int priced = rt->price || rt->machine;
  rt->price_group_s = rt->price_group_balanced_s = 0;
  own_snap o = {sv, G};
  shiro_status st = strategy_select_group_own_balanced(B, G, BALANCE_ROUNDS, priced ? snap_own : NULL, &o, err);
  if (st != SHIRO_OK) return st;
  rt->group_balanced = 1;
  if (!group_counts(h, B) || !snap(B, G, sv, 0)) goto nomem;
  if (!priced) return SHIRO_OK;
  /* the balanced ones' counts kept while group's own are priced */
  const size_t rn = (size_t)h->np * G;
  int64_t *keep = malloc((2 * rn + 2 * (size_t)B->n + 1) * sizeof *keep);
  if (!keep) goto nomem;
  memcpy(keep, h->nU, rn * sizeof *keep);
  memcpy(keep + rn, h->nV, rn * sizeof *keep);
  for (int64_t b = 0; b < B->n; b++) {
    keep[2 * rn + 2 * b] = h->hb[b].grows;
    keep[2 * rn + 2 * b + 1] = h->hb[b].gcols;
  }
  set_all(h, ROUTE_RELAYED_GROUP);
  rail_relays(h);
  st = price_of(h, B, &rt->price_group_balanced_s, err);
  if (st == SHIRO_OK) {
    unsnap(B, G, sv, 1); /* group's own */
    if (!group_counts(h, B)) st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for the node pairs' unions");
  }
  if (st == SHIRO_OK) st = price_of(h, B, &rt->price_group_s, err);
  if (st == SHIRO_OK) {
    rt->group_balanced = rt->price_group_balanced_s < (1 - MIXED_MARGIN) * rt->price_group_s; /* must win clearly */
    if (rt->group_balanced) { /* back to the balanced ones and their counts */
      unsnap(B, G, sv, 0);
      memcpy(h->nU, keep, rn * sizeof *keep);
      memcpy(h->nV, keep + rn, rn * sizeof *keep);
      for (int64_t b = 0; b < B->n; b++) {
        h->hb[b].grows = keep[2 * rn + 2 * b];
        h->hb[b].gcols = keep[2 * rn + 2 * b + 1];
      }
    } else if (!snap(B, G, sv, 0)) { /* group's own, in the blocks and counted */
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping group's covers");
    }
  }
  free(keep);
  return st;
nomem:
  return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping group's covers");
}

shiro_status strategy_select_hybrid(sc_blocks *B, int32_t gpn, shiro_error *err) {
  int32_t R = B->parts, G = gpn < R ? gpn : R;
  if (G < 1) G = 1;
  int32_t nodes = (R + G - 1) / G;
  if (!B->route && !(B->route = calloc(1, sizeof *B->route)))
    return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory");
  sc_route *rt = B->route;
  if (!rt->have_links) /* tsubame4's links (tools/sim/machines/tsubame4.json), N = 64 float rows */
    rt->links = (sc_links){G, G, 450e9, 1e-6, 25e9, 2e-6, 1e-6, 0, 256};
  hmodel hm = {.B = B, .L = rt->links, .R = R, .G = G, .nodes = nodes, .rt = rt};
  hmodel *h = &hm;
  h->L.gpus_per_node = G; /* the plan's tiers decide the routes; the links are the machine's */
  if (h->L.nics_per_node < 1) h->L.nics_per_node = 1;
  h->nlinks = 2 * (int64_t)R + 2 * (int64_t)nodes * h->L.nics_per_node;
  for (h->P = 1; h->P < h->nlinks; h->P *= 2) {}
  route_drop_tables(rt);
  rt->prices = 0;
  rt->price_check_rel = 0;
  rt->nodes = nodes;
  rt->gpn = G;
  rt->ranks = R;
  if (!list_pairs(rt, B, G)) return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for its node pairs");
  h->np = rt->npairs;
  if (!pair_blocks(h)) {
    free(h->pfirst);
    free(h->pblk);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for its node pairs' blocks");
  }
  size_t nb = (size_t)(B->n ? B->n : 1), rn = (size_t)(h->np ? h->np : 1) * G;
  saved *sv = calloc(nb, sizeof *sv);
  cand cd[NCAND] = {{0}};
  h->load = calloc((size_t)STAGES * h->nlinks, sizeof *h->load);
  h->mx = calloc((size_t)STAGES * 2 * h->P, sizeof *h->mx);
  h->sm = calloc((size_t)STAGES * 2 * h->P, sizeof *h->sm);
  h->cls = calloc((size_t)STAGES * h->nlinks * CLASSES, sizeof *h->cls);
  h->dirty = calloc((size_t)STAGES * h->nlinks, 1);
  h->dlist = malloc((size_t)STAGES * h->nlinks * sizeof *h->dlist);
  h->hb = calloc(nb, sizeof *h->hb);
  h->nU = calloc(rn, sizeof *h->nU);
  h->nUj = calloc(rn, sizeof *h->nUj);
  h->nVj = calloc(rn, sizeof *h->nVj);
  h->nV = calloc(rn, sizeof *h->nV);
  h->fwd = calloc((size_t)R * G, sizeof *h->fwd);
  h->part = calloc((size_t)R * G, sizeof *h->part);
  rt->direct = calloc(rn, 1);
  rt->rep = malloc(rn * sizeof *rt->rep);
  rt->agg = malloc(rn * sizeof *rt->agg);
  shiro_status st = SHIRO_OK;
  if (!sv || !h->load || !h->mx || !h->sm || !h->cls || !h->dirty || !h->dlist || !h->hb || !h->nU || !h->nV || !h->nUj || !h->nVj || !h->fwd || !h->part || !rt->direct ||
      !rt->rep || !rt->agg) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for its tables (%d ranks, %d nodes)", R, nodes);
    goto done;
  }
  for (int inter = 0; inter < 2; inter++) {
    static const double bytes_of[CLASSES - 1] = {65472, 15424, 9376, 5776, 3484, 1426, 732, 257, 0};
    double route = inter ? 2 * h->L.nic_lat_s + h->L.core_lat_s : 2 * h->L.nvlink_lat_s;
    for (int c = 0; c < CLASSES - 1; c++) {
      double paid, latf;
      cost_message_factors(h->L.ideal, bytes_of[c], &paid, &latf);
      h->lat_of[inter][c] = latf * route;
    }
  }
  /* joint's selection of every inter-node block kept aside, and its counts */
  for (int64_t b = 0; b < B->n; b++) {
    sc_block *k = &B->b[b];
    int64_t j = 0;
    for (int32_t i = 0; i < k->nr; i++) j += k->rsel[i];
    for (int32_t c = 0; c < k->nc; c++) j += k->csel[c];
    h->hb[b].joint = j;
    for (int32_t i = 0; i < k->nr; i++) h->hb[b].jrows += k->rsel[i];
    h->hb[b].jcols = j - h->hb[b].jrows;
    if (k->p / G == k->q / G) continue;
    sv[b].rsel = pack_sel(k->rsel, k->nr);
    sv[b].csel = pack_sel(k->csel, k->nc);
    if (!sv[b].rsel || !sv[b].csel) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping joint's covers");
      goto done;
    }
    sv[b].rmatch = k->rmatch;
    k->rmatch = NULL; /* group frees a block's certificate: joint's is kept here */
    sv[b].mu = k->mu;
    sv[b].ent_partial = k->ent_partial;
    sv[b].ent_remote = k->ent_remote;
  }
  if (!unions(h, h->nUj, h->nVj)) { /* joint's unions, for its covers relayed */
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for the node pairs' unions");
    goto done;
  }
  st = group_covers(h, B, G, sv, err);
  if (st != SHIRO_OK) goto done;
  for (int k = 0; k < NCAND; k++) {
    cd[k].direct = malloc(rn);
    cd[k].rep = malloc(rn * sizeof *cd[k].rep);
    cd[k].agg = malloc(rn * sizeof *cd[k].agg);
    if (!cd[k].direct || !cd[k].rep || !cd[k].agg) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for its candidates");
      goto done;
    }
  }
  decide(h, cd);
  /* All relayed on the rail is group_covers' plan: its price is reused. */
  int pick = 0, pick_pure = 0, priced = rt->price || rt->machine;
  double best = 0, best_pure = 0;
  for (int k = 0; k < NCAND; k++) { /* the first of equals: the three starts, then the greedy ones */
    int dup = 0;
    for (int j = 0; j < k; j++) dup |= cand_same(h, &cd[k], &cd[j]);
    if (dup) continue;
    double v = cd[k].est;
    if (priced && k == 1) {
      v = rt->group_balanced ? rt->price_group_balanced_s : rt->price_group_s;
    } else if (priced) {
      cand_copy(h, &cd[k], 0);
      apply_selections(B, rt, sv, G);
      st = price_of(h, B, &v, err);
      if (st != SHIRO_OK) goto done;
    }
    if (k == 0 || v < best) {
      best = v;
      pick = k;
    }
    if (k < ROUTE_MODES && (k == 0 || v < best_pure)) {
      best_pure = v;
      pick_pure = k;
    }
  }
  if (pick >= ROUTE_MODES && !(best < (1 - MIXED_MARGIN) * best_pure)) { /* a mixed routing must win clearly */
    pick = pick_pure;
    best = best_pure;
  }
  cand_copy(h, &cd[pick], 0);
  apply_selections(B, rt, sv, G);
  rt->est_s = cd[pick].est;
  rt->price_s = priced ? best : 0;
  rt->candidate = pick;
  for (int64_t b = 0; b < B->n; b++) { /* joint's certificates back where its covers are used */
    sc_block *k = &B->b[b];
    if (k->p / G == k->q / G || rt->direct[route_pair(rt, k->p / G, k->q / G)] == ROUTE_RELAYED_GROUP) continue;
    free(k->rmatch);
    k->rmatch = sv[b].rmatch;
    sv[b].rmatch = NULL;
    k->mu = sv[b].mu;
  }
  for (int64_t y = 0; y < h->np; y++) {
    int32_t N = pair_N(h, y), H = pair_H(h, y);
    if (rt->direct[y] != ROUTE_RELAYED_GROUP) {
      if (rt->direct[y] == ROUTE_DIRECT) rt->pairs_direct++;
      if (B->cert) { /* its certificate is its blocks' matchings */
        int64_t c = rt->pair[y]; /* group's certificates are per N * nodes + H */
        free(B->cert[c]);
        B->cert[c] = NULL;
        memset(B->cert_at + c * (G + 1), 0, ((size_t)G + 1) * sizeof *B->cert_at);
      }
    }
    if (rt->direct[y] == ROUTE_DIRECT) continue;
    rt->pairs_relayed++;
    rt->pairs_relayed_joint += rt->direct[y] == ROUTE_RELAYED_JOINT;
    for (int32_t i = 0; i < G; i++) {
      int64_t x = y * G + i;
      int32_t q = first_of(h, H) + i, p = first_of(h, N) + i;
      rt->relays_moved += (q < end_of(h, H) && unions_of(h, y, 0)[x] > 0 && rt->rep[x] != rail(h, N, q)) +
          (p < end_of(h, N) && unions_of(h, y, 1)[x] > 0 && rt->agg[x] != rail(h, H, p));
    }
  }
done:
  for (size_t b = 0; sv && b < nb && b < (size_t)B->n; b++) {
    free(sv[b].rsel);
    free(sv[b].csel);
    free(sv[b].rmatch);
    free(sv[b].grsel);
    free(sv[b].gcsel);
    free(sv[b].orsel);
    free(sv[b].ocsel);
  }
  for (int k = 0; k < NCAND; k++) {
    free(cd[k].direct);
    free(cd[k].rep);
    free(cd[k].agg);
  }
  free(sv);
  free(h->load);
  free(h->mx);
  free(h->sm);
  free(h->cls);
  free(h->dirty);
  free(h->dlist);
  free(h->pfirst);
  free(h->pblk);
  free(h->hb);
  free(h->nU);
  free(h->nV);
  free(h->nUj);
  free(h->nVj);
  free(h->fwd);
  free(h->part);
  if (st != SHIRO_OK) route_drop_tables(rt);
  return st;
}
