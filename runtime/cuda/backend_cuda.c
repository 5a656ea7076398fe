/* backend_cuda.c — the CUDA backend: cuSPARSE and own kernels, NCCL or MPI transport.
 *
 * Setup (collective) picks the device and the transport (cuda_device.c),
 * uploads the program's operators once (cuda_ops.c), allocates the device
 * buffers S and R, the streams, events, cuSPARSE handle and workspaces, and
 * the transport's requests or communicator. A call then interprets the same
 * op list as the CPU backend and allocates nothing: MUL ops go to the compute
 * stream, START s / WAIT s begin and end the exchanges of stage s. The call
 * returns when the compute stream is done (it has joined every stage by
 * then), so it is synchronous from the caller's view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "error.h"

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
  cuda_ops_destroy(&s->ops);
  if (s->sparse) cusparseDestroy(s->sparse);
  for (int b = 0; b < PROG_NBUF; b++)
    if (s->dev[b]) cudaFree(s->dev[b]);
  if (s->compute) cudaStreamDestroy(s->compute);
  if (s->comm) cudaStreamDestroy(s->comm);
  free(s->xs);
  free(s->stages);
  free(s->ranges);
  leave_device(prev, s->device);
  free(s);
  c->state = NULL;
}

/* The local part of the setup, on the context's device. */
static shiro_status setup_local(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  const prog_rank *pr = &c->plan->pr;
  const int64_t rows[PROG_NBUF] = {pr->b_rows, pr->c_rows, pr->s_rows, pr->r_rows};
  int lo = 0, hi = 0;
  s->row_bytes = (size_t)c->opts.n * c->esz;
  /* Blocking streams: they order themselves after the caller's legacy-default-stream work (shiro.h). */
  CUDACHECKGOTO(cudaDeviceGetStreamPriorityRange(&lo, &hi), st, c->error);
  CUDACHECKGOTO(cudaStreamCreateWithPriority(&s->compute, cudaStreamDefault, lo), st, c->error);
  CUDACHECKGOTO(cudaStreamCreateWithPriority(&s->comm, cudaStreamDefault, hi), st, c->error);
  CUSPARSECHECKGOTO(cusparseCreate(&s->sparse), st, c->error);
  CUSPARSECHECKGOTO(cusparseSetStream(s->sparse, s->compute), st, c->error);
  for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++)
    if (rows[b] > 0) CUDACHECKGOTO(cudaMalloc(&s->dev[b], (size_t)rows[b] * s->row_bytes), st, c->error);
  STATUSGOTO(cuda_ops_setup(&s->ops, pr, c->opts.dtype == SHIRO_FLOAT64, c->opts.n, rows, s->sparse, 1, c->error), st);
  STATUSGOTO(cuda_stages_build(c, s), st);
  if (s->xport != CUDA_XPORT_NCCL) STATUSGOTO(cuda_mpi_setup(c, s), st);
  CUDACHECKGOTO(cudaDeviceSynchronize(), st, c->error);  /* uploads done before the first call */
done:
  return st;
}

static shiro_status cuda_setup(shiro_ctx *c, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  s->device = -1;
  s->row_type = MPI_DATATYPE_NULL;
  c->state = s;
  c->error[0] = 0;
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
  /* Every rank runs each collective step below, whatever happened locally before it. */
  st = cuda_choose_device(c, s);
  if (st == SHIRO_OK) st = setup_local(c, s);
  st = cuda_agree(c, st);
  if (st == SHIRO_OK && s->xport == CUDA_XPORT_NCCL) st = cuda_nccl_setup(c, s);
  leave_device(prev, s->device);
  if (st != SHIRO_OK) return shiro_fail(err, st, "shiro_ctx_create (CUDA backend): %s", c->error);
  return SHIRO_OK;
}

/* The interpreter. marks (profiling only): marks[0] before the first op,
 * marks[o+1] after op o, recorded on the compute stream. */
static shiro_status run(shiro_ctx *c, const void *B, void *C, cudaEvent_t *marks) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = c->state;
  const prog_rank *pr = &c->plan->pr;
  void *bufs[PROG_NBUF] = {(void *)(uintptr_t)B, C, s->dev[PROG_BUF_S], s->dev[PROG_BUF_R]};
  const int nccl = s->xport == CUDA_XPORT_NCCL;
  if (marks) CUDACHECKGOTO(cudaEventRecord(marks[0], s->compute), st, c->error);
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    const int64_t stage = op[OPF_STAGE];
    switch (op[OPF_KIND]) {
      case PROG_OP_MUL: STATUSGOTO(cuda_ops_run(&s->ops, o, bufs, s->compute, c->error), st); break;
      case PROG_OP_START:
        if (stage < s->nstages) STATUSGOTO(nccl ? cuda_nccl_start(c, s, stage) : cuda_mpi_start(c, s, stage), st);
        break;
      case PROG_OP_WAIT:
        if (stage < s->nstages) STATUSGOTO(nccl ? cuda_nccl_wait(c, s, stage) : cuda_mpi_wait(c, s, stage), st);
        break;
    }
    if (marks) CUDACHECKGOTO(cudaEventRecord(marks[o + 1], s->compute), st, c->error);
  }
  CUDACHECKGOTO(cudaStreamSynchronize(s->compute), st, c->error);
  if (nccl) {
    ncclResult_t async = ncclSuccess;
    NCCLCHECKGOTO(ncclCommGetAsyncError(s->nccl, &async), st, c->error);
    NCCLCHECKGOTO(async, st, c->error);
  }
done:
  return st;
}

static shiro_status cuda_spmm(shiro_ctx *c, const void *B, void *C) {
  cuda_state *s = c->state;
  int prev = enter_device(s->device);
  shiro_status st = run(c, B, C, NULL);
  if (st != SHIRO_OK) {
    /* Leave nothing of this call running on the context's streams. */
    cudaStreamSynchronize(s->compute);
    cudaStreamSynchronize(s->comm);
    char why[sizeof c->error];
    memcpy(why, c->error, sizeof why);
    snprintf(c->error, sizeof c->error, "shiro_spmm (CUDA backend): %.480s", why);
  }
  leave_device(prev, s->device);
  return st;
}

shiro_status cuda_backend_profile(shiro_ctx *c, const void *B, void *C, float *op_ms) {
  shiro_status st = SHIRO_OK;
  cuda_state *s = c->state;
  const int64_t nops = c->plan->pr.nops;
  cudaEvent_t *marks = calloc((size_t)nops + 1, sizeof *marks);
  int prev = enter_device(s->device);
  if (!marks) { st = cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory"); goto done; }
  for (int64_t o = 0; o <= nops; o++) CUDACHECKGOTO(cudaEventCreate(&marks[o]), st, c->error);
  STATUSGOTO(run(c, B, C, marks), st);
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
  return cuda_ops_how(&s->ops, o);
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

const backend_ops cuda_backend = {"cuda", cuda_setup, cuda_spmm, cuda_destroy};
