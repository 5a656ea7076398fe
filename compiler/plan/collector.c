/* collector.c — entries grouped by destination row with a stable counting sort. */
#include <stdlib.h>
#include <string.h>

#include "collector.h"

void coll_init(collector *c) { memset(c, 0, sizeof *c); }

void coll_begin(collector *c, int64_t nkeys) {
  c->nkeys = nkeys;
  c->n = 0;
  c->failed = 0;
}

/* Grows *p (elements of `size` bytes) to hold cap; 0 on failure (*p kept). */
static int grow_to(void **p, int64_t cap, size_t size) {
  void *q = realloc(*p, (size_t)cap * size);
  if (!q) return 0;
  *p = q;
  return 1;
}

void coll_add(collector *c, int64_t key, int32_t src) {
  if (c->failed) return;
  if (c->n == c->cap) {
    int64_t cap = c->cap ? 2 * c->cap : 256;
    if (!grow_to((void **)&c->key, cap, sizeof *c->key) || !grow_to((void **)&c->src, cap, sizeof *c->src) ||
        !grow_to((void **)&c->order, cap, sizeof *c->order)) {
      c->failed = 1;
      return;
    }
    c->cap = cap;
  }
  c->key[c->n] = key;
  c->src[c->n] = src;
  c->n++;
}

shiro_status coll_emit(collector *c, prog_builder *pb, int all_rows) {
  if (!c->failed && c->nkeys + 1 > c->start_cap) {
    if (grow_to((void **)&c->start, c->nkeys + 1, sizeof *c->start)) c->start_cap = c->nkeys + 1;
    else c->failed = 1;
  }
  if (c->failed) return SHIRO_ERR_NOMEM;
  int64_t *start = c->start, *order = c->order;
  memset(start, 0, ((size_t)c->nkeys + 1) * sizeof *start);
  for (int64_t e = 0; e < c->n; e++) start[c->key[e] + 1]++;
  for (int64_t k = 0; k < c->nkeys; k++) start[k + 1] += start[k];
  for (int64_t e = 0; e < c->n; e++) order[start[c->key[e]]++] = e; /* stable */
  int64_t lo = 0;
  for (int64_t k = 0; k < c->nkeys; k++) { /* start[k] is now the end of row k */
    int64_t hi = start[k];
    if (all_rows || hi > lo) {
      pb_row(pb, (int32_t)k);
      for (int64_t x = lo; x < hi; x++) pb_entry(pb, c->src[order[x]], 1.0);
    }
    lo = hi;
  }
  return SHIRO_OK;
}

void coll_free(collector *c) {
  free(c->key);
  free(c->src);
  free(c->start);
  free(c->order);
  coll_init(c);
}
