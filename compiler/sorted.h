/* sorted.h — small helpers on sorted int64 arrays and node layout, shared by the builders. */
#ifndef SHIRO_SORTED_H
#define SHIRO_SORTED_H

#include <stdint.h>

/* qsort comparator for int64_t. */
static inline int sc_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Index of v in the sorted a[0..n-1]; v must be there (n >= 1). */
static inline int64_t sc_find(const int64_t *a, int64_t n, int64_t v) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The rank of node `node` with rank r's local index (rail alignment): ranks
 * per node G, R ranks in all; a smaller last node wraps. */
static inline int32_t sc_rail(int32_t node, int32_t r, int32_t G, int32_t R) {
  int32_t size = R - node * G < G ? R - node * G : G;
  return node * G + (r % G) % size;
}

#endif
