/* agree.c — one outcome on every rank: a failure on one rank fails all, without a hang, and every
 * rank gets the failing rank's own status and message. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* What the lowest failing rank broadcasts to the others. */
typedef struct verdict {
  int status;
  char msg[SHIRO_MSG_LEN];
} verdict;

/* Writes the agreed message into msg: "WHAT failed on rank P[ (and K other ranks)]: WHY", with a
 * leading "WHAT: " of P's own message left out (it would say the call's name twice). */
static void agreed_message(char *msg, const char *what, int lowest, int failed, const char *why) {
  const size_t n = strlen(what);
  if (!strncmp(why, what, n) && !strncmp(why + n, " failed on rank ", 16)) { /* agreed on before: as it is */
    snprintf(msg, SHIRO_MSG_LEN, "%s", why);
    return;
  }
  if (!strncmp(why, what, n) && !strncmp(why + n, ": ", 2)) why += n + 2;
  char others[48] = "";
  if (failed > 1) snprintf(others, sizeof others, " (and %d other rank%s)", failed - 1, failed > 2 ? "s" : "");
  int at = snprintf(msg, SHIRO_MSG_LEN, "%s failed on rank %d%s: ", what, lowest, others);
  if (at < 0 || at >= SHIRO_MSG_LEN) return;
  size_t len = strlen(why), room = (size_t)(SHIRO_MSG_LEN - 1 - at); /* a long message loses its end */
  if (len > room) len = room;
  memcpy(msg + at, why, len);
  msg[at + (int)len] = 0;
}

shiro_status rt_agree(MPI_Comm comm, shiro_status st, char *msg, const char *what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int lowest = INT_MAX, failed = 0, mine = st != SHIRO_OK ? rank : INT_MAX, bad = st != SHIRO_OK;
  if (MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
      MPI_Allreduce(&bad, &failed, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS) {
    snprintf(msg, SHIRO_MSG_LEN, "%s: MPI_Allreduce failed while the ranks agreed on the outcome", what);
    return SHIRO_ERR_MPI;
  }
  if (lowest == INT_MAX) return SHIRO_OK;
  /* Only after a failure: the lowest failing rank's status and message, to every rank (one
   * broadcast of 516 bytes), so that no rank's user has to search the others' output. */
  verdict v = {.status = (int)st};
  if (rank == lowest) snprintf(v.msg, sizeof v.msg, "%s", msg);
  if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, lowest, comm) != MPI_SUCCESS) {
    snprintf(msg, SHIRO_MSG_LEN, "%s failed on rank %d; MPI_Bcast of its message failed", what, lowest);
    return SHIRO_ERR_MPI;
  }
  v.msg[sizeof v.msg - 1] = 0;
  agreed_message(msg, what, lowest, failed, v.msg);
  return (shiro_status)v.status;
}
