/* test_format.c — plan file round trip and rejection of foreign or damaged files. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks.h"
#include "mm_read.h"
#include "plan_build.h"
#include "plan_file.h"
#include "test_util.h"

static int same_i64(const int64_t *a, const int64_t *b, int64_t n) { return n == 0 || !memcmp(a, b, (size_t)n * 8); }
static int same_i32(const int32_t *a, const int32_t *b, int64_t n) { return n == 0 || !memcmp(a, b, (size_t)n * 4); }

static int build(const char *mtx, int32_t R, sc_plan *plan) {
  shiro_error err;
  sc_csr *A = NULL;
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B = {0};
  int ok = mm_read(mtx, &A, NULL, &err) == SHIRO_OK && part_block(A->m, R, &Pr, &err) == SHIRO_OK &&
           part_block(A->k, R, &Pc, &err) == SHIRO_OK && blocks_build(A, &Pr, &Pc, &B, &err) == SHIRO_OK &&
           strategy_select(&B, STRAT_JOINT, 2, NULL, NULL, &err) == SHIRO_OK &&
           plan_build(A, &Pr, &Pc, &B, STRAT_JOINT, 2, plan, &err) == SHIRO_OK;
  if (!ok) fprintf(stderr, "build: %s\n", err.message);
  blocks_free(&B); part_free(&Pr); part_free(&Pc); sc_csr_free(A);
  return ok;
}

static void round_trip(const char *dir) {
  sc_plan plan = {0};
  char path[512];
  snprintf(path, sizeof path, "%s/p.shiro.h5", dir);
  if (!build("data/ca-GrQc.mtx", 5, &plan)) { EXPECT(0, "planning failed"); return; }
  shiro_error err;
  EXPECT(plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  prog_meta meta;
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(meta.ranks == 5 && meta.gpus_per_node == 2 && meta.m == 5242 && meta.nnz == plan.meta.nnz &&
         !strcmp(meta.strategy, "joint") && !strcmp(meta.partition, "block"), "root attributes");
  for (int32_t r = 0; r < 5; r++) {
    prog_rank pr;
    plan_mapping map;
    const prog_rank *w = &plan.ranks[r];
    EXPECT(plan_file_map_rank(path, r, &meta, &pr, &map, &err) == SHIRO_OK, "%s", err.message);
    EXPECT(pr.rank == r && pr.nstages == w->nstages && pr.c_first == w->c_first && pr.c_rows == w->c_rows &&
           pr.b_first == w->b_first && pr.b_rows == w->b_rows && pr.s_rows == w->s_rows && pr.r_rows == w->r_rows,
           "rank %d attributes", r);
    EXPECT(pr.nops == w->nops && same_i64(pr.ops, w->ops, w->nops * PROG_OP_WIDTH), "rank %d ops", r);
    EXPECT(pr.nx == w->nx && same_i64(pr.xchg, w->xchg, w->nx * PROG_X_WIDTH), "rank %d xchg", r);
    EXPECT(pr.nptr == w->nptr && same_i64(pr.ptr, w->ptr, w->nptr), "rank %d ptr", r);
    EXPECT(pr.ncol == w->ncol && same_i32(pr.col, w->col, w->ncol), "rank %d col", r);
    EXPECT(pr.nval == w->nval && (w->nval == 0 || !memcmp(pr.val, w->val, (size_t)w->nval * 8)), "rank %d val", r);
    EXPECT(pr.nrowidx == w->nrowidx && same_i32(pr.rows, w->rows, w->nrowidx), "rank %d rows", r);
    EXPECT(((uintptr_t)pr.ops % 64) == 0 || pr.nops == 0, "rank %d ops not 64-byte aligned", r);
    EXPECT(plan_check_rank(&meta, &pr, &err) == SHIRO_OK, "check: %s", err.message);
    plan_file_unmap(&map);
  }
  /* A damaged program is refused by the bounds check, not run. */
  prog_rank bad = plan.ranks[1];
  int32_t *col = malloc((size_t)bad.ncol * sizeof *col);
  memcpy(col, bad.col, (size_t)bad.ncol * sizeof *col);
  col[bad.ncol / 2] = 1 << 30;
  bad.col = col;
  EXPECT(plan_check_rank(&meta, &bad, &err) == SHIRO_ERR_FORMAT, "out-of-range column accepted");
  free(col);
  /* Version policy: an unknown major version is refused. */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t a = H5Aopen(f, "version_major", H5P_DEFAULT);
  int64_t v2 = 2;
  H5Awrite(a, H5T_NATIVE_INT64, &v2);
  H5Aclose(a);
  H5Fclose(f);
  prog_rank pr;
  plan_mapping map;
  EXPECT(plan_file_map_rank(path, 0, &meta, &pr, &map, &err) == SHIRO_ERR_VERSION, "major version 2 accepted");
  EXPECT(strstr(err.message, "version 2.0") != NULL, "message: %s", err.message);
  /* Atomic write: a failed write leaves nothing under the name; a rewrite leaves no temporary. */
  char nodir[600];
  snprintf(nodir, sizeof nodir, "%s/missing/p.h5", dir);
  EXPECT(plan_file_write(nodir, &plan.meta, plan.ranks, &err) == SHIRO_ERR_IO, "write into a missing directory");
  EXPECT(access(nodir, F_OK) != 0, "file left behind");
  EXPECT(plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_file_map_rank(path, 4, &meta, &pr, &map, &err) == SHIRO_OK, "rewritten plan: %s", err.message);
  plan_file_unmap(&map);
  EXPECT(plan_file_map_rank(path, 5, &meta, &pr, &map, &err) == SHIRO_ERR_MISMATCH, "rank 5 of 5");
  unlink(path);
  plan_free(&plan);
}

static void foreign_files(const char *dir) {
  char path[512];
  shiro_error err;
  prog_meta meta;
  prog_rank pr;
  plan_mapping map;
  snprintf(path, sizeof path, "%s/not-a-plan.h5", dir);
  FILE *f = fopen(path, "w");
  fputs("%%MatrixMarket matrix coordinate real general\n", f);
  fclose(f);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_IO && strstr(err.message, "not HDF5"), "%s", err.message);
  EXPECT(plan_file_map_rank(path, 0, &meta, &pr, &map, &err) == SHIRO_ERR_IO, "text file accepted");
  unlink(path);
  snprintf(path, sizeof path, "%s/missing.h5", dir);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_IO && strstr(err.message, "No such file"), "%s", err.message);
  /* An HDF5 file that is not a plan. */
  snprintf(path, sizeof path, "%s/other.h5", dir);
  hid_t h = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(h);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "not a shiro plan"), "%s", err.message);
  unlink(path);
}

int main(void) {
  char dir[] = "/tmp/shiro-format-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  round_trip(dir);
  foreign_files(dir);
  rmdir(dir);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
