/* shiro-bench-gpu — benchmark of the CUDA backend on one GPU.
 *
 *   shiro-bench-gpu (MATRIX.mtx[.gz] | --rmat SCALE[,EDGE_FACTOR[,SEED]]) [--plan PLAN.h5]
 *                   [--n 32,64,128] [--dtype float,double] [--reps 20] [--warmup 3]
 *                   [--micro-rows R] [--transport auto|nccl|mpi] [--no-plain] [--no-micro]
 *   mpirun -np R shiro-bench-gpu --plan PLAN.h5 [MATRIX] ...   (an R-rank plan, every rank on its GPU)
 *
 * Without --plan the program is the one `shiro-plan --ranks 1` makes, built
 * here in memory from the matrix: START 0, LOCAL (C = A·B), WAIT 0. For each
 * dtype and N it measures
 *   - the replay: the time per call of the backend's spmm (host clock around
 *     the synchronous call; median of --reps after --warmup) and its
 *     breakdown per op (CUDA events between ops on the compute stream);
 *   - a plain cuSPARSE SpMM of the whole CSR (one rank, with a matrix) with
 *     CSR_ALG3, CSR_ALG2 and the default algorithm; TFLOP/s = 2 · nnz · N /
 *     time; for one rank it also compares the replay's C with the plain
 *     product of the replay's algorithm (cuda_ops_spmm_alg) bit for bit;
 *   - the own kernels on --micro-rows rows (default max(m, 2^22)): gather of a
 *     random 25% of the rows and the deterministic scatter-add (1 and 4 rows
 *     summed per destination row), in GB/s.
 * It prints a table, then (one-rank replays) the targets of the device run
 * against the fastest plain algorithm, with PASS/MISS.
 * Exits 77 without a CUDA device. The benchmark is white-box: it builds the
 * backend's sources in (runtime/cuda) and drives a context directly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cusparse.h>
#include <mpi.h>

#include "bench.h"
#include "cuda_backend.h"
#include "cuda_ops.h"
#include "internal.h"
#include "mm_read.h"
#include "plan_file.h"

static const char *prog = "shiro-bench-gpu";

#define MAX_LIST 8

typedef struct options {
  const char *matrix, *plan;
  int rmat_scale, rmat_ef;
  uint64_t rmat_seed;
  int64_t n[MAX_LIST];
  int nn;
  int dt[MAX_LIST]; /* 1 double, 0 float */
  int ndt;
  int reps, warmup;
  int64_t micro_rows;
  shiro_transport transport;
  int plain, micro;
} options;

