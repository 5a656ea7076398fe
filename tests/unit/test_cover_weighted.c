/* test_cover_weighted.c — minimum weight vertex covers by max-flow/min-cut.
 *
 * Checks, on random and hand-made weighted bipartite graphs: the cover covers
 * every edge, its weight (recomputed here from the weights) is what it claims
 * and equals the value of a flow computed here independently (plain Dinic on
 * the explicit network) and checked feasible (capacities, conservation): weak
 * duality then proves the cover minimum and the reported flow value right;
 * small cases also equal a brute-force minimum, unit weights give the
 * Hopcroft–Karp matching size, lexicographic weights (1000003·a + b) and
 * weights near 2^62 stay exact in int64, results are deterministic, bad
 * arguments give SHIRO_ERR_ARG and allocation failures SHIRO_ERR_NOMEM.
 * cover_lex (the fewest vertices, then the least small weight, from a
 * maximum matching) gives exactly cover_weighted's cover with weights W + w,
 * on small, sparse, dense and power-law graphs, and refuses matchings that are
 * not maximum or not matchings.
 * Returns 0 on success, 1 (after printing why) on the first failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "cover_ws.h"

#define RNG_SEED 0xD1B54A32D192ED03ull
#include "cover_test_util.h"

/* Random weights in [lo, hi], zero with probability pz. */
static int64_t *weights_random(int32_t n, int64_t lo, int64_t hi, double pz) {
  int64_t *w = malloc(((size_t)n + 1) * sizeof *w);
  if (!w) exit(1);
  for (int32_t i = 0; i < n; i++)
    w[i] = rng_unit() < pz ? 0 : lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
  return w;
}

/* ---- an independent maximum flow: the certificate the solver does not return ----
 * cover_weighted reports only the flow's value, so the test computes a flow
 * of its own on the network of cover.h's contract and checks it feasible:
 * any feasible flow's value is at most any cover's weight, so a cover that
 * weighs what a feasible flow carries is minimum. If this reference flow were
 * not maximum the test would fail (a false alarm), never pass wrongly. */

/* The network, explicit: vertex s = 0, row i = 1 + i, column j = 1 + nr + j,
 * t = 1 + nr + nc; arc 2a is an arc of the network, 2a + 1 its reverse. */
typedef struct ref_net {
  int32_t n; /* vertices: nr + nc + 2 */
  int64_t *cap; /* [2 arcs] residual capacity of each arc and its reverse */
  int32_t *to; /* [2 arcs] head of each */
  int64_t *first; /* [n+1] arcs leaving v: out[first[v] .. first[v+1]) */
  int64_t *out; /* [2 arcs] arc ids by tail */
  int64_t *it; /* [n] DFS: next arc to try (index into out) */
  int32_t *level; /* [n] BFS distance from s, -1 unreached */
  int32_t *queue; /* [n] */
} ref_net;

/* Adds arc a = (u -> v, capacity c) and its reverse (v -> u, 0) to the
 * arc arrays, and counts them in deg. */
static void ref_arc(ref_net *N, int64_t a, int32_t u, int32_t v, int64_t c, int64_t *deg) {
  N->to[2 * a] = v, N->cap[2 * a] = c;
  N->to[2 * a + 1] = u, N->cap[2 * a + 1] = 0;
  deg[u]++, deg[v]++;
}

/* Dinic's BFS: levels from s over arcs with residual capacity. Returns 1 if t is reached. */
static int ref_bfs(ref_net *N) {
  int32_t head = 0, tail = 0;
  for (int32_t v = 0; v < N->n; v++) N->level[v] = -1;
  N->level[0] = 0;
  N->queue[tail++] = 0;
  while (head < tail) {
    int32_t u = N->queue[head++];
    for (int64_t k = N->first[u]; k < N->first[u + 1]; k++) {
      int64_t a = N->out[k];
      if (N->cap[a] > 0 && N->level[N->to[a]] < 0) {
        N->level[N->to[a]] = N->level[u] + 1;
        N->queue[tail++] = N->to[a];
      }
    }
  }
  return N->level[N->n - 1] >= 0;
}

/* Dinic's DFS: pushes up to `limit` from u to t along level-increasing arcs; returns what it pushed. */
static int64_t ref_dfs(ref_net *N, int32_t u, int64_t limit) {
  if (u == N->n - 1) return limit;
  for (; N->it[u] < N->first[u + 1]; N->it[u]++) {
    int64_t a = N->out[N->it[u]];
    int32_t v = N->to[a];
    if (N->cap[a] <= 0 || N->level[v] != N->level[u] + 1) continue;
    int64_t d = ref_dfs(N, v, limit < N->cap[a] ? limit : N->cap[a]);
    if (d > 0) {
      N->cap[a] -= d;
      N->cap[a ^ 1] += d;
      return d;
    }
  }
  return 0;
}

/* A maximum flow on g's network: fs[i] on s -> row i, fe[k - Gp[0]] on the
 * edge Gj[k] of row i, ft[j] on column j -> t. (An edge's capacity is
 * "infinite"; rw[i] bounds it as well, since row i receives at most rw[i].) */
