/* cuda_nccl.c — the NCCL transport of the CUDA backend.
 *
 * START s: an event orders the communication stream after everything the
 * compute stream queued so far (the kernels that filled the send rows),
 * then one ncclGroupStart/End holds every send and receive of the stage —
 * intra- and inter-node messages of a two-tier plan are in flight together.
 * WAIT s: an event recorded on the communication stream, waited for by the
 * compute stream. The host never blocks. */
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

/* What rank 0 broadcasts: the unique id, or why it could not make one. */
typedef struct nccl_boot {
  int rc;
  ncclUniqueId id;
} nccl_boot;

shiro_status cuda_nccl_setup(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  int rank = 0, size = 1;
  nccl_boot boot;
  memset(&boot, 0, sizeof boot);
  MPI_Comm_rank(c->comm, &rank);
  MPI_Comm_size(c->comm, &size);
  if (rank == 0) boot.rc = (int)ncclGetUniqueId(&boot.id);
  MPICHECKGOTO(MPI_Bcast(&boot, (int)sizeof boot, MPI_BYTE, 0, c->comm), st, c->error);
  if (boot.rc != (int)ncclSuccess) { /* the same answer on every rank: nobody enters ncclCommInitRank */
    st = cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "ncclGetUniqueId failed on rank 0: %s",
                    ncclGetErrorString((ncclResult_t)boot.rc));
    goto done;
  }
  NCCLCHECKGOTO(ncclCommInitRank(&s->nccl, size, boot.id, rank), st, c->error);
  s->stage_done = calloc((size_t)(c->prog[RT_FORWARD].stages.nstages ? c->prog[RT_FORWARD].stages.nstages : 1), sizeof *s->stage_done);
  if (!s->stage_done) {
    st = cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    goto done;
  }
  s->nstage_done = c->prog[RT_FORWARD].stages.nstages; /* the transposed program has the same stages */
  CUDACHECKGOTO(cudaEventCreateWithFlags(&s->filled, cudaEventDisableTiming), st, c->error);
  for (int32_t g = 0; g < s->nstage_done; g++)
    CUDACHECKGOTO(cudaEventCreateWithFlags(&s->stage_done[g], cudaEventDisableTiming), st, c->error);
done:
  return st;
}

shiro_status cuda_nccl_start(shiro_ctx *c, cuda_state *s, int32_t stage) {
  shiro_status st = SHIRO_OK;
  const rt_stage *g = &c->prog[c->dir].stages.stage[stage];
  const ncclDataType_t t = c->opts.dtype == SHIRO_FLOAT32 ? ncclFloat : c->opts.dtype == SHIRO_FLOAT64 ? ncclDouble
      : c->opts.dtype == SHIRO_BFLOAT16                                                                ? ncclBfloat16
                                                                                                       : ncclFloat16;
  int open = 0;
  if (g->nx == 0) return SHIRO_OK;
  CUDACHECKGOTO(cudaEventRecord(s->filled, s->compute), st, c->error);
  CUDACHECKGOTO(cudaStreamWaitEvent(s->comm, s->filled, 0), st, c->error);
  NCCLCHECKGOTO(ncclGroupStart(), st, c->error);
  open = 1;
  for (int64_t i = g->x_first; i < g->x_first + g->nx; i++) {
    const int64_t *r = c->prog[c->dir].stages.xs[i];
    char *addr = (char *)s->xbuf[r[XF_BUF]] + (size_t)r[XF_OFF] * (size_t)c->n * c->esz; /* the call's width */
    const size_t count = (size_t)r[XF_COUNT] * (size_t)c->n;
    if (r[XF_DIR] == 0) NCCLCHECKGOTO(ncclSend(addr, count, t, (int)r[XF_PEER], s->nccl, s->comm), st, c->error);
    else NCCLCHECKGOTO(ncclRecv(addr, count, t, (int)r[XF_PEER], s->nccl, s->comm), st, c->error);
  }
  open = 0;
  NCCLCHECKGOTO(ncclGroupEnd(), st, c->error);
done:
  if (open) ncclGroupEnd(); /* a failed post still closes the group (its status is already recorded) */
  return st;
}

shiro_status cuda_nccl_wait(shiro_ctx *c, cuda_state *s, int32_t stage) {
  shiro_status st = SHIRO_OK;
  if (c->prog[c->dir].stages.stage[stage].nx == 0) return SHIRO_OK;
  CUDACHECKGOTO(cudaEventRecord(s->stage_done[stage], s->comm), st, c->error);
  CUDACHECKGOTO(cudaStreamWaitEvent(s->compute, s->stage_done[stage], 0), st, c->error);
done:
  return st;
}

void cuda_nccl_destroy(cuda_state *s) {
  if (s->nccl) {
    ncclCommDestroy(s->nccl);
    s->nccl = NULL;
  }
  for (int32_t g = 0; s->stage_done && g < s->nstage_done; g++)
    if (s->stage_done[g]) cudaEventDestroy(s->stage_done[g]);
  free(s->stage_done);
  s->stage_done = NULL;
  if (s->filled) {
    cudaEventDestroy(s->filled);
    s->filled = NULL;
  }
}
