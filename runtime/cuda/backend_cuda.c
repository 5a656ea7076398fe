/* backend_cuda.c — the CUDA backend's table: cuSPARSE and own kernels, NCCL or MPI transport.
 *
 * Setup (collective) picks the device and the transport (cuda_device.c),
 * uploads the program's operators once (cuda_ops.c), allocates the device
 * buffers S and R (c->buf), the streams, events, cuSPARSE handle and
 * workspaces, and the transport's requests or communicator. The interpreter
 * (runtime/interp.c) then walks the ops of each call: compute ops go to the
 * compute stream, START s / WAIT s begin and end the exchanges of stage s,
 * and nothing is allocated. begin makes the context's device current; finish
 * waits for the compute stream (it has joined every stage by then), so a
 * call is synchronous from the caller's view, and restores the caller's device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_backend.h"
#include "cuda_kernels.h"
#include "half.h"

/* Makes dev current and returns the device that was current (-1 if none could be read). */
static int enter_device(int dev) {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
  if (dev >= 0 && dev != prev) cudaSetDevice(dev);
  return prev;
}

static void leave_device(int prev, int dev) {
  if (prev >= 0 && prev != dev) cudaSetDevice(prev);
}

static void cuda_destroy(shiro_ctx *c) {
  cuda_state *s = c->state;
  if (!s) return;
  int prev = enter_device(s->device);
  if (s->compute) cudaStreamSynchronize(s->compute);
  if (s->comm) cudaStreamSynchronize(s->comm);
  cuda_nccl_destroy(s);
  cuda_mpi_destroy(s);
  cuda_ops_destroy(&s->ops[0]);
  cuda_ops_destroy(&s->ops[1]);
  if (s->sparse) cusparseDestroy(s->sparse);
  for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++) {
    if (c->buf[b]) cudaFree(c->buf[b]);
    if (s->wire[b]) cudaFree(s->wire[b]);
  }
  if (s->in32) cudaFree(s->in32);
  if (s->out32) cudaFree(s->out32);
  c->buf[PROG_BUF_S] = c->buf[PROG_BUF_R] = NULL;
  if (s->compute) cudaStreamDestroy(s->compute);
  if (s->comm) cudaStreamDestroy(s->comm);
  leave_device(prev, s->device);
  free(s);
  c->state = NULL;
}

/* The local part of the setup, on the context's device. */
static shiro_status setup_local(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  const int64_t *rows = c->rows;
  int lo = 0, hi = 0;
  s->row_bytes = (size_t)c->opts.n * c->esz;
  /* Blocking streams: they order themselves after the caller's legacy-default-stream work (shiro.h). */
  CUDACHECKGOTO(cudaDeviceGetStreamPriorityRange(&lo, &hi), st, c->error);
  CUDACHECKGOTO(cudaStreamCreateWithPriority(&s->compute, cudaStreamDefault, lo), st, c->error);
  CUDACHECKGOTO(cudaStreamCreateWithPriority(&s->comm, cudaStreamDefault, hi), st, c->error);
  CUSPARSECHECKGOTO(cusparseCreate(&s->sparse), st, c->error);
  CUSPARSECHECKGOTO(cusparseSetStream(s->sparse, s->compute), st, c->error);
  for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++) {
    if (rows[b] > 0) CUDACHECKGOTO(cudaMalloc(&c->buf[b], (size_t)rows[b] * (size_t)c->opts.n * c->vsz), st, c->error);
    if (rows[b] > 0 && half_is16(c->opts.dtype)) CUDACHECKGOTO(cudaMalloc(&s->wire[b], (size_t)rows[b] * s->row_bytes), st, c->error);
    s->xbuf[b] = half_is16(c->opts.dtype) ? s->wire[b] : c->buf[b];
  }
  if (half_is16(c->opts.dtype)) {
    const prog_rank *pr = &c->plan->pr;
    const size_t io = (size_t)(pr->b_rows > pr->c_rows ? pr->b_rows : pr->c_rows) * (size_t)c->opts.n * sizeof(float);
    CUDACHECKGOTO(cudaMalloc((void **)&s->in32, io ? io : 1), st, c->error);
    CUDACHECKGOTO(cudaMalloc((void **)&s->out32, io ? io : 1), st, c->error);
  }
  if (s->xport != CUDA_XPORT_NCCL) SHIRO_CHECK_GOTO(cuda_mpi_setup(c, s), st);
