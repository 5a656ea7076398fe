/* plan_choose.c — the planner's decisions in one call (plan_choose.h).
 *
 * Under auto's default partition three partitions are candidates: block's,
 * the time partition (rounds of the plan priced, rows moved off the busiest
 * links) and, for a square A, METIS's. The exhaustive search evaluates every
 * strategy on each; the fast one (the default) first ranks the partitions by
 * one strategy's price, joint's flat plan (the covers' rows per link on the
 * cost model), runs the time partition's rounds only where block's
 * per-rank times are unbalanced enough for them to win, and evaluates every
 * strategy only on the partition it keeps. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "error.h"
#include "partition.h"
#include "permute.h"
#include "plan_build.h"
#include "plan_choose.h"
#include "shiro_config.h"
#include "time_balance.h"

static double now(void) { return omp_get_wtime(); }

static void progress(const plan_request *r, const char *what, int64_t done, int64_t total) {
  if (r->progress) r->progress(what, done, total);
}

static void cover_progress(int64_t done, int64_t total, void *arg) {
  progress(arg, "covers", done, total);
}

static void note(plan_choice *c, const char *partition, const char *what, sc_strategy s, double time_s,
                 const char *status, const char *reason) {
  if (c->ncand >= PLAN_MAX_CANDIDATES) return;
  c->cand[c->ncand++] = (plan_candidate){"partition", partition, what, s, time_s, status, reason};
}

/* note, for a strategy skipped on a partition. */
static void note_skip(plan_choice *c, const char *partition, sc_strategy s, double time_s, const char *reason) {
  if (c->ncand >= PLAN_MAX_CANDIDATES) return;
  c->cand[c->ncand++] = (plan_candidate){"strategy", partition, "estimate", s, time_s, "skipped", reason};
}

/* The strategies auto chooses from. */
static int auto_candidate(int s) {
  return s == STRAT_COL || s == STRAT_JOINT || s == STRAT_HIER || s == STRAT_GROUP || s == STRAT_COLA ||
      s == STRAT_HYBRID;
}

/* Every strategy evaluated on one partition's blocks, and auto's choice. */
typedef struct evaluation {
  sc_volumes vol[STRAT_COUNT];
  int have[STRAT_COUNT];
  cost_pred pred[STRAT_COUNT];
  int pred_have[STRAT_COUNT];
  cost_hybrid hprice; /* hybrid's pricing, for B->route (lives as long as B) */
  sc_strategy chosen; /* auto: the candidate predicted fastest (the first of equals); else the strategy */
  double hybrid_skipped_s; /* fast: hybrid not evaluated, the best of joint, hier and group instead; else 0 */
  const char *hybrid_skip_why; /* why, when it was not */
} evaluation;

/* plan_messages' sink when only the volumes are wanted. */
static void count_msg(void *arg, const plan_msg *m) { plan_msg_volumes(m, arg); }

/* strategy_select, and hybrid's decision noted in c->hybrid_seen. */
static shiro_status select_noted(plan_choice *c, sc_blocks *B, sc_strategy s, int32_t gpn, sc_progress_fn pf,
                                 void *arg, shiro_error *err) {
  shiro_status st = strategy_select(B, s, gpn, pf, arg, err);
  if (st == SHIRO_OK && s == STRAT_HYBRID && B->route) {
    c->hybrid_seen = *B->route;
    c->hybrid_seen.direct = NULL;
    c->hybrid_seen.pair = NULL;
    c->hybrid_seen.rep = c->hybrid_seen.agg = NULL;
    c->hybrid_have = 1;
  }
  return st;
}

/* Volumes of strategy s (selection made here; two-tier ones count the hops of their plan's
 * messages) and, on machine m (NULL: none), its predicted time in *pred (cost_plan: priced
 * from its messages, no program built). */
static shiro_status evaluate(plan_choice *c, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                             sc_blocks *B, sc_strategy s, int32_t gpn, sc_volumes *v, const sc_machine *m,
                             size_t row_bytes, cost_pred *pred, shiro_error *err) {
  shiro_status st = select_noted(c, B, s, gpn, NULL, NULL, err);
  if (st != SHIRO_OK || !strategy_is_two_tier(s)) {
    if (st == SHIRO_OK) strategy_volumes(B, Pcol, s, gpn, v);
    if (st == SHIRO_OK && m) st = cost_plan(A, Prow, Pcol, B, s, gpn, m, row_bytes, NULL, pred, NULL, err);
    return st;
  }
  memset(v, 0, sizeof *v);
  if (m) return cost_plan(A, Prow, Pcol, B, s, gpn, m, row_bytes, v, pred, NULL, err);
  return plan_messages(A, Prow, Pcol, B, s, gpn, count_msg, v, NULL, err);
}

/* Joint's plan already priced on the same blocks (fast: the estimate the partition was kept by):
 * evaluate_all takes it instead of building it again. */
typedef struct known_joint {
  int have;
  sc_volumes vol;
  cost_pred pred;
} known_joint;