static void ref_max_flow(const graph *g, const int64_t *rw, const int64_t *cw, int64_t *fs, int64_t *fe, int64_t *ft) {
  int32_t nr = g->nr, nc = g->nc;
  int64_t ne = g->Gp[nr] - g->Gp[0], arcs = nr + ne + nc;
  ref_net N = {.n = nr + nc + 2};
  N.cap = malloc((size_t)(2 * arcs + 1) * sizeof *N.cap);
  N.to = malloc((size_t)(2 * arcs + 1) * sizeof *N.to);
  N.out = malloc((size_t)(2 * arcs + 1) * sizeof *N.out);
  N.first = calloc((size_t)N.n + 1, sizeof *N.first);
  N.it = malloc((size_t)N.n * sizeof *N.it);
  N.level = malloc((size_t)N.n * sizeof *N.level);
  N.queue = malloc((size_t)N.n * sizeof *N.queue);
  if (!N.cap || !N.to || !N.out || !N.first || !N.it || !N.level || !N.queue) exit(1);
  int64_t *deg = N.first + 1, a = 0;
  for (int32_t i = 0; i < nr; i++) ref_arc(&N, a++, 0, 1 + i, rw[i], deg);
  for (int32_t i = 0; i < nr; i++)
    for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++) ref_arc(&N, a++, 1 + i, 1 + nr + g->Gj[k], rw[i], deg);
  for (int32_t j = 0; j < nc; j++) ref_arc(&N, a++, 1 + nr + j, N.n - 1, cw[j], deg);
  for (int32_t v = 0; v < N.n; v++) N.first[v + 1] += N.first[v];
  for (int32_t v = 0; v < N.n; v++) N.it[v] = N.first[v];
  for (int64_t b = 0; b < 2 * arcs; b++) N.out[N.it[N.to[b ^ 1]]++] = b; /* by tail: the reverse's head */
  while (ref_bfs(&N)) {
    for (int32_t v = 0; v < N.n; v++) N.it[v] = N.first[v];
    while (ref_dfs(&N, 0, INT64_MAX) > 0) {
    }
  }
  /* the flow on an arc is what its reverse can send back */
  for (int32_t i = 0; i < nr; i++) fs[i] = N.cap[2 * i + 1];
  for (int64_t e = 0; e < ne; e++) fe[e] = N.cap[2 * (nr + e) + 1];
  for (int32_t j = 0; j < nc; j++) ft[j] = N.cap[2 * (nr + ne + j) + 1];
  free(N.cap), free(N.to), free(N.out), free(N.first), free(N.it), free(N.level), free(N.queue);
}

/* Checks that (fs, fe, ft) is a feasible flow of g's network (0 <= fs[i] <=
 * rw[i], 0 <= ft[j] <= cw[j], fe >= 0; what enters each row and column
 * leaves it) and sets *value to what leaves s. Returns 0, or 1 after saying why. */
static int check_flow(const graph *g, const int64_t *rw, const int64_t *cw, const int64_t *fs, const int64_t *fe,
                      const int64_t *ft, int64_t *value) {
  int64_t *into = calloc((size_t)g->nc + 1, sizeof *into), v = 0;
  if (!into) exit(1);
  int bad = 0;
  for (int32_t i = 0; i < g->nr && !bad; i++) {
    int64_t left = 0;
    for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++) {
      int64_t f = fe[k - g->Gp[0]];
      if (f < 0) bad = fprintf(stderr, "flow %lld < 0 on edge (%d,%d)\n", (long long)f, i, g->Gj[k]);
      left += f;
      into[g->Gj[k]] += f;
    }
    if (fs[i] < 0 || fs[i] > rw[i]) bad = fprintf(stderr, "flow %lld into row %d, capacity %lld\n", (long long)fs[i], i, (long long)rw[i]);
    if (left != fs[i]) bad = fprintf(stderr, "row %d: %lld in, %lld out\n", i, (long long)fs[i], (long long)left);
    v += fs[i];
  }
  for (int32_t j = 0; j < g->nc && !bad; j++) {
    if (ft[j] < 0 || ft[j] > cw[j]) bad = fprintf(stderr, "flow %lld out of column %d, capacity %lld\n", (long long)ft[j], j, (long long)cw[j]);
    if (into[j] != ft[j]) bad = fprintf(stderr, "column %d: %lld in, %lld out\n", j, (long long)into[j], (long long)ft[j]);
  }
  free(into);
  *value = v;
  return bad != 0;
}

/* Certifies a cover of g that weighs `weight` (already checked to cover every
 * edge and to weigh that): a feasible flow of that value exists, so no cover
 * weighs less; and the solver's reported flow value `flow` is that maximum. */
static int check_certified(const graph *g, const int64_t *rw, const int64_t *cw, int64_t weight, int64_t flow) {
  size_t ne = (size_t)(g->Gp[g->nr] - g->Gp[0]);
  int64_t *fs = malloc(((size_t)g->nr + 1) * sizeof *fs), *fe = malloc((ne + 1) * sizeof *fe);
  int64_t *ft = malloc(((size_t)g->nc + 1) * sizeof *ft), value = -1;
  if (!fs || !fe || !ft) exit(1);
  ref_max_flow(g, rw, cw, fs, fe, ft);
  int bad = check_flow(g, rw, cw, fs, fe, ft, &value);
  free(fs), free(fe), free(ft);
  if (bad) return 1;
  CHECK(value == weight, "the cover weighs %lld, a feasible flow carries %lld: %s", (long long)weight, (long long)value,
        value < weight ? "the cover is not proven minimum" : "no cover can weigh less than a flow");
  CHECK(flow == value, "reported flow %lld, maximum flow %lld", (long long)flow, (long long)value);
  return 0;
}

