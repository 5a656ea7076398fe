/* plan_deliver.h — what becomes of each finished program: its certificate
 * and pattern digest are added, then it is handed, in rank order, to the
 * caller's sink (plan_build_each), which writes it or keeps it. Internal to
 * plan/: plan_build.c sets a delivery up, the builders (plan_build_flat.c,
 * plan_build_tier.c) deliver their programs to it. */
#ifndef SHIRO_PLAN_DELIVER_H
#define SHIRO_PLAN_DELIVER_H

#include <pthread.h>

#include "plan_build.h"

typedef struct plan_deliver {
  const sc_csr *A;
  const sc_partition *Prow;
  const sc_blocks *B;
  prog_meta meta; /* complete before the first program is delivered */
  uint64_t *digest; /* [R] plan_rows_digest of each rank's rows */
  plan_sink_fn sink;
  void *arg;
  shiro_error *err;
  shiro_status st; /* the first failure (a builder's, a rank's, or the sink's); later ranks are dropped */
  int stop; /* st != SHIRO_OK, read by every thread (atomic) */
  int32_t next; /* the rank whose turn it is to be delivered (under turn) */
  int32_t first, end; /* the ranks built and delivered: first .. end-1 (all R unless a range is asked) */
  pthread_mutex_t turn; /* with turn_cv: the builders' queue for delivery in rank order; a thread
                           waiting for its turn sleeps (an OpenMP ordered region spins, and on a
                           busy machine the spinning takes the writer's core) */
  pthread_cond_t turn_cv;
} plan_deliver;

/* Sets up the delivery for strategy s of ranks first .. end-1 (0 .. R for the whole plan): the
 * meta and the digests of their rows (one pass). meta.matrix_digest, the digest of all of A,
 * is computed only for the whole plan (else 0: a part of the plan has a part of A, and its
 * caller knows the matrix's). On failure (err filled) nothing is held. */
shiro_status plan_deliver_init(plan_deliver *dv, const sc_csr *A, const sc_partition *Prow, const sc_blocks *B,
                               sc_strategy s, int32_t gpn, int32_t first, int32_t end, plan_sink_fn sink, void *arg,
                               shiro_error *err);

/* Whether the build has already failed (builders skip the ranks left). */
int plan_deliver_stopped(const plan_deliver *dv);

/* Adds rank pr->rank's certificate and digest. Thread-safe: any order. */
shiro_status plan_deliver_finish(const plan_deliver *dv, prog_rank *pr);

/* Delivers rank r's finished program (st: how building it went) to the
 * sink, in rank order: called once per rank from any thread, it waits
 * (asleep) until ranks 0..r-1 are delivered. The callers hand ranks out in
 * increasing order (an OpenMP dynamic schedule), so every rank below r is
 * held by a thread that does not wait for r. Takes *pr: it is the sink's,
 * or freed on failure. */
void plan_deliver_rank(plan_deliver *dv, int32_t r, prog_rank *pr, shiro_status st);

/* Frees the delivery; returns the first failure recorded (err filled), or SHIRO_OK. */
shiro_status plan_deliver_done(plan_deliver *dv);

#endif
