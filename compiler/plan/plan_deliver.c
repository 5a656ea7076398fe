/* plan_deliver.c — certificates, digests and in-order delivery of finished programs. */
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "error.h"
#include "plan_deliver.h"
#include "plan_local_matrix.h"

/* The matrix's pattern digest and each rank's (shiro_pattern_digest of all
 * rows; plan_rows_digest of rank r's rows) in one pass over A: the ranks'
 * rows are consecutive and in order, so both see the same values, and the
 * two hash chains, independent, run side by side for the cost of one
 * (d[0] the matrix's, d[1] the rank's). A range of ranks: theirs only. */
static void pattern_digests(plan_deliver *dv) {
  const sc_csr *A = dv->A;
  const sc_partition *Prow = dv->Prow;
  const int whole = dv->first == 0 && dv->end == Prow->parts;
  digest64 d[2];
  pattern_digest_begin(&d[0], A->m, A->k);
  for (int32_t r = dv->first; r < dv->end; r++) {
    pattern_digest_begin(&d[1], Prow->first[r + 1] - Prow->first[r], A->k);
    for (int64_t i = Prow->first[r]; i < Prow->first[r + 1]; i++)
      pattern_digest_row32(d + !whole, 2 - !whole, A->Ap[i + 1] - A->Ap[i], A->Aj + A->Ap[i]);
    dv->digest[r] = d[1].h;
  }
  dv->meta.matrix_digest = whole ? d[0].h : 0;
}

shiro_status plan_deliver_init(plan_deliver *dv, const sc_csr *A, const sc_partition *Prow, const sc_blocks *B,
                               sc_strategy s, int32_t gpn, int32_t first, int32_t end, plan_sink_fn sink, void *arg,
                               shiro_error *err) {
  int32_t R = Prow->parts;
  *dv = (plan_deliver){.A = A, .Prow = Prow, .B = B, .sink = sink, .arg = arg, .err = err, .next = first, .first = first, .end = end};
  dv->meta.ranks = R;
  dv->meta.gpus_per_node = gpn;
  dv->meta.m = A->m;
  dv->meta.k = A->k;
  dv->meta.nnz = A->nnz;
  strncpy(dv->meta.strategy, strategy_name(s), sizeof dv->meta.strategy - 1);
  strncpy(dv->meta.partition, "block", sizeof dv->meta.partition - 1);
  dv->digest = malloc((size_t)R * sizeof *dv->digest);
  if (!dv->digest) return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: out of memory");
  if (pthread_mutex_init(&dv->turn, NULL) != 0) {
    free(dv->digest);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: cannot create a mutex");
  }
  if (pthread_cond_init(&dv->turn_cv, NULL) != 0) {
    pthread_mutex_destroy(&dv->turn);
    free(dv->digest);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "plan: cannot create a condition variable");
  }
  pattern_digests(dv);
  return SHIRO_OK;
}

int plan_deliver_stopped(const plan_deliver *dv) {
  int stop;
#pragma omp atomic read
  stop = dv->stop;
  return stop;
}

/* Rank p's optimality certificate: the matchings of the cover problems whose
 * rows it owns (its blocks', then group's node pairs (N, H), H increasing,
 * N its node). */
