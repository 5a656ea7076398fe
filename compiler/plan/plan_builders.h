/* plan_builders.h — the two builders behind plan_build_each (plan_build.c),
 * which picks one by strategy. They call the delivery (plan_deliver.h) and the
 * shared emitters (prog_emit.h), never plan_build.c. Internal to plan/. */
#ifndef SHIRO_PLAN_BUILDERS_H
#define SHIRO_PLAN_BUILDERS_H

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "plan_build.h"
#include "plan_deliver.h"
#include "strategy.h"

/* The builders behind plan_build_each (plan_build_flat.c: the flat, single-stage,
 * direct program; plan_build_tier.c: the two-tier one, where B rows cross to
 * the destination node's rail-aligned rank and are forwarded inside it, and
 * partial C rows are summed at the source node's rail-aligned rank before
 * they cross). Each delivers its programs to dv; a failure before any rank is
 * built is returned (err filled). */
shiro_status plan_build_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, plan_deliver *dv,
                             shiro_error *err);
shiro_status plan_build_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                 const sc_blocks *B, int32_t gpn, plan_deliver *dv, shiro_error *err);

/* Each builder's messages alone (plan_messages, plan_build.h): its layout, then every rank's
 * send records in posting order, no program built. */
shiro_status plan_messages_flat(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                const sc_blocks *B, sc_strategy s, int32_t gpn, plan_msg_fn fn, void *arg,
                                shiro_error *err);
shiro_status plan_messages_two_tier(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                                    const sc_blocks *B, int32_t gpn, plan_msg_fn fn, void *arg, shiro_error *err);

#endif
