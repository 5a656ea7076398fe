/* ctx.c — context lifecycle: checks against the launch, buffers, persistent requests. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"
#include "shiro_config.h"

shiro_ctx_options shiro_ctx_options_default(void) {
  shiro_ctx_options o = {.backend = SHIRO_BACKEND_CPU, .dtype = SHIRO_FLOAT64, .n = 1, .device = -1, .transport = SHIRO_TRANSPORT_AUTO, .threads = 0};
  return o;
}

/* Local checks of the options and the launch against the plan. */
static shiro_status check_launch(shiro_plan *plan, MPI_Comm comm, const shiro_ctx_options *o, shiro_error *err) {
  int size = 0, rank = 0;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot query the communicator");
  if (size != plan->meta.ranks)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "the plan was made for %d ranks but the communicator has %d (launch with -np %d)",
                      plan->meta.ranks, size, plan->meta.ranks);
  if (rank != plan->pr.rank)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "rank %d opened the plan part of rank %d", rank, plan->pr.rank);
  if (o->dtype != SHIRO_FLOAT32 && o->dtype != SHIRO_FLOAT64 && o->dtype != SHIRO_BFLOAT16 && o->dtype != SHIRO_FLOAT16)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: unknown dtype %d (expected SHIRO_FLOAT32, SHIRO_FLOAT64, "
                                          "SHIRO_BFLOAT16 or SHIRO_FLOAT16)",
                      (int)o->dtype);
  if (o->n < 1 || o->n > INT_MAX)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: N = %lld, expected 1 .. %d", (long long)o->n, INT_MAX);
#if !SHIRO_HAVE_CUDA
  if (o->backend == SHIRO_BACKEND_CUDA)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "shiro_ctx_create: this libshiro was built without CUDA (meson -Dcuda=enabled)");
#endif
#if !SHIRO_HAVE_SIM
  if (o->backend == SHIRO_BACKEND_SIM)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "shiro_ctx_create: the sim backend exists only in the simulation build "
                                                  "(tools/sim/simulate.sh builds libshiro against SimGrid)");
#endif
  if (o->backend != SHIRO_BACKEND_CPU && o->backend != SHIRO_BACKEND_CUDA && o->backend != SHIRO_BACKEND_SIM)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: unknown backend %d", (int)o->backend);
  if (o->threads < 0)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: threads = %d, expected 0 (automatic) or more", o->threads);
  if (o->timeout_ms < 0)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: timeout_ms = %lld, expected 0 (none) or more", (long long)o->timeout_ms);
  if (plan->pattern_mismatch)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "rank %d: the plan was made for another matrix (shiro_plan_check_pattern)", rank);
  if (!plan->checked) { /* once per plan: every array's checksum, then every index against its bounds */
    shiro_status st = plan_verify_checksums(&plan->pr, err);
    if (st == SHIRO_OK) st = plan_check_rank(&plan->meta, &plan->pr, err);
    if (st != SHIRO_OK) return st;
    plan->checked = 1;
  }
  return SHIRO_OK;
}

/* Per-call traffic of this rank, from its exchange records. */
static void count_traffic(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
    if (r[XF_DIR] == 0) {
      c->traffic.rows_sent += r[XF_COUNT];
      if (r[XF_TIER]) c->traffic.inter_node_rows_sent += r[XF_COUNT];
    } else {
      c->traffic.rows_received += r[XF_COUNT];
    }
  }
  c->traffic.bytes_sent = c->traffic.rows_sent * c->opts.n * (int64_t)c->esz;
  c->traffic.bytes_received = c->traffic.rows_received * c->opts.n * (int64_t)c->esz;
}

const char *ctx_dtype_name(int64_t d) {
  return d == SHIRO_FLOAT32 ? "float32" : d == SHIRO_FLOAT64 ? "float64"
      : d == SHIRO_BFLOAT16                                  ? "bfloat16"
      : d == SHIRO_FLOAT16                                   ? "float16"
                                                             : "an unknown type";
}
static const char *backend_name(int64_t b) { return b == SHIRO_BACKEND_CUDA ? "cuda" : b == SHIRO_BACKEND_SIM ? "sim"
                                                                                                              : "cpu"; }

