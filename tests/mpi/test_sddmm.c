/* test_sddmm.c — shiro_sddmm on every rank: ⟨G_i, B_j⟩ for each local nonzero, against a serial reference.
 *
 * usage: mpirun -np R test_sddmm PLAN [N,...]
 *
 * Every rank knows B and G everywhere (deterministic functions of global row and column, not
 * integers, so that a sum in another order would show), so it computes the reference for each of
 * its nonzeros (shiro_plan_get_local_matrix's order: global row and column) serially: the values
 * of the context's type widened to double, multiplied and summed in double in shiro_sddmm's
 * documented order (8 interleaved partial sums, combined pairwise). For
 * float and double, on one context made for the largest N and called at each N: the result must
 * be bit for bit the reference (shiro_sddmm moves the rows without arithmetic); the same bits again after a shiro_spmm and a
 * shiro_spmm_transpose on the context (which reuse its buffers) and after set_values (the
 * gradient does not depend on A's values). Misuse, on one rank only, every rank told:
 * grad NULL, another n, another dtype. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiro.h"
#include "test_util.h"

static int rank, nranks;

/* A value of B (kind 0) or G (kind 1) at global row g, column c: fractions with rounding in any sum. */
static double value(int kind, int64_t g, int64_t c) {
  uint64_t h = (uint64_t)(g * 1000003 + c * 7919 + kind * 104729 + 17);
  h ^= h >> 13;
  h *= 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return ((double)(h % 2001) - 1000.0) / 7.0;
}

static double rounded(double x, shiro_dtype dt) { return dt == SHIRO_FLOAT32 ? (double)(float)x : x; }

static void put(void *a, int64_t i, shiro_dtype dt, double v) {
  if (dt == SHIRO_FLOAT32) ((float *)a)[i] = (float)v;
  else ((double *)a)[i] = v;
}

static double get(const void *a, int64_t i, shiro_dtype dt) {
  return dt == SHIRO_FLOAT32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

/* Compares grad with the reference at width n; returns the number of entries that differ. */
static int64_t compare(const shiro_plan_info *in, const int64_t *rp, const int64_t *cj, const void *grad, shiro_dtype dt,
                       int64_t n, const char *what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < in->c_rows; i++)
    for (int64_t t = rp[i]; t < rp[i + 1]; t++) {
      double s[8] = {0}; /* shiro_sddmm's order: column c into sum c mod 8, then pairwise */
      for (int64_t c = 0; c < n; c++)
        s[c % 8] += rounded(value(1, in->c_global[i], c), dt) * rounded(value(0, cj[t], c), dt);
      const double sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
      const double want = rounded(sum, dt), got = get(grad, t, dt);
      if (got != want && bad++ < 3)
        fprintf(stderr, "rank %d %s: nonzero %lld (%lld, %lld): %.17g, expected %.17g\n", rank, what, (long long)t,
                (long long)in->c_global[i], (long long)cj[t], got, want);
    }
  return bad;
}

