/* sim_backend.c — the simulation backend: the CPU backend under a modelled GPU clock.
 *
 * Built only into the simulation build (tools/sim/simulate.sh compiles libshiro
 * and shiro-spmm with SimGrid's smpicc, SHIRO_HAVE_SIM 1); the normal build
 * neither compiles it nor depends on SimGrid. Every entry of the table runs
 * the CPU backend's (cpu_backend: its buffers, its kernels, its MPI
 * transport over mpi_xport), so the real bytes go through the real exchanges
 * and --check holds, and adds:
 *
 *   compute ops  with SHIRO_SIM_COMPUTE=model, the op's modelled GPU time is
 *                charged to the simulated host (smpi_execute_flops of that
 *                time at the host's speed); with none (the default) compute
 *                is free. smpirun runs with smpi/simulate-computation:no, so
 *                the time this machine takes for the CPU kernels is never
 *                charged either way;
 *   start, wait  the simulated clock (MPI_Wtime) is read at each stage's
 *                start, at the entry of its wait and when the wait returns;
 *   finish       with SHIRO_SIM_REPORT=DIR, this rank's record of every call
 *                so far is rewritten to DIR/rank<r>-n<N>-<float|double>.json
 *                (tools/sim/simulate.py reads them; README there).
 *
 * The model (tools/README.md, "Simulation", says where the numbers come from):
 *   multiply  2 · entries · N flops at the SpMM rate for N and the value type:
 *             SHIRO_SIM_SPMM_FLOAT / SHIRO_SIM_SPMM_DOUBLE, "N:TFLOP/s,..."
 *             (default the H200's cuSPARSE rates), interpolated (sim_rate);
 *   gather    2 · rows · row bytes (read and write) at SHIRO_SIM_HBM_TBPS;
 *   add       (entries + rows, + rows again when it accumulates) · row bytes;
 *   each op   plus SHIRO_SIM_LAUNCH_US (default 0).
 * The state of the CPU backend lives inside this one's (sim_state.cpu) and is
 * put in c->state around every call into the CPU backend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/host.h>
#include <smpi/smpi.h>

#include "internal.h"

enum {
  SIM_MAX_CALLS = 64, /* calls recorded (later ones are counted, not recorded) */
  SIM_MAX_STAGES = 8, /* stages recorded per call (plans have 1 or 2) */
  SIM_SEGS = 2 * SIM_MAX_STAGES + 1, /* compute segments: before START 0, then after each START / WAIT */
  SIM_MAX_POINTS = 16 /* anchors of an SpMM rate table */
};

/* What one compute op is, for the per-kind totals. */
enum { SK_LOCAL,
       SK_PARTIAL,
       SK_REMOTE,
       SK_GATHER,
       SK_ADD,
       SK_COUNT };
static const char *const kind_names[SK_COUNT] = {"local_multiply", "partial_multiply", "remote_multiply", "gather",
                                                 "add"};

/* One call on the simulated clock (seconds of MPI_Wtime). */
typedef struct sim_call {
  int dir; /* RT_FORWARD or RT_TRANSPOSE */
  int nstages; /* stages of its program (at most SIM_MAX_STAGES recorded) */
  double begin, end; /* entry of the first op, return of the last */
  double start[SIM_MAX_STAGES]; /* START s issued */
  double wait[SIM_MAX_STAGES]; /* WAIT s entered */
  double done[SIM_MAX_STAGES]; /* WAIT s returned */
  double seg[SIM_SEGS]; /* modelled compute charged in each segment */
  double kind[SK_COUNT]; /* modelled compute by kind of op */
} sim_call;

typedef struct sim_state {
  void *cpu; /* the CPU backend's state (owned; its destroy frees it) */
  int model; /* 1: charge modelled GPU time; 0: compute is free */
  double flops_per_s; /* SpMM rate for this context's N and type */
  double bytes_per_s; /* HBM rate of gathers and adds */
  double launch_s; /* charged per compute op */
  double host_speed; /* flop/s of this rank's simulated host */
  char report[SHIRO_MSG_LEN]; /* the record's path, "" for none */
  int rank;
  int seg; /* current segment of the call in progress */
  int64_t calls; /* calls finished (all, recorded or not) */
  sim_call now; /* the call in progress */
  sim_call call[SIM_MAX_CALLS];
} sim_state;

/* ---- the model's numbers ---- */

/* Parses "N:TFLOP/s,N:TFLOP/s,..." (N increasing) into n[]/r[] (flop/s).
 * Returns the number of anchors, 0 if malformed. */
