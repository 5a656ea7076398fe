/* plan_comm.c — shiro_plan_open_comm: the collective open, one outcome on every rank. */
#include <stdio.h>

#include "error.h"
#include "internal.h"

/* Local checks of the open against the communicator; *plan is the rank's plan or NULL. */
static shiro_status open_here(const char *path, MPI_Comm comm, shiro_plan **plan, shiro_error *err) {
  int rank = 0, size = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_plan_open_comm: cannot query the communicator");
  if (!plan) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_open_comm: plan is NULL");
  shiro_status st = shiro_plan_open(path, rank, plan, err);
  if (st == SHIRO_ERR_MISMATCH) { /* a rank the plan does not have: a launch with too many ranks */
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    return shiro_fail(err, st, "%.440s; launched with %d", why, size);
  }
  if (st != SHIRO_OK) return st;
  const int ranks = (*plan)->meta.ranks;
  if (size != ranks) {
    shiro_plan_close(plan);
    return shiro_fail(err, SHIRO_ERR_MISMATCH,
                      "%s: the plan was made for %d ranks but the communicator has %d (launch with -np %d)",
                      path, ranks, size, ranks);
  }
  return SHIRO_OK;
}

shiro_status shiro_plan_open_comm(const char *path, MPI_Comm comm, shiro_plan **plan, shiro_error *err) {
  if (plan) *plan = NULL;
  shiro_error own; /* the failing rank's message reaches the others even when its caller passed no err */
  if (!err) err = &own;
  err->message[0] = 0;
  int up = 0, down = 0;
  if (MPI_Initialized(&up) != MPI_SUCCESS || !up || MPI_Finalized(&down) != MPI_SUCCESS || down)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_open_comm: MPI is %s (it needs MPI_Init before and "
                                          "MPI_Finalize after; shiro_plan_open needs neither)",
                      up ? "finalized" : "not initialized");
  /* A rank without a communicator cannot tell the others (as shiro_ctx_create). */
  if (comm == MPI_COMM_NULL) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_plan_open_comm: comm is MPI_COMM_NULL");
  shiro_plan *mine = NULL;
  shiro_status st = open_here(path, comm, plan ? &mine : NULL, err);
  st = rt_agree(comm, st, err->message, "shiro_plan_open_comm");
  if (st != SHIRO_OK) {
    shiro_plan_close(&mine);
    return st;
  }
  *plan = mine;
  return SHIRO_OK;
}
