/* stages.c — exchange records by stage in posting order, and the rows each stage moves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stages.h"

static int by_stage_peer_kind(const void *a, const void *b) {
  const int64_t *x = *(const int64_t *const *)a, *y = *(const int64_t *const *)b;
  const int f[4] = {XF_STAGE, XF_PEER, XF_KIND, XF_DIR};
  for (int i = 0; i < 4; i++)
    if (x[f[i]] != y[f[i]]) return x[f[i]] < y[f[i]] ? -1 : 1;
  return 0;
}

static int by_buf_row(const void *a, const void *b) {
  const rt_range *x = a, *y = b;
  if (x->buf != y->buf) return x->buf < y->buf ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Appends the rows moved by records xs[0..n) in direction dir to r[*k..],
 * merged into disjoint ranges per buffer; returns how many were appended. */
static int64_t add_ranges(const int64_t *const *xs, int64_t n, int64_t dir, rt_range *r, int64_t *k) {
  const int64_t first = *k;
  for (int64_t i = 0; i < n; i++)
    if (xs[i][XF_DIR] == dir) r[(*k)++] = (rt_range){(int)xs[i][XF_BUF], xs[i][XF_OFF], xs[i][XF_COUNT]};
  int64_t m = *k - first;
  qsort(r + first, (size_t)m, sizeof *r, by_buf_row);
  int64_t out = 0;
  for (int64_t i = 0; i < m; i++) {
    rt_range *cur = &r[first + i], *last = out ? &r[first + out - 1] : NULL;
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

shiro_status rt_stages_build(rt_stages *s, const prog_rank *pr, char *msg) {
  int64_t n = 0, k = 0;
  memset(s, 0, sizeof *s);
  for (int64_t x = 0; x < pr->nx; x++) n += pr->xchg[x * PROG_X_WIDTH + XF_COUNT] > 0;
  s->nstages = pr->nstages;
  s->xs = malloc((size_t)(n ? n : 1) * sizeof *s->xs);
  s->stage = calloc((size_t)(pr->nstages ? pr->nstages : 1), sizeof *s->stage);
  s->ranges = malloc((size_t)(n ? n : 1) * sizeof *s->ranges);
  if (!s->xs || !s->stage || !s->ranges) {
    snprintf(msg, 512, "out of memory (stage lists of %lld messages)", (long long)n);
    return SHIRO_ERR_NOMEM;
  }
  for (int64_t x = 0; x < pr->nx; x++) /* zero-row messages are skipped on both sides */
    if (pr->xchg[x * PROG_X_WIDTH + XF_COUNT] > 0) s->xs[s->nx++] = pr->xchg + x * PROG_X_WIDTH;
  qsort(s->xs, (size_t)s->nx, sizeof *s->xs, by_stage_peer_kind);
  for (int64_t i = 0, j; i < s->nx; i = j) {
    const int64_t st = s->xs[i][XF_STAGE];
    rt_stage *g = &s->stage[st];
    for (j = i; j < s->nx && s->xs[j][XF_STAGE] == st; j++) g->sends |= s->xs[j][XF_DIR] == 0;
    g->x_first = i;
    g->nx = j - i;
    g->out_first = k;
    g->nout = add_ranges(s->xs + i, g->nx, 0, s->ranges, &k);
    g->in_first = k;
    g->nin = add_ranges(s->xs + i, g->nx, 1, s->ranges, &k);
  }
  return SHIRO_OK;
}

void rt_stages_free(rt_stages *s) {
  free(s->xs);
  free(s->stage);
  free(s->ranges);
  memset(s, 0, sizeof *s);
}
