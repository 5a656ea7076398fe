/* test_cover.c — maximum matching and König covers.
 *
 * Checks, on random and hand-made bipartite graphs: the matching is valid
 * and as large on every path of cover_max_matching (augmenting searches,
 * Hopcroft–Karp alone, the hand-over between them), the cover covers every
 * edge and has as many vertices as the matching (so both are optimal), small
 * cases equal a brute-force minimum cover, results are deterministic, bad
 * arguments give SHIRO_ERR_ARG and every allocation failure gives
 * SHIRO_ERR_NOMEM with the outputs untouched.
 * Returns 0 on success, 1 (after printing why) on the first failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "cover_ws.h"

#define RNG_SEED 0x9E3779B97F4A7C15ull
#include "cover_test_util.h"

/* Checks that (rmatch, cmatch) is a matching of g with `size` pairs. */
static int check_matching(const graph *g, const int32_t *rmatch, const int32_t *cmatch,
                          int64_t size) {
  int64_t n = 0;
  for (int32_t i = 0; i < g->nr; i++) {
    int32_t j = rmatch[i];
    if (j < 0) {
      CHECK(j == -1, "rmatch[%d] = %d", i, j);
      continue;
    }
    CHECK(j < g->nc && cmatch[j] == i, "rmatch[%d] = %d not mirrored", i, j);
    int64_t k = g->Gp[i];
    while (k < g->Gp[i + 1] && g->Gj[k] != j) k++;
    CHECK(k < g->Gp[i + 1], "row %d matched to non-neighbour %d", i, j);
    n++;
  }
  for (int32_t j = 0; j < g->nc; j++) {
    int32_t i = cmatch[j];
    CHECK(i >= -1 && i < g->nr && (i < 0 || rmatch[i] == j), "cmatch[%d] = %d not mirrored", j, i);
  }
  CHECK(n == size, "matching has %lld pairs, size says %lld", (long long)n, (long long)size);
  return 0;
}

/* Checks that the cover covers every edge and has `size` vertices (0/1 only). */
static int check_cover(const graph *g, const uint8_t *rcov, const uint8_t *ccov, int64_t size) {
  int64_t n = 0;
  for (int32_t i = 0; i < g->nr; i++) {
    CHECK(rcov[i] <= 1, "rcov[%d] = %d", i, rcov[i]);
    n += rcov[i];
  }
  for (int32_t j = 0; j < g->nc; j++) {
    CHECK(ccov[j] <= 1, "ccov[%d] = %d", j, ccov[j]);
    n += ccov[j];
  }
  for (int32_t i = 0; i < g->nr; i++)
    for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++)
      CHECK(rcov[i] || ccov[g->Gj[k]], "edge (%d,%d) uncovered", i, g->Gj[k]);
  CHECK(n == size, "cover has %lld vertices, expected %lld", (long long)n, (long long)size);
  return 0;
}

/* Minimum vertex cover size by enumerating the row subsets (nr <= 20). */
static int64_t brute_cover(const graph *g) {
  int64_t best = INT64_MAX;
  uint8_t need[64];
  for (uint32_t s = 0; s < (1u << g->nr); s++) {
    memset(need, 0, sizeof need);
    int64_t n = __builtin_popcount(s);
    for (int32_t i = 0; i < g->nr; i++) {
      if (s >> i & 1) continue;
      for (int64_t k = g->Gp[i]; k < g->Gp[i + 1]; k++)
        if (!need[g->Gj[k]]) need[g->Gj[k]] = 1, n++;
    }
    if (n < best) best = n;
  }
  return best;
}

/* cover_max_matching's other paths on g: Hopcroft–Karp's phases alone
 * (search budget 0) and a hand-over to them after a few searches (a budget
 * of 1..7 edge visits). Each must give a valid matching of `size` pairs. */
