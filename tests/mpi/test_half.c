/* test_half.c — bfloat16 and float16 contexts (SHIRO_BFLOAT16, SHIRO_FLOAT16) on a real plan, every
 * rank (run under mpirun by half_check.py for every strategy, flat and two-tier):
 *
 * usage: mpirun -np R test_half PLAN MATRIX HOPS EXACT [N,...]
 *
 * For each 16-bit type and N, forward (C = A·B) and transposed (X = Aᵀ·Y), with B and Y values
 * that the 16-bit types do not hold exactly (so B̃ = B rounded differs from B):
 *   - against the product of the rounded inputs (A's values in float32, B̃), each entry within
 *     the bound shiro.h states, ((HOPS + 1)·u16 + (t + 3)·u32)·(|A|·|B̃|), HOPS the most roundings
 *     of a partial row before its last (1 flat, 3 two-tier);
 *   - against float64 on the unrounded B, within that bound plus B's own rounding, u16·|A|·|B|,
 *     and A's, u32·|A|·|B|;
 *   - EXACT = 1 (one rank, or forward with strategy col: no partial rows travel): equal bit for bit
 *     to a float32 context's result on B̃, rounded once; EXACT = 0: within one 16-bit spacing of it
 *     per hop (the bound above, relative to the float32 context's);
 *   - two calls give the same bits; a context made for N = 8 called at width n (shiro_spmm_n,
 *     shiro_spmm_transpose_n, the checked calls) gives the bits of the context made for n; the
 *     checked call refuses another dtype on every rank; column-major B and C give the bits of
 *     row-major ones; after shiro_ctx_set_values the product is A'·B̃ with the new values.
 * Rank 0 prints the largest error of each type relative to |A|·|B| against float64, for float32
 * and for the 16-bit type (the accuracy docs/c-api.md reports). */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "mm_read.h"
#include "shiro.h"
#include "test_util.h"

static int rank, size;
static int hops, exact;

static double b_val(int64_t g, int64_t c) { return ((double)((g * 5 + c) % 9) - 4.0) * 1.1 + 0.013 * (double)(c % 5); }
static double y_val(int64_t g, int64_t c) { return ((double)((g * 7 + c * 3) % 11) - 5.0) * 0.9 + 0.031 * (double)(c % 3); }
/* The values installed by shiro_ctx_set_values, from the file's. */
static double new_val(int64_t i, int64_t j, double v) { return v * 0.75 + 0.01 * (double)((i + j) % 5); }

static uint16_t to16(shiro_dtype dt, double v) { return dt == SHIRO_BFLOAT16 ? half_f32_to_bf16((float)v) : half_f32_to_f16((float)v); }
static double from16(shiro_dtype dt, uint16_t h) { return dt == SHIRO_BFLOAT16 ? half_bf16_to_f32(h) : half_f16_to_f32(h); }

static shiro_ctx *make(shiro_plan *plan, shiro_dtype dt, int64_t n) {
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = dt;
  o.n = n;
  shiro_ctx *ctx = NULL;
  shiro_error err = {{0}};
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "rank %d: create: %s", rank, err.message);
  return ctx;
}

/* Worst error / bound of out (rows of n 16-bit values) against the products of the rows of A
 * (fwd) or of Aᵀ (!fwd) with the input `in` (given as a function of (global row, column), rounded
 * to 16 bits or not). *rel: the largest |out − ref64| / (|A|·|in|). */
typedef struct accuracy {
  double worst_rounded, worst64, rel64;
} accuracy;

