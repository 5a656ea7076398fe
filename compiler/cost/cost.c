/* cost.c — the planner's cost model (cost.h; the model and its constants: README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "error.h"

struct cost_flow {
  int32_t src, dst;
  int32_t stage;
  double bytes;
};

/* One direction of a link during cost_predict: the flows through it. */
typedef struct link_use {
  int64_t first, n; /* its flows are order[first .. first+n-1] */
  double finish; /* when its last flow ends */
  double latency; /* the longest latency of the flows that decide finish */
  double bytes;
} link_use;

/* SimGrid 3.32's SMPI network model (src/smpi/internals/smpi_config.cpp,
 * the defaults of smpi/bw-factor and smpi/lat-factor, what smpirun uses with
 * network/model:SMPI): by message size in bytes, the factor on a message's
 * bandwidth bound and on its route's latency. tools/sim/README.md lists the
 * same numbers. */
static const struct { double from, bw, lat; } smpi_factors[] = {
    {65472, 0.940694, 11.6436},
    {15424, 0.697866, 3.48845},
    {9376, 0.58729, 2.59299},
    {5776, 1.08739, 2.18796},
    {3484, 0.77493, 1.88101},
    {1426, 0.608902, 1.61075},
    {732, 0.341987, 1.9503},
    {257, 0.338112, 1.95341},
    {0, 0.812084, 2.01467},
};

/* The factors of a message of `bytes` (1, 1 on an ideal network: ideal nonzero). */
static void factors(int ideal, double bytes, double *bw, double *lat) {
  *bw = *lat = 1.0;
  if (ideal) return;
  for (size_t i = 0; i < sizeof smpi_factors / sizeof smpi_factors[0]; i++)
    if (bytes >= smpi_factors[i].from) {
      *bw = smpi_factors[i].bw;
      *lat = smpi_factors[i].lat;
      return;
    }
}

const char *cost_link_name(cost_link l) {
  static const char *const names[] = {"nvlink-send", "nvlink-recv", "nic-send", "nic-recv"};
  return (unsigned)l < COST_LINKS ? names[l] : "?";
}

shiro_status cost_init(cost_model *cm, const sc_machine *m, int32_t R, size_t row_bytes, shiro_error *err) {
  memset(cm, 0, sizeof *cm);
  if (R < 1 || row_bytes == 0) return shiro_fail(err, SHIRO_ERR_ARG, "cost model: R = %d, row bytes %zu", R, row_bytes);
  int32_t G = m->gpus_per_node, nodes = (R + G - 1) / G;
  cm->m = *m;
  cm->R = R;
  cm->row_bytes = row_bytes;
  cm->nlinks = 2 * (int64_t)R + 2 * (int64_t)nodes * m->nics_per_node;
  return SHIRO_OK;
}

/* Link indices: NVLink send r, NVLink receive R + r, then per NIC i (node k,
 * k·nics + local) its send 2R + 2i and receive 2R + 2i + 1. */
static int64_t nic_of(const cost_model *cm, int32_t r) {
  int32_t G = cm->m.gpus_per_node, k = r / G;
  return (int64_t)k * cm->m.nics_per_node + (r - k * G) % cm->m.nics_per_node;
}

static int inter_node(const cost_model *cm, const cost_flow *f) {
  return f->src / cm->m.gpus_per_node != f->dst / cm->m.gpus_per_node;
}

/* The link a flow leaves by (dir 0) or arrives by (dir 1). */
static int64_t link_of(const cost_model *cm, const cost_flow *f, int dir) {
  if (!inter_node(cm, f)) return dir ? cm->R + f->dst : f->src;
  return 2 * (int64_t)cm->R + 2 * nic_of(cm, dir ? f->dst : f->src) + dir;
}

void cost_add_flow(cost_model *cm, int32_t src, int32_t dst, int32_t stage, int64_t rows) {
  if (rows <= 0 || dst < 0 || dst >= cm->R) return;
  if (stage < 0 || stage >= COST_MAX_STAGES) {
    cm->too_many_stages = 1;
    return;
  }
  if (stage + 1 > cm->nstages) cm->nstages = stage + 1;
  if (cm->nflow == cm->cap) {
    int64_t cap = cm->cap ? 2 * cm->cap : 1024;
    cost_flow *f = realloc(cm->flow, (size_t)cap * sizeof *f);
    if (!f) {
      cm->failed = 1;
      return;
    }
    cm->flow = f;
    cm->cap = cap;
  }
  cost_flow *f = &cm->flow[cm->nflow++];
  f->src = src;
  f->dst = dst;
  f->stage = stage;
  f->bytes = (double)rows * (double)cm->row_bytes;
}

