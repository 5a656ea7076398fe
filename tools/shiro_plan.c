/* shiro-plan — compiles a Matrix Market matrix into a SHIRO communication plan.
 *
 *   shiro-plan matrix.mtx --ranks R [--gpus-per-node G] [--strategy S] [-o FILE]
 *              [--threads T] [--compare] [--json] [--quiet]
 */
#include <hdf5.h>
#include <omp.h>
#include <sys/sysinfo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "cli.h"
#include "digest.h"
#include "huge_pages.h"
#include "error.h"
#include "floor_report.h"
#include "csr_h5.h"
#include "cost_plan.h"
#include "mm_read.h"
#include "partition.h"
#include "time_balance.h"
#include "work_balance.h"
#include "work_choice.h"
#include "permute.h"
#include "plan_build.h"
#include "plan_choose.h"
#include "plan_file.h"
#include "plan_mpi.h"
#include "plan_write.h"
#include "shiro_config.h"
#include "strategy.h"

static const char *prog = "shiro-plan";

typedef struct options {
  const char *matrix; /* input path */
  const char *out; /* plan path (NULL: default name) */
  int32_t ranks, gpn; /* R, G */
  sc_strategy strategy; /* strategy written to the plan */
  const char *partition; /* "block", "nnz", "work", "time", "metis", "metis-vol", "metis-node", "hypergraph" or "parts" */
  int partition_given; /* --partition given (else under auto: block or time, as predicted) */
  const char *parts_file; /* parts: the file of one rank id per row (--partition parts:FILE) */
  int threads; /* 0: OpenMP default */
  int compare, json, quiet;
  const char *machine; /* --machine NAME|FILE (NULL: not given; auto then prices for tsubame4's links) */
  int auto_strategy; /* --strategy auto, the default when 1 < G < R: the strategy predicted fastest */
  int cpu_auto; /* --strategy auto-cpu: joint or col, whichever's busiest rank costs less (work_choice.h) */
  int64_t n; /* --n: the columns of B predictions are for (default 64) */
  int vbytes; /* --dtype: bytes per value, 8 double, 4 float (default), 2 bfloat16 / float16 */
  const char *dtype; /* its name */
  const char *format; /* "mtx", "edgelist" or "csr-h5" */
  int base; /* edgelist: 0- or 1-based ids */
  int64_t rows, cols; /* edgelist: size given, 0: max id + 1 */
  plan_effort effort; /* --effort: how auto searches (plan_choose.h) */
  int floor; /* the floors (plan_floor.h): 1 (--floor), 0 (--no-floor), -1: where a time is predicted */
} options;

typedef struct timings {
  double read, partition, cover, plan, write, total;
} timings;