/* Fast, auto and no compare: hybrid's search (six routings priced) is skipped where
 * relaying cannot pay, the better of hier and group predicted more than PLAN_HYBRID_GATE times
 * joint's (evaluated before it): hybrid chooses per node pair between joint's direct covers and
 * group's relayed ones, and where relaying costs that much more it keeps joint's (Slashdot,
 * R = 128: group 1.16x joint, hybrid = joint); and, with pure_seen, on the time partition when
 * on block's partition its search kept a pure routing (joint's, group's or hier's own plan):
 * the time partition moves rows between ranks, not node pairs between routes, and hybrid's
 * search was most of the planning at large R (cit-HepTh, R = 8192, G = 8: two searches of 13 s
 * in 59 s). Notes the skip in ev. */
static int hybrid_skip(const plan_request *r, evaluation *ev, int pure_seen) {
  if (r->effort != PLAN_EFFORT_FAST || !r->auto_strategy || r->compare) return 0;
  const double joint = ev->pred[STRAT_JOINT].time_s;
  double relayed = ev->pred[STRAT_HIER].time_s;
  if (ev->pred[STRAT_GROUP].time_s < relayed) relayed = ev->pred[STRAT_GROUP].time_s;
  if (relayed > PLAN_HYBRID_GATE * joint) {
    ev->hybrid_skip_why = "hier's and group's relayed plans are over 1.1x joint's direct one: relaying does not pay";
  } else if (pure_seen) {
    ev->hybrid_skip_why = "on block's partition its search kept a pure routing (joint's, group's or hier's plan); "
                          "the time partition moves rows, not routes";
  } else {
    return 0;
  }
  ev->hybrid_skipped_s = joint < relayed ? joint : relayed;
  return 1;
}

/* On blocks B of (Prow, Pcol): hybrid's links and pricing (on r->m, else on c->hm when it has
 * links), then every strategy compare asks for or auto chooses from, except strategy s
 * (priced: every strategy with --machine, auto's candidates without it), and auto's choice. */
static shiro_status evaluate_all_known(const plan_request *r, sc_strategy s0, plan_choice *c, const sc_csr *A,
                                       const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B,
                                       const known_joint *kj, int pure_seen, evaluation *ev, shiro_error *err) {
  const sc_machine *pm = r->m;
  memset(ev, 0, sizeof *ev);
  ev->chosen = s0;
  if ((r->compare || r->auto_strategy || s0 == STRAT_HYBRID) && (pm || c->hm.nvlink_Bps > 0)) {
    ev->hprice = (cost_hybrid){A, Prow, Pcol, r->gpn, pm ? pm : &c->hm, r->row_bytes};
    shiro_status st = cost_route_hybrid(B, &ev->hprice, err); /* its candidates priced as the plan will be */
    if (st != SHIRO_OK) return st;
  }
  /* Compare: every strategy, the plan's strategy last so its selection stays in the blocks;
   * auto: its candidates, then the one predicted fastest (the first of equals) is the plan's. */
  for (int s = 0; s < STRAT_COUNT; s++) {
    if (s == (int)s0 || !(r->compare || (r->auto_strategy && auto_candidate(s)))) continue;
    if (s == STRAT_HYBRID && hybrid_skip(r, ev, pure_seen)) continue;
    int price = pm && (r->machine_given || auto_candidate(s));
    if (s == STRAT_JOINT && kj && kj->have && price) { /* the same selection and plan, priced already */
      ev->vol[s] = kj->vol;
      ev->pred[s] = kj->pred;
      ev->have[s] = ev->pred_have[s] = 1;
      continue;
    }
    shiro_status st = evaluate(c, A, Prow, Pcol, B, (sc_strategy)s, r->gpn, &ev->vol[s], price ? pm : NULL,
                               r->row_bytes, &ev->pred[s], err);
    if (st != SHIRO_OK) return st;
    ev->have[s] = 1;
    ev->pred_have[s] = price;
  }
  if (r->auto_strategy) {
    ev->chosen = STRAT_JOINT;
    for (int s = 0; s < STRAT_COUNT; s++)
      if (auto_candidate(s) && ev->have[s] && ev->pred[s].time_s < ev->pred[ev->chosen].time_s)
        ev->chosen = (sc_strategy)s;
  }
  return SHIRO_OK;
}

static shiro_status evaluate_all(const plan_request *r, sc_strategy s0, plan_choice *c, const sc_csr *A,
                                 const sc_partition *Prow, const sc_partition *Pcol, sc_blocks *B, evaluation *ev,
                                 shiro_error *err) {
  return evaluate_all_known(r, s0, c, A, Prow, Pcol, B, NULL, 0, ev, err);
}

/* parts:FILE, parts or hypergraph: a row partition from labels (part_from_labels; NULL: r->parts_file's), rows renumbered part by part as
 * metis does; square A: B rows follow C rows (the same renumbering of the columns), rectangular
 * A: B rows block over k, columns kept. Replaces *A by the renumbered matrix; returns oldof. */
