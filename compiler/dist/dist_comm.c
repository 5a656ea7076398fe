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

shiro_status dist_alltoallv(const dist_comm *c, const void *send, const int64_t *sendn, void **recv, int64_t *recvn,
                            shiro_error *err) {
  const int P = c->size;
  *recv = NULL;
  if (MPI_Alltoall(sendn, 1, MPI_INT64_T, recvn, 1, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    return dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Alltoall of the sizes failed"), err);
  int *sc = malloc((size_t)P * 4 * sizeof *sc), *sd = sc ? sc + P : NULL, *rc = sc ? sc + 2 * P : NULL,
      *rd = sc ? sc + 3 * P : NULL;
  int64_t stot = 0, rtot = 0;
  shiro_status st = sc ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  for (int d = 0; sc && d < P; d++) {
    sd[d] = (int)stot;
    rd[d] = (int)rtot;
    sc[d] = (int)sendn[d];
    rc[d] = (int)recvn[d];
    stot += sendn[d];
    rtot += recvn[d];
    if (stot > INT_MAX || rtot > INT_MAX) {
      st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 bytes to trade at once; plan with more processes");
      break;
    }
  }
  if (st == SHIRO_OK && !(*recv = malloc(rtot ? (size_t)rtot : 1)))
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory receiving %lld bytes", (long long)rtot);
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && MPI_Alltoallv(send, sc, sd, MPI_BYTE, *recv, rc, rd, MPI_BYTE, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Alltoallv failed");
  free(sc);
  if (st != SHIRO_OK) {
    free(*recv);
    *recv = NULL;
  }
  return st;
}

shiro_status dist_exchange(const dist_comm *c, const int64_t *sendn, dist_pack_fn pack, void *arg, void **recv,
                           int64_t *recvn, shiro_error *err) {
  const int P = c->size;
  *recv = NULL;
  if (MPI_Alltoall(sendn, 1, MPI_INT64_T, recvn, 1, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    return dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Alltoall of the sizes failed"), err);
  int64_t *at = malloc((size_t)P * sizeof *at), rtot = 0, widest = 0;
  shiro_status st = at ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  for (int d = 0; at && d < P; d++) {
    at[d] = rtot;
    rtot += recvn[d];
    if (d != c->rank && sendn[d] > widest) widest = sendn[d];
    if (sendn[d] > INT_MAX || recvn[d] > INT_MAX)
      st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 bytes for one process at once; plan with more "
                                                  "processes");
  }
  char *buf = NULL;
  if (st == SHIRO_OK && (!(*recv = malloc(rtot ? (size_t)rtot : 1)) || !(buf = malloc(widest ? (size_t)widest : 1))))
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory receiving %lld bytes", (long long)rtot);
  st = dist_agree(c, st, err);
  for (int k = 0; st == SHIRO_OK && k < P; k++) {
    const int d = (c->rank + k) % P, s = (c->rank - k + P) % P;
    if (k == 0) {
      pack(arg, d, (char *)*recv + at[d]);
      continue;
    }
    pack(arg, d, buf);
    if (MPI_Sendrecv(buf, (int)sendn[d], MPI_BYTE, d, 11, (char *)*recv + at[s], (int)recvn[s], MPI_BYTE, s, 11,
                     c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Sendrecv failed");
  }
  free(buf);
  free(at);
  if (st != SHIRO_OK) {
    free(*recv);
    *recv = NULL;
  }
  return st;
}