/* Checks that the cover covers every edge (0/1 entries) and weighs `weight`. */
static int check_cover(const graph *g, const int64_t *rw, const int64_t *cw, const uint8_t *rcov,
                       const uint8_t *ccov, int64_t weight) {
  int64_t w = 0;
  for (int32_t i = 0; i < g->nr; i++) {
    CHECK(rcov[i] <= 1, "rcov[%d] = %d", i, rcov[i]);
    if (rcov[i]) w += rw[i];
  }
  for (int32_t j = 0; j < g->nc; j++) {
    CHECK(ccov[j] <= 1, "ccov[%d] = %d", j, ccov[j]);
    if (ccov[j]) w += cw[j];
  }
  for (int32_t i = 0; i < g->nr; i++)
    for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++)
      CHECK(rcov[i] || ccov[g->Gj[k]], "edge (%d,%d) uncovered", i, g->Gj[k]);
  CHECK(w == weight, "cover weighs %lld, reported %lld", (long long)w, (long long)weight);
  return 0;
}

/* Minimum cover weight by enumerating the row subsets (nr <= 20): the rows
 * outside the subset need all their columns. */
static int64_t brute_weight(const graph *g, const int64_t *rw, const int64_t *cw) {
  int64_t best = INT64_MAX;
  uint8_t need[64];
  for (uint32_t s = 0; s < (1u << g->nr); s++) {
    memset(need, 0, sizeof need);
    int64_t w = 0;
    for (int32_t i = 0; i < g->nr; i++) {
      if (s >> i & 1) {
        w += rw[i];
        continue;
      }
      for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++)
        if (!need[g->Gj[k]]) need[g->Gj[k]] = 1, w += cw[g->Gj[k]];
    }
    if (w < best) best = w;
  }
  return best;
}

/* Solves g with weights rw, cw and checks the answer; `expect` >= 0 is the
 * known optimum. Sets *out (if not NULL) to the weight. */
static int check_weighted(const graph *g, const int64_t *rw, const int64_t *cw, cover_ws *ws,
                          int64_t expect, const char *what, int64_t *out) {
  uint8_t *rcov = malloc((size_t)g->nr + 1), *ccov = malloc((size_t)g->nc + 1);
  if (!rcov || !ccov) exit(1);
  int64_t weight = -1, flow = -2;
  shiro_status st = cover_weighted(g->nr, g->nc, g->Gp, g->Gj, rw, cw, ws, rcov, ccov, &weight,
                                   &flow);
  int bad = st != SHIRO_OK || check_cover(g, rw, cw, rcov, ccov, weight) ||
      check_certified(g, rw, cw, weight, flow) || (expect >= 0 && weight != expect);
  if (bad)
    fprintf(stderr, "%s (%d x %d): status %d, weight %lld, flow %lld, expected %lld\n", what,
            g->nr, g->nc, st, (long long)weight, (long long)flow, (long long)expect);
  if (out) *out = weight;
  free(rcov);
  free(ccov);
  return bad;
}

/* Unit weights on g: the weight must equal the Hopcroft–Karp matching size. */
static int check_unit(const graph *g, cover_ws *ws, const char *what) {
  int64_t *one = malloc(((size_t)g->nr + (size_t)g->nc + 1) * sizeof *one);
  int32_t *m = malloc(((size_t)g->nr + (size_t)g->nc + 1) * sizeof *m);
  if (!one || !m) exit(1);
  for (int64_t i = 0; i < (int64_t)g->nr + g->nc; i++) one[i] = 1;
  int64_t size = -1;
  int bad = cover_max_matching(g->nr, g->nc, g->Gp, g->Gj, ws, m, m + g->nr, &size) != SHIRO_OK ||
      check_weighted(g, one, one + g->nr, ws, size, what, NULL);
  free(one);
  free(m);
  return bad;
}

/* Hundreds of small weighted graphs against brute force. Returns #graphs or -1. */
static int test_small_random(cover_ws *ws) {
  int n = 0;
  static const double dens[] = {0.05, 0.15, 0.3, 0.5, 0.8, 1.0};
  for (int t = 0; t < 1500; t++) {
    int32_t nr = rng_below(9), nc = rng_below(9);
    graph g = graph_random(nr, nc, dens[rng_below(6)], rng_below(4), rng_below(3));
    double pz = 0.25 * rng_unit();
    int64_t *rw = weights_random(nr, 0, 9, pz), *cw = weights_random(nc, 0, 9, pz);
    char what[64];
    snprintf(what, sizeof what, "small weighted #%d", t);
    int bad = check_weighted(&g, rw, cw, ws, brute_weight(&g, rw, cw), what, NULL);
    snprintf(what, sizeof what, "small unit #%d", t);
    bad = bad || check_unit(&g, ws, what);
    free(rw);
    free(cw);
    graph_free(&g);
    if (bad) return -1;
    n++;
  }
  /* Medium, with wider weights: brute force over 2^14 row subsets. */
  for (int t = 0; t < 40; t++) {
    int32_t nr = 10 + rng_below(5), nc = 5 + rng_below(30);
    graph g = graph_random(nr, nc, 0.03 + 0.25 * rng_unit(), 3, 0);
    int64_t *rw = weights_random(nr, 0, 1000, 0.1), *cw = weights_random(nc, 0, 1000, 0.1);
    char what[64];
    snprintf(what, sizeof what, "medium weighted #%d", t);
    int bad = check_weighted(&g, rw, cw, ws, brute_weight(&g, rw, cw), what, NULL);
    free(rw);
    free(cw);
    graph_free(&g);
    if (bad) return -1;
    n++;
  }
  return n;
}