void cost_add_rank(cost_model *cm, const prog_rank *pr) {
  if (pr->nstages > cm->nstages) cm->nstages = pr->nstages;
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *rec = pr->xchg + x * PROG_X_WIDTH;
    if (rec[XF_DIR] != 0 || rec[XF_COUNT] <= 0 || rec[XF_PEER] < 0 || rec[XF_PEER] >= cm->R) continue;
    if (rec[XF_STAGE] < 0 || rec[XF_STAGE] >= COST_MAX_STAGES) { /* before the narrowing below */
      cm->too_many_stages = 1;
      continue;
    }
    cost_add_flow(cm, pr->rank, (int32_t)rec[XF_PEER], (int32_t)rec[XF_STAGE], rec[XF_COUNT]);
  }
}

/* SMPI sends a message of at least this many bytes by rendezvous (it starts
 * when the receive is posted too, and the send completes with the transfer);
 * smaller ones eagerly (the send completes at once): smpi/send-is-detached-thresh. */
#define COST_RENDEZVOUS_BYTES 65536.0

/* The flow's latency (route latency times the model's factor) and its time alone (latency
 * + bytes at its bandwidth bound: the factor times its slower link). */
static void flow_alone(const cost_model *cm, const cost_flow *f, double *lat, double *alone) {
  const sc_machine *m = &cm->m;
  double bwf, latf;
  factors(m->ideal, f->bytes, &bwf, &latf);
  int inter = inter_node(cm, f);
  *lat = latf * (inter ? 2 * m->nic_lat_s + m->core_lat_s : 2 * m->nvlink_lat_s);
  *alone = *lat + f->bytes / (bwf * (inter ? m->nic_Bps : m->nvlink_Bps));
}

/* How much of a message's bandwidth factor its link pays while it shares the
 * link with others (0: the link runs at its full bandwidth however many
 * messages share it, as max-min sharing with per-message bounds would; 1:
 * every byte at its message's own factor). Fitted to tools/sim/simulate.sh
 * --compute none (README.md: 0 underestimates the flat plans' many small
 * messages by up to 45%, 1 overestimates medium ones by up to 23%). */
#define COST_SHARE_FACTOR 0.8

void cost_message_factors(int ideal, double bytes, double *paid, double *lat) {
  double bwf;
  factors(ideal, bytes, &bwf, lat);
  *paid = 1 - COST_SHARE_FACTOR * (1 - bwf);
}

/* A flow of a link, sorted by when it starts. */
typedef struct link_flow {
  double start;
  int64_t i; /* its index in the model's flows */
} link_flow;

static int by_start(const void *a, const void *b) { /* start, then index: deterministic */
  const link_flow *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->i < y->i ? -1 : 1;
}

/* When link u's flows (sorted by start) are through: for every k, the flows
 * that start at or after the k-th's start share the link from then on, each
 * after its latency, at the link's bandwidth (each byte slowed by alpha of
 * its message's factor); no flow ends before it would alone. */
static void link_finish(const cost_model *cm, const link_flow *order, link_use *u, double bw) {
  double bytes = 0, lat = 0, alpha = COST_SHARE_FACTOR, eff = 0;
  u->finish = u->latency = 0;
  for (int64_t k = u->n - 1; k >= 0; k--) {
    const cost_flow *f = &cm->flow[order[u->first + k].i];
    double l, alone, bwf, latf;
    flow_alone(cm, f, &l, &alone);
    factors(cm->m.ideal, f->bytes, &bwf, &latf);
    bytes += f->bytes;
    eff += f->bytes / (1 - alpha * (1 - bwf));
    if (l > lat) lat = l;
    double start = order[u->first + k].start, t = start + lat + eff / bw;
    if (start + alone > t) t = start + alone;
    if (t > u->finish) {
      u->finish = t;
      u->latency = lat;
    }
  }
  u->bytes = bytes;
}

/* A message on a link, for ps_finish. */
typedef struct ps_flow {
  double eff; /* its bytes as the link pays them (alpha of its factor) */
  double start, lat, alone;
  int64_t i;
} ps_flow;

