/* hybrid.c — the `hybrid` strategy: per ordered node pair (N rows <- H
 * columns) either joint's per-block covers sent direct in stage 0, as the
 * flat plans do, or group's node-pair cover through relays (plan_build_tier.c:
 * U(q, N) to a rep of N that forwards, partials to an agg of H that sums
 * V(p, H)), and the relays themselves, whichever lowers an estimate of the
 * call's time.
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
 * pair's messages are taken out and put back in O(its messages) and the
 * estimate is read in O(links).
 *
 * The decision, deterministic:
 *   1. two starts: every pair direct (joint's plan), every pair relayed on
 *      rail-aligned relays (group's plan);
 *   2. from each, sweeps over the pairs in index order: a pair changes side
 *      when the estimate falls (or stays and the links' summed time falls);
 *   3. relays by load: for each relayed pair, each q's rep and each p's agg
 *      is moved to the rank of its node that gives the lowest estimate
 *      (the rail-aligned one kept on ties); then one more sweep of 2;
 *   4. of the four candidates (the two starts, the two greedy results) the
 *      one the caller's price (sc_route.price: the cost model on the built
 *      programs) finds fastest, the first of equals; without a price, the
 *      lowest estimate. With a price hybrid is never predicted slower than
 *      joint or group: their plans are candidates (an all-direct hybrid
 *      sends joint's messages, an all-relayed one is group's plan).
 * O(sweeps · pairs · links) and O(R · nodes · G · links) for the relays.
 *
 * Not done: the freedom among group's minimum covers (its
 * Dulmage–Mendelsohn structure) is not used to balance the busiest link;
 * group's fewest-hop cover is taken as it is. */
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "error.h"
#include "sorted.h"
#include "strategy.h"

enum { CLASSES = 10, STAGES = 2 };

/* What a block moves under each choice. */
typedef struct hblock {
  int64_t joint;    /* joint's rows (columns + rows selected), direct */
  int64_t gcols;    /* group's selected columns (forwarded rep -> p unless rep = p) */
  int64_t grows;    /* group's selected rows (partials q -> agg unless agg = q) */
} hblock;

/* The links' state. */
typedef struct hmodel {
  const sc_blocks *B;
  sc_links L;
  int32_t R, G, nodes;
  int64_t nlinks;
  double *load;       /* [STAGES * nlinks] bytes paid */
  int32_t *cls;       /* [STAGES * nlinks * CLASSES] messages per latency class */
  double lat_of[2][CLASSES];  /* [inter][class] the latency of a message of that class */
  hblock *hb;         /* [B->n] */
  int64_t *nU, *nV;   /* [R * nodes] |U(q, N)|, |V(p, H)| under group's selection */
  int64_t *fwd, *part;/* [R * G] rows of the intra-node message src -> node's rank x: forwards (stage 1), partials (stage 0) */
  sc_route *rt;
} hmodel;

static int32_t node_of(const hmodel *h, int32_t r) { return r / h->G; }

/* The block (p, q), -1 if none: a binary search of p's blocks, q increasing (no R x R table). */
static int64_t blk_of(const hmodel *h, int32_t p, int32_t q) {
  int64_t lo = h->B->first_p[p], hi = h->B->first_p[p + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (h->B->b[mid].q < q) lo = mid + 1; else hi = mid;
  }
  return lo < h->B->first_p[p + 1] && h->B->b[lo].q == q ? lo : -1;
}

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

/* Adds (sign 1) or takes out (sign -1) a message of rows from src to dst in stage s. */
static void msg(hmodel *h, int s, int32_t src, int32_t dst, int64_t rows, int sign) {
  if (rows <= 0 || src == dst) return;
  double bytes = (double)rows * h->L.row_bytes, paid, latf;
  cost_message_factors(h->L.ideal, bytes, &paid, &latf);
  int inter = node_of(h, src) != node_of(h, dst), c = msg_class(bytes);
  int64_t up = inter ? nic_link(h, src, 0) : src, down = inter ? nic_link(h, dst, 1) : h->R + dst;
  double bw = inter ? h->L.nic_Bps : h->L.nvlink_Bps;
  for (int d = 0; d < 2; d++) {
    int64_t li = (int64_t)s * h->nlinks + (d ? down : up);
    h->load[li] += sign * bytes / (paid * bw);
    h->cls[li * CLASSES + c] += sign;
  }
}

