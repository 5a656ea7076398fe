/* strategy.h — which rows move for each off-diagonal block (DESIGN.md's strategy table). */
#ifndef SHIRO_STRATEGY_H
#define SHIRO_STRATEGY_H

#include <stdint.h>

#include "blocks.h"
#include "partition.h"
#include "shiro_status.h"

typedef enum sc_strategy {
  STRAT_BLOCK = 0, /* all of B(q,:) to every other rank */
  STRAT_COL = 1, /* B rows for Cols(A(p,q)) */
  STRAT_ROW = 2, /* partial C rows for Rows(A(p,q)) */
  STRAT_JOINT = 3, /* minimum vertex cover of A(p,q) */
  STRAT_HIER = 4, /* joint covers, routed in two tiers (paper §6) */
  STRAT_GROUP = 5, /* one weighted cover per node pair A(N,H), routed in two tiers */
  STRAT_COLA = 6, /* col's B rows, routed in two tiers: once per (source rank, destination node) (CoLa) */
  STRAT_HYBRID = 7, /* per node pair joint's direct covers or group's relayed one, whichever the cost model prefers */
  STRAT_COUNT = 8
} sc_strategy;

/* 1 for the strategies routed through nodes in two stages (hier, group,
 * cola, hybrid), 0 for the flat ones (block, col, row, joint). */
int strategy_is_two_tier(sc_strategy s);

/* Name of strategy s: "block", "col", "row", "joint", "hier", "group",
 * "cola" or "hybrid" (the --strategy values and the plan's meta); "?"
 * outside the enum. */
const char *strategy_name(sc_strategy s);

/* Parses a strategy name; SHIRO_ERR_ARG with a message listing the choices otherwise. */
shiro_status strategy_parse(const char *name, sc_strategy *s, shiro_error *err);

/* Progress callback: called from one thread with (done, total) cover problems. */
typedef void (*sc_progress_fn)(int64_t done, int64_t total, void *arg);

/* Sets every block's selection (rsel, csel), its entry counts
 * (block_count_entries) and, where the strategy proves a cover minimum, its
 * certificate (mu, rmatch) for strategy s:
 *   block  every column: all of B(q,:) moves (the plan sends the whole part);
 *   col    every column (the block's nonzero columns' B rows);
 *   row    every row (partial C rows);
 *   joint  a minimum vertex cover per block: a maximum matching (mu, rmatch
 *          kept) and König's cover;
 *   hier   joint's covers (the plan routes them in two tiers);
 *   group  joint's covers for the blocks inside a node, and for the blocks
 *          between nodes one lexicographic cover per ordered node pair
 *          (strategy_select_group), whose matchings are the certificate;
 *   cola   every column, as col (the plan routes them in two tiers: no
 *          partial C rows, B rows deduplicated per destination node);
 *   hybrid per ordered node pair either joint's covers (sent direct) or
 *          group's node-pair cover (relayed), and the relays, as
 *          strategy_select_hybrid decides (B->route).
 * Problems run in parallel over OpenMP threads; the result does not depend
 * on the number of threads. gpn = ranks per node. A nonzero whose row and
 * column are both selected is computed on the column side. progress may be
 * NULL. */
shiro_status strategy_select(sc_blocks *B, sc_strategy s, int32_t gpn, sc_progress_fn progress,
                             void *arg, shiro_error *err);

/* Group's selection for the blocks between nodes (group_cover.c): per ordered
 * pair of nodes, the node pair's maximum matching (kept in B's cert) and the
 * fewest-vertex cover of fewest intra-node hops, cut back to its blocks. On
 * failure (the status of what failed) err names the node pair of lowest
 * index that failed, and what failed in it, whatever the thread count. */
shiro_status strategy_select_group(sc_blocks *B, int32_t gpn, shiro_error *err);

/* Group's node-pair covers (the same minimum cardinality per pair, the same
 * certificates), then the freedom among minimum covers used to balance the
 * NICs (group_cover.c): for up to `rounds` sweeps over the node pairs in
 * order, a pair that loads a NIC within 10% of its stage's busiest (stage 0:
 * columns q -> rail(N, q); stage 1: rows rail(H, p) -> p) is solved again
 * with its vertices priced by the loads of the links they use, and keeps the
 * new cover only if the sum of the two stages' busiest NIC loads falls (or
 * stays and Σ load² falls). Serial, deterministic. Used by hybrid. */
shiro_status strategy_select_group_balanced(sc_blocks *B, int32_t gpn, int rounds, shiro_error *err);

/* Receives blocks whose selections are one of a strategy's (see below); a status other than
 * SHIRO_OK (err filled) stops the caller. */
typedef shiro_status (*sc_blocks_fn)(void *arg, const struct sc_blocks *B, shiro_error *err);

/* strategy_select_group_balanced, calling own (NULL: not called) with group's own covers in the
 * blocks (what strategy_select_group leaves, the same certificates) before the balancing
 * changes them: both sets of covers for the cost of the balanced ones (hybrid keeps both). */
shiro_status strategy_select_group_own_balanced(sc_blocks *B, int32_t gpn, int rounds, sc_blocks_fn own, void *arg,
                                                shiro_error *err);

/* The links hybrid decides by (a machine's, as compiler/cost/ reads it, and
 * the bytes of one row): bandwidths in bytes/s, latencies in seconds. */
typedef struct sc_links {
  int32_t gpus_per_node, nics_per_node; /* GPU i of a node uses NIC i mod nics_per_node */
  double nvlink_Bps, nvlink_lat_s, nic_Bps, nic_lat_s, core_lat_s;
  int ideal; /* 1: no SMPI message-size factors */
  double row_bytes;
} sc_links;