static shiro_status partition_parts(const plan_request *r, const int32_t *labels, sc_csr **A, int64_t **oldof,
                                    sc_partition *Prow, sc_partition *Pcol, shiro_error *err) {
  const sc_csr *M = *A;
  const int square = M->m == M->k;
  int64_t *newof = NULL;
  sc_csr *P = NULL;
  shiro_status st = labels ? part_from_labels(labels, M->m, r->ranks, &newof, Prow, err)
                           : part_file(r->parts_file, "rows", M->m, r->ranks, &newof, Prow, err);
  if (st == SHIRO_OK) st = square ? part_copy(Prow, Pcol, err) : part_block(M->k, r->ranks, Pcol, err);
  if (st == SHIRO_OK) st = sc_csr_permute2(M, newof, square ? newof : NULL, &P, err);
  if (st == SHIRO_OK && !(*oldof = sc_inverse_permutation(newof, M->m))) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  free(newof);
  if (st != SHIRO_OK) {
    sc_csr_free(P);
    return st;
  }
  *A = P;
  return SHIRO_OK;
}

/* The hypergraph partition: the caller's partitioner's labels (r->hypergraph: Zoltan's PHG in
 * shiro-plan) renumbered as parts' are; without one, refused. */
static shiro_status partition_hypergraph(const plan_request *r, sc_csr **A, int64_t **oldof, sc_partition *Prow,
                                         sc_partition *Pcol, shiro_error *err) {
  if (!r->hypergraph)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition hypergraph: this planner has no hypergraph partitioner "
                                                  "(Zoltan, over MPI): plan with shiro-plan");
  int32_t *labels = malloc((size_t)((*A)->m ? (*A)->m : 1) * sizeof *labels);
  if (!labels) return shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  shiro_status st = r->hypergraph(*A, r->ranks, labels, err);
  if (st == SHIRO_OK) st = partition_parts(r, labels, A, oldof, Prow, Pcol, err);
  free(labels);
  return st;
}

/* Row partitions of A/C and B by the partition named; metis and parts replace *A by the permuted
 * matrix (the caller keeps the original) and return oldof. B rows follow C rows for square
 * matrices under nnz and metis, so that one layer's C is the next layer's B. */
static shiro_status partition(const plan_request *r, const char *name, sc_csr **A, int64_t **oldof,
                              sc_partition *Prow, sc_partition *Pcol, shiro_error *err) {
  const sc_csr *M = *A;
  if (!strcmp(name, "parts")) return partition_parts(r, r->parts, A, oldof, Prow, Pcol, err);
  if (!strcmp(name, "hypergraph")) return partition_hypergraph(r, A, oldof, Prow, Pcol, err);
  if (!strcmp(name, "block") || !strcmp(name, "time")) { /* time starts from block */
    shiro_status st = part_block(M->m, r->ranks, Prow, err);
    return st != SHIRO_OK ? st : part_block(M->k, r->ranks, Pcol, err);
  }
  if (!strcmp(name, "nnz") || !strcmp(name, "work")) { /* work starts from nnz */
    shiro_status st = part_nnz(M, r->ranks, Prow, err);
    if (st != SHIRO_OK) return st;
    return M->m == M->k ? part_copy(Prow, Pcol, err) : part_block(M->k, r->ranks, Pcol, err);
  }
  int64_t *newof = NULL;
  sc_csr *P = NULL;
  const part_metis_options mo = {.volume = !strcmp(name, "metis-vol"), .node_first = !strcmp(name, "metis-node"), .gpn = r->gpn};
  shiro_status st = part_metis_opt(M, r->ranks, &mo, &newof, Prow, err);
  if (st == SHIRO_OK) st = part_copy(Prow, Pcol, err);
  if (st == SHIRO_OK) st = sc_csr_permute(M, newof, &P, err);
  if (st == SHIRO_OK && !(*oldof = sc_inverse_permutation(newof, M->m))) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  free(newof);
  if (st != SHIRO_OK) {
    sc_csr_free(P);
    return st;
  }
  *A = P;
  return SHIRO_OK;
}

int plan_partition_known(const char *name) {
  static const char *const known[] = {"block", "nnz", "work", "time", "metis", "metis-vol", "metis-node", "hypergraph"};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (!strcmp(name, known[i])) return 1;
  return 0;
}

sc_strategy plan_work_strategy(const plan_request *r) {
  return r->auto_strategy || r->strategy == STRAT_HYBRID ? STRAT_JOINT : r->strategy;
}

/* A candidate partition kept: (Prow, Pcol, B) of *c and the second set swap (the caller frees
 * the second set, now the old one), *ev becomes *ev2 and its prices point at the kept partitions. */
static void keep_candidate(plan_choice *c, evaluation *ev, sc_partition *Prow2, sc_partition *Pcol2, sc_blocks *B2,
                           const evaluation *ev2) {
  sc_partition tp = c->Prow;
  c->Prow = *Prow2;
  *Prow2 = tp;
  tp = c->Pcol;
  c->Pcol = *Pcol2;
  *Pcol2 = tp;
  sc_blocks tb = c->B;
  c->B = *B2;
  *B2 = tb;
  *ev = *ev2;
  ev->hprice.Prow = &c->Prow;
  ev->hprice.Pcol = &c->Pcol;
  if (c->B.route) c->B.route->price_arg = &ev->hprice;
}

