/* mpi_xport.h — the MPI transport: one persistent request per message, made once.
 *
 * Used by the CPU backend (over host S and R) and the CUDA backend's MPI
 * transport (over device S and R with a CUDA-aware MPI, else over pinned
 * host copies). Each request is tagged STAGE · 16 + KIND, so kinds never
 * share a tag and matching never relies on posting order alone. */
#ifndef SHIRO_MPI_XPORT_H
#define SHIRO_MPI_XPORT_H

#include <stdint.h>

#include <mpi.h>

#include "shiro.h"
#include "stages.h"

typedef struct mpi_xport {
  MPI_Datatype row_type;  /* N contiguous values (valid when have_type) */
  int have_type;
  int64_t nreq;
  MPI_Request *req;       /* [nreq], by stage, in the stages' posting order */
  int64_t *first;         /* [nstages+1]: stage s's requests are req[first[s] .. first[s+1]-1] */
  int32_t nstages;
} mpi_xport;

/* Makes the persistent requests of every record of sg over the buffers
 * base[PROG_BUF_S] and base[PROG_BUF_R] (row i of a buffer at byte i · row_bytes,
 * row_bytes = n · the value size). Local (no communication). On failure msg
 * (512 bytes) says why; mpi_xport_destroy either way. */
shiro_status mpi_xport_setup(mpi_xport *x, const rt_stages *sg, MPI_Comm comm, shiro_dtype dtype, int64_t n,
                             void *const base[PROG_NBUF], char *msg);

/* Starts (MPI_Startall) / completes (MPI_Waitall) the requests of one stage. */
shiro_status mpi_xport_start(mpi_xport *x, int32_t stage, char *msg);
shiro_status mpi_xport_wait(mpi_xport *x, int32_t stage, char *msg);

/* Frees the requests and the datatype and zeroes x (also after a partial setup). */
void mpi_xport_destroy(mpi_xport *x);

#endif