/* Lexicographic weights 1000003·a + b (fewest a first, then fewest b), and
 * weights near 2^62: exact against brute force; with a = 1 everywhere and
 * sum(b) < 1000003 the a-part is the minimum cardinality cover. */
static int test_lexicographic(cover_ws *ws) {
  const int64_t M = 1000003;
  for (int t = 0; t < 300; t++) {
    int32_t nr = 1 + rng_below(8), nc = 1 + rng_below(8);
    graph g = graph_random(nr, nc, 0.1 + 0.6 * rng_unit(), 2, 0);
    int64_t *rw = weights_random(nr, 0, 9, 0), *cw = weights_random(nc, 0, 9, 0);
    int64_t *rb = weights_random(nr, 0, 999, 0), *cb = weights_random(nc, 0, 999, 0);
    int64_t wt;
    for (int32_t i = 0; i < nr; i++) rw[i] = M * (t % 2 ? rw[i] : 1) + rb[i];
    for (int32_t j = 0; j < nc; j++) cw[j] = M * (t % 2 ? cw[j] : 1) + cb[j];
    char what[64];
    snprintf(what, sizeof what, "lexicographic #%d", t);
    int bad = check_weighted(&g, rw, cw, ws, brute_weight(&g, rw, cw), what, &wt);
    if (!bad && t % 2 == 0) {
      int32_t m[16];
      int64_t size;
      bad = cover_max_matching(nr, nc, g.Gp, g.Gj, ws, m, m + nr, &size) != SHIRO_OK ||
          wt / M != size;
      if (bad) fprintf(stderr, "%s: a-part %lld, matching %lld\n", what, (long long)(wt / M),
                       (long long)size);
    }
    /* Huge weights: 2^62 / 32 scale, sums stay below 2^62. */
    for (int32_t i = 0; i < nr && !bad; i++) rw[i] = (rw[i] % 1000) * ((int64_t)1 << 47) + rb[i];
    for (int32_t j = 0; j < nc && !bad; j++) cw[j] = (cw[j] % 1000) * ((int64_t)1 << 47) + cb[j];
    snprintf(what, sizeof what, "huge weights #%d", t);
    bad = bad || check_weighted(&g, rw, cw, ws, brute_weight(&g, rw, cw), what, NULL);
    free(rw);
    free(cw);
    free(rb);
    free(cb);
    graph_free(&g);
    if (bad) return 1;
  }
  return 0;
}

/* Larger graphs: validity, weight == flow, unit weights == matching size,
 * scaling, determinism (fresh vs reused workspace). */
static int test_large(cover_ws *ws) {
  for (int t = 0; t < 4; t++) {
    graph g;
    if (t == 0) g = graph_random(3000, 2000, 30000.0 / (3000.0 * 2000.0), 50, 0);
    else if (t == 1) g = graph_powerlaw(4000, 3000, 40000);
    else if (t == 2) g = graph_random(3000, 3000, 1.5 / 3000.0, 10, 3);
    else g = graph_powerlaw(20000, 30000, 200000);
    int64_t *rw = weights_random(g.nr, 0, 100, 0.05), *cw = weights_random(g.nc, 0, 100, 0.05);
    char what[64];
    snprintf(what, sizeof what, "large weighted #%d", t);
    int64_t w1, w2;
    if (check_weighted(&g, rw, cw, ws, -1, what, &w1)) return 1;
    snprintf(what, sizeof what, "large unit #%d", t);
    if (check_unit(&g, ws, what)) return 1;
    /* Scaling every weight by 7 scales the optimum by 7. */
    for (int32_t i = 0; i < g.nr; i++) rw[i] *= 7;
    for (int32_t j = 0; j < g.nc; j++) cw[j] *= 7;
    snprintf(what, sizeof what, "large scaled #%d", t);
    if (check_weighted(&g, rw, cw, ws, 7 * w1, what, &w2)) return 1;
    /* Determinism. */
    cover_ws *fresh = cover_ws_new();
    size_t r = (size_t)g.nr, c = (size_t)g.nc;
    uint8_t *a = malloc(r + c), *b = malloc(r + c);
    if (!fresh || !a || !b) exit(1);
    int64_t x1, f1, x2, f2;
    int ok = cover_weighted(g.nr, g.nc, g.Gp, g.Gj, rw, cw, ws, a, a + r, &x1, &f1) == SHIRO_OK &&
        cover_weighted(g.nr, g.nc, g.Gp, g.Gj, rw, cw, fresh, b, b + r, &x2, &f2) ==
            SHIRO_OK &&
        x1 == x2 && f1 == f2 && x1 == w2 && !memcmp(a, b, r + c);
    printf("  large #%d: %d x %d, %lld edges, weight %lld\n", t, g.nr, g.nc,
           (long long)(g.Gp[g.nr] - g.Gp[0]), (long long)w1);
    free(a);
    free(b);
    cover_ws_free(fresh);
    free(rw);
    free(cw);
    graph_free(&g);
    CHECK(ok, "large #%d: not deterministic", t);
  }
  return 0;
}

