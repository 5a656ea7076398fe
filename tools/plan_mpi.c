/* plan_mpi.c — shiro-plan's distributed path: launched processes, one report. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "dist_hypergraph.h"
#include "error.h"
#include "floor_report.h"
#include "plan_mpi.h"

static void finalize(void) {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

/* MPI_Init_thread (MPI_THREAD_SERIALIZED, what shiro-plan asks in both starts) with MPI_Finalize at
 * exit; 0 if it failed. */
static int init_mpi(int *argc, char ***argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return 0;
  atexit(finalize);
  return 1;
}

int plan_mpi_start(int *argc, char ***argv, int *rank, int *size) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                                     "SLURM_STEP_NUM_TASKS"};
  *rank = 0;
  *size = 1;
  int launched = 0;
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) launched |= getenv(vars[i]) != NULL;
  if (!launched) return 0;
  if (!init_mpi(argc, argv)) {
    fprintf(stderr, "shiro-plan: MPI_Init failed (started by an MPI launcher)\n");
    exit(1);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 1;
}

shiro_status plan_mpi_hypergraph(const sc_csr *A, int32_t parts, int32_t *labels, shiro_error *err) {
  int up = 0;
  MPI_Initialized(&up);
  if (!up && !init_mpi(NULL, NULL)) /* one process, no launcher: MPI as a singleton, for Zoltan alone */
    return shiro_fail(err, SHIRO_ERR_MPI, "--partition hypergraph: MPI_Init failed (Zoltan runs over MPI)");
  return dist_part_hypergraph_local(A, parts, labels, err);
}

/* Why auto with several processes weighs what it weighs (the summary's and --json's words). */
static const char hybrid_why[] = "its routing search is one process's: plan with one process to weigh it";
static const char time_why[] = "one process's: plan with one process to weigh the time partition";

/* One summary row: a strategy's volumes, its prediction where there is one, the plan's marked. */
static void summary_row(sc_strategy s, const sc_volumes *v, const cost_pred *pr, int plan) {
  char ms[32] = "";
  if (pr) snprintf(ms, sizeof ms, "  %12.4f", pr->time_s * 1e3);
  fprintf(stderr, "  %-8s %14lld %16lld %16lld%s%s\n", strategy_name(s), (long long)v->total_rows,
          (long long)v->inter_node_rows, (long long)v->intra_node_rows, ms, plan ? "  <- plan" : "");
}

/* --json's candidates under auto: every strategy priced (weighed or kept), hybrid skipped, and
 * with no --partition the partitions one process would weigh, skipped. */
static void candidates_json(const dist_request *rq, const dist_result *r, const plan_mpi_report *how) {
  printf("\"effort\": \"%s\", \"candidates\": [", rq->exhaustive ? "exhaustive" : "fast");
  const char *sep = "";
  for (int s = 0; s < STRAT_COUNT; s++) {
    if (!r->choice.have[s]) continue;
    printf("%s{\"candidate\": \"strategy\", \"partition\": \"%s\", \"priced\": \"plan\", \"strategy\": \"%s\", "
           "\"predicted_s\": %.9g, \"status\": \"%s\", \"reason\": \"%s\"}",
           sep, r->partition, strategy_name((sc_strategy)s), r->choice.pred[s].time_s,
           s == (int)r->strategy ? "kept" : "weighed", s == (int)r->strategy ? "predicted fastest" : "priced by its messages");
    sep = ", ";
  }
  printf("%s{\"candidate\": \"strategy\", \"partition\": \"%s\", \"priced\": \"plan\", \"strategy\": \"hybrid\", "
         "\"predicted_s\": null, \"status\": \"skipped\", \"reason\": \"%s\"}",
         sep, r->partition, hybrid_why);
  for (int i = 0; i < r->npcand; i++) {
    const struct dist_pcand *k = &r->pcand[i];
    printf(", {\"candidate\": \"partition\", \"partition\": \"%s\", \"priced\": \"estimate\", \"strategy\": \"joint\", "
           "\"predicted_s\": ",
           k->partition);
    if (isfinite(k->time_s)) printf("%.9g", k->time_s);
    else printf("null");
    printf(", \"status\": \"%s\", \"reason\": ", k->status);
    cli_json_string(stdout, k->reason);
    printf("}");
  }
  if (how->partition_auto)
    printf(", {\"candidate\": \"partition\", \"partition\": \"time\", \"priced\": \"estimate\", \"strategy\": \"joint\", "
           "\"predicted_s\": null, \"status\": \"skipped\", \"reason\": \"%s\"}",
           time_why);
  printf("], ");
}