/* Changes the intra-node message src -> dst of table tab (fwd or part) by delta rows in stage s. */
static void intra(hmodel *h, int64_t *tab, int s, int32_t src, int32_t dst, int64_t delta) {
  if (delta == 0 || src == dst) return;
  int64_t *n = &tab[(int64_t)src * h->G + dst % h->G];
  msg(h, s, src, dst, *n, -1);
  *n += delta;
  msg(h, s, src, dst, *n, 1);
}

/* The estimate: Σ over stages of the slowest link's time; *sum = Σ of every link's time. */
static double estimate(const hmodel *h, double *sum) {
  double total = 0, all = 0;
  for (int s = 0; s < STAGES; s++) {
    double worst = 0;
    for (int64_t l = 0; l < h->nlinks; l++) {
      int64_t li = (int64_t)s * h->nlinks + l;
      const int32_t *c = h->cls + li * CLASSES;
      double lat = 0;
      for (int k = 0; k < CLASSES; k++)
        if (c[k] > 0 && h->lat_of[l >= 2 * h->R][k] > lat) lat = h->lat_of[l >= 2 * h->R][k];
      if (lat == 0 && h->load[li] <= 0) continue;
      double t = lat + h->load[li];
      all += t;
      if (t > worst) worst = t;
    }
    total += worst;
  }
  if (sum) *sum = all;
  return total;
}

/* The rank of node N with r's local index (wrapping in a smaller last node). */
static int32_t rail(const hmodel *h, int32_t N, int32_t r) { return sc_rail(N, r, h->G, h->R); }

/* q's relayed messages to node N: U(q, N) to its rep and the forwards rep -> p (sign 1 adds, -1 removes). */
static void rep_msgs(hmodel *h, int32_t q, int32_t N, int sign) {
  int32_t rep = h->rt->rep[(int64_t)q * h->nodes + N];
  msg(h, 0, q, rep, h->nU[(int64_t)q * h->nodes + N], sign);
  for (int32_t p = N * h->G; p < (N + 1) * h->G && p < h->R; p++) {
    int64_t b = blk_of(h, p, q);
    if (b >= 0) intra(h, h->fwd, 1, rep, p, sign * h->hb[b].gcols);
  }
}

/* p's relayed messages from node H: the partials q -> agg and V(p, H) agg -> p. */
static void agg_msgs(hmodel *h, int32_t p, int32_t H, int sign) {
  int32_t agg = h->rt->agg[(int64_t)p * h->nodes + H];
  msg(h, 1, agg, p, h->nV[(int64_t)p * h->nodes + H], sign);
  for (int32_t q = H * h->G; q < (H + 1) * h->G && q < h->R; q++) {
    int64_t b = blk_of(h, p, q);
    if (b >= 0) intra(h, h->part, 0, q, agg, sign * h->hb[b].grows);
  }
}

/* Node pair (N <- H)'s messages under its current choice, added or removed. */
static void pair_msgs(hmodel *h, int32_t N, int32_t H, int sign) {
  if (h->rt->direct[(int64_t)N * h->nodes + H]) {
    for (int32_t p = N * h->G; p < (N + 1) * h->G && p < h->R; p++)
      for (int32_t q = H * h->G; q < (H + 1) * h->G && q < h->R; q++) {
        int64_t b = blk_of(h, p, q);
        if (b >= 0) msg(h, 0, q, p, h->hb[b].joint, sign);
      }
    return;
  }
  for (int32_t q = H * h->G; q < (H + 1) * h->G && q < h->R; q++) rep_msgs(h, q, N, sign);
  for (int32_t p = N * h->G; p < (N + 1) * h->G && p < h->R; p++) agg_msgs(h, p, H, sign);
}

/* 1 if (t, s) is better than (t0, s0): a lower estimate, or the same and a lower sum. */
static int better(double t, double s, double t0, double s0) {
  double eps = 1e-12 * (t0 > 0 ? t0 : 1);
  if (t < t0 - eps) return 1;
  return t <= t0 + eps && s < s0 - 1e-12 * (s0 > 0 ? s0 : 1);
}

/* Has node pair (N <- H) any block? */
static int pair_has_blocks(const hmodel *h, int32_t N, int32_t H) {
  for (int32_t p = N * h->G; p < (N + 1) * h->G && p < h->R; p++)
    for (int32_t q = H * h->G; q < (H + 1) * h->G && q < h->R; q++)
      if (blk_of(h, p, q) >= 0) return 1;
  return 0;
}

