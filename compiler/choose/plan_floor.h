/* plan_floor.h — how far a plan is from the limit: lower bounds, for a partition, on the rows
 * that must leave and enter each node and each rank under any schedule, and the time floor they
 * give on a machine.
 *
 * Every nonzero A_ij whose row i (C's owner) and column j (B's owner) lie in different groups
 * (nodes, or ranks) needs B_j to leave j's group or a partial C_i computed there to leave it:
 * whatever relays, trees or aggregation a scheme uses, one of the two rows crosses the group's
 * boundary at least once. So the rows leaving group X are at least a minimum vertex cover of the
 * bipartite graph of those nonzeros with j in X (its column stripe against every other group),
 * and the rows entering X at least one of the nonzeros with i in X (its row stripe). The flat
 * per-block covers bound each pair of groups; these bound each group whole. */
#ifndef SHIRO_PLAN_FLOOR_H
#define SHIRO_PLAN_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#include "csr.h"
#include "machine.h"
#include "partition.h"

/* The row floors of one grouping: groups of g consecutive ranks (a node: g = G; a rank: g = 1). */
typedef struct plan_floor_level {
  int32_t groups; /* ⌈R / g⌉ */
  int64_t *out; /* [groups] rows that must leave group X (minimum vertex cover of its column stripe) */
  int64_t *in; /* [groups] rows that must enter it (of its row stripe) */
  int64_t out_sum, in_sum; /* their sums: floors of the rows crossing between groups, once per hop */
  int64_t out_max, in_max; /* the busiest group's */
  int32_t out_at, in_at; /* which group (the lowest of ties) */
} plan_floor_level;

/* The floors of a partition over R ranks, G per node. */
typedef struct plan_floor {
  int32_t ranks, gpn;
  plan_floor_level node, rank;
} plan_floor;

/* The floors of A over the partitions Prow (A's and C's rows) and Pcol (B's rows, A's columns),
 * gpn ranks per node: one maximum matching (König: its size is the minimum cover's) per stripe,
 * each node's and each rank's, on `threads` OpenMP threads. *f is zeroed first; on failure
 * (err filled: out of memory) it holds nothing. Prints nothing. */
shiro_status plan_floor_rows(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t gpn,
                             int threads, plan_floor *f, shiro_error *err);

/* One direction's cross nonzeros bucketed by group: group X's at [off[X], off[X+1]), row ids and
 * column ids (global), each group's in row order (a row's entries one after the other). */
typedef struct plan_floor_buckets {
  int64_t *off; /* [groups+1] */
  int64_t *row; /* [E] */
  int32_t *col; /* [E] */
} plan_floor_buckets;

/* cover[X] = the minimum vertex cover's size (a maximum matching's, König) of group X's bucket in
 * b (0 for an empty one), for every group, on `threads` threads; k: the matrix's columns. The
 * size does not depend on the order of the bucket's rows, nor on how the matching is found.
 * SHIRO_ERR_NOMEM (nothing else) when out of memory. */
shiro_status plan_floor_covers(const plan_floor_buckets *b, int32_t groups, int64_t k, int threads, int64_t *cover);

/* Sets L's sums, maxima and their groups (the lowest of ties) from L->out and L->in. */
void plan_floor_level_sum(plan_floor_level *L);

/* The time floor of f on machine m for rows of row_bytes bytes, seconds: the larger of the node
 * term (the busiest node's egress or ingress floor over its NICs' bandwidth, plus one NIC
 * latency; 0 with one node) and the rank term (the busiest rank's floor over its NVLink port and
 * a NIC together, plus the smaller of their latencies; 0 with one rank). *term (if not NULL)
 * names the larger: "node egress", "node ingress", "rank egress", "rank ingress", or "none" when
 * no row must move; *at the node or rank. A valid lower bound on the communication time of any
 * schedule on that machine, since no link is faster than its bandwidth and latency. */
double plan_floor_time(const plan_floor *f, const sc_machine *m, size_t row_bytes, const char **term, int32_t *at);

/* Frees what *f owns. */
void plan_floor_free(plan_floor *f);

#endif