shiro_status plan_deliver_finish(const plan_deliver *dv, prog_rank *pr) {
  const sc_blocks *B = dv->B;
  int32_t p = pr->rank, G = B->cert_gpn, nodes = B->cert ? B->cert_nodes : 0;
  const int64_t *at = nodes ? B->cert_at + (int64_t)(p / G) * nodes * (G + 1) + p % G : NULL;
  pr->pattern_digest = dv->digest[p];
  /* the local matrix: the rank's rows of A (a metis plan's are replaced by plan_rank_set_rows);
   * val_src already holds positions in A, which are the plan-wide ids: the ranks' rows are
   * consecutive and in rank order */
  if (plan_rank_local_matrix(pr, dv->A, NULL, pr->c_first) != SHIRO_OK) return SHIRO_ERR_NOMEM;
  int64_t n = 0;
  for (int64_t t = B->first_p[p]; t < B->first_p[p + 1]; t++)
    if (B->b[t].rmatch) n += B->b[t].mu;
  const int64_t *const *cert = nodes ? (const int64_t *const *)B->cert + (int64_t)(p / G) * nodes : NULL;
  for (int32_t H = 0; H < nodes; H++) /* a pair without a matching has no cert (and zeros in cert_at) */
    if (cert[H]) n += at[H * (G + 1) + 1] - at[H * (G + 1)];
  if (!n) return SHIRO_OK;
  pr->cert = malloc((size_t)n * 2 * sizeof *pr->cert);
  if (!pr->cert) return SHIRO_ERR_NOMEM;
  for (int64_t t = B->first_p[p]; t < B->first_p[p + 1]; t++) {
    const sc_block *b = &B->b[t];
    for (int32_t i = 0; b->rmatch && i < b->nr; i++)
      if (b->rmatch[i] >= 0) {
        pr->cert[2 * pr->ncert] = b->rows[i];
        pr->cert[2 * pr->ncert + 1] = b->cols[b->rmatch[i]];
        pr->ncert++;
      }
  }
  for (int32_t H = 0; H < nodes; H++) {
    if (!cert[H]) continue;
    int64_t lo = at[H * (G + 1)], hi = at[H * (G + 1) + 1];
    if (hi > lo) memcpy(pr->cert + 2 * pr->ncert, B->cert[(int64_t)(p / G) * nodes + H] + 2 * lo,
                        (size_t)(hi - lo) * 2 * sizeof *pr->cert);
    pr->ncert += hi - lo;
  }
  return pr->ncert == n ? SHIRO_OK : SHIRO_ERR_INTERNAL;
}

/* Records a failure of the whole build: the first one wins (its err is
 * already filled), and the builders skip the ranks left. */
static void deliver_fail(plan_deliver *dv, shiro_status st) {
  if (st == SHIRO_OK || dv->st != SHIRO_OK) return;
  dv->st = st;
#pragma omp atomic write
  dv->stop = 1;
}

/* Delivers or drops pr; the caller holds the turn. */
static void deliver_one(plan_deliver *dv, prog_rank *pr, shiro_status st) {
  if (dv->st == SHIRO_OK) { /* the first failure names itself */
    if (st == SHIRO_ERR_NOMEM)
      st = shiro_fail(dv->err, st, "plan: out of memory");
    else if (st != SHIRO_OK)
      st = shiro_fail(dv->err, st, "plan: internal error while building rank %d's program", pr->rank);
    else if (pr->s_rows > INT32_MAX || pr->r_rows > INT32_MAX)
      st = shiro_fail(dv->err, SHIRO_ERR_UNSUPPORTED, "plan: rank %d exchanges more than 2^31-1 rows", pr->rank);
  }
  if (dv->st != SHIRO_OK || st != SHIRO_OK) { /* dropped */
    deliver_fail(dv, st);
    prog_rank_free(pr);
    return;
  }
  deliver_fail(dv, dv->sink(dv->arg, &dv->meta, pr, dv->err)); /* the sink takes pr; it fills err on failure */
}

void plan_deliver_rank(plan_deliver *dv, int32_t r, prog_rank *pr, shiro_status st) {
  pthread_mutex_lock(&dv->turn);
  while (dv->next != r) pthread_cond_wait(&dv->turn_cv, &dv->turn);
  pthread_mutex_unlock(&dv->turn);
  deliver_one(dv, pr, st); /* alone: every other thread waits for a later turn */
  pthread_mutex_lock(&dv->turn);
  dv->next = r + 1;
  pthread_cond_broadcast(&dv->turn_cv);
  pthread_mutex_unlock(&dv->turn);
}

shiro_status plan_deliver_done(plan_deliver *dv) {
  pthread_cond_destroy(&dv->turn_cv);
  pthread_mutex_destroy(&dv->turn);
  free(dv->digest);
  dv->digest = NULL;
  return dv->st;
}
