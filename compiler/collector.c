/* collector.c — entries grouped by destination row with a stable counting sort. */
#include <stdlib.h>
#include <string.h>

#include "collector.h"

void coll_init(collector *c, int64_t nkeys) {
  memset(c, 0, sizeof *c);
  c->nkeys = nkeys;
}

void coll_add(collector *c, int64_t key, int32_t src, double val) {
  if (c->failed) return;
  if (c->n == c->cap) {
    int64_t cap = c->cap ? 2 * c->cap : 256;
    int64_t *k = realloc(c->key, (size_t)cap * sizeof *k);
    if (k) c->key = k;
    int32_t *s = realloc(c->src, (size_t)cap * sizeof *s);
    if (s) c->src = s;
    double *v = realloc(c->val, (size_t)cap * sizeof *v);
    if (v) c->val = v;
    if (!k || !s || !v) { c->failed = 1; return; }
    c->cap = cap;
  }
  c->key[c->n] = key;
  c->src[c->n] = src;
  c->val[c->n] = val;
  c->n++;
}

shiro_status coll_emit(collector *c, prog_builder *pb, int all_rows) {
  if (c->failed) { coll_free(c); return SHIRO_ERR_NOMEM; }
  int64_t *start = calloc((size_t)c->nkeys + 1, sizeof *start);
  int64_t *order = malloc((size_t)(c->n ? c->n : 1) * sizeof *order);
  if (!start || !order) { free(start); free(order); coll_free(c); return SHIRO_ERR_NOMEM; }
  for (int64_t e = 0; e < c->n; e++) start[c->key[e] + 1]++;
  for (int64_t k = 0; k < c->nkeys; k++) start[k + 1] += start[k];
  for (int64_t e = 0; e < c->n; e++) order[start[c->key[e]]++] = e;  /* stable */
  int64_t lo = 0;
  for (int64_t k = 0; k < c->nkeys; k++) {  /* start[k] is now the end of row k */
    int64_t hi = start[k];
    if (all_rows || hi > lo) {
      pb_row(pb, (int32_t)k);
      for (int64_t x = lo; x < hi; x++) pb_entry(pb, c->src[order[x]], c->val[order[x]]);
    }
    lo = hi;
  }
  free(start);
  free(order);
  coll_free(c);
  return SHIRO_OK;
}

void coll_free(collector *c) {
  free(c->key);
  free(c->src);
  free(c->val);
  c->key = NULL;
  c->src = NULL;
  c->val = NULL;
  c->n = c->cap = 0;
}
