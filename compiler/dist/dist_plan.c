/* dist_plan.c — the planner over MPI processes: read, own, cover, trade, build, write. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "blocks.h"
#include "digest.h"
#include "dist_blocks.h"
#include "dist_choose.h"
#include "dist_comm.h"
#include "dist_floor.h"
#include "dist_input.h"
#include "dist_hypergraph.h"
#include "dist_metis.h"
#include "dist_price.h"
#include "dist_plan.h"
#include "dist_rows.h"
#include "dist_write.h"
#include "error.h"
#include "partition.h"
#include "permute.h"
#include "plan_build.h"
#include "plan_choose.h"
#include "shiro_config.h"
#include "plan_write.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

shiro_status dist_plan_supported(const dist_request *rq, shiro_error *err) {
  const sc_strategy s = rq->strategy;
  if (rq->auto_strategy && !rq->m)
    return shiro_fail(err, SHIRO_ERR_ARG, "auto with several processes needs a machine to price on");
  if (!rq->auto_strategy && (s == STRAT_HYBRID || s < 0 || s >= STRAT_COUNT))
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED,
                      "--strategy %s is not planned by several processes yet (block, col, row, joint, hier, group, "
                      "cola and auto are); give one of those, or plan with one process",
                      strategy_name(s));
  if (strcmp(rq->partition, "block") && strcmp(rq->partition, "nnz") && strcmp(rq->partition, "parts") &&
      strcmp(rq->partition, "metis") && strcmp(rq->partition, "hypergraph"))
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED,
                      "--partition %s is not planned by several processes yet (block, nnz, metis, hypergraph and parts:FILE "
                      "are); give one of those, or plan with one process",
                      rq->partition);
  return SHIRO_OK;
}

/* The metis (or hypergraph) partition cut by the processes together (dist_part_metis: PT-Scotch;
 * dist_part_hypergraph: Zoltan), its rows renumbered part by part as one process renumbers
 * METIS's: *newof and Prow. Collective. */
