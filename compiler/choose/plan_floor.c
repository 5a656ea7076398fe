/* plan_floor.c — the row floors of a partition and their time floor on a machine (plan_floor.h).
 *
 * Per level (nodes, then ranks) and direction, the cross nonzeros are bucketed by the group whose
 * stripe holds them (counting sort, in row order), and each group's bucket becomes a bipartite
 * graph (rows × columns, both renumbered to the ones it touches) whose maximum matching's size is
 * its minimum vertex cover's (König). Memory: 12 bytes per cross nonzero of one direction at a
 * time, and per thread a column map over k. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "error.h"
#include "plan_floor.h"

typedef plan_floor_buckets buckets;

static void buckets_free(buckets *b) {
  free(b->off);
  free(b->row);
  free(b->col);
  memset(b, 0, sizeof *b);
}

/* The group of every column: cg[j] = Pcol's owner of j / g. NULL when out of memory. */
static int32_t *column_groups(const sc_partition *Pcol, int32_t g) {
  int32_t *cg = malloc((size_t)(Pcol->n > 0 ? Pcol->n : 1) * sizeof *cg);
  if (!cg) return NULL;
  for (int32_t p = 0; p < Pcol->parts; p++)
    for (int64_t j = Pcol->first[p]; j < Pcol->first[p + 1]; j++) cg[j] = p / g;
  return cg;
}

/* Buckets the nonzeros whose row group and column group differ, by the column's group (egress:
 * by_row 0) or the row's (ingress: by_row 1). */
static shiro_status bucket(const sc_csr *A, const sc_partition *Prow, const int32_t *cg, int32_t g, int32_t groups,
                           int by_row, buckets *b) {
  memset(b, 0, sizeof *b);
  b->off = calloc((size_t)groups + 1, sizeof *b->off);
  if (!b->off) return SHIRO_ERR_NOMEM;
  for (int32_t p = 0; p < Prow->parts; p++) /* count */
    for (int64_t i = Prow->first[p]; i < Prow->first[p + 1]; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
        const int32_t cgj = cg[A->Aj[t]];
        if (cgj != p / g) b->off[(by_row ? p / g : cgj) + 1]++;
      }
  for (int32_t x = 0; x < groups; x++) b->off[x + 1] += b->off[x];
  const int64_t E = b->off[groups];
  b->row = malloc((size_t)(E > 0 ? E : 1) * sizeof *b->row);
  b->col = malloc((size_t)(E > 0 ? E : 1) * sizeof *b->col);
  int64_t *next = malloc(((size_t)groups + 1) * sizeof *next);
  if (!b->row || !b->col || !next) {
    free(next);
    buckets_free(b);
    return SHIRO_ERR_NOMEM;
  }
  memcpy(next, b->off, ((size_t)groups + 1) * sizeof *next);
  for (int32_t p = 0; p < Prow->parts; p++) /* place, in row order */
    for (int64_t i = Prow->first[p]; i < Prow->first[p + 1]; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
        const int32_t j = A->Aj[t], cgj = cg[j];
        if (cgj == p / g) continue;
        const int64_t e = next[by_row ? p / g : cgj]++;
        b->row[e] = i;
        b->col[e] = j;
      }
  free(next);
  return SHIRO_OK;
}

/* One thread's scratch for the groups' graphs. */
typedef struct scratch {
  cover_ws *ws;
  int32_t *cmap; /* [k] local column id or -1 (reset after each graph) */
  int64_t *Gp; /* [cap_p] row pointers */
  int32_t *Gj; /* [cap_j] local column ids */
  int32_t *match; /* [cap_m]: rmatch then cmatch */
  int64_t cap_p, cap_j, cap_m;
} scratch;

static void scratch_free(scratch *s) {
  cover_ws_free(s->ws);
  free(s->cmap);
  free(s->Gp);
  free(s->Gj);
  free(s->match);
}

/* Grows *p (elements of size sz) to at least n; 0 when out of memory. */
static int grow(void **p, int64_t *cap, int64_t n, size_t sz) {
  if (n <= *cap) return 1;
  void *q = realloc(*p, (size_t)n * sz);
  if (!q) return 0;
  *p = q;
  *cap = n;
  return 1;
}

/* The minimum vertex cover's size of the nonzeros b holds for group x: rows renumbered in order
 * of first appearance (they come in row order), columns through s->cmap. -1 when out of memory. */
static int64_t group_cover(const buckets *b, int32_t x, scratch *s) {
  const int64_t e0 = b->off[x], e1 = b->off[x + 1];
  if (e0 == e1) return 0;
  int64_t nr = 0, nc = 0, size = 0;
  for (int64_t e = e0; e < e1; e++) nr += e == e0 || b->row[e] != b->row[e - 1];
  if (!grow((void **)&s->Gp, &s->cap_p, nr + 1, sizeof *s->Gp) || !grow((void **)&s->Gj, &s->cap_j, e1 - e0, sizeof *s->Gj))
    return -1;
  int64_t r = -1;
  for (int64_t e = e0; e < e1; e++) {
    if (e == e0 || b->row[e] != b->row[e - 1]) s->Gp[++r] = e - e0;
    int32_t *m = &s->cmap[b->col[e]];
    if (*m < 0) *m = (int32_t)nc++;
    s->Gj[e - e0] = *m;
  }
  s->Gp[nr] = e1 - e0;
  for (int64_t e = e0; e < e1; e++) s->cmap[b->col[e]] = -1;
  if (!grow((void **)&s->match, &s->cap_m, nr + nc, sizeof *s->match) ||
      cover_max_matching((int32_t)nr, (int32_t)nc, s->Gp, s->Gj, s->ws, s->match, s->match + nr, &size) != SHIRO_OK)
    return -1;
  return size;
}

