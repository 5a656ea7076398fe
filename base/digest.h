/* digest.h — the 64-bit pattern digest: how a sparsity pattern is hashed.
 *
 * Part of the plan format: plans record the digest of the whole matrix and of
 * each rank's rows (format/README.md, R1 and R2), and applications recompute
 * it with shiro_pattern_digest to check the rows they hold. Never change it.
 *
 * A pattern of nrows rows with ncols columns is fed in this order, written
 * here once: nrows, ncols, then for each row its length and its column
 * indices (pattern_digest_begin, then pattern_digest_row per row). */
#ifndef SHIRO_DIGEST_H
#define SHIRO_DIGEST_H

#include <stdint.h>

#include "shiro_status.h" /* SHIRO_API */

/* Streaming digest state: feed values in a fixed order. */
typedef struct digest64 {
  uint64_t h;
} digest64;

static inline void digest_init(digest64 *d) { d->h = 0x6A09E667F3BCC909ull; }

/* splitmix64-style mixing of each value into the state: order-sensitive.
 * Inline: it runs once per nonzero of every digest. */
static inline void digest_add(digest64 *d, int64_t v) {
  uint64_t z = d->h ^ ((uint64_t)v + 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  d->h = z ^ (z >> 31);
}

/* Starts the digest of a pattern of nrows rows with ncols columns. */
static inline void pattern_digest_begin(digest64 *d, int64_t nrows, int64_t ncols) {
  digest_init(d);
  digest_add(d, nrows);
  digest_add(d, ncols);
}

/* Feeds the next row, its len columns cols[0 .. len-1] (global ids, in the
 * row's order), into each of the nd digests d[0 .. nd-1]. nd > 1 hashes one
 * row into several patterns at once (plan_emit: the whole matrix and the
 * rank's rows): the chains are independent, so side by side they cost about
 * one. Callers pass nd as a constant, and inlined the inner loop unrolls. */
static inline void pattern_digest_row(digest64 *d, int nd, int64_t len, const int64_t *cols) {
  for (int j = 0; j < nd; j++) digest_add(&d[j], len);
  for (int64_t t = 0; t < len; t++)
    for (int j = 0; j < nd; j++) digest_add(&d[j], cols[t]);
}

/* pattern_digest_row for 32-bit column indices (the compiler's CSR): the
 * same digest as of the same columns held in 64 bits. */
static inline void pattern_digest_row32(digest64 *d, int nd, int64_t len, const int32_t *cols) {
  for (int j = 0; j < nd; j++) digest_add(&d[j], len);
  for (int64_t t = 0; t < len; t++)
    for (int j = 0; j < nd; j++) digest_add(&d[j], cols[t]);
}

/* The public digest of a CSR pattern (declared for applications in shiro.h,
 * with this same prototype; defined in digest.c): pattern_digest_begin, then
 * pattern_digest_row over rows 0 .. nrows-1. Local. */
SHIRO_API uint64_t shiro_pattern_digest(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                        const int64_t *colind);

#endif
