/* dist_floor.c — the floors computed by the processes together (dist_floor.h). */
#include <stdlib.h>
#include <string.h>

#include "dist_floor.h"
#include "error.h"

/* One cross nonzero on its way to the process of its group. */
typedef struct floor_edge {
  int64_t row;
  int32_t col, group;
} floor_edge;

/* The group of rank r's stripe at this level, or of the rank owning column j. */
typedef struct level_map {
  const sc_partition *Prow;
  const int32_t *cg; /* [k] column j's group */
  int32_t g, by_row;
} level_map;

/* This process's cross nonzeros: with out NULL, counted per group (n[X]); else those of the groups
 * of round `round` of `rounds` (X % rounds == round) written in row order to out[at[d]++], d the
 * group's process. */
static void walk(const sc_csr *A, const level_map *L, const int32_t *proc, int32_t first, int32_t end, int64_t *n,
                 int32_t round, int32_t rounds, floor_edge *out, int64_t *at) {
  for (int32_t p = first; p < end; p++)
    for (int64_t i = L->Prow->first[p]; i < L->Prow->first[p + 1]; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
        const int32_t cgj = L->cg[A->Aj[t]];
        if (cgj == p / L->g) continue;
        const int32_t x = L->by_row ? p / L->g : cgj;
        if (!out) n[x]++;
        else if (x % rounds == round) out[at[proc[(int64_t)x * L->g]]++] = (floor_edge){i, A->Aj[t], x};
      }
}

/* The received edges (in process order: row order) bucketed by group, stably. */
static shiro_status bucket_received(const floor_edge *e, int64_t E, int32_t groups, plan_floor_buckets *b) {
  memset(b, 0, sizeof *b);
  b->off = calloc((size_t)groups + 1, sizeof *b->off);
  b->row = malloc((size_t)(E > 0 ? E : 1) * sizeof *b->row);
  b->col = malloc((size_t)(E > 0 ? E : 1) * sizeof *b->col);
  int64_t *next = malloc(((size_t)groups + 1) * sizeof *next);
  if (!b->off || !b->row || !b->col || !next) {
    free(next);
    return SHIRO_ERR_NOMEM;
  }
  for (int64_t x = 0; x < E; x++) b->off[e[x].group + 1]++;
  for (int32_t x = 0; x < groups; x++) b->off[x + 1] += b->off[x];
  memcpy(next, b->off, ((size_t)groups + 1) * sizeof *next);
  for (int64_t x = 0; x < E; x++) {
    const int64_t at = next[e[x].group]++;
    b->row[at] = e[x].row;
    b->col[at] = e[x].col;
  }
  free(next);
  return SHIRO_OK;
}

/* Cross nonzeros a process sends in one round: a round's lists (sent, received, bucketed: about 44
 * bytes each) stay a fraction of what the plan held at its peak. */
static int64_t round_edges_set; /* dist_floor_set_round_edges; 0: FLOOR_ROUND_EDGES */
#define FLOOR_ROUND_EDGES(nnz)                                               \
  (round_edges_set > 0 ? round_edges_set : (nnz) / 8 > (1 << 20) ? (nnz) / 8 \
                                                                 : (1 << 20))

void dist_floor_set_round_edges(int64_t edges) { round_edges_set = edges > 0 ? edges : 0; }

/* One direction of one level: this process's groups' floors into cover[] (others 0), in rounds of
 * groups (X % rounds) so that no round moves more than FLOOR_ROUND_EDGES of any process's edges
 * (where its groups allow). */
