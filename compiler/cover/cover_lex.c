/* cover_lex.c — the minimum vertex cover of least secondary weight, from a
 * maximum matching (Dulmage–Mendelsohn), with a max-flow only where a choice
 * is left.
 *
 * With a maximum matching M (each minimum cover takes exactly one end of each
 * pair of M, and nothing else):
 *   Z = reached from the free rows by alternating paths (row → any column,
 *       column → its mate): every minimum cover takes Z's columns, not its rows;
 *   Y = reached from the free columns (column → any row, row → its mate):
 *       every minimum cover takes Y's rows, not its columns;
 *   the other pairs are free to take either end, except that an edge (i, j)
 *   from pair P (i its row) to another pair Q (j its column) forbids "P takes
 *   its column while Q takes its row".
 * A pair with no such edge ("alone") takes its lighter end, its row on a tie.
 * The others go to cover_weighted as their own graph (their rows, their
 * columns, the edges among them), weighted W + rh, W + ch with W above the
 * sum of their rh and ch, so that the fewest vertices come first.
 *
 * The result is the cover cover_weighted gives on the whole graph with weights
 * W + rh, W + ch: of all optimal covers, the one with the fewest rows out and
 * columns in (the source side of the minimal minimum cut, which is unique),
 * because Z is in every optimal source side and Y in none. */
#include <stdint.h>
#include <string.h>

#include "cover_ws.h"
#include "error.h"

/* cover_lex's scratch, carved from its own workspace buffers. */
typedef struct lex_scratch {
  int64_t *Tp; /* [nc+1] transpose of the edges whose column is outside Z */
  int64_t *sGp; /* [nr+1] the graph of the pairs left to choose */
  int64_t *srw, *scw; /* [nr] their weights */
  int32_t *queue; /* [nr+nc] BFS queues */
  int32_t *Ti; /* [edges] transpose: rows */
  int32_t *sGj; /* [edges] the pairs' graph: columns (a pair's id) */
  int32_t *pid; /* [nr] row i's pair id in that graph, or -1; before that, lex_y_dfs's states */
  int32_t *list; /* [nr] the rows one lex_y_dfs search visited */
  uint8_t *z; /* [nr+nc] Z (rows, then columns) */
  uint8_t *y; /* [nr+nc] Y */
  uint8_t *kcov; /* [nr+nc] König's cover (konig_run's output, not used) */
  uint8_t *scov; /* [2 nr] the pairs' cover: rows, then columns */
} lex_scratch;

static shiro_status lex_reserve(cover_ws *ws, int32_t nr, int32_t nc, int64_t ne, lex_scratch *x) {
  int64_t *l;
  int32_t *w;
  uint8_t *b;
  shiro_status st = cover_ws_reserve(ws, &ws->lex64, (int64_t)nc + 1 + 3 * ((int64_t)nr + 1), sizeof *l, (void **)&l);
  if (st == SHIRO_OK) st = cover_ws_reserve(ws, &ws->lex32, 2 * ne + 3 * (int64_t)nr + nc, sizeof *w, (void **)&w);
  if (st == SHIRO_OK) st = cover_ws_reserve(ws, &ws->lex8, 3 * ((int64_t)nr + nc) + 2 * (int64_t)nr, 1, (void **)&b);
  if (st != SHIRO_OK) return st;
  x->Tp = l;
  x->sGp = l + nc + 1;
  x->srw = x->sGp + nr + 1;
  x->scw = x->srw + nr + 1;
  x->queue = w;
  x->Ti = w + nr + nc;
  x->sGj = x->Ti + ne;
  x->pid = x->sGj + ne;
  x->list = x->pid + nr;
  x->z = b;
  x->y = b + nr + nc;
  x->kcov = x->y + nr + nc;
  x->scov = x->kcov + nr + nc;
  return SHIRO_OK;
}

/* Y's rows by the alternating BFS from the free columns, over the transpose
 * of the edges whose column is outside Z (an edge into Z cannot lead into Y). */
