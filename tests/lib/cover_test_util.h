/* cover_test_util.h — what the two cover tests share: failure macros, a fixed-seed
 * xorshift64* generator, bipartite graphs in CSR form and random graph makers.
 * Include once per test program; define RNG_SEED before including. */
#ifndef SHIRO_COVER_TEST_UTIL_H
#define SHIRO_COVER_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fprintf(stderr, "\n");                               \
    return 1;                                            \
  } while (0)

#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) FAIL(__VA_ARGS__); \
  } while (0)

/* xorshift64*: fixed seed, same stream on every platform. */
static uint64_t rng_state = RNG_SEED;
static uint64_t rng_next(void) {
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1Dull;
}
static int32_t rng_below(int64_t n) { return (int32_t)(rng_next() % (uint64_t)n); }
static double rng_unit(void) { return (double)(rng_next() >> 11) / 9007199254740992.0; }

/* A bipartite graph in CSR form (Gp[0] may be > 0 to test offsets). */
typedef struct graph {
  int32_t nr, nc;
  int64_t *Gp; /* [nr+1] */
  int32_t *Gj; /* [Gp[nr]] */
} graph;

static void graph_free(graph *g) {
  free(g->Gp);
  free(g->Gj);
  g->Gp = NULL;
  g->Gj = NULL;
}

/* Builds a graph from an edge list (ei[e], ej[e]), rows in list order within
 * a row; `base` unused slots before the first edge. Exits on OOM (test only). */
static graph graph_from_edges(int32_t nr, int32_t nc, int64_t ne, const int32_t *ei,
                              const int32_t *ej, int64_t base) {
  graph g = {nr, nc, calloc((size_t)nr + 1, sizeof(int64_t)),
             malloc(((size_t)(base + ne) + 1) * sizeof(int32_t))};
  if (!g.Gp || !g.Gj) {
    fprintf(stderr, "test out of memory\n");
    exit(1);
  }
  for (int64_t e = 0; e < ne; e++) g.Gp[ei[e] + 1]++;
  g.Gp[0] = base;
  for (int32_t i = 0; i < nr; i++) g.Gp[i + 1] += g.Gp[i];
  int64_t *fill = malloc(((size_t)nr + 1) * sizeof(int64_t));
  if (!fill) exit(1);
  for (int32_t i = 0; i <= nr; i++) fill[i] = g.Gp[i];
  for (int64_t k = 0; k < base; k++) g.Gj[k] = -7; /* garbage that must not be read */
  for (int64_t e = 0; e < ne; e++) g.Gj[fill[ei[e]]++] = ej[e];
  free(fill);
  return g;
}

/* Random graph: each (i, j) with probability p, shuffled, plus `dups` duplicates. */
static graph graph_random(int32_t nr, int32_t nc, double p, int dups, int64_t base) {
  int64_t cap = (int64_t)nr * nc + dups + 1, ne = 0;
  int32_t *ei = malloc((size_t)cap * sizeof *ei), *ej = malloc((size_t)cap * sizeof *ej);
  if (!ei || !ej) exit(1);
  for (int32_t i = 0; i < nr; i++)
    for (int32_t j = 0; j < nc; j++)
      if (rng_unit() < p) ei[ne] = i, ej[ne++] = j;
  for (int d = 0; d < dups && ne > 0; d++) {
    int64_t e = rng_below(ne);
    ei[ne] = ei[e], ej[ne++] = ej[e];
  }
  for (int64_t e = ne - 1; e > 0; e--) { /* shuffle: edge order within rows varies */
    int64_t f = rng_below(e + 1);
    int32_t t = ei[e];
    ei[e] = ei[f];
    ei[f] = t;
    t = ej[e];
    ej[e] = ej[f];
    ej[f] = t;
  }
  graph g = graph_from_edges(nr, nc, ne, ei, ej, base);
  free(ei);
  free(ej);
  return g;
}

/* Random graph with `ne` edges whose columns and rows follow a power law. */
static graph graph_powerlaw(int32_t nr, int32_t nc, int64_t ne) {
  int32_t *ei = malloc((size_t)ne * sizeof *ei), *ej = malloc((size_t)ne * sizeof *ej);
  if (!ei || !ej) exit(1);
  for (int64_t e = 0; e < ne; e++) {
    double u = rng_unit(), v = rng_unit();
    ei[e] = (int32_t)(nr * u * u * u); /* heavy rows near 0 */
    ej[e] = (int32_t)(nc * v * v * v * v);
    if (ei[e] >= nr) ei[e] = nr - 1;
    if (ej[e] >= nc) ej[e] = nc - 1;
  }
  graph g = graph_from_edges(nr, nc, ne, ei, ej, 0);
  free(ei);
  free(ej);
  return g;
}

#endif
