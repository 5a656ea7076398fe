/* group_cover.c — the `group` strategy: one minimum weighted vertex cover per
 * ordered pair of distinct nodes (N ← H), over the whole block A(rows of N,
 * columns of H).
 *
 * Weights are lexicographic: W + f for a column (B row) and W + g for a row
 * (C row), with W larger than every possible sum of f and g, so the cover has
 * the fewest vertices — the fewest inter-node rows, Σ μ(A(N,H)) — and among
 * those the fewest intra-node hops. f_j = the ranks of N other than the
 * rail-aligned receiver that need column j (forwards inside N); g_i = the
 * ranks of H other than the aggregator that hold nonzeros of row i (partials
 * sent inside H). It is solved as a maximum matching (the certificate) and
 * cover_lex from it: the cover cover_weighted would give with these weights,
 * without running max-flow on the whole graph. The cover is then cut back to
 * the blocks (p, q): a column is sent to p only if p has a nonzero in it
 * whose row is not selected, and a row is computed by q only if q still holds
 * one of its nonzeros.
 *
 * strategy_select_group_balanced (hybrid's) starts from these covers and uses
 * the freedom among each pair's minimum covers: the weights above get, per
 * vertex, a price for the NICs it loads (a column of part x: q -> rail(N, q)
 * in stage 0; a row of part y: rail(H, p) -> p in stage 1), so the cover
 * still has the fewest vertices and, among those, the cheapest links. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "error.h"
#include "sorted.h"
#include "strategy.h"

/* The four NIC links part y of node pair (N <- H) loads, as indices into a [4R] table of links:
 * l[0], l[1] stage 0 (a column of q = H*G+y: out of q, into rail(N, q)); l[2], l[3] stage 1 (a row
 * of p = N*G+y: out of rail(H, p), into p); -1 where q or p is past the last rank. */
static void part_links(int32_t N, int32_t H, int32_t y, int32_t G, int32_t R, int64_t l[4]) {
  int32_t q = H * G + y, p = N * G + y;
  l[0] = q < R ? q : -1;
  l[1] = q < R ? R + sc_rail(N, q, G, R) : -1;
  l[2] = p < R ? 2 * (int64_t)R + sc_rail(H, p, G, R) : -1;
  l[3] = p < R ? 3 * (int64_t)R + p : -1;
}

/* A thread's scratch for merge_lists: a bitmap (zero between calls) and the
 * index of each value, over the widest value range seen. */
typedef struct stamp {
  uint64_t *bits;
  int32_t *at;
  int64_t cap;
} stamp;

/* Merges the nl sorted lists (lists[y], n[y]) into out (sorted, unique;
 * room for Σ n[y]) and returns its length; map[y][h] = the index in out of
 * lists[y][h]. Over the lists' value range [lo, hi] (at most a part's
 * width): marks each value in a bitmap, numbers the marks in one sweep of
 * its words, reads the numbers back. O(Σ n + (hi - lo) / 64), no
 * comparisons between lists. -1: out of memory. */
static int64_t merge_lists(int32_t nl, const int32_t *const *lists, const int64_t *n, int64_t *out,
                           int32_t *const *map, stamp *st) {
  int64_t lo = INT64_MAX, hi = -1;
  for (int32_t y = 0; y < nl; y++)
    if (n[y]) {
      if (lists[y][0] < lo) lo = lists[y][0];
      if (lists[y][n[y] - 1] > hi) hi = lists[y][n[y] - 1];
    }
  if (hi < 0) return 0;
  if (hi - lo + 1 > st->cap) {
    int64_t cap = hi - lo + 1;
    uint64_t *bits = calloc((size_t)(cap / 64 + 1), sizeof *bits);
    int32_t *at = malloc((size_t)cap * sizeof *at);
    if (!bits || !at) {
      free(bits);
      free(at);
      return -1;
    }
    free(st->bits);
    free(st->at);
    st->bits = bits;
    st->at = at;
    st->cap = cap;
  }
  uint64_t *bits = st->bits;
  int32_t *at = st->at;
  for (int32_t y = 0; y < nl; y++)
    for (int64_t h = 0; h < n[y]; h++) {
      int64_t v = lists[y][h] - lo;
      bits[v >> 6] |= (uint64_t)1 << (v & 63);
    }
  int64_t u = sc_bits_drain(bits, ((hi - lo) >> 6) + 1, lo, out, at);
  for (int32_t y = 0; y < nl; y++)
    for (int64_t h = 0; h < n[y]; h++) map[y][h] = at[lists[y][h] - lo];
  return u;
}

