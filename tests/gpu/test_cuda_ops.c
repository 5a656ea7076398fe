/* test_cuda_ops — the CUDA backend's compute ops against the CPU kernels.
 *
 * A synthetic program exercises every op shape a plan has: gathers of B rows
 * (contiguous and listed destinations), partial products into listed rows,
 * products into contiguous rows at offsets (assign and accumulate: cuSPARSE),
 * and sums of rows (assign and accumulate, empty rows included). For float
 * and double and several N (odd ones too, so every vector width is used):
 *   1. own kernels only (use_sparse = 0): bit-identical to the CPU kernels;
 *   2. with cuSPARSE: two runs, each within the rounding bound of the CPU
 *      result (cuSPARSE's SpMM may differ in the last bits from run to run:
 *      seen on the H200; a "note:" line counts the values that did);
 *   3. the whole backend (setup, interpreter, spmm, destroy) on a one-rank
 *      context, MPI and NCCL transports: two calls, each within the bound.
 * Exits 77 (skipped) when there is no CUDA device. --quick: N in {7, 32} only
 * (for runs under compute-sanitizer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "cuda_backend.h"
#include "cuda_ops.h"
#include "internal.h"
#include "plan_file.h"

static int failures = 0;

#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

#define CUDA_OK(expr)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (expr);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}
static int64_t rnd_below(int64_t n) { return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0; }

/* ---- a synthetic program -------------------------------------------------------- */

enum { NB = 1000,
       NC = 800,
       NS = 600,
       NR = 700 }; /* rows of B, C, S, R */
static const int64_t buf_rows[PROG_NBUF] = {NB, NC, NS, NR};

typedef struct grow {
  int64_t *ops, *ptr;
  int32_t *col, *rows;
  double *val;
  int64_t nops, nptr, ncol, nrows;
} grow;

static void *push(void *p, int64_t n, size_t esz) {
  void *q = realloc(p, (size_t)(n + 1) * esz);
  if (!q) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return q;
}

/* One op record with its operator: entries per row in [0, maxdeg] (exactly 1 if one_each),
 * columns distinct and increasing when sorted, destination rows listed when listed. */
static void add_mul(grow *g, int dst, int64_t doff, int src, int64_t soff, int64_t nrows, int listed, int has_val, int accum,
                    int maxdeg, int one_each, int sorted) {
  int64_t *r = g->ops = push(g->ops, g->nops * PROG_OP_WIDTH + PROG_OP_WIDTH, sizeof *g->ops);
  r += g->nops++ * PROG_OP_WIDTH;
  memset(r, 0, PROG_OP_WIDTH * sizeof *r);
  r[OPF_KIND] = PROG_OP_MUL;
  r[OPF_DST_BUF] = dst;
  r[OPF_DST_OFF] = doff;
  r[OPF_SRC_BUF] = src;
  r[OPF_SRC_OFF] = soff;
  r[OPF_NROWS] = nrows;
  r[OPF_PTR_OFF] = g->nptr;
  r[OPF_ROWS_OFF] = listed ? g->nrows : -1;
  r[OPF_HAS_VAL] = has_val;
  r[OPF_ACCUM] = accum;
  const int64_t span = buf_rows[src] - soff, room = buf_rows[dst] - doff;
  if (listed) { /* distinct destination rows: a prefix of a shuffle */
    int32_t *perm = malloc((size_t)room * sizeof *perm);
    for (int64_t i = 0; i < room; i++) perm[i] = (int32_t)i;
    for (int64_t i = room - 1; i > 0; i--) {
      int64_t j = rnd_below(i + 1);
      int32_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int64_t i = 0; i < nrows; i++) {
      g->rows = push(g->rows, g->nrows, sizeof *g->rows);
      g->rows[g->nrows++] = perm[i];
    }
    free(perm);
  }
  g->ptr = push(g->ptr, g->nptr, sizeof *g->ptr);
  g->ptr[g->nptr++] = g->ncol;
  for (int64_t i = 0; i < nrows; i++) {
    int64_t deg = one_each ? 1 : rnd_below(maxdeg + 1), c = rnd_below(span / 4 + 1);
    for (int64_t k = 0; k < deg; k++) {
      int64_t j = sorted ? c : rnd_below(span);
      if (sorted && j >= span) break;
      c += 1 + rnd_below(8);
      g->col = push(g->col, g->ncol, sizeof *g->col);
      g->val = push(g->val, g->ncol, sizeof *g->val);
      g->col[g->ncol] = (int32_t)j;
      g->val[g->ncol++] = has_val ? ldexp((double)(rnd_below(4000) - 2000), -10) : 1.0;
    }
    g->ptr = push(g->ptr, g->nptr, sizeof *g->ptr);
    g->ptr[g->nptr++] = g->ncol;
  }
}

