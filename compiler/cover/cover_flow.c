/* cover_flow.c — minimum weight vertex cover of a bipartite graph by
 * max-flow/min-cut (Dinic).
 *
 * Network: s → row i (capacity rw[i]), row i → column j for each edge
 * (capacity "infinite" = sum of all weights + 1, so no cut crosses it),
 * column j → t (capacity cw[j]). A finite s-t cut is a vertex cover (rows on
 * the t side, columns on the s side) of the same weight, so the minimum cut is
 * a minimum weight cover, and the maximum flow certifies it.
 *
 * The network is never built: its residual arcs are read off the graph.
 *   s → row i      residual rres[i]         (row i → s is never on a shortest path)
 *   row i → col j  always open (infinite)
 *   col j → row i  residual f (the flow on edge (i, j)), through the transpose
 *   col j → t      residual cres[j]
 * A greedy pass first pushes what each edge can carry directly; Dinic then
 * alternates a BFS that layers the residual graph (rows at odd distances
 * 2a+1 from s, layer a; columns at 2a+2, layer a) and one blocking-flow pass:
 * an iterative DFS with current-arc pointers and an explicit path stack. The
 * cover is read from the last BFS: rows NOT reachable from s (except isolated
 * ones, of weight 0), columns reachable. Everything is scanned in index
 * order: deterministic. */
#include <stdint.h>
#include <string.h>

#include "cover_ws.h"
#include "error.h"

/* The residual network and Dinic's state, all in the workspace. */
typedef struct flow_net {
  int32_t nr, nc; /* rows, columns */
  const int64_t *Gp; /* [nr+1] the graph (borrowed) */
  const int32_t *Gj; /* [edges] its column ids (borrowed) */
  int64_t base; /* Gp[0]: edge id of Gj[k] is k - base */
  int64_t *Tp; /* [nc+1] transpose: column pointers */
  int32_t *Ti; /* [edges] transpose: row of each entry */
  int64_t *Tk; /* [edges] position in the transpose of edge id k - base */
  int64_t *f; /* [edges] flow on each edge, in transpose order (so that a
                         column's arcs are read sequentially: the hot loop) */
  int64_t *rres; /* [nr] residual capacity of s → row */
  int64_t *cres; /* [nc] residual capacity of column → t */
  int64_t *rptr; /* [nr] current arc of each row (index into Gj) */
  int64_t *cptr; /* [nc] current arc of each column (index into Ti; Tp[j+1] = the arc to t) */
  int32_t *rlev; /* [nr] layer of each row, -1 unreached or retired */
  int32_t *clev; /* [nc] layer of each column, -1 unreached or retired */
  uint64_t *cseen; /* [(nc+63)/64] BFS: bitmap of the columns reached (stays in cache) */
  int32_t *queue; /* [nr+nc] BFS queue: row i as i, column j as ~j */
  int32_t *path; /* [nr+nc+2] DFS path: path[1] a row, then column, row, ... */
  int32_t tlev; /* layer of the columns next to t, -1 if t unreached */
  int64_t inf; /* sum of all weights + 1 */
} flow_net;

/* Carves the network's arrays out of the workspace. */
static shiro_status flow_alloc(cover_ws *ws, flow_net *F, int64_t ne) {
  int64_t nr = F->nr, nc = F->nc, words = (nc + 63) / 64;
  int64_t *l;
  int32_t *w;
  shiro_status st = cover_ws_reserve(ws, &ws->i64, 2 * ne + 2 * nr + 3 * nc + 1 + words,
                                     sizeof *l, (void **)&l);
  if (st == SHIRO_OK)
    st = cover_ws_reserve(ws, &ws->i32, ne + 3 * (nr + nc) + 2, sizeof *w, (void **)&w);
  if (st != SHIRO_OK) return st;
  F->Tp = l;
  F->Tk = l + nc + 1;
  F->f = F->Tk + ne;
  F->rres = F->f + ne;
  F->cres = F->rres + nr;
  F->rptr = F->cres + nc;
  F->cptr = F->rptr + nr;
  F->cseen = (uint64_t *)(F->cptr + nc);
  F->Ti = w;
  F->rlev = w + ne;
  F->clev = F->rlev + nr;
  F->queue = F->clev + nc;
  F->path = F->queue + nr + nc;
  return SHIRO_OK;
}

/* Builds the transpose (rows in increasing order within a column) and sets
 * the flow to zero, the residual capacities to the weights. */