done:
  return st;
}

/* Program d's operators uploaded (and its MPI requests made), on the context's device. Local. */
static shiro_status cuda_load(shiro_ctx *c, int d) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = c->state;
  const int64_t *rows = c->rows;
  int prev = enter_device(s->device);
  SHIRO_CHECK_GOTO(cuda_ops_setup(&s->ops[d], c->prog[d].op, c->prog[d].nops, c->opts.dtype == SHIRO_FLOAT64, c->opts.n, rows,
                                  s->sparse, 1, c->error),
                   st);
  if (s->xport != CUDA_XPORT_NCCL) SHIRO_CHECK_GOTO(cuda_mpi_load(c, s, d), st);
  CUDACHECKGOTO(cudaDeviceSynchronize(), st, c->error); /* uploads done before the first call */
done:
  leave_device(prev, s->device);
  return st;
}

/* Program d's values changed (shiro_ctx_set_values): uploaded again, on the context's device, done
 * when it returns. Local. */
static shiro_status cuda_values(shiro_ctx *c, int d) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = c->state;
  if (s->aborted) /* a context that can only be destroyed (shiro.h: timeout_ms) */
    return cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "an earlier call aborted this context's NCCL communicator");
  int prev = enter_device(s->device);
  if (s->compute) CUDACHECKGOTO(cudaStreamSynchronize(s->compute), st, c->error); /* no call still reads them */
  SHIRO_CHECK_GOTO(cuda_ops_values(&s->ops[d], c->prog[d].op, c->prog[d].nops, c->error), st);
done:
  leave_device(prev, s->device);
  return st;
}

static shiro_status cuda_setup(shiro_ctx *c) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) return cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  s->device = -1;
  s->caller_device = -1;
  c->state = s;
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
  /* Every rank runs each collective step below, whatever happened locally before it. */
  st = cuda_choose_device(c, s);
  if (st == SHIRO_OK) st = setup_local(c, s);
  st = rt_agree(c->comm, st, c->error, "the CUDA setup");
  if (st == SHIRO_OK && s->xport == CUDA_XPORT_NCCL) st = cuda_nccl_setup(c, s);
  leave_device(prev, s->device);
  return st;
}

static shiro_status run_op(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  cuda_state *s = c->state;
  if (s->in32) { /* 16-bit: the float32 copies of the call's input and output */
    const int in_buf = c->dir == RT_FORWARD ? PROG_BUF_B : PROG_BUF_C;
    void *mapped[PROG_NBUF] = {bufs[0], bufs[1], bufs[2], bufs[3]};
    mapped[in_buf] = s->in32;
    mapped[PROG_BUF_B + PROG_BUF_C - in_buf] = s->out32;
    return cuda_ops_run(&s->ops[c->dir], op->index, mapped, c->n, s->compute, c->error);
  }
  return cuda_ops_run(&s->ops[c->dir], op->index, bufs, c->n, s->compute, c->error);
}

/* 16-bit: stage `stage`'s ranges to send (out) rounded from c->buf into the wire copies, or those
 * received (!out) widened back, on the compute stream. */
