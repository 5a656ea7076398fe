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

/* Each of this process's cross nonzeros whose group's process is d (d < 0: every one) is counted in
 * n[d'] (by destination) or, with out, written in row order to out[at[d']++]. */
static void walk(const sc_csr *A, const level_map *L, const int32_t *proc, int32_t first, int32_t end, int64_t *n,
                 floor_edge *out, int64_t *at) {
  for (int32_t p = first; p < end; p++)
    for (int64_t i = L->Prow->first[p]; i < L->Prow->first[p + 1]; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
        const int32_t cgj = L->cg[A->Aj[t]];
        if (cgj == p / L->g) continue;
        const int32_t x = L->by_row ? p / L->g : cgj, d = proc[(int64_t)x * L->g];
        if (out) out[at[d]++] = (floor_edge){i, A->Aj[t], x};
        else n[d]++;
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

/* One direction of one level: this process's groups' floors into cover[] (others 0). */
static shiro_status direction(const dist_comm *c, const sc_csr *A, const level_map *L, const int32_t *proc,
                              int32_t first, int32_t end, int32_t groups, int threads, int64_t *cover,
                              shiro_error *err) {
  const int P = c->size;
  int64_t *sendn = calloc((size_t)P * 3, sizeof *sendn), *recvn = sendn ? sendn + P : NULL, *at = sendn ? sendn + 2 * P : NULL;
  floor_edge *send = NULL;
  void *recv = NULL;
  shiro_status st = sendn ? SHIRO_OK : SHIRO_ERR_NOMEM;
  if (st == SHIRO_OK) {
    walk(A, L, proc, first, end, sendn, NULL, NULL);
    int64_t E = 0;
    for (int d = 0; d < P; d++) at[d] = E, E += sendn[d];
    if (!(send = malloc((size_t)(E > 0 ? E : 1) * sizeof *send))) st = SHIRO_ERR_NOMEM;
    else walk(A, L, proc, first, end, NULL, send, at);
    for (int d = 0; d < P; d++) sendn[d] *= (int64_t)sizeof *send;
  }
  st = dist_agree(c, st == SHIRO_OK ? SHIRO_OK : shiro_fail(err, st, "out of memory listing the floors' nonzeros"), err);
  if (st == SHIRO_OK) st = dist_alltoallv(c, send, sendn, &recv, recvn, err);
  free(send);
  plan_floor_buckets b = {0};
  if (st == SHIRO_OK) {
    int64_t E = 0;
    for (int d = 0; d < P; d++) E += recvn[d] / (int64_t)sizeof(floor_edge);
    shiro_status lst = bucket_received(recv, E, groups, &b);
    free(recv);
    recv = NULL;
    if (lst == SHIRO_OK) lst = plan_floor_covers(&b, groups, A->k, threads, cover);
    st = dist_agree(c, lst == SHIRO_OK ? SHIRO_OK : shiro_fail(err, lst, "out of memory computing the floors"), err);
  }
  free(recv);
  free(b.off);
  free(b.row);
  free(b.col);
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