/* Hybrid's routing (B->route): per ordered node pair (N rows <- H columns)
 * that has blocks, whether its blocks go direct, and for relayed pairs the
 * relays; O(pairs · G), never nodes² or R · nodes (read it through
 * route_direct / route_rep / route_agg). links is set by
 * strategy_route_links (else tsubame4's numbers). */
enum { ROUTE_RELAYED_GROUP = 0,
       ROUTE_DIRECT = 1,
       ROUTE_RELAYED_JOINT = 2,
       ROUTE_MODES = 3 };

typedef struct sc_route {
  int have_links;
  sc_links links;
  /* Optional: the predicted time of the plan the blocks and this routing make (the caller builds
   * and prices it, compiler/cost/'s cost_plan); hybrid then keeps, of its candidates (every pair
   * direct, every pair relayed, the greedy decision from each), the one it prices lowest. NULL
   * (and no machine below): the lowest estimate. */
  shiro_status (*price)(void *arg, const struct sc_blocks *B, double *time_s, shiro_error *err);
  void *price_arg;
  /* Optional, first: the machine hybrid prices its candidates on from their messages alone, rows
   * of row_bytes (the cost model's prediction of the built plan, no program built: hybrid.c).
   * With price_check and price too, each candidate is priced both ways and their largest relative
   * difference kept in price_check_rel (a test's check that the two agree). */
  const struct sc_machine *machine;
  size_t row_bytes;
  int price_check;
  double price_check_rel;
  int32_t nodes, gpn, ranks;
  int64_t npairs; /* inter-node node pairs (N, H) with blocks */
  int64_t *pair; /* [npairs] N * nodes + H, increasing: pair y */
  uint8_t *direct; /* [npairs] ROUTE_DIRECT (joint's covers, stage 0), ROUTE_RELAYED_GROUP (group's
                        cover through the relays), ROUTE_RELAYED_JOINT (joint's covers through them, hier's way) */
  int32_t *rep; /* [npairs * gpn] rep[y * gpn + q - H * gpn]: the rank of N that receives U(q, N) */
  int32_t *agg; /* [npairs * gpn] agg[y * gpn + p - N * gpn]: the rank of H that sums V(p, H) */
  int64_t pairs_direct, pairs_relayed; /* inter-node node pairs with blocks, by how they go (relayed: both modes) */
  int64_t pairs_relayed_joint; /* of pairs_relayed, those relayed with joint's covers */
  int64_t relays_moved; /* reps and aggs not the rail-aligned rank */
  double est_s, est_direct_s, est_relayed_s, est_relayed_joint_s; /* the decision's estimate: chosen, all direct,
                                                                       all relayed (group's covers, joint's) */
  double price_s; /* the chosen one's price (0 without price) */
  int group_balanced; /* 1: the relayed mode used group's NIC-balanced covers, 0: its own */
  double price_group_s, price_group_balanced_s; /* all relayed, rail-aligned, with each (0 without price) */
  int prices; /* candidates priced */
  int candidate; /* which: 0 all direct, 1 all relayed (group's covers), 2 all
                                            relayed (joint's covers), 3 / 4 / 5 greedy from 0 / 1 / 2 */
} sc_route;

/* Sets the machine hybrid decides for (copied into B->route, kept across
 * strategy_select calls). SHIRO_ERR_NOMEM. */
shiro_status strategy_route_links(sc_blocks *B, const sc_links *links, shiro_error *err);

/* Hybrid's decision (hybrid.c), on blocks that hold joint's selection on
 * every block: runs group's node-pair covers, then per inter-node node pair
 * keeps joint's covers (direct) or group's (relayed), and picks the relays,
 * greedily lowering a per-stage link-bottleneck estimate (hybrid.c says
 * how). The result is in B->route; the selections and certificates in the
 * blocks match it. Deterministic, independent of the thread count. */
shiro_status strategy_select_hybrid(sc_blocks *B, int32_t gpn, shiro_error *err);

/* 1 if B->route (hybrid's) sends every block between nodes of gpn ranks direct: hybrid's
 * plan is then joint's, built flat (plan_build_each). 0 without a routing. */
int route_all_direct(const sc_blocks *B, int32_t gpn);

/* The index y of node pair (N rows <- H columns) in r->pair, -1 if it has no block. */
int64_t route_pair(const sc_route *r, int32_t N, int32_t H);

/* 1 if node pair (N <- H) goes direct (0: relayed, or no block, or N = H). */
int route_direct(const sc_route *r, int32_t N, int32_t H);

/* The rank of node N that receives U(q, N) (rail-aligned where the pair has no block). */
int32_t route_rep(const sc_route *r, int32_t q, int32_t N);

/* The rank of node H that sums V(p, H) (rail-aligned where the pair has no block). */
int32_t route_agg(const sc_route *r, int32_t p, int32_t H);

/* Frees B->route's tables (the links stay). */
void route_drop_tables(sc_route *r);

/* Rows moved per call (DESIGN.md counting), total and split by tier. */
typedef struct sc_volumes {
  int64_t total_rows; /* rows crossing between two distinct ranks, once per hop */
  int64_t inter_node_rows; /* hops between ranks of different nodes */
  int64_t intra_node_rows; /* hops between ranks of the same node */
} sc_volumes;

/* Volumes of flat strategy s (block, col, row, joint) from the blocks'
 * selections (block: from the partition alone). gpn = ranks per node. The
 * two-tier strategies (hier, group, cola, hybrid) forward and aggregate, so their hops are
 * counted from the built programs instead (plan_rank_volumes). */
void strategy_volumes(const sc_blocks *B, const sc_partition *Pcol, sc_strategy s, int32_t gpn,
                      sc_volumes *v);

#endif
