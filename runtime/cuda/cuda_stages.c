/* cuda_stages.c — a program's exchange records grouped by stage, in posting order.
 *
 * NCCL matches the sends and receives between two ranks in posting order
 * (it has no tags), so both sides post a stage's messages to one peer in
 * the same order: by message kind, then direction. A plan has at most one
 * message per (stage, peer, direction, kind), so the order is total. */
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"

static int by_stage_peer_kind(const void *a, const void *b) {
  const int64_t *x = *(const int64_t *const *)a, *y = *(const int64_t *const *)b;
  const int f[4] = {XF_STAGE, XF_PEER, XF_KIND, XF_DIR};
  for (int i = 0; i < 4; i++)
    if (x[f[i]] != y[f[i]]) return x[f[i]] < y[f[i]] ? -1 : 1;
  return 0;
}

static int by_buf_row(const void *a, const void *b) {
  const cuda_range *x = a, *y = b;
  if (x->buf != y->buf) return x->buf < y->buf ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Appends the rows moved by records xs[0..n) in direction dir to r[*k..],
 * merged into disjoint ranges per buffer; returns how many were appended. */
static int64_t add_ranges(const int64_t *const *xs, int64_t n, int64_t dir, cuda_range *r, int64_t *k) {
  const int64_t first = *k;
  for (int64_t i = 0; i < n; i++)
    if (xs[i][XF_DIR] == dir) r[(*k)++] = (cuda_range){(int)xs[i][XF_BUF], xs[i][XF_OFF], xs[i][XF_COUNT]};
  int64_t m = *k - first;
  qsort(r + first, (size_t)m, sizeof *r, by_buf_row);
  int64_t out = 0;
  for (int64_t i = 0; i < m; i++) {
    cuda_range *cur = &r[first + i], *last = out ? &r[first + out - 1] : NULL;
    if (last && last->buf == cur->buf && cur->row <= last->row + last->count) {
      int64_t end = cur->row + cur->count;
      if (end > last->row + last->count) last->count = end - last->row;
    } else {
      r[first + out++] = *cur;
    }
  }
  *k = first + out;
  return out;
}

shiro_status cuda_stages_build(shiro_ctx *c, cuda_state *s) {
  const prog_rank *pr = &c->plan->pr;
  int64_t n = 0, k = 0;
  for (int64_t x = 0; x < pr->nx; x++) n += pr->xchg[x * PROG_X_WIDTH + XF_COUNT] > 0;
  s->nstages = pr->nstages;
  s->xs = malloc((size_t)(n ? n : 1) * sizeof *s->xs);
  s->stages = calloc((size_t)(pr->nstages ? pr->nstages : 1), sizeof *s->stages);
  s->ranges = malloc((size_t)(n ? n : 1) * sizeof *s->ranges);
  if (!s->xs || !s->stages || !s->ranges) return cuda_notef(c->error, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int64_t x = 0; x < pr->nx; x++)  /* zero-row messages are skipped on both sides */
    if (pr->xchg[x * PROG_X_WIDTH + XF_COUNT] > 0) s->xs[s->nx++] = pr->xchg + x * PROG_X_WIDTH;
  qsort(s->xs, (size_t)s->nx, sizeof *s->xs, by_stage_peer_kind);
  for (int64_t i = 0, j; i < s->nx; i = j) {
    const int64_t st = s->xs[i][XF_STAGE];
    for (j = i; j < s->nx && s->xs[j][XF_STAGE] == st; j++) s->stages[st].sends |= s->xs[j][XF_DIR] == 0;
    cuda_stage *g = &s->stages[st];
    g->x_first = i;
    g->nx = j - i;
    g->out_first = k;
    g->nout = add_ranges(s->xs + i, g->nx, 0, s->ranges, &k);
    g->in_first = k;
    g->nin = add_ranges(s->xs + i, g->nx, 1, s->ranges, &k);
  }
  return SHIRO_OK;
}
