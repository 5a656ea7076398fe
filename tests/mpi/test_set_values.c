/* test_set_values.c — shiro_ctx_set_values on every rank: new values, the same pattern.
 *
 * usage: mpirun -np R test_set_values PLAN MATRIX [N,...]
 *        mpirun -np R test_set_values PLAN --expect-version     (a format 2.0 plan)
 *
 * Every rank takes its local matrix from the plan (shiro_plan_get_local_matrix)
 * and gives its nonzeros new values, a deterministic function of (global row,
 * global column, round): no communication, so each rank can also compute the
 * whole A' serially from the Matrix Market file's pattern. For float and
 * double and each N, on one context:
 *   1. shiro_spmm and shiro_spmm_transpose with the plan's values (A·B, Aᵀ·Y);
 *   2. set_values(round 1): A'·B and A'ᵀ·Y (the transposed program derived
 *      before, its values refreshed);
 *   3. set_values(round 2): again, and twice the same bits;
 * and on a second context set_values before its first transposed call (the
 * derivation takes the new values). Each entry of C or X is compared with the
 * serial product within the worst-case rounding bound of its sum,
 * (terms + 3) · u · (|A'|·|B|). Misuse: a NULL context, values NULL on rank 1
 * only (every rank fails, with a message naming rank 1; the context still
 * multiplies by its last values). With --expect-version every rank must get
 * SHIRO_ERR_VERSION (the plan has no val_src).
 *
 * Built with -DSHIRO_TEST_CUDA (tests/gpu/: test_set_values_cuda) the contexts
 * use the CUDA backend: B and Y are copied to the device before each call and
 * C and X back after it (the poison too, so a row the call failed to write
 * shows); without a device every rank exits 77 (skipped). */
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

#ifdef SHIRO_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

static int rank, nranks;

/* The host buffers and, on the CUDA backend, their device copies (else the host ones). */
enum { BUF_B,
       BUF_C,
       BUF_C2,
       BUF_Y,
       BUF_X,
       BUF_X2,
       NBUF };
typedef struct bufs {
  void *h[NBUF], *d[NBUF];
  size_t bytes[NBUF];
} bufs;

/* Allocates buffer k of `bytes` on the host (and the device). Returns 0 on failure. */
static int buf_alloc(bufs *b, int k, size_t bytes) {
  b->bytes[k] = bytes;
  b->h[k] = malloc(bytes);
#ifdef SHIRO_TEST_CUDA
  if (cudaMalloc(&b->d[k], bytes) != cudaSuccess) b->d[k] = NULL;
#else
  b->d[k] = b->h[k];
#endif
  return b->h[k] && b->d[k];
}

static void buf_free(bufs *b) {
  for (int k = 0; k < NBUF; k++) {
#ifdef SHIRO_TEST_CUDA
    if (b->d[k]) cudaFree(b->d[k]);
#endif
    free(b->h[k]);
  }
}

/* Copies buffer k host -> device (up) or device -> host (down); nothing on the CPU backend. */
static void buf_sync(bufs *b, int k, int up) {
#ifdef SHIRO_TEST_CUDA
  cudaError_t e = up ? cudaMemcpy(b->d[k], b->h[k], b->bytes[k], cudaMemcpyHostToDevice)
                     : cudaMemcpy(b->h[k], b->d[k], b->bytes[k], cudaMemcpyDeviceToHost);
  EXPECT(e == cudaSuccess, "rank %d: cudaMemcpy of buffer %d: %s", rank, k, cudaGetErrorString(e));
#else
  (void)b;
  (void)k;
  (void)up;
#endif
}

/* The value of A'(i, j) in round r (0: the file's value v). Never 0, mixed signs, not integers. */
static double a_value(int64_t i, int64_t j, int r, double v) {
  if (r == 0) return v;
  uint64_t h = (uint64_t)(i * 1000003 + j * 7919 + r * 104729);
  h ^= h >> 13;
  h *= 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return ((double)(h % 2001) - 1000.0) / 256.0 + (h & 1 ? 0.125 : -0.125);
}

/* a_value as spmm_ref.h's callback; arg points to the round. */
static double round_value(int64_t i, int64_t j, double v, const void *arg) { return a_value(i, j, *(const int *)arg, v); }

/* This rank's values of round r, in local-matrix order. */
static void round_values(const shiro_plan_info *in, const int64_t *rp, const int64_t *cj, const double *v0, int r, double *v) {
  for (int64_t i = 0; i < in->c_rows; i++)
    for (int64_t t = rp[i]; t < rp[i + 1]; t++) v[t] = a_value(in->c_global[i], cj[t], r, v0[t]);
}