static int parse_rates(const char *text, double *n, double *r) {
  int k = 0;
  const char *s = text;
  while (*s && k < SIM_MAX_POINTS) {
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != ':') return 0;
    s = end + 1;
    double y = strtod(s, &end);
    if (end == s || !(x >= 1) || !(y > 0) || (k && !(x > n[k - 1]))) return 0;
    n[k] = x;
    r[k++] = y * 1e12;
    s = end;
    if (*s == ',') s++;
    else if (*s) return 0;
  }
  return *s ? 0 : k;
}

/* The SpMM rate at N from k anchors: linear in log2 N between two anchors;
 * below the smallest, proportional to N (the time per nonzero of the
 * smallest anchor: A's indices, not B's columns, bound it there); above the
 * largest, that rate (B rows are read at full width already). */
static double sim_rate(const double *n, const double *r, int k, double N) {
  if (N <= n[0]) return r[0] * N / n[0];
  for (int i = 0; i + 1 < k; i++)
    if (N <= n[i + 1]) {
      double f = (log2(N) - log2(n[i])) / (log2(n[i + 1]) - log2(n[i]));
      return r[i] + f * (r[i + 1] - r[i]);
    }
  return r[k - 1];
}

/* A positive number from the environment variable `name` (default def). */
static int env_number(const char *name, double def, double *out, char *msg) {
  const char *v = getenv(name);
  char *end = NULL;
  *out = def;
  if (!v || !*v) return 1;
  *out = strtod(v, &end);
  if (end != v && !*end && *out >= 0 && isfinite(*out)) return 1;
  snprintf(msg, SHIRO_MSG_LEN, "%s='%s': expected a number >= 0", name, v);
  return 0;
}

/* Reads the model from the environment into z for N values of type dt. */
static shiro_status read_model(sim_state *z, int64_t N, shiro_dtype dt, char *msg) {
  const char *compute = getenv("SHIRO_SIM_COMPUTE");
  if (!compute || !*compute || !strcmp(compute, "none")) z->model = 0;
  else if (!strcmp(compute, "model")) z->model = 1;
  else {
    snprintf(msg, SHIRO_MSG_LEN, "SHIRO_SIM_COMPUTE='%s': expected none or model", compute);
    return SHIRO_ERR_ARG;
  }
  /* cuSPARSE CSR x row-major dense (ALG2) on the H200, R-MAT scale 22 (ENVIRONMENT.md §8) */
  /* the 16-bit types compute in float32: float's rates (their halved bytes count in the memory terms) */
  const char *name = dt != SHIRO_FLOAT64 ? "SHIRO_SIM_SPMM_FLOAT" : "SHIRO_SIM_SPMM_DOUBLE";
  const char *table = getenv(name);
  if (!table || !*table) table = dt != SHIRO_FLOAT64 ? "32:1.22,64:1.65,128:2.39" : "32:0.77,64:1.15,128:1.16";
  double n[SIM_MAX_POINTS], r[SIM_MAX_POINTS];
  int k = parse_rates(table, n, r);
  if (!k) {
    snprintf(msg, SHIRO_MSG_LEN, "%s='%.200s': expected N:TFLOP/s pairs, N increasing, e.g. 32:0.95,64:1.65", name,
             table);
    return SHIRO_ERR_ARG;
  }
  z->flops_per_s = sim_rate(n, r, k, (double)N);
  double tbps = 0, launch_us = 0;
  if (!env_number("SHIRO_SIM_HBM_TBPS", 3.0, &tbps, msg) || !env_number("SHIRO_SIM_LAUNCH_US", 0, &launch_us, msg))
    return SHIRO_ERR_ARG;
  if (!(tbps > 0)) {
    snprintf(msg, SHIRO_MSG_LEN, "SHIRO_SIM_HBM_TBPS must be more than 0");
    return SHIRO_ERR_ARG;
  }
  z->bytes_per_s = tbps * 1e12;
  z->launch_s = launch_us * 1e-6;
  return SHIRO_OK;
}

/* Modelled GPU seconds of compute op `op`; *kind says which total it adds to. */
static double op_seconds(const sim_state *z, const shiro_ctx *c, const rt_op *op, int *kind) {
  const double entries = (double)(op->ptr[op->nrows] - op->ptr[0]), rows = (double)op->nrows;
  const double row_bytes = (double)c->n * (double)c->esz; /* the call's width */
  const int app_src = op->src_buf == PROG_BUF_B || op->src_buf == PROG_BUF_C;
  const int app_dst = op->dst_buf == PROG_BUF_B || op->dst_buf == PROG_BUF_C;
  double t = z->launch_s;
  switch (op->kind) {
    case RT_MULTIPLY:
      *kind = app_src && app_dst ? SK_LOCAL : app_src ? SK_PARTIAL
                                                      : SK_REMOTE;
      return t + 2.0 * entries * (double)c->n / z->flops_per_s;
    case RT_GATHER:
      *kind = SK_GATHER;
      return t + 2.0 * rows * row_bytes / z->bytes_per_s;
    default:
      *kind = SK_ADD;
      return t + (entries + rows * (op->accum ? 2.0 : 1.0)) * row_bytes / z->bytes_per_s;
  }
}