/* One (dtype, N) row of the table. */
typedef struct result {
  int is_double;
  int64_t n;
  double replay_ms, local_ms; /* whole call (host), the LOCAL op (events) */
  bench_plain alg3, alg2, dflt; /* plain cuSPARSE of the whole CSR: CSR_ALG3, CSR_ALG2, default */
  int bits_equal; /* -1 unknown, 0/1: replay C vs plain C of the replay's algorithm */
  bench_bw bw;
  int have_bw;
} result;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (!s[0] || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->reps = 20;
  o->warmup = 3;
  o->plain = o->micro = 1;
  o->transport = SHIRO_TRANSPORT_AUTO;
  o->rmat_ef = 16;
  o->rmat_seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t x = 0;
    if (!strcmp(a, "--no-plain")) {
      o->plain = 0;
      continue;
    }
    if (!strcmp(a, "--no-micro")) {
      o->micro = 0;
      continue;
    }
    if (a[0] != '-') {
      if (o->matrix) {
        fprintf(stderr, "%s: one matrix only ('%s')\n", prog, a);
        return 0;
      }
      o->matrix = a;
      continue;
    }
    if (!v) {
      fprintf(stderr, "%s: %s needs a value\n", prog, a);
      return 0;
    }
    i++;
    if (!strcmp(a, "--plan")) o->plan = v;
    else if (!strcmp(a, "--rmat")) {
      long long sc = 0, ef = 16, seed = 1;
      int k = sscanf(v, "%lld,%lld,%lld", &sc, &ef, &seed);
      if (k < 1 || sc < 1 || sc > 30 || ef < 1 || ef > 1024) {
        fprintf(stderr, "%s: --rmat: expected SCALE[,EF[,SEED]]\n", prog);
        return 0;
      }
      o->rmat_scale = (int)sc;
      o->rmat_ef = (int)ef;
      o->rmat_seed = (uint64_t)seed;
    } else if (!strcmp(a, "--n") || !strcmp(a, "--dtype")) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (a[2] == 'n') {
          if (o->nn >= MAX_LIST || !parse_int(t, 1, 1 << 16, &x)) {
            fprintf(stderr, "%s: --n: bad value '%s'\n", prog, t);
            return 0;
          }
          o->n[o->nn++] = x;
        } else {
          if (o->ndt >= MAX_LIST || (strcmp(t, "float") && strcmp(t, "double"))) {
            fprintf(stderr, "%s: --dtype: expected float or double, found '%s'\n", prog, t);
            return 0;
          }
          o->dt[o->ndt++] = !strcmp(t, "double");
        }
      }
    } else if (!strcmp(a, "--reps")) {
      if (!parse_int(v, 1, 100000, &x)) {
        fprintf(stderr, "%s: --reps: bad value\n", prog);
        return 0;
      }
      o->reps = (int)x;
    } else if (!strcmp(a, "--warmup")) {
      if (!parse_int(v, 0, 100000, &x)) {
        fprintf(stderr, "%s: --warmup: bad value\n", prog);
        return 0;
      }
      o->warmup = (int)x;
    } else if (!strcmp(a, "--micro-rows")) {
      if (!parse_int(v, 16, (int64_t)1 << 31, &x)) {
        fprintf(stderr, "%s: --micro-rows: bad value\n", prog);
        return 0;
      }
      o->micro_rows = x;
    } else if (!strcmp(a, "--transport")) {
      if (!strcmp(v, "auto")) o->transport = SHIRO_TRANSPORT_AUTO;
      else if (!strcmp(v, "nccl")) o->transport = SHIRO_TRANSPORT_NCCL;
      else if (!strcmp(v, "mpi")) o->transport = SHIRO_TRANSPORT_MPI;
      else {
        fprintf(stderr, "%s: --transport: expected auto, nccl or mpi\n", prog);
        return 0;
      }
    } else {
      fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
      return 0;
    }
  }
  if (!o->matrix && !o->rmat_scale && !o->plan) {
    fprintf(stderr, "usage: %s (MATRIX.mtx | --rmat SCALE[,EF[,SEED]]) [--plan PLAN.h5] [--n 32,64,128] [--dtype float,double]\n"
                    "       [--reps 20] [--warmup 3] [--micro-rows R] [--transport auto|nccl|mpi] [--no-plain] [--no-micro]\n",
            prog);
    return 0;
  }
  if (!o->nn) {
    o->n[0] = 32;
    o->n[1] = 64;
    o->n[2] = 128;
    o->nn = 3;
  }
  if (!o->ndt) {
    o->dt[0] = 0;
    o->dt[1] = 1;
    o->ndt = 2;
  }
  return 1;
}