static int check_other_paths(const graph *g, cover_ws *ws, int64_t size) {
  int32_t *m = malloc(((size_t)g->nr + (size_t)g->nc + 1) * 4);
  if (!m) exit(1);
  int bad = 0;
  for (int v = 0; v < 2 && !bad; v++) {
    int64_t n = -1;
    cover_ws_set_search_budget(ws, v == 0 ? 0 : 1 + g->nr % 7);
    shiro_status st = cover_max_matching(g->nr, g->nc, g->Gp, g->Gj, ws, m, m + g->nr, &n);
    cover_ws_set_search_budget(ws, -1);
    if (st != SHIRO_OK || n != size) {
      fprintf(stderr, "FAIL: search budget %s: status %d, %lld pairs, expected %lld\n", v ? "small" : "0", st,
              (long long)n, (long long)size);
      bad = 1;
    } else {
      bad = check_matching(g, m, m + g->nr, n);
    }
  }
  free(m);
  return bad;
}

/* Runs the three entry points on g and checks everything; `brute` adds the
 * brute-force comparison. */
static int check_graph(const graph *g, cover_ws *ws, int brute, const char *what) {
  size_t r = (size_t)g->nr + 1, c = (size_t)g->nc + 1;
  int32_t *rmatch = malloc(r * 4), *cmatch = malloc(c * 4);
  uint8_t *rcov = malloc(r), *ccov = malloc(c), *rcov2 = malloc(r), *ccov2 = malloc(c);
  if (!rmatch || !cmatch || !rcov || !ccov || !rcov2 || !ccov2) exit(1);
  int64_t msize = -1, csize = -1;
  int bad = 1;
  shiro_status st = cover_max_matching(g->nr, g->nc, g->Gp, g->Gj, ws, rmatch, cmatch, &msize);
  if (st != SHIRO_OK) {
    fprintf(stderr, "%s: cover_max_matching -> %d\n", what, st);
    goto done;
  }
  if (check_matching(g, rmatch, cmatch, msize)) goto report;
  if (check_other_paths(g, ws, msize)) goto report;
  st = cover_konig(g->nr, g->nc, g->Gp, g->Gj, rmatch, cmatch, ws, rcov, ccov);
  if (st != SHIRO_OK) {
    fprintf(stderr, "%s: cover_konig -> %d\n", what, st);
    goto done;
  }
  if (check_cover(g, rcov, ccov, msize)) goto report;
  st = cover_konig_matched(g->nr, g->nc, g->Gp, g->Gj, rmatch, cmatch, msize, ws, rcov2, ccov2);
  if (st != SHIRO_OK || memcmp(rcov, rcov2, (size_t)g->nr) || memcmp(ccov, ccov2, (size_t)g->nc)) {
    fprintf(stderr, "%s: cover_konig_matched -> %d, or differs from cover_konig\n", what, st);
    goto done;
  }
  st = cover_min_vertex_cover(g->nr, g->nc, g->Gp, g->Gj, ws, rcov2, ccov2, &csize);
  if (st != SHIRO_OK || csize != msize) {
    fprintf(stderr, "%s: cover_min_vertex_cover -> %d, size %lld vs %lld\n", what, st,
            (long long)csize, (long long)msize);
    goto done;
  }
  if (memcmp(rcov, rcov2, (size_t)g->nr) || memcmp(ccov, ccov2, (size_t)g->nc)) {
    fprintf(stderr, "%s: cover_min_vertex_cover differs from matching + konig\n", what);
    goto done;
  }
  if (brute) {
    int64_t b = brute_cover(g);
    if (b != msize) {
      fprintf(stderr, "%s: cover %lld, brute force %lld\n", what, (long long)msize, (long long)b);
      goto done;
    }
  }
  bad = 0;
  goto done;
report:
  fprintf(stderr, "  in %s (%d x %d)\n", what, g->nr, g->nc);
done:
  free(rmatch);
  free(cmatch);
  free(rcov);
  free(ccov);
  free(rcov2);
  free(ccov2);
  return bad;
}

/* Hundreds of small random graphs against brute force. Returns #graphs or -1. */
static int test_small_random(cover_ws *ws) {
  int n = 0;
  for (int t = 0; t < 1500; t++) {
    int32_t nr = rng_below(9), nc = rng_below(9);
    static const double dens[] = {0.05, 0.15, 0.3, 0.5, 0.8, 1.0};
    double p = dens[rng_below(6)];
    graph g = graph_random(nr, nc, p, rng_below(4), rng_below(3));
    char what[64];
    snprintf(what, sizeof what, "small random #%d", t);
    int bad = check_graph(&g, ws, 1, what);
    graph_free(&g);
    if (bad) return -1;
    n++;
  }
  /* Medium: still exact by brute force over 2^14 row subsets. */
  for (int t = 0; t < 40; t++) {
    int32_t nr = 10 + rng_below(5), nc = 5 + rng_below(30);
    graph g = graph_random(nr, nc, 0.03 + 0.25 * rng_unit(), 3, 0);
    char what[64];
    snprintf(what, sizeof what, "medium random #%d", t);
    int bad = check_graph(&g, ws, 1, what);
    graph_free(&g);
    if (bad) return -1;
    n++;
  }
  return n;
}

