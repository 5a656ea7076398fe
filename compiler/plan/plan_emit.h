/* plan_emit.h — what the plan builders do with each finished program: add its
 * certificate and pattern digest, then hand it, in rank order, to the
 * caller's sink (plan_build_each), which writes it or keeps it. Internal to
 * the builders (plan_build.c, plan_build_tier.c). */
#ifndef SHIRO_PLAN_EMIT_H
#define SHIRO_PLAN_EMIT_H

#include "plan_build.h"

typedef struct plan_emit {
  const sc_csr *A;
  const sc_partition *Prow;
  const sc_blocks *B;
  prog_meta meta;       /* complete before the first program is delivered */
  uint64_t *digest;     /* [R] plan_rows_digest of each rank's rows */
  plan_sink_fn sink;
  void *arg;
  shiro_error *err;
  shiro_status st;      /* the first failure (a builder's, a rank's, or the sink's); later ranks are dropped */
  int stop;             /* st != SHIRO_OK, read by every thread (atomic) */
} plan_emit;

/* Sets up the emitter for strategy s: the meta and the digests of A (one
 * pass). On failure (err filled) nothing is held. */
shiro_status plan_emit_init(plan_emit *e, const sc_csr *A, const sc_partition *Prow, const sc_blocks *B,
                            sc_strategy s, int32_t gpn, plan_sink_fn sink, void *arg, shiro_error *err);

/* Whether the build has already failed (builders skip the ranks left). */
int plan_emit_stopped(const plan_emit *e);

/* Adds rank pr->rank's certificate and digest. Thread-safe: any order. */
shiro_status plan_emit_finish(const plan_emit *e, prog_rank *pr);

/* Delivers a finished program (st: how building it went) to the sink.
 * Called once per rank, in rank order, one thread at a time (an OpenMP
 * ordered region). Takes *pr: it is the sink's, or freed on failure. */
void plan_emit_deliver(plan_emit *e, prog_rank *pr, shiro_status st);

/* Frees the emitter; returns the first failure recorded (err filled), or SHIRO_OK. */
shiro_status plan_emit_done(plan_emit *e);

#endif
