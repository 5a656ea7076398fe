/* plan_build.h — from blocks with selections to every rank's program. */
#ifndef SHIRO_PLAN_BUILD_H
#define SHIRO_PLAN_BUILD_H

#include "blocks.h"
#include "csr.h"
#include "partition.h"
#include "program.h"
#include "strategy.h"

/* A whole plan in memory: what the format writes. */
typedef struct sc_plan {
  prog_meta meta; /* root facts */
  prog_rank *ranks; /* [meta.ranks] programs */
} sc_plan;

/* Receives each finished program of plan_build_each, in rank order (0 ..
 * R-1), one call at a time (from whichever thread built it). The sink owns
 * *pr from then on: it keeps it or frees it (prog_rank_free). meta, the
 * plan's root facts, is complete from the first call on. A status other
 * than SHIRO_OK (err filled) stops the build. */
typedef shiro_status (*plan_sink_fn)(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err);

/* Builds every rank's program for strategy s from blocks whose selections
 * are set (flat for block, col, row, joint; two-tier for hier, group), each
 * with its certificate and pattern digest, and hands them to `sink` one by
 * one, so that a caller that writes and frees them never holds the whole
 * plan. Ranks are built in parallel; the programs do not depend on the
 * thread count. gpn = ranks per node. */
shiro_status plan_build_each(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             const sc_blocks *B, sc_strategy s, int32_t gpn, plan_sink_fn sink, void *arg,
                             shiro_error *err);

/* plan_build_each for ranks first .. end-1 only, delivered in rank order from first (the
 * distributed planner's part of a plan: compiler/dist/). B needs the blocks those ranks
 * receive from ((r, q): every one, with its certificate) and send to ((p, r): their
 * selections, and the rows of A their selected rows read); A the ranks' rows whole. The
 * programs are plan_build_each's, except that val_src holds positions in this A (the caller
 * maps them to the plan-wide ids) and meta.matrix_digest is 0. Two-tier strategies (hier,
 * group, cola; hybrid needs its routing) need whole nodes of ranks, and B also the blocks
 * through whose relays their ranks' rows pass: every block (p, q) with p or q on those nodes
 * (their rails forward and sum for the ranks of the same node); the node pairs' certificates
 * (B->cert) of the nodes whose rows are theirs. */
shiro_status plan_build_range(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                              const sc_blocks *B, sc_strategy s, int32_t gpn, int32_t first, int32_t end,
                              plan_sink_fn sink, void *arg, shiro_error *err);

/* One message a plan's program sends per call: what its send record says. */
typedef struct plan_msg {
  int32_t src, dst; /* the sending rank, the receiving one */
  int32_t stage; /* the exchange it is posted in */
  int32_t inter; /* 1: it crosses nodes (the record's tier) */
  int64_t rows; /* rows it carries (> 0) */
  int32_t kind; /* what it carries (PROG_MSG_*): a rank sends one message per stage, peer and kind */
} plan_msg;

/* Receives each message of plan_messages. */
typedef void (*plan_msg_fn)(void *arg, const plan_msg *m);

/* The messages plan_build_each's programs would send, without building any program: each
 * program's send records, senders in rank order, each sender's in the order its program posts
 * them (the same records: a cost model or a volume count over them gives what it gives over the
 * built programs); *nstages (NULL: not set) the stages every program has. The builders' layouts
 * alone: O(blocks + R), two-tier O(blocks' selections) for its unions; one thread. Fails as
 * plan_build_each fails before it builds a rank (a rank past 2^31-1 rows, no memory). */
shiro_status plan_messages(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                           sc_strategy s, int32_t gpn, plan_msg_fn fn, void *arg, int32_t *nstages,
                           shiro_error *err);

/* plan_build_each into memory: the whole plan in *out (plan_free). */
shiro_status plan_build(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                        const sc_blocks *B, sc_strategy s, int32_t gpn, sc_plan *out, shiro_error *err);

/* For a program of the permuted matrix P = P·A·Pᵀ (metis partition; P is
 * what the program was built from): records the rank's original row ids
 * (oldof[new] = old), its digest and its local matrix (a_ptr, a_col, a_val)
 * over the ORIGINAL matrix A (its rows in local order), which is what
 * applications hold, and turns val_src from positions in P into the
 * plan-wide ids of those local matrices. The caller names the partition in
 * the meta and sets its matrix digest to A's (shiro_pattern_digest). */
shiro_status plan_rank_set_rows(prog_rank *pr, const sc_csr *A, const sc_csr *P, const int64_t *oldof, shiro_error *err);

/* shiro_pattern_digest of rows list[0..n-1] of A in that order (list NULL:
 * rows first .. first+n-1): the digest applications compute over their rows. */
uint64_t plan_rows_digest(const sc_csr *A, const int64_t *list, int64_t first, int64_t n);

/* Adds the rows one program sends per call to *v, from its exchange
 * records (every hop counted): summed over the ranks, a plan's volumes. */
void plan_rank_volumes(const prog_rank *pr, sc_volumes *v);

/* Adds one message of plan_messages to *v, as plan_rank_volumes counts its send record. */
void plan_msg_volumes(const plan_msg *m, sc_volumes *v);

/* Bytes of the tables plan_build_each (and, for the two-tier strategies,
 * the group cover that auto and --compare run) allocate for R ranks, gpn
 * per node, before they look at a nonzero: what R alone costs. The
 * builders' tables are sparse over the non-empty rank pairs, so this is
 * per rank (flat: 64 bytes; two-tier: 128) plus, two-tier, group's
 * node-pair certificate index (8 (G + 2) bytes per node pair, nodes²);
 * hybrid adds its routing and decision tables (hybrid.c: about 5 nodes² +
 * 56 R·nodes + 16 R·G + 400 R bytes). Lets a caller refuse a rank count up front. */
uint64_t plan_pair_table_bytes(int32_t R, int32_t gpn, sc_strategy s);

/* Fills err with "plan: R = R needs N GB for its per-rank and node-pair
 * tables ..., more than THAN" (plan_pair_table_bytes; than NULL: "could be
 * allocated") and returns SHIRO_ERR_NOMEM: a caller's message when it
 * refuses R up front. */
shiro_status plan_pair_table_fail(int32_t R, int32_t gpn, sc_strategy s, const char *than, shiro_error *err);

/* Frees every program of a plan built in memory. NULL is a no-op. */
void plan_free(sc_plan *P);

#endif
