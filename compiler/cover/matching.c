/* matching.c — maximum cardinality bipartite matching: one augmenting search
 * per row that retires the rows it proves dead, and Hopcroft–Karp's phases
 * when those searches wander too far.
 *
 * Each row, in order, takes its first free column if it sees one (what a
 * greedy pass would do), else gets one depth-first search for an augmenting
 * path (hk_dead_pass); a search that fails retires every row it visited for
 * good. On the planner's graphs many rows can never be matched (R-MAT node
 * pairs: 1.7M of 4.3M rows), and Hopcroft–Karp's phases would walk them again
 * in every phase; retired, each is walked once. Those searches are not
 * shortest paths, so their cost has no O(sqrt(V) E) bound: after 4 × (edges
 * + rows) edge visits they stop, the rows left get the greedy pass, and
 * Hopcroft–Karp finishes from the matching reached. Each phase layers the
 * rows by a BFS from the free rows (row layer d+1 = the mates of the columns
 * next to layer d) up to the first layer that sees a free column, and
 * augments along vertex-disjoint shortest paths found by one DFS pass with
 * current-arc pointers and an explicit stack. Rows are scanned in index order
 * and edges in storage order, so the result depends on the input only. */
#include <stdint.h>

#include "cover_ws.h"
#include "error.h"

/* Matches each free row from `from` on, in order, to its first free column.
 * Returns the pairs made. */
static int64_t hk_greedy(int32_t from, int32_t nr, const int64_t *Gp, const int32_t *Gj, int32_t *rmatch,
                         int32_t *cmatch) {
  int64_t size = 0;
  for (int32_t i = from; i < nr; i++) {
    for (int64_t k = Gp[i]; k < Gp[i + 1] && rmatch[i] < 0; k++) {
      int32_t j = Gj[k];
      if (cmatch[j] < 0) {
        rmatch[i] = j;
        cmatch[j] = i;
        size++;
        break;
      }
    }
  }
  return size;
}

/* BFS from the free rows over alternating paths. Sets dist[i] to the layer of
 * row i, or -1 when it is not reached before the last useful layer. Returns
 * that layer (the first one where a row sees a free column), or -1 when no
 * free column is reachable: the matching is then maximum. queue: [nr]. */
static int32_t hk_bfs(int32_t nr, const int64_t *Gp, const int32_t *Gj, const int32_t *rmatch,
                      const int32_t *cmatch, int32_t *dist, int32_t *queue) {
  int32_t head = 0, tail = 0;
  for (int32_t i = 0; i < nr; i++) {
    dist[i] = rmatch[i] < 0 ? 0 : -1;
    if (rmatch[i] < 0) queue[tail++] = i;
  }
  while (head < tail) {
    int32_t i = queue[head++];
    for (int64_t k = Gp[i]; k < Gp[i + 1]; k++) {
      int32_t w = cmatch[Gj[k]];
      /* Rows of this layer already queued keep their layer; nothing deeper is useful. */
      if (w < 0) return dist[i];
      if (dist[w] < 0) {
        dist[w] = dist[i] + 1;
        queue[tail++] = w;
      }
    }
  }
  return -1;
}

/* Flips the path stack[0..top]: row stack[t] takes the column under its
 * current arc, the last one a free column. Retires the rows of the path from
 * the phase so that the phase's paths are vertex-disjoint. */
static void hk_augment(const int32_t *Gj, const int32_t *stack, int32_t top, const int64_t *ptr,
                       int32_t *rmatch, int32_t *cmatch, int32_t *dist) {
  for (int32_t t = top; t >= 0; t--) {
    int32_t u = stack[t], j = Gj[ptr[u]];
    rmatch[u] = j;
    cmatch[j] = u;
    dist[u] = -1;
  }
}

/* One DFS pass over the layered graph from every free row, in order, with
 * current-arc pointers ptr [nr] (each edge is looked at O(1) times per phase)
 * and an explicit stack [nr]. A row whose arcs are spent is retired
 * (dist = -1). Returns the number of augmenting paths applied. */
static int64_t hk_dfs(int32_t nr, const int64_t *Gp, const int32_t *Gj, int32_t *rmatch,
                      int32_t *cmatch, int32_t *dist, int32_t lim, int32_t *stack, int64_t *ptr) {
  int64_t found = 0;
  for (int32_t i = 0; i < nr; i++) ptr[i] = Gp[i];
  for (int32_t r = 0; r < nr; r++) {
    if (rmatch[r] >= 0 || dist[r] != 0) continue;
    int32_t top = 0;
    stack[0] = r;
    while (top >= 0) {
      int32_t u = stack[top], next = -1;
      int64_t k = ptr[u], end = Gp[u + 1];
      for (; k < end; k++) {
        int32_t w = cmatch[Gj[k]];
        if (w < 0) break; /* a free column: the path is complete */
        if (dist[u] < lim && dist[w] == dist[u] + 1) {
          next = w;
          break;
        }
      }
      ptr[u] = k;
      if (k == end) { /* dead end: retire u, advance the parent's arc */
        dist[u] = -1;
        if (--top >= 0) ptr[stack[top]]++;
      } else if (next >= 0) {
        stack[++top] = next;
      } else {
        hk_augment(Gj, stack, top, ptr, rmatch, cmatch, dist);
        found++;
        break;
      }
    }
  }
  return found;
}