/* The matrix as a CSR with 32-bit columns (from Matrix Market or R-MAT). */
static int load_matrix(const options *o, bench_csr *A, char *name, size_t name_len) {
  memset(A, 0, sizeof *A);
  if (o->rmat_scale) {
    snprintf(name, name_len, "rmat-%d-ef%d-seed%llu (in memory)", o->rmat_scale, o->rmat_ef, (unsigned long long)o->rmat_seed);
    return bench_rmat(o->rmat_scale, o->rmat_ef, o->rmat_seed, A);
  }
  if (!o->matrix) return 1;
  shiro_error err = {{0}};
  sc_csr *M = NULL;
  snprintf(name, name_len, "%s", o->matrix);
  if (mm_read(o->matrix, &M, NULL, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return 1;
  }
  int rc = 1;
  if (M->nnz > INT32_MAX || M->k > INT32_MAX) {
    fprintf(stderr, "%s: the matrix is too large for 32-bit indices\n", prog);
    goto done;
  }
  A->m = M->m;
  A->k = M->k;
  A->nnz = M->nnz;
  A->Ap = malloc((size_t)(M->m + 1) * sizeof *A->Ap);
  A->Aj = malloc((size_t)(M->nnz ? M->nnz : 1) * sizeof *A->Aj);
  A->Ax = malloc((size_t)(M->nnz ? M->nnz : 1) * sizeof *A->Ax);
  if (!A->Ap || !A->Aj || !A->Ax) goto done;
  memcpy(A->Ap, M->Ap, (size_t)(M->m + 1) * sizeof *A->Ap);
  for (int64_t e = 0; e < M->nnz; e++) A->Aj[e] = (int32_t)M->Aj[e];
  memcpy(A->Ax, M->Ax, (size_t)M->nnz * sizeof *A->Ax);
  rc = 0;
done:
  sc_csr_free(M);
  if (rc) bench_csr_free(A);
  return rc;
}

/* The one-rank program of A, as shiro-plan --ranks 1 makes it (arrays borrowed from A, except ops/ptr). */
static int one_rank_program(const bench_csr *A, prog_meta *meta, prog_rank *pr, int64_t **ops_out) {
  int64_t *ops = calloc(3 * PROG_OP_WIDTH, sizeof *ops);
  if (!ops) return 1;
  memset(meta, 0, sizeof *meta);
  memset(pr, 0, sizeof *pr);
  meta->ranks = 1;
  meta->gpus_per_node = 1;
  meta->m = A->m;
  meta->k = A->k;
  meta->nnz = A->nnz;
  snprintf(meta->strategy, sizeof meta->strategy, "joint");
  snprintf(meta->partition, sizeof meta->partition, "block");
  ops[0 * PROG_OP_WIDTH + OPF_KIND] = PROG_OP_START;
  ops[0 * PROG_OP_WIDTH + OPF_ROWS_OFF] = -1;
  int64_t *l = ops + 1 * PROG_OP_WIDTH;
  l[OPF_KIND] = PROG_OP_MUL;
  l[OPF_DST_BUF] = PROG_BUF_C;
  l[OPF_SRC_BUF] = PROG_BUF_B;
  l[OPF_NROWS] = A->m;
  l[OPF_PTR_OFF] = 0;
  l[OPF_ROWS_OFF] = -1;
  l[OPF_HAS_VAL] = 1;
  l[OPF_TAG] = PROG_TAG_LOCAL;
  ops[2 * PROG_OP_WIDTH + OPF_KIND] = PROG_OP_WAIT;
  ops[2 * PROG_OP_WIDTH + OPF_ROWS_OFF] = -1;
  pr->nstages = 1;
  pr->c_rows = A->m;
  pr->b_rows = A->k;
  pr->nops = 3;
  pr->ops = ops;
  pr->nptr = A->m + 1;
  pr->ptr = A->Ap;
  pr->ncol = pr->nval = A->nnz;
  pr->col = A->Aj;
  pr->val = A->Ax;
  *ops_out = ops;
  return 0;
}

static const char *tag_name(int64_t tag) {
  static const char *names[] = {"-", "GATHER_B", "PARTIAL_C", "LOCAL", "REMOTE_B", "ADD_C", "FORWARD_B", "AGGREGATE_C"};
  return tag >= 0 && tag < 8 ? names[tag] : "?";
}

/* Replay timings of one (dtype, N) on an existing plan: fills r->replay_ms, r->local_ms; prints the breakdown (rank 0). */
static int run_replay(shiro_plan *plan, MPI_Comm comm, const options *o, result *r, void **C_keep, char *why, size_t why_len) {
  int rank = 0, rc = 1;
  MPI_Comm_rank(comm, &rank);
  const prog_rank *pr = &plan->pr;
  const size_t esz = r->is_double ? 8 : 4;
  shiro_ctx *ctx = NULL;
  shiro_error err = {{0}};
  void *dB = NULL, *dC = NULL;
  double *call = calloc((size_t)o->reps, sizeof *call), *opv = calloc((size_t)o->reps * (size_t)(pr->nops + 1), sizeof *opv);
  float *op_ms = calloc((size_t)pr->nops + 1, sizeof *op_ms);
  shiro_ctx_options opts = shiro_ctx_options_default();
  opts.backend = SHIRO_BACKEND_CUDA;
  opts.dtype = r->is_double ? SHIRO_FLOAT64 : SHIRO_FLOAT32;
  opts.n = r->n;
  opts.transport = o->transport;
  if (!call || !opv || !op_ms) {
    snprintf(why, why_len, "out of memory");
    goto done;
  }
  if (shiro_ctx_create(plan, comm, &opts, &ctx, &err) != SHIRO_OK) {
    snprintf(why, why_len, "%s", err.message);
    goto done;
  }
  if (cudaMalloc(&dB, (size_t)(pr->b_rows ? pr->b_rows : 1) * (size_t)r->n * esz) != cudaSuccess ||
      cudaMalloc(&dC, (size_t)(pr->c_rows ? pr->c_rows : 1) * (size_t)r->n * esz) != cudaSuccess ||
      bench_fill(dB, (size_t)pr->b_rows * (size_t)r->n, r->is_double, 1, 0) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    snprintf(why, why_len, "device buffers of B and C: %s", cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  for (int w = 0; w < o->warmup; w++)
    if (shiro_spmm(ctx, dB, dC) != SHIRO_OK) {
      snprintf(why, why_len, "%s", ctx->error);
      goto done;
    }
  for (int t = 0; t < o->reps; t++) {
    MPI_Barrier(comm);
    double t0 = now_ms();
    if (shiro_spmm(ctx, dB, dC) != SHIRO_OK) {
      snprintf(why, why_len, "%s", ctx->error);
      goto done;
    }
    call[t] = now_ms() - t0;
  }
  for (int t = 0; t < o->reps; t++) {
    MPI_Barrier(comm);
    if (cuda_backend_profile(ctx, dB, dC, op_ms) != SHIRO_OK) {
      snprintf(why, why_len, "%s", ctx->error);
      goto done;
    }
    for (int64_t op = 0; op < pr->nops; op++) opv[op * o->reps + t] = op_ms[op];
  }
  double mine = bench_median(call, o->reps), worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  r->replay_ms = worst;
  r->local_ms = 0;
  if (rank == 0) printf("  breakdown %s N=%lld rank 0 (transport %s), median ms per op:\n", r->is_double ? "double" : "float",
                        (long long)r->n, cuda_backend_transport(ctx));
  for (int64_t op = 0; op < pr->nops; op++) {
    const int64_t *rec = pr->ops + op * PROG_OP_WIDTH;
    double med = bench_median(opv + op * o->reps, o->reps);
    if (rec[OPF_KIND] == PROG_OP_MUL && rec[OPF_TAG] == PROG_TAG_LOCAL) r->local_ms += med;
    if (rank == 0) {
      if (rec[OPF_KIND] == PROG_OP_MUL)
        printf("    op %2lld  %-11s %-8s rows %9lld entries %11lld  %9.4f ms\n", (long long)op, tag_name(rec[OPF_TAG]),
               cuda_backend_op_how(ctx, op), (long long)rec[OPF_NROWS],
               (long long)(pr->ptr[rec[OPF_PTR_OFF] + rec[OPF_NROWS]] - pr->ptr[rec[OPF_PTR_OFF]]), med);
      else
        printf("    op %2lld  %-11s %-8s stage %lld %37s %9.4f ms\n", (long long)op, rec[OPF_KIND] == PROG_OP_START ? "START" : "WAIT",
               "", (long long)rec[OPF_STAGE], "", med);
    }
  }
  rc = 0;
done:
  if (rc == 0 && C_keep) {
    *C_keep = dC;
    dC = NULL;
  }
  shiro_ctx_destroy(&ctx);
  cudaFree(dB);
  cudaFree(dC);
  free(call);
  free(opv);
  free(op_ms);
  return rc;
}

/* 1 if the m × n device arrays a and b hold the same bits. */
static int same_bits(const void *a, const void *b, size_t bytes) {
  void *ha = malloc(bytes ? bytes : 1), *hb = malloc(bytes ? bytes : 1);
  int same = ha && hb && cudaMemcpy(ha, a, bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
      cudaMemcpy(hb, b, bytes, cudaMemcpyDeviceToHost) == cudaSuccess && !memcmp(ha, hb, bytes);
  free(ha);
  free(hb);
  return same;
}

/* The fastest plain cuSPARSE SpMM of r (device time; host time when host is set), or NAN. */
static double best_plain(const result *r, int host) {
  const bench_plain *p[3] = {&r->alg3, &r->alg2, &r->dflt};
  double best = NAN;
  for (int i = 0; i < 3; i++) {
    const double t = host ? p[i]->host_ms : p[i]->dev_ms;
    if (p[i]->ok && (isnan(best) || t < best)) best = t;
  }
  return best;
}

/* The table; with `targets`, the device run's goals (one-rank replays only: an R-rank plan on one
 * GPU time-shares it and is no measure of the call). */
static void print_table(const result *res, int nres, const bench_csr *A, int64_t micro_rows, int targets) {
  printf("\n%-6s %4s %10s %10s %10s %10s %10s %8s %8s %8s %8s %5s %9s %9s %9s\n", "dtype", "N", "replay_ms", "local_ms",
         "alg3_ms", "alg2_ms", "dflt_ms", "TF/s", "plainTF", "loc/best", "rep/best", "bits", "gath_GB/s", "add1_GB/s",
         "add4_GB/s");
  for (int i = 0; i < nres; i++) {
    const result *r = &res[i];
    const double flops = A ? 2.0 * (double)A->nnz * (double)r->n : 0, best = best_plain(r, 0), best_host = best_plain(r, 1);
    printf("%-6s %4lld %10.4f %10.4f %10.4f %10.4f %10.4f %8.3f %8.3f %8.3f %8.3f %5s %9.1f %9.1f %9.1f\n",
           r->is_double ? "double" : "float", (long long)r->n, r->replay_ms, r->local_ms, r->alg3.ok ? r->alg3.dev_ms : NAN,
           r->alg2.ok ? r->alg2.dev_ms : NAN, r->dflt.ok ? r->dflt.dev_ms : NAN,
           flops && r->replay_ms > 0 ? flops / (r->replay_ms * 1e9) : NAN, flops && best > 0 ? flops / (best * 1e9) : NAN,
           r->local_ms > 0 ? best / r->local_ms : NAN, r->replay_ms / best_host,
           r->bits_equal < 0 ? "-" : r->bits_equal ? "same"
                                                   : "DIFF",
           r->have_bw ? r->bw.gather_gbs : NAN,
           r->have_bw ? r->bw.add1_gbs : NAN, r->have_bw ? r->bw.add4_gbs : NAN);
  }
  printf("  replay_ms: whole call (host clock, synchronous); local_ms: the LOCAL op (events); alg3/alg2/dflt_ms: plain\n"
         "  cuSPARSE SpMM of the whole CSR (events; CSR_ALG3 = the replay's deterministic algorithm, CSR_ALG2, and\n"
         "  CUSPARSE_SPMM_ALG_DEFAULT); TF/s of the replay, plainTF of the fastest plain; loc/best = fastest plain ms /\n"
         "  local_ms (speed of the local multiply relative to plain); rep/best = replay_ms / the fastest plain host-timed\n"
         "  call; bits: replay C vs plain C of the replay's algorithm (ALG3 below N = 64, ALG2 from N = 64); kernels on %lld synthetic rows, 25%% moved.\n",
         (long long)micro_rows);
  /* Targets of the device run, against the fastest plain cuSPARSE algorithm. */
  for (int i = 0; targets && i < nres; i++) {
    const result *r = &res[i];
    const char *tn = r->is_double ? "double" : "float";
    const double best = best_plain(r, 0), best_host = best_plain(r, 1);
    if (!isnan(best) && r->local_ms > 0)
      printf("TARGET local multiply >= 0.95x fastest plain cuSPARSE (%s N=%lld): %.3f %s (vs ALG3 %.3f)\n", tn,
             (long long)r->n, best / r->local_ms, best / r->local_ms >= 0.95 ? "PASS" : "MISS",
             r->alg3.ok ? r->alg3.dev_ms / r->local_ms : NAN);
    if (!isnan(best_host))
      printf("TARGET 1-rank replay <= 1.05x fastest plain cuSPARSE (%s N=%lld): %.3f %s (vs ALG3 %.3f)\n", tn,
             (long long)r->n, r->replay_ms / best_host, r->replay_ms / best_host <= 1.05 ? "PASS" : "MISS",
             r->alg3.ok ? r->replay_ms / r->alg3.host_ms : NAN);
    if (r->have_bw && !r->is_double && r->n == 32)
      printf("TARGET gather >= 2000 GB/s (float N=32): %.1f %s\n", r->bw.gather_gbs, r->bw.gather_gbs >= 2000 ? "PASS" : "MISS");
    if (r->have_bw)
      printf("TARGET deterministic add >= 1500 GB/s (%s N=%lld, 1 row each): %.1f %s\n", tn, (long long)r->n, r->bw.add1_gbs,
             r->bw.add1_gbs >= 1500 ? "PASS" : "MISS");
  }
}

int main(int argc, char **argv) {
  int ndev = 0, rank = 0, size = 1, rc = 1;
  cudaError_t ce = cudaGetDeviceCount(&ndev);
  if (ce != cudaSuccess || ndev <= 0) {
    printf("SKIP: no CUDA device (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorString(ce), ndev);
    return 77;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  bench_csr A;
  shiro_plan plan;
  plan_mapping map;
  int64_t *ops = NULL;
  char name[512] = "", why[1024] = "";
  result *res = NULL;
  int nres = 0, have_A = 0;
  memset(&A, 0, sizeof A);
  memset(&plan, 0, sizeof plan);
  memset(&map, 0, sizeof map);
  if (!parse(argc, argv, &o)) {
    rc = 2;
    goto done;
  }
  double t0 = now_ms();
  if ((o.matrix || o.rmat_scale) && (!o.plan || rank == 0)) {
    if (load_matrix(&o, &A, name, sizeof name)) {
      fprintf(stderr, "%s: cannot load the matrix\n", prog);
      goto done;
    }
    have_A = 1;
  }
  if (o.plan) {
    shiro_error err = {{0}};
    if (plan_file_map_rank(o.plan, rank, &plan.meta, &plan.pr, &map, &err) != SHIRO_OK ||
        plan_check_rank(&plan.meta, &plan.pr, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
      goto done;
    }
    if (plan.meta.ranks != size) {
      fprintf(stderr, "%s: the plan is for %d ranks: run it with mpirun -np %d\n", prog, plan.meta.ranks, plan.meta.ranks);
      goto done;
    }
  } else {
    if (size != 1) {
      fprintf(stderr, "%s: without --plan, run one rank\n", prog);
      goto done;
    }
    if (one_rank_program(&A, &plan.meta, &plan.pr, &ops)) goto done;
  }
  plan.checked = 1;
  if (rank == 0) {
    printf("%s: %s", prog, have_A ? name : o.plan);
    if (have_A) printf(": %lld x %lld, %lld nonzeros (loaded in %.1f s)", (long long)A.m, (long long)A.k, (long long)A.nnz,
                       (now_ms() - t0) / 1e3);
    printf("\n  plan: %s, %d rank(s), strategy %s; %d GPU(s) visible; reps %d, warm-up %d\n", o.plan ? o.plan : "one rank, in memory",
           plan.meta.ranks, plan.meta.strategy, ndev, o.reps, o.warmup);
  }
  res = calloc((size_t)o.ndt * (size_t)o.nn, sizeof *res);
  if (!res) goto done;
  const int64_t micro_rows = o.micro_rows ? o.micro_rows : (have_A && A.m > ((int64_t)1 << 22) ? A.m : (int64_t)1 << 22);
  for (int d = 0; d < o.ndt; d++)
    for (int j = 0; j < o.nn; j++) {
      result *r = &res[nres++];
      void *Crep = NULL, *Cplain = NULL;
      r->is_double = o.dt[d];
      r->n = o.n[j];
      r->bits_equal = -1;
      int bad = run_replay(&plan, MPI_COMM_WORLD, &o, r, size == 1 ? &Crep : NULL, why, sizeof why), anybad = 0;
      MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (anybad) {
        fprintf(stderr, "%s: rank %d: replay %s N=%lld: %s\n", prog, rank, r->is_double ? "double" : "float", (long long)r->n,
                bad ? why : "failed on another rank");
        cudaFree(Crep);
        goto done;
      }
      if (rank == 0 && have_A && o.plain) {
        const size_t cbytes = (size_t)A.m * (size_t)r->n * (r->is_double ? 8 : 4);
        if (cudaMalloc(&Cplain, cbytes ? cbytes : 1) != cudaSuccess) Cplain = NULL;
        const int alg2_is_replays = cuda_ops_spmm_alg(r->n) == CUSPARSE_SPMM_CSR_ALG2; /* its C is kept to compare */
        if (bench_plain_spmm(&A, r->is_double, r->n, CUSPARSE_SPMM_CSR_ALG3, o.warmup, o.reps, alg2_is_replays ? NULL : Cplain,
                             &r->alg3, why, sizeof why))
          fprintf(stderr, "%s: plain cuSPARSE (CSR_ALG3): %s\n", prog, why);
        else if (!r->alg3.ok) printf("  note: %s\n", why);
        if (bench_plain_spmm(&A, r->is_double, r->n, CUSPARSE_SPMM_CSR_ALG2, o.warmup, o.reps, alg2_is_replays ? Cplain : NULL,
                             &r->alg2, why, sizeof why))
          fprintf(stderr, "%s: plain cuSPARSE (CSR_ALG2): %s\n", prog, why);
        const bench_plain *same_alg = alg2_is_replays ? &r->alg2 : &r->alg3;
        if (Crep && Cplain && same_alg->ok && size == 1 && !o.plan) r->bits_equal = same_bits(Crep, Cplain, cbytes);
        if (bench_plain_spmm(&A, r->is_double, r->n, CUSPARSE_SPMM_ALG_DEFAULT, o.warmup, o.reps, NULL, &r->dflt, why, sizeof why))
          fprintf(stderr, "%s: plain cuSPARSE (default): %s\n", prog, why);
      }
      cudaFree(Crep);
      cudaFree(Cplain);
      if (rank == 0 && o.micro) {
        if (bench_kernels(micro_rows, r->is_double, r->n, o.warmup, o.reps, 7, &r->bw, why, sizeof why))
          fprintf(stderr, "%s: kernels: %s\n", prog, why);
        else r->have_bw = 1;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  if (rank == 0) print_table(res, nres, have_A ? &A : NULL, micro_rows, size == 1 && !o.plan);
  rc = 0;
done:
  free(res);
  free(ops);
  if (o.plan) plan_file_unmap(&map);
  bench_csr_free(&A);
  MPI_Finalize();
  return rc;
}
