/* shiro-spmm — the example application: replays a plan under mpirun.
 *
 *   mpirun -np R shiro-spmm PLAN.h5 --n N[,N...] --dtype float|double[,...]
 *                           --iters K [--check MATRIX.mtx]
 *
 * Each rank fills its B rows with b(g, c) (a deterministic function of the
 * global row g and column c), runs K calls of shiro_spmm, and rank 0 prints
 * the time per call and the bytes moved. With --check, every rank computes
 * its rows of C = A·B serially from the Matrix Market file and compares:
 *
 *   |C - C_ref| <= (nnz_i + 3) · u · (|A|·|B|)_ic   for every entry,
 *
 * u = 2^-24 (float) or 2^-53 (double), nnz_i the nonzeros of row i: the
 * classical bound for a sum of nnz_i products in any order, plus the rounding
 * of A's values to the value type. A violation exits with status 1. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mm_read.h"
#include "shiro.h"

static const char *prog = "shiro-spmm";

#define MAX_LIST 16

typedef struct options {
  const char *plan, *check;
  int64_t n[MAX_LIST];
  int nn;
  shiro_dtype dt[MAX_LIST];
  int ndt;
  int64_t iters, warmup;
} options;

/* The value of B at global row g, column c: ±(1 + h/256), exact in float and double. */
static double b_value(int64_t g, int64_t c) {
  uint64_t h = (uint64_t)g * 0x9E3779B97F4A7C15ull + (uint64_t)c * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  double v = 1.0 + (double)(h & 255) / 256.0;
  return (h & 256) ? v : -v;
}

static int parse_list(const char *opt, const char *text, options *o, int is_n) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if ((is_n ? o->nn : o->ndt) >= MAX_LIST) { fprintf(stderr, "%s: %s: at most %d values\n", prog, opt, MAX_LIST); return 0; }
    if (is_n) {
      if (!cli_int(prog, opt, tok, 1, 1 << 20, &o->n[o->nn])) return 0;
      o->nn++;
    } else if (!strcmp(tok, "float") || !strcmp(tok, "float32")) o->dt[o->ndt++] = SHIRO_FLOAT32;
    else if (!strcmp(tok, "double") || !strcmp(tok, "float64")) o->dt[o->ndt++] = SHIRO_FLOAT64;
    else { fprintf(stderr, "%s: %s: expected float or double, found '%s'\n", prog, opt, tok); return 0; }
  }
  return 1;
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->iters = 10;
  o->warmup = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "--n")) { if (!(v = cli_value(prog, argc, argv, &i)) || !parse_list(a, v, o, 1)) return 0; }
    else if (!strcmp(a, "--dtype")) { if (!(v = cli_value(prog, argc, argv, &i)) || !parse_list(a, v, o, 0)) return 0; }
    else if (!strcmp(a, "--iters")) { if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, 1, 1000000, &o->iters)) return 0; }
    else if (!strcmp(a, "--warmup")) { if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, 0, 1000000, &o->warmup)) return 0; }
    else if (!strcmp(a, "--check")) { if (!(o->check = cli_value(prog, argc, argv, &i))) return 0; }
    else if (a[0] == '-') { fprintf(stderr, "%s: unknown option '%s'\n", prog, a); return 0; }
    else if (!o->plan) o->plan = a;
    else { fprintf(stderr, "%s: unexpected argument '%s'\n", prog, a); return 0; }
  }
  if (!o->plan) {
    fprintf(stderr, "usage: mpirun -np R %s PLAN.h5 --n N[,N...] --dtype float|double[,...] --iters K [--check MATRIX.mtx]\n", prog);
    return 0;
  }
  if (!o->nn) o->n[o->nn++] = 32;
  if (!o->ndt) o->dt[o->ndt++] = SHIRO_FLOAT64;
  return 1;
}

/* Worst (|C - ref| / bound) over this rank's rows; > 1 means the check failed. */
static double check_rows(const sc_csr *A, const shiro_plan_info *in, shiro_dtype dt, int64_t n, const void *C) {
  double u = dt == SHIRO_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53), worst = 0;
  for (int64_t i = 0; i < in->c_rows; i++) {
    int64_t g = in->c_global ? in->c_global[i] : in->c_first + i, len = A->Ap[g + 1] - A->Ap[g];
    for (int64_t c = 0; c < n; c++) {
      double ref = 0, bound = 0;
      for (int64_t t = A->Ap[g]; t < A->Ap[g + 1]; t++) {
        double b = b_value(A->Aj[t], c);
        ref += A->Ax[t] * b;
        bound += fabs(A->Ax[t] * b);
      }
      double got = dt == SHIRO_FLOAT32 ? (double)((const float *)C)[i * n + c] : ((const double *)C)[i * n + c];
      double tol = (double)(len + 3) * u * bound * 1.01 + 1e-300;  /* 1.01: the reference's own rounding */
      double r = fabs(got - ref) / tol;
      if (!(r <= worst)) worst = r;  /* NaN propagates as a failure */
    }
  }
  return worst;
}

