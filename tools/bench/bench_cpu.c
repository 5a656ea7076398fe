/* shiro-bench-cpu — the CPU replay of a plan, taken apart.
 *
 *   mpirun -np R shiro-bench-cpu PLAN.h5 [--n 32[,64...]] [--dtype double[,float]]
 *                                [--reps 5] [--ms 200] [--only all|call|local|ops]
 *
 * For each value type and N, on a context of the CPU backend, --reps
 * repetitions of samples of each part below, the parts alternating within a
 * repetition (a sample: as many calls as fill about --ms milliseconds, timed
 * together; the slowest rank's mean per call). Times printed are the best
 * repetition's:
 *
 *   call_ms     shiro_spmm: the whole replay
 *   local1_ms, localT_ms   the ops between each START and its WAIT alone, on one
 *               thread and on all (omp_get_max_threads: T); on a one-rank plan the
 *               local multiply of all of A
 *   nopoll_ms   the program walked with kernels that do not poll the stage in
 *               flight (what the replay did before they polled: the exchange then
 *               moves only inside MPI_Waitall)
 *   window_ms   inside a call: from each stage's START to its WAIT's return
 *   nopoll_window_ms  the same inside a nopoll walk
 *   comm_ms     each stage's START and WAIT alone (nothing computed)
 *   comp_ms     the ops between each START and its WAIT alone (= localT_ms)
 *   overlap     (comm + comp - window) / min(comm, comp) of the best times: 1 when
 *               the exchange is fully hidden behind the multiply, 0 when they run one
 *               after the other (nopoll_overlap: the same with the nopoll window);
 *               overlap_med, nopoll_overlap_med: the medians of each repetition's own
 *               value (on a loaded machine a window also holds waits for a rank that
 *               was not running, and these go below 0)
 *   pack_ms, pack_GBs      the GATHER ops (B rows into S) alone; bytes read + written
 *   memcpy_GBs  memcpy of as many bytes as one call gathers (read + written), the bar
 *               for pack and unpack
 *   unpack_ms, unpack_GBs  the ADD ops (received partial rows into C) alone
 *   tag_*_ms    per op tag, the time inside a call (gather_b, partial_c, local, ...)
 *
 * --only call: call_ms alone; --only local: local1_ms and localT_ms alone.
 * --only ops: a profile of the call, per rank and per op: every rank prints (through rank 0) one
 * line per op, "bench-op rank=P op=O kind=K tag=T rows=.. entries=.. listed=0|1 accum=0|1 us=..",
 * us the op's mean time inside hooked calls (the best repetition's), then "bench-rank rank=P
 * call_us=.. compute_us=.. start_us=.. wait_us=..": where each rank's call goes.
 * One line per (dtype, N) on rank 0: "bench-cpu key=value ...". White-box: it
 * builds the runtime's sources in and drives the context's program directly. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "internal.h"

static const char *prog = "shiro-bench-cpu";

#define MAX_LIST 8
#define NTAGS 8

typedef struct options {
  const char *plan;
  int64_t n[MAX_LIST];
  int nn;
  int dt[MAX_LIST]; /* 1 double, 0 float */
  int ndt;
  int reps;
  double ms;
  int only; /* ONLY_ALL, ONLY_CALL (the call alone), ONLY_LOCAL (comp on 1 and T threads) */
} options;

enum { ONLY_ALL,
       ONLY_CALL,
       ONLY_LOCAL,
       ONLY_OPS };

