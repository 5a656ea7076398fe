/* cuda_device.c — which GPU a rank uses, and which transport the context uses.
 *
 * Every rank runs the same sequence of collectives whatever happened
 * locally (its status travels with the data), so a failure on one rank
 * never leaves the others waiting. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

/* What each rank of a node tells the others: which device it uses. */
typedef struct dev_id {
  unsigned char uuid[16];
} dev_id;

/* Local part: device count, the device, its UUID. Fills *me; returns the status. */
static shiro_status pick(shiro_ctx *c, cuda_state *s, int local_rank, dev_id *me) {
  shiro_status st = SHIRO_OK;
  int ndev = 0;
  struct cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess) /* "no CUDA device" starts the message: tools key on it to skip */
    return cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "no CUDA device: cudaGetDeviceCount failed: %s (%d)",
                      cudaGetErrorString(e), (int)e);
  if (ndev <= 0) return cuda_notef(c->error, SHIRO_ERR_CUDA, __FILE__, __LINE__, "no CUDA device: cudaGetDeviceCount found 0");
  if (c->opts.device >= ndev || c->opts.device < -1)
    return cuda_notef(c->error, SHIRO_ERR_ARG, __FILE__, __LINE__, "device %d requested, this node has devices 0 .. %d",
                      c->opts.device, ndev - 1);
  if (c->opts.transport != SHIRO_TRANSPORT_AUTO && c->opts.transport != SHIRO_TRANSPORT_NCCL &&
      c->opts.transport != SHIRO_TRANSPORT_MPI)
    return cuda_notef(c->error, SHIRO_ERR_ARG, __FILE__, __LINE__, "unknown transport %d", (int)c->opts.transport);
  s->device = c->opts.device >= 0 ? c->opts.device : local_rank % ndev;
  CUDACHECKGOTO(cudaSetDevice(s->device), st, c->error);
  CUDACHECKGOTO(cudaGetDeviceProperties(&prop, s->device), st, c->error);
  memcpy(me->uuid, prop.uuid.bytes, sizeof me->uuid);
done:
  return st;
}

shiro_status cuda_choose_device(shiro_ctx *c, cuda_state *s) {
  shiro_status st = SHIRO_OK;
  MPI_Comm node = MPI_COMM_NULL;
  dev_id me, *all = NULL;
  int rank = 0, size = 1, local_rank = 0, local_size = 1, shared = 0;
  memset(&me, 0, sizeof me);
  MPI_Comm_rank(c->comm, &rank);
  MPI_Comm_size(c->comm, &size);
  if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    /* collective and symmetric: every rank sees it fail */
    return cuda_notef(c->error, SHIRO_ERR_MPI, __FILE__, __LINE__, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
  }
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  all = calloc((size_t)local_size, sizeof *all);
  if (!all) st = cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  else st = pick(c, s, local_rank, &me);
  st = rt_agree(c->comm, st, c->error, "the CUDA setup"); /* from here on every rank has a device and a gather buffer */
  /* Which ranks of this node share a device: NCCL refuses two ranks on one GPU. */
  if (st == SHIRO_OK &&
      MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, node) != MPI_SUCCESS)
    st = cuda_notef(c->error, SHIRO_ERR_MPI, __FILE__, __LINE__, "MPI_Allgather of the device ids failed");
  for (int i = 0; st == SHIRO_OK && i < local_size; i++)
    for (int j = i + 1; j < local_size; j++)
      if (!memcmp(all[i].uuid, all[j].uuid, sizeof all[i].uuid)) shared = 1;
  MPI_Comm_free(&node);
  free(all);
  if (st != SHIRO_OK) return st;
  int in[3] = {shared, (int)c->opts.transport, -(int)c->opts.transport}, out[3] = {0, 0, 0};
  if (MPI_Allreduce(in, out, 3, MPI_INT, MPI_MAX, c->comm) != MPI_SUCCESS)
    return cuda_notef(c->error, SHIRO_ERR_MPI, __FILE__, __LINE__, "MPI_Allreduce failed");
  const int any_shared = out[0];
  if (out[1] != -out[2]) /* the transport's setup is collective: every rank must take the same one */
    return cuda_notef(c->error, SHIRO_ERR_ARG, __FILE__, __LINE__, "the ranks asked for different transports (%d .. %d)",
                      -out[2], out[1]);
  /* The same decision on every rank: its inputs (transport, any_shared, size) are the same everywhere. */
  if (c->opts.transport == SHIRO_TRANSPORT_NCCL && any_shared)
    return cuda_notef(c->error, SHIRO_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "transport NCCL needs a GPU of its own for every rank, but ranks of one node share a GPU (NCCL "
                      "refuses that: \"Duplicate GPU detected\"); use SHIRO_TRANSPORT_MPI or AUTO");
  if (c->opts.transport == SHIRO_TRANSPORT_NCCL || (c->opts.transport == SHIRO_TRANSPORT_AUTO && !any_shared && size > 1))
    s->xport = CUDA_XPORT_NCCL;
  else
    s->xport = cuda_mpi_is_cuda_aware() ? CUDA_XPORT_MPI_AWARE : CUDA_XPORT_MPI_STAGED;
  return SHIRO_OK;
}