static void report(const dist_request *rq, const dist_result *r, const plan_mpi_report *how, int threads) {
  const sc_volumes *v = &r->vol;
  const cost_pred *pr = r->predicted ? &r->pred : NULL;
  if (!how->quiet) {
    fprintf(stderr, "shiro-plan: %s: %lld x %lld, %lld nonzeros; %d ranks, %d per node; planned by %d processes\n",
            rq->matrix, (long long)r->m, (long long)r->k, (long long)r->nnz, rq->ranks, rq->gpn, r->processes);
    fprintf(stderr, "  %-8s %14s %16s %16s%s\n", "strategy", "rows moved", "inter-node rows", "intra-node rows",
            pr ? "  predicted ms" : "");
    const int all = rq->auto_strategy || rq->compare;
    for (int s = 0; s < STRAT_COUNT; s++) /* auto and compare: every strategy weighed; else the plan's */
      if (all ? r->choice.have[s] : s == (int)r->strategy)
        summary_row((sc_strategy)s, all ? &r->choice.vol[s] : v,
                    all ? (r->choice.priced[s] ? &r->choice.pred[s] : NULL) : pr, s == (int)r->strategy);
    if (pr)
      fprintf(stderr, "  predicted on %s (%s), N = %lld %s, communication only%s%s\n", rq->m->name, rq->m->path,
              (long long)how->n, how->dtype, rq->auto_strategy ? "; auto chose " : "",
              rq->auto_strategy ? strategy_name(r->strategy) : "");
    if (r->floor_have) floor_report_text(stderr, &r->floor, pr ? rq->m : NULL, rq->row_bytes, pr ? pr->time_s : -1, r->floor_s);
    if (all) fprintf(stderr, "  hybrid not weighed: %s\n", hybrid_why);
    for (int i = 0; i < r->npcand; i++) {
      const struct dist_pcand *k = &r->pcand[i];
      if (isfinite(k->time_s))
        fprintf(stderr, "  partition %s: joint's plan predicted %.4f ms, %s (%s)\n", k->partition, k->time_s * 1e3,
                k->status, k->reason);
      else fprintf(stderr, "  partition %s skipped: %s\n", k->partition, k->reason);
    }
    if (how->partition_auto) fprintf(stderr, "  time partition not weighed: %s\n", time_why);
    fprintf(stderr, "  time: read %.3f s, partition %.3f s, cover %.3f s, plan and write %.3f s, total %.3f s; "
                    "peak RSS %.1f MiB (largest process), %.1f MiB (all %d)\n",
            r->read_s, r->partition_s, r->cover_s, r->plan_s, r->total_s, (double)r->peak_rss_bytes / (1 << 20),
            (double)r->peak_rss_bytes_sum / (1 << 20), r->processes);
    if (rq->out) fprintf(stderr, "  wrote %s\n", rq->out);
  }
  if (!how->json) return;
  printf("{\"matrix\": ");
  cli_json_string(stdout, rq->matrix);
  printf(", \"m\": %lld, \"k\": %lld, \"nnz\": %lld, \"ranks\": %d, \"gpus_per_node\": %d, \"strategy\": \"%s\", "
         "\"partition\": \"%s\", \"processes\": %d, \"threads\": %d, \"plan\": ",
         (long long)r->m, (long long)r->k, (long long)r->nnz, rq->ranks, rq->gpn, strategy_name(r->strategy),
         r->partition, r->processes, threads);
  if (rq->out) cli_json_string(stdout, rq->out);
  else printf("null");
  printf(", \"partition_choice\": \"%s\", \"strategy_choice\": \"%s\", ",
         how->partition_auto ? "auto" : "given", rq->auto_strategy ? "auto" : "given");
  if (rq->auto_strategy) candidates_json(rq, r, how);
  else printf(" ");
  printf("\"timings_s\": {\"read\": %.6f, \"partition\": %.6f, \"cover\": %.6f, \"plan\": %.6f, \"total\": %.6f}, "
         "\"peak_rss_bytes\": %lld, \"peak_rss_bytes_sum\": %lld, ",
         r->read_s, r->partition_s, r->cover_s, r->plan_s, r->total_s, (long long)r->peak_rss_bytes,
         (long long)r->peak_rss_bytes_sum);
  printf("\"volumes\": {\"%s\": {\"total_rows\": %lld, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld",
         strategy_name(r->strategy), (long long)v->total_rows, (long long)v->inter_node_rows,
         (long long)v->intra_node_rows);
  if (pr) cost_pred_json(stdout, pr); /* as one process prints them */
  printf("}");
  for (int s = 0; rq->compare && s < STRAT_COUNT; s++) { /* --compare: every strategy weighed, as one process */
    const sc_volumes *w = &r->choice.vol[s];
    if (!r->choice.have[s] || s == (int)r->strategy) continue;
    printf(", \"%s\": {\"total_rows\": %lld, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld",
           strategy_name((sc_strategy)s), (long long)w->total_rows, (long long)w->inter_node_rows,
           (long long)w->intra_node_rows);
    if (r->choice.priced[s]) cost_pred_json(stdout, &r->choice.pred[s]);
    printf("}");
  }
  printf("}, \"machine\": ");
  if (rq->m) {
    cli_json_string(stdout, rq->m->name);
    printf(", \"predicted_n\": %lld, \"predicted_dtype\": \"%s\"", (long long)how->n, how->dtype);
  } else {
    printf("null");
  }
  if (r->floor_have) {
    printf(", ");
    floor_report_json(stdout, &r->floor, pr ? rq->m : NULL, rq->row_bytes, r->floor_s);
  }
  printf("}\n");
}

int plan_mpi_threads(int threads) {
  MPI_Comm node = MPI_COMM_NULL; /* collective: the processes on this one's node */
  int here = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
  }
  const char *env = getenv("OMP_NUM_THREADS");
  if (threads > 0 || (env && *env)) return threads > 0 ? threads : omp_get_max_threads();
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int cpus = online > 0 ? (int)online : 1;
  const int mine = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : cpus;
  const int share = cpus / here < mine ? cpus / here : mine;
  return share > 0 ? share : 1;
}

int plan_mpi_run(const dist_request *rq, int rank, const plan_mpi_report *how) {
  dist_result r;
  shiro_error err = {{0}};
  shiro_status st = dist_plan(MPI_COMM_WORLD, rq, &r, &err);
  if (rank != 0) {
    dist_result_free(&r);
    return st == SHIRO_OK ? 0 : 1;
  }
  if (st != SHIRO_OK) {
    cli_progress_enable(0);
    fprintf(stderr, "shiro-plan: %s\n", err.message);
    dist_result_free(&r);
    return 1;
  }
  cli_print_warnings("shiro-plan", r.warnings);
  report(rq, &r, how, how->threads ? how->threads : omp_get_max_threads());
  dist_result_free(&r);
  return cli_finish_stdout("shiro-plan", 0);
}
