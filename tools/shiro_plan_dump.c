/* shiro-plan-dump — inspects a plan file: header, per-rank summary, volumes.
 *
 *   shiro-plan-dump PLAN.h5 [--rank P] [--json] [--verify [--matrix MATRIX.mtx]] [--heatmap OUT.svg]
 *
 * Every number is recomputed from the plan's own arrays (exchange records and
 * operators), not copied from what the planner printed. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cost.h"
#include "error.h"
#include "floor_report.h"
#include "mm_read.h"
#include "plan_file.h"
#include "plan_floor_plan.h"
#include "plan_heatmap.h"
#include "plan_transpose.h"
#include "plan_verify.h"

static const char *prog = "shiro-plan-dump";

/* What one rank's program moves and multiplies. */
typedef struct rank_stats {
  int64_t sent, received; /* rows, all stages */
  int64_t sent_b, sent_c; /* of sent: B rows, partial C rows */
  int64_t sent_inter, sent_intra; /* of sent: by tier */
  int64_t msgs; /* messages sent */
  int64_t forwarded, in_place; /* rows forwarded inside a node; of those, sent straight from R (no copy) */
  int64_t nnz_own; /* entries of the ops that produce this rank's C (local + received B) */
  int64_t nnz_for_others; /* entries of the ops computing partial C rows for other ranks */
  int64_t stage_inter[8], stage_intra[8]; /* rows sent per stage (first 8 stages) */
  int64_t tag_entries[PROG_TAG_AGGREGATE_C + 1]; /* entries of the MUL ops of each tag (PROG_TAG_*) */
  int64_t kind_sent[PROG_MSG_KINDS]; /* rows sent in messages of each kind (PROG_MSG_*) */
} rank_stats;

/* The JSON names of the message kinds (format/README.md R4). */
static const char *const kind_names[PROG_MSG_KINDS] = {
    [PROG_MSG_DIRECT] = "direct", [PROG_MSG_INTER_B] = "inter_b", [PROG_MSG_AGG_PART] = "agg_part", [PROG_MSG_FWD_B] = "fwd_b", [PROG_MSG_AGG_C] = "agg_c"};

/* The JSON names of the MUL tags 1..PROG_TAG_AGGREGATE_C (format/README.md R3). */
static const char *const tag_names[PROG_TAG_AGGREGATE_C + 1] = {
    [PROG_TAG_GATHER_B] = "gather_b", [PROG_TAG_PARTIAL_C] = "partial_c", [PROG_TAG_LOCAL] = "local", [PROG_TAG_REMOTE_B] = "remote_b", [PROG_TAG_ADD_C] = "add_c", [PROG_TAG_FORWARD_B] = "forward_b", [PROG_TAG_AGGREGATE_C] = "aggregate_c"};

static int64_t op_entries(const prog_rank *pr, const int64_t *op) {
  const int64_t *ptr = pr->ptr + op[OPF_PTR_OFF];
  return ptr[op[OPF_NROWS]] - ptr[0];
}

static void stats_of(const prog_rank *pr, rank_stats *s) {
  memset(s, 0, sizeof *s);
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
    if (r[XF_DIR] == 1) {
      s->received += r[XF_COUNT];
      continue;
    }
    s->sent += r[XF_COUNT];
    s->msgs++;
    s->sent_b += r[XF_BROWS];
    if (r[XF_KIND] >= 0 && r[XF_KIND] < PROG_MSG_KINDS) s->kind_sent[r[XF_KIND]] += r[XF_COUNT];
    if (r[XF_KIND] == PROG_MSG_FWD_B) {
      s->forwarded += r[XF_COUNT];
      if (r[XF_BUF] == PROG_BUF_R) s->in_place += r[XF_COUNT];
    }
    s->sent_c += r[XF_COUNT] - r[XF_BROWS];
    if (r[XF_TIER]) s->sent_inter += r[XF_COUNT];
    else s->sent_intra += r[XF_COUNT];
    if (r[XF_STAGE] < 8) (r[XF_TIER] ? s->stage_inter : s->stage_intra)[r[XF_STAGE]] += r[XF_COUNT];
  }
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    if (op[OPF_KIND] != PROG_OP_MUL) continue;
    if (op[OPF_TAG] == PROG_TAG_LOCAL || op[OPF_TAG] == PROG_TAG_REMOTE_B) s->nnz_own += op_entries(pr, op);
    if (op[OPF_TAG] == PROG_TAG_PARTIAL_C) s->nnz_for_others += op_entries(pr, op);
    if (op[OPF_TAG] > PROG_TAG_NONE && op[OPF_TAG] <= PROG_TAG_AGGREGATE_C) s->tag_entries[op[OPF_TAG]] += op_entries(pr, op);
  }
}