static void usage(FILE *f) {
  fprintf(f,
          "usage: shiro-plan MATRIX.mtx[.gz] --ranks R [--gpus-per-node G] [--strategy S] [--partition P]\n"
          "                  [--format F [--base B] [--rows M] [--cols K]] [-o FILE] [--threads T] [--compare] [--json] [--quiet]\n"
          "  --ranks R          ranks (GPUs / MPI processes) the plan is for (required)\n"
          "  --gpus-per-node G  ranks per node; rank r is in node r / G (default 1)\n"
          "  --partition P      block (default; under auto: block, time or, for a square A, metis,\n"
          "                     whichever auto's plan is predicted faster on) |\n"
          "                     nnz (contiguous, balanced nonzeros) |\n"
          "                     work (contiguous, balanced cost of each rank's multiplies under the\n"
          "                     strategy's covers, from nnz's in a few rounds; man page) |\n"
          "                     time (contiguous, from block's: a few rounds of the strategy's plan\n"
          "                     priced on --machine, rows moved off the ranks whose links are\n"
          "                     busiest; auto balances with the strategy it chose on block) |\n"
          "                     metis | metis-vol | metis-node (square A: METIS k-way, its volume\n"
          "                     objective, or nodes then their ranks; ranks own row lists) |\n"
          "                     hypergraph (Zoltan's PHG on the column-net model: the column-based\n"
          "                     volume itself; any A, rectangular too; ranks own row lists) |\n"
          "                     parts:FILE (your partition: line i holds the rank, 0..R-1, of row\n"
          "                     i-1, as gpmetis writes it; square A: B rows follow, rectangular\n"
          "                     A: B rows block over the columns)\n"
          "  --strategy S       block | col | row | joint | hier | group | cola | hybrid | auto | auto-cpu (default:\n"
          "                     auto when 1 < G < R, else joint: group and hier then move joint's rows)\n"
          "                     hybrid: per node pair joint's direct covers or group's relayed one,\n"
          "                     and the relays, as the cost model of --machine (default tsubame4) prefers\n"
          "                     auto: of col, joint, hier, group, cola and hybrid, the plan predicted\n"
          "                     fastest on --machine (the cost model, compiler/cost/README.md)\n"
          "                     auto-cpu: for CPU ranks, joint or col, each on its own work partition\n"
          "                     (the default partition here) for --n: the one whose busiest rank's\n"
          "                     multiplies and rows sent and received cost least (col only if\n"
          "                     3%% below joint)\n"
          "  --machine M        a built-in machine (tsubame4, dgx-h100) or a JSON machine file, as\n"
          "                     tools/sim/simulate.sh takes: every strategy evaluated gets its predicted\n"
          "                     time per call (default for auto: tsubame4's links, G GPUs per node)\n"
          "  --effort E         fast (default) | exhaustive: how auto weighs partitions (man page)\n"
          "  --floor, --no-floor  the rows and time no schedule can beat (default: with a machine)\n"
          "  --n N, --dtype T   the N (default 64) and float|double|bfloat16|float16 (default float)\n"
          "                     predicted for (bytes per value 4|8|2|2),\n"
          "                     and the N --partition work balances for\n"
          "  --format F         mtx (default: Matrix Market, plain or .gz) | edgelist (SNAP: 'u v' or\n"
          "                     'u v value' per line, '#'/'%%' comments) | csr-h5 (HDF5: /indptr,\n"
          "                     /indices, optional /data, optional root attribute shape)\n"
          "  --base B           edgelist: ids are 0-based (default) or 1-based\n"
          "  --rows M, --cols K edgelist: the size (default: rows = cols = max id + 1)\n"
          "  -o FILE            plan file (default: the matrix's base name + .shiro.h5)\n"
          "  --threads T        planner threads (default: OMP_NUM_THREADS or all cores)\n"
          "  --compare          evaluate every strategy; without -o, writes no plan\n"
          "  --json             one JSON object on stdout (summary still on stderr unless --quiet)\n"
          "  --quiet            no summary on stderr\n"
          "  --help, --version  this text / the version and the plan format written (exit 0)\n"
          "Warnings (stderr, the plan is still written): ranks that own no rows (R above the\n"
          "matrix's rows), G > R (one node: no inter-node traffic). An R whose per-rank and\n"
          "node-pair tables alone exceed this machine's memory is refused before the matrix is read.\n");
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->gpn = 1;
  o->strategy = STRAT_COUNT; /* not given: chosen after parsing */
  o->partition = "block";
  o->format = "mtx";
  o->effort = PLAN_EFFORT_FAST;
  o->floor = -1;
  int64_t v;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      exit(cli_finish_stdout(prog, 0));
    } else if (!strcmp(a, "--version")) {
      cli_version(prog, "writes");
      exit(cli_finish_stdout(prog, 0));
    } else if (!strcmp(a, "--compare")) o->compare = 1;
    else if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--no-floor")) o->floor = 0;
    else if (!strcmp(a, "--floor")) o->floor = 1;
    else if (!strcmp(a, "--ranks")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 1 << 20, &v)) return 0;
      o->ranks = (int32_t)v;
    } else if (!strcmp(a, "--gpus-per-node")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 1 << 20, &v)) return 0;
      o->gpn = (int32_t)v;
    } else if (!strcmp(a, "--threads")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 4096, &v)) return 0;
      o->threads = (int)v;
    } else if (!strcmp(a, "--machine")) {
      if (!(o->machine = cli_value(prog, argc, argv, &i))) return 0;
    } else if (!strcmp(a, "--n")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 1 << 20, &o->n)) return 0;
    } else if (!strcmp(a, "--dtype")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (strcmp(val, "float") && strcmp(val, "double") && strcmp(val, "bfloat16") && strcmp(val, "float16")) {
        fprintf(stderr, "%s: --dtype: unknown type '%s' (expected float, double, bfloat16 or float16)\n", prog, val);
        return 0;
      }
      o->dtype = !strcmp(val, "double") ? "double" : !strcmp(val, "float") ? "float"
          : !strcmp(val, "bfloat16")                                       ? "bfloat16"
                                                                           : "float16";
      o->vbytes = !strcmp(val, "double") ? 8 : !strcmp(val, "float") ? 4
                                                                     : 2;
    } else if (!strcmp(a, "--strategy")) {
      shiro_error e;
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      o->auto_strategy = !strcmp(val, "auto");
      o->cpu_auto = !strcmp(val, "auto-cpu");
      if (o->auto_strategy) o->strategy = STRAT_COUNT;
      else if (o->cpu_auto) o->strategy = STRAT_JOINT; /* until work_choose decides */
      else if (strategy_parse(val, &o->strategy, &e) != SHIRO_OK) {
        fprintf(stderr, "%s: --strategy: %s\n", prog, e.message);
        return 0;
      }
    } else if (!strcmp(a, "--effort")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (strcmp(val, "fast") && strcmp(val, "exhaustive")) {
        fprintf(stderr, "%s: --effort: unknown effort '%s' (expected fast or exhaustive)\n", prog, val);
        return 0;
      }
      o->effort = !strcmp(val, "fast") ? PLAN_EFFORT_FAST : PLAN_EFFORT_EXHAUSTIVE;
    } else if (!strcmp(a, "--format")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (strcmp(val, "mtx") && strcmp(val, "edgelist") && strcmp(val, "csr-h5")) {
        fprintf(stderr, "%s: --format: unknown format '%s' (expected mtx, edgelist or csr-h5)\n", prog, val);
        return 0;
      }
      o->format = val;
    } else if (!strcmp(a, "--base")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 0, 1, &v)) return 0;
      o->base = (int)v;
    } else if (!strcmp(a, "--rows") || !strcmp(a, "--cols")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, INT64_MAX / 16, &v)) return 0;
      *(a[2] == 'r' ? &o->rows : &o->cols) = v;
    } else if (!strcmp(a, "--partition")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (!strncmp(val, "parts:", 6)) {
        if (!val[6]) {
          fprintf(stderr, "%s: --partition parts:FILE: no file named\n", prog);
          return 0;
        }
        o->parts_file = val + 6;
        val = "parts";
      } else if (!plan_partition_known(val)) {
        fprintf(stderr, "%s: --partition: unknown partition '%s' (expected " PLAN_PARTITION_NAMES " or parts:FILE)\n", prog, val);
        return 0;
      }
      o->partition = val;
      o->partition_given = 1;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!(o->out = cli_value(prog, argc, argv, &i))) return 0;
    } else if (a[0] == '-' && a[1] != 0) {
      fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, a);
      return 0;
    } else if (!o->matrix) o->matrix = a;
    else {
      fprintf(stderr, "%s: unexpected argument '%s' (one matrix only)\n", prog, a);
      return 0;
    }
  }
  if (!o->matrix) {
    fprintf(stderr, "%s: no matrix given\n", prog);
    usage(stderr);
    return 0;
  }
  if (!o->ranks) {
    fprintf(stderr, "%s: --ranks is required\n", prog);
    return 0;
  }
  if (strcmp(o->format, "edgelist") && (o->base || o->rows || o->cols)) {
    fprintf(stderr, "%s: --base, --rows and --cols are for --format edgelist only\n", prog);
    return 0;
  }
  /* Default: auto when ranks span several nodes of more than one rank (whether
   * two tiers pay depends on the messages: the cost model decides); otherwise
   * (one node, or one rank per node) group moves exactly what joint moves, and
   * joint does it in one stage instead of two. */
  if (o->strategy == STRAT_COUNT && !o->auto_strategy) {
    if (o->gpn > 1 && o->gpn < o->ranks) o->auto_strategy = 1;
    else o->strategy = STRAT_JOINT;
  }
  if (!o->n) o->n = 64;
  if (!o->vbytes) {
    o->vbytes = 4;
    o->dtype = "float";
  }
  if (o->cpu_auto && !o->partition_given) o->partition = "work";
  if (o->cpu_auto && !strcmp(o->partition, "time")) {
    fprintf(stderr, "%s: --strategy auto-cpu: --partition time balances a network's links, auto-cpu the ranks' CPU "
                    "work; give work (its default), nnz, block, metis or parts:FILE\n",
            prog);
    return 0;
  }
  return 1;
}

