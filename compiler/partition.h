/* partition.h — 1D row partitions of A/C (m rows) and of B (k rows) over R ranks. */
#ifndef SHIRO_PARTITION_H
#define SHIRO_PARTITION_H

#include <stdint.h>

#include "shiro.h"

/* A contiguous partition: part p owns [first[p], first[p+1]). */
typedef struct sc_partition {
  int32_t parts;   /* R */
  int64_t n;       /* rows partitioned */
  int64_t *first;  /* [parts+1], first[0] = 0, first[parts] = n */
} sc_partition;

/* The `block` partition of DESIGN.md: part p owns [floor(p·n/R), floor((p+1)·n/R)),
 * computed in 64-bit (128-bit intermediate) arithmetic. */
shiro_status part_block(int64_t n, int32_t parts, sc_partition *out, shiro_error *err);

/* Owner of row i (0 <= i < n) by binary search. */
int32_t part_owner(const sc_partition *P, int64_t i);

/* Fills owner[i] for every row i in [0, n): a lookup table. */
void part_owner_table(const sc_partition *P, int32_t *owner);

/* Frees the arrays of a partition (not the struct); NULL is a no-op. */
void part_free(sc_partition *P);

#endif