/* Joint's flat plan on blocks B of (Prow, Pcol), priced on r->m: the cheap estimate the fast
 * search ranks partitions by (no two-tier search); rank_s (R entries, may be NULL):
 * each rank's share. Leaves B's selection at joint's. */
static shiro_status estimate_joint(const plan_request *r, const sc_csr *A, const sc_partition *Prow,
                                   const sc_partition *Pcol, sc_blocks *B, double *rank_s, known_joint *kj,
                                   shiro_error *err) {
  memset(kj, 0, sizeof *kj);
  shiro_status st = strategy_select(B, STRAT_JOINT, r->gpn, NULL, NULL, err);
  if (st == SHIRO_OK) st = cost_plan(A, Prow, Pcol, B, STRAT_JOINT, r->gpn, r->m, r->row_bytes, NULL, &kj->pred, rank_s, err);
  if (st == SHIRO_OK) {
    strategy_volumes(B, Pcol, STRAT_JOINT, r->gpn, &kj->vol);
    kj->have = 1;
  }
  return st;
}

/* The time partition, from block's (c's, whose blocks are evaluated in *ev): balanced with the
 * plan's strategy (under auto the one chosen on block), then every strategy evaluated again on
 * it. Kept if given explicitly, or under the default partition (part_auto) if auto's plan on it
 * is predicted at least 1 - PLAN_TIME_GAIN faster than on block's. */
static shiro_status time_partition(const plan_request *r, sc_strategy s0, plan_choice *c, int part_auto,
                                   evaluation *ev, double *secs, shiro_error *err) {
  const double start = now();
  sc_partition Prow2 = {0}, Pcol2 = {0};
  sc_blocks B2 = {0};
  evaluation ev2;
  memset(&ev2, 0, sizeof ev2);
  c->time_strategy = r->auto_strategy ? ev->chosen : s0;
  shiro_status st = part_copy(&c->Prow, &Prow2, err);
  if (st == SHIRO_OK) st = part_copy(&c->Pcol, &Pcol2, err);
  progress(r, "time partition", 0, 1);
  if (st == SHIRO_OK)
    st = time_balance(c->A, c->time_strategy, r->gpn, r->m, r->row_bytes, PLAN_WORK_ROUNDS, &Prow2, &Pcol2, &B2,
                      &c->time_seen, err);
  progress(r, "time partition", 1, 1);
  *secs = now() - start;
  const int moved = st == SHIRO_OK && c->time_seen.best < c->time_seen.start; /* else it is block's partition */
  /* hybrid's search on block's partition kept a pure routing: hybrid_skip */
  const int pure_seen = ev->have[STRAT_HYBRID] && c->hybrid_have && c->hybrid_seen.candidate >= 0 &&
      c->hybrid_seen.candidate < ROUTE_MODES;
  if (moved) st = evaluate_all_known(r, s0, c, c->A, &Prow2, &Pcol2, &B2, NULL, pure_seen, &ev2, err);
  if (st == SHIRO_OK) {
    c->time_auto_block_s = ev->pred[ev->chosen].time_s;
    c->time_auto_time_s = moved ? ev2.pred[ev2.chosen].time_s : c->time_auto_block_s;
    const int faster = moved && c->time_auto_time_s < PLAN_TIME_GAIN * c->time_auto_block_s;
    if (moved && !(!part_auto || faster) && ev2.hybrid_skipped_s > 0) { /* a kept one's skip is noted with it */
      note_skip(c, "time", STRAT_HYBRID, ev2.hybrid_skipped_s, ev2.hybrid_skip_why);
    }
    if (moved && (!part_auto || faster)) keep_candidate(c, ev, &Prow2, &Pcol2, &B2, &ev2);
    if (!part_auto || faster) c->partition = "time";
    if (part_auto)
      note(c, "time", "plan", moved ? ev2.chosen : ev->chosen, c->time_auto_time_s, "weighed",
           faster ? "predicted at least 3% faster than block's" : moved ? "not 3% faster than block's"
                                                                        : "its rounds found nothing faster than block's");
  }
  blocks_free(&B2);
  part_free(&Prow2);
  part_free(&Pcol2);
  return st;
}

/* Whether METIS may be asked for r->ranks parts of A: a square A, at least as many rows as
 * ranks (METIS prints on stdout otherwise), and more than one rank. */
static int metis_can_serve(const plan_request *r, const sc_csr *A) {
  return SHIRO_HAVE_METIS && A->m == A->k && r->ranks > 1 && A->m >= r->ranks;
}

/* The degree spread of A: the standard deviation of its rows' nonzeros over their mean (0 for
 * an empty A). About 0.2-0.8 on meshes and bounded-degree graphs, 1.1-8 on power-law ones. */
