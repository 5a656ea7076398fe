/* split.c — split-phase calls: shiro_spmm_begin / shiro_spmm_end (and the transposed pair).
 *
 * A call's program is one list of ops (interp.c). Begin runs it up to its first WAIT: the gathers
 * of the B rows to send and the partial rows computed for other ranks, the START of the first
 * stage's persistent requests, and the local product that overlaps them (polling them, as the
 * blocking call does). End runs the rest: the waits, the adds of what arrived, later stages, and
 * the backend's finish. The blocking call is the same walk without the break, so the bits are the
 * same. The caller's own work between the two overlaps the messages still in flight; with Open
 * MPI's default (no progress thread) a message that needs the peers' polls (rendezvous) moves on
 * only in end. The CUDA backend runs the whole call in begin (its begin and finish make its device
 * current and restore the caller's, which the caller's work in between would otherwise see). */
#include <stdio.h>

#include "internal.h"

shiro_status split_busy(shiro_ctx *c, const char *what) {
  if (!c->split.active) return SHIRO_OK;
  snprintf(c->error, sizeof c->error, "%s: a split call is in progress on this context (call %s first)", what,
           c->split.dir == RT_FORWARD ? "shiro_spmm_end" : "shiro_spmm_transpose_end");
  return SHIRO_ERR_ARG;
}

/* The failure's message in c->error, naming the call and the backend. */
static shiro_status named(shiro_ctx *c, shiro_status st, const char *what) {
  if (st != SHIRO_OK) {
    char why[sizeof c->error];
    snprintf(why, sizeof why, "%s", c->error);
    snprintf(c->error, sizeof c->error, "%s (%s backend): %.420s", what, c->be->name, why);
  }
  return st;
}

/* Begin of a call of program dir: checks, then the ops before the first WAIT (all of them on the
 * CUDA backend). On failure the call is over (no end to call). (internal.h) */
shiro_status split_begin(shiro_ctx *c, int dir, const void *in, void *out, const char *what) {
  shiro_status st = split_busy(c, what);
  if (st == SHIRO_OK) st = ctx_check_buffers(c, dir, in, out, what);
  if (st != SHIRO_OK) return st;
  c->error[0] = 0;
  if (dir == RT_TRANSPOSE && (st = ctx_ready_transpose(c)) != SHIRO_OK) return named(c, st, what);
  const rt_program *p = &c->prog[dir];
  const int64_t stop = c->opts.backend == SHIRO_BACKEND_CUDA ? p->nops : interp_first_wait(p);
  st = interp_begin(c, dir, in, out);
  if (st == SHIRO_OK) st = interp_ops(c, dir, in, out, 0, stop, NULL, NULL);
  if (st != SHIRO_OK || stop == p->nops) {
    st = c->be->finish ? c->be->finish(c, st) : st;
    if (st != SHIRO_OK) return named(c, st, what);
  }
  c->split.active = 1;
  c->split.dir = dir;
  c->split.in = in;
  c->split.out = out;
  c->split.next = stop;
  c->split.user_out = NULL;
  c->split.relayout = 0;
  return SHIRO_OK;
}

/* End of the call begun on c in direction dir: the rest of its ops, then the backend's finish. */
static shiro_status end(shiro_ctx *c, int dir, const char *what) {
  if (!c->split.active || c->split.dir != dir) {
    snprintf(c->error, sizeof c->error, "%s: no %s call begun on this context", what,
             dir == RT_FORWARD ? "shiro_spmm_begin" : "shiro_spmm_transpose_begin");
    return SHIRO_ERR_ARG;
  }
  const rt_program *p = &c->prog[dir];
  c->split.active = 0;
  shiro_status st = SHIRO_OK;
  if (c->split.next < p->nops) { /* else begin ran the whole call (and its finish) */
    st = interp_ops(c, dir, c->split.in, c->split.out, c->split.next, p->nops, NULL, NULL);
    st = c->be->finish ? c->be->finish(c, st) : st;
  }
  if (c->split.relayout) st = layout_split_end(c, st);
  return named(c, st, what);
}

shiro_status shiro_spmm_begin(shiro_ctx *c, const void *B_local, void *C_local) {
  return c ? split_begin(c, RT_FORWARD, B_local, C_local, "shiro_spmm_begin") : SHIRO_ERR_ARG;
}

shiro_status shiro_spmm_end(shiro_ctx *c) { return c ? end(c, RT_FORWARD, "shiro_spmm_end") : SHIRO_ERR_ARG; }

shiro_status shiro_spmm_transpose_begin(shiro_ctx *c, const void *Y_local, void *X_local) {
  return c ? split_begin(c, RT_TRANSPOSE, Y_local, X_local, "shiro_spmm_transpose_begin") : SHIRO_ERR_ARG;
}

shiro_status shiro_spmm_transpose_end(shiro_ctx *c) {
  return c ? end(c, RT_TRANSPOSE, "shiro_spmm_transpose_end") : SHIRO_ERR_ARG;
}