static shiro_status direction(const dist_comm *c, const sc_csr *A, const level_map *L, const int32_t *proc,
                              int32_t first, int32_t end, int32_t groups, int threads, int64_t *cover,
                              shiro_error *err) {
  const int P = c->size;
  int64_t *sendn = calloc((size_t)P * 3, sizeof *sendn), *recvn = sendn ? sendn + P : NULL, *at = sendn ? sendn + 2 * P : NULL;
  int64_t *per = calloc((size_t)groups, sizeof *per), *got = calloc((size_t)groups, sizeof *got);
  shiro_status st = sendn && per && got ? SHIRO_OK : SHIRO_ERR_NOMEM;
  int32_t rounds = 1;
  if (st == SHIRO_OK) {
    walk(A, L, proc, first, end, per, 0, 1, NULL, NULL);
    int64_t E = 0, nnz = A->Ap[L->Prow->first[end]] - A->Ap[L->Prow->first[first]];
    for (int32_t x = 0; x < groups; x++) E += per[x];
    const int64_t want = (E + FLOOR_ROUND_EDGES(nnz) - 1) / FLOOR_ROUND_EDGES(nnz);
    rounds = (int32_t)(want < 1 ? 1 : want > groups ? groups
                                                    : want);
  }
  st = dist_agree(c, st == SHIRO_OK ? SHIRO_OK : shiro_fail(err, st, "out of memory listing the floors' nonzeros"), err);
  if (st == SHIRO_OK && MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT32_T, MPI_MAX, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the floors' rounds failed"), err);
  for (int32_t k = 0; k < rounds && st == SHIRO_OK; k++) {
    memset(sendn, 0, (size_t)P * sizeof *sendn);
    for (int32_t x = k; x < groups; x += rounds) sendn[proc[(int64_t)x * L->g]] += per[x];
    int64_t E = 0;
    for (int d = 0; d < P; d++) at[d] = E, E += sendn[d], sendn[d] *= (int64_t)sizeof(floor_edge);
    floor_edge *send = malloc((size_t)(E > 0 ? E : 1) * sizeof *send);
    if (send) walk(A, L, proc, first, end, NULL, k, rounds, send, at);
    void *recv = NULL;
    st = dist_agree(c, send ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory listing the floors' nonzeros"), err);
    if (st == SHIRO_OK) st = dist_alltoallv(c, send, sendn, &recv, recvn, err);
    free(send);
    if (st != SHIRO_OK) break;
    int64_t R = 0;
    for (int d = 0; d < P; d++) R += recvn[d] / (int64_t)sizeof(floor_edge);
    plan_floor_buckets b = {0};
    shiro_status lst = bucket_received(recv, R, groups, &b);
    free(recv);
    if (lst == SHIRO_OK) lst = plan_floor_covers(&b, groups, A->k, threads, got);
    for (int32_t x = k; lst == SHIRO_OK && x < groups; x += rounds) cover[x] = got[x];
    free(b.off);
    free(b.row);
    free(b.col);
    st = dist_agree(c, lst == SHIRO_OK ? SHIRO_OK : shiro_fail(err, lst, "out of memory computing the floors"), err);
  }
  free(per);
  free(got);
  free(sendn);
  return st;
}

/* The floors of groups of g ranks into *L, every process's groups summed onto every process. */
static shiro_status level(const dist_comm *c, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                          int32_t g, const int32_t *proc, int32_t first, int32_t end, int threads,
                          plan_floor_level *L, shiro_error *err) {
  const int32_t R = Prow->parts, groups = (R + g - 1) / g;
  memset(L, 0, sizeof *L);
  L->groups = groups;
  L->out = calloc((size_t)groups, sizeof *L->out);
  L->in = calloc((size_t)groups, sizeof *L->in);
  int32_t *cg = malloc((size_t)(Pcol->n > 0 ? Pcol->n : 1) * sizeof *cg);
  shiro_status st = L->out && L->in && cg ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  st = dist_agree(c, st, err);
  for (int32_t p = 0; st == SHIRO_OK && p < Pcol->parts; p++)
    for (int64_t j = Pcol->first[p]; j < Pcol->first[p + 1]; j++) cg[j] = p / g;
  for (int by_row = 0; by_row < 2 && st == SHIRO_OK && groups > 1; by_row++) {
    const level_map map = {Prow, cg, g, by_row};
    st = direction(c, A, &map, proc, first, end, groups, threads, by_row ? L->in : L->out, err);
  }
  free(cg);
  if (st == SHIRO_OK && groups > 1 &&
      (MPI_Allreduce(MPI_IN_PLACE, L->out, groups, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS ||
       MPI_Allreduce(MPI_IN_PLACE, L->in, groups, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS))
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the floors failed"), err);
  if (st == SHIRO_OK) plan_floor_level_sum(L);
  return st;
}

shiro_status dist_floor_rows(const dist_comm *c, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             int32_t gpn, const int32_t *proc, int32_t first, int32_t end, int threads, plan_floor *f,
                             shiro_error *err) {
  memset(f, 0, sizeof *f);
  f->ranks = Prow->parts;
  f->gpn = gpn > 0 ? gpn : 1;
  if (threads < 1) threads = 1;
  shiro_status st = level(c, A, Prow, Pcol, f->gpn, proc, first, end, threads, &f->node, err);
  if (st == SHIRO_OK) st = level(c, A, Prow, Pcol, 1, proc, first, end, threads, &f->rank, err);
  if (st != SHIRO_OK) plan_floor_free(f);
  return st;
}