static shiro_status convert_ranges(shiro_ctx *c, cuda_state *s, int32_t stage, int out) {
  shiro_status st = SHIRO_OK;
  const rt_stages *sg = &c->prog[c->dir].stages;
  const rt_stage *g = &sg->stage[stage];
  const int64_t first = out ? g->out_first : g->in_first, count = out ? g->nout : g->nin, n = c->n;
  const int bf = c->opts.dtype == SHIRO_BFLOAT16;
  for (int64_t k = first; k < first + count; k++) {
    const rt_range *r = &sg->ranges[k];
    float *f = (float *)c->buf[r->buf] + r->row * n;
    uint16_t *h = (uint16_t *)s->wire[r->buf] + r->row * n;
    if (out) CUDACHECKGOTO(cuda_half_round(bf, h, n, f, r->count, n, s->compute), st, c->error);
    else CUDACHECKGOTO(cuda_half_widen(bf, f, h, r->count, n, n, s->compute), st, c->error);
  }
done:
  return st;
}

static shiro_status cuda_start(shiro_ctx *c, int32_t stage) {
  cuda_state *s = c->state;
  if (s->in32) {
    const shiro_status st = convert_ranges(c, s, stage, 1);
    if (st != SHIRO_OK) return st;
  }
  return s->xport == CUDA_XPORT_NCCL ? cuda_nccl_start(c, s, stage) : cuda_mpi_start(c, s, stage);
}

static shiro_status cuda_wait(shiro_ctx *c, int32_t stage) {
  cuda_state *s = c->state;
  const shiro_status st = s->xport == CUDA_XPORT_NCCL ? cuda_nccl_wait(c, s, stage) : cuda_mpi_wait(c, s, stage);
  return st == SHIRO_OK && s->in32 ? convert_ranges(c, s, stage, 0) : st;
}

static shiro_status cuda_begin(shiro_ctx *c) {
  cuda_state *s = c->state;
  s->caller_device = enter_device(s->device);
  if (s->aborted)
    return cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "an earlier call aborted this context's NCCL communicator");
  shiro_status st = SHIRO_OK;
  if (s->in32) { /* 16-bit: the call's input widened (B, or Y in C's place) */
    const prog_rank *pr = &c->plan->pr;
    const int64_t rows = c->dir == RT_FORWARD ? pr->b_rows : pr->c_rows;
    CUDACHECKGOTO(cuda_half_widen(c->opts.dtype == SHIRO_BFLOAT16, s->in32, c->call_in, rows, c->n, c->n, s->compute), st,
                  c->error);
  }
done:
  return st;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Aborts the NCCL communicator (its kernels then end, so the streams drain) and says why. */
static shiro_status abort_nccl(shiro_ctx *c, cuda_state *s, const char *why) {
  ncclCommAbort(s->nccl);
  s->nccl = NULL;
  s->aborted = 1;
  return cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "%s: the NCCL communicator was aborted (destroy the context)", why);
}

/* Waits until the compute stream is done (it has joined every stage by then). With NCCL the wait
 * polls the communicator's asynchronous error, and past opts.timeout_ms it aborts: a peer that
 * failed or never came cannot leave this rank waiting forever. */
static shiro_status wait_compute(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  if (s->xport != CUDA_XPORT_NCCL) {
    CUDACHECKGOTO(cudaStreamSynchronize(s->compute), st, c->error);
    return st;
  }
  const double t0 = now_ms();
  for (;;) {
    cudaError_t q = cudaStreamQuery(s->compute);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) CUDACHECKGOTO(q, st, c->error);
    ncclResult_t async = ncclSuccess;
    NCCLCHECKGOTO(ncclCommGetAsyncError(s->nccl, &async), st, c->error);
    if (async != ncclSuccess && async != ncclInProgress) {
      char why[160];
      snprintf(why, sizeof why, "NCCL reported an asynchronous error: %s", ncclGetErrorString(async));
      return abort_nccl(c, s, why);
    }
    if (c->opts.timeout_ms > 0 && now_ms() - t0 > (double)c->opts.timeout_ms) {
      char why[160];
      snprintf(why, sizeof why, "the call did not complete within timeout_ms = %lld", (long long)c->opts.timeout_ms);
      return abort_nccl(c, s, why);
    }
  }
done:
  return st;
}

/* The end of a call: the compute stream done; after a failure, nothing of the call is left running
 * on the context's streams. Restores the caller's device. */