static double degree_spread(const sc_csr *A) {
  if (A->m <= 0 || A->nnz <= 0) return 0;
  const double mean = (double)A->nnz / (double)A->m;
  double var = 0;
  for (int64_t i = 0; i < A->m; i++) {
    const double d = (double)(A->Ap[i + 1] - A->Ap[i]) - mean;
    var += d * d;
  }
  return sqrt(var / (double)A->m) / mean;
}

/* The METIS partitions auto weighs, in order: metis; metis-node where G > 1 divides R with more
 * than one node; metis-vol, under the fast search only where A's degree spread is at most
 * PLAN_VOL_SPREAD (METIS's volume objective costs 3-5x its edge cut on power-law graphs, where it
 * won nothing measured; on meshes it costs about the same and won up to 2.3x). Returns how many
 * names it put in names[3]; *why_vol: why metis-vol is not among them (NULL if it is, or there
 * is no METIS at all). */
static int metis_variants(const plan_request *r, const sc_csr *A, const char *names[3], const char **why_vol) {
  int n = 0;
  *why_vol = NULL;
  names[n++] = "metis";
  if (r->gpn > 1 && r->ranks % r->gpn == 0 && r->ranks > r->gpn) names[n++] = "metis-node";
  if (r->effort == PLAN_EFFORT_EXHAUSTIVE || degree_spread(A) <= PLAN_VOL_SPREAD) names[n++] = "metis-vol";
  else *why_vol = "degree spread above 1: METIS's volume objective costs 3-5x its edge cut here";
  return n;
}

/* A METIS candidate (name: metis, metis-vol or metis-node) or the hypergraph's (both renumber
 * the rows), from the matrix as read (c->A0 if a
 * METIS partition is already kept, else c->A), against the partition kept so far (its auto plan
 * predicted against ev's chosen). With full, every strategy is evaluated on it (exhaustive); else
 * only joint's estimate, against est_other_s (joint's estimate on the partition kept so far), and
 * the caller evaluates the kept one. Kept (at least 3% faster): c->A becomes the permuted matrix,
 * c->A0 the one read, c->oldof the renumbering, the partition, blocks and *ev replaced,
 * c->partition name, *kept 1, *won_s its price. A partition with an empty rank is not weighed.
 * metis_* of *c record the plain metis candidate. */
static shiro_status metis_candidate(const plan_request *r, sc_strategy s0, plan_choice *c, int full, const char *name,
                                    double est_other_s, evaluation *ev, known_joint *kj, int *kept, double *won_s,
                                    double *secs, shiro_error *err) {
  const double start = now();
  const int plain = !strcmp(name, "metis");
  sc_csr *orig = c->A0 ? c->A0 : c->A, *Am = orig;
  int64_t *oldm = NULL;
  sc_partition Prow2 = {0}, Pcol2 = {0};
  sc_blocks B2 = {0};
  evaluation ev2;
  memset(&ev2, 0, sizeof ev2);
  *kept = 0;
  const char *label = strcmp(name, "hypergraph") ? "metis partition" : "hypergraph partition";
  progress(r, label, 0, 1);
  shiro_status st = partition(r, name, &Am, &oldm, &Prow2, &Pcol2, err);
  int empty = 0;
  for (int32_t p = 0; st == SHIRO_OK && p < Prow2.parts; p++) empty |= Prow2.first[p + 1] == Prow2.first[p];
  const double other_s = ev->pred[ev->chosen].time_s;
  if (plain) c->metis_other_s = other_s;
  if (st == SHIRO_OK && empty) {
    if (plain) c->metis_tried = 2;
    note(c, name, "plan", ev->chosen, INFINITY, "skipped", "it leaves a rank without rows");
  }
  double price = INFINITY;
  known_joint mkj = {0};
  if (st == SHIRO_OK && !empty) {
    sc_csr_compact_values(Am);
    st = blocks_build(Am, &Prow2, &Pcol2, &B2, err);
    if (st == SHIRO_OK && full) st = evaluate_all(r, s0, c, Am, &Prow2, &Pcol2, &B2, &ev2, err);
    if (st == SHIRO_OK && !full) st = estimate_joint(r, Am, &Prow2, &Pcol2, &B2, NULL, &mkj, err);
    if (st == SHIRO_OK) {
      price = full ? ev2.pred[ev2.chosen].time_s : mkj.pred.time_s;
      if (plain) {
        c->metis_tried = 1;
        c->metis_auto_s = price;
        c->metis_estimate = !full;
      }
    }
  }
  progress(r, label, 1, 1);
  const double against = full ? other_s : est_other_s;
  if (st == SHIRO_OK && !empty) {
    const int win = price < PLAN_METIS_GAIN * against;
    note(c, name, full ? "plan" : "estimate", full ? ev2.chosen : STRAT_JOINT, price, win && !full ? "kept" : "weighed",
         win ? "predicted at least 3% faster than the partition kept before" : "not 3% faster than the partition kept before");
    if (win) {
      for (int i = 0; i < c->ncand - 1; i++) /* a METIS partition kept before is only weighed now */
        if (!strcmp(c->cand[i].status, "kept") && !strcmp(c->cand[i].kind, "partition")) {
          c->cand[i].status = "weighed";
          c->cand[i].reason = "predicted at least 3% faster than the partition kept before; a later METIS partition more";
        }
      keep_candidate(c, ev, &Prow2, &Pcol2, &B2, &ev2);
      if (c->A0) { /* a METIS partition kept before: its matrix and renumbering go */
        sc_csr_free(c->A);
        free(c->oldof);
      } else {
        c->A0 = c->A;
      }
      c->A = Am;
      c->oldof = oldm;
      Am = NULL;
      oldm = NULL;
      c->partition = name;
      *kept = 1;
      *won_s = price;
      if (kj) *kj = mkj;
    }
  }
  if (Am != c->A && Am != orig) sc_csr_free(Am);
  free(oldm);
  blocks_free(&B2);
  part_free(&Prow2);
  part_free(&Pcol2);
  *secs = now() - start;
  return st;
}