static void add_ctl(grow *g, int kind) {
  int64_t *r = g->ops = push(g->ops, g->nops * PROG_OP_WIDTH + PROG_OP_WIDTH, sizeof *g->ops);
  r += g->nops++ * PROG_OP_WIDTH;
  memset(r, 0, PROG_OP_WIDTH * sizeof *r);
  r[OPF_KIND] = kind;
  r[OPF_ROWS_OFF] = -1;
}

/* The program. with_r = 0: the one-rank backend test, where nothing fills R and
 * every row of S that is read was written earlier in the same call. */
static prog_rank make_program(int with_r) {
  grow g = {0};
  if (with_r) {
    add_mul(&g, PROG_BUF_S, 0, PROG_BUF_B, 0, 300, 0, 0, 0, 1, 1, 0); /* gather B rows into S[0..300) */
    add_mul(&g, PROG_BUF_S, 300, PROG_BUF_B, 5, 200, 1, 0, 0, 1, 1, 0); /* gather into listed S rows */
  } else {
    add_mul(&g, PROG_BUF_S, 0, PROG_BUF_B, 0, NS, 0, 0, 0, 1, 1, 0); /* gather into all of S */
  }
  add_mul(&g, PROG_BUF_S, 0, PROG_BUF_B, 0, 150, 1, 1, 1, 6, 0, 0); /* partial C rows, listed, += */
  add_ctl(&g, PROG_OP_START);
  add_mul(&g, PROG_BUF_C, 0, PROG_BUF_B, 0, NC, 0, 1, 0, 12, 0, 1); /* local product (cuSPARSE, beta 0) */
  add_ctl(&g, PROG_OP_WAIT);
  if (with_r) {
    add_mul(&g, PROG_BUF_C, 0, PROG_BUF_R, 0, NC, 0, 1, 1, 5, 0, 1); /* remote B product (cuSPARSE, beta 1) */
    add_mul(&g, PROG_BUF_C, 0, PROG_BUF_R, 3, 400, 1, 0, 1, 3, 0, 0); /* add partial rows, listed, += */
    add_mul(&g, PROG_BUF_S, 100, PROG_BUF_R, 0, 250, 1, 0, 0, 4, 0, 0); /* aggregate: sums (empty rows -> 0) */
  }
  add_mul(&g, PROG_BUF_C, 37, PROG_BUF_S, 11, 301, 0, 1, 1, 7, 0, 1); /* product at offsets (cuSPARSE, beta 1) */
  add_mul(&g, PROG_BUF_C, 0, PROG_BUF_S, 0, 500, 1, 1, 1, 4, 0, 0); /* listed product (own kernel) */
  add_mul(&g, PROG_BUF_C, 5, PROG_BUF_S, 1, 100, 0, 1, 0, 3, 0, 0); /* contiguous but unsorted: own kernel */
  prog_rank pr;
  memset(&pr, 0, sizeof pr);
  pr.nstages = 1;
  pr.c_rows = NC;
  pr.b_rows = NB;
  pr.s_rows = NS;
  pr.r_rows = NR;
  pr.nops = g.nops;
  pr.ops = g.ops;
  pr.nptr = g.nptr;
  pr.ptr = g.ptr;
  pr.ncol = pr.nval = g.ncol;
  pr.col = g.col;
  pr.val = g.val;
  pr.nrowidx = g.nrows;
  pr.rows = g.rows;
  return pr;
}

/* ---- references and comparisons ----------------------------------------------- */

/* Fills a host buffer of `rows` × n values with ±(1 + k/256). */
static void fill(void *h, int64_t rows, int64_t n, int is_double) {
  for (int64_t i = 0; i < rows * n; i++) {
    double v = (1.0 + (double)rnd_below(256) / 256.0) * (rnd() & 1 ? 1 : -1);
    if (is_double) ((double *)h)[i] = v;
    else ((float *)h)[i] = (float)v;
  }
}

