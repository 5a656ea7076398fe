/* cover_ws.h — private to the cover solvers: the workspace behind cover_ws
 * (cover.h), its growth helper and the argument checks the solvers share.
 *
 * A workspace holds a few typed, growable arrays. A solver asks for the sizes
 * it needs once, on entry, before it writes any output; so an allocation
 * failure (SHIRO_ERR_NOMEM) leaves the outputs untouched and the workspace
 * still valid (realloc keeps the old block), and nothing leaks. Contents are
 * undefined between calls. */
#ifndef SHIRO_COVER_WS_H
#define SHIRO_COVER_WS_H

#include <stddef.h>
#include <stdint.h>

#include "cover.h"

/* One growable array of bytes. */
typedef struct cover_buf {
  void *p; /* [cap] bytes; NULL until first use */
  size_t cap; /* bytes allocated */
} cover_buf;

struct cover_ws {
  cover_buf i32; /* int32 scratch: queues, stacks, layers, transposed row ids */
  cover_buf i64; /* int64 scratch: current arcs, residual capacities, flows, transpose */
  cover_buf u8; /* byte scratch: visited marks (König) */
  cover_buf match; /* int32 [nr+nc]: rmatch|cmatch that cover_min_vertex_cover keeps
                      between its two steps (the others use only the scratch above) */
  cover_buf lex64, lex32, lex8; /* cover_lex's own scratch, kept while it calls cover_weighted
                                   (which uses i32 and i64) on the part it cannot decide alone */
  int64_t grow_budget; /* test hook: reallocs still allowed to succeed; -1 = unlimited */
  int64_t search_budget; /* test hook: edge visits within which the depth-first searches of
                            cover_max_matching and cover_lex start (then Hopcroft-Karp's phases,
                            the transpose search); -1 = 4 (edges + rows) + 1 */
};

/* Makes b hold at least n elements of elem bytes each and sets *p to its
 * start. Returns SHIRO_ERR_NOMEM (b unchanged, *p untouched) when the
 * allocation fails, when n * elem overflows size_t, or when the test budget
 * is spent; SHIRO_ERR_ARG for n < 0. Grows geometrically (at least 1.5x) so
 * that a workspace reused on growing problems reallocates O(log n) times. */
shiro_status cover_ws_reserve(cover_ws *ws, cover_buf *b, int64_t n, size_t elem, void **p);

/* Test hook: lets only the next n reallocations of ws succeed (n < 0: all).
 * Lets a test walk every allocation-failure path of a solver. */
void cover_ws_set_grow_budget(cover_ws *ws, int64_t n);

/* Test hook: the depth-first searches of cover_max_matching (augmenting
 * paths) and cover_lex (the set Y) start only while they have visited fewer
 * than n edges (n < 0: the default, 4 (edges + rows) + 1; 0: none, a greedy
 * pass then Hopcroft-Karp's phases, Y by its transpose search). Lets a test
 * run every graph through both paths and their hand-over. */
void cover_ws_set_search_budget(cover_ws *ws, int64_t n);

/* The edge visits the depth-first searches of a solver may start within on a
 * graph of nr rows and `edges` edges: the test hook's value if set, else
 * 4 (edges + rows) + 1. */
int64_t cover_search_budget(const cover_ws *ws, int32_t nr, int64_t edges);

/* Checks a graph given to a solver: nr, nc >= 0; Gp non-NULL when nr > 0,
 * 0 <= Gp[0] <= Gp[1] <= ... <= Gp[nr]; Gj non-NULL when there are edges,
 * every Gj[k] in [0, nc). O(nr + edges). Returns SHIRO_OK or SHIRO_ERR_ARG.
 * A NULL Gp with nr == 0 is an empty graph. */
shiro_status cover_check_graph(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj);

/* Checks weights (each >= 0) and sums them into *total; SHIRO_ERR_ARG if one
 * is negative or the sum would not leave room for one more unit (INT64_MAX). */
shiro_status cover_sum_weights(int32_t nr, int32_t nc, const int64_t *rw, const int64_t *cw, int64_t *total);

/* Checks that rmatch and cmatch mirror each other (entries in range or -1,
 * rmatch[i] = j exactly when cmatch[j] = i) and sets *size to the number of
 * pairs; SHIRO_ERR_ARG otherwise. O(nr + nc): whether the pairs are edges is
 * not checked here. */
shiro_status cover_check_mirror(int32_t nr, int32_t nc, const int32_t *rmatch, const int32_t *cmatch, int64_t *size);

/* König's cover from a checked matching of `size` pairs (konig.c). Scratch:
 * queue [nr] int32, mark [nr+nc] bytes; on return mark[i] (rows) and
 * mark[nr+j] (columns) are 1 for the vertices reached from the unmatched rows
 * by alternating paths, the set Z. Returns `notmax` (rcov/ccov untouched) if a
 * free column is reached: the matching is not maximum. */
shiro_status konig_run(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                       const int32_t *rmatch, const int32_t *cmatch, int64_t size,
                       int32_t *queue, uint8_t *mark, shiro_status notmax,
                       uint8_t *rcov, uint8_t *ccov);

/* Number of edges of a checked graph: Gp[nr] - Gp[0] (0 when Gp is NULL). */
int64_t cover_graph_edges(int32_t nr, const int64_t *Gp);

#endif