/* Weighs the METIS partitions of metis_variants in order, each by metis_candidate (full: every
 * strategy evaluated; else joint's estimate against *best, the estimate of the partition kept so
 * far, which a kept one replaces) against the one kept before it. The fast search (!full) stops
 * after the first where it was weighed and not kept: METIS's other objectives are noted as
 * skipped (on the matrices measured, where the edge cut did not beat block's ranges by 3% no other
 * objective did, and they cost as much again each). *kept: 1 if one was kept; *secs: the time they
 * took. metis-vol left out is noted as skipped, with why. */
static shiro_status weigh_metis(const plan_request *r, sc_strategy s0, plan_choice *c, int full, evaluation *ev,
                                known_joint *kj, double *best, int *kept, double *secs, shiro_error *err) {
  const char *names[3], *why_vol;
  const int nv = metis_variants(r, c->A, names, &why_vol);
  shiro_status st = SHIRO_OK;
  *kept = 0;
  for (int v = 0; st == SHIRO_OK && v < nv; v++) {
    double s = 0;
    int k = 0;
    st = metis_candidate(r, s0, c, full, names[v], *best, ev, kj, &k, best, &s, err);
    *secs += s;
    *kept |= k;
    if (st == SHIRO_OK && !full && v == 0 && c->metis_tried == 1 && !k) { /* names[0], metis, weighed and lost */
      for (int w = 1; w < nv; w++)
        note(c, names[w], "estimate", STRAT_JOINT, INFINITY, "skipped",
             "metis was not 3% faster than the partition kept before: METIS's other objectives are not tried");
      break;
    }
  }
  if (st == SHIRO_OK && why_vol) note(c, "metis-vol", "estimate", STRAT_JOINT, INFINITY, "skipped", why_vol);
  return st;
}

/* The hypergraph partition as auto's candidate (metis_candidate's rules, against the partition
 * kept so far), weighed only by the exhaustive search (full), where there is a hypergraph
 * partitioner (r->hypergraph) and every rank can get a row; the fast search lists it as skipped.
 * Measured (docs/performance.md): on 16 square cases Zoltan's PHG took 4.5-14x METIS's time and
 * joint's plan on it was predicted 3% faster than on METIS's in 2 and slower in 9 (by up to 41%);
 * on the rectangular ones, where METIS cannot serve, the time partition the fast search tries
 * instead came within 4% of it (better in 2 of 3) at a fraction of its planning time.
 * *kept, *secs as weigh_metis's. */
static shiro_status weigh_hypergraph(const plan_request *r, sc_strategy s0, plan_choice *c, int full, evaluation *ev,
                                     known_joint *kj, double *best, int *kept, double *secs, shiro_error *err) {
  const char *why = NULL;
  *kept = 0;
  if (r->ranks <= 1) return SHIRO_OK;
  if (!r->hypergraph) why = "no hypergraph partitioner in this planner (Zoltan, over MPI: shiro-plan has it)";
  else if (c->A->m < r->ranks) why = "fewer rows than ranks";
  else if (!full)
    why = c->A->m == c->A->k ? "METIS's partitions are weighed: the hypergraph's took 4.5-14x METIS's time and its plans "
                               "were slower on most graphs measured (--effort exhaustive weighs it)"
                             : "the time partition is weighed: on the rectangular matrices measured it came within 4% "
                               "of the hypergraph's at a fraction of its planning time (--effort exhaustive weighs it)";
  if (why) {
    note(c, "hypergraph", full ? "plan" : "estimate", full ? ev->chosen : STRAT_JOINT, INFINITY, "skipped", why);
    return SHIRO_OK;
  }
  double s = 0;
  shiro_status st = metis_candidate(r, s0, c, full, "hypergraph", *best, ev, kj, kept, best, &s, err);
  *secs += s;
  return st;
}

/* The fast search of the default partition (auto, partition not given): joint's estimate on
 * block's partition and on METIS's (where METIS can serve), the better kept (by 3%); every
 * strategy evaluated on it; then, if block's is kept, the time partition's rounds only where
 * block's busiest rank (joint's estimate) is more than 1 / PLAN_TIME_GAIN of the mean. */