static const char *tag_name[NTAGS] = {"none", "gather_b", "partial_c", "local", "remote_b", "add_c", "forward_b", "aggregate_c"};

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->reps = 5;
  o->ms = 200;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      if (o->plan) {
        fprintf(stderr, "%s: one plan only ('%s')\n", prog, a);
        return 0;
      }
      o->plan = a;
      continue;
    }
    if (!v) {
      fprintf(stderr, "%s: %s needs a value\n", prog, a);
      return 0;
    }
    i++;
    if (!strcmp(a, "--n") || !strcmp(a, "--dtype")) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (a[2] == 'n') {
          char *end = NULL;
          long long x = strtoll(t, &end, 10);
          if (o->nn >= MAX_LIST || *end || x < 1 || x > 4096) {
            fprintf(stderr, "%s: --n: bad value '%s'\n", prog, t);
            return 0;
          }
          o->n[o->nn++] = x;
        } else if (o->ndt < MAX_LIST && (!strcmp(t, "float") || !strcmp(t, "double"))) {
          o->dt[o->ndt++] = !strcmp(t, "double");
        } else {
          fprintf(stderr, "%s: --dtype: expected float or double, found '%s'\n", prog, t);
          return 0;
        }
      }
    } else if (!strcmp(a, "--reps")) {
      o->reps = atoi(v);
      if (o->reps < 1 || o->reps > 1000) {
        fprintf(stderr, "%s: --reps: expected 1 .. 1000, found '%s'\n", prog, v);
        return 0;
      }
    } else if (!strcmp(a, "--only")) {
      if (!strcmp(v, "all")) o->only = ONLY_ALL;
      else if (!strcmp(v, "call")) o->only = ONLY_CALL;
      else if (!strcmp(v, "local")) o->only = ONLY_LOCAL;
      else if (!strcmp(v, "ops")) o->only = ONLY_OPS;
      else {
        fprintf(stderr, "%s: --only: expected all, call, local or ops, found '%s'\n", prog, v);
        return 0;
      }
    } else if (!strcmp(a, "--ms")) {
      o->ms = atof(v);
      if (!(o->ms >= 1 && o->ms <= 60000)) {
        fprintf(stderr, "%s: --ms: expected 1 .. 60000, found '%s'\n", prog, v);
        return 0;
      }
    } else {
      fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
      return 0;
    }
  }
  if (!o->plan) {
    fprintf(stderr, "usage: mpirun -np R %s PLAN.h5 [--n 32[,64...]] [--dtype double[,float]] [--reps 5] [--ms 200]\n"
                    "       [--only all|call|local|ops]\n",
            prog);
    return 0;
  }
  if (!o->nn) o->n[o->nn++] = 32;
  if (!o->ndt) o->dt[o->ndt++] = 1;
  return 1;
}

/* What one sample runs. */
typedef enum part { P_CALL,
                    P_NOPOLL,
                    P_COMM,
                    P_COMP,
                    P_PACK,
                    P_UNPACK,
                    P_MEMCPY,
                    NPARTS } part;

typedef struct bench {
  shiro_ctx *c;
  const rt_program *p;
  void *B, *C;
  void *bufs[PROG_NBUF];
  char *cp_src, *cp_dst; /* memcpy's buffers (gather_bytes each) */
  size_t gather_bytes, unpack_bytes;
  double *t_op; /* [nops] time after each op of the last call (hook) */
  double t_start; /* time the last call began */
  double window, tag[NTAGS]; /* sums over the calls of a sample (hooked calls) */
  int hook_on;
} bench;

/* Frees what a bench holds: its matrices, copy buffers, op timings and context. */
static void bench_release(bench *b) {
  free(b->B);
  free(b->C);
  free(b->cp_src);
  free(b->cp_dst);
  free(b->t_op);
  shiro_ctx_destroy(&b->c);
}

static double now(void) { return MPI_Wtime(); }

/* interp_run's hook: the time after every op. */
static shiro_status hook(shiro_ctx *c, int64_t o, void *arg) {
  (void)c;
  ((bench *)arg)->t_op[o] = now();
  return SHIRO_OK;
}

/* Adds the last call's windows (START s to WAIT s) and per-tag times to b's sums. */
static void account(bench *b) {
  const rt_program *p = b->p;
  double start_before = 0;
  for (int64_t o = 0; o < p->nops; o++) {
    const double before = o ? b->t_op[o - 1] : b->t_start, dt = b->t_op[o] - before;
    const rt_op *op = &p->op[o];
    if (op->kind == RT_START) start_before = before;
    else if (op->kind == RT_WAIT) b->window += b->t_op[o] - start_before;
    else {
      int64_t tag = b->c->plan->pr.ops[op->index * PROG_OP_WIDTH + OPF_TAG];
      b->tag[tag >= 0 && tag < NTAGS ? tag : 0] += dt;
    }
  }
}

