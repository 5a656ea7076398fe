/* cover_ws.c — the cover solvers' workspace: lifetime, growth, shared checks. */
#include <stdint.h>
#include <stdlib.h>

#include "cover_ws.h"
#include "error.h"

cover_ws *cover_ws_new(void) {
  cover_ws *ws = calloc(1, sizeof *ws);
  if (ws) ws->grow_budget = ws->search_budget = -1;
  return ws;
}

void cover_ws_free(cover_ws *ws) {
  if (!ws) return;
  free(ws->i32.p);
  free(ws->i64.p);
  free(ws->u8.p);
  free(ws->match.p);
  free(ws->lex64.p);
  free(ws->lex32.p);
  free(ws->lex8.p);
  free(ws);
}

void cover_ws_set_grow_budget(cover_ws *ws, int64_t n) {
  if (ws) ws->grow_budget = n < 0 ? -1 : n;
}

void cover_ws_set_search_budget(cover_ws *ws, int64_t n) {
  if (ws) ws->search_budget = n < 0 ? -1 : n;
}

int64_t cover_search_budget(const cover_ws *ws, int32_t nr, int64_t edges) {
  return ws->search_budget >= 0 ? ws->search_budget : 4 * (edges + nr) + 1;
}

shiro_status cover_ws_reserve(cover_ws *ws, cover_buf *b, int64_t n, size_t elem, void **p) {
  if (n < 0 || elem == 0) return shiro_fail(NULL, SHIRO_ERR_ARG, "bad reserve size");
  /* Always hand out at least one element so that *p is never NULL. */
  size_t count = n > 0 ? (size_t)n : 1;
  if ((uint64_t)n > SIZE_MAX / elem) return SHIRO_ERR_NOMEM;
  size_t need = count * elem;
  if (need > b->cap) {
    size_t cap = b->cap + b->cap / 2; /* geometric growth: O(log n) reallocs over a reuse */
    if (cap < need || cap < b->cap) cap = need;
    if (ws->grow_budget == 0) return SHIRO_ERR_NOMEM;
    void *q = realloc(b->p, cap);
    if (!q && cap > need) { /* the 1.5x may be what failed: retry with the exact size */
      cap = need;
      q = realloc(b->p, cap);
    }
    if (!q) return SHIRO_ERR_NOMEM;
    if (ws->grow_budget > 0) ws->grow_budget--;
    b->p = q;
    b->cap = cap;
  }
  *p = b->p;
  return SHIRO_OK;
}

shiro_status cover_check_graph(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj) {
  if (nr < 0 || nc < 0) return shiro_fail(NULL, SHIRO_ERR_ARG, "negative graph size");
  if (!Gp) return nr == 0 ? SHIRO_OK : SHIRO_ERR_ARG;
  if (Gp[0] < 0) return SHIRO_ERR_ARG;
  for (int32_t i = 0; i < nr; i++)
    if (Gp[i + 1] < Gp[i]) return SHIRO_ERR_ARG;
  if (Gp[nr] > Gp[0] && !Gj) return SHIRO_ERR_ARG;
  for (int64_t k = Gp[0]; k < Gp[nr]; k++)
    if (Gj[k] < 0 || Gj[k] >= nc) return SHIRO_ERR_ARG;
  return SHIRO_OK;
}

shiro_status cover_check_mirror(int32_t nr, int32_t nc, const int32_t *rmatch, const int32_t *cmatch, int64_t *size) {
  int64_t n = 0;
  for (int32_t j = 0; j < nc; j++) {
    int32_t i = cmatch[j];
    if (i < -1 || i >= nr || (i >= 0 && rmatch[i] != j)) return SHIRO_ERR_ARG;
  }
  for (int32_t i = 0; i < nr; i++) {
    int32_t j = rmatch[i];
    if (j < -1 || j >= nc || (j >= 0 && cmatch[j] != i)) return SHIRO_ERR_ARG;
    n += j >= 0;
  }
  *size = n;
  return SHIRO_OK;
}

shiro_status cover_sum_weights(int32_t nr, int32_t nc, const int64_t *rw, const int64_t *cw, int64_t *total) {
  int64_t s = 0;
  for (int32_t i = 0; i < nr; i++) {
    if (rw[i] < 0 || rw[i] > INT64_MAX - 1 - s) return SHIRO_ERR_ARG;
    s += rw[i];
  }
  for (int32_t j = 0; j < nc; j++) {
    if (cw[j] < 0 || cw[j] > INT64_MAX - 1 - s) return SHIRO_ERR_ARG;
    s += cw[j];
  }
  *total = s;
  return SHIRO_OK;
}

int64_t cover_graph_edges(int32_t nr, const int64_t *Gp) {
  return Gp ? Gp[nr] - Gp[0] : 0;
}
