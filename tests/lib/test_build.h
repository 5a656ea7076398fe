/* test_build.h — for the format tests: the plan of a Matrix Market file built in memory or
 * handed to a sink program by program (block partition, joint, 2 ranks per node), and a file
 * read whole (header-only; the tests link compiler_dep and format_dep). */
#ifndef SHIRO_TEST_BUILD_H
#define SHIRO_TEST_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "blocks.h"
#include "mm_read.h"
#include "plan_build.h"

/* Plans mtx for R ranks (joint, G = 2): into *plan, or, with plan NULL,
 * program by program into sink (plan_build_each). */
static inline shiro_status build_to(const char *mtx, int32_t R, sc_plan *plan, plan_sink_fn sink, void *arg,
                                    shiro_error *err) {
  sc_csr *A = NULL;
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B = {0};
  shiro_status st = SHIRO_ERR_INTERNAL;
  if (mm_read(mtx, &A, NULL, err) == SHIRO_OK && part_block(A->m, R, &Pr, err) == SHIRO_OK &&
      part_block(A->k, R, &Pc, err) == SHIRO_OK && blocks_build(A, &Pr, &Pc, &B, err) == SHIRO_OK &&
      strategy_select(&B, STRAT_JOINT, 2, NULL, NULL, err) == SHIRO_OK)
    st = plan ? plan_build(A, &Pr, &Pc, &B, STRAT_JOINT, 2, plan, err)
              : plan_build_each(A, &Pr, &Pc, &B, STRAT_JOINT, 2, sink, arg, err);
  blocks_free(&B);
  part_free(&Pr);
  part_free(&Pc);
  sc_csr_free(A);
  return st;
}

/* build_to into *plan; 1 on success, else 0 after printing why. */
static inline int build(const char *mtx, int32_t R, sc_plan *plan) {
  shiro_error err;
  int ok = build_to(mtx, R, plan, NULL, NULL, &err) == SHIRO_OK;
  if (!ok) fprintf(stderr, "build: %s\n", err.message);
  return ok;
}

/* The bytes of the file at path, *size of them (free them); NULL when it cannot be read. */
static inline uint8_t *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  rewind(f);
  uint8_t *b = malloc(*size);
  if (b && fread(b, 1, *size, f) != *size) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

#endif
