/* cuda_backend.h — the CUDA backend's state and the pieces it is made of.
 *
 *   backend_cuda.c  the backend's table (backend.h): setup, kernels, transport, begin/finish
 *   cuda_device.c   device choice and transport choice (collective)
 *   cuda_mpi.c      MPI transport (runtime/mpi_xport.c): CUDA-aware, or staged through pinned host buffers
 *   cuda_nccl.c     NCCL transport: grouped send/recv on the communication stream
 *   cuda_ops.c      compute ops: cuSPARSE SpMM or the own kernels (cuda_kernels.cu)
 *
 * The interpreter (runtime/interp.c) walks the program; stages come grouped
 * and ordered from runtime/stages.c. One call runs on two streams: the compute stream runs every MUL op in
 * program order; the communication stream (NCCL) runs each stage's group of
 * sends and receives. START s orders the stage after the kernels that filled
 * its send rows (an event), WAIT s orders what follows after the stage (an
 * event the other way), so the local product overlaps the stage-0 exchange. */
#ifndef SHIRO_CUDA_BACKEND_H
#define SHIRO_CUDA_BACKEND_H

#include <stdint.h>

#include "cuda_check.h"
#include "cuda_ops.h"
#include "error.h"
#include "internal.h"
#include "mpi_xport.h"

/* The transport a context resolved to. */
enum { CUDA_XPORT_MPI_STAGED = 0,
       CUDA_XPORT_MPI_AWARE = 1,
       CUDA_XPORT_NCCL = 2 };

typedef struct cuda_state {
  int device; /* the context's device ordinal (-1 until chosen) */
  int caller_device; /* during a call: the device that was current when it began (-1: none) */
  int xport; /* CUDA_XPORT_* */
  cudaStream_t compute; /* MUL ops, copies of the staged transport */
  cudaStream_t comm; /* NCCL groups (higher priority) */
  cudaEvent_t filled; /* recorded on compute at each START (NCCL) */
  cudaEvent_t *stage_done; /* [nstage_done] recorded on comm at each WAIT (NCCL), one per stage */
  int32_t nstage_done;
  cusparseHandle_t sparse; /* on the compute stream */
  cuda_ops ops[2]; /* the compute ops of each program (RT_FORWARD, RT_TRANSPOSE) */
  void *host[PROG_NBUF]; /* pinned host S and R (staged MPI only); device S and R are c->buf */
  size_t row_bytes; /* N × value size on the wire (2 bytes for the 16-bit types) */
  /* The 16-bit types (the CPU backend's scheme, cpu_backend.c): c->buf holds float32 S and R, the
   * transport moves the 16-bit wire copies, in32 / out32 are the call's input widened and its output
   * before rounding; the conversions run on the compute stream (cuda_kernels.cu). */
  void *wire[PROG_NBUF]; /* [S], [R]: 16-bit (NULL otherwise) */
  void *xbuf[PROG_NBUF]; /* what the transport moves: wire for the 16-bit types, else c->buf */
  float *in32, *out32;
  mpi_xport mpi[2]; /* MPI transport: persistent requests of each program */
  ncclComm_t nccl; /* NCCL only; NULL once aborted */
  int aborted; /* 1 after a timeout or an asynchronous NCCL error aborted the communicator */
} cuda_state;

/* cuda_device.c: picks the device (opts.device, or the rank's index in its
 * node modulo the device count), makes it current, and resolves the
 * transport into s->xport. Collective over c->comm: every rank calls it and
 * every rank gets the same status (a rank that fails makes all fail). */
shiro_status cuda_choose_device(shiro_ctx *c, cuda_state *s);

/* cuda_mpi.c: allocates the pinned host copies of S and R (staged transport only). Local. */
shiro_status cuda_mpi_setup(shiro_ctx *c, cuda_state *s);
/* cuda_mpi.c: makes the persistent requests of every exchange record of program d
 * (on the device S and R when the MPI library is CUDA-aware, else on the pinned
 * host copies). Local. */
shiro_status cuda_mpi_load(shiro_ctx *c, cuda_state *s, int d);
/* START stage: staged, copies the stage's send rows down on the compute stream;
 * if the stage sends, waits for the compute stream; then MPI_Startall. */
shiro_status cuda_mpi_start(shiro_ctx *c, cuda_state *s, int32_t stage);
/* WAIT stage: MPI_Waitall; staged, then copies the received rows up on the compute stream. */
shiro_status cuda_mpi_wait(shiro_ctx *c, cuda_state *s, int32_t stage);
/* Frees the requests, the datatype and the pinned buffers (also after a partial setup). */
void cuda_mpi_destroy(cuda_state *s);
/* 1 if the MPI library says it takes device pointers (MPIX_Query_cuda_support). */
int cuda_mpi_is_cuda_aware(void);

/* cuda_nccl.c: one communicator over c->comm (ncclGetUniqueId on rank 0,
 * MPI_Bcast, ncclCommInitRank) and the events of the stages. Collective. */
shiro_status cuda_nccl_setup(shiro_ctx *c, cuda_state *s);
/* START stage: event on the compute stream, waited for by the communication
 * stream, then one group of the stage's sends and receives. Never blocks. */
shiro_status cuda_nccl_start(shiro_ctx *c, cuda_state *s, int32_t stage);
/* WAIT stage: event on the communication stream, waited for by the compute stream. */
shiro_status cuda_nccl_wait(shiro_ctx *c, cuda_state *s, int32_t stage);
/* Destroys the communicator and the events (also after a partial setup). Local. */
void cuda_nccl_destroy(cuda_state *s);

/* backend_cuda.c, for the benchmark and tests (not exported by libshiro):
 * runs one call like shiro_spmm (through the interpreter) and stores in op_ms[o] the milliseconds the
 * compute stream spent from the end of op o-1 to the end of op o (START is
 * near 0; WAIT is the exposed communication). Allocates events: not for
 * production calls. */
shiro_status cuda_backend_profile(shiro_ctx *c, const void *B, void *C, float *op_ms);

/* How op o of a CUDA context runs: "cusparse", "kernel", "start", "wait" or "-". */
const char *cuda_backend_op_how(const shiro_ctx *c, int64_t o);

/* The transport a CUDA context uses: "nccl", "mpi-cuda-aware" or "mpi-staged". */
const char *cuda_backend_transport(const shiro_ctx *c);

#endif