static shiro_status fast_partition(const plan_request *r, sc_strategy s0, plan_choice *c, evaluation *ev,
                                   double *part_s, shiro_error *err) {
  const int32_t R = r->ranks;
  double *rank_s = malloc((size_t)R * sizeof *rank_s);
  if (!rank_s) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  known_joint kj;
  shiro_status st = estimate_joint(r, c->A, &c->Prow, &c->Pcol, &c->B, rank_s, &kj, err);
  const double block_est = kj.pred.time_s;
  double most = 0, mean = 0;
  for (int32_t p = 0; st == SHIRO_OK && p < R; p++) {
    mean += rank_s[p] / R;
    if (rank_s[p] > most) most = rank_s[p];
  }
  free(rank_s);
  if (st != SHIRO_OK) return st;
  note(c, "block", "estimate", STRAT_JOINT, block_est, "weighed", "joint's flat plan priced");
  /* metis first: where it wins, the time partition (block's ranges) is not a candidate */
  int metis_kept = 0;
  double best = block_est; /* joint's estimate on the partition kept so far */
  if (metis_can_serve(r, c->A)) {
    memset(ev, 0, sizeof *ev);
    ev->chosen = STRAT_JOINT;
    ev->pred[STRAT_JOINT].time_s = block_est;
    st = weigh_metis(r, s0, c, 0, ev, &kj, &best, &metis_kept, part_s, err);
    if (st != SHIRO_OK) return st;
    c->metis_other_s = block_est;
  } else if (SHIRO_HAVE_METIS && c->A->m == c->A->k && R > 1) {
    c->metis_tried = 2;
    c->metis_other_s = block_est;
    note(c, "metis", "plan", STRAT_JOINT, INFINITY, "skipped", "fewer rows than ranks");
  }
  int hg_kept = 0; /* never: the fast search lists the hypergraph partition as skipped, saying why */
  if ((st = weigh_hypergraph(r, s0, c, 0, ev, &kj, &best, &hg_kept, part_s, err)) != SHIRO_OK) return st;
  /* the time partition moves rows off the busiest rank's links: it cannot gain 3% where the
   * busiest rank is within 1 / 0.97 of the mean (the call cannot end before the mean rank's) */
  const int unbalanced = mean > 0 && most * PLAN_TIME_GAIN > mean;
  st = evaluate_all_known(r, s0, c, c->A, &c->Prow, &c->Pcol, &c->B, &kj, 0, ev, err); /* joint's: priced above */
  if (st != SHIRO_OK) return st;
  if (!metis_kept && unbalanced) {
    double tp_s = 0;
    st = time_partition(r, s0, c, 1, ev, &tp_s, err);
    *part_s += tp_s;
  } else {
    note(c, "time", "estimate", STRAT_JOINT, best, "skipped",
         metis_kept ? "a METIS partition kept: the time partition starts from block's ranges"
                    : "block's busiest rank is within 3% of the mean: no balance can gain 3%");
  }
  return st;
}