static shiro_status cuda_finish(shiro_ctx *c, shiro_status st) {
  cuda_state *s = c->state;
  if (st == SHIRO_OK && s->out32) { /* 16-bit: the output rounded once */
    const prog_rank *pr = &c->plan->pr;
    const int64_t rows = c->dir == RT_FORWARD ? pr->c_rows : pr->b_rows;
    const cudaError_t e = cuda_half_round(c->opts.dtype == SHIRO_BFLOAT16, c->call_out, c->n, s->out32, rows, c->n, s->compute);
    if (e != cudaSuccess) st = cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "%s", cudaGetErrorString(e));
  }
  if (st == SHIRO_OK) st = wait_compute(c, s);
  if (st != SHIRO_OK) {
    /* A stage's NCCL group may wait for peers that will not come: abort it before waiting on the streams. */
    if (s->nccl && !s->aborted) {
      char why[sizeof c->error];
      memcpy(why, c->error, sizeof why);
      abort_nccl(c, s, "the call failed");
      memcpy(c->error, why, sizeof why); /* keep the first failure's message */
    }
    cudaStreamSynchronize(s->compute);
    cudaStreamSynchronize(s->comm);
  }
  leave_device(s->caller_device, s->device);
  return st;
}

/* interp_hook of cuda_backend_profile: an event on the compute stream after op o. */
static shiro_status mark_op(shiro_ctx *c, int64_t o, void *arg) {
  shiro_status st = SHIRO_OK;
  cudaEvent_t *marks = arg;
  CUDACHECKGOTO(cudaEventRecord(marks[o + 1], ((cuda_state *)c->state)->compute), st, c->error);
done:
  return st;
}

shiro_status cuda_backend_profile(shiro_ctx *c, const void *B, void *C, float *op_ms) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = c->state;
  const int64_t nops = c->plan->pr.nops;
  cudaEvent_t *marks = calloc((size_t)nops + 1, sizeof *marks);
  int prev = enter_device(s->device);
  if (!marks) {
    st = cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    goto done;
  }
  for (int64_t o = 0; o <= nops; o++) CUDACHECKGOTO(cudaEventCreate(&marks[o]), st, c->error);
  CUDACHECKGOTO(cudaEventRecord(marks[0], s->compute), st, c->error);
  SHIRO_CHECK_GOTO(interp_run(c, RT_FORWARD, B, C, mark_op, marks), st);
  for (int64_t o = 0; o < nops; o++) CUDACHECKGOTO(cudaEventElapsedTime(&op_ms[o], marks[o], marks[o + 1]), st, c->error);
done:
  for (int64_t o = 0; marks && o <= nops; o++)
    if (marks[o]) cudaEventDestroy(marks[o]);
  free(marks);
  leave_device(prev, s->device);
  return st;
}

const char *cuda_backend_op_how(const shiro_ctx *c, int64_t o) {
  const cuda_state *s = c->state;
  if (!s || o < 0 || o >= c->plan->pr.nops) return "-";
  switch (c->plan->pr.ops[o * PROG_OP_WIDTH + OPF_KIND]) {
    case PROG_OP_START: return "start";
    case PROG_OP_WAIT: return "wait";
  }
  return cuda_ops_how(&s->ops[RT_FORWARD], o);
}

const char *cuda_backend_transport(const shiro_ctx *c) {
  const cuda_state *s = c->state;
  if (!s) return "-";
  switch (s->xport) {
    case CUDA_XPORT_NCCL: return "nccl";
    case CUDA_XPORT_MPI_AWARE: return "mpi-cuda-aware";
  }
  return "mpi-staged";
}

const backend cuda_backend = {
    .name = "cuda",
    .setup = cuda_setup,
    .load = cuda_load,
    .multiply = run_op,
    .gather = run_op,
    .add = run_op,
    .start = cuda_start,
    .wait = cuda_wait,
    .begin = cuda_begin,
    .finish = cuda_finish,
    .values = cuda_values,
    .destroy = cuda_destroy,
};