static void run(shiro_plan *plan, const shiro_plan_info *in, shiro_dtype dt, const int64_t *ns, int nn, int64_t N) {
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  const char *tname = dt == SHIRO_FLOAT32 ? "float" : "double";
  shiro_error err = {{0}};
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, &err) == SHIRO_OK, "rank %d: %s", rank, err.message);
  int64_t *rp = malloc((size_t)(in->c_rows + 1) * sizeof *rp), *cj = malloc((size_t)(nnz + 1) * sizeof *cj);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  void *B = malloc((size_t)(in->b_rows * N + 1) * esz), *G = malloc((size_t)(in->c_rows * N + 1) * esz);
  void *C = malloc((size_t)(in->c_rows * N + 1) * esz), *X = malloc((size_t)(in->b_rows * N + 1) * esz);
  void *g1 = malloc((size_t)(nnz + 1) * esz), *g2 = malloc((size_t)(nnz + 1) * esz);
  if (!rp || !cj || !v || !B || !G || !C || !X || !g1 || !g2) {
    EXPECT(0, "rank %d: out of memory", rank);
    goto done;
  }
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, rp, cj, v, &err) == SHIRO_OK, "rank %d: %s", rank, err.message);
  shiro_ctx_options o = shiro_ctx_options_default();
  o.n = N;
  o.dtype = dt;
  shiro_ctx *ctx = NULL;
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "rank %d create: %s", rank, err.message);
  if (!ctx) goto done;
  for (int k = 0; k < nn; k++) {
    const int64_t n = ns[k];
    char what[64];
    snprintf(what, sizeof what, "%s n=%lld N=%lld", tname, (long long)n, (long long)N);
    for (int64_t l = 0; l < in->b_rows; l++)
      for (int64_t c = 0; c < n; c++) put(B, l * n + c, dt, value(0, in->b_global[l], c));
    for (int64_t l = 0; l < in->c_rows; l++)
      for (int64_t c = 0; c < n; c++) put(G, l * n + c, dt, value(1, in->c_global[l], c));
    memset(g1, 0xff, (size_t)(nnz + 1) * esz); /* NaN poison: every value must be written */
    shiro_status st = shiro_sddmm(ctx, B, G, g1, n, dt);
    EXPECT(st == SHIRO_OK, "rank %d %s sddmm: %s", rank, what, shiro_ctx_last_error(ctx));
    if (st != SHIRO_OK) continue;
    const int64_t bad = compare(in, rp, cj, g1, dt, n, what);
    EXPECT(bad == 0, "rank %d %s: %lld of %lld nonzeros differ from the reference", rank, what, (long long)bad, (long long)nnz);
    /* the context's buffers reused by other calls, new values: the same bits again */
    EXPECT(shiro_spmm_n(ctx, B, C, n) == SHIRO_OK, "rank %d %s spmm: %s", rank, what, shiro_ctx_last_error(ctx));
    EXPECT(shiro_spmm_transpose(ctx, C, X) == SHIRO_OK, "rank %d %s transpose: %s", rank, what, shiro_ctx_last_error(ctx));
    for (int64_t t = 0; t < nnz; t++) v[t] = 0.5 + (double)(t % 5);
    EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "rank %d set_values: %s", rank, shiro_ctx_last_error(ctx));
    memset(g2, 0xff, (size_t)(nnz + 1) * esz);
    EXPECT(shiro_sddmm(ctx, B, G, g2, n, dt) == SHIRO_OK, "rank %d %s sddmm again: %s", rank, what, shiro_ctx_last_error(ctx));
    EXPECT(!memcmp(g1, g2, (size_t)nnz * esz), "rank %d %s: a second call differs", rank, what);
  }
  /* misuse on one rank (the last), every rank told, nothing computed */
  if (nranks > 1) {
    const int last = nranks - 1;
    int64_t nnz_last = nnz;
    MPI_Bcast(&nnz_last, 1, MPI_INT64_T, last, MPI_COMM_WORLD);
    shiro_status st;
    if (nnz_last > 0) {
      st = shiro_sddmm(ctx, B, G, rank == last ? NULL : g1, ns[0], dt);
      EXPECT(st == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "NULL grad") &&
                 strstr(shiro_ctx_last_error(ctx), "nothing was computed"),
             "rank %d: grad NULL on rank %d: %d '%s'", rank, last, (int)st, shiro_ctx_last_error(ctx));
    }
    if (N > 1) {
      st = shiro_sddmm(ctx, B, G, g1, rank == last ? (ns[0] == 1 ? 2 : 1) : ns[0], dt);
      EXPECT(st == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "different n"), "rank %d: another n: %d '%s'", rank,
             (int)st, shiro_ctx_last_error(ctx));
    }
    st = shiro_sddmm(ctx, B, G, g1, ns[0], rank == last ? (dt == SHIRO_FLOAT32 ? SHIRO_FLOAT64 : SHIRO_FLOAT32) : dt);
    EXPECT(st == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "context was made for"), "rank %d: another dtype: %d '%s'",
           rank, (int)st, shiro_ctx_last_error(ctx));
    /* still works */
    st = shiro_sddmm(ctx, B, G, g1, ns[nn - 1], dt);
    EXPECT(st == SHIRO_OK && compare(in, rp, cj, g1, dt, ns[nn - 1], "after misuse") == 0, "rank %d after misuse: %s", rank,
           shiro_ctx_last_error(ctx));
  }
  EXPECT(shiro_sddmm(NULL, B, G, g1, 1, dt) == SHIRO_ERR_ARG, "a NULL context accepted");
  shiro_ctx_destroy(&ctx);
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%s N=%lld: %s\n", tname, (long long)N, fails ? "FAILED" : "ok");
done:
  free(rp);
  free(cj);
  free(v);
  free(B);
  free(G);
  free(C);
  free(X);
  free(g1);
  free(g2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R test_sddmm PLAN [N,...]\n");
    MPI_Finalize();
    return 2;
  }
  int64_t ns[16], N = 0;
  int nn = 0;
  for (const char *p = argc > 2 ? argv[2] : "1,7"; *p && nn < 16;) {
    ns[nn] = strtoll(p, (char **)&p, 10);
    if (ns[nn] > N) N = ns[nn];
    nn++;
    if (*p == ',') p++;
  }
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  shiro_plan_info in;
  int ok = shiro_plan_open(argv[1], rank, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK;
  EXPECT(ok, "rank %d: %s", rank, err.message);
  if (ok) {
    run(plan, &in, SHIRO_FLOAT64, ns, nn, N);
    run(plan, &in, SHIRO_FLOAT32, ns, nn, N);
  }
  shiro_plan_close(&plan);
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