shiro_status plan_choose(const plan_request *r, sc_csr *A, plan_choice *c, shiro_error *err) {
  memset(c, 0, sizeof *c);
  c->A = A;
  c->partition = r->partition;
  c->work_strategy = plan_work_strategy(r);
  sc_strategy s0 = r->auto_strategy ? STRAT_COUNT : r->strategy;
  double t0 = now(), t1;
  const int part_auto = r->auto_strategy && !r->partition_given; /* block, time or metis, as predicted */
  const int time_part = part_auto || !strcmp(r->partition, "time");
  sc_csr *read = c->A;
  shiro_status st = partition(r, r->partition, &c->A, &c->oldof, &c->Prow, &c->Pcol, err);
  if (st != SHIRO_OK) {
    if (c->A != read) sc_csr_free(read);
    return st;
  }
  if (c->A != read) c->A0 = read; /* A is now the permuted matrix; the original is kept for the digests */
  /* Mostly ones (pattern files): the values shrink from 8 bytes an entry to about 2 bits; the
   * planner reads them through sc_csr_val, so the plan is the same. */
  sc_csr_compact_values(c->A);
  if (c->A0) sc_csr_compact_values(c->A0);
  t1 = now();
  c->partition_s = t1 - t0;
  t0 = t1;
  progress(r, "blocks", 0, 1);
  if (r->cpu_auto) { /* joint and col, each on its partition; B is built for the one kept */
    progress(r, "auto-cpu", 0, 1);
    const int balance = !strcmp(r->partition, "work");
    st = work_choose(c->A, r->gpn, balance, PLAN_WORK_ROUNDS, work_row_entries(r->n), WORK_MOVE_ROW_ENTRIES, &c->Prow,
                     &c->Pcol, &c->B, &c->cpu_seen, err);
    if (st != SHIRO_OK) return st;
    s0 = c->cpu_seen.chosen;
    if (balance) c->work_seen = c->cpu_seen.work[s0 == STRAT_COL ? WORK_CHOICE_COL : WORK_CHOICE_JOINT];
    progress(r, "auto-cpu", 1, 1);
    t1 = now();
    c->partition_s += t1 - t0;
    t0 = t1;
  } else if (!strcmp(r->partition, "work")) { /* rounds of covers and rescaling; B is built for the partition kept */
    progress(r, "work partition", 0, 1);
    st = work_balance(c->A, plan_work_strategy(r), r->gpn, PLAN_WORK_ROUNDS, work_row_entries(r->n), &c->Prow,
                      &c->Pcol, &c->B, &c->work_seen, err);
    if (st != SHIRO_OK) return st;
    progress(r, "work partition", 1, 1);
    t1 = now();
    c->partition_s += t1 - t0;
    t0 = t1;
  } else if ((st = blocks_build(c->A, &c->Prow, &c->Pcol, &c->B, err)) != SHIRO_OK) return st;
  progress(r, "blocks", 1, 1);
  if ((r->compare || s0 == STRAT_HYBRID) && !r->m) { /* hybrid decides on a machine's links: auto's default */
    shiro_error me;
    if (machine_load("tsubame4", &c->hm, &me) == SHIRO_OK) c->hm.gpus_per_node = c->hm.nics_per_node = r->gpn;
    else c->hm.nvlink_Bps = 0; /* none found: hybrid's own numbers (strategy.h) */
  }
  evaluation *ev = calloc(1, sizeof *ev);
  if (!ev) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  if (part_auto && r->effort == PLAN_EFFORT_FAST && r->m) {
    double part_s = 0;
    st = fast_partition(r, s0, c, ev, &part_s, err);
    c->partition_s += part_s;
    t0 += part_s;
  } else {
    st = evaluate_all(r, s0, c, c->A, &c->Prow, &c->Pcol, &c->B, ev, err);
    if (st == SHIRO_OK && part_auto)
      note(c, "block", "plan", ev->chosen, ev->pred[ev->chosen].time_s, "weighed", "every strategy evaluated");
    if (st == SHIRO_OK && time_part) {
      double tp_s = 0;
      st = time_partition(r, s0, c, part_auto, ev, &tp_s, err);
      c->partition_s += tp_s; /* a partition's time, not the plan's covers' */
      t0 += tp_s;
    }
    if (st == SHIRO_OK && part_auto && c->A->m == c->A->k && SHIRO_HAVE_METIS && r->ranks > 1) { /* read as is (block) */
      double mp_s = 0;
      if (c->A->m < r->ranks) {
        c->metis_tried = 2;
        c->metis_other_s = ev->pred[ev->chosen].time_s;
        note(c, "metis", "plan", ev->chosen, INFINITY, "skipped", "fewer rows than ranks");
      } else {
        double unused = 0; /* full: each is weighed against the auto plan kept before it */
        int kept = 0;
        st = weigh_metis(r, s0, c, 1, ev, NULL, &unused, &kept, &mp_s, err);
      }
      c->partition_s += mp_s;
      t0 += mp_s;
    }
    if (st == SHIRO_OK && part_auto) {
      double hg_s = 0, unused = 0;
      int kept = 0;
      st = weigh_hypergraph(r, s0, c, 1, ev, NULL, &unused, &kept, &hg_s, err);
      c->partition_s += hg_s;
      t0 += hg_s;
    }
  }
  if (st == SHIRO_OK) {
    memcpy(c->vol, ev->vol, sizeof c->vol);
    memcpy(c->have, ev->have, sizeof c->have);
    memcpy(c->pred, ev->pred, sizeof c->pred);
    memcpy(c->pred_have, ev->pred_have, sizeof c->pred_have);
    c->hprice = ev->hprice; /* *c does not move from here: the route prices through it */
    c->hprice.Prow = &c->Prow;
    c->hprice.Pcol = &c->Pcol;
    c->hprice.A = c->A;
    if (c->B.route && c->B.route->price_arg) c->B.route->price_arg = &c->hprice;
    c->strategy = ev->chosen;
    if (ev->hybrid_skipped_s > 0) note_skip(c, c->partition, STRAT_HYBRID, ev->hybrid_skipped_s, ev->hybrid_skip_why);
    if (part_auto && c->ncand) note(c, c->partition, "plan", c->strategy, c->pred[c->strategy].time_s, "kept",
                                    "every strategy evaluated on the partition kept");
    st = select_noted(c, &c->B, c->strategy, r->gpn, r->progress ? cover_progress : NULL, (void *)r, err);
  }
  free(ev);
  t1 = now();
  c->cover_s = t1 - t0;
  if (st == SHIRO_OK && r->floor) {
    st = plan_floor_rows(c->A, &c->Prow, &c->Pcol, r->gpn, omp_get_max_threads(), &c->floor, err);
    c->floor_have = st == SHIRO_OK;
    c->floor_s = now() - t1;
  }
  return st;
}

void plan_choice_free(plan_choice *c) {
  plan_floor_free(&c->floor);
  blocks_free(&c->B);
  part_free(&c->Prow);
  part_free(&c->Pcol);
  sc_csr_free(c->A);
  sc_csr_free(c->A0);
  free(c->oldof);
  memset(c, 0, sizeof *c);
}