/* shiro_spmm and shiro_spmm_transpose once (twice when `twice`: the same bits), checked against round r. */
static void products(shiro_ctx *ctx, const sc_csr *A, const shiro_plan_info *in, int r, shiro_dtype dt, int64_t n, bufs *b,
                     int twice, const char *what) {
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  memset(b->h[BUF_C], 0xff, (size_t)(in->c_rows * n + 1) * esz); /* NaN poison */
  memset(b->h[BUF_X], 0xff, (size_t)(in->b_rows * n + 1) * esz);
  for (int k = 0; k < NBUF; k++) buf_sync(b, k, 1);
  EXPECT(shiro_spmm(ctx, b->d[BUF_B], b->d[BUF_C]) == SHIRO_OK, "rank %d %s spmm: %s", rank, what, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm_transpose(ctx, b->d[BUF_Y], b->d[BUF_X]) == SHIRO_OK, "rank %d %s transpose: %s", rank, what,
         shiro_ctx_last_error(ctx));
  if (twice) {
    EXPECT(shiro_spmm(ctx, b->d[BUF_B], b->d[BUF_C2]) == SHIRO_OK, "rank %d %s spmm again: %s", rank, what,
           shiro_ctx_last_error(ctx));
    EXPECT(shiro_spmm_transpose(ctx, b->d[BUF_Y], b->d[BUF_X2]) == SHIRO_OK, "rank %d %s transpose again", rank, what);
  }
  for (int k = 0; k < NBUF; k++) buf_sync(b, k, 0);
  if (twice)
    EXPECT(!memcmp(b->h[BUF_C], b->h[BUF_C2], (size_t)(in->c_rows * n) * esz) &&
               !memcmp(b->h[BUF_X], b->h[BUF_X2], (size_t)(in->b_rows * n) * esz),
           "rank %d %s: two calls differ", rank, what);
  const double wc = ref_worst_c(A, in, round_value, &r, dt, n, b->h[BUF_C]);
  const double wx = ref_worst_x(A, in, round_value, &r, dt, n, b->h[BUF_X]);
  EXPECT(wc <= 1, "rank %d %s %s N=%lld: A'·B off: max error/bound %.3g", rank, what, dt == SHIRO_FLOAT32 ? "float" : "double",
         (long long)n, wc);
  EXPECT(wx <= 1, "rank %d %s %s N=%lld: A'ᵀ·Y off: max error/bound %.3g", rank, what, dt == SHIRO_FLOAT32 ? "float" : "double",
         (long long)n, wx);
}

static void run(shiro_plan *plan, const shiro_plan_info *in, const sc_csr *A, shiro_dtype dt, int64_t n) {
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  shiro_error err = {{0}};
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, &err) == SHIRO_OK, "rank %d: %s", rank, err.message);
  int64_t *rp = malloc((size_t)(in->c_rows + 1) * sizeof *rp), *cj = malloc((size_t)(nnz + 1) * sizeof *cj);
  double *v0 = malloc((size_t)(nnz + 1) * sizeof *v0), *v = malloc((size_t)(nnz + 1) * sizeof *v);
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, rp, cj, v0, &err) == SHIRO_OK, "rank %d: %s", rank, err.message);
  bufs b;
  memset(&b, 0, sizeof b);
  const size_t bb = (size_t)(in->b_rows * n + 1) * esz, cb = (size_t)(in->c_rows * n + 1) * esz;
  int ok = buf_alloc(&b, BUF_B, bb) & buf_alloc(&b, BUF_C, cb) & buf_alloc(&b, BUF_C2, cb) & buf_alloc(&b, BUF_Y, cb) &
      buf_alloc(&b, BUF_X, bb) & buf_alloc(&b, BUF_X2, bb);
  EXPECT(ok, "rank %d: out of memory for the buffers", rank);
  if (!ok) {
    buf_free(&b);
    free(rp);
    free(cj);
    free(v0);
    free(v);
    return;
  }
  for (int64_t l = 0; l < in->b_rows; l++)
    for (int64_t c = 0; c < n; c++) ref_put(b.h[BUF_B], l * n + c, dt, ref_b_value(in->b_global[l], c));
  for (int64_t l = 0; l < in->c_rows; l++)
    for (int64_t c = 0; c < n; c++) ref_put(b.h[BUF_Y], l * n + c, dt, ref_y_value(in->c_global[l], c));
  shiro_ctx_options o = shiro_ctx_options_default();
  o.n = n;
  o.dtype = dt;
