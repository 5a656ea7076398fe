/* dist_plan.h — the planner over MPI processes (`mpirun -np P shiro-plan`): each process reads a
 * stripe of the matrix, holds the rows of its own ranks (whole nodes of them), solves the cover
 * problems of the blocks those ranks receive, builds their programs, and writes their bytes into
 * the one plan file. The plan is the one a single process plans (same datasets and attributes). */
#ifndef SHIRO_DIST_PLAN_H
#define SHIRO_DIST_PLAN_H

#include <mpi.h>

#include "cost.h"
#include "dist_choose.h"
#include "plan_floor.h"
#include "mm_read.h"
#include "plan_choose.h"
#include "strategy.h"

/* What to plan (every process passes the same). */
typedef struct dist_request {
  const char *matrix; /* the input file: on a file system every process sees */
  const char *format; /* "mtx", "edgelist" or "csr-h5" */
  mm_read_options read; /* the text reader's options (edge lists: base, size) */
  int32_t ranks, gpn; /* R, G */
  sc_strategy strategy; /* block, col, row, joint, hier, group or cola (dist_plan_supported) */
  int auto_strategy; /* 1: strategy ignored; auto's choice among dist_choose's candidates, priced on m */
  int partition_auto; /* 1 (with auto_strategy; partition "block"): the partition is auto's: block's;
                         with exhaustive also metis's (square, PT-Scotch), weighed by joint's plan on
                         m and kept if 3% faster */
  int exhaustive; /* --effort exhaustive */
  int compare; /* 1: every strategy but hybrid counted (and, on m, priced) on the partition (res->choice) */
  int machine_given; /* m was asked for (--machine), not auto's: compare prices every strategy on it */
  const char *partition; /* "block", "nnz", "metis" or "parts" */
  const char *parts_file; /* parts: the file of one rank id per row (--partition parts:FILE) */
  const char *out; /* the plan file: on a file system every process sees; NULL (compare only): none */
  plan_progress_fn progress; /* process 0's progress ("read", "cover", "programs"); NULL: none */
  const sc_machine *m; /* the machine to predict the plan's time on (cost.h); NULL: none */
  size_t row_bytes; /* with m: a row's bytes (N x the value's size) */
  int floor; /* 1: the partition's floors (plan_floor.h; with m, the time floor too) */
} dist_request;

/* What was planned (the same on every process). */
typedef struct dist_result {
  int64_t m, k, nnz;
  int pattern; /* the input had no values */
  sc_strategy strategy; /* the plan's: rq->strategy, or auto's choice */
  const char *partition; /* the plan's: rq->partition, or the one partition_auto kept */
  struct dist_pcand {
    const char *partition; /* "block" or "metis" */
    double time_s; /* joint's predicted time on it; INFINITY where skipped */
    const char *status, *reason; /* "weighed", "kept" or "skipped", and why */
  } pcand[3]; /* partition_auto: what was weighed, in order */
  int npcand;
  dist_choice choice; /* auto or compare: what was weighed (dist_choose.h); else zero */
  sc_volumes vol; /* rows moved per call, the whole plan's */
  int predicted; /* pred holds the plan's prediction on rq->m */
  cost_pred pred; /* one process's cost_plan of the same plan, bit for bit */
  int32_t processes;
  double read_s, partition_s, cover_s, plan_s, total_s; /* process 0's wall times; plan_s includes writing */
  int64_t peak_rss_bytes, peak_rss_bytes_sum; /* the largest process's peak resident memory, and their sum */
  int floor_have; /* floor holds the floors (rq->floor; a failure to compute them is a warning) */
  plan_floor floor; /* one process's plan_floor_rows for the same partition (dist_floor.h) */
  double floor_s; /* process 0's wall time computing them */
  char warnings[1024]; /* plan_write.h's warnings of the plan (ranks without rows), one a line; "" if none */
} dist_result;

/* The strategies and partitions dist_plan plans; SHIRO_ERR_UNSUPPORTED naming what is not (yet)
 * planned by several processes, with what to do instead. Local. */
shiro_status dist_plan_supported(const dist_request *rq, shiro_error *err);

/* Frees what *res holds (its floors). */
void dist_result_free(dist_result *res);

/* Plans rq over the processes of comm and writes rq->out (a temporary file renamed into place: a
 * failure leaves nothing there). Collective; every process returns the same status, err the
 * failing process's message ("process P: ..."). Prints nothing. */
shiro_status dist_plan(MPI_Comm comm, const dist_request *rq, dist_result *res, shiro_error *err);

#endif