/* The ranks must make the same context: N, value type, backend and transport
 * are compared across comm (one MPI_Allreduce), and every rank gets the same
 * status and message. Collective; opts already checked locally. */
static shiro_status agree_options(MPI_Comm comm, const shiro_ctx_options *o, shiro_error *err) {
  enum { K = 4 };
  const int64_t mine[K] = {o->n, o->dtype, o->backend, o->transport};
  int64_t in[2 * K], lo[2 * K];
  for (int i = 0; i < K; i++) {
    in[i] = mine[i];
    in[K + i] = -mine[i]; /* the minimum of the negations is the maximum */
  }
  if (MPI_Allreduce(in, lo, 2 * K, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: MPI_Allreduce of the options failed");
  const int64_t *hi_neg = lo + K;
  if (lo[0] != -hi_neg[0])
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: the ranks asked for different N (from %lld to %lld); every rank must pass the same N",
                      (long long)lo[0], (long long)-hi_neg[0]);
  if (lo[1] != -hi_neg[1])
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: the ranks asked for different value types (%s and %s)",
                      ctx_dtype_name(lo[1]), ctx_dtype_name(-hi_neg[1]));
  if (lo[2] != -hi_neg[2])
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: the ranks asked for different backends (%s and %s)",
                      backend_name(lo[2]), backend_name(-hi_neg[2]));
  if (lo[3] != -hi_neg[3])
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: the ranks asked for different transports (%lld and %lld)",
                      (long long)lo[3], (long long)-hi_neg[3]);
  return SHIRO_OK;
}

/* rt_agree with the message in a shiro_error (never NULL here: shiro_ctx_create lends its own). */
static shiro_status agree(MPI_Comm comm, shiro_status st, shiro_error *err) {
  return rt_agree(comm, st, err->message, "shiro_ctx_create");
}

/* Copies a failure's message from c->error into err, naming the backend. */
static shiro_status note(shiro_ctx *c, shiro_status st, shiro_error *err) {
  if (st != SHIRO_OK) shiro_fail(err, st, "shiro_ctx_create: %s backend: %s", c->be->name, c->error);
  return st;
}