/* Each warning of plan_write.h's (G > R, ranks without rows) on stderr: the plan stays valid. */
static void print_warnings(const char *lines) { cli_print_warnings(prog, lines); }

/* Refuses up front, before the matrix is read, a rank count whose per-rank
 * and node-pair tables alone (plan_pair_table_bytes: for the strategies
 * this run builds) exceed the machine's memory. Returns 1 if it fits,
 * else prints why and returns 0. */
static int pair_tables_fit(const options *o, int write_plan) {
  uint64_t need = 0;
  sc_strategy s = o->auto_strategy ? STRAT_HIER : o->strategy; /* auto: the two-tier candidates' tables */
  if (write_plan || strategy_is_two_tier(s)) need = plan_pair_table_bytes(o->ranks, o->gpn, s);
  if (o->compare && plan_pair_table_bytes(o->ranks, o->gpn, STRAT_HIER) > need) { /* hier, group: built to count */
    s = STRAT_HIER;
    need = plan_pair_table_bytes(o->ranks, o->gpn, s);
  }
  struct sysinfo si;
  if (sysinfo(&si) != 0) return 1; /* unknown: let the allocation decide */
  uint64_t have = (uint64_t)si.totalram * si.mem_unit;
  if (need <= have) return 1;
  shiro_error e = {{0}};
  char than[64];
  snprintf(than, sizeof than, "this machine's %.3g GB of memory", (double)have / 1e9);
  plan_pair_table_fail(o->ranks, o->gpn, s, than, &e);
  fprintf(stderr, "%s: %s\n", prog, e.message); /* names R = --ranks */
  return 0;
}

/* Reads the matrix o->matrix in o->format into *A (hdr: what it held). */
static shiro_status read_matrix(const options *o, sc_csr **A, mm_header *hdr, shiro_error *err) {
  if (!strcmp(o->format, "csr-h5")) return csr_h5_read(o->matrix, A, hdr, err);
  mm_read_options ro = {0};
  if (!strcmp(o->format, "edgelist"))
    ro = (mm_read_options){.format = MM_FORMAT_EDGELIST, .el_base = o->base, .el_rows = o->rows, .el_cols = o->cols};
  return mm_read_ex(o->matrix, &ro, A, hdr, err);
}