/* Runs the program's MUL ops on the CPU kernels over host buffers hb[]; absval: |values| (bounds). */
static void cpu_run(const prog_rank *pr, void *hb[PROG_NBUF], int is_double, int64_t n, int absval) {
  double *vd = malloc((size_t)(pr->nval + 1) * sizeof *vd);
  float *vf = malloc((size_t)(pr->nval + 1) * sizeof *vf);
  for (int64_t e = 0; e < pr->nval; e++) {
    vd[e] = absval ? fabs(pr->val[e]) : pr->val[e];
    vf[e] = (float)vd[e];
  }
  for (int64_t o = 0; o < pr->nops; o++) {
    rt_op op;
    interp_decode(pr, o, &op);
    if (op.kind == RT_MULTIPLY) op.val = is_double ? (const void *)vd : (const void *)vf;
    void *d = hb[op.dst_buf], *src = hb[op.src_buf];
    switch (op.kind) { /* the kernels the CPU backend's table calls */
      case RT_MULTIPLY:
        if (is_double) cpu_multiply_f64(&op, d, src, n);
        else cpu_multiply_f32(&op, d, src, n);
        break;
      case RT_ADD:
        if (is_double) cpu_add_f64(&op, d, src, n);
        else cpu_add_f32(&op, d, src, n);
        break;
      case RT_GATHER: cpu_gather(&op, d, src, (size_t)n * (is_double ? 8 : 4)); break;
      default: break;
    }
  }
  free(vd);
  free(vf);
}

static double get(const void *h, int64_t i, int is_double) {
  return is_double ? ((const double *)h)[i] : (double)((const float *)h)[i];
}

/* Counts elements of got differing from want: bitwise (tol < 0) or beyond tol · u · bound. */
static int64_t compare(const void *got, const void *want, const void *bound, int64_t count, int is_double, double tol) {
  const size_t esz = is_double ? 8 : 4;
  if (tol < 0) {
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) bad += memcmp((const char *)got + i * esz, (const char *)want + i * esz, esz) != 0;
    return bad;
  }
  const double u = is_double ? ldexp(1.0, -53) : ldexp(1.0, -24);
  int64_t bad = 0;
  for (int64_t i = 0; i < count; i++) {
    double d = fabs(get(got, i, is_double) - get(want, i, is_double));
    if (!(d <= tol * u * get(bound, i, is_double))) bad++;
  }
  return bad;
}

/* ---- the GPU side --------------------------------------------------------------- */

typedef struct gpu_bufs {
  void *d[PROG_NBUF];
} gpu_bufs;

static void gpu_upload(gpu_bufs *g, void *const hb[PROG_NBUF], size_t row_bytes) {
  for (int b = 0; b < PROG_NBUF; b++) {
    size_t bytes = (size_t)buf_rows[b] * row_bytes;
    if (!g->d[b]) CUDA_OK(cudaMalloc(&g->d[b], bytes));
    CUDA_OK(cudaMemcpy(g->d[b], hb[b], bytes, cudaMemcpyHostToDevice));
  }
}

static void gpu_download(void *hb[PROG_NBUF], const gpu_bufs *g, size_t row_bytes) {
  for (int b = 0; b < PROG_NBUF; b++)
    CUDA_OK(cudaMemcpy(hb[b], g->d[b], (size_t)buf_rows[b] * row_bytes, cudaMemcpyDeviceToHost));
}

