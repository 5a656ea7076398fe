/* test_widths.c — calls of any width n <= N on one context (shiro_spmm_n, shiro_spmm_transpose_n,
 * shiro_spmm_checked and shiro_spmm_transpose_checked), run under mpirun, any rank count:
 *
 *   - for every strategy (two ranks per node from 4 ranks on), float and double: a context made
 *     for N = 8 called at n = 1, 3 and 8 (in that order, then 3 again) gives, forward and
 *     transposed, the very bits of a context made for exactly n columns, with the same values
 *     (one shiro_ctx_set_values each); the checked calls give them too;
 *   - n = 0 and n = N + 1 are SHIRO_ERR_ARG naming n, on every rank, nothing hangs; the checked
 *     calls refuse a bad n on one rank, and ranks passing different n, on every rank with the
 *     misusing rank's message; the context works after each refusal.
 * The plans are written by rank 0 (default data/west0067.mtx: square, not symmetric).
 *
 * Built with -DSHIRO_TEST_CUDA (tests/gpu/: test_widths_cuda) the N = 8 context is on the CUDA
 * backend (its inputs copied to the device, its outputs back) and the contexts made for n on the
 * CPU: below N its calls run on the own kernels, whose bits are the CPU kernels' (gpu-ops), so
 * they must equal the CPU context's bit for bit; at n = N (cuSPARSE) within a rounding bound.
 * Without a device every rank exits 77 (skipped). */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shiro.h"
#include "test_plan.h"
#include "test_util.h"
#ifdef SHIRO_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

enum { NMAX = 8 };
static int rank, size;

/* The N context's backend, and its side of a call: host buffers copied to and from the device. */
#ifdef SHIRO_TEST_CUDA
static const shiro_backend BIG_BACKEND = SHIRO_BACKEND_CUDA;
static void *dev[2]; /* the N context's input and output on the device (the largest of B, C, Y, X) */
static void *in_dev(const void *h, size_t bytes) {
  EXPECT(cudaMemcpy(dev[0], h, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "rank %d: upload", rank);
  return dev[0];
}
static void *out_dev(void) { return dev[1]; }
static void out_host(void *h, size_t bytes) {
  EXPECT(cudaMemcpy(h, dev[1], bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "rank %d: download", rank);
}
#else
static const shiro_backend BIG_BACKEND = SHIRO_BACKEND_CPU;
static void *out_now; /* the output of the next call (host memory) */
static void *in_dev(const void *h, size_t bytes) {
  (void)bytes;
  return (void *)(uintptr_t)h;
}
static void *out_dev(void) { return out_now; }
static void out_host(void *h, size_t bytes) {
  (void)h;
  (void)bytes;
}
#endif

/* n values of the N context's output equal the reference's: bit for bit, or on the CUDA backend at
 * n = N (cuSPARSE) within (terms + 3)·u·(|A|·|B|) with a generous terms and |A|·|B| <= 64·(1 + |ref|). */
static int same_result(const void *got, const void *ref, int64_t count, size_t esz, int64_t n) {
#ifdef SHIRO_TEST_CUDA
  if (n == NMAX) {
    const double u = esz == 4 ? 0x1p-24 : 0x1p-53;
    for (int64_t i = 0; i < count; i++) {
      const double g = esz == 4 ? ((const float *)got)[i] : ((const double *)got)[i];
      const double r = esz == 4 ? ((const float *)ref)[i] : ((const double *)ref)[i];
      if (!(fabs(g - r) <= 256 * 64 * u * (1 + fabs(r)))) return 0;
    }
    return 1;
  }
#endif
  (void)n;
  return !memcmp(got, ref, (size_t)count * esz);
}

static void put(void *p, size_t esz, int64_t e, double v) {
  if (esz == 4) ((float *)p)[e] = (float)v;
  else ((double *)p)[e] = v;
}

/* A context of plan for n columns of dt with the test's values (not all 1: products and sums matter). */
static shiro_ctx *make(shiro_plan *plan, shiro_dtype dt, int64_t n, shiro_backend be) {
  shiro_ctx_options o = shiro_ctx_options_default();
  o.backend = be;
  o.dtype = dt;
  o.n = n;
  shiro_ctx *ctx = NULL;
  shiro_error err;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) != SHIRO_OK) {
    EXPECT(0, "create N = %lld: %s", (long long)n, err.message);
    return NULL;
  }
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, &err) == SHIRO_OK, "local: %s", err.message);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  for (int64_t t = 0; t < nnz; t++) v[t] = 0.3 + (double)((t * 7 + rank * 5) % 23) / 9.0;
  EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "set_values: %s", shiro_ctx_last_error(ctx));
  free(v);
  return ctx;
}