/* The matrix's base name without directory and .mtx/.mtx.gz/.gz, + ".shiro.h5". */
static char *default_output(const char *matrix) {
  const char *base = strrchr(matrix, '/');
  base = base ? base + 1 : matrix;
  size_t n = strlen(base);
  const char *sfx[] = {".mtx.gz", ".mtx", ".gz"};
  for (int i = 0; i < 3; i++) {
    size_t l = strlen(sfx[i]);
    if (n > l && !strcmp(base + n - l, sfx[i])) {
      n -= l;
      break;
    }
  }
  char *out = malloc(n + 10);
  if (out) {
    memcpy(out, base, n);
    strcpy(out + n, ".shiro.h5");
  }
  return out;
}

/* What the cost model predicted per strategy. */
typedef struct predictions {
  const sc_machine *m; /* NULL: nothing predicted */
  cost_pred pred[STRAT_COUNT];
  int have[STRAT_COUNT];
} predictions;

/* The machine predictions are for: --machine, or for auto without it tsubame4's links with
 * the plan's G GPUs (and NICs) per node. Returns 0 (message printed) if it cannot be used. */
static int load_machine(const options *o, sc_machine *m) {
  shiro_error e = {{0}};
  if (machine_load(o->machine ? o->machine : "tsubame4", m, &e) != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, e.message);
    return 0;
  }
  if (!o->machine) {
    m->gpus_per_node = m->nics_per_node = o->gpn;
  } else if (m->gpus_per_node != o->gpn && !o->quiet) {
    fprintf(stderr, "%s: note: machine %s has %d GPUs per node, the plan %d ranks per node: the prediction "
                    "takes the machine's nodes (as tools/sim/simulate.sh does), not the plan's tiers\n",
            prog, m->name,
            m->gpus_per_node, o->gpn);
  }
  return 1;
}

/* max / mean nonzeros over the ranks' rows. */
static double load_balance(const sc_csr *A, const sc_partition *Prow) {
  int64_t most = 0;
  for (int32_t p = 0; p < Prow->parts; p++) {
    int64_t n = A->Ap[Prow->first[p + 1]] - A->Ap[Prow->first[p]];
    if (n > most) most = n;
  }
  return A->nnz ? (double)most * Prow->parts / (double)A->nnz : 1.0;
}

/* What was predicted (--machine, or auto's machine): per strategy, if have[s]. */
static void print_volumes_json(const sc_volumes *v, const int *have, sc_strategy only, int compare,
                               const predictions *P) {
  printf("\"volumes\": {");
  int first = 1;
  for (int s = 0; s < STRAT_COUNT; s++) {
    if (!(compare ? have[s] : s == (int)only)) continue;
    printf("%s\"%s\": {\"total_rows\": %lld, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld", first ? "" : ", ",
           strategy_name((sc_strategy)s), (long long)v[s].total_rows, (long long)v[s].inter_node_rows,
           (long long)v[s].intra_node_rows);
    if (P->have[s]) cost_pred_json(stdout, &P->pred[s]);
    printf("}");
    first = 0;
  }
  printf("}");
}

/* The kept plan's floors in the summary: its predicted time against the time floor (on a machine),
 * and the row floors of the busiest node and rank. */
static void print_floor(const options *o, const predictions *P, const plan_choice *c) {
  const int priced = P->m && P->have[o->strategy];
  floor_report_text(stderr, &c->floor, priced ? P->m : NULL, (size_t)o->n * (size_t)o->vbytes,
                    priced ? P->pred[o->strategy].time_s : -1, c->floor_s);
}

/* The floors as JSON: ", \"floor\": {...}" (time_s null without a machine). */
static void print_floor_json(const options *o, const predictions *P, const plan_choice *c) {
  printf(", ");
  floor_report_json(stdout, &c->floor, P->m, (size_t)o->n * (size_t)o->vbytes, c->floor_s);
}