static void check_values(const sc_csr *A, const shiro_plan_info *in, int fwd, int newvals, shiro_dtype dt, int64_t n,
                         const double *out, accuracy *acc) {
  const double u16 = dt == SHIRO_BFLOAT16 ? 0x1p-8 : 0x1p-11, u32 = 0x1p-24;
  const int64_t nout = fwd ? A->m : A->k;
  double *ref = calloc((size_t)(nout * n + 1), sizeof *ref), *abs_ = calloc((size_t)(nout * n + 1), sizeof *abs_);
  double *ref64 = calloc((size_t)(nout * n + 1), sizeof *ref64), *abs64 = calloc((size_t)(nout * n + 1), sizeof *abs64);
  int64_t *terms = calloc((size_t)nout + 1, sizeof *terms);
  if (!ref || !abs_ || !ref64 || !abs64 || !terms) {
    EXPECT(0, "out of memory");
    goto done;
  }
  for (int64_t i = 0; i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      const int64_t j = A->Aj[t], o = fwd ? i : j, src = fwd ? j : i;
      const double a64 = newvals ? new_val(i, j, A->Ax[t]) : A->Ax[t], a32 = (double)(float)a64;
      terms[o]++;
      for (int64_t c = 0; c < n; c++) {
        const double x = fwd ? b_val(src, c) : y_val(src, c), xr = from16(dt, to16(dt, x));
        ref[o * n + c] += a32 * xr;
        abs_[o * n + c] += fabs(a32 * xr);
        ref64[o * n + c] += a64 * x;
        abs64[o * n + c] += fabs(a64 * x);
      }
    }
  const int64_t rows = fwd ? in->c_rows : in->b_rows;
  const int64_t *glob = fwd ? in->c_global : in->b_global;
  for (int64_t l = 0; l < rows; l++) {
    const int64_t g = glob[l];
    for (int64_t c = 0; c < n; c++) {
      const double got = out[l * n + c], t = (double)terms[g];
      const double tol = ((hops + 1) * u16 + (t + 3) * u32) * abs_[g * n + c] * 1.01 + 1e-300;
      const double tol64 = ((hops + 2) * u16 + (t + 4) * u32) * abs64[g * n + c] * 1.01 + 1e-300;
      const double e = fabs(got - ref[g * n + c]) / tol, e64 = fabs(got - ref64[g * n + c]) / tol64;
      if (!(e <= acc->worst_rounded)) acc->worst_rounded = e;
      if (!(e64 <= acc->worst64)) acc->worst64 = e64;
      if (abs64[g * n + c] > 0) {
        const double r = fabs(got - ref64[g * n + c]) / abs64[g * n + c];
        if (!(r <= acc->rel64)) acc->rel64 = r;
      }
    }
  }
done:
  free(ref);
  free(abs_);
  free(ref64);
  free(abs64);
  free(terms);
}

static void widen(shiro_dtype dt, double *d, const uint16_t *h, int64_t count) {
  for (int64_t i = 0; i < count; i++) d[i] = from16(dt, h[i]);
}