shiro_status plan_floor_covers(const plan_floor_buckets *b, int32_t groups, int64_t k, int threads, int64_t *cover) {
  int bad = 0;
#pragma omp parallel num_threads(threads) reduction(| \
                                                    : bad)
  {
    scratch s = {0};
    s.ws = cover_ws_new();
    s.cmap = malloc((size_t)(k > 0 ? k : 1) * sizeof *s.cmap);
    if (!s.ws || !s.cmap) bad = 1;
    else
      for (int64_t j = 0; j < k; j++) s.cmap[j] = -1;
#pragma omp for schedule(dynamic, 1)
    for (int32_t x = 0; x < groups; x++) {
      if (bad) continue;
      cover[x] = group_cover(b, x, &s);
      if (cover[x] < 0) bad = 1;
    }
    scratch_free(&s);
  }
  return bad ? SHIRO_ERR_NOMEM : SHIRO_OK;
}

/* The floors of groups of g ranks into *L. */
static shiro_status level(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t g, int threads,
                          plan_floor_level *L) {
  const int32_t R = Prow->parts, groups = (R + g - 1) / g;
  memset(L, 0, sizeof *L);
  L->groups = groups;
  L->out = calloc((size_t)groups, sizeof *L->out);
  L->in = calloc((size_t)groups, sizeof *L->in);
  int32_t *cg = column_groups(Pcol, g);
  shiro_status st = L->out && L->in && cg ? SHIRO_OK : SHIRO_ERR_NOMEM;
  for (int by_row = 0; by_row < 2 && st == SHIRO_OK && groups > 1; by_row++) {
    buckets b;
    st = bucket(A, Prow, cg, g, groups, by_row, &b);
    if (st == SHIRO_OK) st = plan_floor_covers(&b, groups, A->k, threads, by_row ? L->in : L->out);
    buckets_free(&b);
  }
  free(cg);
  if (st == SHIRO_OK) plan_floor_level_sum(L);
  return st;
}

void plan_floor_level_sum(plan_floor_level *L) {
  L->out_sum = L->in_sum = L->out_max = L->in_max = 0;
  L->out_at = L->in_at = 0;
  for (int32_t x = 0; x < L->groups; x++) {
    L->out_sum += L->out[x];
    L->in_sum += L->in[x];
    if (L->out[x] > L->out_max) L->out_max = L->out[x], L->out_at = x;
    if (L->in[x] > L->in_max) L->in_max = L->in[x], L->in_at = x;
  }
}

shiro_status plan_floor_rows(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t gpn,
                             int threads, plan_floor *f, shiro_error *err) {
  memset(f, 0, sizeof *f);
  f->ranks = Prow->parts;
  f->gpn = gpn > 0 ? gpn : 1;
  if (threads < 1) threads = 1;
  shiro_status st = level(A, Prow, Pcol, f->gpn, threads, &f->node);
  if (st == SHIRO_OK) st = level(A, Prow, Pcol, 1, threads, &f->rank);
  if (st != SHIRO_OK) {
    plan_floor_free(f);
    return shiro_fail(err, st, "out of memory computing the floors (12 bytes per nonzero between ranks)");
  }
  return SHIRO_OK;
}

/* Bytes / bandwidth + latency for `rows` rows, 0 when none. */
static double link_time(int64_t rows, size_t row_bytes, double Bps, double lat) {
  return rows > 0 && Bps > 0 ? (double)rows * (double)row_bytes / Bps + lat : 0;
}

double plan_floor_time(const plan_floor *f, const sc_machine *m, size_t row_bytes, const char **term, int32_t *at) {
  const double node_Bps = (double)m->nics_per_node * m->nic_Bps;
  const double rank_Bps = (f->gpn > 1 ? m->nvlink_Bps : 0) + m->nic_Bps;
  const double rank_lat = f->gpn > 1 && m->nvlink_lat_s < m->nic_lat_s ? m->nvlink_lat_s : m->nic_lat_s;
  struct {
    const char *name;
    double t;
    int32_t at;
  } c[4] = {
      {"node egress", link_time(f->node.out_max, row_bytes, node_Bps, m->nic_lat_s), f->node.out_at},
      {"node ingress", link_time(f->node.in_max, row_bytes, node_Bps, m->nic_lat_s), f->node.in_at},
      {"rank egress", link_time(f->rank.out_max, row_bytes, rank_Bps, rank_lat), f->rank.out_at},
      {"rank ingress", link_time(f->rank.in_max, row_bytes, rank_Bps, rank_lat), f->rank.in_at},
  };
  int best = -1;
  for (int i = 0; i < 4; i++)
    if (c[i].t > 0 && (best < 0 || c[i].t > c[best].t)) best = i;
  if (term) *term = best < 0 ? "none" : c[best].name;
  if (at) *at = best < 0 ? 0 : c[best].at;
  return best < 0 ? 0 : c[best].t;
}

void plan_floor_free(plan_floor *f) {
  free(f->node.out);
  free(f->node.in);
  free(f->rank.out);
  free(f->rank.in);
  memset(&f->node, 0, sizeof f->node);
  memset(&f->rank, 0, sizeof f->rank);
}