/* Derives every rank's transposed program (tr[0..R-1], zeroed by the caller) from pr. */
static shiro_status transpose_all(const prog_meta *meta, const prog_rank *pr, plan_transposed *tr, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  for (int32_t r = 0; r < meta->ranks && st == SHIRO_OK; r++) st = plan_transpose_rank(&pr[r], &tr[r], err);
  return st;
}

/* --verify, the transposed programs: derived as libshiro derives them, then proven. */
static shiro_status verify_transposed(const prog_meta *meta, const prog_rank *pr, verify_report *rep, shiro_error *err) {
  plan_transposed *tr = calloc((size_t)meta->ranks, sizeof *tr);
  prog_rank *tp = calloc((size_t)meta->ranks, sizeof *tp);
  shiro_status st = tr && tp ? transpose_all(meta, pr, tr, err) : shiro_fail(err, SHIRO_ERR_NOMEM, "verify: out of memory");
  for (int32_t r = 0; st == SHIRO_OK && r < meta->ranks; r++) tp[r] = tr[r].pr;
  if (st == SHIRO_OK) st = plan_verify_transpose(meta, pr, tp, rep, err);
  for (int32_t r = 0; tr && r < meta->ranks; r++) plan_transposed_free(&tr[r]);
  free(tr);
  free(tp);
  return st;
}

/* Adds what transposed program t sends (per tier and stage) to *tot. */
static void add_transposed(const prog_rank *t, rank_stats *tot) {
  rank_stats s;
  stats_of(t, &s);
  tot->sent += s.sent;
  tot->sent_inter += s.sent_inter;
  tot->sent_intra += s.sent_intra;
  for (int k = 0; k < 8; k++) {
    tot->stage_inter[k] += s.stage_inter[k];
    tot->stage_intra[k] += s.stage_intra[k];
  }
}

/* 1 if two totals move the same rows per tier and per stage. */
static int same_volumes(const rank_stats *a, const rank_stats *b) {
  int same = a->sent == b->sent && a->sent_inter == b->sent_inter && a->sent_intra == b->sent_intra;
  for (int k = 0; k < 8; k++) same &= a->stage_inter[k] == b->stage_inter[k] && a->stage_intra[k] == b->stage_intra[k];
  return same;
}

/* Maps rank r of the open plan and checks its arrays' bounds (plan_check_rank), so that the
 * callers may index by them. */
static shiro_status map_checked(plan_reader *rd, const prog_meta *meta, int32_t r, prog_rank *pr, plan_mapping *map,
                                shiro_error *err) {
  shiro_status st = plan_reader_map_rank(rd, r, pr, map, err);
  return st == SHIRO_OK ? plan_check_rank(meta, pr, err) : st;
}