static void lex_y_search(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int32_t *rmatch,
                         const int32_t *cmatch, lex_scratch *x) {
  const uint8_t *rz = x->z, *cz = x->z + nr;
  uint8_t *ry = x->y, *cy = x->y + nr;
  int64_t *Tp = x->Tp;
  memset(Tp, 0, ((size_t)nc + 1) * sizeof *Tp);
  for (int32_t i = 0; i < nr; i++) /* a row in Z has all its columns in Z */
    if (!rz[i])
      for (int64_t k = Gp[i]; k < Gp[i + 1]; k++)
        if (!cz[Gj[k]]) Tp[Gj[k] + 1]++;
  for (int32_t j = 0; j < nc; j++) Tp[j + 1] += Tp[j];
  for (int32_t i = 0; i < nr; i++) /* Tp[j] runs to the end of column j, then back */
    if (!rz[i])
      for (int64_t k = Gp[i]; k < Gp[i + 1]; k++)
        if (!cz[Gj[k]]) x->Ti[Tp[Gj[k]]++] = i;
  for (int32_t j = nc; j > 0; j--) Tp[j] = Tp[j - 1];
  Tp[0] = 0;
  memset(x->y, 0, (size_t)nr + (size_t)nc);
  int64_t head = 0, tail = 0;
  for (int32_t j = 0; j < nc; j++)
    if (cmatch[j] < 0) {
      cy[j] = 1;
      x->queue[tail++] = j;
    }
  while (head < tail) {
    int32_t j = x->queue[head++];
    for (int64_t p = Tp[j]; p < Tp[j + 1]; p++) {
      int32_t i = x->Ti[p], w = rmatch[i];
      if (ry[i]) continue;
      ry[i] = 1;
      if (w >= 0 && !cy[w]) {
        cy[w] = 1;
        x->queue[tail++] = w;
      }
    }
  }
}

/* A row's lex_y_dfs state once decided (a positive state is the search that
 * last visited it, undecided). */
enum { LEX_YES = -1,
       LEX_NO = -2 };

/* Whether row u has an exit: a free column, or one whose mate is in Y. */
static int lex_exit(int32_t u, const int64_t *Gp, const int32_t *Gj, const int32_t *cmatch, const int32_t *state) {
  for (int64_t k = Gp[u]; k < Gp[u + 1]; k++) {
    int32_t o = cmatch[Gj[k]];
    if (o < 0 || state[o] == LEX_YES) return 1;
  }
  return 0;
}

/* Y's rows (x->y[i], 1 = in Y): a row is in Y iff an alternating path (row ->
 * column -> its mate) leads it to a free column. One depth-first search per
 * undecided row, in order, each row at most once per search, that checks a
 * row's exits when it first reaches it. A search that reaches an exit puts
 * the rows of its path in Y; one that fails proves every row it visited out
 * of Y (none has a way out), so each such row is walked once. Z's rows are
 * out from the start. Starts no new search once `budget` edges have been
 * visited (returns 0, x->y not written): lex_y_search decides. */
static int lex_y_dfs(int32_t nr, const int64_t *Gp, const int32_t *Gj, const int32_t *cmatch, lex_scratch *x,
                     int64_t budget) {
  const uint8_t *rz = x->z;
  int32_t *state = x->pid, *stack = x->queue, *list = x->list;
  int64_t *ptr = x->sGp, spent = 0;
  int32_t search = 0;
  for (int32_t i = 0; i < nr; i++) state[i] = rz[i] ? LEX_NO : 0;
  for (int32_t r = 0; r < nr; r++) {
    if (state[r] < 0) continue;
    if (spent >= budget || search == INT32_MAX) return 0;
    int32_t s = ++search, top = 0, nl = 0, out = lex_exit(r, Gp, Gj, cmatch, state);
    spent += Gp[r + 1] - Gp[r];
    state[r] = s;
    ptr[r] = Gp[r];
    stack[0] = r;
    list[nl++] = r;
    while (!out && top >= 0) {
      int32_t u = stack[top], w = -1;
      int64_t k = ptr[u], end = Gp[u + 1];
      for (; k < end; k++) { /* u has no exit: every column is matched, no mate in Y */
        w = cmatch[Gj[k]];
        if (state[w] != s && state[w] != LEX_NO) break;
      }
      spent += k - ptr[u];
      ptr[u] = k;
      if (k < end) {
        out = lex_exit(w, Gp, Gj, cmatch, state);
        spent += Gp[w + 1] - Gp[w];
        state[w] = s;
        ptr[w] = Gp[w];
        list[nl++] = w;
        stack[++top] = w;
      } else if (--top >= 0) {
        ptr[stack[top]]++;
      }
    }
    if (out)
      for (int32_t t = 0; t <= top; t++) state[stack[t]] = LEX_YES;
    else
      for (int32_t t = 0; t < nl; t++) state[list[t]] = LEX_NO;
  }
  for (int32_t i = 0; i < nr; i++) x->y[i] = state[i] == LEX_YES;
  return 1;
}

