/* plan_choose.h — the planner's decisions in one call: the partition (given,
 * or under auto block, time or metis, as predicted), the blocks, and the
 * strategy (given, auto or auto-cpu) with its covers selected, ready for
 * plan_build_each. shiro-plan parses its options into a plan_request and
 * reports from the plan_choice; any other front end (Python) can do the same. */
#ifndef SHIRO_PLAN_CHOOSE_H
#define SHIRO_PLAN_CHOOSE_H

#include "cost_plan.h"
#include "plan_floor.h"
#include "strategy.h"
#include "work_balance.h"
#include "work_choice.h"

/* How hard auto looks. FAST (the default): candidates are priced from what is cheap first,
 * and a costly one (the time partition's rounds, the METIS partition and every strategy on
 * it) runs only where that estimate says it can win. EXHAUSTIVE: every candidate is built
 * and priced (the search of shiro 0.x's default). */
typedef enum plan_effort { PLAN_EFFORT_FAST = 0,
                           PLAN_EFFORT_EXHAUSTIVE = 1 } plan_effort;

/* Reports a phase's progress (what: "covers", "time partition", ...); may be NULL. */
typedef void (*plan_progress_fn)(const char *what, int64_t done, int64_t total);

/* A partitioner the compiler does not call itself (it calls no MPI): labels[i] in 0..parts-1 for
 * each row of A, written only on success. shiro-plan gives Zoltan's (dist_part_hypergraph_local). */
typedef shiro_status (*plan_labels_fn)(const struct sc_csr *A, int32_t parts, int32_t *labels, shiro_error *err);

typedef struct plan_request {
  int32_t ranks, gpn; /* R, G */
  sc_strategy strategy; /* the strategy given (ignored under auto; auto-cpu: STRAT_JOINT) */
  int auto_strategy; /* 1: of col, joint, hier, group, cola and hybrid the fastest predicted */
  int cpu_auto; /* 1: joint or col, whichever's busiest rank costs less (work_choice.h) */
  const char *partition; /* "block", "nnz", "work", "time", "metis", "metis-vol", "metis-node" or "parts" */
  int partition_given; /* 0 under auto: block, time or metis as predicted */
  const char *parts_file; /* parts: one rank id per row (when parts is NULL) */
  const int32_t *parts; /* parts: [m] the rank of each row, each in 0..ranks-1 (checked by the caller); or NULL */
  int compare; /* 1: every strategy evaluated */
  const sc_machine *m; /* the machine predictions are for; NULL: none */
  int machine_given; /* 1: --machine: every strategy evaluated is priced */
  int64_t n; /* columns of B predicted for (and the work partition's N) */
  size_t row_bytes; /* bytes of one row of B */
  plan_effort effort;
  int floor; /* 1: the kept partition's floors (plan_floor.h) into plan_choice.floor */
  plan_progress_fn progress; /* NULL: none */
  plan_labels_fn hypergraph; /* --partition hypergraph's labels (NULL: that partition is refused) */
} plan_request;

/* One candidate the default weighed or skipped, for the report (--json "candidates"). */
typedef struct plan_candidate {
  const char *kind; /* "partition" (a partition weighed) or "strategy" (a strategy on it) */
  const char *partition; /* "block", "time", "metis", "metis-node", "metis-vol" */
  const char *what; /* "estimate" (joint's plan alone) or "plan" (every strategy's plan priced, the best) */
  sc_strategy strategy; /* the strategy the price is for */
  double time_s; /* the price (seconds per call; INFINITY: not priceable) */
  const char *status; /* "kept", "weighed", "skipped" */
  const char *reason; /* why (static text) */
} plan_candidate;

enum { PLAN_MAX_CANDIDATES = 16,
       PLAN_WORK_ROUNDS = 8 };

/* The default partition under auto keeps the time (metis) partition only where auto's plan is
 * predicted at least 3% faster on it than on the partition kept before: within that, the
 * model's error between two plans of the same strategy decides. */
#define PLAN_TIME_GAIN 0.97
#define PLAN_METIS_GAIN 0.97
/* Fast: metis-vol is weighed only where A's rows' nonzeros have at most this spread (standard
 * deviation over mean): meshes and bounded-degree graphs. */
#define PLAN_VOL_SPREAD 1.0
/* Fast: hybrid's search runs only where hier's or group's plan is within this factor of joint's. */
#define PLAN_HYBRID_GATE 1.10

typedef struct plan_choice {
  sc_csr *A; /* the matrix planned (metis, parts: renumbered); owned */
  sc_csr *A0; /* metis, parts: the matrix as read (digests); else NULL; owned */
  int64_t *oldof; /* metis, parts: oldof[new] = original row; else NULL */
  sc_partition Prow, Pcol;
  sc_blocks B; /* selection set for strategy */
  sc_strategy strategy; /* the plan's */
  const char *partition; /* the partition kept (static text): block, time, metis, metis-node, metis-vol, ... */
  sc_volumes vol[STRAT_COUNT];
  int have[STRAT_COUNT]; /* strategies evaluated (volumes) */
  cost_pred pred[STRAT_COUNT];
  int pred_have[STRAT_COUNT]; /* strategies priced */
  sc_machine hm; /* hybrid's machine when nothing else is predicted */
  cost_hybrid hprice; /* hybrid's pricing (B's route points here: *choice must not move) */
  sc_route hybrid_seen; /* hybrid's last selection (tables dropped) */
  int hybrid_have;
  sc_work work_seen; /* the work partition's rounds */
  sc_work_choice cpu_seen; /* auto-cpu's choice */
  sc_balance time_seen; /* the time partition's rounds (seconds, time_strategy's plan) */
  sc_strategy time_strategy;
  double time_auto_block_s, time_auto_time_s; /* auto's plan on block's partition and on time's */
  int metis_tried; /* 1: weighed; 2: left a rank empty (or fewer rows than ranks), not weighed */
  int metis_estimate; /* 1: metis_auto_s and metis_other_s are joint's estimates (fast), 0: auto's plans */
  sc_strategy work_strategy; /* the work partition's strategy (plan_work_strategy) */
  double metis_auto_s, metis_other_s;
  plan_candidate cand[PLAN_MAX_CANDIDATES];
  int ncand;
  double partition_s, cover_s; /* seconds: partitioning (time and metis included), covers and pricing */
  plan_floor floor; /* the kept partition's floors (plan_request.floor) */
  int floor_have;
  double floor_s; /* seconds computing them */
} plan_choice;

/* Partitions A (the matrix as read; ownership passes to *c, freed by plan_choice_free even on
 * failure) as req asks, builds the blocks and evaluates and chooses as req asks; *c holds the
 * result (zeroed first). On failure err names the cause. Prints nothing. */
shiro_status plan_choose(const plan_request *req, sc_csr *A, plan_choice *c, shiro_error *err);

/* 1 if name is a partition plan_choose knows by name alone (block, nnz, work, time, metis,
 * metis-vol, metis-node; not parts, which comes with labels), else 0. */
int plan_partition_known(const char *name);

/* The list of those names for an error message. */
#define PLAN_PARTITION_NAMES "block, nnz, work, time, metis, metis-vol, metis-node, hypergraph"

/* Frees what *c owns. */
void plan_choice_free(plan_choice *c);

/* The strategy whose covers the work partition balances with (auto's and hybrid's: joint's). */
sc_strategy plan_work_strategy(const plan_request *req);

#endif