/* The rows/columns of one node pair, the combined graph and its weights. */
typedef struct node_pair {
  int32_t N, H; /* destination node (rows), source node (columns) */
  int64_t *tlist;
  int64_t nt; /* blocks (p in N, q in H) */
  int64_t **rows;
  int64_t *nrows, *roff; /* per p in N (index p - N*G): sorted rows, combined offset */
  int64_t **cols;
  int64_t *ncols, *coff; /* per q in H */
  int64_t nr, nc, ne;
  int64_t *Gp;
  int32_t *Gj;
  int64_t *rw, *cw; /* graph; hop counts g (rows) and f (columns) */
  uint8_t *rcov, *ccov;
  int64_t ncert;
  int64_t *cert; /* [ncert × 2] global (i, j): a maximum matching, the cover's certificate */
  int64_t *cert_at; /* [G+1] the pairs of part x are [cert_at[x], cert_at[x+1]) */
  int32_t **rmap, **cmap; /* [nt] per block: combined id of each row / column within its rank's part */
  int32_t *maps; /* the storage of rmap and cmap */
  void *merge; /* merge_lists' arguments: G list heads, lengths, maps */
} node_pair;

static void np_free(node_pair *np, int32_t G) {
  for (int32_t x = 0; x < G; x++) {
    if (np->rows) free(np->rows[x]);
    if (np->cols) free(np->cols[x]);
  }
  free(np->tlist);
  free(np->rows);
  free(np->nrows);
  free(np->roff);
  free(np->cols);
  free(np->ncols);
  free(np->coff);
  free(np->Gp);
  free(np->Gj);
  free(np->rw);
  free(np->cw);
  free(np->rcov);
  free(np->ccov);
  free(np->cert);
  free(np->cert_at);
  free(np->rmap);
  free(np->cmap);
  free(np->maps);
  free(np->merge);
}

