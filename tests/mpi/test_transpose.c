/* test_transpose.c — X = Aᵀ·Y from the plan's program run backwards, on every rank.
 *
 * usage: mpirun -np R test_transpose PLAN MATRIX [N]
 *
 * Each rank fills its rows of Y with a deterministic function of (global C
 * row, column), calls shiro_spmm_transpose twice (the same bits both times,
 * nothing else changed) and compares every entry of its X rows with a serial
 * Aᵀ·Y from the Matrix Market file, within the worst-case rounding bound of
 * a sum of the column's terms: (terms + 3) · u · (|A|ᵀ|Y|). It also runs
 * shiro_spmm before and after (the forward product still right: the two
 * programs share the context's buffers), for float and double. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_read.h"
#include "shiro.h"
#include "spmm_ref.h"
#include "test_util.h"

static int rank;

static void run(shiro_plan *plan, const shiro_plan_info *in, const sc_csr *A, shiro_dtype dt, int64_t n) {
  const char *tn = dt == SHIRO_FLOAT32 ? "float" : "double";
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  shiro_error err = {{0}};
  shiro_ctx_options o = shiro_ctx_options_default();
  o.n = n;
  o.dtype = dt;
  shiro_ctx *ctx = NULL;
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "rank %d create: %s", rank, err.message);
  if (!ctx) return;
  void *Y = malloc((size_t)(in->c_rows * n + 1) * esz), *X = malloc((size_t)(in->b_rows * n + 1) * esz);
  void *X2 = malloc((size_t)(in->b_rows * n + 1) * esz), *B = malloc((size_t)(in->b_rows * n + 1) * esz);
  void *C = malloc((size_t)(in->c_rows * n + 1) * esz);
  for (int64_t l = 0; l < in->c_rows; l++)
    for (int64_t c = 0; c < n; c++) ref_put(Y, l * n + c, dt, ref_y_value(in->c_global[l], c));
  for (int64_t l = 0; l < in->b_rows; l++)
    for (int64_t c = 0; c < n; c++) ref_put(B, l * n + c, dt, ref_b_value(in->b_global[l], c));
  memset(X, 0xff, (size_t)(in->b_rows * n + 1) * esz); /* NaN poison: every X entry must be written */
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK, "rank %d spmm: %s", rank, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK, "rank %d transpose: %s", rank, shiro_ctx_last_error(ctx));
  memset(X2, 0x7f, (size_t)(in->b_rows * n + 1) * esz);
  EXPECT(shiro_spmm_transpose(ctx, Y, X2) == SHIRO_OK, "rank %d transpose again: %s", rank, shiro_ctx_last_error(ctx));
  EXPECT(!memcmp(X, X2, (size_t)(in->b_rows * n) * esz), "rank %d %s N=%lld: two transposed calls differ", rank, tn, (long long)n);
  double wx = ref_worst_x(A, in, NULL, NULL, dt, n, X), wc = ref_worst_c(A, in, NULL, NULL, dt, n, C);
  memset(C, 0xff, (size_t)(in->c_rows * n + 1) * esz);
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK, "rank %d spmm after: %s", rank, shiro_ctx_last_error(ctx));
  double wc2 = ref_worst_c(A, in, NULL, NULL, dt, n, C), worst = fmax(wx, fmax(wc, wc2)), all = 0;
  if (!(worst <= 1e300)) worst = 1e300;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(wx <= 1, "rank %d %s N=%lld: Aᵀ·Y off: max error/bound %.3g", rank, tn, (long long)n, wx);
  EXPECT(wc <= 1 && wc2 <= 1, "rank %d %s N=%lld: A·B off: %.3g / %.3g", rank, tn, (long long)n, wc, wc2);
  if (rank == 0) printf("%s N=%lld: max error/bound %.3g (transposed and forward)\n", tn, (long long)n, all);
  free(Y);
  free(X);
  free(X2);
  free(B);
  free(C);
  shiro_ctx_destroy(&ctx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R test_transpose PLAN MATRIX [N,...]\n");
    MPI_Finalize();
    return 2;
  }
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  sc_csr *A = NULL;
  shiro_plan_info in;
  int ok = shiro_plan_open(argv[1], rank, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK &&
      mm_read(argv[2], &A, NULL, &err) == SHIRO_OK;
  EXPECT(ok, "rank %d: %s", rank, err.message);
  if (ok) {
    const char *ns = argc > 3 ? argv[3] : "1,7";
    for (const char *p = ns; *p;) {
      int64_t n = strtoll(p, (char **)&p, 10);
      run(plan, &in, A, SHIRO_FLOAT64, n);
      run(plan, &in, A, SHIRO_FLOAT32, n);
      if (*p == ',') p++;
    }
  }
  sc_csr_free(A);
  shiro_plan_close(&plan);
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