/* --verify: maps every rank, re-checks the whole plan; prints a verdict. Returns the exit status. */
static int verify(plan_reader *rd, const char *path, const prog_meta *meta, const char *matrix, int json) {
  shiro_error err = {{0}};
  prog_rank *pr = calloc((size_t)meta->ranks, sizeof *pr);
  plan_mapping *map = calloc((size_t)meta->ranks, sizeof *map);
  sc_csr *A = NULL;
  verify_report rep, trep = {0};
  shiro_status st = (pr && map) ? SHIRO_OK : SHIRO_ERR_NOMEM;
  for (int32_t r = 0; r < meta->ranks && st == SHIRO_OK; r++) st = plan_reader_map_rank(rd, r, &pr[r], &map[r], &err);
  if (st == SHIRO_OK && matrix) st = mm_read(matrix, &A, NULL, &err);
  if (st == SHIRO_OK) st = plan_verify(meta, pr, A, &rep, &err);
  if (st == SHIRO_OK) st = verify_transposed(meta, pr, &trep, &err);
  if (json) {
    printf("{\"plan\": ");
    cli_json_string(stdout, path);
    printf(", \"verified\": %s, ", st == SHIRO_OK ? "true" : "false");
    if (st == SHIRO_OK)
      printf("\"nonzeros\": %lld, \"messages\": %lld, \"cover_problems\": %lld, \"certified\": %lld, \"cover_rows\": %lld, "
             "\"matrix_checked\": %s, \"transposed\": {\"nonzeros\": %lld, \"messages\": %lld}}\n",
             (long long)rep.nonzeros,
             (long long)rep.messages, (long long)rep.problems, (long long)rep.certified, (long long)rep.cover_rows,
             rep.matrix_checked ? "true" : "false", (long long)trep.nonzeros, (long long)trep.messages);
    else {
      printf("\"error\": ");
      cli_json_string(stdout, err.message);
      printf("}\n");
    }
  } else if (st == SHIRO_OK) {
    printf("%s: verified: checksums and bounds of %d ranks; %lld messages matched; %lld nonzeros each reach C once, "
           "multiplied once",
           path, meta->ranks, (long long)rep.messages, (long long)rep.nonzeros);
    if (rep.problems) printf("; %lld cover problems (%lld rows), every one proven minimum by its matching", (long long)rep.problems,
                             (long long)rep.cover_rows);
    else printf("; strategy %s claims no optimality", meta->strategy);
    if (rep.matrix_checked) printf("; it is the plan of %s (digests, pattern, values)", matrix);
    printf("; transposed program (X = A^T.Y, as libshiro derives it): %lld messages matched, the same %lld nonzeros "
           "each reach X once, multiplied once\n",
           (long long)trep.messages, (long long)trep.nonzeros);
  }
  if (st != SHIRO_OK) fprintf(stderr, "%s: %s: NOT verified: %s\n", prog, path, err.message);
  for (int32_t r = 0; map && r < meta->ranks; r++) plan_file_unmap(&map[r]);
  free(pr);
  free(map);
  sc_csr_free(A);
  return st == SHIRO_OK ? 0 : 1;
}

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The distinct peers of rank pr's records, sorted, into *out (*n of them; free it). */
static shiro_status peers_of(const prog_rank *pr, int64_t **out, int32_t *n, shiro_error *err) {
  int64_t *q = malloc(((size_t)pr->nx + 1) * sizeof *q);
  if (!q) return shiro_fail(err, SHIRO_ERR_NOMEM, "verify: out of memory");
  for (int64_t x = 0; x < pr->nx; x++) q[x] = pr->xchg[x * PROG_X_WIDTH + XF_PEER];
  if (pr->nx) qsort(q, (size_t)pr->nx, sizeof *q, cmp_i64);
  int32_t k = 0;
  for (int64_t x = 0; x < pr->nx; x++)
    if (x == 0 || q[x] != q[x - 1]) q[k++] = q[x];
  *out = q;
  *n = k;
  return SHIRO_OK;
}

/* --verify --rank P: maps rank P, its neighbours P ± 1 and the peers its records name (nothing
 * else), and checks P's part by itself (plan_verify_rank); prints a verdict. Returns the exit status. */
static int verify_one(plan_reader *rd, const char *path, const prog_meta *meta, int32_t p, const char *matrix, int json) {
  shiro_error err = {{0}};
  prog_rank own, side[2], *peers = NULL;
  plan_mapping own_map = {0}, side_map[2] = {{0}}, *peer_map = NULL;
  int64_t *ids = NULL;
  int32_t npeers = 0, mapped = 0;
  sc_csr *A = NULL;
  verify_report rep = {0};
  shiro_status st = map_checked(rd, meta, p, &own, &own_map, &err); /* checked: its peers are ranks of the plan */
  for (int s = 0; s < 2 && st == SHIRO_OK; s++)
    if (s ? p + 1 < meta->ranks : p > 0) st = plan_reader_map_rank(rd, s ? p + 1 : p - 1, &side[s], &side_map[s], &err);
  if (st == SHIRO_OK) st = peers_of(&own, &ids, &npeers, &err);
  if (st == SHIRO_OK) {
    peers = calloc((size_t)npeers + 1, sizeof *peers);
    peer_map = calloc((size_t)npeers + 1, sizeof *peer_map);
    if (!peers || !peer_map) st = shiro_fail(&err, SHIRO_ERR_NOMEM, "verify: out of memory");
  }
  for (; st == SHIRO_OK && mapped < npeers; mapped++)
    st = plan_reader_map_rank(rd, (int32_t)ids[mapped], &peers[mapped], &peer_map[mapped], &err);
  if (st == SHIRO_OK && matrix) st = mm_read(matrix, &A, NULL, &err);
  if (st == SHIRO_OK)
    st = plan_verify_rank(meta, &own, p > 0 ? &side[0] : NULL, p + 1 < meta->ranks ? &side[1] : NULL, peers, npeers, A, &rep, &err);
  if (json) {
    printf("{\"plan\": ");
    cli_json_string(stdout, path);
    printf(", \"rank\": %d, \"verified\": %s, ", p, st == SHIRO_OK ? "true" : "false");
    if (st == SHIRO_OK)
      printf("\"messages\": %lld, \"peers\": %d, \"matrix_checked\": %s}\n", (long long)rep.messages, npeers,
             rep.matrix_checked ? "true" : "false");
    else {
      printf("\"error\": ");
      cli_json_string(stdout, err.message);
      printf("}\n");
    }
  } else if (st == SHIRO_OK) {
    printf("%s: rank %d verified by itself: checksums and bounds; its rows next to its neighbours'; its %lld messages "
           "matched by its %d peers' records",
           path, p, (long long)rep.messages, npeers);
    if (rep.matrix_checked) printf("; its rows are those of %s (digests, pattern, values)", matrix);
    printf("; the symbolic execution and the certificates need every rank: --verify without --rank\n");
  }
  if (st != SHIRO_OK) fprintf(stderr, "%s: %s: rank %d NOT verified: %s\n", prog, path, p, err.message);
  for (int32_t q = 0; q < mapped; q++) plan_file_unmap(&peer_map[q]);
  for (int s = 0; s < 2; s++) plan_file_unmap(&side_map[s]);
  plan_file_unmap(&own_map);
  free(peers);
  free(peer_map);
  free(ids);
  sc_csr_free(A);
  return st == SHIRO_OK ? 0 : 1;
}