static shiro_status cut_labels(const dist_comm *c, const dist_matrix *M, int32_t R, int hypergraph, int64_t **newof,
                               sc_partition *Prow, shiro_error *err) {
  int32_t *labels = malloc((size_t)(M->m ? M->m : 1) * sizeof *labels);
  shiro_status st = dist_agree(c, labels ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory"), err);
  if (st == SHIRO_OK) st = hypergraph ? dist_part_hypergraph(c, M, R, labels, err) : dist_part_metis(c, M, R, labels, err);
  if (st == SHIRO_OK) st = part_from_labels(labels, M->m, R, newof, Prow, err);
  free(labels);
  return st;
}

/* The ranks of process d of P: whole nodes of G ranks where there are at least P nodes, or where
 * the strategy is two-tier (nodes: 1; a node's rows are covered and relayed together: some
 * processes then have none); else ranks one by one. */
static void ranks_of(int d, int P, int32_t R, int32_t G, int nodes_whole, int32_t *first, int32_t *end) {
  const int64_t nodes = (R + (int64_t)G - 1) / G;
  if (nodes >= P || nodes_whole) {
    int64_t n0 = nodes * d / P, n1 = nodes * (d + 1) / P;
    *first = (int32_t)(n0 * G);
    *end = (int32_t)(n1 * G < R ? n1 * G : R);
  } else {
    *first = (int32_t)((int64_t)R * d / P);
    *end = (int32_t)((int64_t)R * (d + 1) / P);
  }
}

/* The digest of the whole matrix's pattern (shiro_pattern_digest), hashed process after process
 * over the stripes read (M->A: rows lo .. hi-1, row lo first, in process order). Collective. */
static shiro_status matrix_digest(const dist_comm *c, const dist_matrix *M, uint64_t *out, shiro_error *err) {
  digest64 d;
  pattern_digest_begin(&d, M->m, M->k);
  if (c->rank > 0 && MPI_Recv(&d.h, 1, MPI_UINT64_T, c->rank - 1, 7, c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "MPI_Recv of the pattern digest failed");
  const sc_csr *A = M->A;
  for (int64_t i = 0; i < M->hi - M->lo; i++) pattern_digest_row32(&d, 1, A->Ap[i + 1] - A->Ap[i], A->Aj + A->Ap[i]);
  if (c->rank + 1 < c->size && MPI_Send(&d.h, 1, MPI_UINT64_T, c->rank + 1, 7, c->comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "MPI_Send of the pattern digest failed");
  if (MPI_Bcast(&d.h, 1, MPI_UINT64_T, c->size - 1, c->comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "MPI_Bcast of the pattern digest failed");
  *out = d.h;
  return SHIRO_OK;
}

/* Peak resident memory of this process, bytes. */
static int64_t peak_rss(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_maxrss * 1024 : 0;
}

/* The programs' way out (plan_build_range's sink). */
typedef struct dist_sink {
  dist_writer *w;
  const dist_positions *X;
  const dist_matrix *M;
  const dist_renumber *rn; /* parts: the renumbering; NULL: none */
  int pattern;
  int two_tier; /* volumes counted from the programs' sends (vol), as one process counts its messages */
  sc_volumes vol;
  dist_flows *flows; /* the programs' sends, for pricing on a machine; NULL: not priced */
  plan_progress_fn progress;
  int32_t done, first, ranks;
} dist_sink;

static shiro_status out_rank(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err) {
  (void)meta;
  dist_sink *s = arg;
  int64_t hint = -1;
  for (int64_t e = 0; e < pr->nvalsrc; e++) /* positions in this process's A -> the whole matrix's */
    if (pr->val_src[e] >= 0) pr->val_src[e] = dist_position(s->X, pr->val_src[e], pr->rank, &hint);
  shiro_status st = s->rn ? dist_rank_file_rows(pr, s->M, s->rn, err) : SHIRO_OK;
  if (s->flows) dist_flows_add_rank(s->flows, pr);
  for (int64_t x = 0; s->two_tier && x < pr->nx; x++) { /* plan_msg_volumes of each message sent */
    const int64_t *xr = pr->xchg + x * PROG_X_WIDTH;
    if (xr[XF_DIR] != 0) continue;
    const plan_msg pm = {.src = pr->rank, .dst = (int32_t)xr[XF_PEER], .inter = xr[XF_TIER] != 0, .rows = xr[XF_COUNT]};
    plan_msg_volumes(&pm, &s->vol);
  }
  if (s->pattern) { /* a_val empty: the plan says the matrix had no values */
    free(pr->a_val);
    pr->a_val = NULL;
    pr->naval = 0;
  }
  st = dist_writer_round(s->w, pr, st, err);
  prog_rank_free(pr);
  s->done++;
  if (s->progress) s->progress("programs", s->done, s->ranks);
  return st;
}

/* A partition of the rows over the ranks, each process's share of the ranks, and the renumbering
 * of a partition that renumbers (metis, parts). */
typedef struct dist_part {
  const char *name; /* "block", "nnz", "metis" or "parts" */
  sc_partition Prow, Pcol;
  int64_t *oldof; /* renumbered: oldof[new] = the file's row (the programs' rows told in it); else NULL */
  int32_t *proc, first, end; /* proc[r]: rank r's process; this process's ranks first .. end-1 */
} dist_part;

static void dist_part_free(dist_part *p) {
  part_free(&p->Prow);
  part_free(&p->Pcol);
  free(p->oldof);
  free(p->proc);
  memset(p, 0, sizeof *p);
}

/* Partition `name` of M, the same on every process: block by rows, nnz by every row's length, the
 * parts file's (every process reads it) or metis's (PT-Scotch over the stripes), rows renumbered
 * part by part as one process does; each process's ranks (ranks_of; whole nodes with two_tier);
 * then M's rows moved to their processes (dist_matrix_own: M in its owned form). Collective. */
static shiro_status part_own(const dist_comm *c, const dist_request *rq, const char *name, int two_tier, dist_matrix *M,
                             dist_part *dp, shiro_error *err) {
  memset(dp, 0, sizeof *dp);
  dp->name = name;
  sc_csr lengths = {.m = M->m, .k = M->k, .nnz = M->nnz, .Ap = M->gAp};
  const int nnz = !strcmp(name, "nnz"), hypergraph = !strcmp(name, "hypergraph"), metis = hypergraph || !strcmp(name, "metis");
  const int parts = metis || !strcmp(name, "parts"); /* renumbered */
  int64_t *newof = NULL;
  dist_renumber rn = {.columns = M->m == M->k};
  shiro_status st;
  if (parts) {
    st = metis ? cut_labels(c, M, rq->ranks, hypergraph, &newof, &dp->Prow, err)
               : part_file(rq->parts_file, "rows", M->m, rq->ranks, &newof, &dp->Prow, err);
    if (st == SHIRO_OK && !(dp->oldof = sc_inverse_permutation(newof, M->m))) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
    rn.newof = newof;
    rn.oldof = dp->oldof;
  } else {
    st = nnz ? part_nnz(&lengths, rq->ranks, &dp->Prow, err) : part_block(M->m, rq->ranks, &dp->Prow, err);
  }
  if (st == SHIRO_OK)
    st = (nnz || parts) && M->m == M->k ? part_copy(&dp->Prow, &dp->Pcol, err) : part_block(M->k, rq->ranks, &dp->Pcol, err);
  if (st == SHIRO_OK && !(dp->proc = malloc((size_t)rq->ranks * sizeof *dp->proc))) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  for (int d = 0; st == SHIRO_OK && d < c->size; d++) {
    int32_t f, e;
    ranks_of(d, c->size, rq->ranks, rq->gpn, two_tier, &f, &e);
    for (int32_t r = f; r < e; r++) dp->proc[r] = d;
    if (d == c->rank) dp->first = f, dp->end = e;
  }
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK) st = dist_matrix_own(c, M, dp->Prow.first[dp->first], dp->Prow.first[dp->end], parts ? &rn : NULL, err);
  free(newof); /* oldof stays: the programs' rows in the file's numbering */
  return st;
}

/* res's partition candidate n: partition p, joint's estimate t, status and reason. */
static void note_partition(dist_result *res, const char *p, double t, const char *status, const char *reason) {
  if (res->npcand < 3) res->pcand[res->npcand++] = (struct dist_pcand){p, t, status, reason};
}

/* Why the fast search with several processes does not run PT-Scotch. */
static const char metis_fast_why[] =
    "not run by the fast search with several processes (on R-MAT s20, R = 128, P = 2, PT-Scotch took "
    "18x the plan's time and 7.6x its memory, and lost): --effort exhaustive weighs it, --partition metis plans on it";

/* Joint's plan on partition dp of M (owned form) priced on rq->m: *t. Collective. */
static shiro_status joint_estimate(const dist_comm *c, const dist_request *rq, const dist_matrix *M,
                                   const dist_part *dp, double *t, shiro_error *err) {
  sc_blocks B = {0};
  sc_volumes v;
  cost_pred pred;
  shiro_status st = dist_agree(c, blocks_build(M->A, &dp->Prow, &dp->Pcol, &B, err), err);
  if (st == SHIRO_OK)
    st = dist_price_strategy(c, M->A, &dp->Prow, &dp->Pcol, &B, STRAT_JOINT, rq->gpn, rq->m, rq->row_bytes, &v, &pred, err);
  blocks_free(&B);
  *t = pred.time_s;
  return st;
}

/* 1 if some rank of p owns no row. */
static int empty_rank(const sc_partition *p) {
  for (int32_t r = 0; r < p->parts; r++)
    if (p->first[r + 1] == p->first[r]) return 1;
  return 0;
}

/* Why the fast search with several processes does not run Zoltan: one process's does not either. */
static const char hypergraph_fast_why[] =
    "not run by the fast search (one process's lists it skipped too: 4.5-14x METIS's time, slower plans on most "
    "graphs measured): --effort exhaustive weighs it, --partition hypergraph plans on it";

/* auto with no --partition (rq->partition_auto) and --effort exhaustive: joint's plan priced on
 * block's partition, then on metis's (square, with PT-Scotch) and on the hypergraph's (with
 * Zoltan), each kept where it is PLAN_METIS_GAIN below the one kept before it (one process's
 * rule; the time partition and METIS's other objectives are one process's). Returns with M in the
 * kept partition's owned form and dp that partition. M is read again for each partition after the
 * first (an owned matrix cannot be moved to another partition), one at a time: the peak is one
 * partition's. Collective; what was weighed in res, in that order. */
static shiro_status weigh_partitions(const dist_comm *c, const dist_request *rq, int two_tier, dist_matrix *M,
                                     dist_part *dp, dist_result *res, shiro_error *err) {
  double best = 0;
  shiro_status st = part_own(c, rq, "block", two_tier, M, dp, err);
  if (st == SHIRO_OK) st = joint_estimate(c, rq, M, dp, &best, err);
  if (st != SHIRO_OK) return st;
  const char *few = rq->ranks < 2 || M->m < rq->ranks ? "fewer rows than ranks, or one rank" : NULL;
  const char *const names[2] = {"metis", "hypergraph"};
  const char *const why[2] = {M->m != M->k               ? "the matrix is not square"
                                  : !SHIRO_HAVE_PTSCOTCH ? "built without PT-Scotch (libptscotch-dev, -Dptscotch)"
                                                         : few,
                              !SHIRO_HAVE_ZOLTAN ? "built without Zoltan (libtrilinos-zoltan-dev, -Dzoltan)" : few};
  const char *kept = "block";
  note_partition(res, "block", best, "kept", "joint's flat plan priced");
  for (int i = 0; i < 2 && st == SHIRO_OK; i++) {
    if (why[i]) {
      note_partition(res, names[i], INFINITY, "skipped", why[i]);
      continue;
    }
    double e = 0;
    dist_matrix_free(M);
    dist_part_free(dp);
    st = dist_matrix_read(c, rq->matrix, rq->format, &rq->read, M, err);
    if (st == SHIRO_OK) st = part_own(c, rq, names[i], two_tier, M, dp, err);
    const int empty = st == SHIRO_OK && empty_rank(&dp->Prow);
    if (st == SHIRO_OK && !empty) st = joint_estimate(c, rq, M, dp, &e, err);
    if (st != SHIRO_OK) return st;
    const int win = !empty && e < PLAN_METIS_GAIN * best;
    if (win)
      for (int k = 0; k < res->npcand; k++)
        if (!strcmp(res->pcand[k].status, "kept")) res->pcand[k].status = "weighed";
    note_partition(res, names[i], empty ? INFINITY : e, empty ? "skipped" : win ? "kept"
                                                                                : "weighed",
                   empty     ? "it leaves a rank without rows"
                       : win ? "joint's plan predicted at least 3% faster than on the partition kept before"
                             : "joint's plan not predicted 3% faster than on the partition kept before");
    if (win) kept = names[i], best = e;
  }
  if (st != SHIRO_OK || !strcmp(dp->name, kept)) return st;
  dist_matrix_free(M); /* an earlier one kept: read and owned again */
  dist_part_free(dp);
  st = dist_matrix_read(c, rq->matrix, rq->format, &rq->read, M, err);
  return st == SHIRO_OK ? part_own(c, rq, kept, two_tier, M, dp, err) : st;
}

void dist_result_free(dist_result *res) {
  if (res->floor_have) plan_floor_free(&res->floor);
  res->floor_have = 0;
}

shiro_status dist_plan(MPI_Comm comm, const dist_request *rq, dist_result *res, shiro_error *err) {
  dist_comm c = {.comm = comm};
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  memset(res, 0, sizeof *res);
  res->processes = c.size;
  const plan_progress_fn progress = c.rank == 0 ? rq->progress : NULL;
  const double t0 = now();
  shiro_status st = dist_plan_supported(rq, err);
  if (st == SHIRO_OK && !rq->out && !rq->compare) st = shiro_fail(err, SHIRO_ERR_ARG, "no plan file to write (only compare writes none)");
  st = dist_agree(&c, st, err);
  if (st != SHIRO_OK) return st;
  int thread_level = MPI_THREAD_SINGLE;
  sc_strategy s = rq->strategy; /* auto: its choice, below */
  int two_tier = rq->auto_strategy || rq->compare || strategy_is_two_tier(s); /* whole nodes; volumes from the programs */
  MPI_Query_thread(&thread_level);
  dist_matrix M = {0};
  sc_blocks B = {0};
  dist_positions X = {0};
  if (progress) progress("read", 0, 1);
  st = dist_matrix_read(&c, rq->matrix, rq->format, &rq->read, &M, err);
  if (st != SHIRO_OK) return st;
  if (progress) progress("read", 1, 1);
  res->m = M.m;
  res->k = M.k;
  res->nnz = M.nnz;
  int ones = sc_csr_all_ones(M.A), all = 1; /* a pattern file's duplicates summed: values kept */
  if (MPI_Allreduce(&ones, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
  res->pattern = M.hdr.field == MM_PATTERN && all;
  prog_meta meta = {.ranks = rq->ranks, .gpus_per_node = rq->gpn, .m = M.m, .k = M.k, .nnz = M.nnz};
  st = dist_agree(&c, matrix_digest(&c, &M, &meta.matrix_digest, err), err); /* the file's rows, in order */
  if (st != SHIRO_OK) {
    dist_matrix_free(&M);
    return st;
  }
  const double t1 = now();
  dist_part dp = {0};
  const int weigh = rq->partition_auto && rq->auto_strategy && rq->exhaustive;
  st = weigh ? weigh_partitions(&c, rq, two_tier, &M, &dp, res, err) : part_own(&c, rq, rq->partition, two_tier, &M, &dp, err);
  res->partition = dp.name;
  if (st == SHIRO_OK)
    plan_warn_empty_parts(&dp.Prow, &dp.Pcol, M.m, M.k, dp.name, rq->ranks, res->warnings, sizeof res->warnings);
  const double t2 = now();
  if (progress && st == SHIRO_OK) progress("cover", 0, 1);
  if (st == SHIRO_OK) st = blocks_build(M.A, &dp.Prow, &dp.Pcol, &B, err);
  if (st == SHIRO_OK && (rq->auto_strategy || rq->compare)) { /* every one weighed; the kept one's selection stays */
    st = dist_agree(&c, st, err);
    if (st == SHIRO_OK)
      st = dist_choose_strategy(&c, M.A, &dp.Prow, &dp.Pcol, &B, rq->gpn, rq->m, rq->row_bytes,
                                rq->auto_strategy ? STRAT_COUNT : s, rq->compare, rq->machine_given, &res->choice, err);
    s = res->choice.chosen;
    two_tier = strategy_is_two_tier(s);
  } else if (st == SHIRO_OK) {
    st = strategy_select(&B, s, rq->gpn, NULL, NULL, err);
  }
  res->strategy = s;
  if (st == SHIRO_OK && rq->partition_auto && rq->auto_strategy && !weigh) { /* the fast search: block's */
    note_partition(res, "block", res->choice.pred[STRAT_JOINT].time_s, "kept", "joint's flat plan priced");
    note_partition(res, "metis", INFINITY, "skipped", metis_fast_why);
    note_partition(res, "hypergraph", INFINITY, "skipped", hypergraph_fast_why);
  }
  sc_volumes v = {0};
  if (st == SHIRO_OK && !two_tier) strategy_volumes(&B, &dp.Pcol, s, rq->gpn, &v); /* its own blocks' */
  st = dist_agree(&c, st, err);
  const int write = rq->out != NULL; /* else --compare only: nothing traded, built or written */
  if (st == SHIRO_OK && write) st = dist_blocks_trade(&c, dp.proc, dp.first, &M, &B, &X, err);
  if (progress && st == SHIRO_OK) progress("cover", 1, 1);
  const double t3 = now();
  if (st == SHIRO_OK && !two_tier) { /* two-tier: counted from the programs, below */
    if (s == STRAT_BLOCK) res->vol = v; /* from the partition alone: the whole plan's everywhere */
    else if (MPI_Allreduce(&v, &res->vol, 3, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS)
      st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the volumes failed");
  }
  strncpy(meta.strategy, strategy_name(s), sizeof meta.strategy - 1);
  strncpy(meta.partition, dp.name, sizeof meta.partition - 1);
  st = dist_agree(&c, st, err);
  int32_t mine = dp.end - dp.first, rounds = 0;
  if (st == SHIRO_OK && MPI_Allreduce(&mine, &rounds, 1, MPI_INT32_T, MPI_MAX, comm) != MPI_SUCCESS)
    st = dist_agree(&c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the rounds failed"), err);
  dist_writer *w = NULL;
  dist_flows flows = {0};
  if (st == SHIRO_OK && !write) { /* compare counted and priced the plan's strategy with the others */
    res->vol = res->choice.vol[s];
    res->pred = res->choice.pred[s];
    res->predicted = res->choice.priced[s];
  }
  const dist_renumber rn = {.oldof = dp.oldof, .columns = M.m == M.k}; /* the programs' rows in the file's numbering */
  if (st == SHIRO_OK && write) st = dist_writer_open(&c, rq->out, &meta, rounds, &w, err);
  if (st == SHIRO_OK && write) {
    dist_sink sk = {.w = w, .X = &X, .M = &M, .rn = dp.oldof ? &rn : NULL, .pattern = res->pattern, .two_tier = two_tier, .flows = rq->m ? &flows : NULL, .progress = progress, .first = dp.first, .ranks = dp.end - dp.first};
    /* the sink's rounds call MPI from the thread whose turn it is: one thread unless MPI allows */
    const int threads = omp_get_max_threads();
    if (thread_level < MPI_THREAD_SERIALIZED) omp_set_num_threads(1);
    shiro_status bst = plan_build_range(M.A, &dp.Prow, &dp.Pcol, &B, s, rq->gpn, dp.first, dp.end, out_rank, &sk, err);
    omp_set_num_threads(threads);
    st = dist_writer_close(w, bst, err);
    if (st == SHIRO_OK && two_tier && MPI_Allreduce(&sk.vol, &res->vol, 3, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS)
      st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the volumes failed");
    st = dist_agree(&c, st, err);
    if (st == SHIRO_OK && rq->m) { /* the plan is in place: a failure to price it is a warning */
      shiro_error perr = {{0}};
      res->predicted = dist_price(&c, &flows, rq->m, rq->ranks, rq->row_bytes, &res->pred, &perr) == SHIRO_OK;
      const size_t used = strlen(res->warnings);
      if (!res->predicted)
        snprintf(res->warnings + used, sizeof res->warnings - used, "no prediction on %s: %s\n", rq->m->name,
                 perr.message);
    }
  }
  free(flows.f);
  free(X.run); /* the plan is written: what the floors need is the rows of A */
  free(X.first);
  X.run = NULL;
  X.first = NULL;
  blocks_free(&B);
  if (st == SHIRO_OK && rq->floor) { /* the plan is in place: a failure to compute them is a warning */
    const double f0 = now();
    shiro_error ferr = {{0}};
    res->floor_have = dist_floor_rows(&c, M.A, &dp.Prow, &dp.Pcol, rq->gpn, dp.proc, dp.first, dp.end, omp_get_max_threads(),
                                      &res->floor, &ferr) == SHIRO_OK;
    res->floor_s = now() - f0;
    const size_t used = strlen(res->warnings);
    if (!res->floor_have) snprintf(res->warnings + used, sizeof res->warnings - used, "no floors: %s\n", ferr.message);
  }
  const double t4 = now();
  res->read_s = t1 - t0;
  res->partition_s = t2 - t1;
  res->cover_s = t3 - t2;
  res->plan_s = t4 - t3;
  res->total_s = t4 - t0;
  int64_t peak = peak_rss();
  MPI_Allreduce(&peak, &res->peak_rss_bytes, 1, MPI_INT64_T, MPI_MAX, comm);
  MPI_Allreduce(&peak, &res->peak_rss_bytes_sum, 1, MPI_INT64_T, MPI_SUM, comm);
  free(X.run);
  free(X.first);
  blocks_free(&B);
  dist_part_free(&dp);
  dist_matrix_free(&M);
  return st;
}