shiro_status shiro_ctx_create(shiro_plan *plan, MPI_Comm comm, const shiro_ctx_options *opts, shiro_ctx **ctx,
                              shiro_error *err) {
  if (ctx) *ctx = NULL;
  shiro_error own; /* the failing rank's message reaches the others even when its caller passed no err */
  if (!err) err = &own;
  err->message[0] = 0;
  /* A rank without a communicator cannot tell the others (shiro.h says so). */
  if (comm == MPI_COMM_NULL) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: comm is MPI_COMM_NULL");
  /* 1. local checks, agreed on before any collective call (MPI_Comm_dup) */
  shiro_status st = !ctx ? shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: ctx is NULL")
      : (!plan || !opts) ? shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: plan or options is NULL")
                         : check_launch(plan, comm, opts, err);
  st = agree(comm, st, err);
  if (st == SHIRO_OK) st = agree_options(comm, opts, err); /* the same answer on every rank */
  if (st != SHIRO_OK) return st;
  /* 2. every rank: own communicator, traffic, backend set-up; agreed on again */
  shiro_ctx *c = calloc(1, sizeof *c);
  if (!c) st = shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  MPI_Comm dup = MPI_COMM_NULL;
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS && st == SHIRO_OK) /* collective: called on every rank */
    st = shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: MPI_Comm_dup failed");
  /* MPI failures on the context's communicator come back as codes (the library never aborts) */
  if (dup != MPI_COMM_NULL && MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) != MPI_SUCCESS && st == SHIRO_OK)
    st = shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: MPI_Comm_set_errhandler(MPI_ERRORS_RETURN) failed");
  /* collective (every rank, as MPI_Comm_dup): the kernels' threads, this rank's share of its node */
  int threads = 1;
  char why[sizeof c->threads_why] = "";
  rt_threads_choose(comm, opts->threads, &threads, why, sizeof why);
  if (c) {
    c->plan = plan;
    c->threads = threads;
    memcpy(c->threads_why, why, sizeof why);
    c->opts = *opts;
    c->n = opts->n;
    c->esz = opts->dtype == SHIRO_FLOAT64 ? sizeof(double) : opts->dtype == SHIRO_FLOAT32 ? sizeof(float)
                                                                                          : sizeof(uint16_t);
    c->vsz = opts->dtype == SHIRO_FLOAT64 ? sizeof(double) : sizeof(float);
    layout_reset(c); /* dense rows until a shiro_spmm_layout call says otherwise */
    c->comm = dup;
    c->be = &cpu_backend;
#if SHIRO_HAVE_CUDA
    if (opts->backend == SHIRO_BACKEND_CUDA) c->be = &cuda_backend;
#endif
#if SHIRO_HAVE_SIM
    if (opts->backend == SHIRO_BACKEND_SIM) c->be = &sim_backend;
#endif
  } else if (dup != MPI_COMM_NULL) {
    MPI_Comm_free(&dup);
  }
  st = agree(comm, st, err);
  /* 3. the interpreter's part (local), agreed on: a backend's set-up may be collective, so every
   *    rank enters it or none does */
  if (st == SHIRO_OK) {
    count_traffic(c);
    st = note(c, interp_prepare(c), err);
    st = agree(comm, st, err);
  }
  if (st == SHIRO_OK) {
    st = c->be->setup(c);
    if (st == SHIRO_OK) st = c->be->load(c, RT_FORWARD); /* local */
    st = note(c, st, err);
    if (st == SHIRO_OK) c->prog[RT_FORWARD].ready = 1;
  }
  st = agree(comm, st, err);
  if (st != SHIRO_OK) {
    shiro_ctx_destroy(&c);
    return st;
  }
  *ctx = c;
  return SHIRO_OK;
}

/* Bytes from the first to past the last value of `rows` rows of buffer k in the call's layout. */
static uintptr_t span(const shiro_ctx *c, int k, int64_t rows) {
  if (rows <= 0 || c->n <= 0) return 0;
  return (uintptr_t)((rows - 1) * c->rs[k] + (c->n - 1) * c->cs[k] + 1) * c->esz;
}

/* 1 if this rank's B_local and C_local (b_rows and c_rows rows of N values, in the call's layout)
 * share a byte of the address ranges they span. */
static int overlap(const shiro_ctx *c, const void *B, const void *C) {
  const prog_rank *pr = &c->plan->pr;
  const uintptr_t b = (uintptr_t)B, cc = (uintptr_t)C;
  const uintptr_t bb = span(c, PROG_BUF_B, pr->b_rows), cb = span(c, PROG_BUF_C, pr->c_rows);
  return B && C && bb && cb && b < cc + cb && cc < b + bb;
}

shiro_status ctx_check_buffers(shiro_ctx *c, int dir, const void *in, void *out, const char *what) {
  const prog_rank *pr = &c->plan->pr;
  const int fwd = dir == RT_FORWARD;
  const int64_t in_rows = fwd ? pr->b_rows : pr->c_rows, out_rows = fwd ? pr->c_rows : pr->b_rows;
  const char *nin = fwd ? "B_local" : "Y_local", *nout = fwd ? "C_local" : "X_local";
  if ((!in && in_rows > 0) || (!out && out_rows > 0)) {
    snprintf(c->error, sizeof c->error, "%s: %s or %s is NULL (this rank owns %lld %c rows, %lld %c rows)", what, nin, nout,
             (long long)in_rows, nin[0], (long long)out_rows, nout[0]);
    return SHIRO_ERR_ARG;
  }
  if (fwd ? overlap(c, in, out) : overlap(c, out, in)) {
    snprintf(c->error, sizeof c->error, "%s: %s and %s overlap (they must be separate buffers)", what, nin, nout);
    return SHIRO_ERR_ARG;
  }
  return SHIRO_OK;
}