/* Fills err with "group: node pair N <- H: " and what failed, returns st. */
static shiro_status np_fail(const node_pair *np, shiro_error *err, shiro_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static shiro_status np_fail(const node_pair *np, shiro_error *err, shiro_status st, const char *fmt, ...) {
  char what[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return shiro_fail(err, st, "group: node pair %d <- %d (rows of node %d, columns of node %d): %s", np->N, np->H,
                    np->N, np->H, what);
}

/* Global id of combined column v, given per-part offsets and lists. */
static int64_t global_of(int64_t v, const int64_t *off, int64_t *const *lists, int32_t G) {
  int32_t x = 0;
  while (x + 1 < G && off[x + 1] <= v) x++;
  return lists[x][v - off[x]];
}

/* The cover of the node pair and its certificate: a maximum matching (its
 * size is the cover's cardinality: no node-level cover moves fewer inter-node
 * rows), then the fewest hops among the covers of that size (cover_lex). The
 * matching is kept as global (i, j) pairs in row order, which is part order:
 * cert_at[x] starts the pairs whose row rank N * G + x owns. On failure err
 * names the node pair, the step and the solver's status. */
static shiro_status np_cover(node_pair *np, int32_t G, cover_ws *ws, shiro_error *err) {
  int32_t *rm = malloc(((size_t)np->nr + 1) * sizeof *rm), *cm = malloc(((size_t)np->nc + 1) * sizeof *cm);
  int64_t size = 0, weight = 0, bound = -1;
  shiro_status st = SHIRO_OK;
  if (!rm || !cm) {
    st = np_fail(np, err, SHIRO_ERR_NOMEM, "out of memory for its matching (%lld rows, %lld columns)",
                 (long long)np->nr, (long long)np->nc);
    goto done;
  }
  st = cover_max_matching((int32_t)np->nr, (int32_t)np->nc, np->Gp, np->Gj, ws, rm, cm, &size);
  if (st != SHIRO_OK) {
    st = np_fail(np, err, st, "maximum matching failed: %s (%lld rows, %lld columns, %lld edges)",
                 shiro_strerror(st), (long long)np->nr, (long long)np->nc, (long long)np->ne);
    goto done;
  }
  st = cover_lex_matched((int32_t)np->nr, (int32_t)np->nc, np->Gp, np->Gj, np->rw, np->cw, rm, cm, size, ws,
                         np->rcov, np->ccov, &weight, &bound);
  if (st != SHIRO_OK) {
    st = np_fail(np, err, st, "fewest-hop cover (cover_lex) failed: %s (%lld rows, %lld columns, %lld edges, "
                              "matching of %lld pairs)",
                 shiro_strerror(st), (long long)np->nr, (long long)np->nc,
                 (long long)np->ne, (long long)size);
    goto done;
  }
  if (weight != bound) {
    st = np_fail(np, err, SHIRO_ERR_INTERNAL, "the cover's hop weight %lld is not the bound %lld its matching "
                                              "and flow prove",
                 (long long)weight, (long long)bound);
    goto done;
  }
  np->cert = malloc((size_t)(size ? size : 1) * 2 * sizeof *np->cert);
  np->cert_at = malloc(((size_t)G + 1) * sizeof *np->cert_at);
  if (!np->cert || !np->cert_at) {
    st = np_fail(np, err, SHIRO_ERR_NOMEM, "out of memory for its certificate (%lld pairs)", (long long)size);
    goto done;
  }
  for (int32_t x = 0; x < G; x++) {
    np->cert_at[x] = np->ncert;
    for (int64_t i = np->roff[x]; i < np->roff[x + 1]; i++)
      if (rm[i] >= 0) {
        np->cert[2 * np->ncert] = np->rows[x][i - np->roff[x]];
        np->cert[2 * np->ncert + 1] = global_of(rm[i], np->coff, np->cols, G);
        np->ncert++;
      }
  }
  np->cert_at[G] = np->ncert;
done:
  free(rm);
  free(cm);
  return st;
}

/* Builds the combined graph and weights of node pair (N, H): SHIRO_OK,
 * SHIRO_ERR_NOMEM or SHIRO_ERR_UNSUPPORTED (more than 2^31-1 rows or
 * columns); np_build says which. */
static shiro_status np_graph(const sc_blocks *B, int32_t G, const int64_t *price, node_pair *np, stamp *st) {
  int32_t R = B->parts;
  int32_t N = np->N, H = np->H;
  np->rows = calloc((size_t)G, sizeof *np->rows);
  np->nrows = calloc((size_t)G, sizeof *np->nrows);
  np->roff = calloc((size_t)G + 1, sizeof *np->roff);
  np->cols = calloc((size_t)G, sizeof *np->cols);
  np->ncols = calloc((size_t)G, sizeof *np->ncols);
  np->coff = calloc((size_t)G + 1, sizeof *np->coff);
  np->tlist = malloc((size_t)G * G * sizeof *np->tlist);
  if (!np->rows || !np->nrows || !np->roff || !np->cols || !np->ncols || !np->coff || !np->tlist) return SHIRO_ERR_NOMEM;
  int64_t nmap = 0;
  for (int32_t p = N * G; p < (N + 1) * G && p < R; p++)
    for (int64_t t = B->first_p[p]; t < B->first_p[p + 1]; t++)
      if (B->b[t].q / G == H) {
        np->tlist[np->nt++] = t;
        nmap += B->b[t].nr + B->b[t].nc;
        np->ne += B->b[t].ne;
      }
  np->rmap = malloc((size_t)(np->nt ? np->nt : 1) * sizeof *np->rmap);
  np->cmap = malloc((size_t)(np->nt ? np->nt : 1) * sizeof *np->cmap);
  np->maps = malloc((size_t)(nmap ? nmap : 1) * sizeof *np->maps);
  if (!np->rmap || !np->cmap || !np->maps) return SHIRO_ERR_NOMEM;
  for (int64_t y = 0, at = 0; y < np->nt; y++) {
    const sc_block *b = &B->b[np->tlist[y]];
    np->rmap[y] = np->maps + at;
    at += b->nr;
    np->cmap[y] = np->maps + at;
    at += b->nc;
  }
  /* per part x: the union of the rows of p = N*G + x, of the columns of q = H*G + x */
  np->merge = malloc((size_t)G * (sizeof(int32_t *) + sizeof(int64_t) + sizeof(int32_t *)));
  if (!np->merge) return SHIRO_ERR_NOMEM;
  const int32_t **lists = np->merge;
  int64_t *nl = (int64_t *)(lists + G);
  int32_t **maps = (int32_t **)(nl + G);
  for (int32_t x = 0; x < G; x++) {
    int32_t k = 0, c = 0;
    int64_t nr = 0, nc = 0;
    for (int64_t y = 0; y < np->nt; y++) {
      const sc_block *b = &B->b[np->tlist[y]];
      if (b->p == N * G + x) {
        lists[k] = b->rows;
        nl[k] = b->nr;
        maps[k++] = np->rmap[y];
        nr += b->nr;
      }
    }
    np->rows[x] = malloc((size_t)(nr ? nr : 1) * sizeof **np->rows);
    if (!np->rows[x]) return SHIRO_ERR_NOMEM;
    np->nrows[x] = merge_lists(k, lists, nl, np->rows[x], maps, st);
    for (int64_t y = 0; y < np->nt; y++) {
      const sc_block *b = &B->b[np->tlist[y]];
      if (b->q == H * G + x) {
        lists[c] = b->cols;
        nl[c] = b->nc;
        maps[c++] = np->cmap[y];
        nc += b->nc;
      }
    }
    np->cols[x] = malloc((size_t)(nc ? nc : 1) * sizeof **np->cols);
    if (!np->cols[x]) return SHIRO_ERR_NOMEM;
    np->ncols[x] = merge_lists(c, lists, nl, np->cols[x], maps, st);
    if (np->nrows[x] < 0 || np->ncols[x] < 0) return SHIRO_ERR_NOMEM;
    np->roff[x + 1] = np->roff[x] + np->nrows[x];
    np->coff[x + 1] = np->coff[x] + np->ncols[x];
  }
  np->nr = np->roff[G];
  np->nc = np->coff[G];
  if (np->nr > INT32_MAX || np->nc > INT32_MAX) return SHIRO_ERR_UNSUPPORTED;
  np->Gp = calloc((size_t)np->nr + 1, sizeof *np->Gp);
  np->Gj = malloc((size_t)(np->ne ? np->ne : 1) * sizeof *np->Gj);
  np->rw = calloc((size_t)np->nr + 1, sizeof *np->rw);
  np->cw = calloc((size_t)np->nc + 1, sizeof *np->cw);
  np->rcov = malloc((size_t)np->nr + 1);
  np->ccov = malloc((size_t)np->nc + 1);
  if (!np->Gp || !np->Gj || !np->rw || !np->cw || !np->rcov || !np->ccov) return SHIRO_ERR_NOMEM;
  /* Edge counts per combined row, and the hop counts g (rows) and f (columns). */
  for (int64_t y = 0; y < np->nt; y++) {
    const sc_block *b = &B->b[np->tlist[y]];
    int32_t xp = b->p - N * G, xq = b->q - H * G;
    int g_hop = b->q != sc_rail(H, b->p, G, R), f_hop = b->p != sc_rail(N, b->q, G, R);
    for (int32_t i = 0; i < b->nr; i++) {
      int64_t ci = np->roff[xp] + np->rmap[y][i];
      np->Gp[ci + 1] += b->Gp[i + 1] - b->Gp[i];
      np->rw[ci] += g_hop;
    }
    for (int32_t j = 0; j < b->nc; j++) np->cw[np->coff[xq] + np->cmap[y][j]] += f_hop;
  }
  if (price) /* each vertex also pays for the NIC links it loads (part_links) */
    for (int32_t x = 0; x < G; x++) {
      int64_t l[4];
      part_links(N, H, x, G, R, l);
      int64_t pc = l[0] >= 0 ? price[l[0]] + price[l[1]] : 0, pr = l[2] >= 0 ? price[l[2]] + price[l[3]] : 0;
      for (int64_t v = np->coff[x]; v < np->coff[x + 1]; v++) np->cw[v] += pc;
      for (int64_t i = np->roff[x]; i < np->roff[x + 1]; i++) np->rw[i] += pr;
    }
  for (int64_t i = 0; i < np->nr; i++) np->Gp[i + 1] += np->Gp[i];
  int64_t *fill = malloc((size_t)(np->nr ? np->nr : 1) * sizeof *fill);
  if (!fill) return SHIRO_ERR_NOMEM;
  memcpy(fill, np->Gp, (size_t)np->nr * sizeof *fill);
  for (int64_t y = 0; y < np->nt; y++) {
    const sc_block *b = &B->b[np->tlist[y]];
    int32_t xp = b->p - N * G, xq = b->q - H * G;
    const int32_t *cmap = np->cmap[y];
    int32_t co = (int32_t)np->coff[xq];
    for (int32_t i = 0; i < b->nr; i++) {
      int64_t ci = np->roff[xp] + np->rmap[y][i];
      for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) np->Gj[fill[ci]++] = co + cmap[b->Gj[e]];
    }
  }
  free(fill);
  return SHIRO_OK;
}

/* np_graph, with err naming the node pair and what failed. */
static shiro_status np_build(const sc_blocks *B, int32_t G, const int64_t *price, node_pair *np, stamp *st,
                             shiro_error *err) {
  shiro_status s = np_graph(B, G, price, np, st);
  if (s == SHIRO_ERR_UNSUPPORTED)
    return np_fail(np, err, s, "%lld rows and %lld columns, more than the 2^31-1 a cover problem takes; plan for "
                               "more ranks or fewer per node",
                   (long long)np->nr, (long long)np->nc);
  if (s != SHIRO_OK)
    return np_fail(np, err, s, "%s while building its graph (%lld blocks, %lld edges)", shiro_strerror(s),
                   (long long)np->nt, (long long)np->ne);
  return SHIRO_OK;
}

/* Writes the node-pair cover back into its blocks, cut to what each block
 * needs, and counts their entries as block_count_entries would, in the same
 * pass: a row keeps its selection only if one of its columns is not sent,
 * and then puts exactly those nonzeros in partial rows. */
static void np_apply(sc_blocks *B, int32_t G, const node_pair *np) {
  for (int64_t y = 0; y < np->nt; y++) {
    sc_block *b = &B->b[np->tlist[y]];
    const uint8_t *rcov = np->rcov + np->roff[b->p - np->N * G];
    const int32_t *rmap = np->rmap[y];
    uint8_t *rc = b->rsel, *cc = b->csel;
    memset(cc, 0, (size_t)b->nc);
    for (int32_t i = 0; i < b->nr; i++) /* a column is needed only for nonzeros of unselected rows */
      if (!rcov[rmap[i]])
        for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) cc[b->Gj[e]] = 1;
    int64_t partial = 0, remote = 0;
    for (int32_t i = 0; i < b->nr; i++) { /* a row is computed here only if it keeps a nonzero here */
      int64_t sent = 0, n = b->Gp[i + 1] - b->Gp[i];
      for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) sent += cc[b->Gj[e]];
      rc[i] = sent < n;
      remote += sent;
      partial += n - sent; /* 0 for a row not kept */
    }
    b->ent_partial = partial;
    b->ent_remote = remote;
    b->mu = -1; /* the certificate is the node pair's matching, not a per-block one */
    free(b->rmatch);
    b->rmatch = NULL;
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The node pairs N * nodes + H (N != H) some block links, increasing, into
 * *out (malloc'ed); returns how many, -1 when out of memory. An empty pair
 * has nothing to cover: skipping it changes nothing but the time (nodes²
 * pairs, each a dozen allocations, at R = 16384). */
static int64_t linked_pairs(const sc_blocks *B, int32_t G, int32_t nodes, int64_t **out) {
  int64_t *v = malloc((size_t)(B->n ? B->n : 1) * sizeof *v), n = 0;
  if (!v) return -1;
  for (int64_t t = 0; t < B->n; t++) {
    int32_t N = B->b[t].p / G, H = B->b[t].q / G;
    if (N != H) v[n++] = (int64_t)N * nodes + H;
  }
  qsort(v, (size_t)n, sizeof *v, cmp_i64);
  int64_t m = 0;
  for (int64_t x = 0; x < n; x++)
    if (m == 0 || v[x] != v[m - 1]) v[m++] = v[x];
  *out = v;
  return m;
}

/* The columns np's cover selects of each part of H into c[0..G), its rows of each part of N into
 * c[G..2G). */
static void np_counts(const node_pair *np, int32_t G, int64_t *c) {
  for (int32_t y = 0; y < G; y++) {
    c[y] = c[G + y] = 0;
    for (int64_t v = np->coff[y]; v < np->coff[y + 1]; v++) c[y] += np->ccov[v];
    for (int64_t v = np->roff[y]; v < np->roff[y + 1]; v++) c[G + y] += np->rcov[v];
  }
}

/* One pass of group's covers over the linked node pairs, written into the
 * blocks and B->cert (replacing an earlier pass's). price: NULL (group's own
 * weights: fewest hops) or per link of each rank, [4 * R] (stage-0 NIC out,
 * stage-0 NIC in, stage-1 NIC out, stage-1 NIC in), added to every vertex's
 * hop weight. cnt: NULL or [nlinked * 2G]: per pair, the
 * columns selected of each part of H, then the rows of each part of N. */
static shiro_status group_pass(sc_blocks *B, int32_t G, int32_t nodes, const int64_t *linked, int64_t nlinked,
                               const int64_t *price, int64_t *cnt, shiro_error *err) {
  int64_t fail_at = (int64_t)nodes * nodes; /* the failing node pair of lowest index; err holds its message */
  shiro_status fail_st = SHIRO_OK;
#pragma omp parallel
  {
    cover_ws *ws = cover_ws_new();
    stamp st = {NULL, NULL, 0};
#pragma omp for schedule(dynamic, 1)
    for (int64_t x = 0; x < nlinked; x++) {
      int64_t pair = linked[x];
      node_pair np;
      shiro_error perr;
      shiro_status pst;
      int64_t first_fail;
      memset(&np, 0, sizeof np);
      np.N = (int32_t)(pair / nodes);
      np.H = (int32_t)(pair % nodes);
#pragma omp atomic read
      first_fail = fail_at;
      if (np.N == np.H || pair > first_fail) continue; /* pairs before a failure still run: the first one is reported */
      if (!ws) pst = np_fail(&np, &perr, SHIRO_ERR_NOMEM, "out of memory for a cover workspace");
      else if ((pst = np_build(B, G, price, &np, &st, &perr)) == SHIRO_OK) pst = np_cover(&np, G, ws, &perr);
      if (pst != SHIRO_OK) {
#pragma omp critical(group_fail)
        if (pair < fail_at) { /* the lowest failing pair, whatever the threads' timing */
#pragma omp atomic write
          fail_at = pair;
          fail_st = pst;
          if (err) *err = perr;
        }
      } else {
        np_apply(B, G, &np);
        if (cnt) np_counts(&np, G, cnt + x * 2 * G);
        free(B->cert[pair]);
        B->cert[pair] = NULL;
        memset(B->cert_at + pair * (G + 1), 0, ((size_t)G + 1) * sizeof *B->cert_at);
        if (np.ncert) { /* kept: taken out of np before np_free */
          B->cert[pair] = np.cert;
          memcpy(B->cert_at + pair * (G + 1), np.cert_at, ((size_t)G + 1) * sizeof *np.cert_at);
          np.cert = NULL;
        }
      }
      np_free(&np, G);
    }
    cover_ws_free(ws);
    free(st.bits);
    free(st.at);
  }
  return fail_st;
}

/* Sets up B's node-level certificate tables and the linked pairs (*linked, *nlinked). */
static shiro_status group_setup(sc_blocks *B, int32_t G, int32_t nodes, int64_t **linked, int64_t *nlinked,
                                shiro_error *err) {
  int64_t npairs = (int64_t)nodes * nodes;
  blocks_drop_cert(B);
  B->cert_nodes = nodes;
  B->cert_gpn = G;
  B->cert = calloc((size_t)npairs, sizeof *B->cert);
  B->cert_at = calloc((size_t)npairs * ((size_t)G + 1), sizeof *B->cert_at);
  *nlinked = B->cert && B->cert_at ? linked_pairs(B, G, nodes, linked) : -1;
  if (*nlinked < 0) return shiro_fail(err, SHIRO_ERR_NOMEM, "group: out of memory for the node pairs' certificates (%d nodes)", nodes);
  return SHIRO_OK;
}

shiro_status strategy_select_group(sc_blocks *B, int32_t gpn, shiro_error *err) {
  int32_t R = B->parts, G = gpn < R ? gpn : R;
  int32_t nodes = (R + G - 1) / G;
  int64_t *linked = NULL, nlinked = 0;
  shiro_status st = group_setup(B, G, nodes, &linked, &nlinked, err);
  if (st == SHIRO_OK) st = group_pass(B, G, nodes, linked, nlinked, NULL, NULL, err);
  free(linked);
  return st;
}

/* Adds (sign 1) or takes out (-1) node pair `pair`'s counts c[2G] (np_counts) in the link loads L[4R]. */
static void pair_load(int64_t *L, const int64_t *c, int64_t pair, int32_t G, int32_t nodes, int32_t R, int sign) {
  int32_t N = (int32_t)(pair / nodes), H = (int32_t)(pair % nodes);
  for (int32_t y = 0; y < G; y++) {
    int64_t l[4];
    part_links(N, H, y, G, R, l);
    if (l[0] >= 0) {
      L[l[0]] += sign * c[y];
      L[l[1]] += sign * c[y];
    }
    if (l[2] >= 0) {
      L[l[2]] += sign * c[G + y];
      L[l[3]] += sign * c[G + y];
    }
  }
}

/* The busiest link of each stage of loads L (*m0, *m1, rows) and Σ L². */
static void loads_max(const int64_t *L, int32_t R, int64_t *m0, int64_t *m1, double *sq) {
  double q = 0;
  *m0 = *m1 = 0;
  for (int32_t r = 0; r < 2 * R; r++) {
    if (L[r] > *m0) *m0 = L[r];
    if (L[2 * R + r] > *m1) *m1 = L[2 * R + r];
    q += (double)L[r] * L[r] + (double)L[2 * R + r] * L[2 * R + r];
  }
  *sq = q;
}

/* Balanced covers: a pair's vertices are priced BAL_PRICE * (load / busiest of the stage)^BAL_POWER
 * per link they load; only pairs with a link at BAL_HOT of its stage's busiest are solved again. */
#define BAL_PRICE 64.0
#define BAL_POWER 8.0
#define BAL_HOT 0.9

/* 1 if node pair (N <- H), with counts c and its loads taken out of L, loads a link that with
 * them is at BAL_HOT of its stage's busiest (m0, m1); then price[] holds, for every link the pair
 * touches (the ones np_graph reads), its price from the loads without the pair. */
static int pair_price(const int64_t *L, const int64_t *c, int32_t N, int32_t H, int32_t G, int32_t R, int64_t m0,
                      int64_t m1, int64_t *price) {
  int hot = 0;
  for (int32_t y = 0; y < G && !hot; y++) {
    int64_t l[4];
    part_links(N, H, y, G, R, l);
    if (l[0] >= 0 && (L[l[0]] + c[y] >= BAL_HOT * m0 || L[l[1]] + c[y] >= BAL_HOT * m0)) hot = 1;
    if (l[2] >= 0 && (L[l[2]] + c[G + y] >= BAL_HOT * m1 || L[l[3]] + c[G + y] >= BAL_HOT * m1)) hot = 1;
  }
  if (!hot) return 0;
  for (int32_t y = 0; y < G; y++) {
    int64_t l[4];
    part_links(N, H, y, G, R, l);
    for (int k = 0; k < 4; k++) {
      if (l[k] < 0) continue;
      double M = k < 2 ? (double)m0 : (double)m1, f = M > 0 ? (double)L[l[k]] / M : 0;
      price[l[k]] = (int64_t)(BAL_PRICE * pow(f, BAL_POWER) + 0.5);
    }
  }
  return 1;
}

shiro_status strategy_select_group_balanced(sc_blocks *B, int32_t gpn, int rounds, shiro_error *err) {
  return strategy_select_group_own_balanced(B, gpn, rounds, NULL, NULL, err);
}

shiro_status strategy_select_group_own_balanced(sc_blocks *B, int32_t gpn, int rounds, sc_blocks_fn own, void *arg,
                                                shiro_error *err) {
  int32_t R = B->parts, G = gpn < R ? gpn : R;
  int32_t nodes = (R + G - 1) / G;
  int64_t *linked = NULL, nlinked = 0;
  shiro_status st = group_setup(B, G, nodes, &linked, &nlinked, err);
  int64_t *cnt = NULL, *L = NULL, *price = NULL, *c2 = NULL;
  cover_ws *ws = NULL;
  stamp sp = {NULL, NULL, 0};
  if (st != SHIRO_OK) goto done;
  cnt = malloc((size_t)(nlinked ? nlinked : 1) * 2 * G * sizeof *cnt);
  L = calloc((size_t)4 * R, sizeof *L);
  price = calloc((size_t)4 * R, sizeof *price);
  ws = cover_ws_new();
  c2 = malloc((size_t)2 * G * sizeof *c2);
  if (!cnt || !L || !price || !ws || !c2) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "group: out of memory for balancing (%d ranks)", R);
    goto done;
  }
  st = group_pass(B, G, nodes, linked, nlinked, NULL, cnt, err);
  if (st == SHIRO_OK && own) st = own(arg, B, err); /* group's own covers, as strategy_select_group leaves them */
  if (st != SHIRO_OK) goto done;
  for (int64_t x = 0; x < nlinked; x++) pair_load(L, cnt + x * 2 * G, linked[x], G, nodes, R, 1);
  int64_t m0, m1;
  double sq;
  loads_max(L, R, &m0, &m1, &sq);
  int64_t took = 0;
  for (int t = 0; t < rounds; t++) {
    int64_t took0 = took;
    for (int64_t x = 0; x < nlinked; x++) { /* in pair order: deterministic */
      int32_t N = (int32_t)(linked[x] / nodes), H = (int32_t)(linked[x] % nodes);
      int64_t *c = cnt + x * 2 * G;
      pair_load(L, c, linked[x], G, nodes, R, -1);
      if (!pair_price(L, c, N, H, G, R, m0, m1, price)) {
        pair_load(L, c, linked[x], G, nodes, R, 1);
        continue;
      }
      node_pair np;
      memset(&np, 0, sizeof np);
      np.N = N;
      np.H = H;
      st = np_build(B, G, price, &np, &sp, err);
      if (st == SHIRO_OK) st = np_cover(&np, G, ws, err);
      if (st != SHIRO_OK) {
        np_free(&np, G);
        goto done;
      }
      np_counts(&np, G, c2);
      pair_load(L, c2, linked[x], G, nodes, R, 1);
      int64_t n0, n1;
      double q1;
      loads_max(L, R, &n0, &n1, &q1);
      if (n0 + n1 < m0 + m1 || (n0 + n1 == m0 + m1 && q1 < sq)) {
        np_apply(B, G, &np);
        memcpy(c, c2, (size_t)2 * G * sizeof *c2);
        m0 = n0;
        m1 = n1;
        sq = q1;
        took++;
      } else {
        pair_load(L, c2, linked[x], G, nodes, R, -1);
        pair_load(L, c, linked[x], G, nodes, R, 1);
      }
      np_free(&np, G);
    }
    if (took == took0) break;
  }
done:
  cover_ws_free(ws);
  free(sp.bits);
  free(sp.at);
  free(linked);
  free(cnt);
  free(L);
  free(price);
  free(c2);
  return st;
}
