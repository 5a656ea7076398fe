/* konig.c — minimum vertex cover from a maximum matching (König's theorem).
 *
 * Z = the vertices reached from the unmatched rows by alternating paths (any
 * edge row→column, the matching edge column→row). The cover is
 * (rows not in Z) ∪ (columns in Z): an edge (i, j) with i in Z has j in Z.
 * Every column in Z is matched (else the matching had an augmenting path) and
 * its mate is in Z, every row outside Z is matched and its mate is outside Z,
 * so each matching pair gives exactly one cover vertex. */
#include <stdint.h>
#include <string.h>

#include "cover_ws.h"
#include "error.h"

/* Checks that (rmatch, cmatch) is a matching of the graph: entries in range
 * or -1, the two arrays mirror each other, each pair is an edge. Sets *size to
 * the number of pairs. O(nr + nc + edges). */
static shiro_status konig_check_matching(int32_t nr, int32_t nc, const int64_t *Gp,
                                         const int32_t *Gj, const int32_t *rmatch,
                                         const int32_t *cmatch, int64_t *size) {
  if (cover_check_mirror(nr, nc, rmatch, cmatch, size) != SHIRO_OK) return SHIRO_ERR_ARG;
  for (int32_t i = 0; i < nr; i++) {
    int32_t j = rmatch[i];
    if (j < 0) continue;
    int64_t k = Gp[i];
    while (k < Gp[i + 1] && Gj[k] != j) k++;
    if (k == Gp[i + 1]) return SHIRO_ERR_ARG; /* matched along a non-edge */
  }
  return SHIRO_OK;
}

/* The alternating BFS (the set Z, left in mark) and the cover. */
shiro_status konig_run(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                       const int32_t *rmatch, const int32_t *cmatch, int64_t size,
                       int32_t *queue, uint8_t *mark, shiro_status notmax,
                       uint8_t *rcov, uint8_t *ccov) {
  uint8_t *rz = mark, *cz = mark + nr;
  int32_t head = 0, tail = 0;
  memset(mark, 0, (size_t)nr + (size_t)nc);
  for (int32_t i = 0; i < nr; i++) {
    if (rmatch[i] < 0) {
      rz[i] = 1;
      queue[tail++] = i;
    }
  }
  while (head < tail) {
    int32_t i = queue[head++];
    for (int64_t k = Gp[i]; k < Gp[i + 1]; k++) {
      int32_t j = Gj[k];
      if (cz[j]) continue;
      cz[j] = 1;
      int32_t w = cmatch[j];
      if (w < 0) return shiro_fail(NULL, notmax, "matching is not maximum");
      if (!rz[w]) {
        rz[w] = 1;
        queue[tail++] = w;
      }
    }
  }
  int64_t n = 0;
  for (int32_t i = 0; i < nr; i++) n += rcov[i] = (uint8_t)!rz[i];
  for (int32_t j = 0; j < nc; j++) n += ccov[j] = cz[j];
  /* König: |cover| = |matching|; anything else is a bug here. */
  if (n != size) return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "cover size differs from matching");
  return SHIRO_OK;
}

/* Takes the scratch konig_run needs. */
static shiro_status konig_scratch(cover_ws *ws, int32_t nr, int32_t nc, int32_t **queue,
                                  uint8_t **mark) {
  shiro_status st = cover_ws_reserve(ws, &ws->i32, nr, sizeof(int32_t), (void **)queue);
  if (st != SHIRO_OK) return st;
  return cover_ws_reserve(ws, &ws->u8, (int64_t)nr + nc, 1, (void **)mark);
}

shiro_status cover_konig(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                         const int32_t *rmatch, const int32_t *cmatch, cover_ws *ws,
                         uint8_t *rcov, uint8_t *ccov) {
  shiro_status st = cover_check_graph(nr, nc, Gp, Gj);
  if (st != SHIRO_OK) return st;
  if (!ws || (nr > 0 && (!rmatch || !rcov)) || (nc > 0 && (!cmatch || !ccov)))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument");
  int64_t size;
  st = konig_check_matching(nr, nc, Gp, Gj, rmatch, cmatch, &size);
  if (st != SHIRO_OK) return st;
  int32_t *queue;
  uint8_t *mark;
  st = konig_scratch(ws, nr, nc, &queue, &mark);
  if (st != SHIRO_OK) return st;
  return konig_run(nr, nc, Gp, Gj, rmatch, cmatch, size, queue, mark, SHIRO_ERR_ARG, rcov, ccov);
}

shiro_status cover_konig_matched(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                                 const int32_t *rmatch, const int32_t *cmatch, int64_t size, cover_ws *ws,
                                 uint8_t *rcov, uint8_t *ccov) {
  if (!ws || size < 0 || (nr > 0 && (!Gp || !rmatch || !rcov)) || (nc > 0 && (!cmatch || !ccov)))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument");
  int32_t *queue;
  uint8_t *mark;
  shiro_status st = konig_scratch(ws, nr, nc, &queue, &mark);
  if (st != SHIRO_OK) return st;
  return konig_run(nr, nc, Gp, Gj, rmatch, cmatch, size, queue, mark, SHIRO_ERR_ARG, rcov, ccov);
}

shiro_status cover_min_vertex_cover(int32_t nr, int32_t nc, const int64_t *Gp,
                                    const int32_t *Gj, cover_ws *ws, uint8_t *rcov,
                                    uint8_t *ccov, int64_t *size) {
  if (!ws || !size || (nr > 0 && !rcov) || (nc > 0 && !ccov))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument");
  if (nr < 0 || nc < 0) return shiro_fail(NULL, SHIRO_ERR_ARG, "negative graph size");
  int32_t *match, *queue;
  uint8_t *mark;
  /* All scratch first, so that no output is written before a NOMEM. The
   * matching lives in its own buffer: the matcher and König use the others. */
  shiro_status st = cover_ws_reserve(ws, &ws->match, (int64_t)nr + nc, sizeof(int32_t),
                                     (void **)&match);
  if (st == SHIRO_OK) st = konig_scratch(ws, nr, nc, &queue, &mark);
  if (st != SHIRO_OK) return st;
  int64_t n;
  st = cover_max_matching(nr, nc, Gp, Gj, ws, match, match + nr, &n);
  if (st != SHIRO_OK) return st;
  /* The matcher may have moved the i32 scratch: take it again (no growth now). */
  st = konig_scratch(ws, nr, nc, &queue, &mark);
  if (st != SHIRO_OK) return st;
  st = konig_run(nr, nc, Gp, Gj, match, match + nr, n, queue, mark, SHIRO_ERR_INTERNAL, rcov,
                 ccov);
  if (st != SHIRO_OK) return st;
  *size = n;
  return SHIRO_OK;
}
