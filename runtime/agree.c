/* agree.c — one outcome on every rank: a failure on one rank fails all, without a hang. */
#include <limits.h>
#include <stdio.h>

#include "internal.h"

shiro_status rt_agree(MPI_Comm comm, shiro_status st, char *msg, const char *what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int in[2] = {st != SHIRO_OK ? rank : INT_MAX, (int)st}, lowest = INT_MAX, worst = 0;
  if (MPI_Allreduce(&in[0], &lowest, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
      MPI_Allreduce(&in[1], &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) {
    snprintf(msg, SHIRO_MSG_LEN, "%s: MPI_Allreduce failed while the ranks agreed on the outcome", what);
    return SHIRO_ERR_MPI;
  }
  if (st != SHIRO_OK || lowest == INT_MAX) return st;
  snprintf(msg, SHIRO_MSG_LEN, "%s failed on rank %d (see its message)", what, lowest);
  return (shiro_status)worst;
}