/* B (b_rows × n) and Y (c_rows × n) of width n: values of the global row and column. */
static void fill(const shiro_plan_info *in, int64_t n, size_t esz, void *B, void *Y) {
  for (int64_t i = 0; i < in->b_rows * n; i++)
    put(B, esz, i, (double)((in->b_global[i / n] * 5 + i % n * 3) % 17) / 7.0 - 1.1);
  for (int64_t i = 0; i < in->c_rows * n; i++)
    put(Y, esz, i, (double)((in->c_global[i / n] * 3 + i % n * 7) % 13) / 3.0 - 1.7);
}

/* 1 if every rank's status is want and its message holds `said` (NULL: any). */
static int all_refused(shiro_status st, shiro_status want, const char *msg, const char *said) {
  int mine = st == want && (!said || strstr(msg, said)), all = 0;
  if (!mine) fprintf(stderr, "rank %d: status %d, message: %s (expected %d, \"%s\")\n", rank, (int)st, msg, (int)want,
                     said ? said : "");
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static void widths(shiro_plan *plan, const shiro_plan_info *in, shiro_dtype dt, const char *tag) {
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  const int64_t br = in->b_rows, cr = in->c_rows;
  shiro_ctx *big = make(plan, dt, NMAX, BIG_BACKEND);
  if (!big) return;
  void *B = malloc((size_t)(br * NMAX + 1) * esz), *Y = malloc((size_t)(cr * NMAX + 1) * esz);
  void *C = malloc((size_t)(cr * NMAX + 1) * esz), *X = malloc((size_t)(br * NMAX + 1) * esz);
  void *C1 = malloc((size_t)(cr * NMAX + 1) * esz), *X1 = malloc((size_t)(br * NMAX + 1) * esz);
  const int64_t ns[] = {1, 3, NMAX, 3};
  for (int k = 0; k < 4; k++) {
    const int64_t n = ns[k];
    shiro_ctx *one = make(plan, dt, n, SHIRO_BACKEND_CPU);
    if (!one) break;
    fill(in, n, esz, B, Y);
    const size_t cb = (size_t)(cr * n) * esz, xb = (size_t)(br * n) * esz;
#ifndef SHIRO_TEST_CUDA
    out_now = C;
#endif
    shiro_status st = shiro_spmm_n(big, in_dev(B, xb), out_dev(), n);
    out_host(C, cb);
    EXPECT(st == SHIRO_OK, "%s, n = %lld: shiro_spmm_n: %s", tag, (long long)n, shiro_ctx_last_error(big));
    EXPECT(shiro_spmm(one, B, C1) == SHIRO_OK, "%s: N = %lld: %s", tag, (long long)n, shiro_ctx_last_error(one));
    EXPECT(same_result(C, C1, cr * n, esz, n), "rank %d, %s, n = %lld: C of the N = %d context differs from a context "
                                               "made for n",
           rank, tag, (long long)n, NMAX);
#ifndef SHIRO_TEST_CUDA
    out_now = X;
#endif
    st = shiro_spmm_transpose_n(big, in_dev(Y, cb), out_dev(), n);
    out_host(X, xb);
    EXPECT(st == SHIRO_OK, "%s, n = %lld: shiro_spmm_transpose_n: %s", tag, (long long)n, shiro_ctx_last_error(big));
    EXPECT(shiro_spmm_transpose(one, Y, X1) == SHIRO_OK, "%s: N = %lld transposed: %s", tag, (long long)n,
           shiro_ctx_last_error(one));
    EXPECT(same_result(X, X1, br * n, esz, n), "rank %d, %s, n = %lld: X of the N = %d context differs from a context "
                                               "made for n",
           rank, tag, (long long)n, NMAX);
    /* the checked calls: the same bits */
    memset(C, 0, (size_t)(cr * NMAX) * esz);
    memset(X, 0, (size_t)(br * NMAX) * esz);
#ifndef SHIRO_TEST_CUDA
    out_now = C;
#endif
    st = shiro_spmm_checked(big, in_dev(B, xb), out_dev(), n, dt);
    out_host(C, cb);
#ifndef SHIRO_TEST_CUDA
    out_now = X;
#endif
    if (st == SHIRO_OK) st = shiro_spmm_transpose_checked(big, in_dev(Y, cb), out_dev(), n, dt);
    out_host(X, xb);
    EXPECT(st == SHIRO_OK, "%s, n = %lld: checked: %s", tag, (long long)n, shiro_ctx_last_error(big));
    EXPECT(same_result(C, C1, cr * n, esz, n) && same_result(X, X1, br * n, esz, n),
           "rank %d, %s, n = %lld: the checked calls differ", rank, tag, (long long)n);
    shiro_ctx_destroy(&one);
  }
  /* the refusals below come before anything starts: the N context's buffers (device ones on CUDA) */
#ifdef SHIRO_TEST_CUDA
  void *hB = B, *hC = C, *hY = Y, *hX = X;
  B = Y = dev[0];
  C = X = dev[1];
#endif
  /* bad widths: every rank passes the same one and every rank refuses it, naming n */
  const int64_t bad[] = {0, NMAX + 1, -3};
  for (int k = 0; k < 3; k++) {
    EXPECT(all_refused(shiro_spmm_n(big, B, C, bad[k]), SHIRO_ERR_ARG, shiro_ctx_last_error(big), "n = "),
           "%s: shiro_spmm_n(n = %lld) not refused on every rank", tag, (long long)bad[k]);
    EXPECT(all_refused(shiro_spmm_transpose_n(big, Y, X, bad[k]), SHIRO_ERR_ARG, shiro_ctx_last_error(big), "n = "),
           "%s: shiro_spmm_transpose_n(n = %lld) not refused on every rank", tag, (long long)bad[k]);
  }
  /* checked: a bad n on the last rank only, then different good n: every rank refuses, with the misuser's message */
  char said[64];
  snprintf(said, sizeof said, "rank %d passed N = %d", size - 1, NMAX + 1);
  EXPECT(all_refused(shiro_spmm_checked(big, B, C, rank == size - 1 ? NMAX + 1 : 2, dt), SHIRO_ERR_ARG,
                     shiro_ctx_last_error(big), said),
         "%s: n = N + 1 on one rank", tag);
  EXPECT(all_refused(shiro_spmm_transpose_checked(big, Y, X, rank == size - 1 ? 0 : 2, dt), SHIRO_ERR_ARG,
                     shiro_ctx_last_error(big), size > 1 ? "passed N = 0" : NULL),
         "%s: transposed n = 0 on one rank", tag);
  if (size > 1) {
    EXPECT(all_refused(shiro_spmm_checked(big, B, C, rank == 0 ? 2 : 3, dt), SHIRO_ERR_ARG, shiro_ctx_last_error(big),
                       "different n (from 2 to 3"),
           "%s: different n", tag);
    EXPECT(all_refused(shiro_spmm_transpose_checked(big, Y, X, rank == 0 ? 3 : 2, dt), SHIRO_ERR_ARG,
                       shiro_ctx_last_error(big), "different n (from 2 to 3"),
           "%s: different n transposed", tag);
  }
#ifdef SHIRO_TEST_CUDA
  B = hB, C = hC, Y = hY, X = hX;
#endif
  /* the context works after the refusals */
  fill(in, 3, esz, B, Y);
  shiro_ctx *three = make(plan, dt, 3, SHIRO_BACKEND_CPU);
  if (three) {
#ifndef SHIRO_TEST_CUDA
    out_now = C;
#endif
    shiro_status st = shiro_spmm_n(big, in_dev(B, (size_t)(br * 3) * esz), out_dev(), 3);
    out_host(C, (size_t)(cr * 3) * esz);
    EXPECT(st == SHIRO_OK && shiro_spmm(three, B, C1) == SHIRO_OK && same_result(C, C1, cr * 3, esz, 3),
           "%s: n = 3 after the refusals", tag);
    shiro_ctx_destroy(&three);
  }
  free(B);
  free(Y);
  free(C);
  free(X);
  free(C1);
  free(X1);
  shiro_ctx_destroy(&big);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mtx = argc > 1 ? argv[1] : "data/west0067.mtx";
#ifdef SHIRO_TEST_CUDA
  int devices = 0, have = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (rank == 0) printf("SKIP: no CUDA device on some rank (cudaGetDeviceCount)\n");
    MPI_Finalize();
    return 77;
  }
#endif
  static const char *names[STRAT_COUNT] = {"block", "col", "row", "joint", "hier", "group", "cola", "hybrid"};
  const int32_t gpn = size >= 4 ? 2 : 1;
  for (int s = 0; s < STRAT_COUNT; s++) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/shiro-widths-%d-%d.h5", (int)getppid(), s);
    if (!test_world_plan(mtx, path, (sc_strategy)s, gpn)) {
      MPI_Finalize();
      return 1;
    }
    shiro_plan *plan = NULL;
    shiro_error err;
    shiro_plan_info in;
    EXPECT(shiro_plan_open_comm(path, MPI_COMM_WORLD, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK,
           "open: %s", err.message);
#ifdef SHIRO_TEST_CUDA
    const size_t most = (size_t)((plan && in.b_rows > in.c_rows ? in.b_rows : plan ? in.c_rows
                                                                                   : 0) +
                                 1) *
        NMAX * 8;
    EXPECT(cudaMalloc(&dev[0], most) == cudaSuccess && cudaMalloc(&dev[1], most) == cudaSuccess, "rank %d: cudaMalloc", rank);
#endif
    for (int d = 0; plan && d < 2; d++) {
      char tag[96];
      snprintf(tag, sizeof tag, "%s G=%d, %s", names[s], (int)gpn, d ? "double" : "float");
      widths(plan, &in, d ? SHIRO_FLOAT64 : SHIRO_FLOAT32, tag);
    }
#ifdef SHIRO_TEST_CUDA
    cudaFree(dev[0]);
    cudaFree(dev[1]);
#endif
    shiro_plan_close(&plan);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
  }
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