static void flow_init(flow_net *F, const int64_t *rw, const int64_t *cw) {
  int32_t nr = F->nr, nc = F->nc;
  int64_t *next = F->cptr; /* borrowed as the fill pointers */
  memset(F->Tp, 0, ((size_t)nc + 1) * sizeof *F->Tp);
  for (int32_t i = 0; i < nr; i++)
    for (int64_t k = F->Gp[i]; k < F->Gp[i + 1]; k++) F->Tp[F->Gj[k] + 1]++;
  for (int32_t j = 0; j < nc; j++) F->Tp[j + 1] += F->Tp[j];
  for (int32_t j = 0; j < nc; j++) next[j] = F->Tp[j];
  for (int32_t i = 0; i < nr; i++) {
    for (int64_t k = F->Gp[i]; k < F->Gp[i + 1]; k++) {
      int64_t p = next[F->Gj[k]]++;
      F->Ti[p] = i;
      F->Tk[k - F->base] = p;
      F->f[p] = 0;
    }
  }
  for (int32_t i = 0; i < nr; i++) F->rres[i] = rw[i];
  for (int32_t j = 0; j < nc; j++) F->cres[j] = cw[j];
}

/* Greedy start: each edge, in order, carries what both its ends still can. */
static void flow_greedy(flow_net *F) {
  for (int32_t i = 0; i < F->nr; i++) {
    for (int64_t k = F->Gp[i]; k < F->Gp[i + 1] && F->rres[i] > 0; k++) {
      int32_t j = F->Gj[k];
      int64_t d = F->rres[i] < F->cres[j] ? F->rres[i] : F->cres[j];
      if (d <= 0) continue;
      F->f[F->Tk[k - F->base]] += d;
      F->rres[i] -= d;
      F->cres[j] -= d;
    }
  }
}

/* BFS from s over residual arcs; sets rlev, clev and tlev. With `all` it
 * visits everything reachable (for the cut); else it stops after the layer
 * that reaches t. Returns tlev (-1: t unreachable, the flow is maximum). */
static int32_t flow_bfs(flow_net *F, int all) {
  int64_t head = 0, tail = 0; /* up to nr + nc: may exceed int32 */
  for (int32_t i = 0; i < F->nr; i++) {
    F->rlev[i] = F->rres[i] > 0 ? 0 : -1;
    if (F->rres[i] > 0) F->queue[tail++] = i;
  }
  for (int32_t j = 0; j < F->nc; j++) F->clev[j] = -1;
  memset(F->cseen, 0, (((size_t)F->nc + 63) / 64) * sizeof *F->cseen);
  F->tlev = -1;
  while (head < tail) {
    int32_t x = F->queue[head++];
    if (x >= 0) { /* row x: every edge is open */
      int32_t a = F->rlev[x];
      if (!all && F->tlev >= 0 && a > F->tlev) break;
      for (int64_t k = F->Gp[x]; k < F->Gp[x + 1]; k++) {
        int32_t j = F->Gj[k];
        uint64_t bit = (uint64_t)1 << (j & 63);
        if (F->cseen[j >> 6] & bit) continue;
        F->cseen[j >> 6] |= bit;
        F->clev[j] = a;
        F->queue[tail++] = ~j;
        if (F->cres[j] > 0 && F->tlev < 0) F->tlev = a;
      }
    } else { /* column ~x: back along edges that carry flow */
      int32_t j = ~x, a = F->clev[j];
      if (!all && F->tlev >= 0 && a >= F->tlev) break;
      for (int64_t p = F->Tp[j]; p < F->Tp[j + 1]; p++) {
        int32_t r = F->Ti[p];
        if (F->f[p] == 0 || F->rlev[r] >= 0) continue;
        F->rlev[r] = a + 1;
        F->queue[tail++] = r;
      }
    }
  }
  return F->tlev;
}

/* Pushes the bottleneck along path[1..d] (d even: path[d] is the column next
 * to t) and returns the new depth: the tail of the first saturated arc. */
static int64_t flow_augment(flow_net *F, int64_t d, int64_t *pushed) {
  const int32_t *path = F->path;
  int64_t b = F->inf; /* the row → column arcs on the path */
  if (F->rres[path[1]] < b) b = F->rres[path[1]];
  if (F->cres[path[d]] < b) b = F->cres[path[d]];
  for (int64_t p = 2; p < d; p += 2) { /* column path[p] → row path[p+1] */
    int64_t r = F->f[F->cptr[path[p]]];
    if (r < b) b = r;
  }
  F->rres[path[1]] -= b;
  F->cres[path[d]] -= b;
  for (int64_t p = 1; p < d; p++) {
    if (p & 1)
      F->f[F->Tk[F->rptr[path[p]] - F->base]] += b; /* row → column: more flow */
    else
      F->f[F->cptr[path[p]]] -= b; /* column → row: cancel flow */
  }
  *pushed += b;
  if (F->rres[path[1]] == 0) return 0;
  for (int64_t p = 2; p < d; p += 2)
    if (F->f[F->cptr[path[p]]] == 0) return p;
  return d; /* column → t saturated */
}