#ifdef SHIRO_TEST_CUDA
  o.backend = SHIRO_BACKEND_CUDA;
#endif
  shiro_ctx *ctx = NULL, *ctx2 = NULL;
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "rank %d create: %s", rank, err.message);
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx2, &err) == SHIRO_OK, "rank %d create 2: %s", rank, err.message);
  if (ctx && ctx2) {
    products(ctx, A, in, 0, dt, n, &b, 0, "plan's values");
    round_values(in, rp, cj, v0, 1, v);
    EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "rank %d set_values 1: %s", rank, shiro_ctx_last_error(ctx));
    products(ctx, A, in, 1, dt, n, &b, 0, "round 1");
    round_values(in, rp, cj, v0, 2, v);
    EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "rank %d set_values 2: %s", rank, shiro_ctx_last_error(ctx));
    products(ctx, A, in, 2, dt, n, &b, 1, "round 2");
    /* misuse: values NULL on rank 1 only (where it owns nonzeros), every rank told; nothing changed */
    if (nranks > 1) {
      int64_t nnz1 = nnz;
      MPI_Bcast(&nnz1, 1, MPI_INT64_T, 1, MPI_COMM_WORLD);
      shiro_status st = shiro_ctx_set_values(ctx, rank == 1 ? NULL : v0);
      if (nnz1 > 0) {
        EXPECT(st == SHIRO_ERR_ARG, "rank %d: values NULL on rank 1 gave %d", rank, (int)st);
        EXPECT(strstr(shiro_ctx_last_error(ctx), rank == 1 ? "values is NULL" : "failed on rank 1"), "rank %d: message '%s'", rank,
               shiro_ctx_last_error(ctx));
        products(ctx, A, in, 2, dt, n, &b, 0, "after a refused set_values");
      }
    }
    /* a context whose first transposed call comes after set_values */
    round_values(in, rp, cj, v0, 3, v);
    EXPECT(shiro_ctx_set_values(ctx2, v) == SHIRO_OK, "rank %d set_values (ctx 2): %s", rank, shiro_ctx_last_error(ctx2));
    products(ctx2, A, in, 3, dt, n, &b, 1, "round 3, derived after");
    products(ctx, A, in, 2, dt, n, &b, 0, "the other context keeps its values");
  }
  EXPECT(shiro_ctx_set_values(NULL, v) == SHIRO_ERR_ARG, "a NULL context accepted");
  double worst = test_failures, all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%s N=%lld: %s\n", dt == SHIRO_FLOAT32 ? "float" : "double", (long long)n, all ? "FAILED" : "ok");
  shiro_ctx_destroy(&ctx);
  shiro_ctx_destroy(&ctx2);
  buf_free(&b);
  free(rp);
  free(cj);
  free(v0);
  free(v);
}

/* A 2.0 plan: set_values refused on every rank with SHIRO_ERR_VERSION (the context still works). */
static void expect_version(shiro_plan *plan) {
  shiro_error err = {{0}};
  shiro_ctx_options o = shiro_ctx_options_default();
  shiro_ctx *ctx = NULL;
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "rank %d create: %s", rank, err.message);
  if (!ctx) return;
  double one = 1.0;
  shiro_status st = shiro_ctx_set_values(ctx, &one);
  EXPECT(st == SHIRO_ERR_VERSION && strstr(shiro_ctx_last_error(ctx), "format 2.0"), "rank %d: %d '%s'", rank, (int)st,
         shiro_ctx_last_error(ctx));
  if (rank == 0) printf("2.0 plan: %s\n", shiro_ctx_last_error(ctx));
  shiro_ctx_destroy(&ctx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R test_set_values PLAN MATRIX [N,...] | PLAN --expect-version\n");
    MPI_Finalize();
    return 2;
  }
#ifdef SHIRO_TEST_CUDA
  int devices = 0, have = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (rank == 0) printf("SKIP: no CUDA device on some rank (cudaGetDeviceCount)\n");
    MPI_Finalize();
    return 77;
  }
#endif
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  sc_csr *A = NULL;
  shiro_plan_info in;
  int ok = shiro_plan_open(argv[1], rank, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK;
  EXPECT(ok, "rank %d: %s", rank, err.message);
  if (ok && !strcmp(argv[2], "--expect-version")) {
    expect_version(plan);
  } else if (ok) {
    ok = mm_read(argv[2], &A, NULL, &err) == SHIRO_OK;
    EXPECT(ok, "rank %d: %s", rank, err.message);
    for (const char *p = argc > 3 ? argv[3] : "1,7"; ok && *p;) {
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