/* A row's stamp once no alternating path from it reaches a free column. */
enum { HK_DEAD = -1 };

/* One augmenting search per free row, in order, from the empty matching: a DFS
 * over alternating paths (row -> column -> its mate), each row at most once
 * per search, that first looks for a free column among a row's edges
 * (lookahead: look[u] only moves forward, since a matched column stays
 * matched). A search that finds a free column flips its path. A search that
 * fails proves every row it visited dead: none reaches a free column. Dead
 * rows stay dead whatever is augmented later (an augmenting path through the
 * rows a dead row reaches would give that row a way out), so later searches
 * skip them, and every dead row is explored once. When every free row is
 * matched or dead, no augmenting path is left: the matching is maximum
 * (returns 1). A row that sees a free column takes the first one, as a
 * greedy pass would. Once `budget` edges have been scanned it starts no new
 * search: the rows left only get the greedy pass (returns 0, the matching
 * valid), so that a graph where the searches wander costs a bounded amount
 * before Hopcroft-Karp's phases take over. Adds the pairs it makes to *found.
 * stamp, list, stack: [nr]; ptr, look: [nr]. */
static int hk_dead_pass(int32_t nr, const int64_t *Gp, const int32_t *Gj, int32_t *rmatch, int32_t *cmatch,
                        int32_t *stamp, int32_t *list, int32_t *stack, int64_t *ptr, int64_t *look,
                        int64_t budget, int64_t *found) {
  int64_t spent = 0;
  int32_t search = 0;
  for (int32_t i = 0; i < nr; i++) {
    stamp[i] = 0;
    look[i] = Gp[i];
  }
  for (int32_t r = 0; r < nr; r++) {
    if (rmatch[r] >= 0 || stamp[r] == HK_DEAD) continue;
    if (spent >= budget || search == INT32_MAX) {
      *found += hk_greedy(r, nr, Gp, Gj, rmatch, cmatch);
      return 0;
    }
    int32_t s = ++search, top = 0, nl = 0;
    stamp[r] = s;
    ptr[r] = Gp[r];
    list[nl++] = r;
    stack[0] = r;
    while (top >= 0) {
      int32_t u = stack[top];
      int64_t k = look[u], end = Gp[u + 1];
      while (k < end && cmatch[Gj[k]] >= 0) k++;
      spent += k - look[u];
      look[u] = k;
      if (k < end) { /* a free column: u takes it, each row below takes the column under its arc */
        int32_t j = Gj[k];
        for (int32_t t = top; t >= 0; t--) {
          int32_t v = stack[t];
          if (t < top) j = Gj[ptr[v]];
          rmatch[v] = j;
          cmatch[j] = v;
        }
        ++*found;
        break;
      }
      int32_t w = -1;
      for (k = ptr[u]; k < end; k++) { /* every column of u is matched */
        w = cmatch[Gj[k]];
        if (stamp[w] != s && stamp[w] != HK_DEAD) break;
      }
      spent += k - ptr[u];
      ptr[u] = k;
      if (k < end) {
        stamp[w] = s;
        ptr[w] = Gp[w];
        list[nl++] = w;
        stack[++top] = w;
      } else if (--top >= 0) {
        ptr[stack[top]]++;
      }
    }
    if (top < 0)
      for (int32_t x = 0; x < nl; x++) stamp[list[x]] = HK_DEAD;
  }
  return 1;
}

shiro_status cover_max_matching(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                                cover_ws *ws, int32_t *rmatch, int32_t *cmatch, int64_t *size) {
  shiro_status st = cover_check_graph(nr, nc, Gp, Gj);
  if (st != SHIRO_OK) return st;
  if (!ws || !size || (nr > 0 && !rmatch) || (nc > 0 && !cmatch))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument");
  int32_t *iw;
  int64_t *ptr;
  st = cover_ws_reserve(ws, &ws->i32, 3 * (int64_t)nr, sizeof(int32_t), (void **)&iw);
  if (st == SHIRO_OK)
    st = cover_ws_reserve(ws, &ws->i64, 2 * (int64_t)nr, sizeof(int64_t), (void **)&ptr);
  if (st != SHIRO_OK) return st;
  int32_t *dist = iw, *queue = iw + nr, *stack = iw + 2 * (int64_t)nr;

  for (int32_t i = 0; i < nr; i++) rmatch[i] = -1;
  for (int32_t j = 0; j < nc; j++) cmatch[j] = -1;
  int64_t n = 0;
  int64_t budget = cover_search_budget(ws, nr, cover_graph_edges(nr, Gp));
  int done = hk_dead_pass(nr, Gp, Gj, rmatch, cmatch, dist, queue, stack, ptr, ptr + nr, budget, &n);
  while (!done) {
    int32_t lim = hk_bfs(nr, Gp, Gj, rmatch, cmatch, dist, queue);
    if (lim < 0) break;
    int64_t more = hk_dfs(nr, Gp, Gj, rmatch, cmatch, dist, lim, stack, ptr);
    /* The BFS saw a shortest augmenting path, so the pass must find one. */
    if (more == 0) return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "Hopcroft-Karp phase found no path");
    n += more;
  }
  *size = n;
  return SHIRO_OK;
}