/* One type at width n: forward and transposed, every check of the header. */
static void run(shiro_plan *plan, const shiro_plan_info *in, const sc_csr *A, shiro_dtype dt, int64_t n, double *rel16,
                double *rel32) {
  const char *tn = dt == SHIRO_BFLOAT16 ? "bfloat16" : "float16";
  shiro_ctx *ctx = make(plan, dt, n), *c32 = make(plan, SHIRO_FLOAT32, n), *big = make(plan, dt, 8);
  if (!ctx || !c32 || !big) goto out;
  const int64_t nb = in->b_rows * n + 1, nc = in->c_rows * n + 1;
  uint16_t *B = calloc((size_t)nb, 2), *C = calloc((size_t)nc, 2), *C2 = calloc((size_t)nc, 2);
  uint16_t *Y = calloc((size_t)nc, 2), *X = calloc((size_t)nb, 2), *X2 = calloc((size_t)nb, 2);
  uint16_t *Bc = calloc((size_t)nb, 2), *Cc = calloc((size_t)nc, 2);
  float *Bf = calloc((size_t)nb, 4), *Cf = calloc((size_t)nc, 4), *Yf = calloc((size_t)nc, 4), *Xf = calloc((size_t)nb, 4);
  float *Bg = calloc((size_t)nb, 4), *Cg = calloc((size_t)nc, 4), *Yg = calloc((size_t)nc, 4), *Xg = calloc((size_t)nb, 4);
  double *Cd = calloc((size_t)nc, 8), *Xd = calloc((size_t)nb, 8), *Cfd = calloc((size_t)nc, 8), *Xfd = calloc((size_t)nb, 8);
  for (int64_t l = 0; l < in->b_rows; l++)
    for (int64_t c = 0; c < n; c++) {
      B[l * n + c] = to16(dt, b_val(in->b_global[l], c));
      Bf[l * n + c] = (float)from16(dt, B[l * n + c]);
      Bg[l * n + c] = (float)b_val(in->b_global[l], c);
      Bc[l + c * in->b_rows] = B[l * n + c];
    }
  for (int64_t l = 0; l < in->c_rows; l++)
    for (int64_t c = 0; c < n; c++) {
      Y[l * n + c] = to16(dt, y_val(in->c_global[l], c));
      Yf[l * n + c] = (float)from16(dt, Y[l * n + c]);
      Yg[l * n + c] = (float)y_val(in->c_global[l], c);
    }
  memset(C, 0xff, (size_t)nc * 2);
  memset(X, 0xff, (size_t)nb * 2);
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK, "rank %d spmm: %s", rank, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK, "rank %d transpose: %s", rank, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm(c32, Bf, Cf) == SHIRO_OK && shiro_spmm_transpose(c32, Yf, Xf) == SHIRO_OK, "rank %d float32: %s", rank,
         shiro_ctx_last_error(c32));
  EXPECT(shiro_spmm(c32, Bg, Cg) == SHIRO_OK && shiro_spmm_transpose(c32, Yg, Xg) == SHIRO_OK, "rank %d float32: %s", rank,
         shiro_ctx_last_error(c32));
  /* the same bits on a second call, and from the checked calls */
  EXPECT(shiro_spmm_checked(ctx, B, C2, n, dt) == SHIRO_OK && !memcmp(C, C2, (size_t)(nc - 1) * 2), "rank %d %s: checked call differs", rank, tn);
  EXPECT(shiro_spmm_transpose_checked(ctx, Y, X2, n, dt) == SHIRO_OK && !memcmp(X, X2, (size_t)(nb - 1) * 2),
         "rank %d %s: checked transposed call differs", rank, tn);
  shiro_status st0;
  /* shiro_sddmm takes float32 and float64 contexts only: refused on every rank, naming why */
  st0 = shiro_sddmm(ctx, B, Y, X2, n, dt);
  EXPECT(st0 == SHIRO_ERR_UNSUPPORTED && strstr(shiro_ctx_last_error(ctx), "16-bit"), "rank %d %s: sddmm: %d %s", rank, tn,
         (int)st0, shiro_ctx_last_error(ctx));
  const shiro_dtype other = dt == SHIRO_BFLOAT16 ? SHIRO_FLOAT16 : SHIRO_BFLOAT16;
  shiro_status st = shiro_spmm_checked(ctx, B, C2, n, rank == size - 1 ? other : dt);
  EXPECT(st == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "the context was made for"), "rank %d: another dtype: %d %s",
         rank, (int)st, shiro_ctx_last_error(ctx));
  /* width n on a context made for 8: the bits of the context made for n */
  if (n <= 8) {
    memset(C2, 0, (size_t)nc * 2);
    memset(X2, 0, (size_t)nb * 2);
    EXPECT(shiro_spmm_n(big, B, C2, n) == SHIRO_OK && !memcmp(C, C2, (size_t)(nc - 1) * 2), "rank %d %s: width %lld differs",
           rank, tn, (long long)n);
    EXPECT(shiro_spmm_transpose_n(big, Y, X2, n) == SHIRO_OK && !memcmp(X, X2, (size_t)(nb - 1) * 2),
           "rank %d %s: transposed width %lld differs", rank, tn, (long long)n);
  }
  /* column-major B and C: the bits of row-major */
  EXPECT(shiro_spmm_layout(ctx, SHIRO_COL_MAJOR, Bc, in->b_rows > 0 ? in->b_rows : 1, Cc, in->c_rows > 0 ? in->c_rows : 1) == SHIRO_OK,
         "rank %d layout: %s", rank, shiro_ctx_last_error(ctx));
  for (int64_t l = 0; l < in->c_rows; l++)
    for (int64_t c = 0; c < n; c++)
      if (Cc[l + c * in->c_rows] != C[l * n + c]) {
        EXPECT(0, "rank %d %s: column-major C(%lld, %lld) differs", rank, tn, (long long)l, (long long)c);
        l = in->c_rows;
        break;
      }
  /* accuracy, and the float32 context's rounded result */
  widen(dt, Cd, C, nc - 1);
  widen(dt, Xd, X, nb - 1);
  for (int64_t i = 0; i < nc - 1; i++) Cfd[i] = Cg[i]; /* float32 on B itself: the accuracy to compare with */
  for (int64_t i = 0; i < nb - 1; i++) Xfd[i] = Xg[i];
  accuracy af = {0}, at = {0}, f32f = {0}, f32t = {0};
  check_values(A, in, 1, 0, dt, n, Cd, &af);
  check_values(A, in, 0, 0, dt, n, Xd, &at);
  check_values(A, in, 1, 0, dt, n, Cfd, &f32f);
  check_values(A, in, 0, 0, dt, n, Xfd, &f32t);
  EXPECT(af.worst_rounded <= 1 && af.worst64 <= 1, "rank %d %s N=%lld A·B: error/bound %.3g (rounded inputs), %.3g (float64)",
         rank, tn, (long long)n, af.worst_rounded, af.worst64);
  EXPECT(at.worst_rounded <= 1 && at.worst64 <= 1, "rank %d %s N=%lld Aᵀ·Y: error/bound %.3g (rounded inputs), %.3g (float64)",
         rank, tn, (long long)n, at.worst_rounded, at.worst64);
  int same_c = 1, same_x = 1;
  for (int64_t i = 0; i < nc - 1; i++) same_c &= C[i] == to16(dt, Cf[i]);
  for (int64_t i = 0; i < nb - 1; i++) same_x &= X[i] == to16(dt, Xf[i]);
  if (exact) EXPECT(same_c, "rank %d %s N=%lld: C is not the float32 context's C rounded", rank, tn, (long long)n);
  if (exact && size == 1) EXPECT(same_x, "rank %d %s N=%lld: X is not the float32 context's X rounded", rank, tn, (long long)n);
  *rel16 = fmax(*rel16, fmax(af.rel64, at.rel64));
  *rel32 = fmax(*rel32, fmax(f32f.rel64, f32t.rel64));
  /* new values: A'·B̃ */
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, NULL) == SHIRO_OK, "rank %d local matrix", rank);
  int64_t *rp = calloc((size_t)in->c_rows + 1, sizeof *rp), *ci = calloc((size_t)nnz + 1, sizeof *ci);
  double *v = calloc((size_t)nnz + 1, sizeof *v);
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, rp, ci, v, NULL) == SHIRO_OK, "rank %d local matrix", rank);
  for (int64_t l = 0; l < in->c_rows; l++)
    for (int64_t t = rp[l]; t < rp[l + 1]; t++) v[t] = new_val(in->c_global[l], ci[t], v[t]);
  EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "rank %d set_values: %s", rank, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK && shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK, "rank %d after set_values: %s", rank,
         shiro_ctx_last_error(ctx));
  widen(dt, Cd, C, nc - 1);
  widen(dt, Xd, X, nb - 1);
  accuracy nf = {0}, nt = {0};
  check_values(A, in, 1, 1, dt, n, Cd, &nf);
  check_values(A, in, 0, 1, dt, n, Xd, &nt);
  EXPECT(nf.worst_rounded <= 1 && nt.worst_rounded <= 1 && nf.worst64 <= 1 && nt.worst64 <= 1,
         "rank %d %s N=%lld after set_values: error/bound %.3g %.3g %.3g %.3g", rank, tn, (long long)n, nf.worst_rounded,
         nt.worst_rounded, nf.worst64, nt.worst64);
  double worst = fmax(fmax(af.worst64, at.worst64), fmax(nf.worst64, nt.worst64)), all = 0;
  if (!(worst <= 1e300)) worst = 1e300;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%s N=%lld: max error/bound %.3g\n", tn, (long long)n, all);
  free(rp);
  free(ci);
  free(v);
  free(B), free(C), free(C2), free(Y), free(X), free(X2), free(Bc), free(Cc);
  free(Bf), free(Cf), free(Yf), free(Xf), free(Bg), free(Cg), free(Yg), free(Xg), free(Cd), free(Xd), free(Cfd), free(Xfd);