/* Hand-made graphs with known answers. */
static int test_edge_cases(cover_ws *ws) {
  uint8_t rc[16], cc[16];
  int64_t w = -1, f = -1;
  CHECK(cover_weighted(0, 0, NULL, NULL, NULL, NULL, ws, NULL, NULL, &w, &f) == SHIRO_OK &&
            w == 0 && f == 0,
        "0x0");
  int64_t gp5[6] = {0, 0, 0, 0, 0, 0}, w5[5] = {3, 0, 2, 9, 1};
  CHECK(cover_weighted(5, 5, gp5, NULL, w5, w5, ws, rc, cc, &w, &f) == SHIRO_OK && w == 0 && f == 0,
        "5x5 no edges");
  for (int i = 0; i < 5; i++) CHECK(rc[i] == 0 && cc[i] == 0, "no edges: vertex %d in cover", i);
  CHECK(cover_weighted(0, 5, NULL, NULL, NULL, w5, ws, NULL, cc, &w, &f) == SHIRO_OK && w == 0,
        "0x5");
  /* K_{a,b} with all weights x on rows and y on columns: min(a x, b y). */
  for (int32_t a = 1; a <= 6; a++) {
    for (int32_t b = 1; b <= 6; b++) {
      graph g = graph_random(a, b, 1.0, 2, 0);
      int64_t rw[8], cw[8], x = 1 + rng_below(9), y = 1 + rng_below(9);
      for (int i = 0; i < a; i++) rw[i] = x;
      for (int j = 0; j < b; j++) cw[j] = y;
      int64_t e = a * x < b * y ? a * x : b * y;
      if (check_weighted(&g, rw, cw, ws, e, "complete", NULL)) return 1;
      graph_free(&g);
    }
  }
  /* Star: a heavy centre loses to cheap leaves, a cheap one wins. */
  {
    int32_t ei[4] = {0, 0, 0, 0}, ej[4] = {0, 1, 2, 3};
    graph g = graph_from_edges(1, 4, 4, ei, ej, 0);
    int64_t heavy[1] = {10}, cheap[1] = {3}, leaves[4] = {2, 2, 2, 2};
    if (check_weighted(&g, heavy, leaves, ws, 8, "star heavy", NULL)) return 1;
    if (check_weighted(&g, cheap, leaves, ws, 3, "star cheap", NULL)) return 1;
    graph_free(&g);
  }
  /* Duplicates of one edge: the cheaper end. */
  {
    int32_t ei[4] = {1, 1, 1, 1}, ej[4] = {0, 0, 0, 0};
    graph g = graph_from_edges(2, 2, 4, ei, ej, 1);
    int64_t rw[2] = {5, 7}, cw[2] = {6, 1};
    if (check_weighted(&g, rw, cw, ws, 6, "duplicates", NULL)) return 1;
    graph_free(&g);
  }
  /* All-zero weights: everything can be covered for free. */
  {
    graph g = graph_random(6, 6, 0.5, 0, 0);
    int64_t z[6] = {0};
    if (check_weighted(&g, z, z, ws, 0, "zero weights", NULL)) return 1;
    graph_free(&g);
  }
  return 0;
}

