/* readme_app.c — the README's library example as a whole program, written as an
 * application would: every failure printed with its message and the program
 * left at once, on whichever rank it happens. tests/mpi/launch_errors_check.py launches
 * it wrongly (more ranks than the plan has) and checks that every rank leaves
 * in time with a message naming the cause, and rightly (it prints "ok").
 *
 * usage: readme_app PLAN [N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "shiro.h"

/* The README's pattern: print the message and leave (MPI_Finalize: the others fail the same way). */
static int leave(int rank, const char *msg) {
  fprintf(stderr, "readme_app: rank %d: %s\n", rank, msg);
  MPI_Finalize();
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2) return leave(rank, "usage: readme_app PLAN [N]");
  const int64_t n = argc > 2 ? atoll(argv[2]) : 4;

  shiro_plan *plan;
  shiro_ctx *ctx;
  shiro_error err;
  if (shiro_plan_open_comm(argv[1], MPI_COMM_WORLD, &plan, &err)) return leave(rank, err.message);
  shiro_plan_info info;
  shiro_plan_get_info(plan, &info);
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = SHIRO_FLOAT64;
  o.n = n;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err)) {
    shiro_plan_close(&plan);
    return leave(rank, err.message);
  }
  double *B = malloc(((size_t)info.b_rows * (size_t)n + 1) * sizeof *B);
  double *C = malloc(((size_t)info.c_rows * (size_t)n + 1) * sizeof *C);
  int bad = !B || !C;
  for (int64_t i = 0; !bad && i < info.b_rows; i++)
    for (int64_t j = 0; j < n; j++) B[i * n + j] = (double)((info.b_global[i] + j) % 5) - 2;
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (int it = 0; !anybad && it < 3; it++)
    if (shiro_spmm(ctx, B, C)) {
      fprintf(stderr, "readme_app: rank %d: %s\n", rank, shiro_ctx_last_error(ctx));
      anybad = 1;
    }
  free(B);
  free(C);
  shiro_ctx_destroy(&ctx);
  shiro_plan_close(&plan);
  if (rank == 0 && !anybad) printf("ok\n");
  MPI_Finalize();
  return anybad;
}