static int by_eff(const void *a, const void *b) { /* size, then index: deterministic */
  const ps_flow *x = a, *y = b;
  if (x->eff != y->eff) return x->eff < y->eff ? -1 : 1;
  return x->i < y->i ? -1 : 1;
}

/* When each message of link u is through, the link shared equally among the
 * messages still in flight (processor sharing): a message of e bytes ends
 * after its latency and Σ min(e_j, e) over the link's messages at its
 * bandwidth, never before it would alone nor after the link is through.
 * Raises fin[i] of each to at least that. ps: u->n entries of scratch. */
static void ps_finish(const cost_model *cm, const link_flow *order, const link_use *u, double bw, ps_flow *ps,
                      double *fin) {
  for (int64_t k = 0; k < u->n; k++) {
    const cost_flow *f = &cm->flow[order[u->first + k].i];
    double bwf, latf;
    factors(cm->m.ideal, f->bytes, &bwf, &latf);
    ps[k].eff = f->bytes / (1 - COST_SHARE_FACTOR * (1 - bwf));
    ps[k].start = order[u->first + k].start;
    ps[k].i = order[u->first + k].i;
    flow_alone(cm, f, &ps[k].lat, &ps[k].alone);
  }
  qsort(ps, (size_t)u->n, sizeof *ps, by_eff);
  double below = 0; /* Σ e_j over the smaller messages */
  for (int64_t k = 0; k < u->n; k++) {
    double t = ps[k].start + ps[k].lat + (below + (double)(u->n - k) * ps[k].eff) / bw;
    if (ps[k].start + ps[k].alone > t) t = ps[k].start + ps[k].alone;
    if (t > u->finish) t = u->finish;
    if (t > fin[ps[k].i]) fin[ps[k].i] = t;
    below += ps[k].eff;
  }
}

/* Link index li as (rank, kind) for the report. */
static void link_where(const cost_model *cm, int64_t li, int32_t *rank, cost_link *kind) {
  int64_t R = cm->R;
  if (li < 2 * R) {
    *kind = li < R ? COST_NVLINK_SEND : COST_NVLINK_RECV;
    *rank = (int32_t)(li % R);
    return;
  }
  int64_t nic = (li - 2 * R) / 2;
  *kind = (li - 2 * R) % 2 ? COST_NIC_RECV : COST_NIC_SEND;
  int64_t k = nic / cm->m.nics_per_node;
  *rank = (int32_t)(k * cm->m.gpus_per_node + nic % cm->m.nics_per_node);
}

/* Prices stage s: its flows start when their ranks are ready (ready[r]: the
 * end of r's previous stage), and each rank is ready for the next stage when
 * its receives (and rendezvous sends) are through (ps_finish). Fills *st;
 * ready[] and done[] (each flow's end) updated; order and ps are scratch. */
/* When flow f can start: when its sender is ready, and for a rendezvous its receiver too. */
static double flow_start(const cost_flow *f, const double *ready) {
  double t = ready[f->src];
  if (f->bytes >= COST_RENDEZVOUS_BYTES && ready[f->dst] > t) t = ready[f->dst];
  return t;
}

/* Adds to rank_s[r] (NULL: nothing) how long after the stage's start the busiest of rank r's
 * links (its NVLink port's two directions, its NIC's two) is through. */
static void add_rank_times(const cost_model *cm, const link_use *use, double before, double *rank_s) {
  if (!rank_s) return;
  const int32_t R = cm->R;
  for (int32_t r = 0; r < R; r++) {
    const int64_t nic = 2 * (int64_t)R + 2 * nic_of(cm, r);
    const int64_t li[4] = {r, R + r, nic, nic + 1};
    double most = 0;
    for (int k = 0; k < 4; k++)
      if (use[li[k]].n && use[li[k]].finish - before > most) most = use[li[k]].finish - before;
    rank_s[r] += most;
  }
}

