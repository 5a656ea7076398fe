/* cost.h — the predicted time of one call of a built plan on a machine,
 * communication only: what tools/sim/simulate.sh --compute none measures
 * (README.md of this folder: the model, and where each constant comes from).
 *
 * Each program's send records are added as the plan is built (one program
 * at a time, any order); then every stage is priced on its own, the stages
 * run one after another as the runtime runs them (WAIT s before START s+1).
 * A stage's time is the most any link needs for it: for a link (each GPU's
 * NVLink port and each NIC, send and receive directions apart) the longest
 * latency of its messages plus its bytes at the link's bandwidth, or the
 * slowest single message if one message alone takes longer. */
#ifndef SHIRO_COST_H
#define SHIRO_COST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "machine.h"
#include "program.h"
#include "shiro_status.h"

enum { COST_MAX_STAGES = 4 };

typedef enum cost_link {
  COST_NVLINK_SEND = 0,
  COST_NVLINK_RECV = 1,
  COST_NIC_SEND = 2,
  COST_NIC_RECV = 3,
  COST_LINKS = 4
} cost_link;

/* One stage's prediction and where its time goes. */
typedef struct cost_stage {
  double time_s; /* predicted time of the stage */
  double latency_s; /* of which the bottleneck link's message latency (network-model factors included) */
  int32_t rank; /* the bottleneck link's rank (a NIC shared by several GPUs: the lowest of them); -1: no message */
  cost_link link; /* which of its links */
  int64_t bytes; /* bytes that link carries in the stage */
  int64_t messages; /* messages it carries */
} cost_stage;

typedef struct cost_pred {
  double time_s; /* per call: the stages' times summed */
  int32_t nstages; /* stages priced */
  cost_stage stage[COST_MAX_STAGES];
} cost_pred;

typedef struct cost_flow cost_flow; /* one message, cost.c */

/* A prediction in progress for a plan of R ranks whose rows are row_bytes
 * each (N × the value's bytes). Holds a copy of the machine. */
typedef struct cost_model {
  sc_machine m;
  int32_t R;
  size_t row_bytes;
  int64_t nlinks; /* links: 2R NVLink directions + 2 per NIC */
  cost_flow *flow; /* [nflow] every message added, in the order added */
  int64_t nflow, cap;
  int failed; /* an allocation failed while adding */
  int32_t nstages; /* the most stages of any program added */
  int too_many_stages; /* a program had more than COST_MAX_STAGES stages */
} cost_model;

/* Starts a prediction (zeroed accumulators) for R ranks on machine m (copied).
 * SHIRO_ERR_NOMEM or SHIRO_ERR_ARG (R < 1, row_bytes 0), err filled. On
 * failure *cm holds nothing (cost_free is a no-op on it). */
shiro_status cost_init(cost_model *cm, const sc_machine *m, int32_t R, size_t row_bytes, shiro_error *err);

/* Adds the messages program pr sends (its send records; receives are the
 * senders' records seen from the other side). Call once per rank. */
void cost_add_rank(cost_model *cm, const prog_rank *pr);

/* Adds one message of `rows` rows from src to dst in stage s, as cost_add_rank adds a send
 * record (nothing for rows <= 0): a plan priced from its messages without building its
 * programs (hybrid's candidates), the same prediction when the messages are added in the
 * programs' order (by sender, then as each program posts them). */
void cost_add_flow(cost_model *cm, int32_t src, int32_t dst, int32_t stage, int64_t rows);

/* The prediction from every program added so far. SHIRO_ERR_UNSUPPORTED if
 * a program had more than COST_MAX_STAGES stages, SHIRO_ERR_NOMEM if an
 * allocation failed (here or in cost_add_rank). */
shiro_status cost_predict(const cost_model *cm, cost_pred *out, shiro_error *err);

/* cost_predict, and in rank_s[R] (NULL: not filled) each rank's share of it: summed over
 * the stages, how long after the stage's start the busiest of the rank's links (NVLink
 * send and receive, its NIC's send and receive) is through. The time partition balances
 * these (time_balance.h). */
shiro_status cost_predict_ranks(const cost_model *cm, cost_pred *out, double *rank_s, shiro_error *err);

/* Frees the accumulators; the model is then as after a failed cost_init. NULL is a no-op. */
void cost_free(cost_model *cm);

/* The model's factors for a message of `bytes` sharing a link: *paid, the
 * share of the link's bandwidth its bytes get (1 − α (1 − f_bw)), and *lat,
 * its route latency's factor (f_lat); 1, 1 on an ideal network. For
 * estimates made without built programs (hybrid's routing). */
void cost_message_factors(int ideal, double bytes, double *paid, double *lat);

/* "nvlink-send", "nvlink-recv", "nic-send", "nic-recv". */
const char *cost_link_name(cost_link l);

/* Writes p as the members `, "predicted_time_s": T, "predicted_stages_s": [S0, ...]` (%.9g) of a
 * JSON object being written to f: shiro-plan's volumes, with one process or several. */
void cost_pred_json(FILE *f, const cost_pred *p);

#endif
