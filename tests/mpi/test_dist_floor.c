/* test_dist_floor.c — the floors computed by the planner's processes (dist_floor_rows) against one
 * process's (plan_floor_rows), run under mpirun -np 1, 2 and 3: every process reads the whole
 * matrix, holds the ranks R·d/P .. R·(d+1)/P − 1 (so that a node's ranks may span processes), and
 * every node's and rank's egress and ingress floor, their sums, maxima and groups must be one
 * process's, for several R and G, with the rounds of the exchange made small
 * (dist_floor_set_round_edges 1 and 5: many rounds, a group's edges from several processes in one
 * round) and at the default. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "dist_floor.h"
#include "mm_read.h"
#include "partition.h"
#include "test_util.h"

/* 1 if the two levels agree everywhere; prints the first difference. */
static int same_level(const plan_floor_level *a, const plan_floor_level *b, const char *what) {
  int ok = a->groups == b->groups && a->out_sum == b->out_sum && a->in_sum == b->in_sum && a->out_max == b->out_max &&
      a->in_max == b->in_max && a->out_at == b->out_at && a->in_at == b->in_at;
  for (int32_t x = 0; ok && x < a->groups; x++) ok = a->out[x] == b->out[x] && a->in[x] == b->in[x];
  if (!ok)
    fprintf(stderr, "%s: out_sum %lld/%lld in_sum %lld/%lld out_max %lld/%lld in_max %lld/%lld\n", what,
            (long long)a->out_sum, (long long)b->out_sum, (long long)a->in_sum, (long long)b->in_sum,
            (long long)a->out_max, (long long)b->out_max, (long long)a->in_max, (long long)b->in_max);
  return ok;
}

static void check(const char *path, const sc_csr *A, int32_t R, int32_t G, int64_t round_edges, const dist_comm *c) {
  sc_partition Prow = {0}, Pcol = {0};
  shiro_error err = {{0}};
  if (part_block(A->m, R, &Prow, &err) != SHIRO_OK || part_block(A->k, R, &Pcol, &err) != SHIRO_OK) {
    EXPECT(0, "%s R=%d: part_block: %s", path, (int)R, err.message);
    return;
  }
  int32_t *proc = malloc((size_t)R * sizeof *proc), first = 0, end = 0;
  for (int d = 0; d < c->size; d++) {
    const int32_t f = (int32_t)((int64_t)R * d / c->size), e = (int32_t)((int64_t)R * (d + 1) / c->size);
    for (int32_t r = f; r < e; r++) proc[r] = d;
    if (d == c->rank) first = f, end = e;
  }
  plan_floor one, many;
  EXPECT(plan_floor_rows(A, &Prow, &Pcol, G, 1, &one, &err) == SHIRO_OK, "%s: plan_floor_rows: %s", path, err.message);
  dist_floor_set_round_edges(round_edges);
  const shiro_status st = dist_floor_rows(c, A, &Prow, &Pcol, G, proc, first, end, 1, &many, &err);
  EXPECT(st == SHIRO_OK, "%s R=%d G=%d: dist_floor_rows: %s", path, (int)R, (int)G, err.message);
  if (st == SHIRO_OK) {
    char what[512];
    snprintf(what, sizeof what, "%s R=%d G=%d rounds of %lld edges, P=%d", path, (int)R, (int)G, (long long)round_edges,
             c->size);
    EXPECT(same_level(&one.node, &many.node, what), "%s: the nodes' floors are one process's", what);
    EXPECT(same_level(&one.rank, &many.rank, what), "%s: the ranks' floors are one process's", what);
    EXPECT(one.rank.out_sum > 0 || R == 1, "%s: some row must move (else the test tests nothing)", what);
    plan_floor_free(&many);
  }
  plan_floor_free(&one);
  free(proc);
  part_free(&Prow);
  part_free(&Pcol);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  dist_comm c = {.comm = MPI_COMM_WORLD};
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.size);
  static const int32_t cases[][2] = {{8, 4}, {16, 4}, {7, 2}, {5, 1}, {12, 4}, {3, 8}};
  static const int64_t rounds[] = {1, 5, 0};
  for (int a = 1; a < argc; a++) {
    sc_csr *A = NULL;
    mm_header hdr;
    shiro_error err = {{0}};
    if (mm_read(argv[a], &A, &hdr, &err) != SHIRO_OK) {
      EXPECT(0, "mm_read %s: %s", argv[a], err.message);
      continue;
    }
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
      for (size_t r = 0; r < sizeof rounds / sizeof *rounds; r++) check(argv[a], A, cases[k][0], cases[k][1], rounds[r], &c);
    sc_csr_free(A);
  }
  int bad = test_failures, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, c.comm);
  if (c.rank == 0) printf("%s\n", any ? "FAILED" : "ok: the floors of P processes are one process's");
  MPI_Finalize();
  return any ? 1 : 0;
}
