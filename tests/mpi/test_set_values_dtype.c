/* test_set_values_dtype.c — shiro_ctx_set_values_dtype (run under mpirun, any rank count):
 * float values install exactly what the same values as doubles install, in float32 and float64
 * contexts (the same bits of C = A'·B and X = A'ᵀ·Y), the product is A'·B with the new values
 * (each rank against its own rows: B is a formula of the global row), and a bad dtype on one rank
 * fails on every rank with its message. The plan (karate, joint: partial rows computed for other
 * ranks, so values travel) is written by rank 0. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shiro.h"
#include "test_plan.h"
#include "test_util.h"

enum { N = 3 };
static int rank, size;

static double b_value(int64_t g, int j) { return (double)((g * 7 + j * 3) % 11) - 5.0; }

/* C and X of one context after installing values (as floats or as doubles). */
static int products(shiro_plan *plan, const shiro_plan_info *in, shiro_dtype ctx_dt, const void *values, shiro_dtype val_dt,
                    void *C, void *X) {
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = ctx_dt;
  o.n = N;
  shiro_ctx *ctx = NULL;
  shiro_error err;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) != SHIRO_OK) {
    EXPECT(0, "rank %d: create: %s", rank, err.message);
    return 0;
  }
  const size_t esz = ctx_dt == SHIRO_FLOAT32 ? 4 : 8;
  char *B = calloc((size_t)in->b_rows * N + 1, esz), *Y = calloc((size_t)in->c_rows * N + 1, esz);
  for (int64_t i = 0; i < in->b_rows; i++)
    for (int j = 0; j < N; j++) {
      const double v = b_value(in->b_global[i], j);
      if (esz == 4) ((float *)B)[i * N + j] = (float)v;
      else ((double *)B)[i * N + j] = v;
    }
  for (int64_t i = 0; i < in->c_rows; i++)
    for (int j = 0; j < N; j++) {
      const double v = b_value(in->c_global[i] + 1, j);
      if (esz == 4) ((float *)Y)[i * N + j] = (float)v;
      else ((double *)Y)[i * N + j] = v;
    }
  shiro_status st = values ? shiro_ctx_set_values_dtype(ctx, values, val_dt) : SHIRO_OK;
  EXPECT(st == SHIRO_OK, "rank %d: set_values_dtype(%s values, %s context): %s", rank, val_dt ? "double" : "float",
         ctx_dt ? "double" : "float", shiro_ctx_last_error(ctx));
  int ok = st == SHIRO_OK && shiro_spmm(ctx, B, C) == SHIRO_OK && shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK;
  EXPECT(ok, "rank %d: calls: %s", rank, shiro_ctx_last_error(ctx));
  /* A bad dtype on rank 1 (rank 0 alone): every rank fails, with that rank's message. */
  const int bad = size > 1 ? 1 : 0;
  st = shiro_ctx_set_values_dtype(ctx, values, rank == bad ? (shiro_dtype)7 : val_dt);
  EXPECT(!values || (st == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "dtype 7")), "rank %d: dtype 7 on rank %d: %d (%s)",
         rank, bad, (int)st, shiro_ctx_last_error(ctx));
  free(B);
  free(Y);
  shiro_ctx_destroy(&ctx);
  return ok;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[64];
  snprintf(path, sizeof path, "/tmp/shiro-values-dtype-%d.h5", (int)getppid());
  if (!test_world_plan(argc > 1 ? argv[1] : "data/karate.mtx", path, STRAT_JOINT, 1)) {
    MPI_Finalize();
    return 1;
  }
  shiro_plan *plan = NULL;
  shiro_error err;
  shiro_plan_info in;
  EXPECT(shiro_plan_open_comm(path, MPI_COMM_WORLD, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK,
         "rank %d: open: %s", rank, err.message);
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, &err) == SHIRO_OK, "local: %s", err.message);
  int64_t *rp = malloc((size_t)(in.c_rows + 1) * sizeof *rp), *cj = malloc((size_t)(nnz + 1) * sizeof *cj);
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, rp, cj, NULL, &err) == SHIRO_OK, "local: %s", err.message);
  /* new values: floats that are no doubles' roundings of simple numbers, mixed signs */
  float *v32 = malloc((size_t)(nnz + 1) * sizeof *v32);
  double *v64 = malloc((size_t)(nnz + 1) * sizeof *v64);
  for (int64_t t = 0; t < nnz; t++) {
    v32[t] = (float)((t % 2 ? -1.0 : 1.0) * (1.0 + 1.0 / (3.0 + (double)(cj[t] % 13))));
    v64[t] = (double)v32[t];
  }
  const size_t cn = (size_t)in.c_rows * N + 1, xn = (size_t)in.b_rows * N + 1;
  for (int d = 0; d < 2; d++) {
    const shiro_dtype dt = d ? SHIRO_FLOAT64 : SHIRO_FLOAT32;
    const size_t esz = d ? 8 : 4;
    char *C32 = calloc(cn, esz), *C64 = calloc(cn, esz), *C0 = calloc(cn, esz);
    char *X32 = calloc(xn, esz), *X64 = calloc(xn, esz), *X0 = calloc(xn, esz);
    products(plan, &in, dt, v32, SHIRO_FLOAT32, C32, X32);
    products(plan, &in, dt, v64, SHIRO_FLOAT64, C64, X64);
    products(plan, &in, dt, NULL, SHIRO_FLOAT64, C0, X0);
    const char *what = d ? "float64 context" : "float32 context";
    EXPECT(!memcmp(C32, C64, (cn - 1) * esz) && !memcmp(X32, X64, (xn - 1) * esz),
           "rank %d, %s: float values and the same values as doubles give different bits", rank, what);
    EXPECT(in.c_rows == 0 || nnz == 0 || memcmp(C32, C0, (cn - 1) * esz), "rank %d, %s: C as before set_values", rank, what);
    /* each rank's rows of C against its rows of A' (global columns) times B's formula */
    double worst = 0;
    for (int64_t i = 0; i < in.c_rows; i++)
      for (int j = 0; j < N; j++) {
        double ref = 0, mag = 0;
        for (int64_t t = rp[i]; t < rp[i + 1]; t++) {
          ref += v64[t] * b_value(cj[t], j);
          mag += fabs(v64[t] * b_value(cj[t], j));
        }
        const double got = d ? ((double *)C32)[i * N + j] : ((float *)C32)[i * N + j];
        const double err_rel = fabs(got - ref) / (mag > 0 ? mag : 1);
        if (err_rel > worst) worst = err_rel;
      }
    EXPECT(worst <= (d ? 1e-14 : 1e-5), "rank %d, %s: C off A'·B by %g (relative)", rank, what, worst);
    free(C32);
    free(C64);
    free(C0);
    free(X32);
    free(X64);
    free(X0);
  }
  free(rp);
  free(cj);
  free(v32);
  free(v64);
  shiro_plan_close(&plan);
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(path);
    printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  }
  MPI_Finalize();
  return fails != 0;
}