/* --machine: the cost model's prediction per call (compiler/cost/), every rank's sends priced
 * on machine *mp for rows of n values of type dbl ? double : float; printed after the summary
 * (json: as the "prediction" member, the caller has the object open). Returns the exit status. */
static int predict(plan_reader *rd, const prog_meta *meta, const sc_machine *mp, int64_t n, int dbl, int json) {
  shiro_error err = {{0}};
  sc_machine m = *mp;
  cost_model cm;
  cost_pred pred;
  if (cost_init(&cm, &m, meta->ranks, (size_t)n * (dbl ? sizeof(double) : sizeof(float)), &err) != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return 1;
  }
  /* the floors, from the ranks' local matrices as they pass (none in a 2.0 plan: said, not fatal) */
  plan_floor_input fin = {0};
  plan_floor fl = {0};
  shiro_error ferr = {{0}};
  double f0 = omp_get_wtime(), fsec = 0; /* the floors' own time, as shiro-plan reports its */
  shiro_status fst = meta->version_minor >= 1 ? plan_floor_input_init(meta, &fin, &ferr) : SHIRO_ERR_FORMAT;
  fsec += omp_get_wtime() - f0;
  int rc = 0;
  for (int32_t r = 0; r < meta->ranks && !rc; r++) {
    prog_rank pr;
    plan_mapping map;
    if (map_checked(rd, meta, r, &pr, &map, &err) != SHIRO_OK) rc = 1;
    else {
      cost_add_rank(&cm, &pr);
      f0 = omp_get_wtime();
      if (fst == SHIRO_OK) fst = plan_floor_input_add(&fin, &pr, &ferr);
      fsec += omp_get_wtime() - f0;
    }
    plan_file_unmap(&map);
  }
  if (!rc && cost_predict(&cm, &pred, &err) != SHIRO_OK) rc = 1;
  cost_free(&cm);
  f0 = omp_get_wtime();
  if (!rc && fst == SHIRO_OK) fst = plan_floor_of_input(&fin, omp_get_max_threads(), &fl, &ferr);
  fsec += omp_get_wtime() - f0;
  plan_floor_input_free(&fin);
  const int floors = fst == SHIRO_OK;
  if (!rc && fst == SHIRO_ERR_NOMEM) {
    err = ferr;
    rc = 1;
  }
  if (rc) {
    plan_floor_free(&fl);
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return rc;
  }
  const size_t row_bytes = (size_t)n * (dbl ? sizeof(double) : sizeof(float));
  if (json) {
    printf(", \"prediction\": {\"machine\": ");
    cli_json_string(stdout, m.name);
    printf(", \"machine_file\": ");
    cli_json_string(stdout, m.path);
    printf(", \"n\": %lld, \"dtype\": \"%s\", \"time_per_call_s\": %.9g, \"stages\": [", (long long)n,
           dbl ? "double" : "float", pred.time_s);
    for (int32_t t = 0; t < pred.nstages; t++)
      printf("%s{\"stage\": %d, \"time_s\": %.9g, \"bottleneck_rank\": %d, \"bottleneck_link\": \"%s\", "
             "\"link_bytes\": %lld, \"link_messages\": %lld, \"link_latency_s\": %.9g}",
             t ? ", " : "", t,
             pred.stage[t].time_s, pred.stage[t].rank, cost_link_name(pred.stage[t].link),
             (long long)pred.stage[t].bytes, (long long)pred.stage[t].messages, pred.stage[t].latency_s);
    printf("]}");
    if (floors) {
      printf(", ");
      floor_report_json(stdout, &fl, &m, row_bytes, fsec);
    } else printf(", \"floor\": null");
  } else {
    printf("  predicted on %s (%s), N = %lld %s, communication only: %.4f ms per call\n", m.name, m.path,
           (long long)n, dbl ? "double" : "float", pred.time_s * 1e3);
    for (int32_t t = 0; t < pred.nstages; t++)
      printf("    stage %d: %.4f ms, bottleneck rank %d %s (%lld bytes in %lld messages, latency %.2f us)\n", t,
             pred.stage[t].time_s * 1e3, pred.stage[t].rank, cost_link_name(pred.stage[t].link),
             (long long)pred.stage[t].bytes, (long long)pred.stage[t].messages, pred.stage[t].latency_s * 1e6);
    if (floors) floor_report_text(stdout, &fl, &m, row_bytes, pred.time_s, fsec);
    else printf("  floor: not computed (%s)\n", meta->version_minor < 1 ? "a format 2.0 plan has no local matrices: re-plan it" : ferr.message);
  }
  plan_floor_free(&fl);
  return 0;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: shiro-plan-dump PLAN.h5 [--rank P] [--json] [--machine M [--n N] [--dtype T]]\n"
          "       shiro-plan-dump PLAN.h5 --verify [--rank P] [--matrix MATRIX.mtx] [--json]\n"
          "       shiro-plan-dump PLAN.h5 --heatmap OUT.svg [--heatmap-scale linear|log]\n"
          "  (no option)      header, per-rank summary (rows sent and received, nonzeros multiplied),\n"
          "                   volumes per tier and per stage, recomputed from the plan's arrays\n"
          "  --rank P         only rank P's line of the summary\n"
          "  --machine M      also the predicted time per call on machine M (tsubame4, dgx-h100 or a JSON\n"
          "                   machine file; the planner's cost model), per stage with its bottleneck rank\n"
          "                   and link; --n N (default 64) and --dtype float|double (default float)\n"
          "  --json           one JSON object on stdout (summary or --verify verdict)\n"
          "  --verify         re-check the whole plan from its arrays: checksums, bounds, messages, every\n"
          "                   nonzero covered exactly once (symbolic execution), every cover proven\n"
          "                   minimum by its matching\n"
          "  --matrix M       with --verify: also check that the plan is the plan of this matrix\n"
          "  --verify --rank P  only rank P's part, by itself, in O(its part): checksums, bounds, its rows,\n"
          "                   its messages against its peers' records, with --matrix its rows of the matrix\n"
          "                   (the symbolic execution and the certificates need the whole plan)\n"
          "  --heatmap OUT    write the rank x rank matrix of rows moved per call as an SVG image\n"
          "                   (counts printed in the cells up to %d ranks)\n"
          "  --heatmap-scale S  its colours: linear (default; rows / max) | log (log(1 + rows), for\n"
          "                   counts over several decades)\n"
          "  --help, --version  this text / the version and the plan format read (exit 0)\n",
          HEATMAP_NUMBERS_MAX_RANKS);
}