/* Large graphs: validity, cover == matching, determinism (fresh vs reused ws). */
static int test_large(cover_ws *ws) {
  for (int t = 0; t < 5; t++) {
    graph g;
    if (t == 0) g = graph_random(2000, 1500, 20000.0 / (2000.0 * 1500.0), 100, 0);
    else if (t == 1) g = graph_powerlaw(3000, 2500, 30000);
    else if (t == 2) g = graph_random(5000, 200, 3.0 / 200.0, 10, 5);
    else if (t == 3) g = graph_random(3000, 3000, 1.5 / 3000.0, 10, 0); /* near-critical */
    else g = graph_powerlaw(20000, 30000, 200000);
    char what[64];
    snprintf(what, sizeof what, "large #%d", t);
    if (check_graph(&g, ws, 0, what)) return 1;
    /* Determinism: a fresh workspace and the reused one give the same bytes. */
    cover_ws *w2 = cover_ws_new();
    size_t r = (size_t)g.nr, c = (size_t)g.nc;
    uint8_t *a = malloc(r + c), *b = malloc(r + c);
    int32_t *m1 = malloc((r + c) * 4), *m2 = malloc((r + c) * 4);
    if (!w2 || !a || !b || !m1 || !m2) exit(1);
    int64_t s1, s2, z1, z2;
    int ok = cover_min_vertex_cover(g.nr, g.nc, g.Gp, g.Gj, ws, a, a + r, &s1) == SHIRO_OK &&
        cover_min_vertex_cover(g.nr, g.nc, g.Gp, g.Gj, w2, b, b + r, &s2) == SHIRO_OK &&
        cover_max_matching(g.nr, g.nc, g.Gp, g.Gj, ws, m1, m1 + r, &z1) == SHIRO_OK &&
        cover_max_matching(g.nr, g.nc, g.Gp, g.Gj, w2, m2, m2 + r, &z2) == SHIRO_OK &&
        s1 == s2 && z1 == z2 && s1 == z1 && !memcmp(a, b, r + c) &&
        !memcmp(m1, m2, (r + c) * 4);
    printf("  %s: %d x %d, %lld edges, cover %lld\n", what, g.nr, g.nc,
           (long long)(g.Gp[g.nr] - g.Gp[0]), (long long)s1);
    free(a);
    free(b);
    free(m1);
    free(m2);
    cover_ws_free(w2);
    graph_free(&g);
    CHECK(ok, "%s: not deterministic", what);
  }
  return 0;
}