out:
  shiro_ctx_destroy(&ctx);
  shiro_ctx_destroy(&c32);
  shiro_ctx_destroy(&big);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R test_half PLAN MATRIX HOPS EXACT [N,...]\n");
    MPI_Finalize();
    return 2;
  }
  hops = atoi(argv[3]);
  exact = atoi(argv[4]);
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  sc_csr *A = NULL;
  shiro_plan_info in;
  int ok = shiro_plan_open(argv[1], rank, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK &&
      mm_read(argv[2], &A, NULL, &err) == SHIRO_OK;
  EXPECT(ok, "rank %d: %s", rank, err.message);
  double rel[2][2] = {{0}}; /* [bf16, f16][16-bit, float32] */
  if (ok) {
    const char *ns = argc > 5 ? argv[5] : "1,7";
    for (const char *p = ns; *p;) {
      int64_t n = strtoll(p, (char **)&p, 10);
      run(plan, &in, A, SHIRO_BFLOAT16, n, &rel[0][0], &rel[0][1]);
      run(plan, &in, A, SHIRO_FLOAT16, n, &rel[1][0], &rel[1][1]);
      if (*p == ',') p++;
    }
  }
  double all[4];
  MPI_Allreduce(rel, all, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("max |err| / (|A|·|B|) against float64: bfloat16 %.3g (float32 %.3g), float16 %.3g (float32 %.3g)\n", all[0],
           all[1], all[2], all[3]);
  sc_csr_free(A);
  shiro_plan_close(&plan);
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