static void report(const options *o, const sc_csr *A, const sc_partition *Prow, const sc_blocks *B, const sc_volumes *v,
                   const int *have, const timings *t, const char *out, double balance, const predictions *P,
                   const plan_choice *c) {
  int64_t covers = B ? B->n : 0;
  double wbal = work_imbalance(A, Prow, B);
  if (!o->quiet) {
    fprintf(stderr, "shiro-plan: %s: %lld x %lld, %lld nonzeros; %d ranks, %d per node; %lld off-diagonal blocks\n",
            o->matrix, (long long)A->m, (long long)A->k, (long long)A->nnz, o->ranks, o->gpn, (long long)covers);
    fprintf(stderr, "  %-8s %14s %16s %16s%s\n", "strategy", "rows moved", "inter-node rows", "intra-node rows",
            P->m ? "  predicted ms" : "");
    for (int s = 0; s < STRAT_COUNT; s++) {
      if (!have[s]) continue;
      char ms[32] = "";
      if (P->have[s]) snprintf(ms, sizeof ms, "  %12.4f", P->pred[s].time_s * 1e3);
      fprintf(stderr, "  %-8s %14lld %16lld %16lld%s%s\n", strategy_name((sc_strategy)s), (long long)v[s].total_rows,
              (long long)v[s].inter_node_rows, (long long)v[s].intra_node_rows, ms, s == (int)o->strategy && out ? "  <- plan" : "");
    }
    if (P->m)
      fprintf(stderr, "  predicted on %s (%s), N = %lld %s, communication only%s%s\n", P->m->name, P->m->path,
              (long long)o->n, o->dtype, o->auto_strategy ? "; auto chose " : "",
              o->auto_strategy ? strategy_name(o->strategy) : "");
    if (c->floor_have) print_floor(o, P, c);
    if (c->hybrid_have)
      fprintf(stderr, "  hybrid: %lld node pairs direct, %lld relayed (%lld of them with joint's covers), %lld relays off "
                      "the rail; estimated %.4f ms (all direct %.4f, all relayed %.4f, all relayed with joint's covers %.4f); "
                      "candidate %d of 6; group's covers %s\n",
              (long long)c->hybrid_seen.pairs_direct, (long long)c->hybrid_seen.pairs_relayed,
              (long long)c->hybrid_seen.pairs_relayed_joint, (long long)c->hybrid_seen.relays_moved, c->hybrid_seen.est_s * 1e3,
              c->hybrid_seen.est_direct_s * 1e3, c->hybrid_seen.est_relayed_s * 1e3, c->hybrid_seen.est_relayed_joint_s * 1e3,
              c->hybrid_seen.candidate, c->hybrid_seen.group_balanced ? "NIC-balanced" : "fewest-hop");
    fprintf(stderr, "  partition %s: max/mean nonzeros per rank %.3f, max/mean entries computed per rank %.3f\n",
            o->partition, balance, wbal);
    if (c->time_seen.rounds)
      fprintf(stderr, "  time partition: %d partition(s) evaluated with %s's plan, predicted %.4f ms (block partition: "
                      "%.4f ms)%s\n",
              c->time_seen.rounds, strategy_name(c->time_strategy), c->time_seen.best * 1e3, c->time_seen.start * 1e3,
              !o->partition_given ? (!strcmp(o->partition, "time") ? "; auto kept it" : !strcmp(o->partition, "block") ? "; auto kept block's"
                                                                                                                       : "; auto kept a METIS or the hypergraph partition (below)")
                                  : "");
    if (c->time_seen.rounds && o->auto_strategy)
      fprintf(stderr, "  auto's plan on the time partition: predicted %.4f ms, on block's %.4f ms\n",
              c->time_auto_time_s * 1e3, c->time_auto_block_s * 1e3);
    if (c->metis_tried == 1)
      fprintf(stderr, "  %s on the metis partition: predicted %.4f ms, against %.4f ms; %s\n",
              c->metis_estimate ? "joint's estimate" : "auto's plan", c->metis_auto_s * 1e3, c->metis_other_s * 1e3,
              !strcmp(o->partition, "metis") ? "kept (ranks own row lists)" : "not kept");
    else if (c->metis_tried == 2)
      fprintf(stderr, "  metis partition: not weighed, it leaves a rank without rows\n");
    for (int i = 0; i < c->ncand; i++) /* the other METIS partitions and the hypergraph's weighed */
      if ((!strncmp(c->cand[i].partition, "metis-", 6) || !strcmp(c->cand[i].partition, "hypergraph")) &&
          strcmp(c->cand[i].status, "skipped") &&
          !(!strcmp(c->cand[i].status, "kept") && !strcmp(c->cand[i].what, "plan")))
        fprintf(stderr, "  %s on the %s partition: predicted %.4f ms; %s\n",
                !strcmp(c->cand[i].what, "estimate") ? "joint's estimate" : "auto's plan", c->cand[i].partition,
                c->cand[i].time_s * 1e3, !strcmp(o->partition, c->cand[i].partition) ? "kept (ranks own row lists)" : "not kept");
    for (int i = 0; i < c->ncand; i++)
      if (!strcmp(c->cand[i].status, "skipped") && !strcmp(c->cand[i].kind, "strategy"))
        fprintf(stderr, "  %s on the %s partition skipped (effort fast): %s\n", strategy_name(c->cand[i].strategy),
                c->cand[i].partition, c->cand[i].reason);
      else if (!strcmp(c->cand[i].status, "skipped"))
        fprintf(stderr, "  %s partition skipped: %s\n", c->cand[i].partition, c->cand[i].reason);
    if (o->cpu_auto)
      fprintf(stderr, "  auto-cpu: the busiest rank costs %.0f entries under joint, %.0f under col (%.3g per row an op "
                      "visits at N = %lld, %.3g per row sent or received); kept %s\n",
              c->cpu_seen.cost[WORK_CHOICE_JOINT],
              c->cpu_seen.cost[WORK_CHOICE_COL], work_row_entries(o->n), (long long)o->n, WORK_MOVE_ROW_ENTRIES,
              strategy_name(o->strategy));
    if (!strcmp(o->partition, "work"))
      fprintf(stderr, "  work partition: %d partitions evaluated with %s's covers; the busiest rank costs %.0f entries "
                      "(%.3g per row an op visits, for N = %lld; nnz partition: %.0f), computes %lld entries (nnz partition: %lld, mean %lld)\n",
              c->work_seen.rounds, strategy_name(c->work_strategy), c->work_seen.cost, work_row_entries(o->n), (long long)o->n, c->work_seen.cost_start,
              (long long)c->work_seen.most, (long long)c->work_seen.most_start, (long long)c->work_seen.mean);
    fprintf(stderr, "  time: read %.3f s, partition %.3f s, cover %.3f s, plan %.3f s, write %.3f s, total %.3f s; peak RSS %.1f MiB\n",
            t->read, t->partition, t->cover, t->plan, t->write, t->total, (double)cli_peak_rss() / (1 << 20));
    if (out) fprintf(stderr, "  wrote %s\n", out);
  }
  if (o->json) {
    printf("{\"matrix\": ");
    cli_json_string(stdout, o->matrix);
    printf(", \"m\": %lld, \"k\": %lld, \"nnz\": %lld, \"ranks\": %d, \"gpus_per_node\": %d, ",
           (long long)A->m, (long long)A->k, (long long)A->nnz, o->ranks, o->gpn);
    printf("\"strategy\": \"%s\", \"partition\": \"%s\", \"load_balance\": %.6f, \"entries_balance\": %.6f, "
           "\"threads\": %d, \"blocks\": %lld, \"plan\": ",
           strategy_name(o->strategy), o->partition, balance, wbal, omp_get_max_threads(), (long long)covers);
    if (out) cli_json_string(stdout, out);
    else printf("null");
    printf(", \"partition_choice\": \"%s\", ", o->partition_given ? "given" : o->auto_strategy ? "auto"
                                                                                               : "default");
    if (o->cpu_auto)
      printf("\"cpu_choice\": {\"joint_cost\": %.9g, \"col_cost\": %.9g, \"row_entries\": %.9g, \"move_row_entries\": %.9g}, ",
             c->cpu_seen.cost[WORK_CHOICE_JOINT], c->cpu_seen.cost[WORK_CHOICE_COL], work_row_entries(o->n),
             WORK_MOVE_ROW_ENTRIES);
    if (!strcmp(o->partition, "work"))
      printf("\"work_partition\": {\"rounds\": %d, \"row_entries\": %.9g, \"cost\": %.9g, \"nnz_cost\": %.9g, "
             "\"cost_balance\": %.9g}, ",
             c->work_seen.rounds, work_row_entries(o->n), c->work_seen.cost, c->work_seen.cost_start,
             c->work_seen.cost_balance);
    if (c->time_seen.rounds) {
      const double ts[4] = {c->time_seen.best, c->time_seen.start, o->auto_strategy ? c->time_auto_time_s : c->time_seen.best,
                            o->auto_strategy ? c->time_auto_block_s : c->time_seen.start};
      const char *names[4] = {"predicted_s", "block_predicted_s", "auto_predicted_s", "auto_block_predicted_s"};
      printf("\"time_partition\": {\"rounds\": %d, \"strategy\": \"%s\"", c->time_seen.rounds, strategy_name(c->time_strategy));
      for (int i = 0; i < 4; i++) { /* a partition never kept (an empty rank) is priced infinite: null */
        if (isfinite(ts[i])) printf(", \"%s\": %.9g", names[i], ts[i]);
        else printf(", \"%s\": null", names[i]);
      }
      printf("}, ");
    }
    if (c->metis_tried == 1)
      printf("\"metis_partition\": {\"auto_predicted_s\": %.9g, \"against_predicted_s\": %.9g, \"empty_ranks\": false, "
             "\"priced\": \"%s\", \"kept\": %s}, ",
             c->metis_auto_s, c->metis_other_s,
             c->metis_estimate ? "joint-estimate" : "auto-plan", strcmp(o->partition, "metis") ? "false" : "true");
    else if (c->metis_tried == 2)
      printf("\"metis_partition\": {\"auto_predicted_s\": null, \"against_predicted_s\": %.9g, \"empty_ranks\": true, "
             "\"kept\": false}, ",
             c->metis_other_s);
    if (c->ncand) {
      printf("\"effort\": \"%s\", \"candidates\": [", o->effort == PLAN_EFFORT_FAST ? "fast" : "exhaustive");
      for (int i = 0; i < c->ncand; i++) {
        const plan_candidate *k = &c->cand[i];
        printf("%s{\"candidate\": \"%s\", \"partition\": \"%s\", \"priced\": \"%s\", \"strategy\": \"%s\", \"predicted_s\": ", i ? ", " : "",
               k->kind, k->partition, k->what, strategy_name(k->strategy));
        if (isfinite(k->time_s)) printf("%.9g", k->time_s);
        else printf("null");
        printf(", \"status\": \"%s\", \"reason\": ", k->status);
        cli_json_string(stdout, k->reason);
        printf("}");
      }
      printf("], ");
    }
    printf("\"timings_s\": {\"read\": %.6f, \"partition\": %.6f, \"cover\": %.6f, \"plan\": %.6f, \"write\": %.6f, \"total\": %.6f}, ",
           t->read, t->partition, t->cover, t->plan, t->write, t->total);
    printf("\"peak_rss_bytes\": %lld, ", (long long)cli_peak_rss());
    print_volumes_json(v, have, o->strategy, o->compare, P);
    printf(", \"strategy_choice\": \"%s\", \"machine\": ", o->auto_strategy ? "auto" : o->cpu_auto ? "auto-cpu"
                                                                                                   : "given");
    if (P->m) cli_json_string(stdout, P->m->name);
    else printf("null");
    if (P->m) printf(", \"predicted_n\": %lld, \"predicted_dtype\": \"%s\"", (long long)o->n, o->dtype);
    if (c->floor_have) print_floor_json(o, P, c);
    if (c->hybrid_have)
      printf(", \"hybrid\": {\"pairs_direct\": %lld, \"pairs_relayed\": %lld, \"pairs_relayed_joint\": %lld, "
             "\"relays_moved\": %lld, \"estimate_s\": %.9g, \"estimate_direct_s\": %.9g, \"estimate_relayed_s\": %.9g, "
             "\"estimate_relayed_joint_s\": %.9g, \"candidate\": %d, \"group_covers\": \"%s\", "
             "\"price_group_s\": %.9g, \"price_group_balanced_s\": %.9g, \"candidates_priced\": %d}",
             (long long)c->hybrid_seen.pairs_direct, (long long)c->hybrid_seen.pairs_relayed,
             (long long)c->hybrid_seen.pairs_relayed_joint, (long long)c->hybrid_seen.relays_moved, c->hybrid_seen.est_s,
             c->hybrid_seen.est_direct_s, c->hybrid_seen.est_relayed_s, c->hybrid_seen.est_relayed_joint_s, c->hybrid_seen.candidate,
             c->hybrid_seen.group_balanced ? "balanced" : "fewest-hop", c->hybrid_seen.price_group_s,
             c->hybrid_seen.price_group_balanced_s, c->hybrid_seen.prices);
    printf("}\n");
  }
}