/* Hand-made graphs with known answers. */
static int test_edge_cases(cover_ws *ws) {
  uint8_t rc[16], cc[16];
  int64_t sz = -1;
  int32_t rm[16], cm[16];
  /* Empty graphs, with and without a Gp array. */
  CHECK(cover_min_vertex_cover(0, 0, NULL, NULL, ws, NULL, NULL, &sz) == SHIRO_OK && sz == 0,
        "0x0 NULL");
  int64_t gp0[1] = {0};
  CHECK(cover_min_vertex_cover(0, 0, gp0, NULL, ws, NULL, NULL, &sz) == SHIRO_OK && sz == 0, "0x0");
  CHECK(cover_min_vertex_cover(0, 5, NULL, NULL, ws, NULL, cc, &sz) == SHIRO_OK && sz == 0, "0x5");
  CHECK(cover_max_matching(0, 5, NULL, NULL, ws, NULL, cm, &sz) == SHIRO_OK && sz == 0, "0x5 m");
  for (int j = 0; j < 5; j++) CHECK(cm[j] == -1 && cc[j] == 0, "0x5 col %d", j);
  int64_t gp5[6] = {0, 0, 0, 0, 0, 0};
  CHECK(cover_min_vertex_cover(5, 0, gp5, NULL, ws, rc, NULL, &sz) == SHIRO_OK && sz == 0, "5x0");
  CHECK(cover_max_matching(5, 4, gp5, NULL, ws, rm, cm, &sz) == SHIRO_OK && sz == 0, "5x4 empty");
  CHECK(cover_konig(5, 4, gp5, NULL, rm, cm, ws, rc, cc) == SHIRO_OK, "5x4 konig");
  for (int i = 0; i < 5; i++) CHECK(rc[i] == 0 && rm[i] == -1, "5x4 row %d", i);
  for (int j = 0; j < 4; j++) CHECK(cc[j] == 0 && cm[j] == -1, "5x4 col %d", j);
  /* Complete bipartite K_{a,b}: cover = min(a, b), all of the smaller side. */
  for (int32_t a = 1; a <= 7; a++) {
    for (int32_t b = 1; b <= 7; b++) {
      graph g = graph_random(a, b, 1.0, 0, 0);
      CHECK(cover_min_vertex_cover(a, b, g.Gp, g.Gj, ws, rc, cc, &sz) == SHIRO_OK, "K%d,%d", a, b);
      CHECK(sz == (a < b ? a : b), "K_{%d,%d}: cover %lld", a, b, (long long)sz);
      if (check_graph(&g, ws, 1, "complete")) return 1;
      graph_free(&g);
    }
  }
  /* Paths r0-c0-r1-c1-...: a path of v vertices has a cover of floor(v/2). */
  for (int32_t L = 1; L <= 12; L++) {
    int32_t ei[32], ej[32], ne = 0, nr = (L + 1) / 2, nc = L / 2;
    for (int32_t v = 0; v + 1 < L; v++) {
      if (v % 2 == 0) ei[ne] = v / 2, ej[ne++] = v / 2; /* r_{v/2} - c_{v/2} */
      else ei[ne] = (v + 1) / 2, ej[ne++] = (v - 1) / 2; /* c_{(v-1)/2} - r_{(v+1)/2} */
    }
    graph g = graph_from_edges(nr, nc, ne, ei, ej, 0);
    CHECK(cover_min_vertex_cover(nr, nc, g.Gp, g.Gj, ws, rc, cc, &sz) == SHIRO_OK && sz == L / 2,
          "path of %d vertices: cover %lld", L, (long long)sz);
    if (check_graph(&g, ws, 1, "path")) return 1;
    graph_free(&g);
  }
  /* Duplicates only: one edge five times. */
  {
    int32_t ei[5] = {1, 1, 1, 1, 1}, ej[5] = {2, 2, 2, 2, 2};
    graph g = graph_from_edges(3, 3, 5, ei, ej, 2);
    CHECK(cover_min_vertex_cover(3, 3, g.Gp, g.Gj, ws, rc, cc, &sz) == SHIRO_OK && sz == 1,
          "duplicate edge: cover %lld", (long long)sz);
    if (check_graph(&g, ws, 1, "duplicates")) return 1;
    graph_free(&g);
  }
  /* A star and a perfect matching with isolated vertices around it. */
  {
    int32_t ei[8] = {0, 0, 0, 0, 2, 4, 6, 6}, ej[8] = {0, 1, 2, 3, 5, 6, 7, 7};
    graph g = graph_from_edges(8, 9, 8, ei, ej, 0);
    CHECK(cover_min_vertex_cover(8, 9, g.Gp, g.Gj, ws, rc, cc, &sz) == SHIRO_OK && sz == 4,
          "star + matching: cover %lld", (long long)sz);
    CHECK(rc[0] == 1, "star centre not chosen");
    if (check_graph(&g, ws, 1, "star")) return 1;
    graph_free(&g);
  }
  return 0;
}