/* One sweep of step 2; returns how many pairs changed side. */
static int64_t sweep(hmodel *h, double *t, double *s) {
  int64_t moved = 0;
  for (int32_t N = 0; N < h->nodes; N++)
    for (int32_t H = 0; H < h->nodes; H++) {
      if (N == H || !pair_has_blocks(h, N, H)) continue;
      uint8_t *d = &h->rt->direct[(int64_t)N * h->nodes + H];
      pair_msgs(h, N, H, -1);
      *d = !*d;
      pair_msgs(h, N, H, 1);
      double s1, t1 = estimate(h, &s1);
      if (better(t1, s1, *t, *s)) { *t = t1; *s = s1; moved++; continue; }
      pair_msgs(h, N, H, -1);
      *d = !*d;
      pair_msgs(h, N, H, 1);
    }
  return moved;
}

/* Step 3: each relay of a relayed pair moved to the rank of its node with the lowest estimate. */
static void place_relays(hmodel *h, double *t, double *s) {
  for (int32_t N = 0; N < h->nodes; N++)
    for (int32_t H = 0; H < h->nodes; H++) {
      if (N == H || h->rt->direct[(int64_t)N * h->nodes + H] || !pair_has_blocks(h, N, H)) continue;
      for (int side = 0; side < 2; side++) {  /* 0: reps of H's ranks in N; 1: aggs of N's ranks in H */
        int32_t from = side ? N : H, in = side ? H : N;
        for (int32_t r = from * h->G; r < (from + 1) * h->G && r < h->R; r++) {
          int32_t *slot = side ? &h->rt->agg[(int64_t)r * h->nodes + H] : &h->rt->rep[(int64_t)r * h->nodes + N];
          if ((side ? h->nV[(int64_t)r * h->nodes + H] : h->nU[(int64_t)r * h->nodes + N]) == 0) continue;
          int32_t best = *slot;
          for (int32_t c = in * h->G; c < (in + 1) * h->G && c < h->R; c++) {
            if (c == best) continue;
            int32_t keep = *slot;
            if (side) agg_msgs(h, r, H, -1); else rep_msgs(h, r, N, -1);
            *slot = c;
            if (side) agg_msgs(h, r, H, 1); else rep_msgs(h, r, N, 1);
            double s1, t1 = estimate(h, &s1);
            if (better(t1, s1, *t, *s)) { *t = t1; *s = s1; best = c; continue; }
            if (side) agg_msgs(h, r, H, -1); else rep_msgs(h, r, N, -1);
            *slot = keep;
            if (side) agg_msgs(h, r, H, 1); else rep_msgs(h, r, N, 1);
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

/* |U(q, N)| and |V(p, H)| from the blocks' (group's) selections. 0: out of memory. */
static int unions(hmodel *h) {
  const sc_blocks *B = h->B;
  int64_t cap = 1;
  for (int64_t b = 0; b < B->n; b++) cap += B->b[b].nc + B->b[b].nr;
  int64_t *list = malloc((size_t)cap * sizeof *list);
  if (!list) return 0;
  for (int32_t r = 0; r < h->R; r++)
    for (int32_t N = 0; N < h->nodes; N++) {
      if (N == node_of(h, r)) continue;
      int64_t nu = 0, nv = 0;
      for (int32_t o = N * h->G; o < (N + 1) * h->G && o < h->R; o++) {
        int64_t bu = blk_of(h, o, r);
        if (bu >= 0)
          for (int32_t j = 0; j < B->b[bu].nc; j++)
            if (B->b[bu].csel[j]) list[nu++] = B->b[bu].cols[j];
      }
      h->nU[(int64_t)r * h->nodes + N] = distinct(list, nu);
      for (int32_t o = N * h->G; o < (N + 1) * h->G && o < h->R; o++) {
        int64_t bv = blk_of(h, r, o);
        if (bv >= 0)
          for (int32_t i = 0; i < B->b[bv].nr; i++)
            if (B->b[bv].rsel[i]) list[nv++] = B->b[bv].rows[i];
      }
      h->nV[(int64_t)r * h->nodes + N] = distinct(list, nv);
    }
  free(list);
  return 1;
}

int route_all_direct(const sc_blocks *B, int32_t gpn) {
  const sc_route *rt = B->route;
  int32_t G = gpn < B->parts ? gpn : B->parts;
  if (!rt || !rt->direct || G < 1 || rt->gpn != G) return 0;
  for (int64_t b = 0; b < B->n; b++) {
    int32_t N = B->b[b].p / G, H = B->b[b].q / G;
    if (N != H && !rt->direct[(int64_t)N * rt->nodes + H]) return 0;
  }
  return 1;
}

void route_drop_tables(sc_route *r) {
  free(r->direct);
  free(r->rep);
  free(r->agg);
  r->direct = NULL;
  r->rep = r->agg = NULL;
  r->nodes = r->gpn = 0;
  r->pairs_direct = r->pairs_relayed = r->relays_moved = 0;
  r->est_s = r->est_direct_s = r->est_relayed_s = r->price_s = 0;
  r->candidate = -1;
}

shiro_status strategy_route_links(sc_blocks *B, const sc_links *links, shiro_error *err) {
  if (!B->route && !(B->route = calloc(1, sizeof *B->route)))
    return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory");
  B->route->links = *links;
  B->route->have_links = 1;
  return SHIRO_OK;
}

/* Sets every route table for every pair direct (all = 1) or relayed on rail-aligned relays (0). */
static void set_all(hmodel *h, int all) {
  for (int64_t y = 0; y < (int64_t)h->nodes * h->nodes; y++) h->rt->direct[y] = (uint8_t)all;
}

/* The model of every message of the current choice, from empty links. */
static void rebuild(hmodel *h) {
  memset(h->load, 0, (size_t)STAGES * h->nlinks * sizeof *h->load);
  memset(h->cls, 0, (size_t)STAGES * h->nlinks * CLASSES * sizeof *h->cls);
  memset(h->fwd, 0, (size_t)h->R * h->G * sizeof *h->fwd);
  memset(h->part, 0, (size_t)h->R * h->G * sizeof *h->part);
  for (int64_t b = 0; b < h->B->n; b++) {  /* pairs inside a node: joint's rows over NVLink */
    const sc_block *k = &h->B->b[b];
    if (node_of(h, k->p) == node_of(h, k->q)) msg(h, 0, k->q, k->p, h->hb[b].joint, 1);
  }
  for (int32_t N = 0; N < h->nodes; N++)
    for (int32_t H = 0; H < h->nodes; H++)
      if (N != H) pair_msgs(h, N, H, 1);
}

/* The joint selection of a block, kept while group's is made. */
typedef struct saved {
  uint8_t *rsel, *csel; int32_t *rmatch; int64_t mu, ent_partial, ent_remote;  /* joint's */
  uint8_t *grsel, *gcsel; int64_t gent_partial, gent_remote;                   /* group's */
} saved;

/* One routing: the node pairs' sides and the relays. */
typedef struct cand { uint8_t *direct; int32_t *rep, *agg; double est; } cand;

/* Rail-aligned relays everywhere. */
static void rail_relays(hmodel *h) {
  for (int32_t r = 0; r < h->R; r++)
    for (int32_t N = 0; N < h->nodes; N++)
      h->rt->rep[(int64_t)r * h->nodes + N] = h->rt->agg[(int64_t)r * h->nodes + N] = rail(h, N, r);
}

/* Copies the route's tables into c (save 1) or c's into the route (save 0). */
static void cand_copy(hmodel *h, cand *c, int save) {
  size_t np = (size_t)h->nodes * h->nodes, rn = (size_t)h->R * h->nodes * sizeof(int32_t);
  if (save) { memcpy(c->direct, h->rt->direct, np); memcpy(c->rep, h->rt->rep, rn); memcpy(c->agg, h->rt->agg, rn); }
  else { memcpy(h->rt->direct, c->direct, np); memcpy(h->rt->rep, c->rep, rn); memcpy(h->rt->agg, c->agg, rn); }
}

/* 1 if a and b route the same way. */
static int cand_same(const hmodel *h, const cand *a, const cand *b) {
  size_t np = (size_t)h->nodes * h->nodes, rn = (size_t)h->R * h->nodes * sizeof(int32_t);
  return !memcmp(a->direct, b->direct, np) && !memcmp(a->rep, b->rep, rn) && !memcmp(a->agg, b->agg, rn);
}

/* Steps 1-3 into the four candidates c[0..4): all direct, all relayed, greedy from each. */
static void decide(hmodel *h, cand *c) {
  sc_route *rt = h->rt;
  for (int k = 0; k < 4; k++) {
    double t, s;
    set_all(h, k % 2 == 0);
    rail_relays(h);
    rebuild(h);
    t = estimate(h, &s);
    if (k >= 2) {
      for (int w = 0; w < 4 && sweep(h, &t, &s) > 0; w++) {}
      place_relays(h, &t, &s);
      sweep(h, &t, &s);
    }
    c[k].est = t;
    cand_copy(h, &c[k], 1);
  }
  rt->est_direct_s = c[0].est;
  rt->est_relayed_s = c[1].est;
}

/* The blocks' selections as route rt has them: joint's in direct pairs, group's in relayed ones
 * (certificates left out: set once the choice is final). */
static void apply_selections(sc_blocks *B, const sc_route *rt, const saved *sv, int32_t G) {
  for (int64_t b = 0; b < B->n; b++) {
    sc_block *k = &B->b[b];
    if (k->p / G == k->q / G) continue;
    int d = rt->direct[(int64_t)(k->p / G) * rt->nodes + k->q / G];
    memcpy(k->rsel, d ? sv[b].rsel : sv[b].grsel, (size_t)k->nr);
    memcpy(k->csel, d ? sv[b].csel : sv[b].gcsel, (size_t)k->nc);
    k->ent_partial = d ? sv[b].ent_partial : sv[b].gent_partial;
    k->ent_remote = d ? sv[b].ent_remote : sv[b].gent_remote;
    k->mu = -1;
  }
}

shiro_status strategy_select_hybrid(sc_blocks *B, int32_t gpn, shiro_error *err) {
  int32_t R = B->parts, G = gpn < R ? gpn : R;
  if (G < 1) G = 1;
  int32_t nodes = (R + G - 1) / G;
  if (!B->route && !(B->route = calloc(1, sizeof *B->route)))
    return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory");
  sc_route *rt = B->route;
  if (!rt->have_links)  /* tsubame4's links (tools/sim/machines/tsubame4.json), N = 64 float rows */
    rt->links = (sc_links){G, G, 450e9, 1e-6, 25e9, 2e-6, 1e-6, 0, 256};
  hmodel hm = {.B = B, .L = rt->links, .R = R, .G = G, .nodes = nodes, .rt = rt};
  hmodel *h = &hm;
  h->L.gpus_per_node = G;  /* the plan's tiers decide the routes; the links are the machine's */
  if (h->L.nics_per_node < 1) h->L.nics_per_node = 1;
  h->nlinks = 2 * (int64_t)R + 2 * (int64_t)nodes * h->L.nics_per_node;
  size_t nb = (size_t)(B->n ? B->n : 1), rn = (size_t)R * nodes;
  saved *sv = calloc(nb, sizeof *sv);
  cand cd[4] = {{0}};
  h->load = calloc((size_t)STAGES * h->nlinks, sizeof *h->load);
  h->cls = calloc((size_t)STAGES * h->nlinks * CLASSES, sizeof *h->cls);
  h->hb = calloc(nb, sizeof *h->hb);
  h->nU = calloc(rn, sizeof *h->nU);
  h->nV = calloc(rn, sizeof *h->nV);
  h->fwd = calloc((size_t)R * G, sizeof *h->fwd);
  h->part = calloc((size_t)R * G, sizeof *h->part);
  rt->nodes = nodes;
  rt->gpn = G;
  rt->direct = calloc((size_t)nodes * nodes, 1);
  rt->rep = malloc(rn * sizeof *rt->rep);
  rt->agg = malloc(rn * sizeof *rt->agg);
  shiro_status st = SHIRO_OK;
  if (!sv || !h->load || !h->cls || !h->hb || !h->nU || !h->nV || !h->fwd || !h->part || !rt->direct ||
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
    if (k->p / G == k->q / G) continue;
    sv[b].rsel = malloc((size_t)k->nr + 1);
    sv[b].csel = malloc((size_t)k->nc + 1);
    if (!sv[b].rsel || !sv[b].csel) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping joint's covers");
      goto done;
    }
    memcpy(sv[b].rsel, k->rsel, (size_t)k->nr);
    memcpy(sv[b].csel, k->csel, (size_t)k->nc);
    sv[b].rmatch = k->rmatch;
    k->rmatch = NULL;  /* group frees a block's certificate: joint's is kept here */
    sv[b].mu = k->mu;
    sv[b].ent_partial = k->ent_partial;
    sv[b].ent_remote = k->ent_remote;
  }
  st = strategy_select_group(B, G, err);
  if (st != SHIRO_OK) goto done;
  for (int64_t b = 0; b < B->n; b++) {
    const sc_block *k = &B->b[b];
    for (int32_t i = 0; i < k->nr; i++) h->hb[b].grows += k->rsel[i];
    for (int32_t c = 0; c < k->nc; c++) h->hb[b].gcols += k->csel[c];
    if (k->p / G == k->q / G) continue;
    sv[b].grsel = malloc((size_t)k->nr + 1);
    sv[b].gcsel = malloc((size_t)k->nc + 1);
    if (!sv[b].grsel || !sv[b].gcsel) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory keeping group's covers");
      goto done;
    }
    memcpy(sv[b].grsel, k->rsel, (size_t)k->nr);
    memcpy(sv[b].gcsel, k->csel, (size_t)k->nc);
    sv[b].gent_partial = k->ent_partial;
    sv[b].gent_remote = k->ent_remote;
  }
  if (!unions(h)) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for the node pairs' unions");
    goto done;
  }
  for (int k = 0; k < 4; k++) {
    cd[k].direct = malloc((size_t)nodes * nodes);
    cd[k].rep = malloc(rn * sizeof *cd[k].rep);
    cd[k].agg = malloc(rn * sizeof *cd[k].agg);
    if (!cd[k].direct || !cd[k].rep || !cd[k].agg) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory for its candidates");
      goto done;
    }
  }
  decide(h, cd);
  int pick = 0;
  double best = 0;
  for (int k = 0; k < 4; k++) {  /* the first of equals: all direct, all relayed, then the greedy ones */
    int dup = 0;
    for (int j = 0; j < k; j++) dup |= cand_same(h, &cd[k], &cd[j]);
    if (dup) continue;
    double v = cd[k].est;
    if (rt->price) {
      cand_copy(h, &cd[k], 0);
      apply_selections(B, rt, sv, G);
      st = rt->price(rt->price_arg, B, &v, err);
      if (st != SHIRO_OK) goto done;
    }
    if (k == 0 || v < best) { best = v; pick = k; }
  }
  cand_copy(h, &cd[pick], 0);
  apply_selections(B, rt, sv, G);
  rt->est_s = cd[pick].est;
  rt->price_s = rt->price ? best : 0;
  rt->candidate = pick;
  for (int64_t b = 0; b < B->n; b++) {  /* joint's certificates back in direct pairs */
    sc_block *k = &B->b[b];
    if (k->p / G == k->q / G || !rt->direct[(int64_t)(k->p / G) * nodes + k->q / G]) continue;
    free(k->rmatch);
    k->rmatch = sv[b].rmatch;
    sv[b].rmatch = NULL;
    k->mu = sv[b].mu;
  }
  for (int32_t N = 0; N < nodes; N++)
    for (int32_t H = 0; H < nodes; H++) {
      int64_t y = (int64_t)N * nodes + H;
      if (N == H || !pair_has_blocks(h, N, H)) continue;
      if (rt->direct[y]) {
        rt->pairs_direct++;
        if (B->cert) {  /* its certificate is its blocks' matchings */
          free(B->cert[y]);
          B->cert[y] = NULL;
          memset(B->cert_at + y * (G + 1), 0, ((size_t)G + 1) * sizeof *B->cert_at);
        }
      } else {
        rt->pairs_relayed++;
      }
    }
  for (int32_t r = 0; r < R; r++)
    for (int32_t N = 0; N < nodes; N++) {
      int64_t x = (int64_t)r * nodes + N;
      if (N == node_of(h, r)) continue;
      int un = !rt->direct[(int64_t)N * nodes + node_of(h, r)] && h->nU[x] > 0;
      int vn = !rt->direct[(int64_t)node_of(h, r) * nodes + N] && h->nV[x] > 0;
      rt->relays_moved += (un && rt->rep[x] != rail(h, N, r)) + (vn && rt->agg[x] != rail(h, N, r));
    }
done:
  for (size_t b = 0; sv && b < nb && b < (size_t)B->n; b++) {
    free(sv[b].rsel); free(sv[b].csel); free(sv[b].rmatch); free(sv[b].grsel); free(sv[b].gcsel);
  }
  for (int k = 0; k < 4; k++) { free(cd[k].direct); free(cd[k].rep); free(cd[k].agg); }
  free(sv);
  free(h->load); free(h->cls); free(h->hb); free(h->nU); free(h->nV); free(h->fwd); free(h->part);
  if (st != SHIRO_OK) route_drop_tables(rt);
  return st;
}