/* Tries to step from row i to a column of the next layer.
 * Returns the column or -1 (arcs spent). */
static int32_t flow_row_arc(flow_net *F, int32_t i) {
  int64_t k = F->rptr[i], end = F->Gp[i + 1];
  while (k < end && F->clev[F->Gj[k]] != F->rlev[i]) k++;
  F->rptr[i] = k;
  return k < end ? F->Gj[k] : -1;
}

/* Tries to step from column j to a row of the next layer (returns it), or
 * to t (returns nr, meaning t); -1 when its arcs are spent. */
static int32_t flow_col_arc(flow_net *F, int32_t j) {
  int64_t p = F->cptr[j], end = F->Tp[j + 1];
  while (p < end && !(F->f[p] > 0 && F->rlev[F->Ti[p]] == F->clev[j] + 1)) p++;
  if (p == end && !(F->cres[j] > 0 && F->clev[j] == F->tlev)) p++;
  F->cptr[j] = p;
  if (p < end) return F->Ti[p];
  return p == end ? F->nr : -1;
}

/* One blocking flow on the layered graph; returns the flow pushed. */
static int64_t flow_blocking(flow_net *F) {
  int32_t *path = F->path, s_arc = 0;
  int64_t d = 0; /* depth of the path: up to 2 min(nr, nc) + 1 */
  int64_t pushed = 0;
  for (int32_t i = 0; i < F->nr; i++) F->rptr[i] = F->Gp[i];
  for (int32_t j = 0; j < F->nc; j++) F->cptr[j] = F->Tp[j];
  for (;;) {
    int32_t v;
    if (d == 0) { /* at s: the next open row of layer 0 */
      while (s_arc < F->nr && !(F->rres[s_arc] > 0 && F->rlev[s_arc] == 0)) s_arc++;
      if (s_arc == F->nr) return pushed;
      path[d = 1] = s_arc;
      continue;
    }
    int32_t u = path[d];
    if (d & 1) {
      v = flow_row_arc(F, u);
      if (v < 0) F->rlev[u] = -1;
    } else {
      v = flow_col_arc(F, u);
      if (v == F->nr) { /* reached t */
        d = flow_augment(F, d, &pushed);
        continue;
      }
      if (v < 0) F->clev[u] = -1;
    }
    if (v >= 0) {
      path[++d] = v;
      continue;
    }
    /* Dead end: retreat and move the parent's current arc past it. */
    if (--d == 0)
      s_arc++;
    else if (d & 1)
      F->rptr[path[d]]++;
    else
      F->cptr[path[d]]++;
  }
}

shiro_status cover_weighted(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                            const int64_t *rw, const int64_t *cw, cover_ws *ws,
                            uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *flow) {
  shiro_status st = cover_check_graph(nr, nc, Gp, Gj);
  if (st != SHIRO_OK) return st;
  if (!ws || !weight || !flow || (nr > 0 && (!rw || !rcov)) || (nc > 0 && (!cw || !ccov)))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument");
  int64_t total;
  st = cover_sum_weights(nr, nc, rw, cw, &total);
  if (st != SHIRO_OK) return shiro_fail(NULL, st, "negative weight or weight sum overflow");
  flow_net F = {.nr = nr, .nc = nc, .Gp = Gp, .Gj = Gj, .base = Gp ? Gp[0] : 0, .inf = total + 1};
  st = flow_alloc(ws, &F, cover_graph_edges(nr, Gp));
  if (st != SHIRO_OK) return st;

  flow_init(&F, rw, cw);
  flow_greedy(&F);
  while (flow_bfs(&F, 0) >= 0) {
    /* t is reachable, so the blocking flow must push something. */
    if (flow_blocking(&F) == 0)
      return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "Dinic phase pushed nothing");
  }
  /* The value of the flow: what left s. */
  int64_t value = total;
  for (int32_t j = 0; j < nc; j++) value -= cw[j];
  for (int32_t i = 0; i < nr; i++) value -= F.rres[i];

  if (flow_bfs(&F, 1) >= 0) return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "flow not maximum");
  int64_t w = 0;
  for (int32_t i = 0; i < nr; i++)
    if (F.rlev[i] < 0) w += rw[i];
  for (int32_t j = 0; j < nc; j++)
    if (F.clev[j] >= 0) w += cw[j];
  if (w != value) return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "cut weight differs from flow");
  /* An isolated row is unreachable only when its weight is 0: leave it out,
   * as König does, at no change of weight. */
  for (int32_t i = 0; i < nr; i++) rcov[i] = F.rlev[i] < 0 && Gp[i + 1] > Gp[i];
  for (int32_t j = 0; j < nc; j++) ccov[j] = F.clev[j] >= 0;
  *weight = w;
  *flow = value;
  return SHIRO_OK;
}