/* ---- calls into the CPU backend, with its state in place ---- */

#define CPU_CALL(c, z, expr) \
  do {                       \
    (c)->state = (z)->cpu;   \
    st = (expr);             \
    (z)->cpu = (c)->state;   \
    (c)->state = (z);        \
  } while (0)

/* ---- the record ---- */

/* Writes this rank's record (every recorded call) to z->report. */
static shiro_status write_report(const sim_state *z, shiro_ctx *c) {
  FILE *f = fopen(z->report, "w");
  if (!f) {
    snprintf(c->error, sizeof c->error, "cannot write the simulation record %.400s", z->report);
    return SHIRO_ERR_IO;
  }
  const rt_stages *sg = &c->prog[RT_FORWARD].stages;
  fprintf(f, "{\"rank\": %d, \"n\": %lld, \"dtype\": \"%s\", \"compute\": \"%s\", \"spmm_flops_per_s\": %.17g, "
             "\"hbm_bytes_per_s\": %.17g, \"launch_s\": %.17g, \"calls_total\": %lld, \"stages\": [",
          z->rank, (long long)c->opts.n, c->opts.dtype == SHIRO_FLOAT32 ? "float" : c->opts.dtype == SHIRO_FLOAT64 ? "double"
                                                                                                                   : ctx_dtype_name(c->opts.dtype),
          z->model ? "model" : "none",
          z->flops_per_s, z->bytes_per_s, z->launch_s, (long long)z->calls);
  for (int32_t s = 0; s < sg->nstages; s++) { /* what this rank sends in each stage of the forward program */
    int64_t msgs = 0, rows = 0, inter = 0;
    for (int64_t i = sg->stage[s].x_first; i < sg->stage[s].x_first + sg->stage[s].nx; i++)
      if (sg->xs[i][XF_DIR] == 0) {
        msgs++;
        rows += sg->xs[i][XF_COUNT];
        inter += sg->xs[i][XF_TIER] ? sg->xs[i][XF_COUNT] : 0;
      }
    fprintf(f, "%s{\"messages_sent\": %lld, \"rows_sent\": %lld, \"inter_node_rows_sent\": %lld}", s ? ", " : "",
            (long long)msgs, (long long)rows, (long long)inter);
  }
  fprintf(f, "], \"calls\": [");
  for (int64_t k = 0; k < z->calls && k < SIM_MAX_CALLS; k++) {
    const sim_call *x = &z->call[k];
    fprintf(f, "%s\n{\"dir\": %d, \"begin\": %.17g, \"end\": %.17g, \"stages\": [", k ? "," : "", x->dir, x->begin,
            x->end);
    for (int s = 0; s < x->nstages && s < SIM_MAX_STAGES; s++)
      fprintf(f, "%s[%.17g, %.17g, %.17g]", s ? ", " : "", x->start[s], x->wait[s], x->done[s]);
    fprintf(f, "], \"compute_by_segment\": [");
    for (int g = 0; g < 2 * x->nstages + 1 && g < SIM_SEGS; g++) fprintf(f, "%s%.17g", g ? ", " : "", x->seg[g]);
    fprintf(f, "], \"compute_by_kind\": {");
    for (int q = 0; q < SK_COUNT; q++) fprintf(f, "%s\"%s\": %.17g", q ? ", " : "", kind_names[q], x->kind[q]);
    fprintf(f, "}}");
  }
  fprintf(f, "]}\n");
  if (ferror(f) | (fclose(f) != 0)) {
    snprintf(c->error, sizeof c->error, "writing the simulation record %.400s failed", z->report);
    return SHIRO_ERR_IO;
  }
  return SHIRO_OK;
}

/* ---- the table ---- */

static void sim_destroy(shiro_ctx *c) {
  sim_state *z = c->state;
  if (!z) return;
  c->state = z->cpu;
  cpu_backend.destroy(c);
  free(z);
  c->state = NULL;
}

