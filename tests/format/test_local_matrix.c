/* test_local_matrix.c — every rank's local matrix from a plan, printed for a checker.
 *
 * usage: test_local_matrix PLAN
 *
 * Opens each rank's part of PLAN in turn (shiro_plan_open and
 * shiro_plan_get_local_matrix are local: no mpirun) and prints
 *
 *   rank R rows C nnz N has_values H
 *   row G J:V J:V ...        one line per local row, G its global id, J the global columns
 *
 * with V printed exactly (%.17g). It checks on its own what needs no matrix:
 * the size query agrees with the filled arrays, the rows' digest equals the
 * plan's (shiro_plan_check_pattern), argument errors, and that the
 * program's val_src names, for every value it multiplies by, the nonzero of
 * some rank's local matrix with that very value, each nonzero of the plan
 * exactly once over all ranks (the origins shiro_ctx_set_values ships
 * values by). local_matrix_check.py
 * compares the rows with the Matrix Market file, read by its own parser.
 * A 2.0 plan (no local matrices) exits 3 with the library's message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_file.h"
#include "shiro.h"
#include "test_util.h"

/* The local matrices' values, rank after rank (the plan-wide numbering of val_src). */
static double *all_vals;
static int64_t all_n;

/* Checks every val_src of rank r's program against all_vals; uses[id] counts the uses. */
static void check_val_src(const char *path, int r, int32_t *uses) {
  prog_meta meta;
  prog_rank pr;
  plan_mapping map;
  shiro_error err = {{0}};
  if (plan_file_map_rank(path, r, &meta, &pr, &map, &err) != SHIRO_OK) {
    EXPECT(0, "rank %d: %s", r, err.message);
    return;
  }
  EXPECT(pr.nvalsrc == pr.ncol, "rank %d: %lld val_src for %lld entries", r, (long long)pr.nvalsrc, (long long)pr.ncol);
  for (int64_t o = 0; o < pr.nops; o++) {
    const int64_t *op = pr.ops + o * PROG_OP_WIDTH;
    if (op[OPF_KIND] != PROG_OP_MUL) continue;
    const int64_t *ptr = pr.ptr + op[OPF_PTR_OFF];
    for (int64_t e = ptr[0]; e < ptr[op[OPF_NROWS]] && e < pr.nvalsrc; e++) {
      const int64_t id = pr.val_src[e];
      if (!op[OPF_HAS_VAL]) {
        EXPECT(id == -1, "rank %d op %lld entry %lld: a value-free op names nonzero %lld", r, (long long)o, (long long)e,
               (long long)id);
        continue;
      }
      EXPECT(id >= 0 && id < all_n, "rank %d entry %lld: val_src %lld of %lld", r, (long long)e, (long long)id, (long long)all_n);
      if (id < 0 || id >= all_n) continue;
      uses[id]++;
      EXPECT(pr.val[e] == all_vals[id], "rank %d entry %lld: value %.17g, nonzero %lld of the local matrices is %.17g", r,
             (long long)e, pr.val[e], (long long)id, all_vals[id]);
    }
  }
  plan_file_unmap(&map);
}

/* Prints and checks rank r's local matrix; 0 ok, 1 failed, 3 SHIRO_ERR_VERSION. */
static int one_rank(const char *path, int r) {
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  shiro_plan_info in;
  if (shiro_plan_open(path, r, &plan, &err) != SHIRO_OK || shiro_plan_get_info(plan, &in) != SHIRO_OK) {
    fprintf(stderr, "rank %d: %s\n", r, err.message);
    return 1;
  }
  int64_t nnz = -1, nnz2 = -1;
  int hv = -1;
  shiro_status st = shiro_plan_get_local_matrix(plan, &nnz, &hv, NULL, NULL, NULL, &err);
  if (st == SHIRO_ERR_VERSION) {
    printf("version: %s\n", err.message);
    shiro_plan_close(&plan);
    return 3;
  }
  EXPECT(st == SHIRO_OK, "rank %d: %s", r, err.message);
  EXPECT(shiro_plan_get_local_matrix(plan, NULL, NULL, NULL, NULL, NULL, &err) == SHIRO_ERR_ARG && strstr(err.message, "nnz"),
         "rank %d: nnz NULL: %s", r, err.message);
  EXPECT(shiro_plan_get_local_matrix(NULL, &nnz2, NULL, NULL, NULL, NULL, &err) == SHIRO_ERR_ARG, "plan NULL accepted");
  int64_t *rp = malloc((size_t)(in.c_rows + 1) * sizeof *rp), *cj = malloc((size_t)(nnz + 1) * sizeof *cj);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  if (st == SHIRO_OK && rp && cj && v) {
    st = shiro_plan_get_local_matrix(plan, &nnz2, NULL, rp, cj, v, &err);
    EXPECT(st == SHIRO_OK && nnz2 == nnz, "rank %d: second call %d, nnz %lld then %lld", r, (int)st, (long long)nnz, (long long)nnz2);
    EXPECT(rp[0] == 0 && rp[in.c_rows] == nnz, "rank %d: row pointers run from %lld to %lld, nnz %lld", r, (long long)rp[0],
           (long long)rp[in.c_rows], (long long)nnz);
    EXPECT(shiro_plan_check_pattern(plan, shiro_pattern_digest(in.c_rows, in.k, rp, cj), &err) == SHIRO_OK,
           "rank %d: digest of the local matrix: %s", r, err.message);
    printf("rank %d rows %lld nnz %lld has_values %d\n", r, (long long)in.c_rows, (long long)nnz, hv);
    double *grown = realloc(all_vals, (size_t)(all_n + nnz + 1) * sizeof *all_vals);
    if (grown) {
      all_vals = grown;
      memcpy(all_vals + all_n, v, (size_t)nnz * sizeof *v);
      all_n += nnz;
    }
    for (int64_t i = 0; i < in.c_rows; i++) {
      printf("row %lld", (long long)in.c_global[i]);
      for (int64_t t = rp[i]; t < rp[i + 1]; t++) printf(" %lld:%.17g", (long long)cj[t], v[t]);
      printf("\n");
    }
  }
  free(rp);
  free(cj);
  free(v);
  shiro_plan_close(&plan);
  return test_failures != 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_local_matrix PLAN\n");
    return 2;
  }
  /* No MPI_Init: opening plans and their local matrices is local (and an Open MPI singleton
   * does not survive LeakSanitizer: tests/format/output_paths_check.py). */
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  shiro_plan_info in;
  int rc = 0;
  if (shiro_plan_open(argv[1], 0, &plan, &err) != SHIRO_OK || shiro_plan_get_info(plan, &in) != SHIRO_OK) {
    fprintf(stderr, "%s\n", err.message);
    rc = 1;
  }
  shiro_plan_close(&plan);
  for (int r = 0; rc == 0 && r < in.ranks; r++) rc = one_rank(argv[1], r);
  if (rc == 0) {
    EXPECT(all_n == in.nnz, "the local matrices hold %lld nonzeros, A has %lld", (long long)all_n, (long long)in.nnz);
    int32_t *uses = calloc((size_t)all_n + 1, sizeof *uses);
    for (int r = 0; uses && r < in.ranks; r++) check_val_src(argv[1], r, uses);
    for (int64_t id = 0; uses && id < all_n; id++)
      EXPECT(uses[id] == 1, "nonzero %lld of the local matrices is multiplied %d times", (long long)id, uses[id]);
    free(uses);
    rc = test_failures != 0;
  }
  free(all_vals);
  return rc;
}
