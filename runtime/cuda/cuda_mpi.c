/* cuda_mpi.c — the MPI transport of the CUDA backend.
 *
 * Persistent point-to-point requests, made once, one per message, tagged
 * like the CPU backend's (stage · 16 + kind). With a CUDA-aware MPI library
 * they point at the device buffers S and R; otherwise at pinned host copies:
 * START then copies the stage's send rows device → host and waits for them
 * (the stream that filled S is the compute stream), and WAIT copies the
 * received rows host → device on the compute stream. */
#include <stdlib.h>

#include "cuda_backend.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  /* Open MPI (after mpi.h): MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
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
  const prog_rank *pr = &c->plan->pr;
  const int64_t rows[PROG_NBUF] = {0, 0, pr->s_rows, pr->r_rows};
  MPI_Datatype base = c->opts.dtype == SHIRO_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
  if (staged)
    for (int b = PROG_BUF_S; b <= PROG_BUF_R; b++)
      if (rows[b] > 0) CUDACHECKGOTO(cudaMallocHost(&s->host[b], (size_t)rows[b] * s->row_bytes), st, c->error);
  s->req = malloc((size_t)(s->nx ? s->nx : 1) * sizeof *s->req);
  if (!s->req) { st = cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory"); goto done; }
  MPICHECKGOTO(MPI_Type_contiguous((int)c->opts.n, base, &s->row_type), st, c->error);
  MPICHECKGOTO(MPI_Type_commit(&s->row_type), st, c->error);
  void *const *bufs = staged ? s->host : s->dev;
  for (int32_t g = 0; g < s->nstages; g++) {
    cuda_stage *sg = &s->stages[g];
    sg->req_first = s->nreq;
    for (int64_t i = sg->x_first; i < sg->x_first + sg->nx; i++) {
      const int64_t *r = s->xs[i];
      void *addr = (char *)bufs[r[XF_BUF]] + (size_t)r[XF_OFF] * s->row_bytes;
      if (r[XF_DIR] == 0)
        MPICHECKGOTO(MPI_Send_init(addr, (int)r[XF_COUNT], s->row_type, (int)r[XF_PEER], xchg_tag(r), c->comm, &s->req[s->nreq]),
                     st, c->error);
      else
        MPICHECKGOTO(MPI_Recv_init(addr, (int)r[XF_COUNT], s->row_type, (int)r[XF_PEER], xchg_tag(r), c->comm, &s->req[s->nreq]),
                     st, c->error);
      s->nreq++;
    }
    sg->nreq = s->nreq - sg->req_first;
  }
done:
  return st;
}

/* Copies ranges[first .. first+n) between device and pinned host copies on the compute stream. */
static shiro_status copy_ranges(shiro_ctx *c, cuda_state *s, int64_t first, int64_t n, enum cudaMemcpyKind kind) {
  shiro_status st = SHIRO_OK;
  for (int64_t i = first; i < first + n; i++) {
    const cuda_range *r = &s->ranges[i];
    const size_t off = (size_t)r->row * s->row_bytes, bytes = (size_t)r->count * s->row_bytes;
    char *d = (char *)s->dev[r->buf] + off, *h = (char *)s->host[r->buf] + off;
    if (kind == cudaMemcpyDeviceToHost) CUDACHECKGOTO(cudaMemcpyAsync(h, d, bytes, kind, s->compute), st, c->error);
    else CUDACHECKGOTO(cudaMemcpyAsync(d, h, bytes, kind, s->compute), st, c->error);
  }
done:
  return st;
}

shiro_status cuda_mpi_start(shiro_ctx *c, cuda_state *s, int64_t stage) {
  shiro_status st = SHIRO_OK;
  cuda_stage *g = &s->stages[stage];
  if (g->nreq == 0) return SHIRO_OK;
  if (g->sends) {
    /* MPI reads the send rows as soon as it starts: what the compute stream queued must be done. */
    if (s->xport == CUDA_XPORT_MPI_STAGED) STATUSGOTO(copy_ranges(c, s, g->out_first, g->nout, cudaMemcpyDeviceToHost), st);
    CUDACHECKGOTO(cudaStreamSynchronize(s->compute), st, c->error);
  }
  MPICHECKGOTO(MPI_Startall((int)g->nreq, s->req + g->req_first), st, c->error);
done:
  return st;
}

shiro_status cuda_mpi_wait(shiro_ctx *c, cuda_state *s, int64_t stage) {
  shiro_status st = SHIRO_OK;
  cuda_stage *g = &s->stages[stage];
  if (g->nreq == 0) return SHIRO_OK;
  MPICHECKGOTO(MPI_Waitall((int)g->nreq, s->req + g->req_first, MPI_STATUSES_IGNORE), st, c->error);
  if (s->xport == CUDA_XPORT_MPI_STAGED) STATUSGOTO(copy_ranges(c, s, g->in_first, g->nin, cudaMemcpyHostToDevice), st);
done:
  return st;
}

void cuda_mpi_destroy(cuda_state *s) {
  for (int64_t r = 0; r < s->nreq; r++) MPI_Request_free(&s->req[r]);
  s->nreq = 0;
  free(s->req);
  s->req = NULL;
  if (s->row_type != MPI_DATATYPE_NULL) MPI_Type_free(&s->row_type);
  for (int b = 0; b < PROG_NBUF; b++)
    if (s->host[b]) {
      cudaFreeHost(s->host[b]);
      s->host[b] = NULL;
    }
}