/* Y's rows, by lex_y_dfs, or if its searches wander (4 visits per edge and
 * row), by lex_y_search. Either way exactly Y. (Y's columns, never in a
 * minimum cover, are not needed.) */
static void lex_find_y(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int32_t *rmatch,
                       const int32_t *cmatch, lex_scratch *x, int64_t budget) {
  if (!lex_y_dfs(nr, Gp, Gj, cmatch, x, budget)) lex_y_search(nr, nc, Gp, Gj, rmatch, cmatch, x);
}

/* Marks the pairs that have an edge to another undecided pair (pid[i] = 0),
 * numbers them in row order, and builds their graph. Returns their count. */
static int32_t lex_pairs_graph(int32_t nr, const int64_t *Gp, const int32_t *Gj, const int32_t *rmatch,
                               const int32_t *cmatch, lex_scratch *x) {
  const uint8_t *rz = x->z, *ry = x->y;
  int32_t *pid = x->pid;
  for (int32_t i = 0; i < nr; i++) pid[i] = -1;
  for (int32_t i = 0; i < nr; i++) {
    if (rmatch[i] < 0 || rz[i] || ry[i]) continue;
    for (int64_t k = Gp[i]; k < Gp[i + 1]; k++) {
      int32_t j = Gj[k], o = cmatch[j]; /* o: j's mate; matched, since i is not in Y */
      if (j == rmatch[i] || o < 0 || rz[o]) continue; /* a column in Z is in every cover */
      pid[i] = pid[o] = 0;
    }
  }
  int32_t n = 0;
  for (int32_t i = 0; i < nr; i++)
    if (pid[i] == 0) pid[i] = n++;
  int64_t e = 0;
  for (int32_t i = 0, p = 0; i < nr; i++) {
    if (pid[i] < 0) continue;
    x->sGp[p++] = e;
    for (int64_t k = Gp[i]; k < Gp[i + 1]; k++) {
      int32_t o = cmatch[Gj[k]];
      if (o >= 0 && !rz[o]) x->sGj[e++] = pid[o];
    }
  }
  x->sGp[n] = e;
  return n;
}

shiro_status cover_lex(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int64_t *rh,
                       const int64_t *ch, const int32_t *rmatch, const int32_t *cmatch, cover_ws *ws,
                       uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *bound) {
  int64_t size;
  if (nr < 0 || nc < 0 || (nr > 0 && (!rmatch || !rcov)) || (nc > 0 && (!cmatch || !ccov)))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument or negative size");
  /* the graph was checked by cover_max_matching: only the mirror here */
  if (cover_check_mirror(nr, nc, rmatch, cmatch, &size) != SHIRO_OK)
    return shiro_fail(NULL, SHIRO_ERR_ARG, "not a matching");
  return cover_lex_matched(nr, nc, Gp, Gj, rh, ch, rmatch, cmatch, size, ws, rcov, ccov, weight, bound);
}