/* --heatmap: the rank × rank matrix of rows moved per call (every hop), as SVG. */
static int heatmap(plan_reader *rd, const char *path, const prog_meta *meta, const char *svg, heatmap_scale scale) {
  shiro_error err = {{0}};
  if (meta->ranks > HEATMAP_MAX_RANKS) {
    fprintf(stderr, "%s: --heatmap: %d ranks, at most %d can be drawn\n", prog, meta->ranks, HEATMAP_MAX_RANKS);
    return 2;
  }
  int64_t R = meta->ranks, *rows = calloc((size_t)(R * R), sizeof *rows);
  if (!rows) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  int rc = 0;
  for (int32_t r = 0; r < meta->ranks && !rc; r++) {
    prog_rank pr;
    plan_mapping map;
    if (map_checked(rd, meta, r, &pr, &map, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      rc = 1;
    }
    for (int64_t x = 0; !rc && x < pr.nx; x++) {
      const int64_t *rec = pr.xchg + x * PROG_X_WIDTH;
      if (rec[XF_DIR] == 0) rows[rec[XF_PEER] * R + r] += rec[XF_COUNT]; /* row p = destination, column q = source */
    }
    plan_file_unmap(&map);
  }
  char title[512], msg[512];
  snprintf(title, sizeof title, "%s: rows moved per SpMM call (strategy %s, %d ranks, %d per node)", path, meta->strategy,
           meta->ranks, meta->gpus_per_node);
  if (!rc && heatmap_write_svg(svg, meta->ranks, meta->gpus_per_node, rows, title, scale, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: --heatmap: %s\n", prog, msg);
    rc = 1;
  }
  if (!rc) printf("wrote %s\n", svg);
  free(rows);
  return rc;
}

/* The rest of a volumes line (", X inter-node, Y intra-node" where the plan has node tiers, then
 * `note`) and a line per stage. */
static void print_tiers(int tiers, const rank_stats *v, const char *note) {
  if (tiers) printf(", %lld inter-node, %lld intra-node", (long long)v->sent_inter, (long long)v->sent_intra);
  printf("%s\n", note);
  for (int t = 0; t < 8 && (v->stage_inter[t] || v->stage_intra[t]); t++) {
    if (tiers)
      printf("    stage %d: %lld inter-node, %lld intra-node\n", t, (long long)v->stage_inter[t], (long long)v->stage_intra[t]);
    else
      printf("    stage %d: %lld rows\n", t, (long long)(v->stage_inter[t] + v->stage_intra[t]));
  }
}

/* The header and per-rank summary (only rank `only` if ≥ 0), volumes, and with mach (may be NULL)
 * the prediction. Returns the exit status. */
static int summary(plan_reader *rd, const char *path, const prog_meta *meta, int64_t only, int json, const sc_machine *mach,
                   int64_t n, int dbl) {
  shiro_error err = {{0}};
  /* G = 1 plans every rank as a node of its own: the text says "between ranks", not "inter-node" (the run may
   * well be on one node); --json keeps its fields */
  const int tiers = meta->gpus_per_node > 1;
  if (only >= meta->ranks) {
    fprintf(stderr, "%s: --rank %lld: the plan has ranks 0..%d\n", prog, (long long)only, meta->ranks - 1);
    return 2;
  }
  if (json) {
    printf("{\"plan\": ");
    cli_json_string(stdout, path);
    /* the file's version (its major is the reader's: others are refused), not this reader's */
    printf(", \"format_version\": \"%d.%lld\", \"ranks\": %d, \"gpus_per_node\": %d, \"m\": %lld, "
           "\"k\": %lld, \"nnz\": %lld, \"strategy\": \"%s\", \"partition\": \"%s\", \"rank_summary\": [",
           PLAN_VERSION_MAJOR, (long long)meta->version_minor, meta->ranks, meta->gpus_per_node, (long long)meta->m,
           (long long)meta->k, (long long)meta->nnz, meta->strategy, meta->partition);
  } else {
    /* the file's exact version, as --json gives it */
    printf("plan %s\n  format %s %d.%lld, strategy %s, partition %s\n", path, PLAN_FORMAT_NAME, PLAN_VERSION_MAJOR,
           (long long)meta->version_minor, meta->strategy, meta->partition);
    if (tiers)
      printf("  matrix %lld x %lld, %lld nonzeros; %d ranks, %d per node\n", (long long)meta->m, (long long)meta->k,
             (long long)meta->nnz, meta->ranks, meta->gpus_per_node);
    else
      printf("  matrix %lld x %lld, %lld nonzeros; %d ranks, planned without nodes (--gpus-per-node 1): rows are "
             "counted between ranks\n",
             (long long)meta->m, (long long)meta->k, (long long)meta->nnz, meta->ranks);
    /* the same columns under G = 1 (scripts read them by position), "inter" shown as "-" */
    printf("  %6s %10s %10s %10s %10s %10s %10s %12s %12s\n", "rank", "C rows", "sent", "B sent", "part sent",
           "inter", "received", "nnz own", "nnz others");
  }
  rank_stats tot = {0}, ttot = {0}; /* ttot: the transposed programs' sends */
  int first = 1, rc = 0;
  for (int32_t r = 0; r < meta->ranks; r++) {
    if (only >= 0 && r != only) continue;
    prog_rank pr;
    plan_mapping map;
    rank_stats s;
    if (map_checked(rd, meta, r, &pr, &map, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      plan_file_unmap(&map);
      rc = 1;
      break;
    }
    stats_of(&pr, &s);
    plan_transposed tp;
    if (plan_transpose_rank(&pr, &tp, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      plan_file_unmap(&map);
      rc = 1;
      break;
    }
    add_transposed(&tp.pr, &ttot);
    plan_transposed_free(&tp);
    tot.sent += s.sent;
    tot.sent_inter += s.sent_inter;
    tot.sent_intra += s.sent_intra;
    tot.received += s.received;
    tot.nnz_own += s.nnz_own;
    tot.nnz_for_others += s.nnz_for_others;
    tot.forwarded += s.forwarded;
    tot.in_place += s.in_place;
    for (int t = 0; t < 8; t++) {
      tot.stage_inter[t] += s.stage_inter[t];
      tot.stage_intra[t] += s.stage_intra[t];
    }
    if (json) {
      printf("%s{\"rank\": %d, \"c_rows\": %lld, \"b_rows\": %lld, \"rows_sent\": %lld, \"b_rows_sent\": %lld, "
             "\"partial_rows_sent\": %lld, \"inter_node_rows_sent\": %lld, \"rows_received\": %lld, \"messages_sent\": %lld, "
             "\"nnz_local\": %lld, \"nnz_for_others\": %lld, \"forwarded_rows\": %lld, \"forwarded_in_place_rows\": %lld",
             first ? "" : ", ", r, (long long)pr.c_rows, (long long)pr.b_rows, (long long)s.sent, (long long)s.sent_b,
             (long long)s.sent_c, (long long)s.sent_inter, (long long)s.received, (long long)s.msgs,
             (long long)s.nnz_own, (long long)s.nnz_for_others, (long long)s.forwarded, (long long)s.in_place);
      printf(", \"entries_by_tag\": {");
      for (int t = PROG_TAG_GATHER_B; t <= PROG_TAG_AGGREGATE_C; t++)
        printf("%s\"%s\": %lld", t > PROG_TAG_GATHER_B ? ", " : "", tag_names[t], (long long)s.tag_entries[t]);
      printf("}, \"rows_sent_by_kind\": {");
      for (int k = 0; k < PROG_MSG_KINDS; k++)
        printf("%s\"%s\": %lld", k ? ", " : "", kind_names[k], (long long)s.kind_sent[k]);
      printf("}}");
    } else {
      printf("  %6d %10lld %10lld %10lld %10lld", r, (long long)pr.c_rows, (long long)s.sent, (long long)s.sent_b,
             (long long)s.sent_c);
      if (tiers) printf(" %10lld", (long long)s.sent_inter);
      else printf(" %10s", "-");
      printf(" %10lld %12lld %12lld\n", (long long)s.received, (long long)s.nnz_own, (long long)s.nnz_for_others);
    }
    first = 0;
    plan_file_unmap(&map);
  }
  if (rc) return rc;
  if (json) {
    printf("], \"volumes\": {\"total_rows\": %lld, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld}, "
           "\"forwarded_rows\": %lld, \"forwarded_in_place_rows\": %lld, \"stages\": [",
           (long long)tot.sent, (long long)tot.sent_inter, (long long)tot.sent_intra, (long long)tot.forwarded,
           (long long)tot.in_place);
    for (int t = 0; t < 8 && (tot.stage_inter[t] || tot.stage_intra[t] || t == 0); t++)
      printf("%s{\"stage\": %d, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld}", t ? ", " : "", t,
             (long long)tot.stage_inter[t], (long long)tot.stage_intra[t]);
    printf("], \"transposed_volumes\": {\"total_rows\": %lld, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld}, "
           "\"transposed_stages\": [",
           (long long)ttot.sent, (long long)ttot.sent_inter, (long long)ttot.sent_intra);
    for (int t = 0; t < 8 && (ttot.stage_inter[t] || ttot.stage_intra[t] || t == 0); t++)
      printf("%s{\"stage\": %d, \"inter_node_rows\": %lld, \"intra_node_rows\": %lld}", t ? ", " : "", t,
             (long long)ttot.stage_inter[t], (long long)ttot.stage_intra[t]);
    printf("]");
    if (mach && (rc = predict(rd, meta, mach, n, dbl, 1)) != 0) return rc;
    printf("}\n");
  } else {
    printf("  volumes%s: %lld rows moved", only >= 0 ? " (this rank's sends)" : "", (long long)tot.sent);
    print_tiers(tiers, &tot, "");
    if (tot.forwarded)
      printf("  forwarded inside nodes: %lld rows, %lld of them straight from the receive buffer (no copy)\n",
             (long long)tot.forwarded, (long long)tot.in_place);
    printf("  transposed program (X = A^T.Y)%s: %lld rows moved", only >= 0 ? " (this rank's sends)" : "", (long long)ttot.sent);
    print_tiers(tiers, &ttot,
                only >= 0                        ? ""
                    : !same_volumes(&tot, &ttot) ? " (NOT the forward's)"
                    : tiers                      ? " (the forward's, per tier and per stage)"
                                                 : " (the forward's, per stage)");
    if (mach) return predict(rd, meta, mach, n, dbl, 0);
  }
  return 0;
}

/* The tool proper; main adds the check of stdout. Returns the exit status. */
static int dump_main(int argc, char **argv) {
  const char *path = NULL, *matrix = NULL, *svg = NULL, *scale_arg = NULL;
  heatmap_scale scale = HEATMAP_LINEAR;
  int json = 0, do_verify = 0, dbl = 0;
  int64_t only = -1, n = 64;
  const char *machine = NULL;
  for (int i = 1; i < argc; i++) {
    const char *val;
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--verify")) do_verify = 1;
    else if (!strcmp(argv[i], "--heatmap")) {
      if (!(svg = cli_value(prog, argc, argv, &i))) return 2;
    } else if (!strcmp(argv[i], "--heatmap-scale")) {
      if (!(scale_arg = cli_value(prog, argc, argv, &i))) return 2;
      if (heatmap_scale_parse(scale_arg, &scale) != 0) {
        fprintf(stderr, "%s: --heatmap-scale: expected linear or log, found '%s'\n", prog, scale_arg);
        return 2;
      }
    } else if (!strcmp(argv[i], "--version")) {
      cli_version(prog, "reads");
      return 0;
    } else if (!strcmp(argv[i], "--machine")) {
      if (!(machine = cli_value(prog, argc, argv, &i))) return 2;
    } else if (!strcmp(argv[i], "--n")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, "--n", val, 1, 1 << 20, &n)) return 2;
    } else if (!strcmp(argv[i], "--dtype")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 2;
      if (strcmp(val, "float") && strcmp(val, "double")) {
        fprintf(stderr, "%s: --dtype: unknown type '%s' (expected float or double)\n", prog, val);
        return 2;
      }
      dbl = !strcmp(val, "double");
    } else if (!strcmp(argv[i], "--matrix")) {
      if (!(matrix = cli_value(prog, argc, argv, &i))) return 2;
    } else if (!strcmp(argv[i], "--rank")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, "--rank", val, 0, 1 << 20, &only)) return 2;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, argv[i]);
      return 2;
    } else if (!path) path = argv[i];
    else {
      fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[i]);
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "%s: no plan given\n", prog);
    usage(stderr);
    return 2;
  }
  if (matrix && !do_verify) {
    fprintf(stderr, "%s: --matrix goes with --verify\n", prog);
    return 2;
  }
  if (scale_arg && !svg) {
    fprintf(stderr, "%s: --heatmap-scale goes with --heatmap\n", prog);
    return 2;
  }
  if (machine && (svg || do_verify)) {
    fprintf(stderr, "%s: --machine goes with the summary, not --heatmap or --verify\n", prog);
    return 2;
  }
  shiro_error err = {{0}};
  prog_meta meta;
  plan_reader *rd = NULL; /* the envelope checked once for every rank mapped */
  if (plan_reader_open(path, &rd, &meta, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return 1;
  }
  sc_machine mach;
  int rc;
  if (machine && machine_load(machine, &mach, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, err.message);
    rc = 2;
  } else if (svg) rc = heatmap(rd, path, &meta, svg, scale);
  else if (do_verify && only >= meta.ranks) {
    fprintf(stderr, "%s: --rank %lld: the plan has ranks 0..%d\n", prog, (long long)only, meta.ranks - 1);
    rc = 2;
  } else if (do_verify) rc = only >= 0 ? verify_one(rd, path, &meta, (int32_t)only, matrix, json) : verify(rd, path, &meta, matrix, json);
  else rc = summary(rd, path, &meta, only, json, machine ? &mach : NULL, n, dbl);
  plan_reader_close(rd);
  return rc;
}
int main(int argc, char **argv) {
  return cli_finish_stdout(prog, dump_main(argc, argv)); /* a report lost on a full disk is a failure */
}