/* Runs every MUL op through cuda_ops (the interpreter's executor) on the device buffers. */
static shiro_status ops_run_all(const prog_rank *pr, int is_double, int64_t n, int use_sparse, gpu_bufs *g, cusparseHandle_t h,
                                cudaStream_t s, char *msg) {
  cuda_ops o;
  float *vf = malloc((size_t)(pr->nval + 1) * sizeof *vf); /* the values in the op's type, as the interpreter keeps them */
  rt_op *ops = malloc((size_t)(pr->nops + 1) * sizeof *ops);
  for (int64_t e = 0; vf && e < pr->nval; e++) vf[e] = (float)pr->val[e];
  for (int64_t i = 0; ops && i < pr->nops; i++) {
    interp_decode(pr, i, &ops[i]);
    if (ops[i].kind == RT_MULTIPLY) ops[i].val = is_double ? (const void *)pr->val : (const void *)vf;
  }
  shiro_status st = vf && ops ? cuda_ops_setup(&o, ops, pr->nops, is_double, n, buf_rows, h, use_sparse, msg) : SHIRO_ERR_NOMEM;
  for (int64_t i = 0; st == SHIRO_OK && i < pr->nops; i++) {
    const int64_t *op = pr->ops + i * PROG_OP_WIDTH;
    if (op[OPF_KIND] != PROG_OP_MUL) continue;
    /* cuSPARSE takes exactly the ops with values, a contiguous destination and increasing columns */
    int want = use_sparse && op[OPF_HAS_VAL] && op[OPF_ROWS_OFF] < 0 && i + 1 != pr->nops;
    if (want && strcmp(cuda_ops_how(&o, i), "cusparse")) /* allowed (the fallback), but worth knowing */
      printf("note: cuSPARSE declined op %lld (N=%lld): it runs on the own kernel\n", (long long)i, (long long)n);
    if (!want) EXPECT(!strcmp(cuda_ops_how(&o, i), "kernel"), "op %lld runs as %s", (long long)i, cuda_ops_how(&o, i));
    st = cuda_ops_run(&o, i, g->d, n, s, msg);
  }
  if (st == SHIRO_OK && cudaStreamSynchronize(s) != cudaSuccess) st = SHIRO_ERR_CUDA;
  cuda_ops_destroy(&o);
  free(vf);
  free(ops);
  return st;
}

/* CPU result and rounding bound of the program from the initial buffers init[]. */
static void reference(const prog_rank *pr, void *const init[PROG_NBUF], int is_double, int64_t n, void *cpu[PROG_NBUF],
                      void *bound[PROG_NBUF]) {
  for (int b = 0; b < PROG_NBUF; b++) {
    const int64_t count = buf_rows[b] * n;
    memcpy(cpu[b], init[b], (size_t)count * (is_double ? 8 : 4));
    for (int64_t i = 0; i < count; i++) {
      if (is_double) ((double *)bound[b])[i] = fabs(((const double *)init[b])[i]);
      else ((float *)bound[b])[i] = fabsf(((const float *)init[b])[i]);
    }
  }
  cpu_run(pr, cpu, is_double, n, 0);
  cpu_run(pr, bound, is_double, n, 1);
}

/* Terms summed into one value along the whole program, at most (for the rounding bound). */
#define MAX_TERMS 60.0

typedef struct host_set {
  void *init[PROG_NBUF], *cpu[PROG_NBUF], *bound[PROG_NBUF], *a[PROG_NBUF], *b[PROG_NBUF];
} host_set;

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* One (dtype, N): checks 1 and 2 of the header on the ops. */
static void check_ops(const prog_rank *pr, int is_double, int64_t n, cusparseHandle_t h, cudaStream_t s) {
  const size_t esz = is_double ? 8 : 4, row_bytes = (size_t)n * esz;
  const char *tn = is_double ? "double" : "float";
  host_set hs;
  gpu_bufs g = {{0}};
  char msg[CUDA_MSG_LEN] = "";
  for (int b = 0; b < PROG_NBUF; b++) {
    size_t bytes = (size_t)buf_rows[b] * row_bytes;
    hs.init[b] = xmalloc(bytes);
    hs.cpu[b] = xmalloc(bytes);
    hs.bound[b] = xmalloc(bytes);
    hs.a[b] = xmalloc(bytes);
    hs.b[b] = xmalloc(bytes);
    fill(hs.init[b], buf_rows[b], n, is_double);
  }
  reference(pr, hs.init, is_double, n, hs.cpu, hs.bound);
  /* 1. own kernels only: the CPU's bits */
  gpu_upload(&g, hs.init, row_bytes);
  shiro_status st = ops_run_all(pr, is_double, n, 0, &g, h, s, msg);
  EXPECT(st == SHIRO_OK, "%s N=%lld kernels: %s", tn, (long long)n, msg);
  gpu_download(hs.a, &g, row_bytes);
  for (int b = 0; st == SHIRO_OK && b < PROG_NBUF; b++) {
    int64_t bad = compare(hs.a[b], hs.cpu[b], NULL, buf_rows[b] * n, is_double, -1);
    EXPECT(bad == 0, "%s N=%lld own kernels: buffer %d: %lld values differ from the CPU kernels' bits", tn, (long long)n, b,
           (long long)bad);
  }
  /* 2. with cuSPARSE: both runs within the bound (their bits may differ: counted in a note) */
  for (int rep = 0; rep < 2; rep++) {
    gpu_upload(&g, hs.init, row_bytes);
    st = ops_run_all(pr, is_double, n, 1, &g, h, s, msg);
    EXPECT(st == SHIRO_OK, "%s N=%lld cusparse: %s", tn, (long long)n, msg);
    gpu_download(rep ? hs.b : hs.a, &g, row_bytes);
  }
  for (int b = 0; st == SHIRO_OK && b < PROG_NBUF; b++) {
    for (int rep = 0; rep < 2; rep++) {
      int64_t bad = compare(rep ? hs.b[b] : hs.a[b], hs.cpu[b], hs.bound[b], buf_rows[b] * n, is_double, 2.0 * MAX_TERMS);
      EXPECT(bad == 0, "%s N=%lld with cuSPARSE (run %d): buffer %d: %lld values beyond the rounding bound", tn, (long long)n,
             rep + 1, b, (long long)bad);
    }
    int64_t diff = compare(hs.a[b], hs.b[b], NULL, buf_rows[b] * n, is_double, -1);
    if (diff) printf("note: %s N=%lld with cuSPARSE: buffer %d: %lld values differ in their bits between two runs\n", tn,
                     (long long)n, b, (long long)diff);
  }
  for (int b = 0; b < PROG_NBUF; b++) {
    cudaFree(g.d[b]);
    free(hs.init[b]);
    free(hs.cpu[b]);
    free(hs.bound[b]);
    free(hs.a[b]);
    free(hs.b[b]);
  }
  printf("ok   ops %s N=%lld\n", tn, (long long)n);
}