/* The program walked with the backend's table but kernels that never poll (the replay before it polled). */
static void walk_nopoll(bench *b) {
  shiro_ctx *c = b->c;
  const rt_program *p = b->p;
  for (int64_t o = 0; o < p->nops; o++) {
    const rt_op *op = &p->op[o];
    if (op->kind == RT_START) {
      if (op->stage < p->stages.nstages) (void)c->be->start(c, op->stage);
    } else if (op->kind == RT_WAIT) {
      if (op->stage < p->stages.nstages) (void)c->be->wait(c, op->stage);
    } else cpu_kernel_run(op, b->bufs[op->dst_buf], b->bufs[op->src_buf], c->opts.dtype == SHIRO_FLOAT64, c->opts.n, 0, NULL, NULL); /* 0: omp_set_num_threads decides */
    if (b->hook_on) b->t_op[o] = now();
  }
}

/* The ops of one class, alone: comm (START, WAIT), comp (between a START and its WAIT), pack, unpack. */
static void run_class(bench *b, part what) {
  shiro_ctx *c = b->c;
  const rt_program *p = b->p;
  int inside = 0;
  for (int64_t o = 0; o < p->nops; o++) {
    const rt_op *op = &p->op[o];
    if (op->kind == RT_START || op->kind == RT_WAIT) {
      inside = op->kind == RT_START;
      if (what == P_COMM && op->stage < p->stages.nstages)
        (void)(op->kind == RT_START ? c->be->start(c, op->stage) : c->be->wait(c, op->stage));
      continue;
    }
    const int run = (what == P_COMP && inside) || (what == P_PACK && op->kind == RT_GATHER) ||
        (what == P_UNPACK && op->kind == RT_ADD);
    if (run) cpu_kernel_run(op, b->bufs[op->dst_buf], b->bufs[op->src_buf], c->opts.dtype == SHIRO_FLOAT64, c->opts.n, 0, NULL, NULL); /* 0: omp_set_num_threads decides */
  }
}

/* One call of part `what`. */
static int once(bench *b, part what) {
  switch (what) {
    case P_CALL:
      b->t_start = now();
      if (interp_run(b->c, RT_FORWARD, b->B, b->C, b->hook_on ? hook : NULL, b) != SHIRO_OK) return 1;
      if (b->hook_on) account(b);
      return 0;
    case P_NOPOLL:
      b->t_start = now();
      walk_nopoll(b);
      if (b->hook_on) account(b);
      return 0;
    case P_MEMCPY:
      memcpy(b->cp_dst, b->cp_src, b->gather_bytes);
      return 0;
    default:
      run_class(b, what);
      return 0;
  }
}

/* The slowest rank's mean time per call over `calls` calls (all ranks run the same count). */
static double sample(bench *b, part what, int64_t calls, int *bad) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = now();
  for (int64_t i = 0; i < calls && !*bad; i++) *bad |= once(b, what);
  t = (now() - t) / (double)calls;
  double tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

/* Calls per sample so that one takes about ms milliseconds (the same on every rank). Two untimed
 * calls first, then as many calls as last 2 ms or more (doubled until they do): a first call is cold
 * (caches, the transport's first messages), and a count taken from it makes samples short, which on
 * a shared machine a preemption misses more often. The peers (peer_petsc.c, peer_graphblas.c) count
 * the same way, so that the contenders' samples are equally long. */
static int64_t calls_for(bench *b, part what, double ms, int *bad) {
  (void)sample(b, what, 2, bad);
  int64_t k = 1;
  double t = sample(b, what, k, bad);
  while (t * (double)k < 2e-3 && k < 100000 && !*bad) t = sample(b, what, k *= 2, bad);
  int64_t calls = t > 0 ? (int64_t)(ms * 1e-3 / t) : 1000;
  return calls < 1 ? 1 : calls > 100000 ? 100000
                                        : calls;
}

