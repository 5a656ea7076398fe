/* plan_write.c — the programs of the plan kept, built, completed, counted, priced and
 * written one by one (plan_write.h), and the warnings of a plan kept. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "plan_build.h"
#include "plan_file.h"
#include "plan_write.h"
#include "strategy.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Where the programs go as they are built (the sink's argument). */
typedef struct sink {
  const plan_write_args *a;
  const plan_choice *c;
  uint64_t digest0; /* metis, parts: shiro_pattern_digest of c->A0 */
  int pattern; /* no values stored: a pattern input whose values are all 1 (no duplicates summed) */
  plan_writer *w; /* open from rank 0 on */
  sc_blocks *B; /* the blocks built from: rank p's matchings freed once its program holds them */
  int32_t ranks;
  double write_s;
} sink;

/* parts on a rectangular matrix renumbers only the rows (B rows keep their ids, block over the
 * columns): records the rank's original row ids (oldof[new] = old). Its rows of A are the
 * original rows, columns unchanged, so the program's digest already is the original's. */
static shiro_status set_c_rows(prog_rank *pr, const int64_t *oldof, shiro_error *err) {
  pr->c_global = malloc((size_t)(pr->c_rows ? pr->c_rows : 1) * sizeof *pr->c_global);
  if (!pr->c_global) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  for (int64_t i = 0; i < pr->c_rows; i++) pr->c_global[i] = oldof[pr->c_first + i];
  pr->ncglobal = pr->c_rows;
  return SHIRO_OK;
}

/* Frees the matchings (rmatch) of destination p's blocks: the sink of rank p runs once p's
 * program holds them as its certificate, and nothing after the last build reads them. 4 bytes
 * per block row, freed as the programs go out rather than at the end (the build's peak). */
static void release_certs(sc_blocks *B, int32_t p) {
  for (int64_t t = B->first_p[p]; t < B->first_p[p + 1]; t++) {
    free(B->b[t].rmatch);
    B->b[t].rmatch = NULL;
  }
}

static shiro_status out_rank(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err) {
  sink *s = arg;
  const plan_choice *c = s->c;
  shiro_status st = c->oldof && c->A0->m != c->A0->k ? set_c_rows(pr, c->oldof, err) /* parts, rectangular */
      : c->oldof                                     ? plan_rank_set_rows(pr, c->A0, c->A, c->oldof, err)
                                                     : SHIRO_OK;
  if (s->pattern) { /* a_val empty: the plan says the matrix had no values */
    free(pr->a_val);
    pr->a_val = NULL;
    pr->naval = 0;
  }
  if (s->a->vol) plan_rank_volumes(pr, s->a->vol);
  if (s->a->cost) cost_add_rank(s->a->cost, pr);
  if (st == SHIRO_OK && s->a->path) {
    double t0 = now();
    if (pr->rank == 0) {
      prog_meta m = *meta;
      memset(m.partition, 0, sizeof m.partition);
      strncpy(m.partition, c->partition, sizeof m.partition - 1);
      if (c->oldof) m.matrix_digest = s->digest0;
      st = plan_writer_open(&s->w, s->a->path, &m, err);
    }
    if (st == SHIRO_OK) st = plan_writer_rank(s->w, pr, err);
    s->write_s += now() - t0;
  }
  int32_t done = pr->rank + 1;
  release_certs(s->B, pr->rank);
  prog_rank_free(pr);
  if (s->a->progress) s->a->progress("programs", done, s->ranks);
  return st;
}

shiro_status plan_write(plan_choice *c, int32_t gpn, const plan_write_args *a, double *build_s, double *write_s,
                        shiro_error *err) {
  sink s = {.a = a, .c = c, .B = &c->B, .ranks = c->Prow.parts};
  if (c->oldof) s.digest0 = plan_rows_digest(c->A0, NULL, 0, c->A0->m); /* = shiro_pattern_digest of A0 */
  s.pattern = a->pattern && sc_csr_all_ones(c->A);
  if (a->progress) a->progress("programs", 0, s.ranks);
  double t0 = now();
  shiro_status st = plan_build_each(c->A, &c->Prow, &c->Pcol, &c->B, c->strategy, gpn, out_rank, &s, err);
  double t1 = now();
  if (build_s) *build_s = t1 - t0 - s.write_s; /* building only: writing each program is timed apart */
  if (st == SHIRO_OK && s.w) {
    if (a->progress) a->progress("write", 0, 1);
    st = plan_writer_close(s.w, err); /* sealed and renamed into place */
    s.w = NULL;
    if (a->progress) a->progress("write", 1, 1);
  }
  plan_writer_abort(s.w);
  if (write_s) *write_s = s.write_s + (now() - t1);
  return st;
}

/* Appends one line to buf[cap] (after a '\n' when buf is not empty), truncated to fit. */
static void add_line(char *buf, size_t cap, const char *fmt, ...) {
  if (!buf || !cap) return;
  size_t used = strnlen(buf, cap - 1);
  if (used && used + 1 < cap) buf[used++] = '\n';
  buf[used] = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, cap - used, fmt, ap);
  va_end(ap);
}

int plan_warn_empty_parts(const sc_partition *Prow, const sc_partition *Pcol, int64_t m, int64_t k,
                          const char *partition, int32_t ranks, char *buf, size_t cap) {
  int32_t none_c = 0, none_b = 0;
  for (int32_t p = 0; p < Prow->parts; p++) {
    none_c += Prow->first[p + 1] == Prow->first[p];
    none_b += Pcol->first[p + 1] == Pcol->first[p];
  }
  int n = 0;
  if (none_c) {
    add_line(buf, cap, "%d of the %d ranks own no rows of A and C (the matrix has %lld rows, partition %s): "
                       "they hold no data but still take part in every call",
             none_c, ranks, (long long)m, partition);
    n++;
  }
  if (none_b && (none_b != none_c || m != k)) {
    add_line(buf, cap, "%d of the %d ranks own no rows of B (the matrix has %lld columns)", none_b, ranks, (long long)k);
    n++;
  }
  return n;
}

int plan_warn_empty_ranks(const plan_choice *c, int32_t ranks, char *buf, size_t cap) {
  return plan_warn_empty_parts(&c->Prow, &c->Pcol, c->A->m, c->A->k, c->partition, ranks, buf, cap);
}

int plan_warn_node_size(int32_t ranks, int32_t gpn, char *buf, size_t cap) {
  if (gpn <= ranks) return 0;
  add_line(buf, cap, "--gpus-per-node %d is more than --ranks %d: one node holds all the ranks, so nothing moves "
                     "between nodes (no inter-node traffic; the plan is the one --gpus-per-node %d gives)",
           gpn, ranks, ranks);
  return 1;
}