/* c->error after a failed call: "WHAT (BACKEND backend): why". */
static shiro_status name_failure(shiro_ctx *c, shiro_status st, const char *what) {
  if (st != SHIRO_OK) {
    char why[sizeof c->error];
    memcpy(why, c->error, sizeof why);
    snprintf(c->error, sizeof c->error, "%s (%s backend): %.420s", what, c->be->name, why);
  }
  return st;
}

shiro_status shiro_spmm(shiro_ctx *c, const void *B, void *C) {
  if (!c) return SHIRO_ERR_ARG;
  shiro_status st = split_busy(c, "shiro_spmm");
  if (st == SHIRO_OK) st = ctx_check_buffers(c, RT_FORWARD, B, C, "shiro_spmm");
  if (st != SHIRO_OK) return st;
  c->error[0] = 0;
  return name_failure(c, interp_run(c, RT_FORWARD, B, C, NULL, NULL), "shiro_spmm");
}

shiro_status ctx_ready_transpose(shiro_ctx *c) {
  rt_program *t = &c->prog[RT_TRANSPOSE];
  if (t->ready > 0) return SHIRO_OK;
  if (t->ready < 0) { /* what a failed attempt made is freed with the context; shiro_spmm still works */
    snprintf(c->error, sizeof c->error, "an earlier call could not derive the transposed program");
    return SHIRO_ERR_UNSUPPORTED;
  }
  shiro_status st = interp_transpose(c);
  if (st == SHIRO_OK) st = c->be->load(c, RT_TRANSPOSE);
  st = rt_agree(c->comm, st, c->error, "deriving the transposed program");
  t->ready = st == SHIRO_OK ? 1 : -1;
  return st;
}

shiro_status shiro_spmm_transpose(shiro_ctx *c, const void *Y, void *X) {
  if (!c) return SHIRO_ERR_ARG;
  shiro_status st = split_busy(c, "shiro_spmm_transpose");
  if (st == SHIRO_OK) st = ctx_check_buffers(c, RT_TRANSPOSE, Y, X, "shiro_spmm_transpose");
  if (st != SHIRO_OK) return st;
  c->error[0] = 0;
  st = ctx_ready_transpose(c);
  if (st == SHIRO_OK) st = interp_run(c, RT_TRANSPOSE, Y, X, NULL, NULL);
  return name_failure(c, st, "shiro_spmm_transpose");
}

/* The width the ranks passed: *lo and *hi, the least and the most over the context's communicator,
 * and *any_out, 1 if a rank passed one outside 1 .. N (one MPI_Allreduce). 0 on an MPI failure. */
int ctx_agree_width(shiro_ctx *c, int64_t n, int64_t *lo, int64_t *hi, int *any_out) {
  int64_t in[3] = {n, -n, n < 1 || n > c->opts.n ? -1 : 0}, out[3];
  if (MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_MIN, c->comm) != MPI_SUCCESS) return 0;
  *lo = out[0];
  *hi = -out[1];
  *any_out = out[2] < 0;
  return 1;
}