static shiro_status sim_setup(shiro_ctx *c) {
  sim_state *z = calloc(1, sizeof *z);
  if (!z) {
    snprintf(c->error, sizeof c->error, "out of memory (simulation state)");
    return SHIRO_ERR_NOMEM;
  }
  shiro_status st = SHIRO_OK;
  c->state = NULL;
  st = cpu_backend.setup(c); /* its state, even partial, is kept for sim_destroy */
  z->cpu = c->state;
  c->state = z;
  if (st != SHIRO_OK) return st;
  MPI_Comm_rank(c->comm, &z->rank);
  z->host_speed = sg_host_get_speed(sg_host_self());
  const char *dir = getenv("SHIRO_SIM_REPORT");
  if (dir && *dir)
    snprintf(z->report, sizeof z->report, "%.400s/rank%d-n%lld-%s.json", dir, z->rank, (long long)c->opts.n,
             c->opts.dtype == SHIRO_FLOAT32 ? "float" : c->opts.dtype == SHIRO_FLOAT64 ? "double"
                                                                                       : ctx_dtype_name(c->opts.dtype));
  return read_model(z, c->opts.n, c->opts.dtype, c->error);
}

static shiro_status sim_load(shiro_ctx *c, int d) {
  sim_state *z = c->state;
  shiro_status st;
  CPU_CALL(c, z, cpu_backend.load(c, d));
  return st;
}

/* Runs compute op `op` on the CPU (the real result), then charges its modelled time. */
static shiro_status sim_compute(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  sim_state *z = c->state;
  shiro_status st;
  if (op->kind == RT_MULTIPLY) CPU_CALL(c, z, cpu_backend.multiply(c, op, bufs));
  else if (op->kind == RT_GATHER) CPU_CALL(c, z, cpu_backend.gather(c, op, bufs));
  else CPU_CALL(c, z, cpu_backend.add(c, op, bufs));
  if (st != SHIRO_OK || !z->model) return st;
  int kind = SK_ADD;
  double t = op_seconds(z, c, op, &kind);
  z->now.seg[z->seg] += t;
  z->now.kind[kind] += t;
  if (t > 0) smpi_execute_flops(t * z->host_speed);
  return SHIRO_OK;
}

static shiro_status sim_start(shiro_ctx *c, int32_t stage) {
  sim_state *z = c->state;
  shiro_status st;
  if (stage < SIM_MAX_STAGES) z->now.start[stage] = MPI_Wtime();
  if (z->seg + 1 < SIM_SEGS) z->seg++;
  CPU_CALL(c, z, cpu_backend.start(c, stage));
  return st;
}

static shiro_status sim_wait(shiro_ctx *c, int32_t stage) {
  sim_state *z = c->state;
  shiro_status st;
  if (stage < SIM_MAX_STAGES) z->now.wait[stage] = MPI_Wtime();
  CPU_CALL(c, z, cpu_backend.wait(c, stage));
  if (stage < SIM_MAX_STAGES) z->now.done[stage] = MPI_Wtime();
  if (z->seg + 1 < SIM_SEGS) z->seg++;
  return st;
}

static shiro_status sim_begin(shiro_ctx *c) {
  sim_state *z = c->state;
  shiro_status st = SHIRO_OK;
  if (cpu_backend.begin) CPU_CALL(c, z, cpu_backend.begin(c));
  memset(&z->now, 0, sizeof z->now);
  z->now.dir = c->dir;
  z->now.nstages = c->prog[c->dir].stages.nstages;
  z->seg = 0;
  z->now.begin = MPI_Wtime();
  return st;
}

static shiro_status sim_finish(shiro_ctx *c, shiro_status st) {
  sim_state *z = c->state;
  if (cpu_backend.finish) CPU_CALL(c, z, cpu_backend.finish(c, st));
  if (st != SHIRO_OK) return st;
  z->now.end = MPI_Wtime();
  if (z->calls < SIM_MAX_CALLS) z->call[z->calls] = z->now;
  z->calls++;
  return z->report[0] ? write_report(z, c) : SHIRO_OK;
}

static shiro_status sim_multiply(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  return sim_compute(c, op, bufs);
}
static shiro_status sim_gather(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  return sim_compute(c, op, bufs);
}
static shiro_status sim_add(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  return sim_compute(c, op, bufs);
}

const backend sim_backend = {
    .name = "sim",
    .setup = sim_setup,
    .load = sim_load,
    .multiply = sim_multiply,
    .gather = sim_gather,
    .add = sim_add,
    .start = sim_start,
    .wait = sim_wait,
    .begin = sim_begin,
    .finish = sim_finish,
    .destroy = sim_destroy,
};
