/* mpi_xport.h — the MPI transport: one persistent request per message, made once.
 *
 * The requests are made for rows of the context's N values. A call of another
 * width n (shiro_spmm_n) moves the same records with n values a row, packed
 * at n values a row in the same buffers: their messages go out as MPI_Isend /
 * MPI_Irecv into a second array of requests made at setup, so that such a
 * call allocates nothing either.
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
  MPI_Datatype row_type; /* N contiguous values (valid when have_type) */
  int have_type;
  int64_t nreq;
  MPI_Request *req; /* [nreq], by stage, in the stages' posting order */
  MPI_Request *alt; /* [nreq] the requests of a call of another width (non-persistent; MPI_REQUEST_NULL when done) */
  MPI_Request *cur; /* the stage in flight's array: req or alt */
  const int64_t **rec; /* [nreq] the exchange record of each request */
  void *base[PROG_NBUF]; /* the buffers the records' offsets are in */
  MPI_Comm comm;
  MPI_Datatype value; /* MPI_FLOAT, MPI_DOUBLE, or MPI_UINT16_T (the 16-bit types' bits) */
  size_t esz; /* bytes per value */
  int64_t n; /* the width the persistent requests were made for */
  int64_t max_count; /* the most rows of one record */
  int64_t *first; /* [nstages+1]: stage s's requests are req[first[s] .. first[s+1]-1] */
  int32_t nstages;
  int32_t started; /* 1 + the stage started and not yet waited for; 0: none */
  int polled; /* 1 once a poll found the active stage complete (or failed) */
  int poll_rc; /* MPI_SUCCESS, or the error of a failed poll (reported by the wait) */
} mpi_xport;

/* Makes the persistent requests of every record of sg over the buffers
 * base[PROG_BUF_S] and base[PROG_BUF_R] (row i of a buffer at byte i · row_bytes,
 * row_bytes = n · the value size). Local (no communication). On failure msg
 * (512 bytes) says why; mpi_xport_destroy either way. */
shiro_status mpi_xport_setup(mpi_xport *x, const rt_stages *sg, MPI_Comm comm, shiro_dtype dtype, int64_t n,
                             void *const base[PROG_NBUF], char *msg);

/* Starts the requests of one stage for a call of width n (1 .. the setup's n): MPI_Startall of the
 * persistent requests at the setup's n, else one MPI_Isend / MPI_Irecv per record of count · n
 * values at row offset off · n (refused with SHIRO_ERR_ARG when count · n exceeds INT_MAX).
 * mpi_xport_wait completes them. */
shiro_status mpi_xport_start(mpi_xport *x, int32_t stage, int64_t n, char *msg);
/* 1 if a call of width n can post every record (count · n values fit an int). Pure. */
int mpi_xport_width_fits(const mpi_xport *x, int64_t n);
/* Completes (MPI_Waitall) the requests of one stage. */
shiro_status mpi_xport_wait(mpi_xport *x, int32_t stage, char *msg);

/* Progress of the stage in flight while the caller computes (a cpu_progress
 * poll; arg is the mpi_xport): MPI_Testall on its requests. Open MPI moves a
 * started message (a rendezvous, its single copy) only inside MPI calls, so
 * without these the exchange would wait for mpi_xport_wait. Returns 1 once
 * nothing is left to progress (no stage active, all complete, or an error,
 * which mpi_xport_wait then reports), else 0. Call it on the thread that
 * started the stage, outside parallel regions. */
int mpi_xport_poll(void *x);

/* 1 if a stage is started, not yet waited for, and not yet found complete by a poll. */
int mpi_xport_in_flight(const mpi_xport *x);

/* Frees the requests and the datatype and zeroes x (also after a partial setup). */
void mpi_xport_destroy(mpi_xport *x);

#endif
