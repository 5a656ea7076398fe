/* dist_comm.c — one outcome for the planner's processes, and their all-to-all of bytes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_comm.h"
#include "error.h"

shiro_status dist_agree(const dist_comm *c, shiro_status st, shiro_error *err) {
  int mine = st != SHIRO_OK ? c->rank : INT_MAX, lowest = INT_MAX;
  if (MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, c->comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce failed while the planner's processes agreed on the outcome");
  if (lowest == INT_MAX) return SHIRO_OK;
  struct {
    int status;
    char msg[sizeof err->message];
  } v = {.status = (int)st};
  if (c->rank == lowest) {
    if (!strncmp(err->message, "process ", 8)) snprintf(v.msg, sizeof v.msg, "%s", err->message);
    else snprintf(v.msg, sizeof v.msg, "process %d: %.480s", lowest, err->message);
  }
  if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, lowest, c->comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "planning failed on process %d; MPI_Bcast of its message failed", lowest);
  v.msg[sizeof v.msg - 1] = 0;
  snprintf(err->message, sizeof err->message, "%s", v.msg);
  return (shiro_status)v.status;
}

/* The most bytes one MPI call moves (dist_set_chunk_bytes): counts are C ints. */
static int64_t chunk_bytes = (int64_t)1 << 30;

void dist_set_chunk_bytes(int64_t bytes) { chunk_bytes = bytes > 0 && bytes <= INT_MAX ? bytes : (int64_t)1 << 30; }

/* Sends sn bytes at sb to process d and receives rn bytes at rb from process s, each in pieces of at
 * most chunk_bytes: the piece counts follow from the sizes alone, which both ends of a pair know, so
 * every send meets its receive (none for 0 bytes). 0 on success. */
static int pair_exchange(MPI_Comm comm, const char *sb, int64_t sn, int d, char *rb, int64_t rn, int s) {
  const int64_t ch = chunk_bytes, ns = (sn + ch - 1) / ch, nr = (rn + ch - 1) / ch;
  MPI_Request *rq = malloc((size_t)(ns + nr + 1) * sizeof *rq);
  if (!rq) return 1;
  int bad = 0, n = 0;
  for (int64_t x = 0; x < nr; x++) {
    const int64_t off = x * ch, len = rn - off < ch ? rn - off : ch;
    bad |= MPI_Irecv(rb + off, (int)len, MPI_BYTE, s, 11, comm, &rq[n++]) != MPI_SUCCESS;
  }
  for (int64_t x = 0; x < ns; x++) {
    const int64_t off = x * ch, len = sn - off < ch ? sn - off : ch;
    bad |= MPI_Isend(sb + off, (int)len, MPI_BYTE, d, 11, comm, &rq[n++]) != MPI_SUCCESS;
  }
  bad |= MPI_Waitall(n, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
  free(rq);
  return bad;
}

/* dist_exchange's rounds, the bytes for process d packed by pack into a buffer of the widest block,
 * or (flat not NULL) read in place at flat + flat_at[d]. Collective; failures agreed first. */
static shiro_status rounds(const dist_comm *c, const int64_t *sendn, dist_pack_fn pack, void *arg, const char *flat,
                           const int64_t *flat_at, void **recv, int64_t *recvn, shiro_error *err) {
  const int P = c->size;
  *recv = NULL;
  if (MPI_Alltoall(sendn, 1, MPI_INT64_T, recvn, 1, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    return dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Alltoall of the sizes failed"), err);
  int64_t *at = malloc((size_t)P * sizeof *at), rtot = 0, widest = 0;
  shiro_status st = at ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  for (int d = 0; at && d < P; d++) {
    at[d] = rtot;
    rtot += recvn[d];
    if (!flat && d != c->rank && sendn[d] > widest) widest = sendn[d];
  }
  char *buf = NULL;
  if (st == SHIRO_OK && (!(*recv = malloc(rtot ? (size_t)rtot : 1)) || !(buf = malloc(widest ? (size_t)widest : 1))))
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory receiving %lld bytes", (long long)rtot);
  st = dist_agree(c, st, err);
  for (int k = 0; st == SHIRO_OK && k < P; k++) {
    const int d = (c->rank + k) % P, s = (c->rank - k + P) % P;
    char *mine = (char *)*recv + at[s];
    if (k == 0) {
      if (flat) memcpy(mine, flat + flat_at[d], (size_t)sendn[d]);
      else pack(arg, d, mine);
      continue;
    }
    if (!flat) pack(arg, d, buf);
    if (pair_exchange(c->comm, flat ? flat + flat_at[d] : buf, sendn[d], d, mine, recvn[s], s))
      st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Isend or MPI_Irecv to process %d failed", d);
  }
  free(buf);
  free(at);
  if (st != SHIRO_OK) {
    free(*recv);
    *recv = NULL;
  }
  return st;
}

shiro_status dist_alltoallv(const dist_comm *c, const void *send, const int64_t *sendn, void **recv, int64_t *recvn,
                            shiro_error *err) {
  int64_t *at = malloc((size_t)c->size * sizeof *at), tot = 0;
  for (int d = 0; at && d < c->size; d++) {
    at[d] = tot;
    tot += sendn[d];
  }
  shiro_status st = dist_agree(c, at ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory"), err);
  if (st == SHIRO_OK) st = rounds(c, sendn, NULL, NULL, send, at, recv, recvn, err);
  else *recv = NULL;
  free(at);
  return st;
}

shiro_status dist_exchange(const dist_comm *c, const int64_t *sendn, dist_pack_fn pack, void *arg, void **recv,
                           int64_t *recvn, shiro_error *err) {
  return rounds(c, sendn, pack, arg, NULL, NULL, recv, recvn, err);
}