/* 3. The whole backend on a one-rank context: the CPU result within the
 * rounding bound, the same bits on two calls, every row of C written. */
static void check_backend(const prog_rank *pr, int is_double, int64_t n, shiro_transport transport) {
  const size_t esz = is_double ? 8 : 4, row_bytes = (size_t)n * esz;
  const char *tn = is_double ? "double" : "float";
  shiro_plan plan;
  shiro_ctx *ctx = NULL;
  shiro_error err = {{0}};
  memset(&plan, 0, sizeof plan);
  plan.meta.ranks = 1;
  plan.meta.gpus_per_node = 1;
  plan.pr = *pr;
  plan.checked = 1; /* a program built in memory: check_programs checked it */
  shiro_ctx_options opts = shiro_ctx_options_default();
  opts.backend = SHIRO_BACKEND_CUDA;
  opts.dtype = is_double ? SHIRO_FLOAT64 : SHIRO_FLOAT32;
  opts.n = n;
  opts.transport = transport;
  host_set hs;
  for (int b = 0; b < PROG_NBUF; b++) {
    size_t bytes = (size_t)buf_rows[b] * row_bytes;
    hs.init[b] = xmalloc(bytes);
    hs.cpu[b] = xmalloc(bytes);
    hs.bound[b] = xmalloc(bytes);
    hs.a[b] = xmalloc(bytes);
    hs.b[b] = xmalloc(bytes);
    fill(hs.init[b], buf_rows[b], n, is_double); /* S, R, C: anything; the program overwrites what it reads */
  }
  reference(pr, hs.init, is_double, n, hs.cpu, hs.bound);
  void *dB = NULL, *dC = NULL;
  shiro_status st = shiro_ctx_create(&plan, MPI_COMM_WORLD, &opts, &ctx, &err);
  EXPECT(st == SHIRO_OK, "%s N=%lld backend setup (transport %d): %s", tn, (long long)n, (int)transport, err.message);
  if (st == SHIRO_OK) {
    const size_t b_bytes = (size_t)NB * row_bytes, c_bytes = (size_t)NC * row_bytes;
    CUDA_OK(cudaMalloc(&dB, b_bytes));
    CUDA_OK(cudaMalloc(&dC, c_bytes));
    CUDA_OK(cudaMemcpy(dB, hs.init[PROG_BUF_B], b_bytes, cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 2 && st == SHIRO_OK; rep++) {
      CUDA_OK(cudaMemset(dC, 0xff, c_bytes)); /* NaN poison: every row must be written */
      st = shiro_spmm(ctx, dB, dC);
      EXPECT(st == SHIRO_OK, "%s N=%lld backend spmm: %s", tn, (long long)n, shiro_ctx_last_error(ctx));
      CUDA_OK(cudaMemcpy(rep ? hs.b[PROG_BUF_C] : hs.a[PROG_BUF_C], dC, c_bytes, cudaMemcpyDeviceToHost));
    }
    if (st == SHIRO_OK) {
      int64_t diff = compare(hs.a[PROG_BUF_C], hs.b[PROG_BUF_C], NULL, NC * n, is_double, -1);
      if (diff) printf("note: %s N=%lld backend: %lld values differ in their bits between two calls\n", tn, (long long)n,
                       (long long)diff);
      for (int rep = 0; rep < 2; rep++) {
        int64_t bad = compare(rep ? hs.b[PROG_BUF_C] : hs.a[PROG_BUF_C], hs.cpu[PROG_BUF_C], hs.bound[PROG_BUF_C], NC * n,
                              is_double, 2.0 * MAX_TERMS);
        EXPECT(bad == 0, "%s N=%lld backend (call %d): %lld values of C beyond the rounding bound", tn, (long long)n, rep + 1,
               (long long)bad);
      }
      float ms[64];
      if (pr->nops <= 64) {
        st = cuda_backend_profile(ctx, dB, dC, ms);
        EXPECT(st == SHIRO_OK, "%s N=%lld backend profile: %s", tn, (long long)n, shiro_ctx_last_error(ctx));
      }
    }
    printf("ok   backend %s N=%lld transport=%s\n", tn, (long long)n, cuda_backend_transport(ctx));
  }
  shiro_ctx_destroy(&ctx);
  cudaFree(dB);
  cudaFree(dC);
  for (int b = 0; b < PROG_NBUF; b++) {
    free(hs.init[b]);
    free(hs.cpu[b]);
    free(hs.bound[b]);
    free(hs.a[b]);
    free(hs.b[b]);
  }
}

/* The synthetic programs obey the format's rules (plan_check_rank), like a plan read from a file. */
static void check_programs(const prog_rank *a, const prog_rank *b) {
  prog_meta meta;
  shiro_error err = {{0}};
  memset(&meta, 0, sizeof meta);
  meta.ranks = 1;
  meta.gpus_per_node = 1;
  meta.m = NC;
  meta.k = NB;
  EXPECT(plan_check_rank(&meta, a, &err) == SHIRO_OK, "program with R: %s", err.message);
  EXPECT(plan_check_rank(&meta, b, &err) == SHIRO_OK, "program without R: %s", err.message);
}

int main(int argc, char **argv) {
  int ndev = 0;
  { /* host-only part first: it runs without a device too */
    prog_rank a = make_program(1), b = make_program(0);
    check_programs(&a, &b);
    prog_rank_free(&a);
    prog_rank_free(&b);
    if (failures) return 1;
  }
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev <= 0) {
    printf("SKIP: no CUDA device (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorString(e), ndev);
    return 77;
  }
  MPI_Init(&argc, &argv);
  cusparseHandle_t h = NULL;
  cudaStream_t s = NULL;
  CUDA_OK(cudaStreamCreate(&s));
  if (cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS || cusparseSetStream(h, s) != CUSPARSE_STATUS_SUCCESS) {
    fprintf(stderr, "FATAL: cusparseCreate failed\n");
    return 1;
  }
  prog_rank full = make_program(1), one = make_program(0);
  const int quick = argc > 1 && !strcmp(argv[1], "--quick"); /* fewer N: under compute-sanitizer */
  const int64_t all_ns[] = {1, 3, 7, 32, 33, 64, 128}, quick_ns[] = {7, 32};
  const int64_t *ns = quick ? quick_ns : all_ns;
  const size_t nn = quick ? 2 : sizeof all_ns / sizeof all_ns[0];
  for (int d = 0; d < 2; d++)
    for (size_t k = 0; k < nn; k++) check_ops(&full, d, ns[k], h, s);
  for (int d = 0; d < 2; d++)
    for (size_t k = 0; k < nn; k += quick ? 1 : 3) {
      check_backend(&one, d, ns[k], SHIRO_TRANSPORT_MPI);
      check_backend(&one, d, ns[k], SHIRO_TRANSPORT_NCCL);
    }
  cusparseDestroy(h);
  cudaStreamDestroy(s);
  prog_rank_free(&full);
  prog_rank_free(&one);
  MPI_Finalize();
  printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
  return failures ? 1 : 0;
}