/* Bad arguments: each must give SHIRO_ERR_ARG. */
static int test_bad_args(cover_ws *ws) {
  int64_t gp[4] = {0, 2, 3, 4}, rw[3] = {1, 2, 3}, cw[3] = {3, 2, 1}, w, f;
  int32_t gj[4] = {0, 1, 1, 2};
  uint8_t rc[3], cc[3];
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_OK, "base");
  CHECK(cover_weighted(-1, 3, gp, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "nr < 0");
  CHECK(cover_weighted(3, -1, gp, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "nc < 0");
  CHECK(cover_weighted(3, 2, gp, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "column = nc");
  CHECK(cover_weighted(3, 3, NULL, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "Gp NULL");
  CHECK(cover_weighted(3, 3, gp, NULL, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "Gj NULL");
  CHECK(cover_weighted(3, 3, gp, gj, NULL, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "rw NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, NULL, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "cw NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, NULL, rc, cc, &w, &f) == SHIRO_ERR_ARG, "ws NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, ws, NULL, cc, &w, &f) == SHIRO_ERR_ARG, "rcov NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, ws, rc, NULL, &w, &f) == SHIRO_ERR_ARG, "ccov NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, ws, rc, cc, NULL, &f) == SHIRO_ERR_ARG, "weight NULL");
  CHECK(cover_weighted(3, 3, gp, gj, rw, cw, ws, rc, cc, &w, NULL) == SHIRO_ERR_ARG, "flow NULL");
  int64_t negw[3] = {1, -1, 3};
  CHECK(cover_weighted(3, 3, gp, gj, negw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "weight < 0");
  CHECK(cover_weighted(3, 3, gp, gj, rw, negw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG, "cw < 0");
  int64_t big[3] = {INT64_MAX / 2, INT64_MAX / 2, 2};
  CHECK(cover_weighted(3, 3, gp, gj, big, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG,
        "weight sum overflows");
  int64_t fits[3] = {INT64_MAX / 4, INT64_MAX / 4, INT64_MAX / 4};
  CHECK(cover_weighted(3, 3, gp, gj, fits, cw, ws, rc, cc, &w, &f) == SHIRO_OK && w == f &&
            w == cw[0] + cw[1] + cw[2],
        "weights near 2^61: %lld", (long long)w);
  int64_t dec[4] = {0, 3, 2, 4};
  CHECK(cover_weighted(3, 3, dec, gj, rw, cw, ws, rc, cc, &w, &f) == SHIRO_ERR_ARG,
        "Gp decreasing");
  return 0;
}

/* Every allocation failure gives SHIRO_ERR_NOMEM, outputs untouched. */
static int test_nomem(void) {
  graph g = graph_random(30, 40, 0.1, 5, 0);
  int64_t *rw = weights_random(30, 0, 9, 0.1), *cw = weights_random(40, 0, 9, 0.1);
  uint8_t ref[70], out[70];
  int64_t w, f, refw;
  cover_ws *ws = cover_ws_new();
  CHECK(ws, "cover_ws_new");
  CHECK(cover_weighted(30, 40, g.Gp, g.Gj, rw, cw, ws, ref, ref + 30, &refw, &f) == SHIRO_OK,
        "ref");
  cover_ws_free(ws);
  int nomem = 0;
  for (int budget = 0; budget < 10; budget++) {
    ws = cover_ws_new();
    CHECK(ws, "cover_ws_new");
    cover_ws_set_grow_budget(ws, budget);
    memset(out, 0xAB, sizeof out);
    w = f = -5;
    shiro_status st = cover_weighted(30, 40, g.Gp, g.Gj, rw, cw, ws, out, out + 30, &w, &f);
    if (st == SHIRO_ERR_NOMEM) {
      for (int i = 0; i < 70; i++) CHECK(out[i] == 0xAB, "output written before NOMEM");
      CHECK(w == -5 && f == -5, "weight written before NOMEM");
      nomem++;
      cover_ws_set_grow_budget(ws, -1);
      st = cover_weighted(30, 40, g.Gp, g.Gj, rw, cw, ws, out, out + 30, &w, &f);
    }
    CHECK(st == SHIRO_OK && w == refw && !memcmp(out, ref, 70), "budget %d: status %d", budget, st);
    cover_ws_free(ws);
  }
  CHECK(nomem >= 2, "only %d allocation failures exercised", nomem);
  free(rw);
  free(cw);
  graph_free(&g);
  return 0;
}

/* cover_lex against cover_weighted with weights W + rh, W + ch on g: the same
 * cover, vertex for vertex, and the same weight; the matching's size vertices. */
static int check_lex(const graph *g, const int64_t *rh, const int64_t *ch, cover_ws *ws, const char *what) {
  int32_t nr = g->nr, nc = g->nc;
  size_t r = (size_t)nr, c = (size_t)nc;
  int32_t *m = malloc((r + c + 1) * sizeof *m);
  int64_t *rw = malloc((r + 1) * sizeof *rw), *cw = malloc((c + 1) * sizeof *cw);
  uint8_t *a = malloc(r + c + 1), *b = malloc(r + c + 1), *d = malloc(r + c + 1);
  if (!m || !rw || !cw || !a || !b || !d) exit(1);
  int64_t W = 1, size = -1, w = -1, bound = -2, ww = -1, wf = -2, n = 0, wm = -3, bm = -4;
  for (int32_t i = 0; i < nr; i++) W += rh[i];
  for (int32_t j = 0; j < nc; j++) W += ch[j];
  for (int32_t i = 0; i < nr; i++) rw[i] = W + rh[i];
  for (int32_t j = 0; j < nc; j++) cw[j] = W + ch[j];
  shiro_status s1 = cover_max_matching(nr, nc, g->Gp, g->Gj, ws, m, m + r, &size);
  shiro_status s2 = s1 ? s1 : cover_lex(nr, nc, g->Gp, g->Gj, rh, ch, m, m + r, ws, a, a + r, &w, &bound);
  shiro_status s3 = cover_weighted(nr, nc, g->Gp, g->Gj, rw, cw, ws, b, b + r, &ww, &wf);
  /* the form that trusts the matcher's output: the same cover */
  shiro_status s4 = s1 ? s1 : cover_lex_matched(nr, nc, g->Gp, g->Gj, rh, ch, m, m + r, size, ws, d, d + r, &wm, &bm);
  /* Y by the transpose search alone (search budget 0), and by searches that
   * hand over to it (a budget of 1..7 edge visits): the same cover */
  int other = 0;
  for (int v = 0; v < 2 && !s1 && !other; v++) {
    int64_t wv = -1, bv = -2;
    cover_ws_set_search_budget(ws, v == 0 ? 0 : 1 + nr % 7);
    shiro_status sv = cover_lex_matched(nr, nc, g->Gp, g->Gj, rh, ch, m, m + r, size, ws, d, d + r, &wv, &bv);
    cover_ws_set_search_budget(ws, -1);
    other = sv != SHIRO_OK || wv != w || bv != bound || memcmp(a, d, r + c);
  }
  for (size_t v = 0; v < r + c; v++) n += a[v];
  int bad = other || s1 || s2 || s3 || s4 || w != bound || ww != W * size + w || n != size || memcmp(a, b, r + c) ||
      wm != w || bm != bound || memcmp(a, d, r + c) || check_cover(g, rh, ch, a, a + r, w) ||
      check_cover(g, rw, cw, b, b + r, ww) || check_certified(g, rw, cw, ww, wf);
  if (bad)
    fprintf(stderr, "%s (%d x %d): status %d/%d/%d, lex weight %lld bound %lld, %lld vertices for %lld pairs, "
                    "weighted %lld = W %lld x %lld + %lld?, same cover: %s, other paths agree: %s\n",
            what, nr, nc, s1, s2, s3, (long long)w,
            (long long)bound, (long long)n, (long long)size, (long long)ww, (long long)W, (long long)size,
            (long long)(ww - W * size), memcmp(a, b, r + c) ? "no" : "yes", other ? "no" : "yes");
  free(m);
  free(rw);
  free(cw);
  free(a);
  free(b);
  free(d);
  return bad;
}

/* cover_lex: random small and medium graphs (hop weights 0..3 as the group
 * strategy has, and 0..9), sparse ones with long alternating paths, and
 * power-law ones like R-MAT blocks; then matchings it must refuse. */
static int test_lex(cover_ws *ws) {
  char what[64];
  for (int t = 0; t < 2000; t++) {
    int32_t nr = rng_below(14), nc = rng_below(14);
    static const double dens[] = {0.05, 0.12, 0.25, 0.5, 0.9};
    graph g = graph_random(nr, nc, dens[rng_below(5)], rng_below(3), rng_below(3));
    int64_t top = t % 3 ? 3 : 9;
    int64_t *rh = weights_random(nr, 0, top, 0.2), *ch = weights_random(nc, 0, top, 0.2);
    snprintf(what, sizeof what, "lex small #%d", t);
    int bad = check_lex(&g, rh, ch, ws, what);
    free(rh);
    free(ch);
    graph_free(&g);
    if (bad) return 1;
  }
  for (int t = 0; t < 12; t++) {
    graph g = t % 3 == 0 ? graph_random(2000, 1500, 1.2 / 1500.0, 5, 0)
        : t % 3 == 1     ? graph_powerlaw(3000, 2500, 9000 + 3000 * t)
                         : graph_random(400, 500, 0.01, 20, 2);
    int64_t *rh = weights_random(g.nr, 0, 3, 0.3), *ch = weights_random(g.nc, 0, 3, 0.3);
    snprintf(what, sizeof what, "lex large #%d", t);
    int bad = check_lex(&g, rh, ch, ws, what);
    free(rh);
    free(ch);
    graph_free(&g);
    if (bad) return 1;
  }
  /* A long alternating chain from a free column whose rows are numbered in a
   * zigzag (0, L-1, 1, L-2, ...), so that Y spreads against the row order:
   * Y's searches go deep and come back. Plus a second chain the other way
   * round and random extra edges. */
  for (int t = 0; t < 20; t++) {
    int32_t L = 8 + 6 * t, nr = 2 * L, nc = 2 * L + 2;
    int32_t *ei = malloc((size_t)(8 * L + 8) * sizeof *ei), *ej = malloc((size_t)(8 * L + 8) * sizeof *ej);
    if (!ei || !ej) exit(1);
    int64_t ne = 0;
    for (int32_t c = 0; c < 2; c++)
      for (int32_t k = 0; k < L; k++) {
        int32_t z = k % 2 ? L - 1 - k / 2 : k / 2, row = c ? 2 * L - 1 - z : z, col = c * L + k;
        ei[ne] = row, ej[ne++] = col; /* the pair (row, col) */
        ei[ne] = row, ej[ne++] = k ? col - 1 : 2 * L + c; /* from the previous pair, or the free column */
      }
    for (int32_t k = 0; k < L / 2; k++) ei[ne] = rng_below(nr), ej[ne++] = rng_below(2 * L);
    graph g = graph_from_edges(nr, nc, ne, ei, ej, 0);
    int64_t *rh = weights_random(nr, 0, 3, 0.2), *ch = weights_random(nc, 0, 3, 0.2);
    snprintf(what, sizeof what, "lex zigzag chain #%d", t);
    int bad = check_lex(&g, rh, ch, ws, what);
    free(ei);
    free(ej);
    free(rh);
    free(ch);
    graph_free(&g);
    if (bad) return 1;
  }
  /* A search for Y that succeeds after a side branch: row 0 (matched to
   * column 0) reaches row 1 through column 1, a dead end (row 1's only edge
   * is its own pair), then row 2 through column 2, which sees free column 3.
   * Rows 0 and 2 are in Y; row 1 is not, and its pair is alone, so it takes
   * its lighter end, column 1. */
  {
    int32_t ei[6] = {0, 0, 0, 1, 2, 2}, ej[6] = {0, 1, 2, 1, 2, 3};
    graph g = graph_from_edges(3, 4, 6, ei, ej, 0);
    int64_t rh[3] = {0, 5, 0}, ch[4] = {0, 1, 0, 0}, wy = -1, by = -1;
    int32_t my[7];
    uint8_t cy[7];
    static const uint8_t want[7] = {1, 0, 1, 0, 1, 0, 0};
    CHECK(check_lex(&g, rh, ch, ws, "lex side branch") == 0, "lex side branch");
    CHECK(cover_max_matching(3, 4, g.Gp, g.Gj, ws, my, my + 3, &wy) == SHIRO_OK && wy == 3, "side branch matching");
    CHECK(cover_lex(3, 4, g.Gp, g.Gj, rh, ch, my, my + 3, ws, cy, cy + 3, &wy, &by) == SHIRO_OK && wy == 1 &&
              !memcmp(cy, want, 7),
          "side branch: weight %lld, cover %d%d%d|%d%d%d%d", (long long)wy, cy[0], cy[1],
          cy[2], cy[3], cy[4], cy[5], cy[6]);
    graph_free(&g);
  }
  /* A path r0-c0-r1-c1: {c0, r1} (weights) vs {r0, c1}; a non-maximum and a broken matching. */
  int64_t gp[3] = {0, 1, 3}, h[2] = {0, 0};
  int32_t gj[3] = {0, 0, 1}, rm[2] = {0, -1}, cm[2] = {0, -1}, bad_rm[2] = {1, -1}, bad_cm[2] = {-1, 1};
  uint8_t rc[2], cc[2];
  int64_t w, bnd;
  CHECK(cover_lex(2, 2, gp, gj, h, h, rm, cm, ws, rc, cc, &w, &bnd) == SHIRO_ERR_ARG, "lex: non-maximum matching");
  CHECK(cover_lex(2, 2, gp, gj, h, h, bad_rm, bad_cm, ws, rc, cc, &w, &bnd) == SHIRO_ERR_ARG, "lex: not a matching");
  CHECK(cover_lex_matched(2, 2, gp, gj, h, h, rm, cm, 1, ws, rc, cc, &w, &bnd) == SHIRO_ERR_ARG,
        "lex_matched: non-maximum matching");
  CHECK(cover_lex_matched(2, 2, gp, gj, h, h, rm, cm, -1, ws, rc, cc, &w, &bnd) == SHIRO_ERR_ARG,
        "lex_matched: negative size");
  int32_t rm2[2] = {0, 1}, cm2[2] = {0, 1};
  int64_t neg[2] = {0, -1};
  CHECK(cover_lex(2, 2, gp, gj, neg, h, rm2, cm2, ws, rc, cc, &w, &bnd) == SHIRO_ERR_ARG, "lex: negative weight");
  CHECK(cover_lex(2, 2, gp, gj, h, h, rm2, cm2, ws, rc, cc, NULL, &bnd) == SHIRO_ERR_ARG, "lex: NULL weight");
  int64_t rh[2] = {5, 1}, ch[2] = {1, 5};
  CHECK(cover_lex(2, 2, gp, gj, rh, ch, rm2, cm2, ws, rc, cc, &w, &bnd) == SHIRO_OK && w == 2 && bnd == 2 &&
            !rc[0] && rc[1] && cc[0] && !cc[1],
        "lex path: weight %lld, cover r%d%d c%d%d", (long long)w, rc[0], rc[1],
        cc[0], cc[1]);
  /* Allocation failures: NOMEM with outputs untouched, then the same answer. */
  graph g = graph_powerlaw(300, 250, 1500);
  int64_t *rh3 = weights_random(g.nr, 0, 3, 0.3), *ch3 = weights_random(g.nc, 0, 3, 0.3);
  int32_t *m = malloc(550 * sizeof *m);
  uint8_t ref[550], out[550];
  int64_t size, refw;
  if (!m) exit(1);
  CHECK(cover_max_matching(g.nr, g.nc, g.Gp, g.Gj, ws, m, m + 300, &size) == SHIRO_OK &&
            cover_lex(g.nr, g.nc, g.Gp, g.Gj, rh3, ch3, m, m + 300, ws, ref, ref + 300, &refw, &bnd) == SHIRO_OK,
        "lex ref");
  int nomem = 0;
  for (int budget = 0; budget < 10; budget++) {
    cover_ws *fresh = cover_ws_new();
    CHECK(fresh, "cover_ws_new");
    cover_ws_set_grow_budget(fresh, budget);
    memset(out, 0xAB, sizeof out);
    w = -5;
    shiro_status st = cover_lex(g.nr, g.nc, g.Gp, g.Gj, rh3, ch3, m, m + 300, fresh, out, out + 300, &w, &bnd);
    if (st == SHIRO_ERR_NOMEM) {
      for (int i = 0; i < 550; i++) CHECK(out[i] == 0xAB, "lex: output written before NOMEM");
      CHECK(w == -5, "lex: weight written before NOMEM");
      nomem++;
      cover_ws_set_grow_budget(fresh, -1);
      st = cover_lex(g.nr, g.nc, g.Gp, g.Gj, rh3, ch3, m, m + 300, fresh, out, out + 300, &w, &bnd);
    }
    CHECK(st == SHIRO_OK && w == refw && !memcmp(out, ref, 550), "lex budget %d: status %d", budget, st);
    cover_ws_free(fresh);
  }
  CHECK(nomem >= 3, "lex: only %d allocation failures exercised", nomem);
  free(m);
  free(rh3);
  free(ch3);
  graph_free(&g);
  return 0;
}

int main(void) {
  cover_ws *ws = cover_ws_new();
  CHECK(ws, "cover_ws_new");
  int n = test_small_random(ws);
  if (n < 0) return 1;
  printf("small/medium weighted graphs vs brute force (+ unit weights vs matching): %d ok\n", n);
  if (test_lexicographic(ws)) return 1;
  printf("lexicographic and huge weights ok\n");
  if (test_edge_cases(ws)) return 1;
  printf("edge cases ok\n");
  if (test_bad_args(ws)) return 1;
  printf("bad arguments ok\n");
  if (test_large(ws)) return 1;
  printf("large graphs ok\n");
  if (test_nomem()) return 1;
  printf("allocation failures ok\n");
  if (test_lex(ws)) return 1;
  printf("cover_lex = cover_weighted with lexicographic weights ok\n");
  cover_ws_free(ws);
  return 0;
}
