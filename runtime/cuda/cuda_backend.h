/* cuda_backend.h — the CUDA backend's state and the pieces it is made of.
 *
 *   backend_cuda.c  setup / spmm / destroy (the backend_ops), the interpreter
 *   cuda_device.c   device choice and transport choice (collective)
 *   cuda_stages.c   per-stage exchange lists and copy ranges
 *   cuda_mpi.c      MPI transport: CUDA-aware, or staged through pinned host buffers
 *   cuda_nccl.c     NCCL transport: grouped send/recv on the communication stream
 *   cuda_ops.c      compute ops: cuSPARSE SpMM or the own kernels (cuda_kernels.cu)
 *
 * One call runs on two streams: the compute stream runs every MUL op in
 * program order; the communication stream (NCCL) runs each stage's group of
 * sends and receives. START s orders the stage after the kernels that filled
 * its send rows (an event), WAIT s orders what follows after the stage (an
 * event the other way), so the local product overlaps the stage-0 exchange. */
#ifndef SHIRO_CUDA_BACKEND_H
#define SHIRO_CUDA_BACKEND_H

#include <stdint.h>

#include "cuda_check.h"
#include "cuda_ops.h"
#include "internal.h"

/* The transport a context resolved to. */
enum { CUDA_XPORT_MPI_STAGED = 0, CUDA_XPORT_MPI_AWARE = 1, CUDA_XPORT_NCCL = 2 };

/* Rows [row, row+count) of buffer buf (PROG_BUF_S or PROG_BUF_R). */
typedef struct cuda_range {
  int buf;
  int64_t row, count;
} cuda_range;

/* What a stage moves. */
typedef struct cuda_stage {
  int64_t x_first, nx;      /* its exchange records: xs[x_first .. x_first+nx-1] (count > 0 only) */
  int sends;                /* 1 if it sends anything */
  int64_t out_first, nout;  /* staged MPI: device-to-host ranges copied before the sends, ranges[out_first ..] */
  int64_t in_first, nin;    /* staged MPI: host-to-device ranges copied after the receives, ranges[in_first ..] */
  int64_t req_first, nreq;  /* MPI: its persistent requests, req[req_first ..] */
} cuda_stage;

typedef struct cuda_state {
  int device;                 /* the context's device ordinal (-1 until chosen) */
  int xport;                  /* CUDA_XPORT_* */
  cudaStream_t compute;       /* MUL ops, copies of the staged transport */
  cudaStream_t comm;          /* NCCL groups (higher priority) */
  cudaEvent_t filled;         /* recorded on compute at each START (NCCL) */
  cudaEvent_t *stage_done;    /* [nstages] recorded on comm at each WAIT (NCCL) */
  cusparseHandle_t sparse;    /* on the compute stream */
  cuda_ops ops;               /* the program's compute ops */
  void *dev[PROG_NBUF];       /* device S and R (B and C come with each call) */
  void *host[PROG_NBUF];      /* pinned host S and R (staged MPI only) */
  size_t row_bytes;           /* N × value size */
  int64_t nx;                 /* exchange records with count > 0 */
  const int64_t **xs;         /* [nx] those records, by (stage, peer, kind, direction) */
  int32_t nstages;            /* the program's stages */
  cuda_stage *stages;         /* [nstages] */
  cuda_range *ranges;         /* copy ranges of every stage (staged MPI) */
  MPI_Datatype row_type;      /* N contiguous values (MPI) */
  MPI_Request *req;           /* [nreq] persistent requests (MPI), by stage */
  int64_t nreq;
  ncclComm_t nccl;            /* NCCL only */
} cuda_state;

/* cuda_device.c: picks the device (opts.device, or the rank's index in its
 * node modulo the device count), makes it current, and resolves the
 * transport into s->xport. Collective over c->comm: every rank calls it and
 * every rank gets the same status (a rank that fails makes all fail). */
shiro_status cuda_choose_device(shiro_ctx *c, cuda_state *s);

/* cuda_device.c: agrees on a local status across c->comm (MPI_Allreduce):
 * returns st on a failing rank, and on the others the worst status with a
 * message naming the lowest failing rank. Collective. */
shiro_status cuda_agree(shiro_ctx *c, shiro_status st);

/* cuda_stages.c: builds s->xs, s->stages and s->ranges from the program. Local. */
shiro_status cuda_stages_build(shiro_ctx *c, cuda_state *s);

/* cuda_mpi.c: makes the persistent requests of every exchange record (on the
 * device S and R when the MPI library is CUDA-aware, else on pinned host copies
 * it allocates) and the row datatype. Needs cuda_stages_build first. Local. */
shiro_status cuda_mpi_setup(shiro_ctx *c, cuda_state *s);
/* START stage: staged, copies the stage's send rows down on the compute stream;
 * if the stage sends, waits for the compute stream; then MPI_Startall. */
shiro_status cuda_mpi_start(shiro_ctx *c, cuda_state *s, int64_t stage);
/* WAIT stage: MPI_Waitall; staged, then copies the received rows up on the compute stream. */
shiro_status cuda_mpi_wait(shiro_ctx *c, cuda_state *s, int64_t stage);
/* Frees the requests, the datatype and the pinned buffers (also after a partial setup). */
void cuda_mpi_destroy(cuda_state *s);
/* 1 if the MPI library says it takes device pointers (MPIX_Query_cuda_support). */
int cuda_mpi_is_cuda_aware(void);

/* cuda_nccl.c: one communicator over c->comm (ncclGetUniqueId on rank 0,
 * MPI_Bcast, ncclCommInitRank) and the events of the stages. Collective. */
shiro_status cuda_nccl_setup(shiro_ctx *c, cuda_state *s);
/* START stage: event on the compute stream, waited for by the communication
 * stream, then one group of the stage's sends and receives. Never blocks. */
shiro_status cuda_nccl_start(shiro_ctx *c, cuda_state *s, int64_t stage);
/* WAIT stage: event on the communication stream, waited for by the compute stream. */
shiro_status cuda_nccl_wait(shiro_ctx *c, cuda_state *s, int64_t stage);
/* Destroys the communicator and the events (also after a partial setup). Local. */
void cuda_nccl_destroy(cuda_state *s);

/* backend_cuda.c, for the benchmark and tests (not exported by libshiro):
 * runs one call like shiro_spmm and stores in op_ms[o] the milliseconds the
 * compute stream spent from the end of op o-1 to the end of op o (START is
 * near 0; WAIT is the exposed communication). Allocates events: not for
 * production calls. */
shiro_status cuda_backend_profile(shiro_ctx *c, const void *B, void *C, float *op_ms);

/* How op o of a CUDA context runs: "cusparse", "kernel", "start", "wait" or "-". */
const char *cuda_backend_op_how(const shiro_ctx *c, int64_t o);

/* The transport a CUDA context uses: "nccl", "mpi-cuda-aware" or "mpi-staged". */
const char *cuda_backend_transport(const shiro_ctx *c);

#endif