static void price_stage(const cost_model *cm, int32_t s, double *ready, link_use *use, link_flow *order, ps_flow *ps,
                        double *done, cost_stage *st, double *rank_s) {
  int64_t L = cm->nlinks;
  memset(use, 0, (size_t)L * sizeof *use);
  for (int64_t i = 0; i < cm->nflow; i++) {
    const cost_flow *f = &cm->flow[i];
    if (f->stage != s) continue;
    use[link_of(cm, f, 0)].n++;
    use[link_of(cm, f, 1)].n++;
  }
  int64_t at = 0;
  for (int64_t li = 0; li < L; li++) {
    use[li].first = at;
    at += use[li].n;
    use[li].n = 0;
  }
  for (int64_t i = 0; i < cm->nflow; i++) {
    if (cm->flow[i].stage != s) continue;
    for (int dir = 0; dir < 2; dir++) {
      link_use *u = &use[link_of(cm, &cm->flow[i], dir)];
      order[u->first + u->n++] = (link_flow){flow_start(&cm->flow[i], ready), i};
    }
  }
  double before = 0, after = 0, worst = -1;
  for (int32_t r = 0; r < cm->R; r++)
    if (ready[r] > before) before = ready[r];
  st->rank = -1;
  for (int64_t li = 0; li < L; li++) {
    if (!use[li].n) continue;
    qsort(order + use[li].first, (size_t)use[li].n, sizeof *order, by_start);
    double bw = li < 2 * (int64_t)cm->R ? cm->m.nvlink_Bps : cm->m.nic_Bps;
    link_finish(cm, order, &use[li], bw);
    ps_finish(cm, order, &use[li], bw, ps, done);
    if (use[li].finish > worst) { /* ties: the lowest link index, so the report is deterministic */
      worst = use[li].finish;
      st->latency_s = use[li].latency;
      st->bytes = (int64_t)use[li].bytes;
      st->messages = use[li].n;
      link_where(cm, li, &st->rank, &st->link);
    }
  }
  add_rank_times(cm, use, before, rank_s);
  for (int64_t i = 0; i < cm->nflow; i++) {
    const cost_flow *f = &cm->flow[i];
    if (f->stage != s) continue;
    double fin = done[i]; /* the message's own end (processor sharing), at most its links' */
    if (fin > ready[f->dst]) ready[f->dst] = fin;
    if (f->bytes >= COST_RENDEZVOUS_BYTES && fin > ready[f->src]) ready[f->src] = fin;
  }
  for (int32_t r = 0; r < cm->R; r++)
    if (ready[r] > after) after = ready[r];
  st->time_s = after - before;
}

shiro_status cost_predict(const cost_model *cm, cost_pred *out, shiro_error *err) {
  return cost_predict_ranks(cm, out, NULL, err);
}

shiro_status cost_predict_ranks(const cost_model *cm, cost_pred *out, double *rank_s, shiro_error *err) {
  memset(out, 0, sizeof *out);
  if (rank_s) memset(rank_s, 0, (size_t)cm->R * sizeof *rank_s);
  if (cm->too_many_stages)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "cost model: a program has more than %d stages", COST_MAX_STAGES);
  double *ready = calloc((size_t)cm->R, sizeof *ready);
  link_use *use = malloc((size_t)cm->nlinks * sizeof *use);
  link_flow *order = malloc((size_t)(2 * cm->nflow + 1) * sizeof *order);
  ps_flow *ps = malloc((size_t)(cm->nflow + 1) * sizeof *ps);
  double *fin = calloc((size_t)(cm->nflow + 1), sizeof *fin);
  shiro_status st = SHIRO_OK;
  if (cm->failed || !ready || !use || !order || !ps || !fin) st = shiro_fail(err, SHIRO_ERR_NOMEM, "cost model: out of memory (%lld messages)", (long long)cm->nflow);
  out->nstages = cm->nstages;
  for (int32_t s = 0; s < cm->nstages && st == SHIRO_OK; s++) {
    price_stage(cm, s, ready, use, order, ps, fin, &out->stage[s], rank_s);
    out->time_s += out->stage[s].time_s;
  }
  free(ready);
  free(use);
  free(order);
  free(ps);
  free(fin);
  return st;
}

void cost_free(cost_model *cm) {
  if (!cm) return;
  free(cm->flow);
  memset(cm, 0, sizeof *cm);
}

void cost_pred_json(FILE *f, const cost_pred *p) {
  fprintf(f, ", \"predicted_time_s\": %.9g, \"predicted_stages_s\": [", p->time_s);
  for (int32_t k = 0; k < p->nstages; k++) fprintf(f, "%s%.9g", k ? ", " : "", p->stage[k].time_s);
  fprintf(f, "]");
}