shiro_status cover_lex_matched(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int64_t *rh,
                               const int64_t *ch, const int32_t *rmatch, const int32_t *cmatch, int64_t size,
                               cover_ws *ws, uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *bound) {
  shiro_status st;
  if (nr < 0 || nc < 0 || size < 0 || (nr > 0 && !Gp) || !ws || !weight || !bound ||
      (nr > 0 && (!rh || !rmatch || !rcov)) || (nc > 0 && (!ch || !cmatch || !ccov)))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "NULL argument or negative size");
  int64_t total;
  if (cover_sum_weights(nr, nc, rh, ch, &total) != SHIRO_OK || total > INT64_MAX / 4 / ((int64_t)nr + 1))
    return shiro_fail(NULL, SHIRO_ERR_ARG, "negative weight or weights too large");
  lex_scratch x;
  int64_t ne = cover_graph_edges(nr, Gp);
  st = lex_reserve(ws, nr, nc, ne, &x);
  if (st != SHIRO_OK) return st;
  st = konig_run(nr, nc, Gp, Gj, rmatch, cmatch, size, x.queue, x.z, SHIRO_ERR_ARG, x.kcov, x.kcov + nr);
  if (st != SHIRO_OK) return st; /* the matching is not maximum */
  lex_find_y(nr, nc, Gp, Gj, rmatch, cmatch, &x, cover_search_budget(ws, nr, ne));
  int32_t n = lex_pairs_graph(nr, Gp, Gj, rmatch, cmatch, &x);
  /* The pairs left to choose: W + rh, W + ch, W above their sum of hops. */
  int64_t W = 1, sw = 0, sf = 0;
  for (int32_t i = 0; i < nr; i++)
    if (x.pid[i] >= 0) W += rh[i] + ch[rmatch[i]];
  for (int32_t i = 0; i < nr; i++)
    if (x.pid[i] >= 0) {
      x.srw[x.pid[i]] = W + rh[i];
      x.scw[x.pid[i]] = W + ch[rmatch[i]];
    }
  if (n > 0) {
    st = cover_weighted(n, n, x.sGp, x.sGj, x.srw, x.scw, ws, x.scov, x.scov + n, &sw, &sf);
    if (st != SHIRO_OK) return st;
    int64_t taken = 0;
    for (int32_t p = 0; p < 2 * n; p++) taken += x.scov[p];
    if (sw != sf || taken != n) return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "pairs' cover is not minimum");
  }
  /* The cover: Z's columns, Y's rows, each undecided pair's chosen end. The
   * bound: what each pair's end must weigh (a Z column is a Z row's mate),
   * the flow's part for the pairs it chose; w and count: what was taken. */
  const uint8_t *rz = x.z, *cz = x.z + nr, *ry = x.y;
  int64_t w = 0, low = sf - W * n, count = 0;
  for (int32_t j = 0; j < nc; j++) {
    ccov[j] = cz[j];
    low += cz[j] ? ch[j] : 0;
  }
  for (int32_t i = 0; i < nr; i++) {
    int32_t j = rmatch[i];
    int col;
    if (rz[i] || ry[i]) {
      col = 0;
      rcov[i] = ry[i];
      low += ry[i] ? rh[i] : 0;
    } else if (x.pid[i] < 0) {
      col = ch[j] < rh[i];
      rcov[i] = (uint8_t)!col;
      low += col ? ch[j] : rh[i];
    } else {
      col = x.scov[n + x.pid[i]];
      rcov[i] = x.scov[x.pid[i]];
    }
    if (col) ccov[j] = 1;
    w += rcov[i] ? rh[i] : 0;
    count += rcov[i];
  }
  for (int32_t j = 0; j < nc; j++) {
    w += ccov[j] ? ch[j] : 0;
    count += ccov[j];
  }
  if (count != size || w != low)
    return shiro_fail(NULL, SHIRO_ERR_INTERNAL, "cover: %lld vertices for %lld pairs, weight %lld, bound %lld",
                      (long long)count, (long long)size, (long long)w, (long long)low);
  *weight = w;
  *bound = low;
  return SHIRO_OK;
}
