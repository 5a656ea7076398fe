/* cuda_mpi.c — the MPI transport of the CUDA backend.
 *
 * The runtime's persistent requests (runtime/mpi_xport.c, as the CPU backend
 * uses them), made once, one per message. With a CUDA-aware MPI library
 * they point at the device buffers S and R; otherwise at pinned host copies:
 * START then copies the stage's send rows device → host and waits for them
 * (the stream that filled S is the compute stream), and WAIT copies the
 * received rows host → device on the compute stream. */
#include <stdlib.h>

#include "cuda_backend.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI (after mpi.h): MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#endif

int cuda_mpi_is_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

shiro_status cuda_mpi_setup(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  const int staged = s->xport == CUDA_XPORT_MPI_STAGED;
  const int64_t *rows = c->rows;
  if (staged)
    for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++)
      if (rows[b] > 0) CUDACHECKGOTO(cudaMallocHost(&s->host[b], (size_t)rows[b] * s->row_bytes), st, c->error);
done:
  return st;
}

shiro_status cuda_mpi_load(shiro_ctx *c, cuda_state *s, int d) {
  void *const *bufs = s->xport == CUDA_XPORT_MPI_STAGED ? s->host : s->xbuf;
  return mpi_xport_setup(&s->mpi[d], &c->prog[d].stages, c->comm, c->opts.dtype, c->opts.n, bufs, c->error);
}

/* Copies ranges[first .. first+n) between device and pinned host copies on the compute stream. */
static shiro_status copy_ranges(shiro_ctx *c, cuda_state *s, int64_t first, int64_t n, enum cudaMemcpyKind kind) {
  shiro_status st = SHIRO_OK;
  for (int64_t i = first; i < first + n; i++) {
    const rt_range *r = &c->prog[c->dir].stages.ranges[i];
    const size_t row_bytes = (size_t)c->n * c->esz; /* the call's width: rows packed as the xport sends them */
    const size_t off = (size_t)r->row * row_bytes, bytes = (size_t)r->count * row_bytes;
    char *d = (char *)s->xbuf[r->buf] + off, *h = (char *)s->host[r->buf] + off;
    if (kind == cudaMemcpyDeviceToHost) CUDACHECKGOTO(cudaMemcpyAsync(h, d, bytes, kind, s->compute), st, c->error);
    else CUDACHECKGOTO(cudaMemcpyAsync(d, h, bytes, kind, s->compute), st, c->error);
  }
done:
  return st;
}

shiro_status cuda_mpi_start(shiro_ctx *c, cuda_state *s, int32_t stage) {
  shiro_status st = SHIRO_OK;
  const rt_stage *g = &c->prog[c->dir].stages.stage[stage];
  if (g->nx == 0) return SHIRO_OK;
  if (g->sends) {
    /* MPI reads the send rows as soon as it starts: what the compute stream queued must be done. */
    if (s->xport == CUDA_XPORT_MPI_STAGED) SHIRO_CHECK_GOTO(copy_ranges(c, s, g->out_first, g->nout, cudaMemcpyDeviceToHost), st);
    CUDACHECKGOTO(cudaStreamSynchronize(s->compute), st, c->error);
  }
  st = mpi_xport_start(&s->mpi[c->dir], stage, c->n, c->error);
done:
  return st;
}

shiro_status cuda_mpi_wait(shiro_ctx *c, cuda_state *s, int32_t stage) {
  shiro_status st = SHIRO_OK;
  const rt_stage *g = &c->prog[c->dir].stages.stage[stage];
  if (g->nx == 0) return SHIRO_OK;
  SHIRO_CHECK_GOTO(mpi_xport_wait(&s->mpi[c->dir], stage, c->error), st);
  if (s->xport == CUDA_XPORT_MPI_STAGED) SHIRO_CHECK_GOTO(copy_ranges(c, s, g->in_first, g->nin, cudaMemcpyHostToDevice), st);
done:
  return st;
}

void cuda_mpi_destroy(cuda_state *s) {
  mpi_xport_destroy(&s->mpi[0]);
  mpi_xport_destroy(&s->mpi[1]);
  for (int b = 0; b < PROG_NBUF; b++)
    if (s->host[b]) {
      cudaFreeHost(s->host[b]);
      s->host[b] = NULL;
    }
}