/* The least of v[0 .. n-1]. */
static double minimum(const double *v, int n) {
  double m = HUGE_VAL;
  for (int i = 0; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0 .. n-1] (sorts v). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Fills count values at p with ±(1 + h/256), h a hash of (seed, index): exact in float and double. */
static void fill(void *p, int64_t count, int is_double, uint64_t seed) {
  for (int64_t i = 0; i < count; i++) {
    uint64_t h = ((uint64_t)i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    const double v = ((h & 256) ? 1 : -1) * (1.0 + (double)(h & 255) / 256.0);
    if (is_double) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
  }
}

/* Bytes the GATHER ops move (read + written) and the ADD ops (rows read, rows read and written). */
static void count_bytes(bench *b) {
  const size_t row = (size_t)b->c->opts.n * b->c->esz;
  b->gather_bytes = b->unpack_bytes = 0;
  for (int64_t o = 0; o < b->p->nops; o++) {
    const rt_op *op = &b->p->op[o];
    if (op->kind == RT_GATHER) b->gather_bytes += 2 * (size_t)op->nrows * row;
    if (op->kind == RT_ADD)
      b->unpack_bytes += ((size_t)(op->ptr[op->nrows] - op->ptr[0]) + (size_t)op->nrows * (op->accum ? 2 : 1)) * row;
  }
}

/* --only ops: each op's mean time inside hooked calls, per rank (the best of reps repetitions of
 * `calls` calls each), printed by rank 0 rank after rank. Returns nonzero on failure. */
static int profile_ops(bench *b, int reps, int64_t calls, int rank, int R) {
  const rt_program *p = b->p;
  const int64_t nops = p->nops;
  double *sum = calloc((size_t)(nops + 1), sizeof *sum), *best = malloc((size_t)(nops + 1) * sizeof *best);
  int bad = !sum || !best, anybad = 0;
  for (int64_t o = 0; !bad && o <= nops; o++) best[o] = HUGE_VAL;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (int r = 0; !anybad && r < reps; r++) {
    memset(sum, 0, (size_t)(nops + 1) * sizeof *sum);
    MPI_Barrier(MPI_COMM_WORLD);
    b->hook_on = 1;
    for (int64_t i = 0; i < calls && !bad; i++) {
      b->t_start = now();
      bad = interp_run(b->c, RT_FORWARD, b->B, b->C, hook, b) != SHIRO_OK;
      for (int64_t o = 0; o < nops; o++) sum[o] += b->t_op[o] - (o ? b->t_op[o - 1] : b->t_start);
      sum[nops] += (nops ? b->t_op[nops - 1] : b->t_start) - b->t_start;
    }
    b->hook_on = 0;
    if (sum[nops] < best[nops]) memcpy(best, sum, (size_t)(nops + 1) * sizeof *sum); /* the fastest repetition's */
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  static const char *kind_name[] = {"start", "wait", "multiply", "gather", "add"};
  for (int q = 0; !anybad && q < R; q++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (q != rank) continue;
    double t_kind[5] = {0};
    for (int64_t o = 0; o < nops; o++) {
      const rt_op *op = &p->op[o];
      const double us = 1e6 * best[o] / (double)calls;
      t_kind[op->kind] += us;
      if (op->kind == RT_START || op->kind == RT_WAIT)
        printf("bench-op rank=%d op=%lld kind=%s stage=%d us=%.2f\n", rank, (long long)o, kind_name[op->kind], op->stage, us);
      else
        printf("bench-op rank=%d op=%lld kind=%s tag=%s rows=%lld entries=%lld listed=%d accum=%d us=%.2f\n", rank,
               (long long)o, kind_name[op->kind], tag_name[b->c->plan->pr.ops[op->index * PROG_OP_WIDTH + OPF_TAG] & (NTAGS - 1)],
               (long long)op->nrows, (long long)(op->ptr[op->nrows] - op->ptr[0]), op->rows != NULL, op->accum, us);
    }
    printf("bench-rank rank=%d call_us=%.2f compute_us=%.2f start_us=%.2f wait_us=%.2f\n", rank,
           1e6 * best[nops] / (double)calls, t_kind[RT_MULTIPLY] + t_kind[RT_GATHER] + t_kind[RT_ADD], t_kind[RT_START],
           t_kind[RT_WAIT]);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(sum);
  free(best);
  return anybad;
}

/* One (dtype, N): every part, best of reps, printed by rank 0. Returns 0 on success. */
static int run_one(shiro_plan *plan, const options *o, int is_double, int64_t n, int rank) {
  shiro_ctx_options co = shiro_ctx_options_default();
  co.dtype = is_double ? SHIRO_FLOAT64 : SHIRO_FLOAT32;
  co.n = n;
  co.threads = omp_get_max_threads(); /* T, as the report says (not the library's automatic share) */
  shiro_error err = {{0}};
  bench b;
  memset(&b, 0, sizeof b);
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &co, &b.c, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    return 1;
  }
  const prog_rank *pr = &plan->pr;
  const size_t esz = is_double ? 8 : 4;
  b.p = &b.c->prog[RT_FORWARD];
  count_bytes(&b);
  b.B = malloc((size_t)(pr->b_rows ? pr->b_rows : 1) * (size_t)n * esz);
  b.C = malloc((size_t)(pr->c_rows ? pr->c_rows : 1) * (size_t)n * esz);
  b.cp_src = malloc(b.gather_bytes / 2 + 1);
  b.cp_dst = malloc(b.gather_bytes / 2 + 1);
  b.t_op = calloc((size_t)(b.p->nops ? b.p->nops : 1), sizeof *b.t_op);
  int bad = !b.B || !b.C || !b.cp_src || !b.cp_dst || !b.t_op, anybad = 0;
  if (!bad) {
    fill(b.B, pr->b_rows * n, is_double, 1);
    memset(b.C, 0, (size_t)pr->c_rows * (size_t)n * esz);
    memset(b.cp_src, 1, b.gather_bytes / 2 + 1);
    memset(b.cp_dst, 0, b.gather_bytes / 2 + 1);
    b.bufs[PROG_BUF_B] = b.B;
    b.bufs[PROG_BUF_C] = b.C;
    b.bufs[PROG_BUF_S] = b.c->buf[PROG_BUF_S];
    b.bufs[PROG_BUF_R] = b.c->buf[PROG_BUF_R];
    b.gather_bytes /= 2; /* memcpy copies this many (reads as many) */
  }
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!anybad && o->only == ONLY_OPS) {
    int R = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    const int64_t calls = calls_for(&b, P_CALL, o->ms, &bad);
    anybad = bad || profile_ops(&b, o->reps, calls, rank, R);
    bench_release(&b);
    return anybad;
  }
  enum { WIN = NPARTS,
         WIN0,
         LOCAL1,
         NSERIES };
  double *t[NSERIES], *ov = calloc((size_t)o->reps, sizeof *ov), *ov0 = calloc((size_t)o->reps, sizeof *ov0), tag[NTAGS];
  for (int i = 0; i < NSERIES; i++) t[i] = calloc((size_t)o->reps, sizeof *t[i]);
  for (int i = 0; i < NTAGS; i++) tag[i] = HUGE_VAL;
  const int threads = omp_get_max_threads(), all_parts = o->only == ONLY_ALL;
  int want[NPARTS];
  for (int w = 0; w < NPARTS; w++)
    want[w] = all_parts || (o->only == ONLY_CALL && w == P_CALL) || (o->only == ONLY_LOCAL && w == P_COMP);
  int64_t calls[NPARTS];
  for (int w = 0; !anybad && w < NPARTS; w++) calls[w] = want[w] ? calls_for(&b, (part)w, o->ms, &bad) : 0;
  for (int i = 0; i < NSERIES; i++)
    for (int r = 0; r < o->reps; r++) t[i][r] = HUGE_VAL;
  /* the parts alternate within each repetition, so that a slow spell of a shared machine hits them all */
  for (int r = 0; !anybad && r < o->reps; r++) {
    for (int w = 0; w < NPARTS && !bad; w++)
      if (want[w]) t[w][r] = sample(&b, (part)w, calls[w], &bad);
    for (int w = 0; all_parts && w < 2 && !bad; w++) { /* windows and per-tag times, inside hooked calls */
      b.hook_on = 1;
      b.window = 0;
      memset(b.tag, 0, sizeof b.tag);
      (void)sample(&b, w ? P_NOPOLL : P_CALL, calls[w], &bad);
      b.hook_on = 0;
      double mine[1 + NTAGS], all[1 + NTAGS];
      mine[0] = b.window / (double)calls[w];
      for (int i = 0; i < NTAGS; i++) mine[1 + i] = b.tag[i] / (double)calls[w];
      MPI_Allreduce(mine, all, 1 + NTAGS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[w ? WIN0 : WIN][r] = all[0];
      for (int i = 0; w == 0 && i < NTAGS; i++)
        if (all[1 + i] < tag[i]) tag[i] = all[1 + i];
    }
    if (want[P_COMP]) {
      omp_set_num_threads(1);
      t[LOCAL1][r] = sample(&b, P_COMP, calls[P_COMP], &bad);
      omp_set_num_threads(threads);
    }
    /* this repetition's overlap, from its own samples (medians of these are printed) */
    const double comm = t[P_COMM][r], comp = t[P_COMP][r], lo = comm < comp ? comm : comp;
    ov[r] = lo > 0 ? (comm + comp - t[WIN][r]) / lo : 0;
    ov0[r] = lo > 0 ? (comm + comp - t[WIN0][r]) / lo : 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  if (!anybad && rank == 0) {
    double best[NSERIES];
    for (int i = 0; i < NSERIES; i++) best[i] = minimum(t[i], o->reps);
    printf("bench-cpu plan=%s ranks=%d threads=%d dtype=%s n=%lld", o->plan, plan->meta.ranks, threads,
           is_double ? "double" : "float", (long long)n);
    if (want[P_CALL]) printf(" call_ms=%.4f", 1e3 * best[P_CALL]);
    if (want[P_COMP]) printf(" local1_ms=%.4f localT_ms=%.4f", 1e3 * best[LOCAL1], 1e3 * best[P_COMP]);
    if (all_parts) {
      printf(" nopoll_ms=%.4f window_ms=%.4f nopoll_window_ms=%.4f comm_ms=%.4f comp_ms=%.4f", 1e3 * best[P_NOPOLL],
             1e3 * best[WIN], 1e3 * best[WIN0], 1e3 * best[P_COMM], 1e3 * best[P_COMP]);
      if (b.p->stages.nx > 0) { /* from the best times (what a quiet machine gives), and the medians of each repetition's */
        const double lo = best[P_COMM] < best[P_COMP] ? best[P_COMM] : best[P_COMP];
        printf(" overlap=%.3f nopoll_overlap=%.3f overlap_med=%.3f nopoll_overlap_med=%.3f",
               (best[P_COMM] + best[P_COMP] - best[WIN]) / lo, (best[P_COMM] + best[P_COMP] - best[WIN0]) / lo,
               median(ov, o->reps), median(ov0, o->reps));
      }
      if (b.gather_bytes)
        printf(" pack_ms=%.4f pack_GBs=%.2f memcpy_GBs=%.2f", 1e3 * best[P_PACK],
               2.0 * (double)b.gather_bytes / best[P_PACK] / 1e9, 2.0 * (double)b.gather_bytes / best[P_MEMCPY] / 1e9);
      if (b.unpack_bytes)
        printf(" unpack_ms=%.4f unpack_GBs=%.2f", 1e3 * best[P_UNPACK], (double)b.unpack_bytes / best[P_UNPACK] / 1e9);
      for (int i = 1; i < NTAGS; i++)
        if (tag[i] > 0) printf(" tag_%s_ms=%.4f", tag_name[i], 1e3 * tag[i]);
    }
    printf("\n");
    fflush(stdout);
  }
  for (int i = 0; i < NSERIES; i++) free(t[i]);
  free(ov);
  free(ov0);
  bench_release(&b);
  return anybad;
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
  int bad = shiro_plan_open(o.plan, rank, &plan, &err) != SHIRO_OK, anybad = 0;
  if (bad) fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  rc = anybad;
  for (int d = 0; !rc && d < o.ndt; d++)
    for (int j = 0; !rc && j < o.nn; j++) rc = run_one(plan, &o, o.dt[d], o.n[j], rank);
  shiro_plan_close(&plan);
  MPI_Finalize();
  return rc;
}