/* One (dtype, N) configuration: create, fill, run, time, check. Returns 0 if fine. */
static int run_one(shiro_plan *plan, const shiro_plan_info *in, const options *o, shiro_dtype dt, int64_t n,
                   const sc_csr *A, int rank) {
  shiro_ctx_options co = shiro_ctx_options_default();
  co.dtype = dt;
  co.n = n;
  shiro_ctx *ctx = NULL;
  shiro_error err = {{0}};
  size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &co, &ctx, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    return 1;
  }
  void *B = malloc((size_t)(in->b_rows ? in->b_rows : 1) * (size_t)n * esz);
  void *C = malloc((size_t)(in->c_rows ? in->c_rows : 1) * (size_t)n * esz);
  int bad = !B || !C;
  for (int64_t i = 0; !bad && i < in->b_rows; i++)
    for (int64_t c = 0; c < n; c++) {
      double v = b_value(in->b_global ? in->b_global[i] : in->b_first + i, c);
      if (dt == SHIRO_FLOAT32) ((float *)B)[i * n + c] = (float)v; else ((double *)B)[i * n + c] = v;
    }
  double t = 0;
  for (int64_t it = 0; !bad && it < o->warmup + o->iters; it++) {
    if (it == o->warmup) { MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime(); }
    if (shiro_spmm(ctx, B, C) != SHIRO_OK) {
      fprintf(stderr, "%s: rank %d: %s\n", prog, rank, shiro_ctx_last_error(ctx));
      bad = 1;
    }
  }
  t = MPI_Wtime() - t;
  double worst = (!bad && A) ? check_rows(A, in, dt, n, C) : 0, tmax = 0, wmax = 0;
  shiro_traffic tr = {0};
  if (shiro_ctx_get_traffic(ctx, &tr) != SHIRO_OK) memset(&tr, 0, sizeof tr);
  int64_t mine[2] = {tr.bytes_sent, tr.inter_node_rows_sent * n * (int64_t)esz}, all[2] = {0, 0};
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&worst, &wmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  int fail = anybad || !(wmax <= 1.0);
  if (rank == 0) {
    printf("shiro-spmm: %s, %d ranks, %s, N=%lld %s: %.3f ms/call over %lld calls, %.3f MB moved/call (%.3f MB inter-node)",
           o->plan, in->ranks, in->strategy, (long long)n, dt == SHIRO_FLOAT32 ? "float" : "double",
           1e3 * tmax / (double)o->iters, (long long)o->iters, (double)all[0] / 1e6, (double)all[1] / 1e6);
    if (A) printf("; check: max error/bound %.3g %s", wmax, fail ? "FAILED" : "ok");
    printf("\n");
  }
  free(B);
  free(C);
  shiro_ctx_destroy(&ctx);
  return fail;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, rc = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  options o;
  if (!parse(argc, argv, &o)) {
    MPI_Finalize();
    return 2;
  }
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  sc_csr *A = NULL;
  shiro_plan_info in;
  int bad = 0, anybad = 0;
  if (shiro_plan_open(o.plan, rank, &plan, &err) != SHIRO_OK || shiro_plan_get_info(plan, &in) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    bad = 1;
  } else if (o.check && mm_read(o.check, &A, NULL, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    bad = 1;
  } else if (A && (A->m != in.m || A->k != in.k || A->nnz != in.nnz)) {
    fprintf(stderr, "%s: rank %d: --check %s is %lld x %lld with %lld nonzeros, the plan is for %lld x %lld with %lld\n",
            prog, rank, o.check, (long long)A->m, (long long)A->k, (long long)A->nnz, (long long)in.m, (long long)in.k,
            (long long)in.nnz);
    bad = 1;
  }
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anybad) rc = 1;
  for (int d = 0; !rc && d < o.ndt; d++)
    for (int j = 0; !rc && j < o.nn; j++) rc = run_one(plan, &in, &o, o.dt[d], o.n[j], A, rank);
  sc_csr_free(A);
  shiro_plan_close(&plan);
  MPI_Finalize();
  return rc;
}
