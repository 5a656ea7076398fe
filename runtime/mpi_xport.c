/* mpi_xport.c — persistent MPI requests per stage, made once over the context's buffers. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_xport.h"

/* MPI tag of an exchange record: kinds never share a tag. */
static int xchg_tag(const int64_t *rec) { return (int)(rec[XF_STAGE] * 16 + rec[XF_KIND]); }

/* Writes "WHAT failed: REASON" into msg and returns SHIRO_ERR_MPI. */
static shiro_status mpi_failed(char *msg, int rc, const char *what, long long stage) {
  char why[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS) snprintf(why, sizeof why, "MPI error %d", rc);
  snprintf(msg, 512, "%s (stage %lld) failed: %s", what, stage, why);
  return SHIRO_ERR_MPI;
}

shiro_status mpi_xport_setup(mpi_xport *x, const rt_stages *sg, MPI_Comm comm, shiro_dtype dtype, int64_t n,
                             void *const base[PROG_NBUF], char *msg) {
  memset(x, 0, sizeof *x);
  x->nstages = sg->nstages;
  x->req = malloc((size_t)(sg->nx ? sg->nx : 1) * sizeof *x->req);
  x->alt = malloc((size_t)(sg->nx ? sg->nx : 1) * sizeof *x->alt);
  x->rec = malloc((size_t)(sg->nx ? sg->nx : 1) * sizeof *x->rec);
  x->first = calloc((size_t)sg->nstages + 1, sizeof *x->first);
  x->cur = x->req;
  x->comm = comm;
  x->n = n;
  /* the 16-bit types move as their bits (MPI has no bfloat16; nothing is reduced) */
  x->value = dtype == SHIRO_FLOAT32 ? MPI_FLOAT : dtype == SHIRO_FLOAT64 ? MPI_DOUBLE
                                                                         : MPI_UINT16_T;
  x->esz = dtype == SHIRO_FLOAT32 ? sizeof(float) : dtype == SHIRO_FLOAT64 ? sizeof(double)
                                                                           : sizeof(uint16_t);
  for (int k = 0; k < PROG_NBUF; k++) x->base[k] = base[k];
  if (!x->req || !x->alt || !x->rec || !x->first) {
    snprintf(msg, 512, "out of memory (%lld persistent requests)", (long long)sg->nx);
    return SHIRO_ERR_NOMEM;
  }
  int rc = MPI_Type_contiguous((int)n, x->value, &x->row_type);
  x->have_type = rc == MPI_SUCCESS;
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&x->row_type);
  if (rc != MPI_SUCCESS) return mpi_failed(msg, rc, "MPI_Type_contiguous of a row", -1);
  const size_t row_bytes = (size_t)n * x->esz;
  for (int32_t s = 0; s < sg->nstages; s++) {
    const rt_stage *g = &sg->stage[s];
    x->first[s] = x->nreq;
    for (int64_t i = g->x_first; i < g->x_first + g->nx; i++) {
      const int64_t *r = sg->xs[i];
      void *addr = (char *)base[r[XF_BUF]] + (size_t)r[XF_OFF] * row_bytes;
      x->rec[x->nreq] = r;
      x->alt[x->nreq] = MPI_REQUEST_NULL;
      if (r[XF_COUNT] > x->max_count) x->max_count = r[XF_COUNT];
      rc = r[XF_DIR] == 0 ? MPI_Send_init(addr, (int)r[XF_COUNT], x->row_type, (int)r[XF_PEER], xchg_tag(r), comm, &x->req[x->nreq])
                          : MPI_Recv_init(addr, (int)r[XF_COUNT], x->row_type, (int)r[XF_PEER], xchg_tag(r), comm, &x->req[x->nreq]);
      if (rc != MPI_SUCCESS) return mpi_failed(msg, rc, r[XF_DIR] == 0 ? "MPI_Send_init" : "MPI_Recv_init", s);
      x->nreq++;
    }
  }
  x->first[sg->nstages] = x->nreq;
  return SHIRO_OK;
}

