/* test_plan.h — for the MPI tests of the runtime: a plan of a Matrix Market file for every rank of
 * MPI_COMM_WORLD, block partition, written by the compiler library (header-only; the tests link
 * compiler_dep and format_dep). */
#ifndef SHIRO_TEST_PLAN_H
#define SHIRO_TEST_PLAN_H

#include <mpi.h>
#include <stdio.h>

#include "blocks.h"
#include "mm_read.h"
#include "plan_build.h"
#include "plan_file.h"

/* Writes the plan of mtx for `ranks` ranks (strategy s, gpn ranks per node) to path. Returns 1 on
 * success, else 0 after printing why. Local (call it on one rank). */
static inline int test_write_plan(const char *mtx, const char *path, int ranks, sc_strategy s, int32_t gpn) {
  shiro_error err;
  sc_csr *A = NULL;
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B = {0};
  sc_plan plan = {0};
  int ok = mm_read(mtx, &A, NULL, &err) == SHIRO_OK && part_block(A->m, ranks, &Pr, &err) == SHIRO_OK &&
      part_block(A->k, ranks, &Pc, &err) == SHIRO_OK && blocks_build(A, &Pr, &Pc, &B, &err) == SHIRO_OK &&
      strategy_select(&B, s, gpn, NULL, NULL, &err) == SHIRO_OK &&
      plan_build(A, &Pr, &Pc, &B, s, gpn, &plan, &err) == SHIRO_OK &&
      plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK;
  if (!ok) fprintf(stderr, "test_write_plan(%s): %s\n", mtx, err.message);
  plan_free(&plan);
  blocks_free(&B);
  part_free(&Pr);
  part_free(&Pc);
  sc_csr_free(A);
  return ok;
}

/* For the MPI tests: rank 0 writes the plan of mtx for every rank of MPI_COMM_WORLD (strategy s,
 * gpn ranks per node) to `path`, and every rank learns whether it could. Returns 1 when the plan
 * was written, else 0 on every rank (the caller then finalizes MPI and fails). Collective over
 * MPI_COMM_WORLD. */
static inline int test_world_plan(const char *mtx, const char *path, sc_strategy s, int32_t gpn) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = rank == 0 ? test_write_plan(mtx, path, size, s, gpn) : 1;
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok;
}

#endif
