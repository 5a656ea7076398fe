/* sorted.h — small helpers on sorted int64 arrays and node layout, shared by the builders. */
#ifndef SHIRO_SORTED_H
#define SHIRO_SORTED_H

#include <stdint.h>
#include <stdlib.h>

/* qsort comparator for int64_t. */
static inline int sc_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Index of v in the increasing a, searched forward from index y: a must
 * hold v at y or after. Callers look up increasing values, each from the
 * last index found, so a whole walk is linear in a. */
static inline int64_t sc_seek(const int64_t *a, int64_t y, int64_t v) {
  while (a[y] < v) y++;
  return y;
}

/* Reads the set bits of bits[0..words) back in increasing order and clears
 * them: the u-th set bit, at offset o, gives out[u] = base + o and, when at
 * is not NULL, at[o] = u. Returns how many bits were set. Linear in words
 * plus the bits set. */
static inline int64_t sc_bits_drain(uint64_t *bits, int64_t words, int64_t base, int64_t *out, int32_t *at) {
  int64_t u = 0;
  for (int64_t w = 0; w < words; w++) {
    for (uint64_t b = bits[w]; b; b &= b - 1) {
      int64_t o = w * 64 + __builtin_ctzll(b);
      if (at) at[o] = (int32_t)u;
      out[u++] = base + o;
    }
    bits[w] = 0;
  }
  return u;
}

/* Sorts v[0..n-1], whose values lie in [first, first + width), and drops
 * repeats; returns how many distinct values remain (increasing, at the
 * front). When the values are dense in the range, by a bitmap: bits holds
 * width/64 + 1 words, zero, and is left zero; else by qsort. */
static inline int64_t sc_sort_unique_range(int64_t *v, int64_t n, int64_t first, int64_t width, uint64_t *bits) {
  int64_t u = 0;
  if (n == 0) return 0;
  if (width / 64 <= 8 * n + 64) { /* dense: mark, then read the marks back in order */
    for (int64_t x = 0; x < n; x++) bits[(v[x] - first) >> 6] |= (uint64_t)1 << ((v[x] - first) & 63);
    return sc_bits_drain(bits, (width - 1) / 64 + 1, first, v, NULL);
  }
  qsort(v, (size_t)n, sizeof *v, sc_cmp_i64);
  for (int64_t x = 0; x < n; x++)
    if (!u || v[u - 1] != v[x]) v[u++] = v[x];
  return u;
}

/* The rank of node `node` with rank r's local index (rail alignment): ranks
 * per node G, R ranks in all; a smaller last node wraps. */
static inline int32_t sc_rail(int32_t node, int32_t r, int32_t G, int32_t R) {
  int32_t size = R - node * G < G ? R - node * G : G;
  return node * G + (r % G) % size;
}

#endif