/* Bad arguments: each must give SHIRO_ERR_ARG. */
static int test_bad_args(cover_ws *ws) {
  int64_t gp[4] = {0, 2, 3, 4}, sz;
  int32_t gj[4] = {0, 1, 1, 2}, rm[3], cm[3];
  uint8_t rc[3], cc[3];
  CHECK(cover_max_matching(3, 3, gp, gj, ws, rm, cm, &sz) == SHIRO_OK && sz == 3, "base");
  CHECK(cover_max_matching(-1, 3, gp, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "nr < 0");
  CHECK(cover_max_matching(3, -2, gp, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "nc < 0");
  CHECK(cover_max_matching(3, 3, NULL, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "Gp NULL");
  CHECK(cover_max_matching(3, 3, gp, NULL, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "Gj NULL");
  CHECK(cover_max_matching(3, 3, gp, gj, NULL, rm, cm, &sz) == SHIRO_ERR_ARG, "ws NULL");
  CHECK(cover_max_matching(3, 3, gp, gj, ws, NULL, cm, &sz) == SHIRO_ERR_ARG, "rmatch NULL");
  CHECK(cover_max_matching(3, 3, gp, gj, ws, rm, NULL, &sz) == SHIRO_ERR_ARG, "cmatch NULL");
  CHECK(cover_max_matching(3, 3, gp, gj, ws, rm, cm, NULL) == SHIRO_ERR_ARG, "size NULL");
  CHECK(cover_max_matching(3, 2, gp, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "column = nc");
  int32_t neg[4] = {0, -1, 1, 2};
  CHECK(cover_max_matching(3, 3, gp, neg, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "column < 0");
  int64_t dec[4] = {0, 3, 2, 4}, negp[4] = {-1, 2, 3, 4};
  CHECK(cover_max_matching(3, 3, dec, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "Gp decreasing");
  CHECK(cover_max_matching(3, 3, negp, gj, ws, rm, cm, &sz) == SHIRO_ERR_ARG, "Gp[0] < 0");
  CHECK(cover_min_vertex_cover(3, 2, gp, gj, ws, rc, cc, &sz) == SHIRO_ERR_ARG, "mvc column = nc");
  CHECK(cover_min_vertex_cover(3, 3, gp, gj, ws, NULL, cc, &sz) == SHIRO_ERR_ARG, "mvc rcov NULL");
  CHECK(cover_min_vertex_cover(3, 3, gp, gj, ws, rc, NULL, &sz) == SHIRO_ERR_ARG, "mvc ccov NULL");
  CHECK(cover_min_vertex_cover(-3, 3, gp, gj, ws, rc, cc, &sz) == SHIRO_ERR_ARG, "mvc nr < 0");
  CHECK(cover_min_vertex_cover(3, 3, gp, gj, NULL, rc, cc, &sz) == SHIRO_ERR_ARG, "mvc ws NULL");
  CHECK(cover_min_vertex_cover(3, 3, gp, gj, ws, rc, cc, NULL) == SHIRO_ERR_ARG, "mvc size NULL");
  /* König with a bad matching. */
  int32_t rm_ok[3] = {0, 1, 2}, cm_ok[3] = {0, 1, 2};
  CHECK(cover_konig(3, 3, gp, gj, rm_ok, cm_ok, ws, rc, cc) == SHIRO_OK, "konig base");
  int32_t rm_nonmax[3] = {1, -1, 2}, cm_nonmax[3] = {-1, 0, 2}; /* row 1 - col 1 - row 0 - col 0 */
  CHECK(cover_konig(3, 3, gp, gj, rm_nonmax, cm_nonmax, ws, rc, cc) == SHIRO_ERR_ARG,
        "konig non-maximum matching");
  CHECK(cover_konig_matched(3, 3, gp, gj, rm_nonmax, cm_nonmax, 2, ws, rc, cc) == SHIRO_ERR_ARG,
        "konig_matched non-maximum matching");
  CHECK(cover_konig_matched(3, 3, gp, gj, rm_ok, cm_ok, 3, NULL, rc, cc) == SHIRO_ERR_ARG, "konig_matched ws NULL");
  int32_t rm_nonedge[3] = {2, 1, -1}, cm_nonedge[3] = {-1, 1, 0};
  CHECK(cover_konig(3, 3, gp, gj, rm_nonedge, cm_nonedge, ws, rc, cc) == SHIRO_ERR_ARG,
        "konig matched along a non-edge");
  int32_t rm_skew[3] = {0, 1, 2}, cm_skew[3] = {0, 2, 1};
  CHECK(cover_konig(3, 3, gp, gj, rm_skew, cm_skew, ws, rc, cc) == SHIRO_ERR_ARG,
        "konig rmatch/cmatch disagree");
  int32_t rm_range[3] = {0, 1, 3}, cm_range[3] = {0, 1, -2};
  CHECK(cover_konig(3, 3, gp, gj, rm_range, cm_range, ws, rc, cc) == SHIRO_ERR_ARG,
        "konig out of range");
  CHECK(cover_konig(3, 3, gp, gj, NULL, cm_ok, ws, rc, cc) == SHIRO_ERR_ARG, "konig rmatch NULL");
  CHECK(cover_konig(3, 3, gp, gj, rm_ok, cm_ok, NULL, rc, cc) == SHIRO_ERR_ARG, "konig ws NULL");
  CHECK(cover_konig(3, 3, gp, gj, rm_ok, cm_ok, ws, rc, NULL) == SHIRO_ERR_ARG, "konig ccov NULL");
  return 0;
}

/* Every allocation failure gives SHIRO_ERR_NOMEM and leaves the outputs alone;
 * with enough budget the result equals the unconstrained one. */
static int test_nomem(void) {
  graph g = graph_random(40, 30, 0.1, 5, 0);
  uint8_t ref[70], out[70];
  int32_t rm[70];
  int64_t sz, refsz;
  cover_ws *ws = cover_ws_new();
  CHECK(ws, "cover_ws_new");
  CHECK(cover_min_vertex_cover(40, 30, g.Gp, g.Gj, ws, ref, ref + 40, &refsz) == SHIRO_OK, "ref");
  cover_ws_free(ws);
  int nomem = 0;
  for (int budget = 0; budget < 20; budget++) {
    ws = cover_ws_new();
    CHECK(ws, "cover_ws_new");
    cover_ws_set_grow_budget(ws, budget);
    memset(out, 0xAB, sizeof out);
    shiro_status st = cover_min_vertex_cover(40, 30, g.Gp, g.Gj, ws, out, out + 40, &sz);
    if (st == SHIRO_ERR_NOMEM) {
      for (int i = 0; i < 70; i++) CHECK(out[i] == 0xAB, "output written before NOMEM");
      nomem++;
      /* The workspace stays usable after a failure. */
      cover_ws_set_grow_budget(ws, -1);
      st = cover_min_vertex_cover(40, 30, g.Gp, g.Gj, ws, out, out + 40, &sz);
    }
    CHECK(st == SHIRO_OK && sz == refsz && !memcmp(out, ref, 70), "budget %d: status %d", budget,
          st);
    cover_ws_set_grow_budget(ws, budget);
    cover_ws_free(ws);
    ws = cover_ws_new();
    cover_ws_set_grow_budget(ws, budget);
    st = cover_max_matching(40, 30, g.Gp, g.Gj, ws, rm, rm + 40, &sz);
    CHECK(st == SHIRO_OK || st == SHIRO_ERR_NOMEM, "matching budget %d: %d", budget, st);
    if (st == SHIRO_OK) {
      CHECK(sz == refsz, "matching budget %d: size %lld", budget, (long long)sz);
      st = cover_konig(40, 30, g.Gp, g.Gj, rm, rm + 40, ws, out, out + 40);
      CHECK(st == SHIRO_OK || st == SHIRO_ERR_NOMEM, "konig budget %d: %d", budget, st);
      if (st == SHIRO_OK) CHECK(!memcmp(out, ref, 70), "konig budget %d: cover differs", budget);
    }
    cover_ws_free(ws);
  }
  CHECK(nomem >= 2, "only %d allocation failures exercised", nomem);
  graph_free(&g);
  return 0;
}

int main(void) {
  cover_ws *ws = cover_ws_new();
  CHECK(ws, "cover_ws_new");
  cover_ws_free(NULL);
  int n = test_small_random(ws);
  if (n < 0) return 1;
  printf("small/medium random graphs vs brute force: %d ok\n", n);
  if (test_edge_cases(ws)) return 1;
  printf("edge cases ok\n");
  if (test_bad_args(ws)) return 1;
  printf("bad arguments ok\n");
  if (test_large(ws)) return 1;
  printf("large graphs ok\n");
  if (test_nomem()) return 1;
  printf("allocation failures ok\n");
  cover_ws_free(ws);
  return 0;
}