/* Progress of the library's phases, on the terminal. */
static void plan_progress(const char *what, int64_t done, int64_t total) { cli_progress(what, done, total); }

/* Under an MPI launcher with several processes: dist_plan's request from the options, the
 * options it does not take named (on process 0 only; every process exits 2). */
static int run_distributed(const options *o, int rank) {
  const char *no = o->cpu_auto ? "--strategy auto-cpu" : NULL;
  if (no) {
    if (rank == 0)
      fprintf(stderr, "%s: %s is not planned by several processes yet: give --strategy auto (or joint, block, col, "
                      "row, hier, group, cola) and --partition block, nnz, metis, hypergraph or parts:FILE, or plan with one "
                      "process\n",
              prog, no);
    return 2;
  }
  dist_request rq = {.matrix = o->matrix, .format = o->format, .ranks = o->ranks, .gpn = o->gpn, .strategy = o->strategy, .auto_strategy = o->auto_strategy, .compare = o->compare, .machine_given = o->machine != NULL, .partition_auto = o->auto_strategy && !o->partition_given, .exhaustive = o->effort == PLAN_EFFORT_EXHAUSTIVE, .partition = o->partition, .parts_file = o->parts_file, .progress = plan_progress};
  sc_machine mach; /* --machine, or auto's */
  if (o->machine || o->auto_strategy) {
    if (!load_machine(o, &mach)) return 2; /* every process: the same file, the same answer */
    rq.m = &mach;
  }
  rq.row_bytes = (size_t)o->n * (size_t)o->vbytes;
  rq.floor = o->floor < 0 ? rq.m != NULL : o->floor; /* as one process: by default where a time is predicted */
  shiro_error err;
  if (dist_plan_supported(&rq, &err) != SHIRO_OK) {
    if (rank == 0) fprintf(stderr, "%s: %s\n", prog, err.message);
    return 2;
  }
  char *out = o->out ? strdup(o->out) : o->compare ? NULL
                                                   : default_output(o->matrix); /* as one process */
  if (!out && !o->compare) return 1;
  rq.out = out;
  const int threads = plan_mpi_threads(o->threads);
  omp_set_num_threads(threads);
  cli_progress_enable(!o->quiet && rank == 0);
  if (!strcmp(o->format, "edgelist"))
    rq.read = (mm_read_options){.format = MM_FORMAT_EDGELIST, .el_base = o->base, .el_rows = o->rows, .el_cols = o->cols};
  if (rank == 0) {
    char warn[512] = "";
    plan_warn_node_size(o->ranks, o->gpn, warn, sizeof warn);
    print_warnings(warn);
    cli_remove_temps_on_signals();
  }
  const plan_mpi_report how = {.quiet = o->quiet, .json = o->json, .threads = threads, .n = o->n, .dtype = o->dtype, .partition_auto = o->auto_strategy && !o->partition_given};
  int rc = plan_mpi_run(&rq, rank, &how);
  free(out);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  huge_pages_restart(argv);
  plan_file_exit_quietly(); /* a failed write must end in its message, not a crash at exit */
  int mpi_rank = 0, mpi_size = 1;
  plan_mpi_start(&argc, &argv, &mpi_rank, &mpi_size);
  if (mpi_rank != 0) cli_silence(); /* one report: process 0's (parse errors are everyone's alike) */
  if (!parse(argc, argv, &o)) return 2;
  if (mpi_size > 1) return run_distributed(&o, mpi_rank);
  /* HDF5 keeps what it frees on free lists, unbounded by default: writing a plan's thousands
   * of datasets left ~13 MiB there (massif, R-MAT s16 at R = 128), a fixed cost the smaller
   * matrices feel. 1 MiB per kind in all, 64 KiB per list: the rest goes back to malloc. */
  H5set_free_list_limits(1 << 20, 64 << 10, 1 << 20, 64 << 10, 1 << 20, 64 << 10);
  char warn[2048] = "";
  plan_warn_node_size(o.ranks, o.gpn, warn, sizeof warn);
  print_warnings(warn);
  if (o.threads) omp_set_num_threads(o.threads);
  cli_progress_enable(!o.quiet);
  int rc = 1;
  shiro_error err = {{0}};
  sc_csr *A = NULL;
  predictions P = {0};
  sc_machine mach;
  size_t row_bytes = (size_t)o.n * (size_t)o.vbytes;
  cost_model cm = {0};
  timings t = {0};
  char *out = NULL;
  int write_plan = !o.compare || o.out;
  plan_choice c;
  memset(&c, 0, sizeof c);
  const int time_part = (o.auto_strategy && !o.partition_given) || !strcmp(o.partition, "time");
  if ((o.machine || o.auto_strategy || time_part) && !load_machine(&o, &mach)) return 2;
  if (o.machine || o.auto_strategy || time_part) P.m = &mach;
  if (!pair_tables_fit(&o, write_plan)) return 1;
  if (write_plan) {
    out = o.out ? strdup(o.out) : default_output(o.matrix);
    if (!out) {
      fprintf(stderr, "%s: out of memory\n", prog);
      return 1;
    }
  }
  double t0 = cli_now(), t1;
  cli_progress("read", 0, 1);
  mm_header hdr;
  if (read_matrix(&o, &A, &hdr, &err) != SHIRO_OK) goto fail;
  cli_progress("read", 1, 1);
  t1 = cli_now();
  t.read = t1 - t0;
  t0 = t1;
  const plan_request req = {.ranks = o.ranks, .gpn = o.gpn, .strategy = o.strategy, .auto_strategy = o.auto_strategy, .cpu_auto = o.cpu_auto, .partition = o.partition, .partition_given = o.partition_given, .parts_file = o.parts_file, .compare = o.compare, .m = P.m, .machine_given = o.machine != NULL, .n = o.n, .row_bytes = row_bytes, .effort = o.effort, .floor = o.floor < 0 ? P.m != NULL : o.floor, .progress = plan_progress, .hypergraph = plan_mpi_hypergraph};
  shiro_status cst = plan_choose(&req, A, &c, &err); /* A is c's from here */
  A = NULL;
  if (cst != SHIRO_OK) goto fail;
  t.partition = c.partition_s;
  t.cover = c.cover_s;
  o.partition = c.partition;
  o.strategy = c.strategy;
  warn[0] = 0;
  plan_warn_empty_ranks(&c, o.ranks, warn, sizeof warn);
  print_warnings(warn);
  sc_volumes *vol = c.vol;
  int *have = c.have;
  memcpy(P.pred, c.pred, sizeof P.pred);
  memcpy(P.have, c.pred_have, sizeof P.have);
  if (write_plan || strategy_is_two_tier(o.strategy)) {
    plan_write_args wa = {.path = write_plan ? out : NULL, .pattern = hdr.field == MM_PATTERN, .vol = strategy_is_two_tier(o.strategy) ? &vol[o.strategy] : NULL, .progress = plan_progress};
    if (wa.vol) memset(wa.vol, 0, sizeof *wa.vol); /* auto: counted once already */
    if (P.m && !P.have[o.strategy]) {
      if (cost_init(&cm, P.m, o.ranks, row_bytes, &err) != SHIRO_OK) goto fail;
      wa.cost = &cm;
    }
    /* Interrupted: the plan's temporary file is removed, neither the final
     * name nor a half-written file is left behind. */
    if (write_plan) cli_remove_temps_on_signals();
    shiro_status pst = plan_write(&c, o.gpn, &wa, &t.plan, &t.write, &err); /* the certificates are not needed after it */
    if (pst != SHIRO_OK) goto fail;
  }
  if (!strategy_is_two_tier(o.strategy)) strategy_volumes(&c.B, &c.Pcol, o.strategy, o.gpn, &vol[o.strategy]);
  have[o.strategy] = 1;
  if (P.m && !P.have[o.strategy]) { /* priced as it was built, or (flat, not built) now */
    shiro_status pst = cm.R ? cost_predict(&cm, &P.pred[o.strategy], &err)
                            : cost_plan(c.A, &c.Prow, &c.Pcol, &c.B, o.strategy, o.gpn, P.m, row_bytes, NULL,
                                        &P.pred[o.strategy], NULL, &err);
    if (pst != SHIRO_OK) goto fail;
    P.have[o.strategy] = 1;
  }
  t.total = t.read + t.partition + t.cover + t.plan + t.write;
  report(&o, c.A, &c.Prow, &c.B, vol, have, &t, write_plan ? out : NULL, load_balance(c.A, &c.Prow), &P, &c);
  rc = 0;
  goto done;
fail:
  cli_progress_enable(0);
  fprintf(stderr, "%s: %s\n", prog, err.message);
done:
  cost_free(&cm);
  plan_choice_free(&c);
  sc_csr_free(A);
  free(out);
  return cli_finish_stdout(prog, rc); /* --json lost on a full disk is a failure */
}