int mpi_xport_width_fits(const mpi_xport *x, int64_t n) { return n >= 1 && x->max_count <= INT_MAX / n; }

/* The records of one stage at width n (not the persistent requests' width): MPI_Isend / MPI_Irecv into
 * x->alt, rows packed at n values each. On failure the requests posted so far are left in x->alt
 * (the call fails and the context is to be destroyed, as after any MPI failure inside a call). */
static int start_width(mpi_xport *x, int32_t stage, int64_t n) {
  const size_t row_bytes = (size_t)n * x->esz;
  for (int64_t q = x->first[stage]; q < x->first[stage + 1]; q++) {
    const int64_t *r = x->rec[q];
    void *addr = (char *)x->base[r[XF_BUF]] + (size_t)r[XF_OFF] * row_bytes;
    const int count = (int)(r[XF_COUNT] * n);
    const int rc = r[XF_DIR] == 0 ? MPI_Isend(addr, count, x->value, (int)r[XF_PEER], xchg_tag(r), x->comm, &x->alt[q])
                                  : MPI_Irecv(addr, count, x->value, (int)r[XF_PEER], xchg_tag(r), x->comm, &x->alt[q]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

shiro_status mpi_xport_start(mpi_xport *x, int32_t stage, int64_t width, char *msg) {
  const int n = (int)(x->first[stage + 1] - x->first[stage]);
  if (width != x->n && !mpi_xport_width_fits(x, width)) {
    snprintf(msg, 512, "a message of %lld rows of %lld values is more than an MPI count (INT_MAX values)",
             (long long)x->max_count, (long long)width);
    return SHIRO_ERR_ARG;
  }
  x->cur = width == x->n ? x->req : x->alt;
  int rc = !n ? MPI_SUCCESS : width == x->n ? MPI_Startall(n, x->req + x->first[stage])
                                            : start_width(x, stage, width);
  if (rc != MPI_SUCCESS) return mpi_failed(msg, rc, width == x->n ? "MPI_Startall" : "MPI_Isend/MPI_Irecv", stage);
  x->started = n ? stage + 1 : 0;
  x->polled = 0;
  return SHIRO_OK;
}

int mpi_xport_in_flight(const mpi_xport *x) { return x->started > 0 && !x->polled; }

int mpi_xport_poll(void *arg) {
  mpi_xport *x = arg;
  if (!mpi_xport_in_flight(x)) return 1;
  const int32_t s = x->started - 1;
  int flag = 0;
  int rc = MPI_Testall((int)(x->first[s + 1] - x->first[s]), x->cur + x->first[s], &flag, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) x->poll_rc = rc;
  x->polled = flag || rc != MPI_SUCCESS;
  return x->polled;
}

shiro_status mpi_xport_wait(mpi_xport *x, int32_t stage, char *msg) {
  const int n = (int)(x->first[stage + 1] - x->first[stage]);
  int rc = n ? MPI_Waitall(n, x->cur + x->first[stage], MPI_STATUSES_IGNORE) : MPI_SUCCESS;
  const int poll_rc = x->started == stage + 1 ? x->poll_rc : MPI_SUCCESS;
  if (x->started == stage + 1) {
    x->started = 0;
    x->poll_rc = MPI_SUCCESS;
  }
  if (poll_rc != MPI_SUCCESS) return mpi_failed(msg, poll_rc, "MPI_Testall", stage);
  return rc == MPI_SUCCESS ? SHIRO_OK : mpi_failed(msg, rc, "MPI_Waitall", stage);
}

void mpi_xport_destroy(mpi_xport *x) {
  for (int64_t r = 0; r < x->nreq; r++) MPI_Request_free(&x->req[r]);
  for (int64_t r = 0; x->alt && r < x->nreq; r++) /* left in flight by a failed call of another width */
    if (x->alt[r] != MPI_REQUEST_NULL) MPI_Request_free(&x->alt[r]);
  if (x->have_type) MPI_Type_free(&x->row_type);
  free(x->req);
  free(x->alt);
  free(x->rec);
  free(x->first);
  memset(x, 0, sizeof *x);
}