shiro_status ctx_checked(shiro_ctx *c, int dir, const void *in, void *out, int64_t n, shiro_dtype dtype,
                         const char *what) {
  const prog_rank *pr = &c->plan->pr;
  const int fwd = dir == RT_FORWARD;
  const int64_t in_rows = fwd ? pr->b_rows : pr->c_rows, out_rows = fwd ? pr->c_rows : pr->b_rows;
  const char *nin = fwd ? "B_local" : "Y_local", *nout = fwd ? "C_local" : "X_local";
  int rank = 0;
  MPI_Comm_rank(c->comm, &rank);
  int64_t lo = n, hi = n;
  int any_out = 0;
  if (!ctx_agree_width(c, n, &lo, &hi, &any_out)) {
    snprintf(c->error, sizeof c->error, "%s: MPI_Allreduce of the widths failed", what);
    return SHIRO_ERR_MPI;
  }
  const int64_t n0 = c->n;
  int bad = 1;
  if (split_busy(c, what) != SHIRO_OK)
    ; /* its message is in c->error */
  else if (n < 1 || n > c->opts.n)
    snprintf(c->error, sizeof c->error, "%s: rank %d passed N = %lld, expected 1 .. %lld (the context was made for N = %lld)",
             what, rank, (long long)n, (long long)c->opts.n, (long long)c->opts.n);
  else if (lo != hi && !any_out && n != lo) /* the ranks that passed more than the least say so */
    snprintf(c->error, sizeof c->error, "%s: the ranks passed different n (from %lld to %lld; rank %d passed %lld); every "
                                        "rank must pass the same n",
             what, (long long)lo, (long long)hi, rank, (long long)n);
  else if (dtype != c->opts.dtype)
    snprintf(c->error, sizeof c->error, "%s: rank %d passed %s values, the context was made for %s", what, rank,
             ctx_dtype_name(dtype), ctx_dtype_name(c->opts.dtype));
  else if ((!in && in_rows > 0) || (!out && out_rows > 0))
    snprintf(c->error, sizeof c->error, "%s: rank %d passed a NULL %s", what, rank, !in && in_rows > 0 ? nin : nout);
  else {
    c->n = n; /* the overlap of n-value rows */
    layout_reset(c);
    if (fwd ? overlap(c, in, out) : overlap(c, out, in))
      snprintf(c->error, sizeof c->error, "%s: rank %d passed %s and %s that overlap", what, rank, nin, nout);
    else
      bad = 0;
    c->n = n0;
    layout_reset(c);
  }
  /* The contexts agreed on N and the value type at creation (agree_options), so comparing with the
   * context compares the ranks with each other; every rank gets the lowest misusing rank's message. */
  shiro_status st = rt_agree(c->comm, bad ? SHIRO_ERR_ARG : SHIRO_OK, c->error, what);
  if (st != SHIRO_OK) {
    const size_t len = strlen(c->error);
    if (st == SHIRO_ERR_ARG && len + 25 < sizeof c->error) strcat(c->error, "; nothing was computed");
    return st;
  }
  return fwd ? shiro_spmm_n(c, in, out, n) : shiro_spmm_transpose_n(c, in, out, n);
}

shiro_status shiro_spmm_checked(shiro_ctx *c, const void *B, void *C, int64_t n, shiro_dtype dtype) {
  return c ? ctx_checked(c, RT_FORWARD, B, C, n, dtype, "shiro_spmm_checked") : SHIRO_ERR_ARG;
}

shiro_status shiro_spmm_transpose_checked(shiro_ctx *c, const void *Y, void *X, int64_t n, shiro_dtype dtype) {
  return c ? ctx_checked(c, RT_TRANSPOSE, Y, X, n, dtype, "shiro_spmm_transpose_checked") : SHIRO_ERR_ARG;
}

const char *shiro_ctx_last_error(const shiro_ctx *ctx) { return ctx ? ctx->error : ""; }

shiro_status shiro_ctx_get_threads(const shiro_ctx *ctx, int *threads, const char **why) {
  if (!ctx || !threads) return SHIRO_ERR_ARG;
  *threads = ctx->threads;
  if (why) *why = ctx->threads_why;
  return SHIRO_OK;
}

shiro_status shiro_ctx_get_traffic(const shiro_ctx *ctx, shiro_traffic *t) {
  if (!ctx || !t) return SHIRO_ERR_ARG;
  *t = ctx->traffic;
  return SHIRO_OK;
}

void shiro_ctx_destroy(shiro_ctx **ctx) {
  if (!ctx || !*ctx) return;
  shiro_ctx *c = *ctx;
  if (c->be) c->be->destroy(c);
  interp_release(c);
  values_release(c);
  layout_release(c);
  sddmm_release(c);
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c);
  *ctx = NULL;
}
